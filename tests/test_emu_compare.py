"""Simulator against the real kernel (issue: emulation): one bulk flow over a
10 Mbit/s, 40 ms RTT, 1-BDP drop-tail path for 30 s, Reno and CUBIC. The simulator's
TCP should behave like Linux: goodput within 5%, median RTT within 10%."""

from __future__ import annotations

import numpy as np
import pytest

from test_emu import _reason

pytestmark = [pytest.mark.emu, pytest.mark.skipif(_reason is not None, reason=f"emulator unavailable: {_reason}")]


@pytest.mark.parametrize("cc", ["reno", "cubic"])
def test_simulator_matches_kernel_goodput_and_median_rtt(cc):
    import ccbench
    from ccbench.emu.runner import emulate
    from ccbench.scenario import load_scenario

    sc = load_scenario(f"examples/emu/{cc}_10mbit.toml")
    sim = ccbench.simulate(sc, seed=1).flows.set_index("flow")
    emu = emulate(sc, seed=1).flows.set_index("flow")
    g_sim, g_emu = sim.loc["bulk", "goodput_bps"], emu.loc["bulk", "goodput_bps"]
    r_sim, r_emu = sim.loc["bulk", "rtt_p50_s"], emu.loc["bulk", "rtt_p50_s"]
    print(f"\n{cc}: goodput sim {g_sim / 1e6:.3f} vs kernel {g_emu / 1e6:.3f} Mbit/s ({g_sim / g_emu - 1:+.1%}); "
          f"median RTT sim {r_sim * 1e3:.1f} vs kernel {r_emu * 1e3:.1f} ms ({r_sim / r_emu - 1:+.1%})")
    assert np.isfinite([g_sim, g_emu, r_sim, r_emu]).all()
    assert abs(g_sim / g_emu - 1) < 0.05
    assert abs(r_sim / r_emu - 1) < 0.10

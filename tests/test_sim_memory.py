"""Peak memory of the simulate path: the engine runs before pandas is imported and
hands its state back before Python builds the tables, and the scale benchmark
takes the imports made inside its timed call out of its time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ccbench.cli.bench import timed_imports_s

ROOT = Path(__file__).resolve().parents[1]

# Four bulk flows on a dumbbell, 0.2 s: small, but with every table filled.
_CHILD = r"""
import json, sys
from ccbench.backends.sim import simulate_config, to_run
from ccbench.scenario import Scenario
sc = Scenario.from_dict({
    "run": {"duration": "200ms"},
    "topology": {"kind": "dumbbell", "bottleneck": {"down": "100Mbit", "up": "100Mbit", "delay": "5ms",
                 "queue": {"kind": "droptail", "limit": "50pkt"}}},
    "flows": [{"name": "f", "count": 4, "transport": {"kind": "tcp", "cc": "cubic"}, "app": {"kind": "bulk"}}],
})
before = "pandas" in sys.modules
raw = simulate_config(sc.to_sim_config(seed=1))
after_engine = "pandas" in sys.modules
run = to_run(raw)
print(json.dumps({"before": before, "after_engine": after_engine, "after_tables": "pandas" in sys.modules,
                  "cwnd_rows": len(run.cwnd), "flows": len(run.flows), "stats": raw["stats"]["events"]}))
"""


def test_engine_runs_before_pandas_is_imported():
    # pandas and the pyarrow it loads are ~100 MB: imported while the engine's
    # state was alive they added to the run's peak (321 MB at 10,000 flows).
    r = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, cwd=ROOT, check=False)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert not out["before"] and not out["after_engine"]
    assert out["after_tables"]
    assert out["flows"] == 4 and out["cwnd_rows"] > 0 and out["stats"] > 0


def test_timed_imports_are_the_top_level_ones_between_the_markers():
    stderr = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       500 |     900000 | ccbench.scenario",  # before the timed call
            "ccbench-bench: timed",
            "import time:       100 |        200 |   pandas._libs",  # nested: inside pandas' total
            "import time:      3000 |     250000 | pandas",
            "import time:        40 |       1500 | ccbench.run",
            "ccbench-bench: done",
            "import time:        10 |      70000 | atexit_thing",  # after the call
        ]
    )
    assert abs(timed_imports_s(stderr) - 0.2515) < 1e-12
    assert timed_imports_s("no markers at all") == 0.0

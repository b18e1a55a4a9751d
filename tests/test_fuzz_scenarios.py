"""Property-based fuzzing of scenario files (hypothesis).

1. Generated scenarios and mutated example files: every one is a valid run or a
   :class:`ScenarioError` / :class:`SimulationError` whose lines each name a field;
   never another exception, never an abort of the interpreter.
2. Simulator invariants on random small valid scenarios: bytes delivered never exceed
   bytes sent; every delivered message is delivered once and, per flow, in order; cwnd
   >= 1; no timestamp in the past: t_write <= t_first_tx <= t_arrive <= t_deliver, all
   within the run.

CI runs a small number of examples, derandomized (the same cases every run). For a
longer search with fresh random cases::

    CCBENCH_FUZZ_EXAMPLES=2000 .venv/bin/python -m pytest -q tests/test_fuzz_scenarios.py

(``CCBENCH_FUZZ_EXAMPLES`` multiplies every test's example count relative to 100 and
switches derandomization off; hypothesis keeps failing cases in ``.hypothesis/``.)
"""

from __future__ import annotations

import copy
import math
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import ROOT, needs_core

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, assume, event, given, note, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = needs_core

_LONG = os.environ.get("CCBENCH_FUZZ_EXAMPLES")


def _settings(n_ci: int):
    n = max(1, int(n_ci * int(_LONG) / 100)) if _LONG else n_ci
    return settings(
        max_examples=n,
        deadline=None,
        derandomize=not _LONG,
        database=None if not _LONG else hypothesis.database.DirectoryBasedExampleDatabase(str(ROOT / ".hypothesis")),
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large],
    )


# A scenario run may take at most this much wall time; past it the case is dropped
# (hypothesis generates, e.g., 100 Gbit/s links whose runs are valid but long).
WALL_BUDGET_S = 3.0


class _OverBudget(Exception):
    pass


def _run(scn):
    """simulate() with a wall-clock budget (the progress callback stops the engine)."""
    from ccbench.backends.sim import simulate

    t0 = time.monotonic()

    def progress(_frac):
        if time.monotonic() - t0 > WALL_BUDGET_S:
            raise _OverBudget()

    return simulate(scn, progress=progress)


def _beyond_scale(config: dict) -> bool:
    """Scenarios whose *memory* grows past the machine (10^5 flows, 10^7 host pairs, a
    queue sample every nanosecond) are valid files; refusing them before they run is
    the scale issue's pre-flight estimate, not this test's subject: they are skipped
    here, so that an abort in this test is always a bug of its own."""
    dur = config["duration_ns"]
    topo = config["topology"]
    samples = [dur / s for s in (config.get("queue_sample_ns"), config.get("state_sample_ns")) if s]
    return (
        len(config["flows"]) > 200
        or topo.get("pairs", 0) > 1000
        or any(n > 1e6 for n in samples)
        or config.get("state_on_change", False) and len(config["flows"]) > 50
    )


_FIELD_LINE = re.compile(r"^(\S+: |\.\.\. and \d+ more problems$)")


def _valid_run_or_one_line_error(data):
    """The property: ScenarioError/SimulationError with field-naming lines, or a Run."""
    from ccbench.backends.sim import SimulationError
    from ccbench.scenario import Scenario, ScenarioError

    try:
        scn = Scenario.from_dict(data)
        if _beyond_scale(scn.to_sim_config()):
            event("beyond the scale limits")
            assume(False)
        run = _run(scn)
    except _OverBudget:
        event("over the wall budget")
        assume(False)
    except (ScenarioError, SimulationError) as e:
        event(f"one-line error: {type(e).__name__}")
        lines = str(e).splitlines()
        assert lines, f"an empty error message: {e!r}"
        assert len(lines) <= 11
        for ln in lines:
            assert _FIELD_LINE.match(ln), f"an error line that names no field: {ln!r}"
        return None
    event("valid run")
    return run


# --- strategies ---------------------------------------------------------------------------------

units = st.sampled_from
rate = st.one_of(
    st.builds("{}kbit".format, st.integers(8, 200_000)),
    units(["56kbit", "256kbit", "1.5Mbit", "10Mbit", "24Mbit", "100Mbit"]),
)
delay = st.builds("{}ms".format, st.integers(0, 150))
pos_ms = st.builds("{}ms".format, st.integers(1, 200))
size_b = st.builds("{}B".format, st.integers(40, 1500))
qlimit = st.one_of(st.builds("{}pkt".format, st.integers(1, 300)), st.builds("{}B".format, st.integers(1500, 400_000)))
queue = st.one_of(
    st.fixed_dictionaries({"kind": st.just("droptail"), "limit": qlimit}),
    st.fixed_dictionaries({"kind": st.just("codel"), "limit": st.builds("{}pkt".format, st.integers(2, 1000))}),
    st.fixed_dictionaries({"kind": st.just("fq_codel"), "limit": st.builds("{}pkt".format, st.integers(2, 1000))}),
    st.fixed_dictionaries({"kind": st.just("pie"), "limit": st.builds("{}pkt".format, st.integers(2, 1000))}),
)
ccs = ["reno", "cubic", "bbr", "dctcp", "vegas", "westwood", "htcp", "bic", "highspeed", "scalable", "illinois", "aimd"]


@st.composite
def transport(draw):
    if draw(st.booleans()):
        return {"kind": "udp"}
    t = {"kind": "tcp", "cc": draw(units(ccs))}
    if draw(st.booleans()):
        t["init_cwnd"] = draw(st.integers(1, 40))
    if draw(st.booleans()):
        t["mss"] = draw(st.integers(200, 1460))
    for key in ("sack", "nagle", "delayed_ack", "ecn"):
        if draw(st.booleans()):
            t[key] = draw(st.booleans())
    return t


@st.composite
def app(draw, tcp: bool):
    kind = draw(units(["cbr", "bulk", "onoff"] if tcp else ["cbr", "onoff"]))
    if kind == "bulk":
        return {"kind": "bulk"} if draw(st.booleans()) else {"kind": "bulk", "bytes": draw(st.builds("{}B".format, st.integers(1, 2_000_000)))}
    if kind == "cbr":
        a = {"kind": "cbr", "size": draw(size_b), "interval": draw(pos_ms)}
        if draw(st.booleans()):
            a["jitter"] = {"dist": "normal", "sd": draw(st.builds("{}ms".format, st.integers(1, 20)))}
        return a
    return {"kind": "onoff", "size": draw(size_b), "peak_rate": draw(rate),
            "on": {"dist": "exponential", "mean": draw(pos_ms)}, "off": {"dist": "exponential", "mean": draw(pos_ms)}}


@st.composite
def scenario(draw):
    flows = []
    for i in range(draw(st.integers(1, 3))):
        t = draw(transport())
        f = {"name": f"f{i}", "direction": draw(units(["down", "up", "both"])), "transport": t, "app": draw(app(t["kind"] == "tcp"))}
        if draw(st.booleans()):
            f["start"] = draw(st.builds("{}ms".format, st.integers(0, 300)))
        flows.append(f)
    return {
        "run": {"duration": draw(st.builds("{}ms".format, st.integers(100, 500))), "seed": draw(st.integers(0, 2**32))},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"down": draw(rate), "up": draw(rate), "delay": draw(delay), "queue": draw(queue)},
        },
        "flows": flows,
    }


# Values a careless or hostile file puts anywhere.
HOSTILE = st.one_of(
    st.sampled_from([
        -1, 0, 1, 2**31, 2**63, 2**64, 10**30, -(10**30), 1e308, -1e308, float("nan"), float("inf"), float("-inf"),
        0.5, True, False, "", " ", "0", "-1ms", "0ms", "1e999ms", "1e-999ms", "nanMbit", "infB", "1e30B", "-5B",
        "99999999999999999999999pkt", "1.5", "10", "ms", "🙂", "\x00", "1" * 5000 + "ms", [], {}, [1, 2], {"kind": "x"},
        "reno", "droptail", "down", "srv0", "cli99999",
    ]),
    st.text(max_size=20),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
)


def _paths(data, prefix=()):
    """Every (path, value) in a nested dict/list, containers included."""
    yield prefix, data
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            yield from _paths(v, prefix + (i,))


def _set(data, path, value):
    cur = data
    for p in path[:-1]:
        cur = cur[p]
    cur[path[-1]] = value


def _delete(data, path):
    cur = data
    for p in path[:-1]:
        cur = cur[p]
    del cur[path[-1]]


@st.composite
def mutated(draw, base_strategy):
    data = copy.deepcopy(draw(base_strategy))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p, _ in _paths(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        op = draw(st.sampled_from(["replace", "replace", "delete", "add", "duplicate"]))
        try:
            if op == "replace":
                _set(data, path, draw(HOSTILE))
            elif op == "delete":
                _delete(data, path)
            elif op == "add":
                cur = data
                for p in path[:-1]:
                    cur = cur[p]
                if isinstance(cur, dict):
                    cur[draw(st.sampled_from(["extra", "limit", "kind", "cc", "size", "rate", "seed"]))] = draw(HOSTILE)
            else:
                cur = data
                for p in path[:-1]:
                    cur = cur[p]
                if isinstance(cur, list):
                    cur.append(copy.deepcopy(cur[path[-1]]))
        except (KeyError, IndexError, TypeError):
            pass
    note(f"mutated: {data!r}"[:2000])
    return data


def _example_dicts():
    """The example scenarios (no sweep files) with their runs shortened to 0.3 s."""
    import tomllib

    out = []
    for p in sorted((ROOT / "examples").rglob("*.toml")):
        data = tomllib.loads(p.read_text())
        if "flows" not in data or "topology" not in data:
            continue  # a sweep file
        if any(isinstance(f.get("app"), dict) and f["app"].get("kind") == "trace" and "file" in f["app"] for f in data["flows"]):
            continue  # a relative trace path
        data.setdefault("run", {})["duration"] = "300ms"
        data["run"].pop("seeds", None)
        out.append(data)
    return out


EXAMPLES = _example_dicts()


# --- 1. never a traceback -------------------------------------------------------------------------


@_settings(100)
@given(data=scenario())
def test_generated_scenarios_run_or_fail_in_one_line(data):
    _valid_run_or_one_line_error(data)


@_settings(300)
@given(data=mutated(scenario()))
def test_mutated_generated_scenarios_run_or_fail_in_one_line(data):
    _valid_run_or_one_line_error(data)


@_settings(300)
@given(data=mutated(st.sampled_from(EXAMPLES)))
def test_mutated_example_files_run_or_fail_in_one_line(data):
    _valid_run_or_one_line_error(data)


@_settings(300)
@given(text=st.one_of(st.text(max_size=300), st.binary(max_size=300).map(lambda b: b.decode("latin-1"))))
def test_arbitrary_text_is_a_toml_or_scenario_error(text):
    from ccbench.scenario import ScenarioError, loads_scenario

    try:
        loads_scenario(text, source="fuzz.toml")
    except ScenarioError as e:
        assert str(e).strip()


# --- 2. simulator invariants ------------------------------------------------------------------


def check_invariants(run, duration_s: float) -> None:
    flows = run.flows.set_index("flow")
    for name, row in flows.iterrows():
        assert row["bytes_delivered"] <= row["bytes_sent"], f"{name}: delivered {row['bytes_delivered']} > sent {row['bytes_sent']}"
    p = run.packets
    eps = 1e-9
    for name, g in p.groupby("flow", observed=True):
        assert g["msg"].is_unique, f"{name}: a message appears twice"
        tw, tf, ta, td = (g[c].to_numpy(dtype=float) for c in ("t_write", "t_first_tx", "t_arrive", "t_deliver"))
        assert np.all(np.isfinite(tw)) and np.all(tw >= -eps) and np.all(tw <= duration_s + eps), f"{name}: t_write outside the run"
        for a, b, what in ((tw, tf, "t_write <= t_first_tx"), (tf, ta, "t_first_tx <= t_arrive"), (ta, td, "t_arrive <= t_deliver")):
            both = np.isfinite(a) & np.isfinite(b)
            assert np.all(a[both] <= b[both] + eps), f"{name}: {what} violated"
        # a message is delivered only after it was sent, and only within the run
        assert np.all(~np.isfinite(td) | np.isfinite(tf)), f"{name}: delivered but never sent"
        assert np.all(td[np.isfinite(td)] <= duration_s + eps), f"{name}: delivered after the end"
        # in order: in message order, delivery times never go back (TCP delivers in
        # order; UDP over one FIFO path per flow cannot reorder either)
        order = np.argsort(g["msg"].to_numpy(), kind="stable")
        d = td[order]
        d = d[np.isfinite(d)]
        assert np.all(np.diff(d) >= -eps), f"{name}: a message delivered before an earlier one"
        delivered_bytes = g.loc[np.isfinite(td), "bytes"].sum()
        if name in flows.index:
            assert delivered_bytes <= flows.loc[name, "bytes_sent"] + eps
    if len(run.cwnd):
        cw = run.cwnd["cwnd_pkts"].to_numpy(dtype=float)
        cw = cw[np.isfinite(cw)]
        assert np.all(cw >= 1), f"cwnd below 1 packet: {cw.min()}"
    for table, col in ((run.queue, "t"), (run.drops, "t"), (run.cwnd, "t")):
        if len(table):
            t = table[col].to_numpy(dtype=float)
            assert np.all(t >= -eps) and np.all(t <= duration_s + eps), f"{col} outside the run"


@_settings(60)
@given(data=scenario())
def test_simulator_invariants_hold_on_random_scenarios(data):
    from ccbench.scenario import Scenario

    scn = Scenario.from_dict(data)  # the generator makes only valid scenarios
    try:
        run = _run(scn)
    except _OverBudget:
        assume(False)
    check_invariants(run, scn.run.duration * 1e-9)


def test_invariant_checker_catches_violations():
    """The checker itself: a run with a message delivered twice, out of order, before
    it was written, and cwnd 0 fails each check."""
    from ccbench.backends.sim import simulate
    from ccbench.scenario import Scenario

    base = {
        "run": {"duration": "500ms"},
        "topology": {"kind": "dumbbell", "bottleneck": {"down": "1Mbit", "up": "1Mbit", "delay": "10ms", "queue": {"kind": "droptail", "limit": "20pkt"}}},
        "flows": [{"name": "t", "transport": {"kind": "tcp"}, "app": {"kind": "cbr", "size": "500B", "interval": "10ms"}}],
    }
    scn = Scenario.from_dict(base)
    run = simulate(scn)
    check_invariants(run, 0.5)
    breakers = {
        "twice": lambda r: r.packets.__setitem__("msg", 0),
        "order": lambda r: r.packets.__setitem__("t_deliver", r.packets["t_deliver"].to_numpy()[::-1].copy()),
        "past": lambda r: r.packets.__setitem__("t_first_tx", r.packets["t_write"] - 1e-3),
        "cwnd": lambda r: r.cwnd.__setitem__("cwnd_pkts", 0),
        "bytes": lambda r: r.flows.__setitem__("bytes_delivered", r.flows["bytes_sent"] + 1),
    }
    for breaker in breakers.values():
        bad = copy.deepcopy(run)
        breaker(bad)
        with pytest.raises(AssertionError):
            check_invariants(bad, 0.5)

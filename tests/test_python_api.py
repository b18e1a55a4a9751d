"""The Python API as a notebook user meets it: validated assignment, simulate() on a
path, with_values with flow names, a short Run repr, save/load, the quickstart notebook."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, needs_core

pytestmark = needs_core

EXAMPLE = ROOT / "examples" / "adsl1_voip.toml"


@pytest.fixture
def scn():
    import ccbench

    s = ccbench.load_scenario(EXAMPLE)
    s.run.duration = "2s"
    return s


# --- assignment ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "target, attr, value, message",
    [
        ("run", "duration", 30, 'run.duration: 30 is not a valid duration: a number needs a unit, written as a string such as "30s"'),
        ("run", "duration", "30 parsecs", "run.duration: \"30 parsecs\" is not a valid duration: unknown unit 'parsecs'"),
        ("run", "duraton", "30s", "run.duraton: is not an accepted key (accepted keys: duration, seed, seeds,"),
        ("run", "seeds", 0, "run.seeds: 0 is out of range (accepted: a number >= 1)"),
        ("app", "interval", 20, "flows.voip.app.interval: 20 is not a valid duration: a number needs a unit"),
        ("bottleneck", "down", "1.5MBIT", 'topology.bottleneck.down: "1.5MBIT" is not a valid rate: unknown unit \'MBIT\' (did you mean "Mbit"?)'),
    ],
)
def test_assignment_is_validated_and_names_the_file_path(scn, target, attr, value, message):
    from ccbench.scenario import ScenarioError

    table = {"run": scn.run, "app": scn.flows[0].app, "bottleneck": scn.topology.bottleneck}[target]
    before = getattr(table, attr, None)
    with pytest.raises(ScenarioError) as e:
        setattr(table, attr, value)
    assert str(e.value).startswith(message), str(e.value)
    assert "\n" not in str(e.value)
    assert getattr(table, attr, None) == before, "a refused value leaves the old one"


def test_a_value_refused_by_a_table_check_is_not_kept(scn):
    from ccbench.scenario import ScenarioError

    scn.flows[0].transport = {"kind": "tcp", "max_rto": "1s"}
    tcp = scn.flows[0].transport
    with pytest.raises(ScenarioError, match=r'^flows\.voip\.transport\.min_rto: "2s" must not exceed max_rto = "1s"'):
        tcp.min_rto = "2s"
    assert tcp.min_rto is None and "min_rto" not in scn.dumps()


def test_assignment_parses_units_like_the_file(scn):
    scn.run.duration = "1.5s"
    scn.topology.bottleneck.down = "1MB/s"
    scn.flows[0].app.interval = "10ms"
    assert (scn.run.duration, scn.topology.bottleneck.down, scn.flows[0].app.interval) == (1_500_000_000, 8_000_000, 10_000_000)
    assert 'duration = "1.5s"' in scn.dumps() and 'interval = "10ms"' in scn.dumps()


def test_a_table_assigned_whole_is_validated_and_learns_its_path(scn):
    from ccbench.scenario import ScenarioError

    scn.flows[0].transport = {"kind": "tcp", "cc": "cubic"}
    with pytest.raises(ScenarioError, match=r"^flows\.voip\.transport\.mss: 0 is not a valid MSS"):
        scn.flows[0].transport.mss = 0


def test_simulate_validates_a_scenario_changed_in_place(scn, tmp_path):
    import ccbench
    from ccbench.scenario import ScenarioError

    data = scn.to_dict()
    data["flows"].append({"name": "other", "transport": {"kind": "udp"}, "app": {"kind": "cbr", "size": "100B", "interval": "10ms"}})
    two = ccbench.Scenario.from_dict(data)
    two.topology.pairs = 1  # the topology table is fine; the scenario is not (2 flows, 2 pairs)
    with pytest.raises(ScenarioError, match=r"flows\.other\.name: .*needs pair 1 .* topology\.pairs = 1"):
        ccbench.simulate(two)


# --- simulate() inputs -------------------------------------------------------------------------


def test_simulate_takes_a_path_a_string_a_scenario_or_a_dict(scn, tmp_path):
    import ccbench

    path = tmp_path / "s.toml"
    scn.to_toml(path)
    runs = [ccbench.simulate(x, seed=2) for x in (path, str(path), scn, scn.to_dict())]
    for r in runs[1:]:
        pd.testing.assert_frame_equal(r.flows.drop(columns=["wall_s"], errors="ignore"), runs[0].flows.drop(columns=["wall_s"], errors="ignore"))
    with pytest.raises(TypeError, match="takes a Scenario, a scenario file path"):
        ccbench.simulate(42)


def test_simulate_on_a_missing_file_is_a_scenario_error(tmp_path):
    import ccbench
    from ccbench.scenario import ScenarioError

    with pytest.raises(ScenarioError, match="cannot read the scenario file"):
        ccbench.simulate(tmp_path / "nope.toml")


# --- with_values -------------------------------------------------------------------------------


def test_with_values_takes_the_paths_of_sweep_files(scn):
    by_name = scn.with_values({"flows.voip.app.interval": "10ms", "topology.bottleneck.queue.limit": "14pkt"})
    by_index = scn.with_values({"flows.0.app.interval": "10ms", "topology.bottleneck.queue.limit": "14pkt"})
    assert by_name == by_index
    assert by_name.flows[0].app.interval == 10_000_000 and scn.flows[0].app.interval == 20_000_000


def test_with_values_sets_a_cc_parameter_on_a_cc_given_by_name(scn):
    tcp = scn.with_values({"flows.voip.transport": {"kind": "tcp", "cc": "cubic"}, "flows.voip.app": {"kind": "bulk"}})
    beta = tcp.with_values({"flows.voip.transport.cc.beta": 0.8})
    assert beta.to_sim_config()["flows"][0]["transport"]["cc"] == {"name": "cubic", "params": {"beta": 819}}


@pytest.mark.parametrize(
    "values, message",
    [
        ({"flows.vocip.app.interval": "10ms"}, "flows.vocip: is not an entry of flows (accepted: a name, voip, or an index 0 .. 0)"),
        ({"flows.voip.app.intervall": "10ms"}, "flows.voip.app.intervall: is not an accepted key"),
        ({"flows.voip.app.interval": 10}, "flows.voip.app.interval: 10 is not a valid duration"),
        ({"run..duration": "1s"}, "run..duration: is not a dotted path"),
        ({"run.duration.x": "1s"}, "run.duration: is a value, not a table"),
    ],
)
def test_with_values_errors_name_the_path(scn, values, message):
    from ccbench.scenario import ScenarioError

    with pytest.raises(ScenarioError) as e:
        scn.with_values(values)
    assert str(e.value).startswith(message), str(e.value)


# --- Run ----------------------------------------------------------------------------------------


def test_run_repr_is_one_short_line_and_html_is_a_table(scn):
    import ccbench

    run = ccbench.simulate(scn, seed=1)
    text = repr(run)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith("<Run sim, seed 1, 2s, 2 flows") and "voip.down 7" in text and "kbit/s" in text
    html = run._repr_html_()
    assert html.count("<table") == 1 and "voip.up" in html and "delay p95" in html and " ms<" in html
    assert len(html) < 5000


def test_save_and_load_run_round_trip(scn, tmp_path):
    import ccbench

    run = ccbench.simulate(scn, seed=3)
    assert len(run.drops) == 0, "an empty table must keep its flow and link categories too"
    run.save(tmp_path / "r")
    again = ccbench.load_run(tmp_path / "r")
    for name in ("packets", "flows", "cwnd", "queue", "drops"):
        pd.testing.assert_frame_equal(getattr(again, name), getattr(run, name), check_exact=True)
    assert again.meta == json.loads(json.dumps(run.meta, default=str))
    assert list(again.drops["flow"].cat.categories) == ["voip.down", "voip.up"]
    assert repr(again) == repr(run)


# --- the notebook -------------------------------------------------------------------------------


def test_quickstart_notebook_runs_cell_by_cell(tmp_path, monkeypatch):
    """Executes examples/quickstart.ipynb without Jupyter, from a folder holding its
    scenario as examples/ does; the file is kept without outputs."""
    nb = json.loads((ROOT / "examples" / "quickstart.ipynb").read_text())
    assert nb["nbformat"] == 4
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code), "commit the notebook without outputs"
    shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)
    monkeypatch.chdir(tmp_path)
    import matplotlib

    before = matplotlib.get_backend()
    matplotlib.use("svg")  # stands for a notebook's own backend: plotting must keep it
    try:
        ns: dict = {}
        for i, cell in enumerate(code):
            exec(compile("".join(cell["source"]), f"quickstart.ipynb cell {i}", "exec"), ns)
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(before)
    assert (tmp_path / "quickstart_delay.png").stat().st_size > 1000
    assert (tmp_path / "quickstart_goodput.png").stat().st_size > 1000
    assert (tmp_path / "runs" / "quickstart" / "meta.json").exists()
    alone = ns["alone"].flows.set_index("flow").loc["voip.down", "delay_p95_s"]
    busy = ns["busy"].flows.set_index("flow").loc["voip.down", "delay_p95_s"]
    assert busy > alone + 0.05, "the download's queue shows in the VoIP delay"

"""Scenario models: validation messages, TOML round trips and the simulator JSON."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from ccbench.scenario import Scenario, ScenarioError, load_scenario, loads_scenario

ROOT = Path(__file__).resolve().parents[1]
# Scenario files. Sweep specifications (`sweep_*.toml`) have a format of their own, and
# `estimate_*.toml` have no flows (`ccbench estimate` adds the probe; the netcal tests
# load them).
# `examples/fidelity/` holds `ccbench fidelity` matrices, not scenarios (tests/test_fidelity.py).
EXAMPLES = sorted(
    p for p in (ROOT / "examples").glob("**/*.toml")
    if not p.name.startswith(("sweep_", "estimate_")) and p.parent.name != "fidelity"
)


def adsl(**flow_overrides) -> dict:
    """The ADSL1 line of Stewart et al. with the 186-byte CBR in both directions."""
    flow = {
        "name": "voip",
        "direction": "both",
        "transport": {"kind": "udp"},
        "app": {"kind": "cbr", "size": "186B", "interval": "20ms", "jitter": {"dist": "normal", "sd": "1ms"}},
    }
    flow.update(flow_overrides)
    return {
        "run": {"duration": "60s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {
                "down": "1.5Mbit",
                "up": "256kbit",
                "delay": "50ms",
                "queue": {"kind": "droptail", "limit": "20000B"},
            },
        },
        "flows": [flow],
    }


def error_of(data: dict) -> str:
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(data)
    return str(e.value)


def one_line(msg: str) -> str:
    assert len(msg.splitlines()) == 1, msg
    return msg


# --- the simulator JSON ----------------------------------------------------------------------


CBR_APP = {
    "kind": "cbr",
    "size_bytes": 186,
    "interval_ns": 20_000_000,
    "jitter": {"dist": "normal", "sd_ns": 1_000_000},
    "size_dist": "fixed",
}
DT_20000 = {"kind": "droptail", "limit": 20000, "rule": "bytes-strict"}


def test_adsl_dumbbell_sim_config():
    cfg = Scenario.from_dict(adsl()).to_sim_config()
    assert cfg == {
        "seed": 1,
        "duration_ns": 60_000_000_000,
        "queue_sample_ns": 10_000_000,
        "state_sample_ns": 10_000_000,
        "state_on_change": False,
        "topology": {
            "kind": "dumbbell",
            "pairs": 1,
            "bottleneck": {
                "down": {"rate_bps": 1_500_000, "delay_ns": 50_000_000, "queue": DT_20000, "monitor": True},
                "up": {"rate_bps": 256_000, "delay_ns": 50_000_000, "queue": DT_20000, "monitor": True},
            },
            "access": {"rate_bps": 10_000_000_000, "delay_ns": 0, "pair_delays_ns": []},
        },
        "flows": [
            {"name": "voip.down", "src": "srv0", "dst": "cli0", "transport": {"kind": "udp"}, "app": CBR_APP, "start_ns": 0},
            {"name": "voip.up", "src": "cli0", "dst": "srv0", "transport": {"kind": "udp"}, "app": CBR_APP, "start_ns": 0},
        ],
    }
    json.dumps(cfg)  # plain JSON data


def test_example_file_matches_the_dict_version():
    scn = load_scenario(ROOT / "examples" / "adsl1_voip.toml")
    assert scn.to_sim_config() == Scenario.from_dict(adsl()).to_sim_config()
    assert scn.flow_names() == ["voip.down", "voip.up"]
    assert scn.topology.base_rtt_ns(0) == 100_000_000


def test_seed_override_and_seed_list():
    data = adsl()
    data["run"].update(seed=7, seeds=3)
    scn = Scenario.from_dict(data)
    assert scn.to_sim_config()["seed"] == 7
    assert scn.to_sim_config(seed=9)["seed"] == 9
    assert scn.seed_list() == [7, 8, 9]
    with pytest.raises(ScenarioError):
        scn.to_sim_config(seed=-1)


@pytest.mark.parametrize(
    "queue, expected",
    [
        ({"kind": "droptail", "limit": "167pkt"}, {"kind": "droptail", "limit": 167, "rule": "packets"}),
        ({"kind": "droptail", "limit": "40000B"}, {"kind": "droptail", "limit": 40000, "rule": "bytes-strict"}),
        ({"limit": "40kB", "rule": "bytes-loose"}, {"kind": "droptail", "limit": 40000, "rule": "bytes-loose"}),
        (
            {"kind": "droptail", "limit": "14pkt", "count_in_service": True},
            {"kind": "droptail", "limit": 14, "rule": "packets", "count_in_service": True},
        ),
        (
            {"kind": "red", "limit": "60000B", "min_th": "5pkt", "max_th": "15000B", "ecn": True},
            {
                "kind": "red",
                "limit": 60000,
                "unit": "bytes",
                "min_th": 5000,
                "max_th": 15000,
                "max_p": 0.02,
                "w_q": 0.002,
                "gentle": True,
                "adaptive": False,
                "ecn": True,
                "harddrop": False,
                "byte_mode": False,
                "avpkt": 1000,
            },
        ),
        (
            {"kind": "codel"},
            {"kind": "codel", "target_us": 5_000, "interval_us": 100_000, "limit": 1000, "ecn": False,
             "ce_threshold_us": None},
        ),
        (
            {"kind": "fq_codel", "ce_threshold": "1ms"},
            {"kind": "fq_codel", "target_us": 5_000, "interval_us": 100_000, "limit": 10240,
             "quantum": 1514, "flows": 1024, "ecn": True, "ce_threshold_us": 1_000},
        ),
        (
            {"kind": "pie"},
            {"kind": "pie", "target_us": 15_000, "tupdate_us": 15_000, "limit": 1000, "alpha": 0.125,
             "beta": 1.25, "max_burst_us": 150_000, "ecn": False, "bytemode": False},
        ),
        (
            {"kind": "pecn", "limit": "100pkt"},
            {"kind": "pecn", "limit": 100, "unit": "packets", "upper": 100, "lower": 50},
        ),
        (
            {"kind": "pecn", "limit": "30000B", "upper": "20000B"},
            {"kind": "pecn", "limit": 30000, "unit": "bytes", "upper": 20000, "lower": 10000},
        ),
    ],
)
def test_queue_json(queue, expected):
    data = adsl()
    data["topology"]["bottleneck"]["queue"] = queue
    cfg = Scenario.from_dict(data).to_sim_config()
    assert cfg["topology"]["bottleneck"]["down"]["queue"] == expected
    assert cfg["topology"]["bottleneck"]["up"]["queue"] == expected  # up_queue defaults to queue


def test_asymmetric_bottleneck_settings():
    data = adsl()
    data["topology"]["bottleneck"].update(
        down_delay="40ms",
        up_queue={"limit": "10pkt"},
        loss={"kind": "bernoulli", "p": 0.01, "action": "mark"},
        up_loss={"kind": "periodic", "every": 100},
        monitor=False,
    )
    b = Scenario.from_dict(data).to_sim_config()["topology"]["bottleneck"]
    assert b["down"]["delay_ns"] == 40_000_000 and b["up"]["delay_ns"] == 50_000_000
    assert b["up"]["queue"] == {"kind": "droptail", "limit": 10, "rule": "packets"}
    assert b["down"]["loss"] == {"kind": "bernoulli", "p": 0.01, "action": "mark"}
    assert b["up"]["loss"] == {"kind": "periodic", "every": 100}
    assert not b["down"]["monitor"] and not b["up"]["monitor"]


@pytest.mark.parametrize(
    "loss, expected",
    [
        ({"kind": "bernoulli", "p": 0.01}, {"kind": "bernoulli", "p": 0.01}),
        ({"kind": "periodic", "every": 10, "offset": 3}, {"kind": "periodic", "every": 10, "offset": 3}),
        (
            {"kind": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.3, "loss_bad": 0.5},
            {"kind": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.3, "loss_bad": 0.5},
        ),
        ({"kind": "trace", "indices": [5, 1, 5]}, {"kind": "trace", "indices": [1, 5]}),
    ],
)
def test_loss_json(loss, expected):
    data = adsl()
    data["topology"]["bottleneck"]["loss"] = loss
    assert Scenario.from_dict(data).to_sim_config()["topology"]["bottleneck"]["down"]["loss"] == expected


def test_tcp_emits_only_what_the_user_set():
    data = adsl(transport={"kind": "tcp", "cc": "cubic"}, app={"kind": "bulk"}, direction="down")
    flow = Scenario.from_dict(data).to_sim_config()["flows"][0]
    assert flow["transport"] == {"kind": "tcp", "cc": {"name": "cubic", "params": {}}}
    assert flow["app"] == {"kind": "bulk", "bytes": None}

    tcp = {
        "kind": "tcp",
        "cc": {"name": "cubic", "beta": 0.8, "hystart": False},
        "mss": 1448,
        "init_cwnd": 10,
        "sack": True,
        "nagle": False,
        "delayed_ack": True,
        "ecn": True,
        "pacing": False,
        "recovery": "rate-halving",
        "sndbuf": "4MB",
        "rcvbuf": "6MiB",
        "min_rto": "200ms",
        "initial_rto": "1s",
        "delack_max": "40ms",
    }
    data = adsl(transport=tcp, app={"kind": "bulk", "bytes": "64MiB"}, direction="down")
    flow = Scenario.from_dict(data).to_sim_config()["flows"][0]
    assert flow["transport"] == {
        "kind": "tcp",
        "mss": 1448,
        "init_cwnd": 10,
        "sndbuf_bytes": 4_000_000,
        "rcvbuf_bytes": 6 * 2**20,
        "sack": True,
        "nagle": False,
        "delayed_ack": True,
        "ecn": True,
        "recovery": "rate-halving",
        "pacing": False,
        "min_rto_ms": 200,
        "initial_rto_ms": 1000,
        "delack_max_ms": 40,
        # beta 0.8 in user units reaches the simulator as Linux's 819/1024
        "cc": {"name": "cubic", "params": {"beta": 819, "hystart": False}},
    }
    assert flow["app"] == {"kind": "bulk", "bytes": 64 * 2**20}


def test_onoff_app_json():
    app = {
        "kind": "onoff",
        "size": "1500B",
        "peak_rate": "2Mbit",
        "on": {"dist": "exponential", "mean": "1s"},
        "off": {"dist": "pareto", "mean": "2s", "shape": 1.5},
    }
    flow = Scenario.from_dict(adsl(app=app, direction="down")).to_sim_config()["flows"][0]
    assert flow["app"] == {
        "kind": "on_off",
        "size_bytes": 1500,
        "peak_rate_bps": 2_000_000,
        "on": {"dist": "exponential", "mean_ns": 1_000_000_000},
        "off": {"dist": "pareto", "mean_ns": 2_000_000_000, "shape": 1.5},
    }


@pytest.mark.parametrize(
    "jitter, expected",
    [
        ("none", {"dist": "none"}),
        ({"dist": "exponential"}, {"dist": "exponential"}),
        ({"dist": "uniform", "width": "2ms"}, {"dist": "uniform", "width_ns": 2_000_000}),
    ],
)
def test_jitter_json(jitter, expected):
    app = {"kind": "cbr", "size": "186B", "interval": "20ms", "jitter": jitter}
    assert Scenario.from_dict(adsl(app=app)).to_sim_config()["flows"][0]["app"]["jitter"] == expected


# --- flow placement ------------------------------------------------------------------------------


def test_dumbbell_pairs_count_and_names():
    data = adsl(pair=0)  # explicit pairs are kept free of automatically placed flows
    data["flows"] += [
        {"name": "dl", "transport": {"kind": "tcp", "cc": "reno"}, "app": {"kind": "bulk"}, "count": 2},
        {"name": "ul", "direction": "up", "pair": 0, "transport": {"kind": "tcp"}, "app": {"kind": "bulk"},
         "start": "5s", "stop": "30s"},
    ]
    scn = Scenario.from_dict(data)
    assert scn.flow_names() == ["voip.down", "voip.up", "dl[0]", "dl[1]", "ul"]
    cfg = scn.to_sim_config()
    assert cfg["topology"]["pairs"] == 3
    ends = {f["name"]: (f["src"], f["dst"]) for f in cfg["flows"]}
    assert ends == {
        "voip.down": ("srv0", "cli0"),
        "voip.up": ("cli0", "srv0"),
        "dl[0]": ("srv1", "cli1"),
        "dl[1]": ("srv2", "cli2"),
        "ul": ("cli0", "srv0"),
    }
    ul = cfg["flows"][-1]
    assert (ul["start_ns"], ul["stop_ns"]) == (5_000_000_000, 30_000_000_000)
    assert "stop_ns" not in cfg["flows"][0]


def test_explicit_pairs_are_not_taken_by_automatic_ones():
    data = adsl(pair=1)
    data["flows"].append({"name": "dl", "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}})
    ends = [(f["src"], f["dst"]) for f in Scenario.from_dict(data).to_sim_config()["flows"]]
    assert ends == [("srv1", "cli1"), ("cli1", "srv1"), ("srv0", "cli0")]


def test_too_few_pairs_is_an_error():
    data = adsl()
    data["topology"]["pairs"] = 1
    data["flows"].append({"name": "dl", "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}})
    msg = one_line(error_of(data))
    assert msg.startswith("flows.dl.name: ") and "topology.pairs = 1" in msg


def test_parking_lot():
    scn = Scenario.from_dict(
        {
            "topology": {
                "kind": "parking_lot",
                "hops": 2,
                "rate": "10Mbit",
                "delay": "10ms",
                "queue": {"limit": "100pkt"},
                "per_hop": [{}, {"rate": "5Mbit"}],
            },
            "flows": [
                {"name": "long", "path": "long", "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}},
                {"name": "x", "path": "cross1", "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}},
            ],
        }
    )
    cfg = scn.to_sim_config()
    topo = cfg["topology"]
    assert topo["kind"] == "parking_lot" and topo["hops"] == 2
    assert [h["rate_bps"] for h in topo["hop_links"]] == [10_000_000, 5_000_000]
    assert all(h["monitor"] for h in topo["hop_links"])
    assert [h["rate_bps"] for h in topo["reverse_links"]] == [10_000_000, 5_000_000]
    assert not any(h["monitor"] for h in topo["reverse_links"])
    assert [(f["src"], f["dst"]) for f in cfg["flows"]] == [("long_src", "long_dst"), ("x1_src", "x1_dst")]


def test_graph():
    scn = Scenario.from_dict(
        {
            "topology": {
                "kind": "graph",
                "nodes": ["a", "r1", "r2", "b"],
                "links": [
                    {"from": "a", "to": "r1", "rate": "1Gbit", "delay": "1ms", "duplex": True},
                    {"from": "r1", "to": "r2", "rate": "10Mbit", "delay": "20ms", "monitor": True, "name": "core",
                     "queue": {"kind": "codel"}},
                    {"from": "r2", "to": "r1", "rate": "10Mbit", "delay": "20ms"},
                    {"from": "r2", "to": "b", "rate": "1Gbit", "delay": "1ms", "duplex": True},
                ],
                "routes": [{"at": "r1", "dst": "b", "next": "r2"}],
            },
            "flows": [{"name": "f", "src": "a", "dst": "b", "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}}],
        }
    )
    topo = scn.to_sim_config()["topology"]
    assert [(l["name"], l["from"], l["to"]) for l in topo["links"]] == [
        ("a->r1", "a", "r1"),
        ("r1->a", "r1", "a"),
        ("core", "r1", "r2"),
        ("r2->r1", "r2", "r1"),
        ("r2->b", "r2", "b"),
        ("b->r2", "b", "r2"),
    ]
    core = topo["links"][2]
    assert core["monitor"] and core["queue"]["kind"] == "codel" and core["rate_bps"] == 10_000_000
    assert topo["routes"] == [{"at": "r1", "dst": "b", "next": "r2"}]
    # TOML's `from` key survives a round trip
    assert loads_scenario(scn.dumps()).to_sim_config() == scn.to_sim_config()


# --- round trips ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_files_round_trip(path, tmp_path):
    scn = load_scenario(path)
    out = tmp_path / "again.toml"
    scn.to_toml(out)
    again = load_scenario(out)
    assert again == scn
    assert again.to_sim_config() == scn.to_sim_config()
    assert again.dumps() == scn.dumps()


def test_round_trip_keeps_units_readable():
    data = adsl(transport={"kind": "tcp", "cc": {"name": "cubic", "beta": 0.8}, "sndbuf": "4MiB"},
                app={"kind": "bulk"}, direction="down")
    text = Scenario.from_dict(data).dumps()
    assert 'down = "1.5Mbit"' in text and 'delay = "50ms"' in text and 'limit = "20000B"' in text
    assert 'sndbuf = "4MiB"' in text and "beta = 0.8" in text
    assert loads_scenario(text) == Scenario.from_dict(data)


def test_with_values_revalidates():
    scn = Scenario.from_dict(adsl())
    other = scn.with_values({"topology.bottleneck.queue.limit": "14pkt", "run.seed": 3})
    assert other.to_sim_config()["topology"]["bottleneck"]["down"]["queue"] == {
        "kind": "droptail", "limit": 14, "rule": "packets"}
    assert other.run.seed == 3 and scn.run.seed == 1
    with pytest.raises(ScenarioError, match=r"^topology.bottleneck.queue.limit: \"0pkt\""):
        scn.with_values({"topology.bottleneck.queue.limit": "0pkt"})


def test_describe_and_defaults():
    scn = Scenario.from_dict(adsl())
    text = scn.describe()
    assert "1.5Mbit" in text and "256kbit" in text and "base RTT 100ms" in text
    assert "voip.down" in text and "voip.up" in text and "CBR 186B every 20ms" in text
    assert scn.run.duration == 60 * 10**9 and scn.run.seeds == 1 and not scn.run.state_on_change


# --- bad scenarios: one line, naming the field and the value ------------------------------------------


def bad(path_fn):
    data = adsl()
    path_fn(data)
    return data


@pytest.mark.parametrize(
    "mutate, starts, contains",
    [
        # unknown key: the accepted keys of that table are listed
        (
            lambda d: d["topology"]["bottleneck"].update(qeue={"limit": "10pkt"}),
            "topology.bottleneck.qeue: is not an accepted key",
            "accepted keys: down, up, delay, down_delay, up_delay, queue, up_queue, loss, up_loss, jitter, up_jitter, monitor",
        ),
        (lambda d: d.update(runn={}), "runn: is not an accepted key", "accepted keys: run, topology, flows"),
        (
            lambda d: d["flows"][0]["app"].update(intervall="20ms"),
            "flows.voip.app.intervall: is not an accepted key",
            "interval",
        ),
        # negative rate
        (
            lambda d: d["topology"]["bottleneck"].update(down="-1.5Mbit"),
            'topology.bottleneck.down: "-1.5Mbit" is not a valid rate',
            "accepted: a positive number with unit bit, kbit, Mbit",
        ),
        # bad unit
        (
            lambda d: d["topology"]["bottleneck"].update(delay="50 parsecs"),
            'topology.bottleneck.delay: "50 parsecs" is not a valid duration',
            "unit ns, us, ms, s",
        ),
        (
            lambda d: d["flows"][0]["app"].update(size="186b"),
            'flows.voip.app.size: "186b" is not a valid size',
            "'b' would be bits",
        ),
        # a number without a unit
        (lambda d: d["run"].update(duration=60), "run.duration: 60 is not a valid duration", "needs a unit"),
        # negative time
        (
            lambda d: d["flows"][0]["app"].update(interval="-5ms"),
            'flows.voip.app.interval: "-5ms" is not a valid duration',
            'accepted: a positive number with unit ns, us, ms, s, e.g. "20ms"',
        ),
        # queue limit 0
        (
            lambda d: d["topology"]["bottleneck"]["queue"].update(limit="0B"),
            'topology.bottleneck.queue.limit: "0B" is not a valid queue limit',
            "would drop every packet",
        ),
        # unit and rule disagree
        (
            lambda d: d["topology"]["bottleneck"]["queue"].update(rule="packets"),
            'topology.bottleneck.queue.rule: "packets" does not match limit = "20000B"',
            "bytes-strict",
        ),
        (
            lambda d: d["topology"]["bottleneck"]["queue"].update(kind="fifo"),
            'topology.bottleneck.queue.kind: "fifo" is not a known kind',
            '"droptail", "red", "codel", "fq_codel", "pie", "pecn"',
        ),
        (
            lambda d: d["topology"]["bottleneck"].update(queue={"kind": "codel", "limit": "20000B"}),
            'topology.bottleneck.queue.limit: "20000B" is not accepted',
            "codel counts its limit in packets",
        ),
        (
            lambda d: d["flows"][0].update(transport={"kind": "tcp", "mss": 0}, app={"kind": "bulk"}),
            "flows.voip.transport.mss: 0 is not a valid MSS",
            "positive",
        ),
        (
            lambda d: d["flows"][0].update(transport={"kind": "tcp", "recovery": "sack"}, app={"kind": "bulk"}),
            'flows.voip.transport.recovery: "sack" is not accepted',
            '"prr" or "rate-halving"',
        ),
        (
            lambda d: d["flows"][0].update(transport={"kind": "tcp", "sndbuf": "0B"}, app={"kind": "bulk"}),
            'flows.voip.transport.sndbuf: "0B" is not a valid size',
            "positive",
        ),
        (
            lambda d: d["flows"][0].update(transport={"kind": "tcp", "cc": {"beta": 0.8}}, app={"kind": "bulk"}),
            "flows.voip.transport.cc.name: is missing",
            "cubic",
        ),
        (lambda d: d["flows"][0].update(app={"kind": "bulk"}), 'flows.voip.app.kind: "bulk" bulk needs transport', "tcp"),
        (lambda d: d["flows"][0].update(stop="0s"), 'flows.voip.stop: "0s" must be after start', "0s"),
        (lambda d: d["flows"].append(copy.deepcopy(d["flows"][0])), 'flows[1].name: "voip" is already used', "unique"),
        (lambda d: d["flows"][0].update(src="a", dst="b", direction=None), 'flows.voip.src: "a" is not a dumbbell host',
         "srv0"),
        (lambda d: d["flows"][0].update(path="long"), 'flows.voip.path: "long" is for parking lots', "direction"),
        (lambda d: d["topology"].pop("bottleneck"), "topology.bottleneck: is required but missing", ""),
        (lambda d: d["topology"].update(kind="star"), 'topology.kind: "star" is not a known kind',
         '"dumbbell", "parking_lot", "graph"'),
        (lambda d: d["run"].update(seeds=0), "run.seeds: 0 is out of range", ">= 1"),
        (lambda d: d["run"].update(state_on_change="yes"), 'run.state_on_change: "yes" is not a boolean', "true or false"),
        (lambda d: d.update(flows=[]), "flows: [] is too short", "at least 1"),
    ],
)
def test_bad_scenarios_give_one_line_naming_field_and_value(mutate, starts, contains):
    msg = one_line(error_of(bad(mutate)))
    assert msg.startswith(starts), msg
    assert contains in msg, msg
    assert "pydantic" not in msg and "Input should" not in msg


def test_flow_between_nodes_that_do_not_exist():
    data = {
        "topology": {"kind": "graph", "nodes": ["a", "r", "b"],
                     "links": [{"from": "a", "to": "r", "rate": "10Mbit", "duplex": True},
                               {"from": "r", "to": "b", "rate": "1Mbit", "duplex": True}]},
        "flows": [{"name": "web", "src": "a", "dst": "c", "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}}],
    }
    msg = one_line(error_of(data))
    assert msg.startswith('flows.web.dst: "c" is not a node of the graph'), msg
    assert 'flow "web"' in msg and "one of a, r, b" in msg


def test_link_to_a_node_that_does_not_exist():
    data = {
        "topology": {"kind": "graph", "nodes": ["a", "b"], "links": [{"from": "a", "to": "q", "rate": "10Mbit"}]},
        "flows": [{"name": "f", "src": "a", "dst": "b", "transport": {"kind": "udp"},
                   "app": {"kind": "cbr", "size": "100B", "interval": "1ms"}}],
    }
    assert one_line(error_of(data)) == 'topology.links[0].to: "q" is not a node (accepted: one of a, b)'


def test_several_problems_give_one_line_each():
    data = adsl()
    data["topology"]["bottleneck"].update(down="fast", up="-3kbit")
    data["flows"][0]["app"]["interval"] = "20"
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(data)
    lines = str(e.value).splitlines()
    assert [l.split(":")[0] for l in lines] == [
        "topology.bottleneck.down",
        "topology.bottleneck.up",
        "flows.voip.app.interval",
    ]
    assert [p.path for p in e.value.problems] == [l.split(":")[0] for l in lines]
    assert isinstance(e.value, ValueError)


def test_two_unknown_keys_two_lines():
    data = adsl()
    data["topology"]["bottleneck"].update(qeue=1, dealy="1ms")
    lines = error_of(data).splitlines()
    assert [l.split(":")[0] for l in lines] == ["topology.bottleneck.qeue", "topology.bottleneck.dealy"]


def test_toml_syntax_error_is_one_line_with_position(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text('[run]\nduration = "60s"\nseed = = 1\n')
    with pytest.raises(ScenarioError) as e:
        load_scenario(path)
    msg = one_line(str(e.value))
    assert "TOML syntax error at line 3, column" in msg and str(path) in msg


def test_missing_file_is_a_scenario_error(tmp_path):
    with pytest.raises(ScenarioError, match="cannot read the scenario file"):
        load_scenario(tmp_path / "nope.toml")


# --- the Rust side accepts what we produce (when the extension is built) ---------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_simulator_accepts_example_configs(path):
    core = pytest.importorskip("ccbench._core")
    core.validate(json.dumps(load_scenario(path).to_sim_config()))


def test_round_trip_of_a_scenario_using_most_options():
    text = """
[run]
duration = "1.5s"
seed = 42
seeds = 2
queue_sample = "1ms"
state_sample = "0s"
state_on_change = true

[topology]
kind = "parking_lot"
hops = 3
rate = "10Mbit"
delay = "2.5ms"
queue = { kind = "fq_codel", target = "2ms", ce_threshold = "500us" }
loss = { kind = "gilbert_elliott", p_gb = 0.001, p_bg = 0.5 }
per_hop = [ {}, { rate = "5Mbit", queue = { kind = "pie" } }, { loss = { kind = "trace", indices = [3, 4] } } ]
reverse = { rate = "100Mbit" }
access = { rate = "1Gbit", delay = "1ms" }

[[flows]]
name = "long"
path = "long"
transport = { kind = "tcp", cc = { name = "bbr", lt_bw = false }, pacing = true, min_rto = "1s", mss = "1448B" }
app = { kind = "bulk", bytes = "10MB" }
stop = "1s"

[[flows]]
name = "noise"
src = "x1_src"
dst = "x1_dst"
count = 2
transport = { kind = "udp", header = "28B" }
app = { kind = "onoff", size = "1200B", peak_rate = "20Mbit", on = { dist = "pareto", mean = "100ms", shape = 1.2 }, off = { dist = "exponential", mean = "400ms" } }
"""
    scn = loads_scenario(text)
    again = loads_scenario(scn.dumps())
    assert again == scn and again.dumps() == scn.dumps()
    cfg = scn.to_sim_config()
    assert cfg == again.to_sim_config()
    assert scn.flow_names() == ["long", "noise[0]", "noise[1]"]
    hops = cfg["topology"]["hop_links"]
    assert [h["queue"]["kind"] for h in hops] == ["fq_codel", "pie", "fq_codel"]
    assert hops[0]["queue"]["ce_threshold_us"] == 500 and hops[0]["delay_ns"] == 2_500_000
    assert [h["loss"]["kind"] for h in hops] == ["gilbert_elliott", "gilbert_elliott", "trace"]
    assert all(r["rate_bps"] == 100_000_000 for r in cfg["topology"]["reverse_links"])
    long = cfg["flows"][0]
    assert long["transport"] == {"kind": "tcp", "mss": 1448, "pacing": True, "min_rto_ms": 1000,
                                 "cc": {"name": "bbr", "params": {"lt_bw": False}}}
    assert cfg["flows"][1]["transport"] == {"kind": "udp", "header_bytes": 28}
    assert (cfg["seed"], cfg["state_sample_ns"], cfg["state_on_change"]) == (42, 0, True)

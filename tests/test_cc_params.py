"""Congestion-control parameters in user units (beta 0.7, c 0.4) and Linux's form
(beta = 717), checked at the user's path; ``ccbench cc list`` shows the user form."""

from __future__ import annotations

import math

import pytest

from conftest import needs_core

pytestmark = needs_core


def scenario(cc, name="bulk", duration="2s", **run):
    from ccbench.scenario import Scenario

    flow = {"direction": "down", "transport": {"kind": "tcp", "cc": cc}, "app": {"kind": "bulk"}}
    if name is not None:
        flow["name"] = name
    return Scenario.from_dict(
        {
            "run": {"duration": duration, **run},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"down": "10Mbit", "up": "10Mbit", "delay": "20ms", "queue": {"kind": "droptail", "limit": "60pkt"}},
            },
            "flows": [flow],
        }
    )


def sent_params(cc):
    return scenario(cc).to_sim_config()["flows"][0]["transport"]["cc"]["params"]


@pytest.mark.parametrize(
    "cc, linux",
    [
        ({"name": "cubic", "beta": 0.7}, {"beta": 717}),
        ({"name": "cubic", "beta": 0.8}, {"beta": 819}),
        ({"name": "cubic", "beta": 717}, {"beta": 717}),  # Linux's integer form, unchanged
        ({"name": "cubic", "c": 0.4}, {"bic_scale": 41}),
        ({"name": "cubic", "bic_scale": 41}, {"bic_scale": 41}),
        ({"name": "cubic", "hystart_ack_delta": "2ms"}, {"hystart_ack_delta_us": 2000}),
        ({"name": "cubic", "hystart_ack_delta_us": 2000}, {"hystart_ack_delta_us": 2000}),
        ({"name": "bic", "beta": 0.8}, {"beta": 819}),
        ({"name": "bic", "beta": 819}, {"beta": 819}),
        ({"name": "dctcp", "g": 1 / 16, "alpha_on_init": 1.0}, {"dctcp_shift_g": 4, "dctcp_alpha_on_init": 1024}),
        ({"name": "dctcp", "dctcp_shift_g": 4}, {"dctcp_shift_g": 4}),
        ({"name": "hybla", "rtt0": "25ms"}, {"rtt0": 25}),
        ({"name": "hybla", "rtt0": 25}, {"rtt0": 25}),
        ({"name": "fast", "alpha": 20, "gamma": 0.5}, {"alpha": 20, "gamma": 0.5}),  # already user units
        ({"name": "vegas", "alpha": 2, "beta": 4}, {"alpha": 2, "beta": 4}),  # vegas beta is packets
        ({"name": "aimd", "a": 1.0, "b": 0.5}, {"a": 1.0, "b": 0.5}),
    ],
)
def test_user_and_linux_forms_reach_the_simulator_as_linux(cc, linux):
    assert sent_params(cc) == linux


@pytest.mark.parametrize(
    "cc, key, fragment",
    [
        ({"name": "cubic", "beta": 1.5}, "beta", "a fraction in (0, 1), e.g. 0.7, or Linux's integer out of 1024"),
        ({"name": "cubic", "beta": 1}, "beta", "a fraction in (0, 1)"),  # neither reading is sane
        ({"name": "cubic", "beta": 1024}, "beta", "2 .. 1023"),
        ({"name": "cubic", "beta": 0}, "beta", "a fraction in (0, 1)"),
        ({"name": "cubic", "beta": True}, "beta", "a fraction in (0, 1)"),
        ({"name": "cubic", "c": -1}, "c", "a positive number"),
        ({"name": "cubic", "c": 0.4, "bic_scale": 41}, "bic_scale", "sets the same parameter as c"),
        ({"name": "cubic", "hystart": 1}, "hystart", "true or false"),
        ({"name": "cubic", "betta": 0.7}, "betta", "is not a parameter of cubic (accepted: cubic accepts beta, c,"),
        ({"name": "reno", "beta": 0.7}, "beta", "reno has no parameters"),
        ({"name": "dctcp", "g": 0.1}, "g", "1/2^n for n = 0 .. 10"),
        ({"name": "hybla", "rtt0": "1.5ms"}, "rtt0", "whole milliseconds"),
        ({"name": "vegas", "alpha": 2.5}, "alpha", "a whole number"),
    ],
)
def test_bad_parameters_name_the_users_path(cc, key, fragment):
    from ccbench.scenario import ScenarioError

    with pytest.raises(ScenarioError) as e:
        scenario(cc)
    msg = str(e.value)
    assert msg.startswith(f"flows.bulk.transport.cc.{key}: "), msg
    assert fragment in msg and "\n" not in msg and "params" not in msg, msg


def test_a_flow_without_a_usable_name_is_named_by_index():
    from ccbench.scenario import ScenarioError

    with pytest.raises(ScenarioError) as e:
        scenario({"name": "cubic", "beta": 7.5}, name=None)
    assert "\nflows[0].transport.cc.beta: 7.5 is not accepted" in str(e.value), str(e.value)


def test_the_readme_example_gives_beta_0_8_after_each_loss():
    """``cc = { name = "cubic", beta = 0.8 }``: on entering recovery ssthresh is
    cwnd x 819/1024 (Linux's integer arithmetic), about 0.8 x, not 0.7 x."""
    import ccbench

    for cc, beta in (({"name": "cubic", "beta": 0.8}, 819), ({"name": "cubic"}, 717)):
        run = ccbench.simulate(scenario(cc, duration="10s", state_on_change=True))
        c = run.cwnd.reset_index(drop=True)
        state = c["ca_state"].astype(str)
        enter = c.index[(state == "recovery") & (state.shift() != "recovery")]
        assert len(enter) >= 2, "the 60-packet buffer overflows a few times in 10 s"
        for i in enter:
            before, after = c.loc[i - 1, "cwnd_pkts"], c.loc[i, "ssthresh_pkts"]
            assert after == max(math.floor(before * beta / 1024), 2), (cc, before, after)
            assert abs(after / before - beta / 1024) < 0.015


def test_cc_list_shows_user_units(ccbench_cli):
    r = ccbench_cli("cc", "list", "cubic")
    assert r.returncode == 0, r.stderr
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip() for line in r.stdout.splitlines() if line.count("│") >= 3}
    assert rows["beta"] == "0.7" and rows["c"] == "0.4" and rows["hystart_ack_delta"] == "2ms", rows
    assert "bic_scale" not in rows and "717" in r.stdout  # the Linux form is named in the meaning column
    r = ccbench_cli("cc", "list", "hybla")
    assert "25ms" in r.stdout


def test_every_user_param_converts_its_own_displayed_default():
    """What ``cc list`` shows as the default, written in a scenario, gives Linux's default."""
    from ccbench.scenario.cc_params import USER_PARAMS, display_params, registry

    for algo, params in USER_PARAMS.items():
        spec = registry()[algo]
        defaults = {p["name"]: p["default"] for p in spec["params"]}
        shown = {name: default for name, default, _ in display_params(algo, spec["params"])}
        for up in params:
            assert up.linux in defaults, (algo, up.linux)
            text = shown[up.key]
            value = text if text.endswith("s") else (float(text) if "." in text or "e" in text else int(text))
            if up.key == "rtt0":
                value = text
            assert up.convert(value) == defaults[up.linux], (algo, up.key, text)

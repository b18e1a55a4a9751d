"""Scenarios: what to simulate, emulate or model, in one TOML file.

>>> from ccbench.scenario import Scenario
>>> scn = Scenario.from_dict({
...     "topology": {"kind": "dumbbell",
...                  "bottleneck": {"down": "1.5Mbit", "up": "256kbit", "delay": "50ms",
...                                 "queue": {"kind": "droptail", "limit": "20000B"}}},
...     "flows": [{"name": "voip", "direction": "both", "transport": {"kind": "udp"},
...                "app": {"kind": "cbr", "size": "186B", "interval": "20ms"}}],
... })
>>> scn.flow_names()
['voip.down', 'voip.up']
>>> scn.to_sim_config()["topology"]["bottleneck"]["down"]["queue"]
{'kind': 'droptail', 'limit': 20000, 'rule': 'bytes-strict'}

Units are part of every value (``"1.5Mbit"``, ``"20ms"``, ``"20000B"``, ``"14pkt"``;
see :mod:`ccbench.scenario.units`); unknown keys are errors; every problem is a
:class:`ScenarioError` with one line per problem naming the field and the value.
"""

from .errors import ScenarioError
from .io import dumps_scenario, load_scenario, loads_scenario, save_scenario
from .model import Run, Scenario
from .units import (
    Duration,
    PositiveDuration,
    PositiveSize,
    QLimit,
    QueueLimit,
    Rate,
    Size,
    UnitError,
    format_duration,
    format_rate,
    format_size,
    parse_duration,
    parse_queue_limit,
    parse_rate,
    parse_size,
)

__all__ = [
    "Scenario",
    "Run",
    "ScenarioError",
    "load_scenario",
    "loads_scenario",
    "dumps_scenario",
    "save_scenario",
    "Rate",
    "Duration",
    "PositiveDuration",
    "Size",
    "PositiveSize",
    "QueueLimit",
    "QLimit",
    "UnitError",
    "parse_rate",
    "parse_duration",
    "parse_size",
    "parse_queue_limit",
    "format_rate",
    "format_duration",
    "format_size",
]

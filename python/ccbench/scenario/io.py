"""TOML files <-> ``Scenario``.

``load_scenario(path)`` reads a file (TOML syntax errors become a one-line
:class:`ScenarioError` with line and column); ``save_scenario`` / ``Scenario.to_toml``
write one back with unit strings (``"1.5Mbit"``, ``"20ms"``), so that
load -> save -> load gives an equal scenario.
"""

from __future__ import annotations

import os
import re
try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Union

import tomli_w

from .errors import ScenarioError

if TYPE_CHECKING:
    from .model import Scenario

__all__ = ["load_scenario", "loads_scenario", "dumps_scenario", "save_scenario"]

PathLike = Union[str, "os.PathLike[str]"]

_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def loads_scenario(text: str, source: Optional[str] = None) -> "Scenario":
    """Parses TOML text into a validated scenario."""
    from .model import Scenario

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = str(e).replace("\n", " ")
        m = _POS.search(msg)
        where = f"line {m.group(1)}, column {m.group(2)}: " if m else ""
        msg = _POS.sub("", msg)
        prefix = f"{source}: " if source else ""
        raise ScenarioError([f"{prefix}TOML syntax error at {where}{msg}"], source=source) from None
    return Scenario.from_dict(data, source=source)


def load_scenario(path: PathLike) -> "Scenario":
    """Reads and validates a scenario file; every problem is a :class:`ScenarioError`."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioError([f"{p}: cannot read the scenario file ({e.strerror or e})"], source=str(p)) from None
    return loads_scenario(text, source=str(p))


def dumps_scenario(scn: "Scenario") -> str:
    """The scenario as TOML text (only keys that were set; units as strings)."""
    return tomli_w.dumps(scn.to_dict())


def save_scenario(scn: "Scenario", path: PathLike) -> None:
    Path(path).write_text(dumps_scenario(scn), encoding="utf-8")

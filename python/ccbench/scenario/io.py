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
from .limits import MAX_DEPTH, FileProblem, regular_file

if TYPE_CHECKING:
    from .model import Scenario

__all__ = ["load_scenario", "loads_scenario", "dumps_scenario", "save_scenario"]

PathLike = Union[str, "os.PathLike[str]"]

# A scenario is a few kB; a larger "scenario" is the wrong file, not a scenario to parse.
MAX_SCENARIO_BYTES = 16 * 2**20

_POS = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def loads_scenario(text: str, source: Optional[str] = None) -> "Scenario":
    """Parses TOML text into a validated scenario."""
    from .model import Scenario

    prefix = f"{source}: " if source else ""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively
        raise ScenarioError(
            [f"{prefix}TOML nesting is too deep to parse (accepted: at most {MAX_DEPTH} levels of tables and arrays)"],
            source=source,
        ) from None
    except tomllib.TOMLDecodeError as e:
        msg = str(e).replace("\n", " ")
        m = _POS.search(msg)
        where = f"line {m.group(1)}, column {m.group(2)}: " if m else ""
        msg = _POS.sub("", msg)
        raise ScenarioError([f"{prefix}TOML syntax error at {where}{msg}"], source=source) from None
    return Scenario.from_dict(data, source=source)


def load_scenario(path: PathLike) -> "Scenario":
    """Reads and validates a scenario file; every problem is a :class:`ScenarioError`."""
    p = Path(path)
    try:
        regular_file(p, MAX_SCENARIO_BYTES)
        raw = p.read_bytes()
    except FileProblem as e:
        raise ScenarioError([f"{p}: cannot read the scenario file: it {e}"], source=str(p)) from None
    except OSError as e:
        raise ScenarioError([f"{p}: cannot read the scenario file ({e.strerror or e})"], source=str(p)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(
            [f"{p}: the scenario file is not UTF-8 text (byte {e.start} is 0x{raw[e.start]:02x}; a binary file?) (accepted: a TOML text file)"],
            source=str(p),
        ) from None
    return loads_scenario(text, source=str(p))


def dumps_scenario(scn: "Scenario") -> str:
    """The scenario as TOML text (only keys that were set; units as strings)."""
    return tomli_w.dumps(scn.to_dict())


def save_scenario(scn: "Scenario", path: PathLike) -> None:
    Path(path).write_text(dumps_scenario(scn), encoding="utf-8")

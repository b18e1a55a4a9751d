"""One exception for every scenario problem, one line per problem.

Each line reads ``path: value what-is-wrong (accepted: ...)``, e.g.::

    flows.voip.app.interval: "-5ms" is not a valid duration: it is negative (accepted: ...)

``path`` is the user's own field path: flows are named by their ``name`` where they have
one (``flows.voip``), by index otherwise (``flows[1]``); pydantic's internal location
parts (union tags, validator names) are dropped. Pydantic's ``ValidationError`` never
reaches the user: :func:`from_validation_error` turns it into a :class:`ScenarioError`.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

__all__ = ["ScenarioError", "Problem", "fail", "from_validation_error", "render_value"]

_MISSING = object()

MAX_SHOWN = 10  # problems listed in the message (all of them stay in ScenarioError.problems)


class Problem(tuple):
    """``(path, message)``; ``str()`` gives the line shown to the user."""

    __slots__ = ()

    def __new__(cls, path: str, message: str):
        return super().__new__(cls, (path, message))

    @property
    def path(self) -> str:
        return self[0]

    @property
    def message(self) -> str:
        return self[1]

    def __str__(self) -> str:
        return printable(f"{self.path}: {self.message}" if self.path else self.message)


class ScenarioError(ValueError):
    """An invalid scenario. ``str(err)`` is one line per problem; ``err.problems`` lists them."""

    def __init__(self, problems: Iterable[Problem | tuple[str, str] | str], source: str | None = None):
        probs: list[Problem] = []
        for p in problems:
            if isinstance(p, str):
                p = Problem("", p)
            elif not isinstance(p, Problem):
                p = Problem(*p)
            if p not in probs:
                probs.append(p)
        self.problems = probs
        self.source = source
        shown = [str(p) for p in probs[:MAX_SHOWN]]
        if len(probs) > MAX_SHOWN:  # a file of 20 000 unknown keys is one mistake, not a screenful
            shown.append(f"... and {len(probs) - MAX_SHOWN} more problems")
        super().__init__("\n".join(shown))


def render_value(value: Any, limit: int = 60) -> str:
    """A value as the user wrote it in TOML: strings in double quotes, ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    try:
        s = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        s = repr(value)
    s = printable(s.replace("\n", " "))
    return s if len(s) <= limit else s[: limit - 3] + "..."


def printable(s: str) -> str:
    """``s`` without a character that ends a line or moves the terminal's cursor (NEL,
    LS, PS, ESC, ...), escaped as ``\\uXXXX``: a message stays one line per problem
    whatever the file holds, keys included."""
    return s if s.isprintable() else "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in s)


def fail(
    text: str, at: Iterable[str | int] = (), value: Any = _MISSING, ats: Iterable[Iterable[str | int]] = ()
) -> PydanticCustomError:
    """An error for a validator to raise.

    ``at`` extends the location pydantic knows (model validators only know the model's
    own location); ``ats`` gives several such locations, one line each (the same
    problem at several keys); ``value`` is shown before ``text`` when given.
    """
    ctx: dict[str, Any] = {"text": text, "at": tuple(at), "ats": [tuple(a) for a in ats]}
    if value is not _MISSING:
        ctx["value"] = value
    return PydanticCustomError("ccbench", "{text}", ctx)


# --- ValidationError -> ScenarioError ----------------------------------------------------

_NAME_OK = re.compile(r"^[A-Za-z0-9_\-]+$")


def _user_path(loc: tuple, data: Any, keep_last: bool) -> str:
    """Renders a pydantic location against the raw input, dropping synthetic parts."""
    parts: list[str] = []
    cur = data
    n = len(loc)
    for i, elem in enumerate(loc):
        last = i == n - 1
        if isinstance(cur, dict) and elem in cur:
            parts.append(f".{elem}")
            cur = cur[elem]
        elif isinstance(cur, list) and isinstance(elem, int) and 0 <= elem < len(cur):
            item = cur[elem]
            name = item.get("name") if isinstance(item, dict) else None
            same = sum(1 for x in cur if isinstance(x, dict) and x.get("name") == name)
            if isinstance(name, str) and _NAME_OK.match(name) and same == 1:
                parts.append(f".{name}")
            else:
                parts.append(f"[{elem}]")
            cur = item
        elif last and keep_last:
            parts.append(f"[{elem}]" if isinstance(elem, int) else f".{elem}")
            cur = None
        else:
            # a union tag ('cbr'), a validator name ('function-plain[...]') or a
            # location past the raw data: not something the user wrote
            continue
    return "".join(parts).lstrip(".")


def _expected(ctx: dict) -> str:
    exp = ctx.get("expected", "")
    # pydantic writes "'a', 'b' or 'c'"; show TOML-style double quotes
    return str(exp).replace("'", '"')


def _message(err: dict) -> tuple[str, bool, Any]:
    """(text, keep_last_loc_element, value-or-_MISSING) for one pydantic error."""
    typ = err["type"]
    ctx = err.get("ctx") or {}
    inp = err.get("input", _MISSING)
    if typ == "ccbench":
        return ctx["text"], False, ctx.get("value", _MISSING)
    if typ == "ccbench_unit":
        return ctx["text"], False, inp
    if typ == "missing":
        return "is required but missing", True, _MISSING
    if typ == "extra_forbidden":
        return "is not an accepted key", True, _MISSING
    if typ == "literal_error":
        return f"is not accepted (accepted: {_expected(ctx)})", False, inp
    if typ in ("union_tag_invalid", "union_tag_not_found"):
        tags = str(ctx.get("expected_tags", "")).replace("'", '"')
        disc = str(ctx.get("discriminator", "kind")).strip("'")
        if typ == "union_tag_not_found":
            return f'needs a "{disc}" key (accepted: {tags})', False, _MISSING
        return f'has an unknown {disc} {render_value(ctx.get("tag"))} (accepted: {tags})', False, _MISSING
    if typ.startswith("bool"):
        return "is not a boolean (accepted: true or false)", False, inp
    if typ.startswith("int"):
        return "is not an integer (accepted: a whole number without unit)", False, inp
    if typ.startswith("float"):
        return "is not a number", False, inp
    if typ.startswith("string"):
        return "is not a string", False, inp
    if typ in ("list_type", "tuple_type"):
        return "is not a list (accepted: an array [ ... ])", False, inp
    if typ in ("model_type", "dict_type", "model_attributes_type"):
        return "is not a table (accepted: a table { ... })", False, inp
    bounds = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
    if typ in bounds:
        limit = next(iter(ctx.values()), "?")
        return f"is out of range (accepted: a number {bounds[typ]} {limit})", False, inp
    if typ == "too_short":
        return f"is too short (accepted: at least {ctx.get('min_length')} entries)", False, inp
    if typ == "too_long":
        return f"is too long (accepted: at most {ctx.get('max_length')} entries)", False, inp
    msg = str(err.get("msg", typ)).replace("\n", " ")
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, ") :]
    return f"is not valid: {msg}", False, inp


def from_validation_error(exc: ValidationError, data: Any, root: tuple = (), source: str | None = None) -> ScenarioError:
    """Turns a pydantic ``ValidationError`` raised on ``data`` into a ScenarioError.

    ``root`` prefixes every location (when ``data`` is a sub-table of the file).
    """
    problems: list[Problem] = []
    for err in exc.errors(include_url=False):
        text, keep_last, value = _message(err)
        loc = tuple(root) + tuple(err["loc"])
        ctx = err.get("ctx") or {}
        ats = [()]
        if err["type"] == "ccbench":
            ats = [tuple(a) for a in ctx.get("ats", ())] or [tuple(ctx.get("at", ()))]
        line = text if value is _MISSING else f"{render_value(value)} {text}"
        for extra in ats:
            path = _user_path(loc + extra, data, keep_last or bool(extra))
            problems.append(Problem(path, line))
    return ScenarioError(problems, source=source)

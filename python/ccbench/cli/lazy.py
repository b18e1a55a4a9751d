"""The root ``ccbench`` command group: sub-commands imported only when used.

``ccbench --help`` and ``ccbench validate`` must start in well under half a second,
but the command modules between them import pandas, scipy, matplotlib and the
analytical models. So the root group knows each command by name, module and a
one-line summary (for ``ccbench --help``) and imports a command's module only when
that command runs or its own ``--help`` is asked for.

The group also routes every invocation, in-process (typer's ``CliRunner``) or as the
script, through :func:`ccbench.cli.errors.run_command`, so a usage error is one line
and exit code 2 however the CLI is driven.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, MutableMapping
from typing import Any

import typer
import typer.core
import typer.main


class LazyCommands(MutableMapping):
    """``name -> command`` that imports a command's module on first lookup.

    ``registry`` maps a command name to ``(module, summary)``; the module has a
    ``register(app)`` that adds its commands to a typer app. While ``listing`` is set
    (the root ``--help``), an unloaded command is a stand-in with the summary only.
    """

    def __init__(self, loaded: dict[str, Any], registry: dict[str, tuple[str, str]], markup_mode: Any):
        self._loaded = dict(loaded)
        self._registry = registry
        self._markup_mode = markup_mode
        self.listing = False

    def _load(self, name: str) -> None:
        module, summary = self._registry[name]
        sub = typer.Typer(rich_markup_mode=self._markup_mode)
        importlib.import_module(module).register(sub)
        group = typer.main.get_group(sub)
        for cmd_name, cmd in group.commands.items():
            if cmd_name in self._registry and cmd_name not in self._loaded:
                plain_help(cmd)
                refuse_repeated_options(cmd)
                # The root listing is the registry's: the same whether or not loaded.
                cmd.short_help = _summary(self._registry[cmd_name][1], self._markup_mode)
                self._loaded[cmd_name] = cmd
        if name not in self._loaded:
            raise RuntimeError(f"{module}.register() did not add the command {name!r}")

    def __getitem__(self, name: str) -> Any:
        if name in self._loaded:
            return self._loaded[name]
        if name not in self._registry:
            raise KeyError(name)
        if self.listing:
            summary = _summary(self._registry[name][1], self._markup_mode)
            return typer.core.TyperCommand(name, short_help=summary, help=summary)
        self._load(name)
        return self._loaded[name]

    def __setitem__(self, name: str, cmd: Any) -> None:
        self._loaded[name] = cmd

    def __delitem__(self, name: str) -> None:
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        yield from self._registry
        yield from (n for n in self._loaded if n not in self._registry)

    def __len__(self) -> int:
        return len(set(self._registry) | set(self._loaded))


def _summary(text: str, markup_mode: Any) -> str:
    if markup_mode != "rich":
        return text
    from rich.markup import escape

    return escape(text)


def plain_help(cmd: Any) -> None:
    """Help texts are plain text: typer reads them as rich markup, where
    ``[sweep]`` or ``[ms]`` would silently vanish. Escapes the brackets of a
    command's (or group's, recursively) help and of its parameters' help."""
    if getattr(cmd, "_ccbench_plain", False) or getattr(cmd, "rich_markup_mode", None) != "rich":
        return
    from rich.markup import escape

    cmd._ccbench_plain = True
    for attr in ("help", "short_help", "epilog"):
        text = getattr(cmd, attr, None)
        if isinstance(text, str):
            setattr(cmd, attr, escape(text))
    for p in getattr(cmd, "params", []) or []:
        if isinstance(getattr(p, "help", None), str):
            p.help = escape(p.help)
    for sub in (getattr(cmd, "commands", None) or {}).values():
        plain_help(sub)


def refuse_repeated_options(cmd: Any) -> None:
    """An option that takes one value, given twice, is a usage error. Click keeps the
    last value and drops the first without a word (``--rows pie --rows red`` ran only
    the red rows); options meant to repeat are declared ``multiple`` and pass. Wraps
    the command's (or group's, recursively) argument parsing."""
    if getattr(cmd, "_ccbench_repeats", False):
        return
    cmd._ccbench_repeats = True
    for sub in (getattr(cmd, "commands", None) or {}).values():
        refuse_repeated_options(sub)
    single = [[*p.opts, *p.secondary_opts] for p in getattr(cmd, "params", []) or []
              if p.param_type_name == "option" and not p.multiple and not getattr(p, "count", False)
              and not getattr(p, "is_flag", False)]
    if not single:
        return
    parse = cmd.parse_args

    def parse_args(ctx: Any, args: list[str]) -> list[str]:
        upto = args.index("--") if "--" in args else len(args)
        for names in single:
            given = [a for a in args[:upto] if a in names or any(a.startswith(n + "=") for n in names if n.startswith("--"))]
            if len(given) > 1:
                ctx.fail(f"{max(names, key=len)}: given {len(given)} times (accepted: once; it takes one value)")
        return parse(ctx, args)

    cmd.parse_args = parse_args


class LazyGroup(typer.core.TyperGroup):
    """A typer group whose sub-commands come from ``registry`` (set by a subclass)."""

    registry: dict[str, tuple[str, str]] = {}

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.commands = LazyCommands(self.commands, self.registry, self.rich_markup_mode)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        # Lists every command by its summary without importing any of them.
        self.commands.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.commands.listing = False

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        self.commands.listing = False
        return super().resolve_command(ctx, args)

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        from ccbench.cli.errors import run_command

        def invoke() -> Any:
            return super(LazyGroup, self).main(
                args=args, prog_name=prog_name or "ccbench", complete_var=complete_var, standalone_mode=False, **extra
            )

        if not standalone_mode:
            return invoke()
        sys.exit(run_command(invoke))

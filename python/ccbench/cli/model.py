"""``ccbench model NAME --param value ...``: the analytical models, one unit convention.

Every time, rate and size is a unit string, as in scenario files (``--rtt 100ms``,
``--rate 64kbit``, ``--mss 1448B``, ``--size 100kB``); a probability is ``1%`` or
``0.01``. The model modules' own commands take numbers in the unit their option name
says (``--rtt-ms 100``, ``--rtt-s 0.1``, ``--S 2000``); each such option stays
accepted as a hidden alias of its unit-string option, so old command lines keep
working.

Each command here wraps the model's own typer command: :func:`unit_command` replaces
the converted parameters by a unit-string option (plus the hidden old one) and passes
the converted value on, so the model modules stay as they are.
"""

from __future__ import annotations

import importlib
import inspect
import typing
from dataclasses import dataclass
from typing import Any, Callable, List, Optional

import typer
from typer.models import OptionInfo

from ccbench.predict import options as U

__all__ = ["MODELS", "Conv", "unit_command", "register"]


@dataclass(frozen=True)
class Conv:
    """One converted parameter: its new option names, default (a unit string), help,
    and how a parsed value becomes what the model's parameter takes."""

    names: tuple[str, ...]
    parse: Callable[[str, str], Any]  # (text, option) -> model value
    default: Optional[str]
    help: str
    many: bool = False  # a repeatable option (list)


def _dur(scale: float) -> Callable[[str, str], float]:
    return lambda v, opt: U.duration_s(v, opt) * scale


def _rate(scale: float) -> Callable[[str, str], float]:
    return lambda v, opt: U.rate_bps(v, opt) * scale


def _size(scale: float = 1.0, as_int: bool = False) -> Callable[[str, str], Any]:
    def f(v: str, opt: str):
        b = U.size_bytes(v, opt) * scale
        return int(round(b)) if as_int else float(b)

    return f


def _prob(v: str, opt: str) -> float:
    return U.probability(v, opt)


def _pkts(as_int: bool = True) -> Callable[[str, str], Any]:
    def f(v: str, opt: str):
        n = U.packets(v, opt)
        if as_int and n != int(n):
            raise typer.BadParameter(f"{opt}: {v!r} is not a whole number of packets")
        return int(n) if as_int else n

    return f


RTT = Conv(("--rtt",), _dur(1e3), "100ms", "round-trip time, e.g. 100ms")
LOSS = Conv(("--loss", "-p"), _prob, "1%", 'loss probability p, "1%" or 0.01')
MSS = Conv(("--mss",), _size(as_int=True), "1460B", "maximum segment size, e.g. 1448B")

#: command -> (module, function, {model parameter: Conv}).
MODELS: dict[str, tuple[str, str, dict[str, Conv]]] = {
    "pftk": ("ccbench.models.pftk", "cli", {
        "rtt_ms": RTT, "loss": LOSS, "mss": MSS,
        "t0_ms": Conv(("--t0",), _dur(1e3), None, "base retransmission timeout T0 (default 4 x RTT), e.g. 400ms"),
    }),
    "mathis": ("ccbench.models.mathis", "cli", {"rtt_ms": RTT, "loss": LOSS, "mss": MSS}),
    "cardwell": ("ccbench.models.cardwell", "cli", {
        "size": Conv(("--size",), _size(as_int=True), "100kB", "transfer size, e.g. 100kB"),
        "rtt_ms": RTT, "loss": Conv(("--loss", "-p"), _prob, "1%", 'loss probability p < 1/2, "1%" or 0.01'),
        "mss": MSS,
        "t0_ms": Conv(("--t0",), _dur(1e3), None, "retransmission timeout T0 (default 4 x RTT)"),
        "delack_ms": Conv(("--delack",), _dur(1e3), "100ms", "expected delayed-ACK wait of the first segment"),
    }),
    "brosh": ("ccbench.models.brosh", "cli", {
        "rate_bps": Conv(("--rate",), _rate(1.0), None, "application bit rate over --size writes, e.g. 64kbit "
                         "(give this or --interval)"),
        "interval_s": Conv(("--interval",), _dur(1.0), None, "packetization interval (default 20ms)"),
        "size_bytes": Conv(("--size",), _size(), "174B", "application packet size a (VoIP 174B, video 1448B)"),
        "rtt_s": Conv(("--rtt",), _dur(1.0), "100ms", "round-trip time"),
        "loss": LOSS,
        "mss_bytes": Conv(("--mss",), _size(), "1448B", "TCP maximum segment size"),
        "one_way_s": Conv(("--one-way",), _dur(1.0), None, "one-way network delay L (default RTT/2)"),
        "rto_s": Conv(("--t0",), _dur(1.0), None, "base retransmission timeout T0 (default 4 x RTT)"),
        "deadline_s": Conv(("--deadline",), _dur(1.0), None, "playout deadline for the late fraction P{D > d}; "
                           "repeatable", many=True),
    }),
    "weigle": ("ccbench.models.weigle", "cli", {
        "loss": LOSS, "rtt_s": Conv(("--rtt",), _dur(1.0), "100ms", "mean round-trip time"),
        "t0_s": Conv(("--t0",), _dur(1.0), "1s", "average single retransmission timeout TO (Eq. 20)"),
        "transfer_bytes": Conv(("--size",), _size(), None, "transfer size, e.g. 100kB; overrides --segments"),
        "rate_bps": Conv(("--rate",), _rate(1.0), None, "bottleneck capacity C (ACK gap >= MSS/C); default none"),
        "mss_bytes": Conv(("--mss",), _size(), "1460B", "segment size B"),
    }),
    "wei-sync": ("ccbench.models.wei_sync", "cli_sync", {
        "s": Conv(("--slots",), _pkts(), "2000", "packets through the router in the congestion RTT, cd+B+L [packets], e.g. 2000 or 2000pkt"),
        "m": Conv(("--loss-burst",), _pkts(), None, "loss-burst length M [slots] (default: L, DropTail)"),
        "k": Conv(("--flow-burst",), _pkts(), None, "flow-burst length K [slots] (default: ceil(w), bursty)"),
        "drops": Conv(("--drops",), _pkts(False), None, "drops in the loss event L [packets] (default N)"),
    }),
    "wei-fairness": ("ccbench.models.wei_sync", "cli_fairness", {
        "rtt_ms": Conv(("--rtt",), _dur(1e3), None, "RTT to also print F in seconds, e.g. 100ms"),
    }),
    "wei-throughput": ("ccbench.models.wei_sync", "cli_throughput", {
        "bdp": Conv(("--bdp",), _pkts(False), "10440", "bandwidth-delay product cd [packets]"),
        "buffer": Conv(("--buffer",), lambda v, o: 0.0 if str(v).strip() in ("0", "0pkt") else _pkts(False)(v, o),
                       "0", "bottleneck buffer B [packets]"),
    }),
    "fast": ("ccbench.models.wei_fast", "cli_fast", {
        "delay_ms": Conv(("--delay",), _dur(1e3), "100ms", "round-trip propagation delay d"),
    }),
    "vegas": ("ccbench.models.wei_fast", "cli_vegas", {
        "delay_ms": Conv(("--delay",), _dur(1e3), "50ms", "round-trip propagation delay d (includes 1/c)"),
    }),
    "luebben-window": ("ccbench.models.luebben", "cli_window", {
        "capacity_mbps": Conv(("--capacity",), _rate(1e-6), "10Mbit", "network capacity C"),
        "delay_ms": Conv(("--delay",), _dur(1e3), "50ms", "one-way delay T (RTT = 2T)"),
        "window_kbit": Conv(("--window",), _size(8e-3), None, "static window w, e.g. 62500B (= 500 kbit); "
                            "repeatable (default 62500B and 250kB)", many=True),
        "rate_step_mbps": Conv(("--rate-step",), _rate(1e-6), "1Mbit", "probe-rate increment r_acc"),
    }),
    "luebben-periodic": ("ccbench.models.luebben", "cli_periodic", {
        "loss": Conv(("--loss", "-p"), _prob, "0.1%", "loss probability p (one loss every 1/p packets)"),
        "rtt_ms": Conv(("--rtt",), _dur(1e3), "20ms", "round-trip time"), "mss": Conv(("--mss",), _size(as_int=True), "1448B", "segment size"),
    }),
}


def _base_type(annotation: Any) -> Any:
    if typing.get_origin(annotation) is typing.Annotated:
        return typing.get_args(annotation)[0]
    return annotation


def _old_option(param: inspect.Parameter) -> tuple[Any, OptionInfo]:
    """The model's own option, hidden, default None (an alias in its original unit)."""
    ann = param.annotation
    info = param.default if isinstance(param.default, OptionInfo) else None
    if info is None and typing.get_origin(ann) is typing.Annotated:
        info = next(a for a in typing.get_args(ann)[1:] if isinstance(a, OptionInfo))
    # In the Annotated style typer stores the first option name as ``default``.
    raw = list(info.param_decls or ()) if info else []
    if info is not None and isinstance(info.default, str) and info.default.startswith("-"):
        raw.insert(0, info.default)
    decls = tuple(d for d in raw if d.startswith("--"))
    base = _base_type(ann)
    if typing.get_origin(base) is typing.Union:
        base = next(a for a in typing.get_args(base) if a is not type(None))
    return Optional[base], typer.Option(None, *decls, hidden=True)


def unit_command(target: Callable, convs: dict[str, Conv]) -> Callable:
    """``target`` (a typer command) with the ``convs`` parameters taken as unit strings."""
    sig = inspect.signature(target, eval_str=True)
    params, annotations = [], {}
    for p in sig.parameters.values():
        if p.name not in convs:
            params.append(p.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            annotations[p.name] = p.annotation
            continue
        c = convs[p.name]
        # The old spelling, now hidden, unless the new option has the same name.
        old_ann, old_opt = _old_option(p)
        new_names = set(c.names)
        old_decls = tuple(d for d in old_opt.param_decls if d not in new_names)
        ann = Optional[List[str]] if c.many else Optional[str]
        params.append(inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, annotation=ann,
                                        default=typer.Option(c.default, *c.names, help=c.help)))
        annotations[p.name] = ann
        if old_decls:
            old_ann = Optional[List[float]] if c.many else old_ann
            params.append(inspect.Parameter(p.name + "__old", inspect.Parameter.KEYWORD_ONLY, annotation=old_ann,
                                            default=typer.Option(None, *old_decls, hidden=True)))
            annotations[p.name + "__old"] = old_ann

    def command(**kw):
        for name, c in convs.items():
            new = kw.pop(name)
            old = kw.pop(name + "__old", None)
            given_new = new not in (None, []) and (c.many or new != c.default)
            if old not in (None, []) and given_new:
                raise typer.BadParameter(f"{c.names[0]}: give it or its old spelling, not both")
            if old not in (None, []):
                kw[name] = old
            elif new in (None, []):
                kw[name] = None if not c.many else None
            elif c.many:
                kw[name] = [c.parse(v, c.names[0]) for v in new]
            else:
                kw[name] = c.parse(new, c.names[0])
        for p in sig.parameters.values():  # a many-option left empty takes the model's default
            if kw.get(p.name) is None and p.name in convs and convs[p.name].many:
                d = p.default.default if isinstance(p.default, OptionInfo) else p.default
                kw[p.name] = d
        return target(**kw)

    command.__signature__ = inspect.Signature(params)
    command.__annotations__ = annotations
    command.__doc__ = target.__doc__
    command.__name__ = target.__name__
    return command


def register(app: typer.Typer) -> None:
    model_app = typer.Typer(
        help="Analytical models (PFTK, Mathis, Cardwell, Brosh, Weigle, Wei, Lübben). Times, rates and sizes are "
        "unit strings as in scenario files, probabilities 1% or 0.01. Example: ccbench model pftk --rtt 100ms "
        "--loss 1%. For a scenario's flows: ccbench predict SCENARIO.toml",
        no_args_is_help=True,
    )
    for name, (module, func, convs) in MODELS.items():
        model_app.command(name)(unit_command(getattr(importlib.import_module(module), func), convs))
    app.add_typer(model_app, name="model")

"""ccbench: how much delay and throughput will this traffic get over TCP?

One scenario description, four answers: ``simulate`` (the Rust packet-level
simulator), ``emulate`` (real Linux TCP in network namespaces), ``model`` (analytical
models) and ``benchmark`` (statistical service curves from timestamps).

The compiled simulator is imported lazily, so the pure-Python parts (models,
netcal, analysis) work without it.

>>> import ccbench
>>> run = ccbench.simulate("examples/adsl1_voip.toml")          # doctest: +SKIP
>>> run.save("runs/adsl"); ccbench.load_run("runs/adsl")         # doctest: +SKIP

``examples/quickstart.ipynb`` walks through the API.
"""

from __future__ import annotations

__version__ = "0.1.0"

_LAZY = {
    "load_scenario": ("ccbench.scenario", "load_scenario"),
    "Scenario": ("ccbench.scenario", "Scenario"),
    "simulate": ("ccbench.backends.sim", "simulate"),
    "predict": ("ccbench.predict", "predict"),
    "Run": ("ccbench.run", "Run"),
    "load_run": ("ccbench.run", "load_run"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'ccbench' has no attribute {name!r}")


__all__ = ["__version__", *_LAZY]

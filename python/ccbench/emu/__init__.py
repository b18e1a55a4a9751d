"""The emulator backend: a Scenario run with the real Linux kernel TCP through the
``ccemu`` bottleneck. ``runner.py`` runs it (``from ccbench.emu.runner import
emulate``; kept out of this module so that importing the package for its error and
checks stays light), ``system.py`` checks the machine and cleans namespaces,
``tables.py`` reads ``ccemu``'s record files, ``addresses.py`` names the dumbbell's
addresses. ``ccbench emu`` (``cli/emu.py``) only parses options and prints."""

from .system import (
    NS_PREFIX,
    EmulationError,
    available_cc,
    check,
    clean,
    find_ccemu,
    list_namespaces,
    require,
)

__all__ = [
    "NS_PREFIX",
    "EmulationError",
    "available_cc",
    "check",
    "clean",
    "find_ccemu",
    "list_namespaces",
    "require",
]

"""Helpers of the emulator backend (``ccbench.backends.emu``): machine checks,
network-namespace housekeeping, and the readers of the ``ccemu`` output files."""

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

"""The emulator backend's name beside ``ccbench.backends.sim``: its home is
:mod:`ccbench.emu` (``runner.py`` runs a scenario, ``system.py`` checks the machine,
``tables.py`` reads ``ccemu``'s records); this module only re-exports the entry point."""

from ccbench.emu.runner import EmulationError, emulate

__all__ = ["emulate", "EmulationError"]

"""``python -m ccbench`` is the same as the ``ccbench`` command."""

from ccbench.cli import main

main()

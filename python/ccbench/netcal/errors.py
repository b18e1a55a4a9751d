"""The one exception class of :mod:`ccbench.netcal`."""

from __future__ import annotations

__all__ = ["NetcalError"]


class NetcalError(ValueError):
    """Bad input or an impossible estimate in the service-curve benchmark.

    Raised for missing columns, unsorted timestamps, ``xi`` outside ``(0, 1)``,
    no stationary probe rate at all, and similar problems. The message always names
    the offending column, rate or value.
    """

"""Functions beyond the standard, served in every revision: ``pad`` and
``lib.stride_tricks.sliding_window_view``.

Libraries written against the Array API call these NumPy functions on the namespace of their
arrays (xarray's ``shift`` and ``pad`` call ``xp.pad``; ``rolling`` pads and then calls
``xp.lib.stride_tricks.sliding_window_view``), so the namespace of traced arrays serves them
with NumPy's signatures, written with the same canonical ops as the NumPy frontend's.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..numpy._padding import _pad
from ..numpy._queries import _sliding_window_view
from ._tables import translates

__all__ = ["BEYOND", "missing"]

# Functions beyond the standard that the namespace serves in every revision (qualified names).
BEYOND = ("pad", "lib.stride_tricks.sliding_window_view")

# Modes whose NumPy construction mixes NumPy constants into the graph (NumPy providers only).
_NUMPY_ONLY_MODES = frozenset({"linear_ramp", "median"})


@translates("pad")
def _pad_translation(ctx, x, /, pad_width, mode="constant", **kwargs):
    if ctx.xp is not np and mode in _NUMPY_ONLY_MODES:
        raise ValueError(f"pad: mode {mode!r} is supported on traced NumPy arrays only; "
                         "the other modes work on every provider")
    return _pad(x, pad_width, mode=mode, **kwargs)


@translates("lib.stride_tricks.sliding_window_view")
def _sliding_window_view_translation(ctx, x, window_shape, axis=None, **kwargs):
    return _sliding_window_view(x, window_shape, axis, **kwargs)


def missing(xp, name: str) -> Callable:
    """A stand-in for a function beyond the standard that provider ``xp`` lacks: untraced
    calls have no provider function to go to."""
    def function(*args, **kwargs):
        raise TypeError(f"{name}: the array provider {getattr(xp, '__name__', xp)!r} has no "
                        f"{name}; Advect serves it for traced arrays only")
    return function

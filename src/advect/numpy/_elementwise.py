"""NumPy functions that work element by element on traced arrays: ``where``, ``clip``,
``round``, ``real``, ``imag``, ``angle`` and ``copy``."""

from __future__ import annotations

import operator

import numpy as np

from .. import ops
from .._compat import clip_bounds
from ..dtypes import aval_of
from ._functions import astype, check_order, implements, operand
from ._mutation import owned_copy


@implements(np.where)
def _where(condition, x=None, y=None):
    if x is None and y is None:
        return np.nonzero(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    condition, x, y = (operand(v) if isinstance(v, list | tuple) else v  # array_like
                       for v in (condition, x, y))
    return ops.where(condition, x, y)


@implements(np.clip)
def _clip(a, a_min=np._NoValue, a_max=np._NoValue, out=None, *, min=np._NoValue,
          max=np._NoValue, where=True, casting="same_kind", dtype=None, order="K", subok=True):
    lo, hi = clip_bounds(a_min, a_max, min, max)
    if dtype is not None:  # NumPy's ufunc keywords: compute in dtype
        a = astype(a, dtype)
    elif aval_of(a).weak:  # np.clip makes an array of a Python scalar: clip(0.5, x32, ...) is
        a = ops.astype(a, dtype=aval_of(a).dtype.name)  # float64, as the clip op's impl is
    result = (ops.positive(a) if hi is None else ops.minimum(a, hi)) if lo is None else \
        ops.maximum(a, lo) if hi is None else ops.clip(a, lo, hi)
    if where is not True:  # entries where= leaves out keep out's values (a's without out=)
        result = ops.where(where, result, a if out is None else out)
    if out is None:
        return result
    from ._ufuncs import write_out  # which imports this package's modules

    return write_out(out if isinstance(out, tuple) else (out,), result, casting, "numpy.clip")


@implements(np.round, np.around)
def _round(a, decimals=0, out=None):
    return ops.round(a, decimals=operator.index(decimals))  # NumPy refuses 1.5, never truncates


@implements(np.real)
def _real(val):
    return ops.real(val) if aval_of(val).dtype.kind == "c" else val


@implements(np.imag)
def _imag(val):
    return ops.imag(val) if aval_of(val).dtype.kind == "c" else ops.zeros_like(val)


@implements(np.angle)
def _angle(z, deg=False):
    out = ops.angle(z)
    return ops.rad2deg(out) if deg else out


@implements(np.copy)
def _copy(a, order="K", subok=False):
    check_order(order, "numpy.copy")
    return owned_copy(a)

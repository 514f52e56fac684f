"""Creation operations. They take a reference operand only to pick the provider (and device)
and the trace; their values never depend on its data, so their derivative is zero."""

from __future__ import annotations

import numpy as np

from ..core import Op
from ..dtypes import Aval, aval_of


def _like_abstract(x, *, shape=None, dtype=None, **_):
    return Aval(x.shape if shape is None else tuple(shape),
                x.dtype if dtype is None else np.dtype(dtype), False, x.device)


def _dtype(xp, x, dtype):
    if dtype is None:  # a Python scalar operand (a weak input) has its default dtype, as in NumPy
        return x.dtype if hasattr(x, "dtype") else aval_of(x).dtype
    return np.dtype(dtype) if xp is np else getattr(xp, dtype)


def _full_like_impl(xp, x, *, fill_value, shape=None, dtype=None):
    shape = tuple(getattr(x, "shape", ())) if shape is None else shape
    if xp is np:
        return np.full(shape, fill_value, dtype=_dtype(xp, x, dtype))
    return xp.full(shape, fill_value, dtype=_dtype(xp, x, dtype), device=x.device)


full_like = Op("full_like",
               attrs={"fill_value": "scalar", "shape": "shape_or_none?", "dtype": "dtype_or_none?"},
               abstract=_like_abstract, impl=_full_like_impl, nondiff=True)


def zeros_like(x, shape=None, dtype=None):
    """Zeros shaped like ``x`` (or ``shape``), as a constant of ``x``'s trace."""
    return full_like(x, fill_value=0, shape=shape, dtype=dtype)


def _iota_like_abstract(x, *, shape, axis):
    return Aval(tuple(shape), np.dtype(np.int64), False, x.device)


def _iota_like_impl(xp, x, *, shape, axis):
    n = shape[axis]
    view = [1] * len(shape)
    view[axis] = n
    if xp is np:
        return np.broadcast_to(np.arange(n).reshape(view), shape)
    return xp.broadcast_to(xp.reshape(xp.arange(n, device=x.device), tuple(view)), shape)


iota_like = Op("iota_like", attrs={"shape": "shape", "axis": "int64"}, abstract=_iota_like_abstract,
               impl=_iota_like_impl, nondiff=True)

__all__ = ["full_like", "zeros_like", "iota_like"]

"""Array constructors that keep traced values traced (``ad.array``, ``np.array(..., like=x)``)."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of
from ._functions import check_order, implements, lift
from ._mutation import array_result

__all__ = ["array", "asarray", "asanyarray"]


def _contains_tracer(obj) -> bool:
    if isinstance(obj, Tracer):
        return True
    if isinstance(obj, list | tuple):
        return any(_contains_tracer(o) for o in obj)
    return False


def _build(obj, dtype):
    """Stack a nested list that holds tracers into one traced array."""
    if isinstance(obj, list | tuple):
        parts = [_build(o, dtype) for o in obj]
        if not parts:
            return np.asarray([], dtype=dtype)
        dt = dtype if dtype is not None else np.result_type(
            *[aval_of(p).dtype if hasattr(p, "shape") else p for p in parts])
        parts = [p if hasattr(p, "shape") else np.asarray(p, dtype=dt) for p in parts]
        parts = [ops.astype(p, dtype=np.dtype(dt).name) if aval_of(p).dtype != dt else p
                 for p in parts]
        return ops.concat(*(ops.expand_dims(p, axes=(0,)) for p in parts), axis=0)
    if isinstance(obj, Tracer):
        aval = aval_of(obj)  # a traced Python scalar (weak) becomes a NumPy array, as eagerly
        if aval.weak or dtype is not None and aval.dtype != np.dtype(dtype):
            return ops.astype(obj, dtype=np.dtype(aval.dtype if dtype is None else dtype).name)
        return obj
    return np.asarray(obj, dtype=dtype)


def array(obj, dtype=None, *, copy: bool = True, order: str = "K", subok: bool = False,
          ndmin: int = 0):
    """Build an array from tracers and nested lists of tracers without detaching them.

    Like ``np.array``: a copy unless ``copy=False``, at least ``ndmin`` dimensions (ones
    prepended). ``order`` is validated as NumPy does (``'Z'`` raises ``ValueError``) and
    otherwise has no meaning for traced values, nor has ``subok``.

    Example:
        >>> import advect as ad, numpy as np
        >>> ad.grad(lambda x: ad.array([x[1], x[0] * 3]).sum())(np.array([1.0, 2.0]))
        array([3., 1.])
    """
    if not _contains_tracer(obj):
        return np.array(obj, dtype=dtype, copy=copy, order=order, subok=subok, ndmin=ndmin)
    check_order(order, "advect.array")
    out = _build(obj, dtype)
    if copy and out is obj:
        out = out._clone()
    shape = tuple(aval_of(out).shape)
    if len(shape) < ndmin:
        out = ops.reshape(out, shape=(1,) * (ndmin - len(shape)) + shape)
    return out if shape else array_result(out, (obj,))  # a 0-d ndarray, as np.array gives


def asarray(obj, dtype=None, order: str | None = None, *, device=None,
            copy: bool | None = None):
    """Like ``np.asarray``, keeping tracers traced (no copy unless ``copy=True``).

    Example:
        >>> import advect as ad, numpy as np
        >>> ad.grad(lambda x: ad.asarray([x[0], x[0] * x[1]]).sum())(np.array([2.0, 3.0]))
        array([4., 2.])
    """
    if not _contains_tracer(obj):
        return np.asarray(obj, dtype=dtype, order=order, device=device, copy=copy)
    check_order(order, "advect.asarray")
    out = _build(obj, dtype)
    out = out._clone() if copy and out is obj else out
    return out if aval_of(out).shape else array_result(out, (obj,))  # a 0-d ndarray


asanyarray = asarray


# reached only through like=x: the result is a writable value of x's trace
@implements(np.array, like=True)
def _array_like(obj, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    check_order(order, "numpy.array")
    out = array(obj, dtype, copy=copy, ndmin=ndmin)
    return out if isinstance(out, Tracer) else lift(like, out)


@implements(np.asarray, np.asanyarray, like=True)
def _asarray_like(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    check_order(order, "numpy.asarray")
    out = asarray(a, dtype, copy=copy)
    return out if isinstance(out, Tracer) else lift(like, out)

"""Metadata queries, comparisons and printing for traced arrays.

Shape and dtype queries answer from the aval and add no graph node. Comparisons are
nondifferentiable ops; ``allclose`` and ``array_equal`` return a traced Python bool (``if``
reads it in dynamic transforms, ``np.where`` uses it while staging). Printing reads concrete
values and is dynamic-only.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of
from ..ops._rules import one_axis
from ._conversions import python_scalar
from ._functions import (
    _moveaxis,
    _ravel,
    _reshape,
    _shape,
    concrete,
    implements,
    operand,
    slice_along,
    take_axis,
)
from ._mutation import READ_ONLY, mark_view
from ._reductions import reduction

_WEAK = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _dtype_or_scalar(x):
    """What NumPy's dtype functions should see for ``x``: a weak traced scalar stays a Python
    scalar (NEP 50), other tracers become their dtype."""
    if isinstance(x, Tracer):
        aval = x.aval
        return _WEAK[aval.dtype.kind] if aval.weak else aval.dtype
    return x


@implements(np.shape, nondiff=True)
def _shape_query(a):
    return _shape(operand(a))


@implements(np.ndim, nondiff=True)
def _ndim_query(a):
    return len(_shape(operand(a)))


@implements(np.size, nondiff=True)
def _size_query(a, axis=None):
    shape = _shape(operand(a))
    if axis is None:
        return math.prod(shape)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return math.prod(shape[ax] for ax in axes)


@implements(np.result_type, nondiff=True)
def _result_type(*arrays_and_dtypes):
    return np.result_type(*map(_dtype_or_scalar, arrays_and_dtypes))


@implements(np.can_cast, nondiff=True)
def _can_cast(from_, to, casting="safe"):
    return np.can_cast(_dtype_or_scalar(from_), to, casting)


@implements(np.min_scalar_type, nondiff=True)
def _min_scalar_type(a):
    if _shape(a):
        return aval_of(a).dtype
    return np.min_scalar_type(concrete(a, "np.min_scalar_type of a 0-d value"))


@implements(np.common_type, nondiff=True)
def _common_type(*arrays):
    return np.common_type(*(np.empty(0, aval_of(operand(a)).dtype) for a in arrays))


@implements(np.may_share_memory, np.shares_memory, nondiff=True)
def _shares_memory(a, b, max_work=None):
    return a is b  # traced values are immutable; only the same wrapper aliases


@implements(np.iscomplexobj, nondiff=True)
def _iscomplexobj(x):
    return aval_of(operand(x)).dtype.kind == "c"


@implements(np.isrealobj, nondiff=True)
def _isrealobj(x):
    return aval_of(operand(x)).dtype.kind != "c"


@implements(np.iscomplex, nondiff=True)
def _iscomplex(x):
    x = operand(x)
    if aval_of(x).dtype.kind != "c":
        return ops.zeros_like(x, dtype="bool")
    return ops.not_equal(ops.imag(x), 0)


@implements(np.isreal, nondiff=True)
def _isreal(x):
    return ops.logical_not(_iscomplex(x))


@implements(np.isposinf, nondiff=True)
def _isposinf(x, out=None):
    x = operand(x)
    return ops.logical_and(ops.isinf(x), ops.logical_not(ops.signbit(x)))


@implements(np.isneginf, nondiff=True)
def _isneginf(x, out=None):
    x = operand(x)
    return ops.logical_and(ops.isinf(x), ops.signbit(x))


@implements(np.isclose, nondiff=True)
def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = operand(a), operand(b)
    if aval_of(b).dtype.kind not in "fc":  # NumPy compares with b as result_type(b, 1.0)
        b = ops.astype(b, dtype="float64")
    finite = ops.logical_and(ops.isfinite(a), ops.isfinite(b))
    near = ops.less_equal(ops.abs(ops.subtract(a, b)),
                          ops.add(atol, ops.multiply(rtol, ops.abs(b))))
    out = ops.where(finite, near, ops.equal(a, b))
    if equal_nan:
        out = ops.logical_or(out, ops.logical_and(ops.isnan(a), ops.isnan(b)))
    return out


def _all(x):
    """Whether every element is true, as the Python bool NumPy's ``allclose`` returns (weak)."""
    return python_scalar(reduction(ops.reduce_min, x, None, False))


@implements(np.allclose, nondiff=True)
def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _all(_isclose(a, b, rtol, atol, equal_nan))


@implements(np.array_equal, nondiff=True)
def _array_equal(a1, a2, equal_nan=False):
    a1, a2 = operand(a1), operand(a2)
    if _shape(a1) != _shape(a2):
        return False
    same = ops.equal(a1, a2)
    if equal_nan and aval_of(a1).dtype.kind in "fc":
        same = ops.logical_or(same, ops.logical_and(ops.isnan(a1), ops.isnan(a2)))
    return _all(same)


@implements(np.array_equiv, nondiff=True)
def _array_equiv(a1, a2):
    a1, a2 = operand(a1), operand(a2)
    try:
        np.broadcast_shapes(_shape(a1), _shape(a2))
    except ValueError:
        return False
    return _all(ops.equal(a1, a2))


# --- printing and bit packing (read concrete values) -----------------------------------------

def _printer(func):
    def show(a, *args, **kwargs):
        return func(concrete(a, f"numpy.{func.__name__} (printing reads the data)"), *args,
                    **kwargs)
    show.__name__ = f"_{func.__name__}"
    return show


for _func in (np.array2string, np.array_repr, np.array_str):
    implements(_func, dynamic_only=True, nondiff=True)(_printer(_func))


_BIT_WEIGHTS = {"big": np.array([128, 64, 32, 16, 8, 4, 2, 1], np.uint8),
                "little": np.array([1, 2, 4, 8, 16, 32, 64, 128], np.uint8)}


def _bit_axis(a, axis):
    a = operand(a)
    if axis is None:
        return _ravel(a), 0
    return a, one_axis(axis, len(_shape(a)))


@implements(np.packbits, nondiff=True)
def _packbits(a, axis=None, bitorder="big"):
    a, axis = _bit_axis(a, axis)
    if aval_of(a).dtype.kind not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    bits = _moveaxis(ops.astype(ops.not_equal(a, 0), dtype="uint8"), axis, -1)
    lead, n = _shape(bits)[:-1], _shape(bits)[-1]
    extra = -n % 8
    if extra:
        bits = ops.concat(bits, ops.zeros_like(bits, shape=lead + (extra,)), axis=len(lead))
    grouped = _reshape(bits, lead + ((n + extra) // 8, 8))
    packed = reduction(ops.reduce_sum, ops.multiply(grouped, _BIT_WEIGHTS[bitorder]), -1, False)
    return _moveaxis(ops.astype(packed, dtype="uint8"), -1, axis)


@implements(np.unpackbits, nondiff=True)
def _unpackbits(a, axis=None, count=None, bitorder="big"):
    a, axis = _bit_axis(a, axis)
    if aval_of(a).dtype != np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    a = _moveaxis(a, axis, -1)
    lead, n = _shape(a)[:-1], _shape(a)[-1]
    shifts = np.arange(7, -1, -1, dtype=np.uint8) if bitorder == "big" else np.arange(
        8, dtype=np.uint8)
    bits = ops.bitwise_and(ops.bitwise_right_shift(ops.expand_dims(a, axes=(len(lead) + 1,)),
                                                   shifts), np.uint8(1))
    bits = _reshape(bits, lead + (8 * n,))
    if count is not None:
        keep = count if count >= 0 else max(8 * n + count, 0)
        if keep <= 8 * n:
            bits = slice_along(bits, 0, keep, len(lead))
        else:
            bits = ops.concat(bits, ops.zeros_like(bits, shape=lead + (keep - 8 * n,)),
                              axis=len(lead))
    return _moveaxis(bits, -1, axis)


@implements(np.lib.stride_tricks.sliding_window_view)
def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    if writeable:
        raise ValueError("sliding_window_view(writeable=True) is not supported on traced "
                         "arrays; windows are read-only views")
    x = operand(x)
    positions = np.arange(math.prod(_shape(x))).reshape(_shape(x))
    windows = np.lib.stride_tricks.sliding_window_view(positions, window_shape, axis)
    out = take_axis(_ravel(x), np.ascontiguousarray(windows), 0)
    if isinstance(x, Tracer):  # NumPy's read-only view: stale after a write to x
        mark_view(x, out, READ_ONLY)
    return out


# --- saving (writes the current values) ------------------------------------------------------

def _saved(x, what):
    return concrete(x, what) if isinstance(x, Tracer) else x


@implements(np.save, dynamic_only=True, nondiff=True)
def _save(file, arr, allow_pickle=True, **kwargs):
    np.save(file, _saved(arr, "np.save (it writes the data)"), allow_pickle=allow_pickle,
            **kwargs)


@implements(np.savetxt, dynamic_only=True, nondiff=True)
def _savetxt(fname, X, *args, **kwargs):
    np.savetxt(fname, _saved(X, "np.savetxt (it writes the data)"), *args, **kwargs)


def _archive(func):
    def save(file, *args, **kwds):
        func(file, *(_saved(a, f"numpy.{func.__name__} (it writes the data)") for a in args),
             **{k: _saved(v, f"numpy.{func.__name__} (it writes the data)")
                for k, v in kwds.items()})
    save.__name__ = f"_{func.__name__}"
    return save


for _func in (np.savez, np.savez_compressed):
    implements(_func, dynamic_only=True, nondiff=True)(_archive(_func))

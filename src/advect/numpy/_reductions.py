"""NumPy's reductions on traced arrays: sum, prod, max, min, mean, var, std, argmax, argmin,
cumsum, with NumPy's ``axis``, ``dtype``, ``keepdims``, ``initial`` and ``where``.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of
from ..errors import bounded
from ..ops._rules import normalize_axes, one_axis, reduce_axes, scalar_axis
from ..providers import numpy_dtype, on_provider_of
from ._functions import (
    _ravel,
    _shape,
    astype,
    implements,
    operand,
    reduction_axis,
)

__all__ = ["reduction", "keepdims_flag", "where_mask", "count_where", "mean_counting",
           "var_counting", "ddof_of"]


_FILL = {"reduce_sum": 0, "reduce_prod": 1}


def keepdims_flag(keepdims) -> bool:
    """NumPy's reading of ``keepdims=``: a bool or an integer, else its ``TypeError``."""
    if isinstance(keepdims, bool | np.bool_):
        return bool(keepdims)
    try:
        return bool(operator.index(keepdims))
    except TypeError:
        raise TypeError(f"keepdims= must be True or False, not {bounded(keepdims)}") from None


def where_mask(where):
    """A reduction's ``where=`` as NumPy reads it: an array mask must be boolean (NumPy casts it
    safely); Python scalars and lists are read as booleans."""
    if isinstance(where, list | tuple):
        return np.asarray(where, dtype=bool)
    if isinstance(where, np.generic):  # a NumPy scalar is read as a boolean, as a Python one
        return bool(where)
    dtype = getattr(where, "dtype", None)
    if dtype is not None and numpy_dtype(dtype) != np.bool_:
        raise TypeError(f"Cannot cast array data from {numpy_dtype(dtype)!r} to dtype('bool') "
                        "according to the rule 'safe': where= takes a boolean mask (compare, "
                        "as in where=w != 0)")
    return where


def reduction(op, a, axis, keepdims, dtype=None, where=True, initial=None):
    keepdims = keepdims_flag(keepdims)
    axis = reduction_axis(axis)
    if initial is not None and (initial.shape if isinstance(initial, Tracer)
                                else np.shape(initial)):  # NumPy's ValueError, named
        raise ValueError("setting an array element with a sequence: initial= must be a scalar, "
                         f"not a value of shape {_shape(operand(initial))}")
    if dtype is not None:
        a = astype(a, dtype)
    identity = _FILL.get(op.name)
    if initial is not None and identity is None:  # max, min: the result has a's dtype
        initial = reduction_initial(initial, aval_of(a).dtype)
    masked = None  # a mask for reduce_sum_where: NumPy's masked sum adds in its own order
    if where is not True:
        where = where_mask(where)
        fill = initial if identity is None else identity
        if fill is None:
            raise ValueError(f"{op.name} has no identity, so a where= mask needs initial=")
        if op is ops.reduce_sum and hasattr(where, "shape"):
            masked = on_provider_of(a, where)
        else:
            a = ops.where(where, a, fill)
    axes = reduce_axes(axis, len(_shape(a)))
    if initial is not None and identity is None:  # a sum over nothing is 0, plus initial
        a = stand_in_for_empty(a, axes, initial)
    if (op is ops.reduce_sum or op is ops.reduce_prod) and initial is not None:
        # NumPy's loop starts at initial
        initial = reduction_initial(initial, op.abstract(
            aval_of(a), axes=axes, keepdims=keepdims).dtype)
        out = ops.reduce_prod_initial(a, initial, axes=axes, keepdims=keepdims) \
            if op is ops.reduce_prod else \
            ops.reduce_sum_initial(a, initial, axes=axes, keepdims=keepdims) if masked is None \
            else ops.reduce_sum_where_initial(a, masked, initial, axes=axes, keepdims=keepdims)
        return out if dtype is None else astype(out, dtype)
    out = op(a, axes=axes, keepdims=keepdims) if masked is None else \
        ops.reduce_sum_where(a, masked, axes=axes, keepdims=keepdims)
    if initial is not None:  # max and min: exact in any order
        combine = ops.maximum if op is ops.reduce_max else ops.minimum
        out = combine(out, reduction_initial(initial, aval_of(out).dtype))
    return out if dtype is None else astype(out, dtype)  # the provider sums int16 in int64


def reduction_initial(initial, dtype):
    """``initial=`` as NumPy reads it: a value of the reduction's result ``dtype``, so a
    float64 initial leaves a float32 sum float32 and ``-1.5`` adds ``-1`` to an integer sum
    (NumPy's ``TypeError`` for a complex initial of a real sum, ``OverflowError`` for ``-1``
    of an unsigned one)."""
    if isinstance(initial, Tracer):
        return initial if aval_of(initial).dtype == dtype else ops.astype(initial,
                                                                          dtype=dtype.name)
    return np.asarray(initial, dtype=dtype).item()  # weak: any provider's array keeps dtype


def stand_in_for_empty(a, axes, initial):
    """``a``, or where the reduced axes hold no element one ``initial`` along each of them: a
    reduction with ``initial=`` over nothing is ``initial`` (max and min have no identity)."""
    shape = _shape(a)
    if isinstance(initial, Tracer) or not any(shape[d] == 0 for d in axes):
        return a
    return ops.full_like(a, fill_value=initial,
                         shape=tuple(1 if d in axes else n for d, n in enumerate(shape)))


_ALL_AXES = [tuple(range(n)) for n in range(64)]


@implements(np.sum)
def _sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if (axis is None and dtype is None and out is None and initial is None and where is True
            and keepdims is False and isinstance(a, Tracer)):  # np.sum(x), the common call
        return ops.reduce_sum(a, axes=_ALL_AXES[len(a.shape)], keepdims=False)
    return reduction(ops.reduce_sum, a, axis, keepdims, dtype, where, initial)


@implements(np.prod)
def _prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduction(ops.reduce_prod, a, axis, keepdims, dtype, where, initial)


@implements(np.max, np.amax)
def _max(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return reduction(ops.reduce_max, a, axis, keepdims, None, where, initial)


@implements(np.min, np.amin)
def _min(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return reduction(ops.reduce_min, a, axis, keepdims, None, where, initial)


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def count_where(a, axes, keepdims, where=True, dtype="int64"):
    """How many elements each reduction over ``axes`` sees: a Python int, or an array of
    ``dtype`` when masked (the dtype of the sums it divides, so float32 stays float32)."""
    if where is True:
        return _count(_shape(a), axes)
    where = where_mask(where)
    mask = ops.broadcast_to(where, shape=_shape(a)) if _shape(where) != _shape(a) else where
    return ops.reduce_sum(ops.astype(mask, dtype=np.dtype(dtype).name), axes=axes,
                          keepdims=bool(keepdims))


# dtypes whose mean is their sum divided by the count in the same dtype (NumPy sums float16 in
# float32 and divides a complex64 sum in complex128)
_PLAIN_MEAN = frozenset(map(np.dtype, (np.float32, np.float64, np.complex128)))


@implements(np.mean)
def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    if (axis is None and dtype is None and out is None and where is True and keepdims is False
            and isinstance(a, Tracer) and aval_of(a).dtype in _PLAIN_MEAN):  # np.mean(x)
        shape = a.shape
        total = ops.reduce_sum(a, axes=_ALL_AXES[len(shape)], keepdims=False)
        return ops.divide(total, math.prod(shape))
    return mean_counting(a, axis, dtype, keepdims, where)


def mean_counting(a, axis, dtype, keepdims, where, counted=None):
    """np.mean(a, axis, dtype, keepdims=, where=), counting the entries of the mask ``counted``
    where that differs from those summed (the nan-functions: NumPy sums a NaN-zeroed array with
    the caller's where= and counts the entries that are not NaN)."""
    if dtype is None and aval_of(a).dtype == np.float16:  # NumPy sums float16 in float32
        return astype(mean_counting(a, axis, np.float32, keepdims, where, counted), np.float16)
    if dtype is None and aval_of(a).dtype.kind not in "fc":
        dtype = np.float64
    axes = normalize_axes(reduction_axis(axis), len(_shape(a)))
    total = reduction(ops.reduce_sum, a, axes, keepdims, dtype, where)
    count = count_where(a, axes, keepdims, where if counted is None else counted, _real_of(total))
    if aval_of(total).dtype == np.complex64:  # NumPy divides by an intp count: in complex128
        return astype(ops.divide(astype(total, np.complex128), count), np.complex64)
    return _cast_back(ops.divide(total, count), dtype)


def _cast_back(out, dtype):
    """A mean's or variance's quotient in an integer or bool ``dtype=``: cast back, as NumPy's."""
    return astype(out, dtype) if dtype is not None and numpy_dtype(dtype).kind in "iub" else out


@implements(np.var)
def _var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
         correction=None):
    return var_counting(a, axis, dtype, ddof_of(ddof, correction), keepdims, where, mean)


def ddof_of(ddof, correction):
    """The degrees of freedom np.var takes away, given as ``ddof`` or as ``correction``."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var_counting(a, axis, dtype, ddof, keepdims, where, mean, counted=None):
    """np.var(a, axis, dtype, ddof=, keepdims=, where=, mean=), counting the entries of
    ``counted`` as :func:`mean_counting` does; the other entries' deviations are zeroed, as
    NumPy's nanvar does."""
    if dtype is None and aval_of(a).dtype.kind not in "fc":
        dtype = np.float64
    axes = normalize_axes(reduction_axis(axis), len(_shape(a)))
    # NumPy's var takes a float16 mean in float16, where np.mean rounds a float32 mean
    mean_dtype = np.float16 if dtype is None and aval_of(a).dtype == np.float16 else dtype
    mu = mean_counting(a, axes, mean_dtype, True, where, counted) if mean is None else mean
    dev = ops.subtract(a, mu)  # as NumPy: the input promoted with the mean, not cast to dtype
    if counted is not None:
        dev = ops.where(counted, dev, 0)
    # NumPy squares real inputs' deviations (complex ones for a complex dtype=) and takes
    # |dev|**2 of complex inputs: re**2 + im**2 in np.var, dev * conj(dev) in np.nanvar
    complex_input = aval_of(a).dtype.kind == "c" or (aval_of(a).dtype.kind == "b"
                                                     and aval_of(dev).dtype.kind == "c")
    if not complex_input:
        sq = ops.square(dev)
    elif counted is None:
        sq = ops.add(ops.square(ops.real(dev)), ops.square(ops.imag(dev)))
    else:
        sq = ops.real(ops.multiply(dev, ops.conj(dev)))
    total = reduction(ops.reduce_sum, sq, axes, keepdims, dtype, where)
    count = count_where(a, axes, keepdims, where if counted is None else counted,
                        _real_of(total))
    if isinstance(count, int):  # Python arithmetic keeps the divisor weak
        out = ops.divide(total, max(count - ddof, 0))
    else:
        out = ops.divide(total, ops.maximum(ops.subtract(count, ddof), 0))
    return _cast_back(out, dtype)


def _real_of(x):
    dtype = aval_of(x).dtype
    return np.empty(0, dtype).real.dtype if dtype.kind in "fc" else np.dtype(np.float64)


@implements(np.std)
def _std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
         correction=None):
    var = _var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
               correction=correction)
    if dtype is None or numpy_dtype(dtype).kind not in "iub":
        return ops.sqrt(var)
    if _shape(var):  # NumPy takes the root in place, which an integer array cannot hold
        raise TypeError(f"Cannot cast ufunc 'sqrt' output to dtype('{numpy_dtype(dtype)}') "
                        "with casting rule 'same_kind': std with an integer or bool dtype= "
                        "works only for a scalar result")
    return astype(ops.sqrt(var), dtype)  # a scalar result is cast back, as NumPy's


def _arg_reduce(op, a, axis, keepdims):
    if axis is None or scalar_axis(axis, len(_shape(a))):  # a 0-d array reads as 1-d
        out = op(_ravel(a), axis=0, keepdims=False)
        return ops.reshape(out, shape=(1,) * len(_shape(a))) if keepdims else out
    return op(a, axis=one_axis(axis, len(_shape(a))), keepdims=bool(keepdims))


@implements(np.argmax, nondiff=True)
def _argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(ops.argmax, a, axis, keepdims)


@implements(np.argmin, nondiff=True)
def _argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(ops.argmin, a, axis, keepdims)


@implements(np.cumsum)
def _cumsum(a, axis=None, dtype=None, out=None):
    if dtype is not None:
        a = astype(a, dtype)
    if axis is None or not _shape(a):  # NumPy scans a 0-d array as a 1-element 1-d one
        a = ops.reshape(a, shape=(math.prod(_shape(a)),))
        axis = 0 if axis is None else axis
    out = ops.cumulative_sum(a, axis=one_axis(axis, len(_shape(a))))
    return out if dtype is None else astype(out, dtype)  # int16 stays int16, as in reduction

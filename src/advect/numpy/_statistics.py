"""Statistics, order statistics, NaN-ignoring reductions, scans, differences and histograms on
traced arrays, written with reduction, sorting and shape ops."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from .._compat import present
from ..core import Tracer
from ..dtypes import aval_of
from ..ops._rules import normalize_axes, one_axis, reduce_axes
from ..providers import on_provider_of
from ._functions import (
    _concatenate,
    _ndim,
    _ravel,
    _reshape,
    _shape,
    _transpose,
    astype,
    flat_axis,
    implements,
    known_value,
    numpy_scalar,
    operand,
    slice_along,
)
from ._mutation import mark_array
from ._reductions import (
    _arg_reduce,
    _cumsum,
    _mean,
    _var,
    count_where,
    ddof_of,
    mean_counting,
    reduction,
    var_counting,
    where_mask,
)
from ._shaping import _atleast_2d


def _kind(x):
    return aval_of(x).dtype.kind


# --- scans and differences -------------------------------------------------------------------

@implements(np.cumprod)
def _cumprod(a, axis=None, dtype=None, out=None):
    a = operand(a)
    if not _ndim(a):  # NumPy scans a 0-d array as a 1-element 1-d one
        a = ops.reshape(a, shape=(1,))
    a, axis = flat_axis(a, axis)
    if dtype is not None:
        a = astype(a, dtype)
    elif _kind(a) in "biu" and aval_of(a).dtype.itemsize < 8:
        a = astype(a, np.uint64 if _kind(a) == "u" else np.int64)
    out = ops.cumulative_prod(a, axis=axis)
    return out if dtype is None else astype(out, dtype)  # int16 stays int16, as in reduction


def _cumulative(scan, identity, x, axis, dtype, include_initial, name):
    x = operand(x)
    if axis is None:
        if _ndim(x) > 1:
            raise ValueError(f"numpy.{name}: axis= is required for arrays of more than one "
                             "dimension")
        axis = 0
    out = scan(x, axis, dtype)
    if include_initial:
        axis = one_axis(axis, _ndim(out))
        shape = _shape(out)[:axis] + (1,) + _shape(out)[axis + 1:]
        out = ops.concat(ops.full_like(out, fill_value=identity, shape=shape), out, axis=axis)
    return out


@implements(*present(np, "cumulative_sum"))  # NumPy 2.1+
def _cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative(lambda a, ax, dt: _cumsum(a, ax, dt), 0, x, axis, dtype, include_initial,
                       "cumulative_sum")


@implements(*present(np, "cumulative_prod"))  # NumPy 2.1+
def _cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative(lambda a, ax, dt: _cumprod(a, ax, dt), 1, x, axis, dtype,
                       include_initial, "cumulative_prod")


@implements(np.nancumsum)
def _nancumsum(a, axis=None, dtype=None, out=None):
    a = operand(a)
    return _cumsum(ops.where(ops.isnan(a), 0, a) if _kind(a) in "fc" else a, axis, dtype, out)


@implements(np.nancumprod)
def _nancumprod(a, axis=None, dtype=None, out=None):
    a = operand(a)
    return _cumprod(ops.where(ops.isnan(a), 1, a) if _kind(a) in "fc" else a, axis, dtype, out)


def _edge_values(value, a, axis):
    value = operand(value)
    if not isinstance(value, Tracer):  # a constant edge joins a's provider (array-api-strict)
        value = on_provider_of(a, value)
    shape = _shape(a)[:axis] + (1,) + _shape(a)[axis + 1:]
    if _ndim(value) == 0:
        return ops.broadcast_to(value, shape=shape)
    return value


@implements(np.diff)
def _diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    a = operand(a)
    axis = one_axis(axis, _ndim(a))
    parts = [a]
    if prepend is not np._NoValue:
        parts.insert(0, _edge_values(prepend, a, axis))
    if append is not np._NoValue:
        parts.append(_edge_values(append, a, axis))
    if len(parts) > 1:
        a = _concatenate(parts, axis)
    for _ in range(n):
        m = _shape(a)[axis]
        hi, lo = slice_along(a, 1, m, axis), slice_along(a, 0, max(m - 1, 0), axis)
        a = ops.not_equal(hi, lo) if _kind(a) == "b" else ops.subtract(hi, lo)
    return a


_BOOL_SUBTRACT = ("numpy boolean subtract, the `-` operator, is not supported, use the "
                  "bitwise_xor, the `^` operator, or the logical_xor function instead")


@implements(np.ediff1d)
def _ediff1d(ary, to_end=None, to_begin=None):
    ary = operand(ary)
    if _kind(ary) == "b":  # NumPy subtracts, where diff compares
        raise TypeError(_BOOL_SUBTRACT)
    out = _diff(_ravel(ary))
    parts = [out]
    if to_begin is not None:
        parts.insert(0, _edge_cast(to_begin, out, "to_begin"))
    if to_end is not None:
        parts.append(_edge_cast(to_end, out, "to_end"))
    return _concatenate(parts, 0) if len(parts) > 1 else out


def _edge_cast(edge, out, name):
    """``edge`` flattened in ``out``'s dtype; NumPy refuses a cast outside ``same_kind``
    (a float ``to_begin`` for integer data)."""
    edge = _ravel(operand(edge))
    dtype = aval_of(out).dtype
    if not np.can_cast(aval_of(edge).dtype, dtype, casting="same_kind"):
        raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                        "`same_kind` rule.")
    return astype(edge, dtype)


def _along(v, axis, ndim):
    """A 1-D ``v`` shaped to broadcast along ``axis`` of an ``ndim``-D array."""
    if not isinstance(v, Tracer | np.ndarray) or _ndim(v) == 0:
        return v
    shape = [1] * ndim
    shape[axis] = _shape(v)[0]
    return _reshape(v, tuple(shape))


def _uniform_gradient(at, n, h, axis, edge_order):
    twice = 2.0 * h if isinstance(h, int | float) else ops.multiply(h, 2.0)
    interior = ops.divide(ops.subtract(at(2, n), at(0, n - 2)), twice)
    if edge_order == 1:
        first = ops.divide(ops.subtract(at(1, 2), at(0, 1)), h)
        last = ops.divide(ops.subtract(at(n - 1, n), at(n - 2, n - 1)), h)
    else:
        first = ops.divide(ops.add(ops.add(ops.multiply(at(0, 1), -1.5),
                                           ops.multiply(at(1, 2), 2.0)),
                                   ops.multiply(at(2, 3), -0.5)), h)
        last = ops.divide(ops.add(ops.add(ops.multiply(at(n - 3, n - 2), 0.5),
                                          ops.multiply(at(n - 2, n - 1), -2.0)),
                                  ops.multiply(at(n - 1, n), 1.5)), h)
    return ops.concat(first, interior, last, axis=axis)


def _gradient_axis(f, h, axis, edge_order):
    n = _shape(f)[axis]
    if n < edge_order + 1:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least "
                         "(edge_order + 1) elements are required.")
    nd = _ndim(f)

    def at(lo, hi):
        return slice_along(f, lo, hi, axis)
    if not isinstance(h, Tracer | np.ndarray) or _ndim(h) == 0:  # uniform spacing
        return _uniform_gradient(at, n, h, axis, edge_order)
    if _ndim(h) != 1 or _shape(h)[0] != n:
        raise ValueError("when 1d, distances must match the length of the corresponding "
                         "dimension")
    dx = _diff(h)
    d1, d2 = slice_along(dx, 0, n - 2, 0), slice_along(dx, 1, n - 1, 0)
    dx_first, dx_last = slice_along(dx, 0, 1, 0), slice_along(dx, n - 2, n - 1, 0)
    dxs = (dx_first, slice_along(dx, 1, 2, 0) if n > 2 else None,
           slice_along(dx, n - 3, n - 2, 0) if n > 2 else None, dx_last)
    d1, d2 = _along(d1, axis, nd), _along(d2, axis, nd)
    s = ops.add(d1, d2)
    a = ops.negative(ops.divide(d2, ops.multiply(d1, s)))
    b = ops.divide(ops.subtract(d2, d1), ops.multiply(d1, d2))
    c = ops.divide(d1, ops.multiply(d2, s))
    interior = ops.add(ops.add(ops.multiply(a, at(0, n - 2)), ops.multiply(b, at(1, n - 1))),
                       ops.multiply(c, at(2, n)))
    if edge_order == 1:
        first = ops.divide(ops.subtract(at(1, 2), at(0, 1)), _along(dx_first, axis, nd))
        last = ops.divide(ops.subtract(at(n - 1, n), at(n - 2, n - 1)), _along(dx_last, axis, nd))
    else:
        p, q, r, t = (_along(v, axis, nd) for v in dxs)
        pq = ops.add(p, q)
        first = ops.add(ops.add(
            ops.multiply(at(0, 1), ops.negative(ops.divide(ops.add(ops.multiply(p, 2), q),
                                                           ops.multiply(p, pq)))),
            ops.multiply(at(1, 2), ops.divide(pq, ops.multiply(p, q)))),
            ops.multiply(at(2, 3), ops.negative(ops.divide(p, ops.multiply(q, pq)))))
        rt = ops.add(r, t)
        last = ops.add(ops.add(
            ops.multiply(at(n - 3, n - 2), ops.divide(t, ops.multiply(r, rt))),
            ops.multiply(at(n - 2, n - 1), ops.negative(ops.divide(rt, ops.multiply(r, t))))),
            ops.multiply(at(n - 1, n), ops.divide(ops.add(ops.multiply(t, 2), r),
                                                  ops.multiply(t, rt))))
    return ops.concat(first, interior, last, axis=axis)


@implements(np.gradient)
def _gradient(f, *varargs, axis=None, edge_order=1):
    f = operand(f)
    if _kind(f) == "b":  # NumPy converts integers to float64, but subtracts bools
        raise TypeError(_BOOL_SUBTRACT)
    if _kind(f) not in "fc":
        f = astype(f, np.float64)
    axes = normalize_axes(axis, _ndim(f)) if axis is not None else tuple(range(_ndim(f)))
    if isinstance(axis, int | np.integer):
        axes = (one_axis(axis, _ndim(f)),)
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    if not varargs:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and _ndim(operand(varargs[0])) == 0:
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = [v if isinstance(v, int | float) else operand(v) for v in varargs]
    else:
        raise TypeError("invalid number of arguments")
    dtype = aval_of(f).dtype  # NumPy writes each derivative into an array like f
    out = tuple(astype(_gradient_axis(f, h, ax, edge_order), dtype)
                for ax, h in zip(axes, spacing))
    return out[0] if len(out) == 1 else out


@implements(np.trapezoid)
def _trapezoid(y, x=None, dx=1.0, axis=-1):
    y = operand(y)
    axis = one_axis(axis, _ndim(y))
    if x is None:
        d = dx
    else:
        x = operand(x)
        d = _diff(x, axis=-1 if _ndim(x) == 1 else axis)
        if _ndim(x) == 1:
            d = _along(d, axis, _ndim(y))
    n = _shape(y)[axis]
    mid = ops.add(slice_along(y, 1, n, axis), slice_along(y, 0, max(n - 1, 0), axis))
    return reduction(ops.reduce_sum, ops.divide(ops.multiply(d, mid), 2.0), axis, False)


# --- means, spreads and logic ----------------------------------------------------------------

@implements(np.average)
def _average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    a = operand(a)
    axes = normalize_axes(axis, _ndim(a))
    if weights is None:
        avg = _mean(a, axes, keepdims=keepdims)
        scale = ops.full_like(avg, fill_value=math.prod(_shape(a)[i] for i in axes))
    else:
        w = operand(weights)
        if _shape(w) != _shape(a):
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            w = _weights_along(w, a, axis)
        # NumPy sums the weights and their products in the result dtype (a complex sum of real
        # weights divides as complex numbers do)
        dtype = np.result_type(aval_of(a).dtype, aval_of(w).dtype,
                               *(() if _kind(a) in "fc" else (np.float64,)))
        if _kind(a) not in "fc":
            a = astype(a, np.float64)
        full = ops.broadcast_to(w, shape=_shape(a)) if _shape(w) != _shape(a) else w
        scale = reduction(ops.reduce_sum, full, axes, keepdims, dtype)
        known = known_value(scale)
        if known is not None and np.any(known == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = ops.divide(reduction(ops.reduce_sum, ops.multiply(a, w), axes, keepdims), scale)
    if returned:
        return avg, numpy_scalar(ops.broadcast_to(scale, shape=_shape(avg)) if _shape(
            scale) != _shape(avg) else scale)
    return avg


def _weights_along(w, a, axis):
    """np.average's weights laid along ``axis`` (an int or a tuple, in the order given) of
    ``a``, broadcastable to it."""
    order = tuple(one_axis(d, _ndim(a)) for d in (axis if isinstance(axis, tuple) else (axis,)))
    if _shape(w) != tuple(_shape(a)[d] for d in order):
        raise ValueError("Shape of weights must be consistent with shape of a along specified "
                         "axis.")
    if list(order) != sorted(order):
        w = _transpose(w, [int(i) for i in np.argsort(order)])
    return _reshape(w, tuple(n if d in order else 1 for d, n in enumerate(_shape(a))))


@implements(np.ptp)
def _ptp(a, axis=None, out=None, keepdims=False):
    a = operand(a)
    return ops.subtract(reduction(ops.reduce_max, a, axis, keepdims),
                        reduction(ops.reduce_min, a, axis, keepdims))


def _logical(op, a, axis, keepdims, where, fill):
    a = operand(a)
    a = a if _kind(a) == "b" else ops.not_equal(a, 0)
    if where is not True:
        a = ops.where(where_mask(where), a, fill)
    axes = reduce_axes(axis, _ndim(a))
    empty = any(_shape(a)[d] == 0 for d in axes)  # all() of nothing is True, any() False
    return reduction(op, a, axis, keepdims, initial=fill if empty else None)


@implements(np.all, nondiff=True)
def _all(a, axis=None, out=None, keepdims=False, *, where=True):
    return _logical(ops.reduce_min, a, axis, keepdims, where, True)


@implements(np.any, nondiff=True)
def _any(a, axis=None, out=None, keepdims=False, *, where=True):
    return _logical(ops.reduce_max, a, axis, keepdims, where, False)


@implements(np.count_nonzero, nondiff=True)
def _count_nonzero(a, axis=None, *, keepdims=False):
    a = operand(a)
    return reduction(ops.reduce_sum, astype(ops.not_equal(a, 0), np.int64), axis, keepdims)


@implements(np.cov)
def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
         dtype=None):
    x = _atleast_2d(operand(m))
    if not rowvar and _shape(x)[0] != 1:
        x = _transpose(x)
    if y is not None:
        y = _atleast_2d(operand(y))
        if not rowvar and _shape(y)[0] != 1:
            y = _transpose(y)
        x = _concatenate([x, y], 0)
    dtype = dtype or np.result_type(aval_of(x).dtype, np.float64)
    x = astype(x, dtype)
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    if ddof is None:
        ddof = 0 if bias else 1
    w = None
    n = _shape(x)[1]
    for name, weight in (("fweights", fweights), ("aweights", aweights)):
        if weight is not None:
            weight = _checked_weights(name, operand(weight), n)
            w = weight if w is None else ops.multiply(w, weight)
    if w is None:
        avg = _mean(x, 1, keepdims=True)
        fact = n - ddof
        xw = ops.subtract(x, avg)
        xc = xw
    else:
        w_sum = reduction(ops.reduce_sum, w, None, False)
        avg = ops.divide(reduction(ops.reduce_sum, ops.multiply(x, w), 1, True), w_sum)
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = ops.subtract(w_sum, ddof)
        else:
            fact = ops.subtract(w_sum, ops.divide(ops.multiply(ddof, reduction(
                ops.reduce_sum, ops.multiply(w, operand(aweights)), None, False)), w_sum))
        xc = ops.subtract(x, avg)
        xw = ops.multiply(xc, w)
    c = ops.matmul(xc, _transpose(ops.conj(xw) if _kind(xw) == "c" else xw))  # NumPy's order
    # NumPy's c *= np.true_divide(1, fact): a float64 reciprocal, multiplied in place
    recip = np.float64(1 / fact) if isinstance(fact, int) else ops.divide(1, fact)
    c = astype(ops.multiply(c, recip), aval_of(c).dtype)
    if 1 not in _shape(c):
        return c
    # NumPy squeezes a single variable's 1x1 matrix to a 0-d array, not a NumPy scalar
    return mark_array(ops.squeeze(c, axes=tuple(i for i, k in enumerate(_shape(c)) if k == 1)))


def _checked_weights(name, w, n):
    """NumPy's checks of ``np.cov`` weights: 1-d, one per observation, non-negative, and whole
    numbers for ``fweights`` (the value checks run wherever the weights are known)."""
    if _ndim(w) > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if _shape(w)[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    value = known_value(w)
    if value is not None:
        if name == "fweights" and not np.all(value == np.around(value)):
            raise TypeError("fweights must be integer")
        if np.any(value < 0):
            raise ValueError(f"{name} cannot be negative")
    return w


@implements(np.corrcoef)
def _corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = _cov(x, y, rowvar, dtype=dtype)
    if _ndim(c) == 0:
        return ops.divide(c, c)
    d = ops.gather(c, np.arange(_shape(c)[0]), np.arange(_shape(c)[0]),
                   index=("array", "array"))
    std = ops.sqrt(ops.real(d) if _kind(d) == "c" else d)
    c = ops.divide(ops.divide(c, ops.expand_dims(std, axes=(1,))), std)
    if _kind(c) == "c":
        return c
    return ops.clip(c, -1.0, 1.0)


# --- NaN-ignoring reductions -----------------------------------------------------------------

def _nan_filled(a, fill):
    a = operand(a)
    return ops.where(ops.isnan(a), fill, a) if _kind(a) in "fc" else a


def _nan_count(a, axis, keepdims):
    a = operand(a)
    return count_where(a, normalize_axes(axis, _ndim(a)), keepdims,
                       ops.logical_not(ops.isnan(a)) if _kind(a) in "fc" else True)


@implements(np.nansum)
def _nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduction(ops.reduce_sum, _nan_filled(a, 0), axis, keepdims, dtype, where, initial)


@implements(np.nanprod)
def _nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduction(ops.reduce_prod, _nan_filled(a, 1), axis, keepdims, dtype, where, initial)


def _nan_extreme(op, fill, a, axis, keepdims, initial, where):
    a = operand(a)
    out = reduction(op, _nan_filled(a, fill), axis, keepdims, None, where, initial)
    if _kind(a) not in "fc" or initial is not None:  # an all-NaN slice gives initial, as NumPy
        return out
    empty = ops.equal(_nan_count(a, axis, keepdims), 0)
    return numpy_scalar(ops.where(empty, np.nan, out))


@implements(np.nanmax)
def _nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return _nan_extreme(ops.reduce_max, -np.inf, a, axis, keepdims, initial, where)


@implements(np.nanmin)
def _nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return _nan_extreme(ops.reduce_min, np.inf, a, axis, keepdims, initial, where)


@implements(np.nanargmax, nondiff=True)
def _nanargmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(ops.nanargmax, operand(a), axis, keepdims)


@implements(np.nanargmin, nondiff=True)
def _nanargmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(ops.nanargmin, operand(a), axis, keepdims)


def _inexact_dtype(dtype) -> None:
    """NumPy's ``TypeError`` for an integer or bool ``dtype=`` of a NaN-ignoring statistic of
    a floating or complex array."""
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise TypeError(f"If a is inexact, then dtype must be inexact (got {np.dtype(dtype)})")


@implements(np.nanmean)
def _nanmean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    a = operand(a)
    if _kind(a) not in "fc":
        return _mean(a, axis, dtype, keepdims=keepdims, where=where)
    _inexact_dtype(dtype)
    valid = ops.logical_not(ops.isnan(a))
    if where is not True:
        valid = ops.logical_and(valid, where)
    if dtype is None and aval_of(a).dtype == np.float16:  # NumPy sums in float16 here
        dtype = np.float16
    return mean_counting(_nan_filled(a, 0), axis, dtype, keepdims, where, valid)


@implements(np.nanvar)
def _nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=None, correction=None):
    a = operand(a)
    if _kind(a) not in "fc":
        return _var(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                    correction=correction)
    _inexact_dtype(dtype)
    valid = ops.logical_not(ops.isnan(a))
    if where is not True:
        valid = ops.logical_and(valid, where)
    return var_counting(_nan_filled(a, 0), axis, dtype, ddof_of(ddof, correction), keepdims,
                        where, mean, valid)


@implements(np.nanstd)
def _nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True,
            mean=None, correction=None):
    return ops.sqrt(_nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
                            correction=correction))

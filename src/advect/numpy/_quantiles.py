"""Order statistics and histograms on traced arrays: median, quantile and percentile (also
NaN-ignoring), histogram and bincount.

Quantiles sort the data (a gather with its argsort), then pick or interpolate at the virtual
index NumPy's method defines, so they are differentiable in the data and, for interpolating
methods, in ``q``. Histogram counts are nondifferentiable; weights and bin edges are not.
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of, real_dtype
from ..ops._rules import normalize_axes
from ._creation import _linspace
from ._functions import (
    _ravel,
    _reshape,
    _shape,
    _transpose,
    astype,
    concrete,
    implements,
    known_value,
    numpy_scalar,
    operand,
    pair,
    slice_along,
)
from ._indexing_funcs import along_axis
from ._mutation import mark_array
from ._reductions import reduction
from ._sorting import _argsort, _sort

# (alpha, beta) of the continuous methods (Hyndman and Fan): virtual index
# n*q + alpha + q*(1 - alpha - beta) - 1
_CONTINUOUS = {"linear": (1.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0.0, 1.0)}
_DISCRETE = ("lower", "higher", "nearest", "midpoint")
# Hyndman and Fan's discontinuous methods 1-3, from the virtual index n*q - 1
_STEPWISE = ("inverted_cdf", "averaged_inverted_cdf", "closest_observation")
_PICKS = ("lower", "higher", "nearest", "inverted_cdf", "closest_observation")
# methods whose virtual index of an integer q (0 or 1, NumPy's only valid ones) is an integer:
# NumPy takes those points for "linear" and interpolates the others with q's integer gamma
_INTEGER_INDEX = ("linear", "weibull", "interpolated_inverted_cdf", "averaged_inverted_cdf")


def _check_q(q, name):
    if not isinstance(q, Tracer):
        value = np.asarray(q)
        if value.dtype.kind == "c":  # NumPy's floor of the virtual index has no complex loop
            raise TypeError(f"numpy.{name}: q must be real, got {value.dtype}; pass q.real")
        if not np.all((value >= 0) & (value <= 1)):  # nan is out of range too, as in NumPy
            raise ValueError(f"numpy.{name}: quantiles must be in the range [0, 1] (percentiles "
                             "in [0, 100]) and not nan")


def _quantile(a, q, axis, method, keepdims, name, skip_nan=False, scale=1, weights=None):
    if method not in _CONTINUOUS and method not in _DISCRETE and method not in _STEPWISE:
        raise ValueError(f"numpy.{name}: method {method!r} is not a quantile method; use one "
                         f"of {sorted(_CONTINUOUS) + list(_DISCRETE) + list(_STEPWISE)}")
    if weights is not None and method != "inverted_cdf":
        raise ValueError(f"Only method 'inverted_cdf' supports weights. Got: {method}.")
    # a Python scalar q (traced ones too: weak) does not widen the result
    strong_q = type(q) not in (int, float) and not (isinstance(q, Tracer) and aval_of(q).weak)
    a, q = operand(a), operand(q)
    if not isinstance(q, Tracer):
        q = np.asarray(q) / scale if scale != 1 else np.asarray(q)  # quantile's q keeps its dtype
        _check_q(q, name)
    nd = len(_shape(a))
    axes = normalize_axes(axis, nd)
    keep = [d for d in range(nd) if d not in axes]
    lead = tuple(_shape(a)[d] for d in keep)
    m = math.prod(_shape(a)[d] for d in axes)
    if aval_of(a).dtype.kind == "c" and "median" not in name:  # NumPy sorts complex medians
        raise TypeError(f"numpy.{name}: a must be an array of real numbers")
    q_kind = aval_of(q).dtype.kind
    int_q = q_kind in "iub" and method in _INTEGER_INDEX and (strong_q or (
        method == "linear" and aval_of(a).dtype.kind not in "fc"))  # a Python int q too
    if strong_q and q_kind in "iub" and not int_q:  # a fractional alpha: a float64 index
        q = astype(q, np.float64) if isinstance(q, Tracer) else q.astype(np.float64)
    if int_q and method == "linear":
        method = "lower"  # the same point, taken (NumPy's type: the data's)
    if (aval_of(a).dtype.kind == "b" and method not in _PICKS
            and "median" not in name):  # a median of bools averages, it does not subtract
        raise TypeError(f"numpy.{name}: NumPy interpolates bools with a subtraction it does not "
                        "support; convert them with .astype(np.float64) first")
    # the others pick the same point too, in the common type of the data and that gamma
    int_gamma = np.result_type(aval_of(a).dtype, aval_of(q).dtype if q_kind in "iu" else
                               np.int64) if int_q and method != "lower" else None
    if int_gamma is not None:
        method = "lower"
    picks = method in _PICKS  # values taken, not interpolated: ints and bools stay so
    if aval_of(a).dtype.kind not in "fc" and not (picks and m):  # NumPy interpolates in
        q_dtype = aval_of(q).dtype  # the common type of the data and a floating q's dtype
        a = astype(a, np.result_type(aval_of(a).dtype, q_dtype)
                   if strong_q and q_dtype.kind == "f" else np.float64)
    flat = _reshape(_transpose(a, keep + list(axes)), lead + (m,))
    if weights is not None:
        order = _argsort(flat, -1)
        data = along_axis(flat, order, len(lead))
        weights = along_axis(_weights_like(weights, a, axes, keep, lead + (m,), name), order,
                             len(lead))
    else:
        data = _sort(flat, -1)  # NaNs sort last
    dtype = aval_of(data).dtype
    out_dtype = np.result_type(dtype, aval_of(q).dtype) if strong_q and not picks else dtype
    out_dtype = out_dtype if int_gamma is None else int_gamma
    q_shape = _shape(q)
    kept = tuple(1 if d in axes else n_ for d, n_ in enumerate(_shape(a))) if keepdims else lead
    if m == 0 and not skip_nan and "median" not in name:
        raise IndexError(f"numpy.{name} of an empty array: index -1 is out of bounds for axis 0 "
                         "with size 0 (NumPy's error)")
    if m == 0:  # NumPy's nan-quantiles and medians of nothing are NaN
        return numpy_scalar(ops.full_like(a, fill_value=np.nan, shape=q_shape + kept,
                                          dtype=out_dtype.name))
    # positions in q's precision (float64 for a Python scalar), as NumPy's, whatever the data's
    q_dtype = aval_of(q).dtype
    qv = astype(q, q_dtype if strong_q and q_dtype.kind == "f" else np.float64)
    if isinstance(q, Tracer) and scale != 1:
        qv = ops.divide(qv, scale)
    qv = _reshape(qv, (1,) * len(lead) + (-1,))
    skip_nan = skip_nan and dtype.kind in "fc"  # NumPy's nan-quantile of ints is the quantile
    if skip_nan:
        n = reduction(ops.reduce_sum, astype(ops.logical_not(ops.isnan(flat)),
                                              aval_of(qv).dtype), -1, True)
        last = ops.subtract(n, 1)
    else:
        n, last = m, m - 1
    if weights is not None:
        out = along_axis(data, _weighted_index(weights, qv, m), len(lead))
    elif method in _STEPWISE:
        out = _stepwise(data, n, qv, method, len(lead), not strong_q)
    else:
        # a Python scalar q interpolates in the data's precision (NumPy's weak gamma)
        out = _interpolated(data, n, last, qv, method, len(lead),
                            None if strong_q else real_dtype(dtype), "median" in name)
    if skip_nan:  # an all-NaN slice gives a constant NaN (a zero tangent, not a NaN's)
        out = ops.where(ops.equal(n, 0), np.nan, out)
    if not skip_nan and dtype.kind in "fc":  # NumPy propagates a NaN in a slice
        has_nan = reduction(ops.reduce_max, ops.isnan(flat), -1, True)
        out = ops.where(has_nan, np.nan, out)
    # (lead..., k) -> q's shape + lead (+ kept unit axes)
    k = _shape(out)[-1]
    out = _transpose(out, [len(lead)] + list(range(len(lead))))
    out = _reshape(out, q_shape + kept) if (k, *lead) != q_shape + kept else out
    out = astype(out, out_dtype)
    # NumPy's weighted quantile of a scalar q is a 0-d array, the others a NumPy scalar
    return mark_array(out) if weights is not None else numpy_scalar(out)  # NumPy's types


def _lerp(below, above, t, weak_dtype=None):
    """NumPy's linear interpolation: from ``below`` up to ``t < 0.5``, from ``above`` down
    from there (each exact at its end). ``weak_dtype``: the precision ``t`` and ``1 - t`` are
    rounded to (NumPy's weak gamma for a Python scalar q), or None.

    At a sample point (``t == 0``) the value is ``below``, also next to an infinite neighbour
    (where ``inf * 0`` would give NaN), and the derivative in ``t`` is still the slope."""
    diff = ops.subtract(above, below)
    if type(t) is float:
        if t < 0.5:
            return ops.add(below, ops.multiply(diff, t))
        return ops.subtract(above, ops.multiply(diff, 1.0 - t))
    diff = ops.where(ops.logical_and(ops.equal(t, 0), ops.logical_not(ops.isfinite(diff))),
                     0.0, diff)
    up, down = t, ops.subtract(1.0, t)
    if weak_dtype is not None:
        up, down = astype(up, weak_dtype), astype(down, weak_dtype)
    return ops.where(ops.greater_equal(t, 0.5), ops.subtract(above, ops.multiply(diff, down)),
                     ops.add(below, ops.multiply(diff, up)))


def _interpolated(data, n, last, qv, method, axis, weak_dtype, median=False):
    """The continuous methods and lower/higher/nearest/midpoint, along ``axis`` of the sorted
    ``data``; ``weak_dtype``: the precision the fractions are rounded to (a Python scalar q's
    weak gamma), or None; ``median``: the two middle values are averaged, as np.median's mean
    (``median([1, inf])`` is inf, where a linear quantile's ``inf - inf`` is NaN)."""
    if method in _CONTINUOUS and method != "linear":  # NumPy's (n - 1) q for linear
        alpha, beta = _CONTINUOUS[method]
        pos = ops.subtract(ops.add(ops.multiply(n, qv), ops.add(alpha, ops.multiply(
            qv, 1.0 - alpha - beta))), 1)
    else:
        pos = ops.multiply(qv, last)
    pos = ops.clip(pos, 0, ops.maximum(last, 0))
    lo = ops.floor(pos)
    lo_i = astype(lo, np.int64)
    hi_i = astype(ops.minimum(ops.add(lo, 1), ops.maximum(last, 0)), np.int64)
    if method == "lower":
        out = along_axis(data, lo_i, axis)
    elif method == "higher":
        out = along_axis(data, astype(ops.ceil(pos), np.int64), axis)
    elif method == "nearest":
        out = along_axis(data, astype(ops.round(pos), np.int64), axis)
    else:
        below, above = along_axis(data, lo_i, axis), along_axis(data, hi_i, axis)
        if method == "midpoint":
            frac = ops.where(ops.equal(pos, lo), 0.0, 0.5)
        else:
            frac = ops.subtract(pos, lo)
        if median:
            wide = np.float32 if aval_of(data).dtype == np.float16 else None  # mean's sum
            total = ops.add(*(b if wide is None else astype(b, wide) for b in (below, above)))
            out = ops.where(ops.equal(frac, 0), below,
                            astype(ops.divide(total, 2), aval_of(data).dtype))
            out = ops.add(out, 0.0)  # a mean's sum starts at +0.0: NumPy's median of -0.0 is 0.0
        else:
            out = _lerp(below, above, frac, weak_dtype)
    return out


def _stepwise(data, n, qv, method, axis, weak):
    """Hyndman and Fan's methods 1-3 (NumPy's ``inverted_cdf``, ``averaged_inverted_cdf`` and
    ``closest_observation``), from the virtual index ``n*q - 1`` as NumPy computes it;
    ``weak``: q was a Python scalar."""
    last = ops.maximum(ops.subtract(n, 1), 0)
    index = ops.subtract(ops.multiply(n, qv), 1.5 if method == "closest_observation" else 1)
    below = ops.floor(index)
    gamma = ops.subtract(index, below)
    if method == "averaged_inverted_cdf":
        lo = astype(ops.clip(below, 0, last), np.int64)
        hi = astype(ops.clip(ops.add(below, 1), 0, last), np.int64)
        low, high = along_axis(data, lo, axis), along_axis(data, hi, axis)
        # NumPy's gamma of 0.5: weak for a Python scalar q, else in q's precision
        mid = _lerp(low, high, 0.5 if weak else np.asarray(0.5, aval_of(qv).dtype))
        return ops.where(ops.equal(gamma, 0), ops.where(ops.equal(lo, hi), low, mid), high)
    at_below = ops.equal(gamma, 0)
    if method == "closest_observation":  # ties go to the even (1-based) order statistic
        at_below = ops.logical_and(at_below, ops.equal(ops.remainder(below, 2), 1))
    chosen = ops.where(at_below, below, ops.add(below, 1))
    return along_axis(data, astype(ops.clip(chosen, 0, last), np.int64), axis)


def _weights_like(weights, a, axes, keep, shape, name):
    """``weights`` laid out like the sorted slices: same shape as ``a``, or 1-D along a single
    ``axis``; NumPy refuses negative weights."""
    weights = operand(weights)
    w_shape = _shape(weights)
    if not isinstance(weights, Tracer) and np.any(np.asarray(weights) < 0):
        raise ValueError("Weights must be non-negative.")
    if w_shape != _shape(a):
        if len(w_shape) != 1 or len(axes) != 1 or w_shape[0] != _shape(a)[axes[0]]:
            raise ValueError(f"numpy.{name}: weights must have the shape of a, or be 1-D with "
                             "the length of a along axis")
        expand = tuple(d for d in range(len(_shape(a))) if d != axes[0])
        weights = ops.broadcast_to(ops.expand_dims(weights, axes=expand), shape=_shape(a))
    weights = astype(weights, np.float64)
    return _reshape(_transpose(weights, keep + list(axes)), shape)


def _weighted_index(weights, qv, m):
    """The weighted inverted-CDF pick: the first element, in sorted order, with positive weight
    whose cumulative weight fraction reaches q (the last one if none does)."""
    last = len(_shape(weights)) - 1  # saved programs hold non-negative axes
    cdf = ops.divide(ops.cumulative_sum(weights, axis=last),
                     reduction(ops.reduce_sum, weights, -1, True))
    at = len(_shape(cdf)) - 1  # (lead..., m) -> (lead..., 1, m); q: (1..., k) -> (1..., k, 1)
    reached = ops.logical_and(ops.greater_equal(ops.expand_dims(cdf, axes=(at,)),
                                                ops.expand_dims(qv, axes=(at + 1,))),
                              ops.greater(ops.expand_dims(weights, axes=(at,)), 0))
    first = np.argmax(reached, axis=-1)
    found = reduction(ops.reduce_max, reached, -1, False)
    return ops.where(found, first, m - 1)


@implements(np.quantile)
def _quantile_function(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                       keepdims=False, *, weights=None, interpolation=None):
    return _quantile(a, q, axis, interpolation or method, keepdims, "quantile",
                     weights=weights)


@implements(np.percentile)
def _percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=False, *, weights=None, interpolation=None):
    return _quantile(a, q, axis, interpolation or method, keepdims, "percentile", scale=100,
                     weights=weights)


@implements(np.median)
def _median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(a, 0.5, axis, "linear", keepdims, "median")


@implements(np.nanquantile)
def _nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                 keepdims=False, *, weights=None, interpolation=None):
    return _quantile(a, q, axis, interpolation or method, keepdims, "nanquantile", True,
                     weights=weights)


@implements(np.nanpercentile)
def _nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                   keepdims=False, *, weights=None, interpolation=None):
    return _quantile(a, q, axis, interpolation or method, keepdims, "nanpercentile", True,
                     scale=100, weights=weights)


@implements(np.nanmedian)
def _nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    return _quantile(a, 0.5, axis, "linear", keepdims, "nanmedian", True)


# --- histograms ------------------------------------------------------------------------------

def _bin_edges(a, bins, range_, dtype=None):
    if isinstance(bins, str):
        value = concrete(a, f"np.histogram with bins={bins!r} (the bins depend on data)")
        return np.histogram_bin_edges(value, bins, range_)
    if not isinstance(bins, int | np.integer):
        return operand(bins)
    if bins < 1:
        raise ValueError("`bins` must be positive, when an integer")
    if range_ is not None:
        lo, hi = pair(range_, "numpy.histogram", "range")
    elif math.prod(_shape(a)) == 0:  # NumPy's range for no samples
        lo, hi = 0.0, 1.0
    else:
        lo, hi = reduction(ops.reduce_min, a, None, False), reduction(ops.reduce_max, a, None,
                                                                      False)
        same = ops.equal(lo, hi)
        lo, hi = ops.where(same, ops.subtract(lo, 0.5), lo), ops.where(same, ops.add(hi, 0.5),
                                                                          hi)
    if dtype is None:  # NumPy's edges follow the data's float type
        dtype = np.result_type(aval_of(a).dtype, 0.0)
    # spaced in the endpoints' precision (float64 for a range= of Python numbers), then rounded
    # to the edges' dtype, as NumPy's; endpoints exact, so extremes fall inside
    return _linspace(lo, hi, int(bins) + 1, dtype=dtype)


def _checked_edges(a, bins, range_):
    """np.histogram's edges, with its checks wherever the edges are known (a staged program
    has none): increasing edges given, and ``bins`` distinct edges in the data's precision."""
    edges = _bin_edges(a, bins, range_)
    known = None if isinstance(bins, str) else known_value(edges)
    if known is None:
        return edges
    if not isinstance(bins, int | np.integer):
        if np.any(known[:-1] > known[1:]):
            raise ValueError("`bins` must increase monotonically, when an array")
    elif np.any(known[:-1] >= known[1:]):
        raise ValueError(f"Too many bins for data range. Cannot create {int(bins)} finite-sized "
                         "bins.")
    return edges


@implements(np.histogram_bin_edges)
def _histogram_bin_edges(a, bins=10, range=None, weights=None):
    return _checked_edges(_ravel(operand(a)), bins, range)


def _bin_index(a, edges):
    """The bin of each value and whether it falls inside the edges (the last bin includes its
    right edge)."""
    nbins = _shape(edges)[0] - 1
    idx = ops.subtract(ops.searchsorted(edges, a, side="right"), 1)
    last = slice_along(edges, nbins, nbins + 1, 0)
    idx = ops.where(ops.equal(a, last), nbins - 1, idx)
    inside = ops.logical_and(ops.greater_equal(a, slice_along(edges, 0, 1, 0)),
                             ops.less_equal(a, last))
    return idx, inside


def _bin_counts(flat_bin, inside, size, weights):
    """Counts (or summed weights) per bin: one scatter-add, outside values into a spare slot."""
    slot = ops.where(inside, flat_bin, size)
    if weights is None:
        ones = ops.full_like(slot, fill_value=1)
        counts = ops.scatter_add(ops.zeros_like(ones, shape=(size + 1,)), ones, slot,
                                 index=("array",))
    else:
        counts = ops.scatter_add(ops.zeros_like(weights, shape=(size + 1,)), weights, slot,
                                 index=("array",))
    return slice_along(counts, 0, size, 0)


def _edge_widths(edges):
    k = _shape(edges)[0] - 1
    return ops.subtract(slice_along(edges, 1, k + 1, 0), slice_along(edges, 0, k, 0))


@implements(np.histogram)
def _histogram(a, bins=10, range=None, density=None, weights=None):
    a = _ravel(operand(a))
    edges = _checked_edges(a, bins, range)
    nbins = _shape(edges)[0] - 1
    if weights is None:
        idx, inside = _bin_index(a, edges)
        counts = _bin_counts(idx, inside, nbins, None)
    elif isinstance(bins, int | np.integer | str):
        counts = _uniform_weighted(a, edges, _ravel(operand(weights)))
    else:
        counts = _cumulative_weighted(a, edges, _ravel(operand(weights)))
    if density:  # n / widths / n.sum(), the widths in float64, as NumPy's
        widths = astype(_edge_widths(edges), np.float64)
        counts = ops.divide(ops.divide(counts, widths),
                            reduction(ops.reduce_sum, counts, None, False))
    return counts, edges


_BLOCK = 65536  # np.histogram's block of samples


def _uniform_weighted(a, edges, w):
    """np.histogram's weighted counts for equal bins: per block of samples a float64 sum per bin
    (NumPy's bincount), cast to the weights' dtype and added up in it (a complex one's parts
    added in float64)."""
    nbins, n = _shape(edges)[0] - 1, _shape(a)[0]
    dtype = aval_of(w).dtype
    parts = (ops.real(w), ops.imag(w)) if dtype.kind == "c" else (w,)
    totals = [None] * len(parts)
    for start in builtins.range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        idx, inside = _bin_index(slice_along(a, start, stop, 0), edges)
        for k, part in enumerate(parts):
            block = _bin_counts(idx, inside, nbins,
                                astype(slice_along(part, start, stop, 0), np.float64))
            if dtype.kind == "c":  # n.real += bincount(...): added in float64
                total = block if totals[k] is None else ops.add(totals[k], block)
                totals[k] = astype(total, real_dtype(dtype))
            else:
                block = astype(block, dtype)
                totals[k] = block if totals[k] is None else ops.add(totals[k], block)
    if dtype.kind != "c":
        return totals[0]
    return ops.add(astype(totals[0], dtype), ops.multiply(astype(totals[1], dtype), 1j))


def _cumulative_weighted(a, edges, w):
    """np.histogram's weighted counts for given edges: per block the cumulative sums of the
    weights in sorted sample order, read at the edges, then the differences."""
    n = _shape(a)[0]
    cumulative = None
    for start in builtins.range(0, n, _BLOCK):
        stop = min(start + _BLOCK, n)
        block = slice_along(a, start, stop, 0)
        order = ops.argsort(block, axis=0, stable=False)  # NumPy's default sort, ties as its
        ordered = ops.gather(block, order, index=("array",))
        sums = ops.cumulative_sum(ops.gather(slice_along(w, start, stop, 0), order,
                                             index=("array",)), axis=0)
        sums = ops.concat(ops.zeros_like(sums, shape=(1,)), sums, axis=0)
        k = _shape(edges)[0]
        at = ops.concat(ops.searchsorted(ordered, slice_along(edges, 0, k - 1, 0), side="left"),
                        ops.searchsorted(ordered, slice_along(edges, k - 1, k, 0),
                                         side="right"), axis=0)
        read = ops.gather(sums, at, index=("array",))
        cumulative = read if cumulative is None else ops.add(cumulative, read)
    k = _shape(edges)[0]
    return ops.subtract(slice_along(cumulative, 1, k, 0), slice_along(cumulative, 0, k - 1, 0))


@implements(np.bincount, dynamic_only=True)
def _bincount(x, weights=None, minlength=0):
    x = operand(x)
    if aval_of(x).dtype.kind == "b":  # NumPy counts bools as 0 and 1 (a safe cast)
        x = astype(x, np.int64)
    minlength = operator.index(minlength)
    if minlength < 0:
        raise ValueError("'minlength' must not be negative")
    value = concrete(x, "np.bincount (its length depends on the largest value)")
    if value.size and value.min() < 0:
        raise ValueError("'list' argument must have no negative elements")
    length = max(int(value.max()) + 1 if value.size else 0, int(minlength))
    if weights is None or not value.size:  # NumPy counts nothing in integers, weights or not
        ones = ops.full_like(x, fill_value=1, dtype="int64")
        return ops.scatter_add(ops.zeros_like(ones, shape=(length,)), ones, x, index=("array",))
    w = operand(weights)
    if aval_of(w).dtype.kind == "c":  # NumPy releases differ: ask this one
        np.bincount(np.zeros(1, np.intp), weights=np.zeros(1, aval_of(w).dtype))
    w = astype(w, np.complex128 if aval_of(w).dtype.kind == "c" else np.float64)  # as NumPy
    return ops.scatter_add(ops.zeros_like(w, shape=(length,)), w, x, index=("array",))


@implements(np.histogramdd)
def _histogramdd(sample, bins=10, range=None, density=None, weights=None):
    if isinstance(sample, list | tuple) and not isinstance(sample[0], int | float):
        sample = ops.concat(*(ops.expand_dims(_ravel(operand(s)), axes=(1,)) for s in sample),
                            axis=1)
    sample = operand(sample)
    for x in (sample, weights):  # NumPy casts both to float64 safely
        if x is not None and aval_of(operand(x)).dtype.kind == "c":
            raise TypeError(f"numpy.histogramdd: cannot cast {aval_of(operand(x)).dtype} data "
                            "to float64 safely; pass real values (np.real(x)) instead")
    if len(_shape(sample)) == 1:
        sample = _reshape(sample, (-1, 1))
    n, dims = _shape(sample)
    try:
        count = len(bins)
    except TypeError:  # one count (or a scalar NumPy reads as one) for every dimension
        bins, count = [bins] * dims, dims
    if count != dims:
        raise ValueError(f"numpy.histogramdd: The dimension of bins must be equal to the "
                         f"dimension of the sample x: {len(bins)} bin entries for {dims} "
                         "columns (give one count or edge array per column)")
    bins = list(bins)
    for d, b in enumerate(bins):
        if np.ndim(b) == 0 and not isinstance(b, str):
            try:
                operator.index(b)
            except TypeError:
                raise TypeError(f"numpy.histogramdd: `bins[{d}]` must be an integer, when a "
                                f"scalar (got {b!r})") from None
    if range is not None and len(range) != dims:
        raise ValueError(f"numpy.histogramdd: range argument must have one entry per dimension "
                         f"({len(range)} given for {dims} columns)")
    ranges = [None] * dims if range is None else list(range)
    flat_bin, inside, edges, size = 0, True, [], 1
    for d in builtins.range(dims):  # the parameter `range` shadows the builtin
        column = ops.gather(sample, index=((0, n, 1), d))
        e = _bin_edges(column, bins[d], ranges[d], None if ranges[d] is None else np.float64)
        edges.append(e)
        idx, inside_d = _bin_index(column, e)
        k = _shape(e)[0] - 1
        flat_bin = ops.add(ops.multiply(flat_bin, k), idx)  # C order over the bin axes
        inside = ops.logical_and(inside, inside_d)
        size *= k
    w = np.ones(n) if weights is None else astype(_ravel(operand(weights)), np.float64)
    counts = _reshape(_bin_counts(flat_bin, inside, size, w),
                      tuple(_shape(e)[0] - 1 for e in edges))
    if density:  # divided by each axis's widths in turn, then by the total, as NumPy's
        total = reduction(ops.reduce_sum, counts, None, False)
        for d, e in enumerate(edges):
            k = _shape(e)[0] - 1
            counts = ops.divide(counts, _reshape(_edge_widths(e),
                                                 (1,) * d + (k,) + (1,) * (dims - d - 1)))
        counts = ops.divide(counts, total)
    return counts, edges


@implements(np.histogram2d)
def _histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    if not isinstance(bins, int | np.integer) and len(bins) != 2:
        bins = [bins, bins]
    counts, (xedges, yedges) = _histogramdd([x, y], bins, range, density, weights)
    return counts, xedges, yedges


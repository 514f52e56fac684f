"""Statistical, searching, sorting and set functions on tracers.

Functions whose output shape depends on the data (``nonzero``, ``unique_*``) read the current
values, so they work in dynamic transforms and raise ``TracingError`` while staging; the values
``unique_*`` return are gathered from the input, so they stay differentiable.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from .. import ops
from ..dtypes import aval_of
from ..errors import TracingError
from ..ops._rules import normalize_axes, reduce_axes, scalar_axis
from ..providers import numpy_dtype
from ._functions import as_1d, axis_of, cast, check_integer, ravel, shape_of, take_along_axis
from ._tables import op_named, translates

__all__ = ["variance", "argsort", "concrete", "UniqueAllResult", "UniqueCountsResult",
           "UniqueInverseResult"]

UniqueAllResult = namedtuple("UniqueAllResult", "values indices inverse_indices counts")
UniqueCountsResult = namedtuple("UniqueCountsResult", "values counts")
UniqueInverseResult = namedtuple("UniqueInverseResult", "values inverse_indices")


def _reduce(op, x, axis, keepdims, dtype=None):
    if dtype is None:
        return op(x, axes=reduce_axes(axis, len(shape_of(x))), keepdims=bool(keepdims))
    # the op accumulates small integers in 64 bits; ``dtype`` names the result's dtype too
    # (int8 sums wrap as the provider's do: the low bits of the wide sum)
    dtype = numpy_dtype(dtype)
    x = cast(x, dtype)
    return cast(op(x, axes=reduce_axes(axis, len(shape_of(x))), keepdims=bool(keepdims)), dtype)


def _accumulator(ctx, x, dtype):
    """``dtype``, or where the revision says a sum or product accumulates: revision 2022.12
    sums floating input in the default floating dtype of its kind (later ones keep x's dtype)."""
    if dtype is not None or ctx.revision != "2022.12":
        return dtype
    kind = aval_of(x).dtype.kind
    if kind not in "fc":
        return None
    default = numpy_dtype(ctx.xp.asarray(1.0).dtype)  # the provider's default real float
    return default if kind == "f" else np.result_type(default, np.complex64)


@translates("sum")
def _sum(ctx, x, /, *, axis=None, dtype=None, keepdims=False):
    return _reduce(ops.reduce_sum, x, axis, keepdims, _accumulator(ctx, x, dtype))


@translates("prod")
def _prod(ctx, x, /, *, axis=None, dtype=None, keepdims=False):
    return _reduce(ops.reduce_prod, x, axis, keepdims, _accumulator(ctx, x, dtype))


@translates("max")
def _max(ctx, x, /, *, axis=None, keepdims=False):
    return _reduce(ops.reduce_max, x, axis, keepdims)


@translates("min")
def _min(ctx, x, /, *, axis=None, keepdims=False):
    return _reduce(ops.reduce_min, x, axis, keepdims)


def _count(x, axes):
    return math.prod(shape_of(x)[a] for a in axes)


@translates("mean")
def _mean(ctx, x, /, *, axis=None, keepdims=False):
    axes = normalize_axes(axis, len(shape_of(x)))
    return ops.divide(ops.reduce_sum(x, axes=axes, keepdims=bool(keepdims)), _count(x, axes))


def variance(x, axis, correction, keepdims):
    axes = normalize_axes(axis, len(shape_of(x)))
    mean = ops.divide(ops.reduce_sum(x, axes=axes, keepdims=True), _count(x, axes))
    dev = ops.subtract(x, mean)
    square = (ops.real(ops.multiply(dev, ops.conj(dev))) if aval_of(dev).dtype.kind == "c"
              else ops.square(dev))
    total = ops.reduce_sum(square, axes=axes, keepdims=bool(keepdims))
    return ops.divide(total, max(_count(x, axes) - correction, 0))


@translates("var")
def _var(ctx, x, /, *, axis=None, correction=0.0, keepdims=False):
    return variance(x, axis, correction, keepdims)


@translates("std")
def _std(ctx, x, /, *, axis=None, correction=0.0, keepdims=False):
    return ops.sqrt(variance(x, axis, correction, keepdims))


def _cumulative(op_name, ctx, x, axis, dtype, include_initial, initial):
    ndim = len(shape_of(x))
    if axis is None:
        if ndim > 1:
            raise ValueError(f"{op_name}: axis is required for arrays of more than one "
                             "dimension")
        axis = 0
    x, axis = as_1d(x, axis)
    axis = axis_of(axis, len(shape_of(x)))
    if dtype is not None:
        x = cast(x, numpy_dtype(dtype))
    out = op_named(op_name)(x, axis=axis)
    if dtype is not None:  # the op's small integers accumulate in 64 bits, as in _reduce
        out = cast(out, numpy_dtype(dtype))
    if include_initial:
        shape = list(shape_of(out))
        shape[axis] = 1
        first = ops.full_like(out, fill_value=initial, shape=tuple(shape))
        out = ops.concat(first, out, axis=axis)
    return out


@translates("cumulative_sum", needs=("cumulative_sum",))
def _cumulative_sum(ctx, x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative("cumulative_sum", ctx, x, axis, dtype, include_initial, 0)


@translates("cumulative_prod", needs=("cumulative_prod",))
def _cumulative_prod(ctx, x, /, *, axis=None, dtype=None, include_initial=False):
    return _cumulative("cumulative_prod", ctx, x, axis, dtype, include_initial, 1)


# --- searching -------------------------------------------------------------------------------

def _arg_reduce(op, x, axis, keepdims):
    ndim = len(shape_of(x))
    if axis is None or scalar_axis(axis, ndim):  # a 0-d array reads as 1-d
        out = op(ravel(x), axis=0, keepdims=False)
        return ops.reshape(out, shape=(1,) * ndim) if keepdims else out
    return op(x, axis=axis_of(axis, ndim), keepdims=bool(keepdims))


@translates("argmax")
def _argmax(ctx, x, /, *, axis=None, keepdims=False):
    return _arg_reduce(ops.argmax, x, axis, keepdims)


@translates("argmin")
def _argmin(ctx, x, /, *, axis=None, keepdims=False):
    return _arg_reduce(ops.argmin, x, axis, keepdims)


def concrete(x, where: str):
    """The provider array behind a tracer, for functions whose output shape needs data."""
    try:
        return x._concrete()
    except TracingError:
        raise TracingError(f"{where}: the output shape depends on the data, so it cannot be "
                           "staged; call it in a dynamic transform, or outside the staged "
                           "function") from None


@translates("nonzero")
def _nonzero(ctx, x, /):
    return ctx.xp.nonzero(concrete(x, "nonzero"))


@translates("where")
def _where(ctx, condition, x1, x2, /):
    if not hasattr(x1, "shape") and not hasattr(x2, "shape"):
        # two Python scalars: the standard asks for at least one array, and whether the
        # provider relaxes that is its own call (array-api-strict refuses, NumPy accepts)
        ctx.xp.where(ctx.xp.asarray(True), x1, x2)
    return ops.where(condition, x1, x2)


@translates("searchsorted", needs=("searchsorted",))
def _searchsorted(ctx, x1, x2, /, *, side="left", sorter=None):
    if sorter is not None:
        check_integer(sorter, "searchsorted", "sorter")
        x1 = ops.gather(x1, sorter, index=("array",))
    return op_named("searchsorted")(x1, x2, side=side)


@translates("count_nonzero")
def _count_nonzero(ctx, x, /, *, axis=None, keepdims=False):
    truth = x if aval_of(x).dtype.kind == "b" else ops.not_equal(x, 0)
    return _reduce(ops.reduce_sum, ops.astype(truth, dtype="int64"), axis, keepdims)


# --- sorting ---------------------------------------------------------------------------------

def argsort(x, axis, descending, stable):
    x, axis = as_1d(x, axis)
    axis = axis_of(axis, len(shape_of(x)))
    if not descending:
        return op_named("argsort")(x, axis=axis, stable=bool(stable))
    # a stable descending order: sort the reversed array, reverse back, count from the end
    n = shape_of(x)[axis]
    order = op_named("argsort")(ops.flip(x, axes=(axis,)), axis=axis, stable=True)
    return ops.subtract(n - 1, ops.flip(order, axes=(axis,)))


@translates("argsort", needs=("argsort",))
def _argsort(ctx, x, /, *, axis=-1, descending=False, stable=True):
    return argsort(x, axis, descending, stable)


@translates("sort", needs=("argsort",))
def _sort(ctx, x, /, *, axis=-1, descending=False, stable=True):
    return take_along_axis(x, argsort(x, axis, descending, stable), axis)


# --- sets ------------------------------------------------------------------------------------

def _first_indices(xp, flat, values):
    """Where each of the sorted unique ``values`` first occurs in ``flat`` (a stable sort keeps
    the first of equal elements first)."""
    order = xp.argsort(flat, stable=True)
    return xp.take(order, xp.searchsorted(xp.take(flat, order), values))


def _unique(ctx, x, where, fn):
    """The provider's ``fn`` ("unique_counts", ...) of the current values, with its ``values``
    gathered from ``x`` so they stay differentiable."""
    xp = ctx.xp
    flat = xp.reshape(concrete(x, where), (-1,))
    result = getattr(xp, fn)(flat)
    values = result if fn == "unique_values" else result[0]
    try:
        indices = xp.unique_all(flat).indices
    except NotImplementedError:  # PyTorch's namespace has no unique_all
        indices = _first_indices(xp, flat, values)
    return result, indices, ops.gather(ravel(x), indices, index=("array",))


@translates("unique_values")
def _unique_values(ctx, x, /):
    return _unique(ctx, x, "unique_values", "unique_values")[2]


@translates("unique_counts")
def _unique_counts(ctx, x, /):
    result, _, values = _unique(ctx, x, "unique_counts", "unique_counts")
    return UniqueCountsResult(values, result[1])


@translates("unique_inverse")
def _unique_inverse(ctx, x, /):
    result, _, values = _unique(ctx, x, "unique_inverse", "unique_inverse")
    return UniqueInverseResult(values, ctx.xp.reshape(result[1], shape_of(x)))


@translates("unique_all")
def _unique_all(ctx, x, /):
    counts, indices, values = _unique(ctx, x, "unique_all", "unique_counts")
    inverse = ctx.xp.unique_inverse(ctx.xp.reshape(concrete(x, "unique_all"), (-1,)))[1]
    return UniqueAllResult(values, indices, ctx.xp.reshape(inverse, shape_of(x)), counts[1])


@translates("isin")
def _isin(ctx, x1, x2, /, *, invert=False):
    # a Python scalar compares as itself (weakly), never filled into the other's dtype: 2.5 is
    # not in an integer array holding 2
    if not hasattr(x2, "shape"):
        return ops.not_equal(x1, x2) if invert else ops.equal(x1, x2)
    flat = ravel(x2) if shape_of(x2) else ops.reshape(x2, shape=(1,))
    if hasattr(x1, "shape"):
        ndim = len(shape_of(x1))
        x1 = ops.expand_dims(x1, axes=(ndim,))
    else:
        ndim = 0
    hits = ops.astype(ops.equal(x1, flat), dtype="int64")
    count = ops.reduce_sum(hits, axes=(ndim,), keepdims=False)
    return ops.equal(count, 0) if invert else ops.greater(count, 0)



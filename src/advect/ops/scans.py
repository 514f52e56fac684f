"""Scans beyond the cumulative sum: running product, running maximum and running minimum.

Each takes a normalized non-negative ``axis``. Their derivatives are exact where the scan has
zeros (product) or ties (max/min: the tangent of the first position that attained the running
extreme passes).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Op
from ..dtypes import Aval, aval_of
from ._rules import fit


def _cumulative_prod_abstract(x, *, axis):
    # like NumPy's cumulative_prod: bool and small integers accumulate in the default integer
    dtype = x.dtype
    if dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 8):
        dtype = np.dtype(np.uint64 if dtype.kind == "u" else np.int64)
    return Aval(x.shape, dtype, False, x.device)


def _cumulative_prod_jvp(primals, tangents, out, *, axis):
    # d out_i = sum_{j <= i} dx_j prod_{k <= i, k != j} x_k. Before the first zero z this is
    # out_i * cumsum(dx / x)_i; from z on only j = z survives: dx_z times the product without x_z
    # (zero again once a second zero is passed).
    (x,), (dx,) = primals, tangents
    zero = ops.equal(x, 0)
    zeros_seen = ops.cumulative_sum(zero, axis=axis)
    first_zero = ops.logical_and(zero, ops.equal(zeros_seen, 1))
    without_first_zero = cumulative_prod(ops.where(first_zero, 1, x), axis=axis)
    ratios = ops.cumulative_sum(ops.divide(dx, ops.where(zero, 1, x)), axis=axis)
    at_zero = ops.reduce_sum(ops.where(first_zero, dx, 0.0), axes=(axis,), keepdims=True)
    factor = ops.where(ops.equal(zeros_seen, 0), ratios, at_zero)
    return fit(ops.multiply(without_first_zero, factor), aval_of(out))


cumulative_prod = Op(
    "cumulative_prod", attrs=("axis",), abstract=_cumulative_prod_abstract,
    impl=lambda xp, x, *, axis: xp.cumulative_prod(x, axis=axis), jvp=_cumulative_prod_jvp)


def _running_extreme_jvp(better):
    def jvp(primals, tangents, out, *, axis):
        (x,), (dx,) = primals, tangents
        shape = aval_of(x).shape
        n = shape[axis]
        if n < 2:
            return fit(dx, aval_of(out))
        # a position sets a new record when it beats the running extreme before it; each output
        # takes the tangent of the latest record at or before it
        position = ops.iota_like(x, shape=shape, axis=axis)
        before = ops.concat(ops.slice_axis(out, start=0, stop=1, axis=axis),
                            ops.slice_axis(out, start=0, stop=n - 1, axis=axis), axis=axis)
        record = ops.logical_or(ops.equal(position, 0), better(x, before))
        source = cumulative_max(ops.where(record, position, 0), axis=axis)
        index = [ops.iota_like(x, shape=shape, axis=d) for d in range(len(shape))]
        index[axis] = source
        return fit(ops.gather(dx, *index, index=("array",) * len(shape)), aval_of(out))
    return jvp


def _same_abstract(x, *, axis):
    return Aval(x.shape, x.dtype, False, x.device)


def _accumulate_impl(name):
    def impl(xp, x, *, axis):
        if xp is not np:
            raise TypeError(f"cumulative_{name} is implemented for NumPy arrays only")
        return getattr(np, name).accumulate(x, axis=axis)
    return impl


cumulative_max = Op("cumulative_max", attrs=("axis",), abstract=_same_abstract,
                    impl=_accumulate_impl("maximum"),
                    jvp=_running_extreme_jvp(lambda x, before: ops.greater(x, before)))
cumulative_min = Op("cumulative_min", attrs=("axis",), abstract=_same_abstract,
                    impl=_accumulate_impl("minimum"),
                    jvp=_running_extreme_jvp(lambda x, before: ops.less(x, before)))

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]

"""Scans beyond the cumulative sum: running product, running maximum and running minimum.

Each takes a normalized non-negative ``axis``. Their derivatives are exact where the scan has
zeros (product: the product rule through a prefix scan, no division) or ties (max/min: the
tangent of the position that set the running record passes).
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .._compat import provider_function
from ..core import Op
from ..dtypes import Aval, aval_of
from ._rules import fit


def _cumulative_prod_abstract(x, *, axis):
    # like NumPy's cumulative_prod: bool and small integers accumulate in the default integer
    dtype = x.dtype
    if dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 8):
        dtype = np.dtype(np.uint64 if dtype.kind == "u" else np.int64)
    return Aval(x.shape, dtype, False, x.device)


def _shifted(v, step, axis, fill, like):
    """``v`` moved ``step`` places along ``axis``, the vacated front filled with ``fill``."""
    aval = aval_of(v)
    n = aval.shape[axis]
    front = list(aval.shape)
    front[axis] = step
    pad = ops.full_like(like, fill_value=fill, shape=tuple(front), dtype=aval.dtype.name)
    return ops.concat(pad, ops.slice_axis(v, start=0, stop=n - step, axis=axis), axis=axis)


def _cumulative_prod_jvp(primals, tangents, out, *, axis):
    # The product rule through a prefix scan (Hillis-Steele: y <- y * shift(y, 1, 2, 4, ...)):
    # only products and sums, so the rule is exact also where x has zeros, to every order, at
    # O(n log n) cost instead of a division by x.
    (x,), (dx,) = primals, tangents
    n = aval_of(x).shape[axis]
    y, dy = x, fit(dx, out)
    step = 1
    while step < n:
        y_before = _shifted(y, step, axis, 1, x)
        dy = ops.add(ops.multiply(dy, y_before),
                     ops.multiply(y, _shifted(dy, step, axis, 0, x)))
        y = ops.multiply(y, y_before)
        step *= 2
    return dy


cumulative_prod = Op(
    "cumulative_prod", allocates=True, attrs={"axis": "axis"}, abstract=_cumulative_prod_abstract,
    impl=lambda xp, x, *, axis: provider_function(xp, "cumulative_prod")(x, axis=axis),
    jvp=_cumulative_prod_jvp)


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


cumulative_max = Op("cumulative_max", allocates=True, attrs={"axis": "axis"},
                    abstract=_same_abstract, impl=_accumulate_impl("maximum"),
                    jvp=_running_extreme_jvp(lambda x, before: ops.greater(x, before)))
cumulative_min = Op("cumulative_min", allocates=True, attrs={"axis": "axis"},
                    abstract=_same_abstract, impl=_accumulate_impl("minimum"),
                    jvp=_running_extreme_jvp(lambda x, before: ops.less(x, before)))

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]

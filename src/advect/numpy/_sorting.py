"""Sorting, searching and set functions on traced arrays.

Indices (argsort, searchsorted, digitize, ...) are nondifferentiable ops; sorted values are a
gather with the argsort of the data, so their derivative follows the permutation. Functions whose
output shape depends on data (unique, the set operations) read concrete values and are
dynamic-only; their values are still gathered from the inputs, so they stay differentiable.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import aval_of
from ..errors import bounded
from ..ops._rules import index_tuple, normalize_axes, one_axis
from ._functions import (
    _concatenate,
    _ravel,
    _shape,
    concrete,
    implements,
    operand,
    take_axis,
)
from ._indexing_funcs import along_axis

_STABLE = ("stable", "mergesort")


def _sort_axis(a, axis):
    a = operand(a)
    if axis is None:
        return _ravel(a), 0
    return a, one_axis(axis, len(_shape(a)))


def _no_order(order, name):
    if order is not None:
        raise ValueError(f"numpy.{name}: order= (structured arrays) is not supported on traced "
                         "arrays")


def _index_axis(a, axis):
    """NumPy's argsort and argpartition read a 0-d array as 1-d."""
    a = operand(a)
    return _sort_axis(_ravel(a) if not _shape(a) else a, axis)


@implements(np.argsort, nondiff=True)
def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    _no_order(order, "argsort")
    if kind is not None and (not isinstance(kind, str) or kind[:1].lower() not in "qhms"):
        raise ValueError("sort kind must be one of 'quick', 'heap', or 'stable' (got "
                         f"{bounded(kind)})")
    if kind is not None and stable is not None:
        raise ValueError("`kind` and keyword parameters can't be provided at the same time. "
                         "Use only one of them.")
    a, axis = _index_axis(a, axis)
    return ops.argsort(a, axis=axis, stable=bool(stable) or kind in _STABLE)


@implements(np.sort)
def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    a, axis = _sort_axis(a, axis)
    return along_axis(a, _argsort(a, axis, kind, order, stable=stable), axis)


@implements(np.sort_complex)
def _sort_complex(a):
    a = operand(a)
    out = _sort(a)  # NumPy orders complex numbers lexicographically, as argsort does
    dtype = np.sort_complex(np.zeros(1, aval_of(a).dtype)).dtype
    return out if aval_of(out).dtype == dtype else ops.astype(out, dtype=dtype.name)


def _kth(kth):
    return index_tuple(kth)


@implements(np.argpartition, nondiff=True)
def _argpartition(a, kth, axis=-1, kind="introselect", order=None):
    _no_order(order, "argpartition")
    if kind != "introselect":
        raise ValueError(f"select kind must be 'introselect' (got {bounded(kind)})")
    a, axis = _index_axis(a, axis)
    return ops.argpartition(a, kth=_kth(kth), axis=axis)


@implements(np.partition)
def _partition(a, kth, axis=-1, kind="introselect", order=None):
    a, axis = _sort_axis(a, axis)
    return along_axis(a, _argpartition(a, kth, axis, kind, order), axis)


@implements(np.lexsort, nondiff=True)
def _lexsort(keys, axis=-1):
    if not isinstance(keys, list | tuple) and not _shape(operand(keys)):
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    keys = [operand(k) for k in keys] if isinstance(keys, list | tuple) else [
        operand(keys)[i] for i in range(_shape(keys)[0])]
    if any(_shape(k) != _shape(keys[0]) for k in keys):
        raise ValueError("all keys need to be the same shape")
    order = None
    for key in keys:  # the last key is the primary one: sort by it last, stably
        key, ax = _sort_axis(key, axis)
        if order is None:
            order = ops.argsort(key, axis=ax, stable=True)
        else:
            order = along_axis(order, ops.argsort(along_axis(key, order, ax), axis=ax,
                                                  stable=True), ax)
    return order


@implements(np.searchsorted, nondiff=True)
def _searchsorted(a, v, side="left", sorter=None):
    a = operand(a)
    if sorter is not None:
        sorter = operand(sorter)
        if aval_of(sorter).dtype.kind not in "iu":
            raise TypeError("sorter must only contain integers")
        if len(_shape(sorter)) != 1:
            raise TypeError("could not parse sorter argument")
        if _shape(sorter) != _shape(a):
            raise ValueError("sorter.size must equal a.size")
        a = take_axis(a, sorter, 0)
    return ops.searchsorted(a, operand(v), side=side)


@implements(np.digitize, nondiff=True)
def _digitize(x, bins, right=False):
    if aval_of(operand(x)).dtype.kind == "c":
        raise TypeError("x may not be complex")  # NumPy's message
    bins = operand(bins)
    value = concrete(bins, "np.digitize with traced bins (their direction is read from data)")
    if value.ndim != 1:
        raise ValueError("bins must be one-dimensional")
    steps = np.diff(value)
    increasing = bool(np.all(steps >= 0))
    if not increasing and not np.all(steps <= 0):
        raise ValueError("bins must be monotonically increasing or decreasing")
    side = "left" if right else "right"
    if increasing:
        return ops.searchsorted(bins, operand(x), side=side)
    # decreasing bins: NumPy counts from the end of the reversed bins, with the same side
    flipped = ops.flip(bins, axes=(0,))
    return ops.subtract(value.size, ops.searchsorted(flipped, operand(x), side=side))


@implements(np.isin, nondiff=True)
def _isin(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    if kind not in (None, "sort", "table"):
        raise ValueError(f"numpy.isin: invalid kind {kind!r}; use None, 'sort' or 'table'")
    element, test = operand(element), _ravel(operand(test_elements))
    m = _shape(test)[0]
    if m == 0:
        found = ops.zeros_like(element, dtype="bool")
    else:  # binary search in the sorted test values: n log m, no n-by-m comparison
        ordered = take_axis(test, ops.argsort(test, axis=0, stable=False), 0)
        at = ops.clip(ops.searchsorted(ordered, element, side="left"), 0, m - 1)
        found = ops.equal(take_axis(ordered, at, 0), element)
    return ops.logical_not(found) if invert else found


# --- unique and set operations (dynamic only: their sizes depend on data) --------------------

def _unique_parts(ar, what, axis=None, equal_nan=True):
    value = concrete(ar, f"{what} (its output shape depends on data)")
    return np.unique(value, return_index=True, return_inverse=True, return_counts=True,
                     axis=axis, equal_nan=equal_nan)


@implements(np.unique, dynamic_only=True)
def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
            equal_nan=True, sorted=True):
    ar = operand(ar)
    if axis is not None:  # NumPy's AxisError comes before the data is needed
        normalize_axes(axis, len(_shape(ar)))
    _, index, inverse, counts = _unique_parts(ar, "np.unique", axis, equal_nan)
    if axis is None:
        values = take_axis(_ravel(ar), index, 0)
    else:
        axis = one_axis(axis, len(_shape(ar)))
        values = take_axis(ar, index, axis)
    extra = [x for x, want in ((index, return_index), (inverse, return_inverse),
                               (counts, return_counts)) if want]
    return (values, *extra) if extra else values


@implements(np.unique_values, dynamic_only=True)
def _unique_values(x):
    return _unique(x, equal_nan=False)  # the Array API functions keep every NaN, as NumPy's


@implements(np.unique_counts, dynamic_only=True)
def _unique_counts(x):
    values, counts = _unique(x, return_counts=True, equal_nan=False)
    return np.lib._arraysetops_impl.UniqueCountsResult(values, counts)


@implements(np.unique_inverse, dynamic_only=True)
def _unique_inverse(x):
    values, inverse = _unique(x, return_inverse=True, equal_nan=False)
    return np.lib._arraysetops_impl.UniqueInverseResult(values, inverse)


@implements(np.unique_all, dynamic_only=True)
def _unique_all(x):
    values, index, inverse, counts = _unique(x, True, True, True, equal_nan=False)
    return np.lib._arraysetops_impl.UniqueAllResult(values, index, inverse, counts)


def _pick(a, positions):
    return take_axis(_ravel(operand(a)), np.asarray(positions, dtype=np.int64), 0)


@implements(np.union1d, dynamic_only=True)
def _union1d(ar1, ar2):
    return _unique(_concatenate([_ravel(operand(ar1)), _ravel(operand(ar2))], 0))


@implements(np.intersect1d, dynamic_only=True, nondiff=True)
def _intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    v1 = concrete(ar1, "np.intersect1d (its output shape depends on data)").ravel()
    v2 = concrete(ar2, "np.intersect1d (its output shape depends on data)").ravel()
    _, i1, i2 = np.intersect1d(v1, v2, assume_unique=assume_unique, return_indices=True)
    values = _pick(ar1, i1)
    return (values, i1, i2) if return_indices else values


@implements(np.setdiff1d, dynamic_only=True)
def _setdiff1d(ar1, ar2, assume_unique=False):
    v1 = concrete(ar1, "np.setdiff1d (its output shape depends on data)").ravel()
    v2 = concrete(ar2, "np.setdiff1d (its output shape depends on data)").ravel()
    if assume_unique:
        return _pick(ar1, np.flatnonzero(~np.isin(v1, v2)))
    _, first = np.unique(v1, return_index=True)
    return _pick(ar1, first[~np.isin(v1[first], v2)])


@implements(np.setxor1d, dynamic_only=True)
def _setxor1d(ar1, ar2, assume_unique=False):
    v1 = concrete(ar1, "np.setxor1d (its output shape depends on data)").ravel()
    v2 = concrete(ar2, "np.setxor1d (its output shape depends on data)").ravel()
    # NumPy's algorithm on positions: the unique values of each array, sorted together; a
    # value equal to a neighbour drops out (NaN equals nothing, so NaNs stay)
    p1, p2 = ((np.arange(v.size) if assume_unique else np.unique(v, return_index=True)[1])
              for v in (v1, v2))
    positions = np.concatenate([p1, p2 + v1.size])
    both = np.concatenate([v1, v2])[positions]
    order = np.argsort(both, kind="stable")
    flag = np.concatenate(([True], both[order][1:] != both[order][:-1], [True]))
    joined = _concatenate([_ravel(operand(ar1)), _ravel(operand(ar2))], 0)
    return take_axis(joined, positions[order[flag[1:] & flag[:-1]]], 0)


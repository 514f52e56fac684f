"""NumPy's indexing helpers on traced arrays: take, choose, diagonals, triangles, index
conversions, and the writing functions (put, place, putmask, put_along_axis, fill_diagonal,
copyto), which are functionalized: they repoint an owned local array and return None.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of, result_type
from ..ops._rules import one_axis, scalar_axis
from ..providers import on_provider_of
from ._functions import (
    _CASTINGS,
    _moveaxis,
    _ndim,
    _ravel,
    _reshape,
    _shape,
    _stack,
    _transpose,
    concrete,
    implements,
    operand,
    take_axis,
)
from ._indexing import check_broadcast
from ._mutation import READ_ONLY, assign_inplace, check_sequential, mark_view, numpy_scalar
from ._reductions import reduction
from ._shaping import _broadcast_arrays, _resize


def _fix_mode(indices, n, mode, name):
    if mode == "wrap":
        return ops.remainder(indices, n)
    if mode == "clip":
        return ops.clip(indices, 0, n - 1)
    if mode != "raise":
        raise ValueError(f"numpy.{name}: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    if not isinstance(indices, Tracer):
        bad = (indices < -n) | (indices >= n)
        if np.any(bad) and name == "choose":
            raise ValueError("invalid entry in choice array")
        if np.any(bad):
            raise IndexError(f"numpy.{name}: index {indices[bad].flat[0]} is out of bounds for "
                             f"axis with size {n}")
    return indices


@implements(np.take)
def _take(a, indices, axis=None, out=None, mode="raise"):
    a = operand(a)
    if axis is None or scalar_axis(axis, _ndim(a)):  # a 0-d array reads as 1-d
        a, axis = _ravel(a), 0
    axis = one_axis(axis, _ndim(a))
    indices = _take_indices(indices)
    shape = _shape(a)
    n, others = shape[axis], math.prod(shape[:axis] + shape[axis + 1:])
    if not isinstance(indices, Tracer):
        if n == 0 and np.size(indices):
            raise IndexError("cannot do a non-empty take from an empty axes.")
        if others == 0 and mode == "raise":
            # NumPy checks no index when nothing is taken (an empty outer axis): the result
            # is empty whichever positions are read, so read valid ones
            return take_axis(a, np.clip(indices, 0, max(n - 1, 0)), axis)
    return take_axis(a, _fix_mode(indices, n, mode, "take"), axis)


def _take_indices(indices):
    """``np.take``'s indices cast to integers as NumPy casts them (same kind): booleans are 0
    and 1, Python and NumPy float scalars and lists of floats are truncated (and "1" is 1, as
    NumPy's int()), and an array of floats (or a traced one) is NumPy's TypeError."""
    weak = isinstance(indices, float | str | list | tuple | np.generic)  # converted, not cast
    indices = operand(indices)
    kind = aval_of(indices).dtype.kind
    if kind == "b" or (kind in "fUS" and weak and not isinstance(indices, Tracer)):
        return ops.astype(indices, dtype="int64") if isinstance(indices, Tracer) \
            else indices.astype(np.intp)
    if kind not in "iu":
        raise TypeError(f"Cannot cast array data from {aval_of(indices).dtype!r} to "
                        "dtype('int64') according to the rule 'same_kind': np.take needs "
                        "integer indices (convert them with .astype(int))")
    return indices


def _axis_arrays(shape, indices, axis):
    """Index arrays that pick ``indices`` along ``axis`` and everything along the others."""
    nd = len(shape)
    arrays = []
    for d in range(nd):
        if d == axis:
            arrays.append(indices)
        else:
            view = [1] * nd
            view[d] = shape[d]
            arrays.append(np.arange(shape[d]).reshape(view))
    check_broadcast([tuple(aval_of(a).shape) for a in arrays])
    return arrays


def along_axis(arr, indices, axis):
    """``np.take_along_axis(arr, indices, axis)`` as one gather."""
    return ops.gather(arr, *_axis_arrays(_shape(arr), indices, axis),
                      index=("array",) * _ndim(arr))


@implements(np.take_along_axis)
def _take_along_axis(arr, indices, axis=-1):
    arr, indices = operand(arr), operand(indices)
    if axis is None:
        arr, axis = _ravel(arr), 0
    if _ndim(indices) != _ndim(arr):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    return along_axis(arr, indices, one_axis(axis, _ndim(arr)))


@implements(np.put_along_axis)
def _put_along_axis(arr, indices, values, axis):
    indices = operand(indices)
    flat = axis is None
    target = _ravel(arr) if flat else arr
    if _ndim(indices) != _ndim(target):
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = 0 if flat else one_axis(axis, _ndim(arr))
    arrays = _axis_arrays(_shape(target), indices, axis)
    new = ops.scatter(target, operand(values), *arrays, index=("array",) * _ndim(target))
    assign_inplace(arr, _reshape(new, _shape(arr)) if flat else new, "numpy.put_along_axis")


@implements(np.choose)
def _choose(a, choices, out=None, mode="raise"):
    choices = [operand(c) for c in choices]
    a = operand(a)
    kind = aval_of(a).dtype.kind
    if kind == "b":  # NumPy casts a to integers 'safe': booleans are 0 and 1, floats refused
        a = ops.astype(a, dtype="int64") if isinstance(a, Tracer) else a.astype(np.intp)
    elif kind not in "iu":
        raise TypeError(f"Cannot cast array data from {aval_of(a).dtype!r} to dtype('int64') "
                        "according to the rule 'safe': np.choose needs integer choice indices "
                        "(convert them with .astype(int))")
    a = _fix_mode(a, len(choices), mode, "choose")
    *choices, a = _broadcast_arrays(*choices, a)
    return ops.squeeze(along_axis(_stack(choices), ops.expand_dims(a, axes=(0,)), 0),
                       axes=(0,))


@implements(np.compress, dynamic_only=True)
def _compress(condition, a, axis=None, out=None):
    a = operand(a)
    if axis is None:
        a, axis = _ravel(a), 0
    cond = concrete(condition, "np.compress (its output shape depends on data)").astype(bool)
    if cond.ndim != 1:
        raise ValueError(f"condition must be a 1-d array: np.compress got one of shape "
                         f"{cond.shape} (use np.extract for a mask shaped like the array)")
    return take_axis(a, np.flatnonzero(cond), one_axis(axis, _ndim(a)))


@implements(np.extract, dynamic_only=True)
def _extract(condition, arr):
    cond = concrete(condition, "np.extract (its output shape depends on data)")
    return take_axis(_ravel(operand(arr)), np.flatnonzero(cond), 0)


@implements(np.select)
def _select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("select with an empty condition list is not possible")
    # one dtype for all choices and the default, promoted together (Python scalars weak), as
    # NumPy's; promoting pairwise along the where-chain would widen int8 or float32 results
    dtype = result_type(*(aval_of(c if type(c) in (int, float, complex) else operand(c))
                          for c in (*choicelist, default))).name
    choices = [operand(c) for c in (*choicelist, default)]
    conds = [operand(c) for c in condlist]
    for i, cond in enumerate(conds):
        if aval_of(cond).dtype != np.bool_:
            raise TypeError(f"invalid entry {i} in condlist: should be boolean ndarray")
    out = ops.astype(choices[-1], dtype=dtype)
    for cond, choice in reversed(list(zip(conds, choices))):
        out = ops.where(cond, ops.astype(choice, dtype=dtype), out)
    return out


@implements(np.piecewise, dynamic_only=True)
def _piecewise(x, condlist, funclist, *args, **kw):
    """Each function sees only the elements its condition selects, as in NumPy, so a branch is
    never evaluated (or differentiated) outside its piece; later conditions win. How many
    elements a piece has depends on data, so staging needs constant conditions."""
    x = operand(x)
    shape = _shape(x)
    if isinstance(condlist, np.ndarray | Tracer | bool) and np.ndim(condlist) == len(shape):
        condlist = [condlist]
    conds = [np.broadcast_to(concrete(c, "numpy.piecewise (its pieces depend on data)")
                             .astype(bool), shape).reshape(-1) for c in condlist]
    if len(funclist) == len(conds) + 1:  # the extra function covers "no condition holds"
        conds.append(~np.any(conds, axis=0) if conds else np.ones(math.prod(shape), bool))
    elif len(funclist) != len(conds):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    flat = _reshape(x, (-1,))
    out = ops.zeros_like(flat)
    dtype = aval_of(out).dtype
    for cond, func in zip(conds, funclist):
        where = np.flatnonzero(cond)
        if not where.size:
            continue  # NumPy does not call a function on an empty piece
        value = operand(func(ops.gather(flat, where, index=("array",)), *args, **kw)
                        if callable(func) else func)
        if aval_of(value).dtype != dtype:  # written into x's dtype, as NumPy's y[cond] = ...
            value = ops.astype(value, dtype=dtype.name)
        out = ops.scatter(out, value, where, index=("array",))
    return _reshape(out, shape)


# --- diagonals and triangles -------------------------------------------------------------

def _offset(offset, name):
    """A diagonal's offset as NumPy reads it: an integer (a bool or NumPy integer too)."""
    try:
        return operator.index(offset)
    except TypeError:
        raise TypeError(f"numpy.{name}: the offset must be an integer, got "
                        f"{type(offset).__name__} {offset!r} (use int(offset))") from None


@implements(np.diagonal)
def _diagonal(a, offset=0, axis1=0, axis2=1):
    return _diagonal_of(a, offset, axis1, axis2, "diagonal")


def _diagonal_of(a, offset, axis1, axis2, name):
    a = operand(a)
    offset = _offset(offset, name)
    nd = _ndim(a)
    if nd < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    axis1, axis2 = (one_axis(ax, nd) for ax in (axis1, axis2))
    if axis1 == axis2:
        raise ValueError("axis1 and axis2 cannot be the same")
    t = _transpose(a, [d for d in range(nd) if d not in (axis1, axis2)] + [axis1, axis2])
    rows, cols = _shape(t)[-2:]
    n = max(0, min(rows - max(-offset, 0), cols - max(offset, 0)))
    i = np.arange(n)
    lead = tuple((0, m, 1) for m in _shape(t)[:-2])
    out = ops.gather(t, on_provider_of(t, i + max(-offset, 0)),
                     on_provider_of(t, i + max(offset, 0)), index=lead + ("array",) * 2)
    if isinstance(a, Tracer):  # NumPy's read-only view: stale after writes to a
        mark_view(a, out, READ_ONLY)
    return out


@implements(np.trace)
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    d = _diagonal_of(a, offset, axis1, axis2, "trace")
    return reduction(ops.reduce_sum, d, -1, False, dtype)


@implements(np.diag)
def _diag(v, k=0):
    v = operand(v)
    if _ndim(v) == 2:  # NumPy returns the diagonal view: read-only, stale after writes to v
        return _diagonal_of(v, k, 0, 1, "diag")
    if _ndim(v) != 1:
        raise ValueError("Input must be 1- or 2-d.")
    m = _shape(v)[0]
    n = m + abs(k)
    i = np.arange(m)
    return ops.scatter(ops.zeros_like(v, shape=(n, n)), v, on_provider_of(v, i + max(-k, 0)),
                       on_provider_of(v, i + max(k, 0)), index=("array", "array"))


@implements(np.diagflat)
def _diagflat(v, k=0):
    return _diag(_ravel(operand(v)), k)


def _tri_mask(a, k):
    # as NumPy: the last two axes; a 1-d array (n,) is masked by tri(n), so it broadcasts
    return np.tri(*_shape(a)[-2:], k=k, dtype=bool)


@implements(np.tril)
def _tril(m, k=0):
    m = operand(m)
    return ops.where(on_provider_of(m, _tri_mask(m, k)), m, ops.zeros_like(m, shape=()))


@implements(np.triu)
def _triu(m, k=0):
    m = operand(m)
    return ops.where(on_provider_of(m, _tri_mask(m, k - 1)), ops.zeros_like(m, shape=()), m)


@implements(np.fill_diagonal)
def _fill_diagonal(a, val, wrap=False):
    shape = _shape(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) == 2:
        step = shape[1] + 1
        end = None if wrap else shape[1] * shape[1]
    else:
        if len(set(shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + int(np.cumprod(shape[:-1]).sum())
        end = None
    positions = np.arange(math.prod(shape))[:end:step]
    check_sequential(a, positions, val, "numpy.fill_diagonal")  # NumPy's a.flat[::step] = val
    values = _resize(operand(val), (positions.size,))
    new = ops.scatter(_ravel(a), values, positions, index=("array",))
    assign_inplace(a, _reshape(new, shape), "numpy.fill_diagonal")


@implements(np.diag_indices_from, nondiff=True)
def _diag_indices_from(arr):
    shape = _shape(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length and at least 2")
    return np.diag_indices(shape[0], len(shape))


@implements(np.tril_indices_from, nondiff=True)
def _tril_indices_from(arr, k=0):
    if _ndim(arr) != 2:
        raise ValueError("input array must be 2-d")
    return np.tril_indices(_shape(arr)[-2], k=k, m=_shape(arr)[-1])


@implements(np.triu_indices_from, nondiff=True)
def _triu_indices_from(arr, k=0):
    if _ndim(arr) != 2:
        raise ValueError("input array must be 2-d")
    return np.triu_indices(_shape(arr)[-2], k=k, m=_shape(arr)[-1])


# --- writing functions (functionalized) ------------------------------------------------------

@implements(np.put)
def _put(a, ind, v, mode="raise"):
    ind = _ravel(_take_indices(ind))  # cast to integers as np.take's
    n = math.prod(_shape(a))
    ind = _fix_mode(ind, n, mode, "put")
    values = _resize(operand(v), (_shape(ind)[0],))
    new = ops.scatter(_ravel(a), values, ind, index=("array",))
    if numpy_scalar(a):  # NumPy puts into a temporary copy of a scalar
        return
    assign_inplace(a, _reshape(new, _shape(a)), "numpy.put")


@implements(np.putmask)
def _putmask(a, mask, values):
    mask = operand(mask)
    if _shape(mask) != _shape(a):  # NumPy pairs mask and data element by element, flat
        if math.prod(_shape(mask)) != math.prod(_shape(a)):
            raise ValueError("putmask: mask and data must be the same size")
        mask = _reshape(mask, _shape(a))
    values = operand(values)
    if not math.prod(_shape(values)):  # NumPy writes nothing from no values
        return
    new = ops.where(mask, _resize(values, _shape(a)), a)
    assign_inplace(a, new, "numpy.putmask")


@implements(np.place, dynamic_only=True)
def _place(arr, mask, vals):
    mask = concrete(mask, "np.place (which positions it writes depends on data)")
    if np.size(mask) != math.prod(_shape(arr)):  # paired with arr element by element, flat
        raise ValueError(f"place: mask and data must be the same size (mask has "
                         f"{np.size(mask)} elements, arr {math.prod(_shape(arr))})")
    positions = np.flatnonzero(mask)
    vals = operand(vals)
    if positions.size and not math.prod(_shape(vals)):
        raise ValueError("Cannot insert from an empty array! np.place needs at least one "
                         "value where the mask is true")
    values = _resize(vals, (positions.size,))
    new = ops.scatter(_ravel(arr), values, positions, index=("array",))
    assign_inplace(arr, _reshape(new, _shape(arr)), "numpy.place")


@implements(np.copyto)
def _copyto(dst, src, casting="same_kind", where=True):
    weak = type(src) in (bool, int, float, complex)
    src = operand(src)
    if casting not in _CASTINGS:
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
                         f"'unsafe' (got {casting!r})")
    dtype = aval_of(dst).dtype
    if aval_of(src).dtype != dtype and (casting == "unsafe" or not weak):
        if not np.can_cast(aval_of(src).dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {aval_of(src).dtype!r} to {dtype!r} "
                            f"according to the rule {casting!r}")
        src = ops.astype(src, dtype=dtype.name)  # the rule holds, so write in dst's dtype
    if where is True:
        new = ops.broadcast_to(src, shape=_shape(dst)) if _shape(src) != _shape(dst) else src
    else:
        from ._ufuncs import where_mask  # (_ufuncs imports this module's package first)
        new = ops.where(where_mask(where, "numpy.copyto"), src, dst)
        if _shape(new) != _shape(dst):
            new = ops.broadcast_to(new, shape=_shape(dst))
    assign_inplace(dst, new, "numpy.copyto")


# --- data-dependent index queries (dynamic only) ---------------------------------------------

@implements(np.nonzero, dynamic_only=True, nondiff=True)
def _nonzero(a):
    return np.nonzero(concrete(a, "np.nonzero (its output shape depends on data)"))


@implements(np.flatnonzero, dynamic_only=True, nondiff=True)
def _flatnonzero(a):
    return np.flatnonzero(concrete(a, "np.flatnonzero (its output shape depends on data)"))


@implements(np.argwhere, dynamic_only=True, nondiff=True)
def _argwhere(a):
    return np.argwhere(concrete(a, "np.argwhere (its output shape depends on data)"))


# --- index conversions -----------------------------------------------------------------------

@implements(np.ravel_multi_index, nondiff=True)
def _ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    dims = tuple(int(d) for d in dims)
    modes = (mode,) * len(dims) if isinstance(mode, str) else tuple(mode)
    strides = np.cumprod((1,) + dims[::-1][:-1])[::-1] if order == "C" else np.cumprod(
        (1,) + dims[:-1])
    out = 0
    for idx, n, stride, m in zip(multi_index, dims, strides, modes):
        out = ops.add(out, ops.multiply(_fix_mode(operand(idx), n, m, "ravel_multi_index"),
                                        int(stride)))
    return out


@implements(np.unravel_index, nondiff=True)
def _unravel_index(indices, shape, order="C"):
    shape = (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(n) for n in shape)
    indices = operand(indices)
    out = []
    dims = shape[::-1] if order == "C" else shape
    for n in dims:
        out.append(ops.remainder(indices, n))
        indices = ops.floor_divide(indices, n)
    return tuple(out[::-1] if order == "C" else out)


@implements(np.ix_, nondiff=True)
def _ix(*args):
    out = []
    for k, a in enumerate(args):
        a = operand(a)
        if aval_of(a).dtype.kind == "b":
            a = np.flatnonzero(a)  # dynamic-only when the mask is traced
        shape = [1] * len(args)
        shape[k] = _shape(a)[0]
        out.append(_reshape(a, tuple(shape)))
    return tuple(out)


# --- applying functions along axes -----------------------------------------------------------

@implements(np.apply_along_axis)
def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    arr = operand(arr)
    nd = _ndim(arr)
    axis = one_axis(axis, nd)
    moved = _moveaxis(arr, axis, -1)
    lead = _shape(moved)[:-1]
    results = [operand(func1d(moved[idx], *args, **kwargs)) for idx in np.ndindex(*lead)]
    res_shape = _shape(results[0])
    out = _reshape(_stack(results), lead + res_shape)
    r = len(res_shape)
    perm = list(range(axis)) + list(range(len(lead), len(lead) + r)) + list(
        range(axis, len(lead)))
    return _transpose(out, perm)


@implements(np.apply_over_axes)
def _apply_over_axes(func, a, axes):
    a = operand(a)
    for axis in (axes,) if isinstance(axes, int) else axes:
        axis = one_axis(axis, _ndim(a))
        res = func(a, axis)
        if _ndim(res) != _ndim(a):
            res = ops.expand_dims(res, axes=(axis,))
            if _ndim(res) != _ndim(a):
                raise ValueError("function is not returning an array of the correct shape")
        a = res
    return a

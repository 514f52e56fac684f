"""NumPy's joining, splitting, tiling, flipping and resizing functions on traced arrays.

All are composites of the shape and indexing ops; index maps that depend only on shapes are
computed with NumPy on ``arange`` and applied as one gather.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import ops
from .._compat import NUMPY_VERSION, present
from ..core import Tracer
from ..dtypes import aval_of
from ..errors import bounded
from ..ops._rules import each_axis, index_tuple, normalize_axes, one_axis
from ._functions import (
    _concatenate,
    _flip,
    _moveaxis,
    _ndim,
    _ravel,
    _reshape,
    _shape,
    _transpose,
    astype,
    concrete,
    flat_axis,
    implements,
    lift,
    operand,
    slice_along,
    take_axis,
)
from ._indexing import getitem
from ._mutation import READ_ONLY, mark_array, mark_view, owned_copy


def _reshaped_views(arys, shapes):
    """Each operand in its new shape: itself where that is its shape, else NumPy's reshaped
    view (a transformed view of a traced operand: read-only, stale after writes to it)."""
    out = []
    for a, shape in zip(arys, shapes):
        if shape == _shape(a):
            out.append(a)
            continue
        view = _reshape(a, shape)
        if isinstance(a, Tracer):
            mark_view(a, view, None)
        out.append(view)
    return out[0] if len(out) == 1 else tuple(out)


@implements(np.atleast_1d)
def _atleast_1d(*arys):
    arys = [operand(a) for a in arys]
    return _reshaped_views(arys, [_shape(a) or (1,) for a in arys])


@implements(np.atleast_2d)
def _atleast_2d(*arys):
    arys = [operand(a) for a in arys]
    return _reshaped_views(arys, [(1,) * (2 - _ndim(a)) + _shape(a) for a in arys])


@implements(np.atleast_3d)
def _atleast_3d(*arys):
    arys = [operand(a) for a in arys]
    return _reshaped_views(arys, [
        {0: (1, 1, 1), 1: (1, *_shape(a), 1), 2: (*_shape(a), 1)}.get(_ndim(a), _shape(a))
        for a in arys])


@implements(np.hstack)
def _hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = _atleast_1d(*tup)
    arrs = arrs if isinstance(arrs, tuple) else (arrs,)
    return _concatenate(arrs, 0 if _ndim(arrs[0]) == 1 else 1, dtype=dtype, casting=casting)


@implements(np.vstack)
def _vstack(tup, *, dtype=None, casting="same_kind"):
    arrs = _atleast_2d(*tup)
    return _concatenate(arrs if isinstance(arrs, tuple) else (arrs,), 0, dtype=dtype,
                        casting=casting)


@implements(np.dstack)
def _dstack(tup):
    arrs = _atleast_3d(*tup)
    return _concatenate(arrs if isinstance(arrs, tuple) else (arrs,), 2)


@implements(np.column_stack)
def _column_stack(tup):
    arrs = [operand(a) for a in tup]
    arrs = [_reshape(a, (-1, 1)) if _ndim(a) < 2 else a for a in arrs]
    return _concatenate(arrs, 1)


def _block_depth(arrays):
    return 1 + _block_depth(arrays[0]) if isinstance(arrays, list) else 0


def _block(arrays, depth, ndim):
    if not isinstance(arrays, list):
        a = operand(arrays)
        return _reshape(a, (1,) * (ndim - _ndim(a)) + _shape(a)) if _ndim(a) < ndim else a
    parts = [_block(a, depth - 1, ndim) for a in arrays]
    return _concatenate(parts, -depth)


def _block_max_ndim(arrays):
    if isinstance(arrays, list):
        return max(_block_max_ndim(a) for a in arrays)
    return _ndim(operand(arrays))


@implements(np.block)
def _block_impl(arrays):
    if isinstance(arrays, tuple):
        raise TypeError("np.block: arrays is a tuple; only lists can be used to arrange blocks")
    depth = _block_depth(arrays)
    return _block(arrays, depth, max(depth, _block_max_ndim(arrays)))


# --- splitting -------------------------------------------------------------------------------

@implements(np.array_split)
def _array_split(ary, indices_or_sections, axis=0):
    ary = operand(ary)
    axis = one_axis(axis, _ndim(ary))
    n = _shape(ary)[axis]
    sections = _sections(indices_or_sections)
    if sections is not None:
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = divmod(n, sections)
        sizes = [each + 1] * extra + [each] * (sections - extra)
        bounds = np.concatenate([[0], np.cumsum(sizes)])
    else:
        bounds = [0, *indices_or_sections, n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo, hi, _ = slice(operator.index(lo), operator.index(hi)).indices(n)  # 1.0: TypeError
        if isinstance(ary, Tracer):  # a basic index: the piece is a view, as NumPy's
            out.append(getitem(ary, (slice(None),) * axis + (slice(lo, max(lo, hi)),)))
        else:
            out.append(slice_along(ary, lo, max(lo, hi), axis))
    return out


def _sections(indices_or_sections):
    """The number of equal sections, or None for split indices (NumPy tries ``len()``, so a
    0-d array is a number)."""
    try:
        len(indices_or_sections)
    except TypeError:
        return int(indices_or_sections)
    return None


@implements(np.split)
def _split(ary, indices_or_sections, axis=0):
    sections = _sections(indices_or_sections)
    if sections is not None:
        n = _shape(operand(ary))[one_axis(axis, _ndim(ary))]
        if n % indices_or_sections:  # NumPy's test, before int(): 1.5 sections of 2 fail
            raise ValueError("array split does not result in an equal division")
    return _array_split(ary, indices_or_sections, axis)


@implements(np.hsplit)
def _hsplit(ary, indices_or_sections):
    if _ndim(ary) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return _split(ary, indices_or_sections, 1 if _ndim(ary) > 1 else 0)


@implements(np.vsplit)
def _vsplit(ary, indices_or_sections):
    if _ndim(ary) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(ary, indices_or_sections, 0)


@implements(np.dsplit)
def _dsplit(ary, indices_or_sections):
    if _ndim(ary) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(ary, indices_or_sections, 2)


@implements(*present(np, "unstack"))  # NumPy 2.1+
def _unstack(x, /, *, axis=0):
    axis = one_axis(axis, _ndim(x))
    if isinstance(x, Tracer):  # x[:, ..., i]: views, as NumPy's
        return tuple(getitem(x, (slice(None),) * axis + (i,)) for i in range(_shape(x)[axis]))
    index = tuple((0, n, 1) for n in _shape(x)[:axis])
    return tuple(ops.gather(x, index=index + (i,)) for i in range(_shape(x)[axis]))


# --- tiling, repeating, resizing -------------------------------------------------------------

@implements(np.tile)
def _tile(A, reps):
    A = operand(A)
    reps = index_tuple(reps)
    shape = _shape(A)
    d = max(len(shape), len(reps))
    shape = (1,) * (d - len(shape)) + shape
    reps = (1,) * (d - len(reps)) + reps
    # interleave a broadcast axis of length r before each axis, then merge the pairs
    expanded = _reshape(A, tuple(x for n in shape for x in (1, n)))
    big = ops.broadcast_to(expanded, shape=tuple(x for r, n in zip(reps, shape) for x in (r, n)))
    return _reshape(big, tuple(r * n for r, n in zip(reps, shape)))


@implements(np.repeat)
def _repeat(a, repeats, axis=None):
    a = operand(a)
    if axis is None or not _ndim(a):  # NumPy repeats a 0-d array as a 1-element 1-d one
        a, axis = _ravel(a), 0 if axis is None else axis
    axis = one_axis(axis, _ndim(a))
    n = _shape(a)[axis]
    if isinstance(repeats, Tracer):  # others as given: NumPy casts a Python float 2.0 weakly
        repeats = concrete(repeats, "np.repeat with traced repeats (its output shape depends "
                           "on data)")
    return take_axis(a, np.repeat(np.arange(n), repeats), axis)


@implements(np.resize)
def _resize(a, new_shape):
    a = _ravel(operand(a))
    # NumPy takes one integer or a sequence here; a 0-d array raises TypeError as in NumPy
    new_shape = index_tuple((new_shape,) if isinstance(new_shape, int | np.integer)
                            else tuple(new_shape))
    if any(n < 0 for n in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    size = math.prod(new_shape)
    n = _shape(a)[0]
    if n == 0 or size == 0:
        return ops.zeros_like(a, shape=new_shape)
    return _reshape(take_axis(a, np.arange(size) % n, 0), new_shape)


@implements(np.trim_zeros, dynamic_only=True)
def _trim_zeros(filt, trim="fb", axis=None):
    trim = trim.lower()
    if set(trim) - {"f", "b"} and NUMPY_VERSION >= (2, 2):  # NumPy checks trim from 2.2 on
        raise ValueError(f"unexpected character(s) in `trim`: {bounded(trim)}")
    value = concrete(filt, "np.trim_zeros (its output shape depends on data)")
    axes = range(value.ndim) if axis is None else normalize_axes(axis, value.ndim)
    out = filt
    for ax in axes:
        other = tuple(i for i in range(value.ndim) if i != ax)
        nz = np.flatnonzero(np.any(value != 0, axis=other) if other else value != 0)
        n = value.shape[ax]
        lo = (nz[0] if nz.size else n) if "f" in trim else 0
        hi = (nz[-1] + 1 if nz.size else lo) if "b" in trim else n
        out = slice_along(out, int(lo), int(max(lo, hi)), ax)
    return out


# --- flips and axis moves --------------------------------------------------------------------

@implements(np.fliplr)
def _fliplr(m):
    if _ndim(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return _flip(m, 1)


@implements(np.flipud)
def _flipud(m):
    if _ndim(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return _flip(m, 0)


@implements(np.rot90)
def _rot90(m, k=1, axes=(0, 1)):
    ndim = _ndim(m)
    axes = each_axis(axes, ndim)
    if len(axes) != 2 or axes[0] == axes[1]:
        raise ValueError("len(axes) must be 2 and the axes must be different")
    a0, a1 = axes
    k %= 4
    if k == 0:
        return m
    if k == 2:
        return _flip(m, (a0, a1))
    perm = list(range(ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return _transpose(_flip(m, a1), perm)
    return _flip(_transpose(m, perm), a1)


@implements(np.rollaxis)
def _rollaxis(a, axis, start=0):
    n = _ndim(a)
    axis = one_axis(axis, n)
    if not -n <= start <= n:
        raise np.exceptions.AxisError(f"start={start} out of range for {n} dimensions")
    start %= n + 1
    if axis < start:
        start -= 1
    return a if axis == start else _moveaxis(a, axis, start)


@implements(np.matrix_transpose)
def _matrix_transpose(x, /):
    if _ndim(x) < 2:
        raise ValueError("Input array must be at least 2-dimensional")
    return ops.matrix_transpose(x)


def _broadcast_arrays(*args):
    """The operands broadcast against each other: new values, or the operands themselves."""
    args = [operand(a) for a in args]
    shape = np.broadcast_shapes(*(_shape(a) for a in args))
    return tuple(a if _shape(a) == shape else ops.broadcast_to(a, shape=shape) for a in args)


@implements(np.broadcast_arrays)
def _broadcast_array_views(*args, subok=False):
    """NumPy's pieces are views of the operands (read-only where broadcast, as NumPy is
    making them): fresh after a write through a piece that is its operand, stale after other
    writes to an operand."""
    out = _broadcast_arrays(*args)
    for a, piece in zip(args, out):
        if isinstance(a, Tracer) and piece is not a:
            mark_view(a, piece, READ_ONLY)
    return out


@implements(np.ascontiguousarray, np.asfortranarray, like=True)
def _ascontiguousarray(a, dtype=None, *, like=None):
    a = operand(a)
    a = a if dtype is None else astype(a, dtype)
    return a if isinstance(a, Tracer) else lift(like, a)


@implements(np.require, like=True)
def _require(a, dtype=None, requirements=None, *, like=None):
    return _ascontiguousarray(a, dtype, like=like)


@implements(np.astype)
def _astype_function(x, dtype, /, *, copy=True, device=None):
    out = astype(x, dtype)
    if not isinstance(x, Tracer) or out is x and not copy:
        return out
    out = owned_copy(out) if out is x else out
    return mark_array(out) if x._mut is not None else out  # a 0-d array's cast is an array


# --- append, insert, delete ------------------------------------------------------------------

@implements(np.append)
def _append(arr, values, axis=None):
    arr, values = operand(arr), operand(values)
    if axis is None:
        return _concatenate([_ravel(arr), _ravel(values)], 0)
    return _concatenate([arr, values], axis)


@implements(np.delete)
def _delete(arr, obj, axis=None):
    arr, axis = flat_axis(arr, axis)
    n = _shape(arr)[axis]
    obj = concrete(obj, "np.delete with traced positions") if not isinstance(obj, slice) else obj
    return take_axis(arr, np.delete(np.arange(n), obj), axis)


@implements(np.insert)
def _insert(arr, obj, values, axis=None):
    arr, axis = flat_axis(arr, axis)
    shape = _shape(arr)
    n = shape[axis]
    if isinstance(obj, slice):
        obj = np.arange(*obj.indices(n))
    obj = concrete(obj, "np.insert with traced positions")
    if obj.size == 0 and obj.ndim:  # no positions: NumPy returns a copy
        obj = obj.astype(np.intp)
    if obj.dtype.kind in "fc":  # NumPy's TypeError, never a truncated position
        raise TypeError("numpy.insert: slice indices must be integers or None or have an "
                        f"__index__ method, not {obj.dtype}")
    values = operand(values)
    values = astype(values, aval_of(arr).dtype)
    if obj.size == 1:  # NumPy inserts the values whole at one position: ``ndmin`` leading
        vshape = _shape(values)  # axes, and a scalar position moves the first one to ``axis``
        values = _reshape(values, (1,) * (len(shape) - len(vshape)) + vshape)
        if obj.ndim == 0:
            values = _moveaxis(values, 0, axis)
        count = _shape(values)[axis]
        obj = int(obj.item())
    else:
        count = obj.size
    target = shape[:axis] + (count,) + shape[axis + 1:]
    block = ops.broadcast_to(values, shape=target) if _shape(values) != target else values
    positions = np.insert(np.arange(n), obj, np.arange(n, n + count))
    return take_axis(_concatenate([arr, block], axis), positions, axis)

"""Ufunc methods on traced arrays: ``reduce``, ``accumulate``, ``reduceat``, ``outer``, ``at``.

Each method is written with the ufunc's own translation, so it is differentiable wherever the
ufunc is. Common reductions and scans map to one op (``add.reduce`` is ``reduce_sum``,
``multiply.accumulate`` is ``cumulative_prod``, ``maximum.accumulate`` is ``cumulative_max``,
``logaddexp.reduce`` is ``reduce_logaddexp``, NumPy's own fold, ``logaddexp.accumulate`` a
log-depth prefix scan);
associative ufuncs with an identity accumulate by the same scan; any other ufunc folds over the
reduced axis one element at a time, exactly as NumPy defines the method.

``ufunc.at`` is functionalized: it repoints the owned local array it updates. Repeated indices
apply one after another, as in NumPy: ``add.at`` and ``subtract.at`` through ``scatter_add``
(which accumulates them), other ufuncs in rounds of distinct targets. Results are cast to the
array's dtype as NumPy does.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import Aval, aval_of, result_type
from ..errors import TracingError
from ..ops._rules import broadcast_shapes, normalize_axes, one_axis, reduced_shape
from ..ops.indexing import index_shape
from ._functions import numpy_scalar, reduction_axis
from ._methods import _operand
from ._reductions import keepdims_flag
from ._ufuncs import _cast, _name, translation, where_mask, write_out

__all__ = ["METHODS", "method_defined", "call_method"]

METHODS = ("reduce", "accumulate", "reduceat", "outer", "at")
# reduce, accumulate and reduceat write out= whatever its dtype, as NumPy's (which casts there
# unsafely: add.reduce of floats into an int out= truncates the float sums)
_OUT_CASTING = "unsafe"
_NoValue = np._NoValue


def method_defined(ufunc, method: str) -> bool:
    """Whether NumPy defines ``ufunc.<method>`` (gufuncs such as matmul define none)."""
    if ufunc.signature is not None:
        return False
    if method == "outer":
        return ufunc.nin == 2
    if method == "at":
        return ufunc.nout == 1
    return ufunc.nin == 2 and ufunc.nout == 1


def call_method(ufunc, method, inputs, kwargs):
    what = f"{_name(ufunc)}.{method}"
    if method not in METHODS:
        raise TracingError(f"{what} is not supported on traced arrays")
    if not method_defined(ufunc, method):
        raise ValueError(f"{what} is not defined: NumPy defines reduce, accumulate and reduceat "
                         "for binary ufuncs with one output, outer for binary ufuncs and at for "
                         "ufuncs with one output, none for gufuncs such as matmul")
    found = translation(ufunc)
    if found is None:
        raise TracingError(f"{_name(ufunc)} is not supported on traced arrays; see "
                           "advect.support_catalog() for the supported ufuncs")
    return _IMPLS[method](ufunc, found, what, *inputs, **kwargs)


def _out_tuple(out):
    return out if isinstance(out, tuple) or out is None else (out,)


# --- reduce ----------------------------------------------------------------------------------

def _nan_ignoring(reduce, fill):
    def fast(a, axes, keepdims):
        if aval_of(a).dtype.kind not in "fc":
            return reduce(a, axes=axes, keepdims=keepdims)
        nan = ops.isnan(a)
        result = reduce(ops.where(nan, fill, a), axes=axes, keepdims=keepdims)
        return ops.where(ops.reduce_min(nan, axes=axes, keepdims=keepdims), math.nan, result)
    return fast


def _as_bool(a):
    return a if aval_of(a).dtype.kind == "b" else ops.not_equal(a, 0)


_FAST_REDUCE = {
    np.add: lambda a, axes, k: ops.reduce_sum(a, axes=axes, keepdims=k),
    np.multiply: lambda a, axes, k: ops.reduce_prod(a, axes=axes, keepdims=k),
    np.maximum: lambda a, axes, k: ops.reduce_max(a, axes=axes, keepdims=k),
    np.minimum: lambda a, axes, k: ops.reduce_min(a, axes=axes, keepdims=k),
    np.fmax: _nan_ignoring(ops.reduce_max, -math.inf),
    np.fmin: _nan_ignoring(ops.reduce_min, math.inf),
    np.logical_and: lambda a, axes, k: ops.reduce_min(_as_bool(a), axes=axes, keepdims=k),
    np.logical_or: lambda a, axes, k: ops.reduce_max(_as_bool(a), axes=axes, keepdims=k),
    np.logaddexp: lambda a, axes, k: ops.reduce_logaddexp(a, base="e", axes=axes, keepdims=k),
    np.logaddexp2: lambda a, axes, k: ops.reduce_logaddexp(a, base="2", axes=axes, keepdims=k),
}


def _fold_dtype(ufunc, a, what, scan=False):
    """The dtype of the running result, raising as NumPy does when it cannot meet the next
    element in one loop (equal.reduce of floats: no loop takes a bool and a float to a bool)."""
    dtype = aval_of(a).dtype
    try:
        result = ufunc.resolve_dtypes((dtype, dtype, None))[-1]
        loop = ufunc.resolve_dtypes((result, dtype, None))
    except TypeError as e:
        raise TypeError(f"{what}: {e}") from None
    if loop[0] != result or loop[-1] != result or (scan and loop[1] != result):
        raise TypeError(f"{what}: the resolved dtypes {loop} are not compatible with the "
                        "method: the running result must keep one dtype")
    return result


def _method_loop(ufunc, dtype, requested, what) -> np.dtype:
    """The dtype NumPy's reduce, accumulate and reduceat of ``dtype`` entries run in, with
    ``requested`` (``dtype=``, or None) fixing it; raises as NumPy does when no loop fits
    (logical_and has no float64 result)."""
    try:
        return ufunc.resolve_dtypes((None, dtype, None), signature=(requested, None, None),
                                    reduction=True, casting="unsafe")[0]
    except TypeError as e:
        raise TypeError(f"{what}: {e}") from None


def _start(item, dtype):
    return item if aval_of(item).dtype == dtype else ops.astype(item, dtype=dtype.name)


def _to_front(x, axes, kept, n, rest):
    """``x`` with the reduced axes moved to the front and flattened into one."""
    if (*axes, *kept) != tuple(range(len(axes) + len(kept))):
        x = ops.permute_dims(x, axes=(*axes, *kept))
    return x if len(axes) == 1 else ops.reshape(x, shape=(n, *rest))


def _fold(ufunc, found, a, axes, keepdims, initial, what, mask=None):
    """NumPy's definition of reduce: ``found`` applied left to right along the reduced axes
    (skipping the entries ``mask`` excludes)."""
    dtype = _fold_dtype(ufunc, a, what)
    shape = aval_of(a).shape
    kept = tuple(d for d in range(len(shape)) if d not in axes)
    rest = tuple(shape[d] for d in kept)
    n = math.prod(shape[d] for d in axes)
    x = _to_front(a, axes, kept, n, rest)
    acc = None if initial is _NoValue else initial
    if mask is not None:
        mask = _to_front(mask, axes, kept, n, rest)
        if acc is None:
            acc = ufunc.identity
        acc = ops.full_like(x, fill_value=acc, shape=rest, dtype=dtype.name)
    for i in range(n):
        item = ops.gather(x, index=(i,))
        if acc is None:
            acc = _start(item, dtype)
        elif mask is None:
            acc = found(acc, item)
        else:
            acc = ops.where(ops.gather(mask, index=(i,)), found(acc, item), acc)
    if acc is None:
        if ufunc.identity is None:
            raise ValueError(f"{what}: zero-size array to a reduction operation which has no "
                             "identity; pass initial=")
        acc = ufunc.identity
    if not isinstance(acc, Tracer):  # nothing folded: the identity or initial, in the loop's dtype
        acc = ops.full_like(x, fill_value=acc, shape=rest, dtype=dtype.name)
    elif aval_of(acc).shape != rest:
        acc = ops.broadcast_to(acc, shape=rest)
    return ops.reshape(acc, shape=reduced_shape(shape, axes, True)) if keepdims else acc


def reduce_axes(ufunc, found, a, axes, keepdims=False, initial=_NoValue, what="", mask=None):
    """``ufunc.reduce`` of ``a`` over ``axes``; ``mask`` (a boolean array shaped like ``a``)
    leaves entries out, as ``where=`` does."""
    fast = _FAST_REDUCE.get(ufunc)
    log_fold = ufunc is np.logaddexp or ufunc is np.logaddexp2
    if fast is None or log_fold and not (initial is _NoValue or initial is None):
        return _fold(ufunc, found, a, axes, keepdims, initial, what, mask)  # from initial
    if log_fold:  # int8 folds in float16, as NumPy's loop
        a = _start(a, _fold_dtype(ufunc, a, what))
    if mask is not None and ufunc is np.add:  # NumPy's masked loop adds in its own order
        def fast(a, axes, keepdims):
            return ops.reduce_sum_where(a, mask, axes=axes, keepdims=keepdims)
    elif mask is not None:  # an identity drops out; without one the op is idempotent (max, min)
        a = ops.where(mask, a, initial if ufunc.identity is None else ufunc.identity)
    shape = aval_of(a).shape
    if initial is not _NoValue and initial is not None and not isinstance(initial, Tracer) \
            and any(shape[d] == 0 for d in axes):  # nothing to reduce: initial (a loop scalar)
        return ops.full_like(a, fill_value=initial, shape=reduced_shape(shape, axes, keepdims),
                             dtype=np.asarray(initial).dtype.name)
    if initial is _NoValue or initial is None:
        return fast(a, axes, keepdims)
    if ufunc is np.add:  # NumPy's loop starts at initial
        return ops.reduce_sum_initial(a, initial, axes=axes, keepdims=keepdims) if mask is None \
            else ops.reduce_sum_where_initial(a, mask, initial, axes=axes, keepdims=keepdims)
    if ufunc is np.multiply:
        return ops.reduce_prod_initial(a, initial, axes=axes, keepdims=keepdims)
    return found(fast(a, axes, keepdims), initial)


def _check_reorderable(ufunc, dtype, what):
    """NumPy reduces a ufunc over several axes only when the order does not matter (subtract,
    divide, power, arctan2 refuse); its own reduce of a tiny array says which."""
    try:
        ufunc.reduce(np.ones((1, 1), dtype=dtype), axis=(0, 1))
    except ValueError as e:
        raise ValueError(f"{what}: {e}") from None
    except TypeError:
        pass  # a dtype the loop refuses is reported by the reduction itself


def _reduce(ufunc, found, what, array, axis=0, dtype=None, out=None, keepdims=False,
            initial=_NoValue, where=True):
    a = _operand(array)
    if aval_of(a).weak:  # a Python scalar is a 0-d array to NumPy's reduce
        a = ops.astype(a, dtype=aval_of(a).dtype.name)
    requested = None if dtype is None else np.dtype(dtype)
    loop = _method_loop(ufunc, aval_of(a).dtype, requested, what)
    if requested is not None:
        a = _cast(a, requested, "unsafe", what)
    if initial is not _NoValue and initial is not None and not isinstance(initial, Tracer):
        initial = np.array(initial, dtype=loop)  # in the loop's dtype, as NumPy casts it
        if initial.ndim:
            raise ValueError(f"{what}: setting an array element with a sequence: initial= is "
                             f"one scalar, got shape {initial.shape}")
        initial = initial[()]
    keepdims = keepdims_flag(keepdims)
    if not aval_of(a).ndim and type(axis) is int and axis in (0, -1):
        axis = ()  # NumPy reduces a 0-d array along "axis 0" to itself
    axes = normalize_axes(reduction_axis(axis), aval_of(a).ndim)
    if len(axes) > 1:
        _check_reorderable(ufunc, aval_of(a).dtype, what)
    mask = None
    if where is not True:
        if ufunc.identity is None and initial is _NoValue:
            raise ValueError(f"{what}: the reduction has no identity, so where= needs initial= "
                             "for the masked entries")
        mask = where_mask(where, what)
        if aval_of(mask).shape != aval_of(a).shape:
            mask = ops.broadcast_to(mask, shape=aval_of(a).shape)
    if initial is _NoValue and ufunc not in _FAST_REDUCE and ufunc.identity is not None:
        # NumPy's reduce starts there, in the loop's dtype: hypot.reduce([-3.]) is 3.0
        initial = np.asarray(ufunc.identity).astype(_fold_dtype(ufunc, a, what))[()]
    result = reduce_axes(ufunc, found, a, axes, keepdims, initial, what, mask)
    if requested is not None:  # add.reduce sums int16 in int64 (as np.sum); dtype= is the result's
        result = _start(result, requested)
    if out is None:
        return numpy_scalar(result)  # a reduction to 0-d gives a NumPy scalar
    return write_out(_out_tuple(out), result, _OUT_CASTING, what)


# --- accumulate and reduceat ------------------------------------------------------------------

_FAST_ACCUMULATE = {np.add: ops.cumulative_sum, np.multiply: ops.cumulative_prod,
                    np.maximum: ops.cumulative_max, np.minimum: ops.cumulative_min}


# associative ufuncs with an identity accumulate by a log-depth prefix scan
_ASSOCIATIVE = frozenset({np.logaddexp, np.logaddexp2, np.hypot, np.logical_and,
                          np.logical_or, np.logical_xor, np.bitwise_and, np.bitwise_or,
                          np.bitwise_xor, np.gcd})


def _prefix_scan(found, y, axis, identity):
    """Hillis-Steele: combine each entry with the one ``step`` before it, step = 1, 2, 4, ..."""
    aval = aval_of(y)
    n = aval.shape[axis]
    first, step = y, 1
    while step < n:
        front = list(aval.shape)
        front[axis] = step
        # cast as NumPy does: bitwise_and's identity -1 is all bits set, 255 for uint8
        fill = np.asarray(identity).astype(aval.dtype).item()
        pad = ops.full_like(y, fill_value=fill, shape=tuple(front), dtype=aval.dtype.name)
        before = ops.concat(pad, ops.slice_axis(y, start=0, stop=n - step, axis=axis), axis=axis)
        y = found(before, y)
        step *= 2
    if n > 1:  # the first entry is the input's own, as in NumPy (hypot.accumulate([-3.]) is -3)
        y = ops.concat(ops.slice_axis(first, start=0, stop=1, axis=axis),
                       ops.slice_axis(y, start=1, stop=n, axis=axis), axis=axis)
    return y if n > 1 else first


def _single_axis(axis, ndim, method, what):
    """The one axis of accumulate or reduceat: an integer or a 1-tuple, or None for a 1-d
    array, as NumPy reads it (which checks bounds before the count)."""
    axes = normalize_axes(axis, ndim) if axis is None or isinstance(axis, tuple) \
        else (one_axis(axis, ndim),)
    if len(axes) != 1:
        raise ValueError(f"{what}: {method} does not allow multiple axes (got axis={axis!r}); "
                         "pass one integer axis")
    return axes[0]


def _accumulate(ufunc, found, what, array, axis=0, dtype=None, out=None):
    a = _operand(array)
    requested = None if dtype is None else np.dtype(dtype)
    if requested is not None:
        _method_loop(ufunc, aval_of(a).dtype, requested, what)
        a = _cast(a, requested, "unsafe", what)
    ndim = aval_of(a).ndim
    if ndim == 0:
        raise TypeError(f"{what}: cannot accumulate on a scalar")
    axis = _single_axis(axis, ndim, "accumulate", what)
    fast = _FAST_ACCUMULATE.get(ufunc)
    if fast is not None:
        result = fast(a, axis=axis)
    elif ufunc in _ASSOCIATIVE:
        result = _prefix_scan(found, _start(a, _fold_dtype(ufunc, a, what, scan=True)), axis,
                              ufunc.identity)
    else:
        dtype = _fold_dtype(ufunc, a, what, scan=True)
        acc, parts = None, []
        for i in range(aval_of(a).shape[axis]):
            item = ops.slice_axis(a, start=i, stop=i + 1, axis=axis)
            acc = _start(item, dtype) if acc is None else found(acc, item)
            parts.append(acc)
        result = ops.concat(*parts, axis=axis) if parts else a
    if requested is not None:  # cumulative_sum widens int16 to int64; dtype= is the result's
        result = _start(result, requested)
    return result if out is None else write_out(_out_tuple(out), result, _OUT_CASTING, what)


def _segment_sums(a, indices, axis, n):
    """``add.reduceat`` as one gather and one ``scatter_add`` (segment ids are constants)."""
    sources, targets = [], []
    for k, i in enumerate(indices):
        j = indices[k + 1] if k + 1 < len(indices) else n
        stop = j if i < j else i + 1
        sources.extend(range(i, stop))
        targets.extend([k] * (stop - i))
    dtype = np.add.reduce(np.zeros(0, aval_of(a).dtype)).dtype  # NumPy's sum promotion
    a = _start(a, dtype)
    index = ((None, None, None),) * axis + ("array",)
    picked = ops.gather(a, np.array(sources), index=index)
    shape = list(aval_of(a).shape)
    shape[axis] = len(indices)
    zeros = ops.zeros_like(a, shape=tuple(shape), dtype=dtype.name)
    return ops.scatter_add(zeros, picked, np.array(targets), index=index)


def _reduceat(ufunc, found, what, array, indices, axis=0, dtype=None, out=None):
    a = _operand(array)
    requested = None if dtype is None else np.dtype(dtype)
    if requested is not None:
        _method_loop(ufunc, aval_of(a).dtype, requested, what)
        a = _cast(a, requested, "unsafe", what)
    if isinstance(indices, Tracer):  # the segment lengths come from the data: dynamic only
        indices = indices._concrete_for(f"{what} with traced indices")
    indices = np.asarray(indices)
    if indices.ndim > 1:
        raise ValueError(f"{what}: indices must be 1-d (one start per segment), got shape "
                         f"{indices.shape}")
    indices = [int(i) for i in indices.reshape(-1)]
    axis = _single_axis(axis, aval_of(a).ndim, "reduceat", what)
    n = aval_of(a).shape[axis]
    for i in indices:
        if not 0 <= i < n:
            raise IndexError(f"{what}: index {i} out-of-bounds in [0, {n})")
    if ufunc is np.add:
        result = _segment_sums(a, indices, axis, n)
        if requested is not None:  # segment sums of int16 are int64; dtype= is the result's
            result = _start(result, requested)
        return result if out is None else write_out(_out_tuple(out), result, _OUT_CASTING, what)
    dtype = None if ufunc in _FAST_REDUCE else _fold_dtype(ufunc, a, what, scan=True)
    pieces = []
    for k, i in enumerate(indices):
        j = indices[k + 1] if k + 1 < len(indices) else n
        if i < j:
            segment = ops.slice_axis(a, start=i, stop=j, axis=axis)
            pieces.append(reduce_axes(ufunc, found, segment, (axis,), True, what=what))
            dtype = aval_of(pieces[-1]).dtype
        else:
            pieces.append(ops.slice_axis(a, start=i, stop=i + 1, axis=axis))
    if dtype is not None:  # single-element segments take the dtype of the reduced ones
        pieces = [_start(p, dtype) for p in pieces]
    result = ops.concat(*pieces, axis=axis)
    if requested is not None:
        result = _start(result, requested)
    return result if out is None else write_out(_out_tuple(out), result, _OUT_CASTING, what)


# --- outer and at ------------------------------------------------------------------------------

def _outer(ufunc, found, what, a, b, **kwargs):
    from ._ufuncs import call_ufunc

    # outer makes arrays of its operands first: a Python scalar, traced or not, is not weak there
    a, b = (np.asarray(v) if isinstance(v, bool | int | float | complex) else _operand(v)
            for v in (a, b))
    a, b = (ops.astype(v, dtype=v.aval.dtype.name) if isinstance(v, Tracer) and v.aval.weak
            else v for v in (a, b))
    trailing = (1,) * aval_of(b).ndim
    if trailing:
        a = ops.reshape(a, shape=(*aval_of(a).shape, *trailing))
    return call_ufunc(ufunc, (a, b), kwargs)


def _advanced_position(index):
    """Where ``x[index]`` puts the broadcast advanced-index dimensions (NumPy's rule: at the
    first advanced index when they are adjacent, else in front)."""
    position, first, previous, adjacent = 0, None, None, True
    for e in index:
        if e is None or isinstance(e, tuple):
            position += 1
            continue
        if previous is not None and previous != position:
            adjacent = False
        first = position if first is None else first
        previous = position
    return first if adjacent else 0


def _rounds(flat, index, shape):
    """The flattened index positions in rounds of distinct targets: the r-th round holds each
    target's r-th occurrence, so applying the rounds in order applies repeats in order. Traced
    index arrays have no values to group by: then every position is its own round."""
    m = len(flat[0]) if isinstance(flat[0], np.ndarray) else aval_of(flat[0]).shape[0]
    if not all(isinstance(x, np.ndarray) for x in flat):
        return [np.array([p]) for p in range(m)]
    if m == 0:
        return []
    dims = [d for d, e in enumerate(e for e in index if e is not None) if e == "array"]
    keys = np.stack([x % shape[d] for x, d in zip(flat, dims)], axis=1)
    target = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1)
    order = np.argsort(target, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(target[order])) + 1]
    rank = np.empty(m, dtype=np.int64)
    rank[order] = np.arange(m) - np.repeat(starts, np.diff(np.r_[starts, m]))
    return [np.flatnonzero(rank == r) for r in range(rank.max() + 1)]


def _at_with_arrays(found, a, index, arrays, b, dtype, what):
    """``ufunc.at`` with advanced indices, whose entries may repeat."""
    shapes = [aval_of(x).shape for x in arrays]
    common = broadcast_shapes(*shapes)
    m = math.prod(common)
    flat = [np.broadcast_to(x, common).reshape(-1) if isinstance(x, np.ndarray) else
            ops.reshape(x if aval_of(x).shape == common else ops.broadcast_to(x, shape=common),
                        shape=(m,)) for x in arrays]
    lead = _advanced_position(index)
    scalar = b is None or isinstance(b, bool | int | float | complex)
    if not scalar:  # b with the broadcast index dimensions flattened into one
        full = index_shape(a.shape, index, shapes)
        b = ops.reshape(ops.broadcast_to(b, shape=full),
                        shape=(*full[:lead], m, *full[lead + len(common):]))
    new = a
    for positions in _rounds(flat, index, a.shape):
        entries = [x[positions] if isinstance(x, np.ndarray)
                   else ops.gather(x, positions, index=("array",)) for x in flat]
        current = ops.gather(new, *entries, index=index)
        if b is None:
            value = found(current)
        else:
            value = found(current, b if scalar else ops.gather(
                b, positions, index=((None, None, None),) * lead + ("array",)))
        new = ops.scatter(new, _cast(value, dtype, "unsafe", what), *entries, index=index)
    return new


def _adds_in(dtype, b) -> bool:
    """Whether adding ``b`` to entries of ``dtype`` and casting back is adding ``b`` cast to
    ``dtype``: NumPy adds in the promoted dtype and casts each sum (``int8 + 0.7`` rounds after
    the add), which one scatter_add of the cast ``b`` matches only when nothing is widened or
    the widening is between integers (wrapping commutes with adding)."""
    wider = result_type(Aval((), dtype), aval_of(b))
    return wider == dtype or (wider.kind in "iu" and dtype.kind in "iu")


def _at(ufunc, found, what, a, indices, b=None):
    from ._indexing import normalize_index
    from ._mutation import assign_inplace, write_plain

    if not isinstance(a, Tracer):
        write_plain(a, what)
    dtype = aval_of(a).dtype
    # at makes an array of b first: a Python scalar is not weak (int8 + 300 wraps, as NumPy's)
    b = None if b is None else np.asarray(b) if isinstance(b, bool | int | float | complex) \
        else _operand(b)
    index, arrays = normalize_index(a.shape, indices)
    if ufunc in (np.add, np.subtract) and _adds_in(dtype, b):  # scatter_add accumulates repeats
        v = b if ufunc is np.add else ops.negative(b)
        new = ops.scatter_add(a, _cast(v, dtype, "unsafe", what), *arrays, index=index)
    elif not arrays:  # basic indices never repeat
        current = ops.gather(a, index=index)
        value = found(current) if b is None else found(current, b)
        new = ops.scatter(a, _cast(value, dtype, "unsafe", what), index=index)
    else:
        new = _at_with_arrays(found, a, index, arrays, b, dtype, what)
    assign_inplace(a, new, what)


_IMPLS = {"reduce": _reduce, "accumulate": _accumulate, "reduceat": _reduceat,
          "outer": _outer, "at": _at}

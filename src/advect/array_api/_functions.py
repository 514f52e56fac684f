"""Creation, data-type, manipulation, indexing and utility functions on tracers.

Each translation takes the namespace Context first, then the Array API signature, and is
written with canonical ops (composites where no single op matches).
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of, real_dtype
from ..errors import TracingError
from ..numpy._mutation import owned_copy
from ..ops._rules import (
    broadcast_shapes,
    each_axis,
    normalize_axes,
    one_axis,
    reduce_axes,
    scalar_axis,
)
from ..providers import numpy_dtype, same_device
from ._namespace import traced
from ._probes import refuse_nested_as_provider
from ._tables import translates

__all__ = ["shape_of", "cast", "ravel", "check_device", "check_integer", "axis_of", "iota"]


def shape_of(x) -> tuple[int, ...]:
    return aval_of(x).shape


def cast(x, dtype: np.dtype):
    """``x`` as ``dtype`` (no op when it already has it)."""
    return x if aval_of(x).dtype == dtype else ops.astype(x, dtype=dtype.name)


def ravel(x):
    shape = shape_of(x)
    return x if len(shape) == 1 else ops.reshape(x, shape=(math.prod(shape),))


def axis_of(axis: int, ndim: int) -> int:
    return one_axis(axis, ndim)


def as_1d(x, axis):
    """``(x, axis)`` for an op along one axis. A 0-d array with axis 0 or -1 reads as 1-d, as
    NumPy (and array-api-strict) read it for take, repeat, argsort and cumulative sums."""
    if scalar_axis(axis, len(shape_of(x))):
        return ops.reshape(x, shape=(1,)), 0
    return x, axis


def iota(x, shape, axis):
    """Integer positions along ``axis`` of an array of ``shape`` (a constant of ``x``'s trace)."""
    return ops.iota_like(x, shape=tuple(shape), axis=axis)


def check_device(x, device, where: str) -> None:
    """Traced values stay on their device: ``device=`` may only name the one they are on."""
    if device is None or not isinstance(x, Tracer):
        return
    if device != x.device:
        raise TracingError(f"{where}: moving a traced value from device {x.device!r} to "
                           f"{device!r} is not supported; create it on that device instead")


def _reshape_to(x, shape):
    return x if shape_of(x) == tuple(shape) else ops.reshape(x, shape=tuple(shape))


# --- creation --------------------------------------------------------------------------------

def _as_traced(ctx, obj, dtype=None):
    """A (nested) list of tracers, arrays and scalars as one stacked tracer, in the dtype the
    provider's array coercion gives the whole list (found once, at the top)."""
    if not isinstance(obj, list | tuple):
        return obj
    if dtype is None:
        dtype = _coerced_dtype(ctx, obj)
    if not traced(obj):
        return ctx.xp.asarray(obj, dtype=_provider_dtype(ctx, dtype))
    parts = [_as_traced(ctx, e, dtype) for e in obj]
    parts = [_scalar_array(ctx, p, dtype) if isinstance(p, Tracer) and aval_of(p).weak else p
             for p in parts]
    ref = next(p for p in parts if isinstance(p, Tracer))
    parts = [p if hasattr(p, "shape") else ops.full_like(ref, fill_value=p, shape=shape_of(ref),
                                                          dtype=dtype.name) for p in parts]
    return ops.concat(*[ops.expand_dims(cast(p, dtype), axes=(0,)) for p in parts], axis=0)


def _provider_dtype(ctx, dtype: np.dtype):
    return dtype if ctx.xp is np else getattr(ctx.xp, dtype.name)


def _scalar_array(ctx, p, dtype: np.dtype):
    """A traced Python scalar (``x.item()``), which holds no provider, as a 0-d array of the
    namespace's provider in ``dtype``: that provider's zero plus the scalar."""
    if ctx.xp is np:
        return ops.astype(p, dtype=dtype.name)
    return ops.add(ctx.xp.zeros((), dtype=_provider_dtype(ctx, dtype)), p)


def _coerced_dtype(ctx, obj) -> np.dtype:
    """The dtype the provider's array coercion gives ``obj`` (a scalar, an array or a nested
    list of them, tracers among them), asked of the provider with data-free stand-ins: a traced
    Python scalar (``x.item()``) stands for a Python scalar of its kind, so ``[v, 2.0]`` is
    float32 where PyTorch's default is."""
    def stand_in(p):
        if isinstance(p, list | tuple):
            return [stand_in(e) for e in p]
        if not isinstance(p, Tracer):
            return p
        aval = aval_of(p)
        if aval.weak:
            return _EXAMPLES[aval.dtype.kind]
        return ctx.xp.zeros(aval.shape, dtype=_provider_dtype(ctx, aval.dtype))
    return numpy_dtype(ctx.xp.asarray(stand_in(obj)).dtype)


_EXAMPLES = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}  # a Python scalar of each kind


@translates("asarray")
def _asarray(ctx, obj, /, *, dtype=None, device=None, copy=None):
    if copy is False and (not isinstance(obj, Tracer) or (
            dtype is not None and numpy_dtype(dtype) != aval_of(obj).dtype)):
        raise ValueError("asarray: copy=False cannot be honoured for this input")
    if ctx.xp is not np and isinstance(obj, list | tuple) and traced(obj):
        refuse_nested_as_provider(ctx, obj)  # strict refuses arrays inside a list
    out = _as_traced(ctx, obj)
    check_device(out, device, "asarray")
    if isinstance(out, Tracer) and aval_of(out).weak:  # a traced Python scalar (x.item()):
        # the array the provider makes of that Python scalar, which promotes as an array
        out = _scalar_array(ctx, out, _coerced_dtype(ctx, out))
    if dtype is not None:
        out = cast(out, numpy_dtype(dtype))
    return owned_copy(out) if copy and out is obj else out


def _like(ctx, x, fill_value, dtype, device, where):
    check_device(x, device, where)
    dtype = None if dtype is None else numpy_dtype(dtype).name
    return ops.full_like(x, fill_value=fill_value, dtype=dtype)


@translates("empty_like", "zeros_like")
def _zeros_like(ctx, x, /, *, dtype=None, device=None):
    return _like(ctx, x, 0, dtype, device, "zeros_like")


@translates("ones_like")
def _ones_like(ctx, x, /, *, dtype=None, device=None):
    return _like(ctx, x, 1, dtype, device, "ones_like")


@translates("full_like")
def _full_like(ctx, x, /, fill_value, *, dtype=None, device=None):
    if isinstance(fill_value, Tracer):  # a traced fill value stays differentiable
        target = _like(ctx, x, 0, dtype, device, "full_like")
        return ops.add(target, cast(fill_value, aval_of(target).dtype))
    return _like(ctx, x, fill_value, dtype, device, "full_like")


@translates("full")
def _full(ctx, shape, fill_value, *, dtype=None, device=None):
    check_device(fill_value, device, "full")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    dtype = aval_of(fill_value).dtype if dtype is None else numpy_dtype(dtype)
    return _broadcast(cast(fill_value, dtype), shape)


def _triangle(x, k, lower):
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError(f"{'tril' if lower else 'triu'}: x must have at least 2 dimensions")
    rows, cols = iota(x, shape, len(shape) - 2), iota(x, shape, len(shape) - 1)
    offset = ops.subtract(cols, rows)
    keep = ops.less_equal(offset, k) if lower else ops.greater_equal(offset, k)
    return ops.where(keep, x, ops.zeros_like(x))


@translates("tril")
def _tril(ctx, x, /, *, k=0):
    return _triangle(x, int(k), True)


@translates("triu")
def _triu(ctx, x, /, *, k=0):
    return _triangle(x, int(k), False)


@translates("meshgrid")
def _meshgrid(ctx, *arrays, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    devices = [getattr(a, "device", None) for a in arrays]
    if any(not same_device(d, devices[0]) for d in devices[1:]):
        raise ValueError("meshgrid: all input arrays must be on the same device")
    arrays = [ravel(a) for a in arrays]  # N-d inputs count as flat, as NumPy reads them
    sizes = [shape_of(a)[0] for a in arrays]
    if indexing == "xy" and len(arrays) > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrays):
        axis = (1 - i if i < 2 else i) if indexing == "xy" and len(arrays) > 1 else i
        view = [1] * len(arrays)
        view[axis] = sizes[axis]
        out.append(_broadcast(_reshape_to(a, view), tuple(sizes)))
    return _sequence(ctx, out)


def _sequence(ctx, arrays: list):
    """meshgrid's and broadcast_arrays' result: a list up to revision 2024.12, a tuple from
    2025.12 on (as the standard, and array-api-strict, give them)."""
    return arrays if ctx.revision < "2025.12" else tuple(arrays)


def _linspace_dtype(ctx, start, stop) -> np.dtype:
    """NumPy's linspace keeps its end points' precision; the standard (array-api-strict,
    PyTorch) gives the provider's default floating dtype, complex if an end point is."""
    dtypes = [aval_of(v).dtype for v in (start, stop)]
    if ctx.xp is np:
        return np.result_type(*dtypes, 0.0)
    default = ctx.xp.asarray(1j if any(d.kind == "c" for d in dtypes) else 1.0).dtype
    return numpy_dtype(default)


@translates("linspace")
def _linspace(ctx, start, stop, /, num, *, dtype=None, device=None, endpoint=True):
    ref = start if isinstance(start, Tracer) else stop
    check_device(ref, device, "linspace")
    dtype = _linspace_dtype(ctx, start, stop) if dtype is None else numpy_dtype(dtype)
    positions = cast(iota(ref, (num,), 0), real_dtype(dtype))
    t = ops.divide(positions, max(num - 1 if endpoint else num, 1))
    start, stop = (cast(v, dtype) if isinstance(v, Tracer) else v for v in (start, stop))
    out = ops.add(start, ops.multiply(ops.subtract(stop, start), t))
    if endpoint and num > 1:  # the last point is exactly stop, as the provider makes it
        out = ops.where(ops.equal(iota(ref, (num,), 0), num - 1), stop, out)
    return cast(out, dtype)


@translates("from_dlpack")
def _from_dlpack(ctx, x, /, *, device=None, copy=None):
    check_device(x, device, "from_dlpack")
    return owned_copy(x) if copy else x


# --- data types ------------------------------------------------------------------------------

@translates("astype")
def _astype(ctx, x, dtype, /, *, copy=True, device=None):
    check_device(x, device, "astype")
    out = cast(x, numpy_dtype(dtype))
    return owned_copy(out) if copy and out is x else out


def _dtype_args(ctx, values):
    return [ctx.dtype_of(v) if isinstance(v, Tracer) else v for v in values]


@translates("can_cast")
def _can_cast(ctx, from_, to, /):
    return ctx.xp.can_cast(*_dtype_args(ctx, (from_,)), ctx.dtype(to))


@translates("finfo")
def _finfo(ctx, type, /):
    return ctx.xp.finfo(ctx.dtype_of(type))


@translates("iinfo")
def _iinfo(ctx, type, /):
    return ctx.xp.iinfo(ctx.dtype_of(type))


@translates("result_type")
def _result_type(ctx, *arrays_and_dtypes):
    return ctx.xp.result_type(*_dtype_args(ctx, arrays_and_dtypes))


# --- manipulation ----------------------------------------------------------------------------

def _broadcast(x, shape):
    return x if shape_of(x) == tuple(shape) else ops.broadcast_to(x, shape=tuple(shape))


@translates("broadcast_arrays")
def _broadcast_arrays(ctx, *arrays):
    shape = broadcast_shapes(*(shape_of(a) for a in arrays))
    return _sequence(ctx, [_broadcast(a, shape) for a in arrays])


@translates("broadcast_to")
def _broadcast_to(ctx, x, /, shape):
    return _broadcast(x, tuple(shape))


@translates("concat")
def _concat(ctx, arrays, /, *, axis=0):
    arrays = list(arrays)
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    return ops.concat(*arrays, axis=axis_of(axis, len(shape_of(arrays[0]))))


@translates("expand_dims")
def _expand_dims(ctx, x, /, axis=0):
    count = 1 if isinstance(axis, int) else len(axis)
    return ops.expand_dims(x, axes=normalize_axes(axis, len(shape_of(x)) + count))


@translates("flip")
def _flip(ctx, x, /, *, axis=None):
    return ops.flip(x, axes=normalize_axes(axis, len(shape_of(x))))


@translates("permute_dims")
def _permute_dims(ctx, x, /, axes):
    ndim = len(shape_of(x))
    axes = each_axis(axes, ndim)
    return x if axes == tuple(range(ndim)) else ops.permute_dims(x, axes=axes)


@translates("reshape")
def _reshape(ctx, x, /, shape, *, copy=None):
    shape = tuple(int(n) for n in shape)
    size = math.prod(shape_of(x))
    if -1 in shape:
        known = math.prod(n for n in shape if n != -1)
        shape = tuple(size // known if known and n == -1 else n for n in shape)
    out = _reshape_to(x, shape)  # copy=False holds: a traced reshape never copies data
    return owned_copy(out) if copy and out is x else out


@translates("roll")
def _roll(ctx, x, /, shift, *, axis=None):
    if axis is None:
        return _reshape_to(_roll(ctx, ravel(x), shift, axis=0), shape_of(x))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    shifts = (shift,) * len(axes) if isinstance(shift, int) else tuple(shift)
    ndim = len(shape_of(x))
    return ops.roll(x, shift=tuple(int(s) for s in shifts),
                    axes=tuple(axis_of(a, ndim) for a in axes))


@translates("squeeze")
def _squeeze(ctx, x, /, axis):
    axes = reduce_axes(axis, len(shape_of(x)))
    return x if not axes else ops.squeeze(x, axes=axes)


@translates("stack")
def _stack(ctx, arrays, /, *, axis=0):
    arrays = list(arrays)
    if len({shape_of(a) for a in arrays}) != 1:
        raise ValueError("stack: all input arrays must have the same shape")
    axis = axis_of(axis, len(shape_of(arrays[0])) + 1)
    return ops.stack(*arrays, axis=axis)


@translates("moveaxis")
def _moveaxis(ctx, x, source, destination, /):
    ndim = len(shape_of(x))
    source = (source,) if isinstance(source, int) else tuple(source)
    destination = (destination,) if isinstance(destination, int) else tuple(destination)
    if len(source) != len(destination):
        raise ValueError("moveaxis: source and destination must have the same number of "
                         "elements")
    source, destination = each_axis(source, ndim), each_axis(destination, ndim)
    for name, axes in (("source", source), ("destination", destination)):
        if len(set(axes)) != len(axes):
            raise ValueError(f"moveaxis: repeated axis in {name} {axes}")
    order = [n for n in range(ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return _permute_dims(ctx, x, order)


@translates("repeat")
def _repeat(ctx, x, repeats, /, *, axis=None):
    x, axis = (ravel(x), 0) if axis is None else as_1d(x, axis)
    axis = axis_of(axis, len(shape_of(x)))
    n = shape_of(x)[axis]
    if hasattr(repeats, "dtype") and numpy_dtype(repeats.dtype).kind not in "iu":
        raise TypeError(f"repeat: repeats must have an integer dtype, got {repeats.dtype}")
    if isinstance(repeats, Tracer):  # counts decide the shape: read them (dynamic only)
        repeats = [int(r) for r in np.asarray(repeats._concrete()).reshape(-1)]
    elif hasattr(repeats, "shape"):
        repeats = [int(r) for r in np.asarray(repeats).reshape(-1)]
    counts = [int(repeats)] * n if isinstance(repeats, int) else list(repeats)
    if len(counts) == 1:
        counts = counts * n
    index = ctx.xp.asarray(np.repeat(np.arange(n), counts), device=aval_of(x).device)
    return ops.gather(x, index, index=((None, None, None),) * axis + ("array",))


@translates("tile")
def _tile(ctx, x, repetitions, /):
    reps = tuple(int(r) for r in repetitions)
    shape = shape_of(x)
    ndim = max(len(reps), len(shape))
    reps = (1,) * (ndim - len(reps)) + reps
    x = _reshape_to(x, (1,) * (ndim - len(shape)) + shape)
    shape = shape_of(x)
    interleaved = tuple(v for r, n in zip(reps, shape) for v in (r, n))
    expanded = _broadcast(_reshape_to(x, tuple(v for n in shape for v in (1, n))), interleaved)
    return _reshape_to(expanded, tuple(r * n for r, n in zip(reps, shape)))


@translates("unstack")
def _unstack(ctx, x, /, *, axis=0):
    ndim = len(shape_of(x))
    axis = axis_of(axis, ndim)
    lead = ((None, None, None),) * axis
    return tuple(ops.gather(x, index=lead + (i,)) for i in range(shape_of(x)[axis]))


# --- indexing --------------------------------------------------------------------------------

@translates("take")
def _take(ctx, x, indices, /, *, axis=None):
    if axis is None:
        if len(shape_of(x)) != 1:
            raise ValueError("take: axis is required for arrays of more than one dimension")
        axis = 0
    if len(shape_of(indices)) != 1:
        raise ValueError(f"take: indices must be one-dimensional, got shape {shape_of(indices)}")
    check_integer(indices, "take", "indices")
    x, axis = as_1d(x, axis)
    axis = axis_of(axis, len(shape_of(x)))
    indices = _wrap_negative(indices, shape_of(x)[axis])
    return ops.gather(x, indices, index=((None, None, None),) * axis + ("array",))


def check_integer(indices, where: str, name: str) -> None:
    """Indices have an integer dtype: the standard's rule, and a TypeError where the provider
    (array-api-strict, NumPy) refuses others."""
    if aval_of(indices).dtype.kind not in "iu":
        raise TypeError(f"{where}: {name} must have an integer dtype, got {aval_of(indices).dtype}")


def _wrap_negative(indices, n):
    """Negative indices count from the end, as in the standard (a constant op)."""
    return ops.where(ops.less(indices, 0), ops.add(indices, n), indices)


@translates("take_along_axis")
def _take_along_axis(ctx, x, indices, /, *, axis=-1):
    return take_along_axis(x, indices, axis)


def take_along_axis(x, indices, axis):
    """``x`` gathered along ``axis`` at ``indices`` (broadcast against ``x`` elsewhere)."""
    shape = shape_of(x)
    if len(shape_of(indices)) != len(shape):
        raise ValueError(f"take_along_axis: indices must have the dimensions of x ({len(shape)}),"
                         f" got shape {shape_of(indices)}")
    axis = axis_of(axis, len(shape))
    target = list(broadcast_shapes(shape[:axis] + (1,) + shape[axis + 1:], shape_of(indices)))
    indices = _broadcast(_wrap_negative(indices, shape[axis]), tuple(target))
    # x's own positions elsewhere, broadcast to the target (0 where x has length 1)
    lines = [[shape[d] if k == d else 1 for k in range(len(shape))] for d in range(len(shape))]
    arrays = [indices if d == axis else _broadcast(iota(x, lines[d], d), tuple(target))
              for d in range(len(shape))]
    return ops.gather(x, *arrays, index=("array",) * len(shape))


# --- utility ---------------------------------------------------------------------------------

def _any_all(x, axis, keepdims, every):
    axes = reduce_axes(axis, len(shape_of(x)))
    truth = x if aval_of(x).dtype.kind == "b" else ops.not_equal(x, 0)
    hits = ops.astype(ops.logical_not(truth) if every else truth, dtype="int64")
    count = ops.reduce_sum(hits, axes=axes, keepdims=bool(keepdims))
    return ops.equal(count, 0) if every else ops.greater(count, 0)


@translates("all")
def _all(ctx, x, /, *, axis=None, keepdims=False):
    return _any_all(x, axis, keepdims, True)


@translates("any")
def _any(ctx, x, /, *, axis=None, keepdims=False):
    return _any_all(x, axis, keepdims, False)


@translates("diff")
def _diff(ctx, x, /, *, axis=-1, n=1, prepend=None, append=None):
    ndim = len(shape_of(x))
    axis = axis_of(axis, ndim)
    if int(n) < 0:
        raise ValueError(f"diff: the order n must be nonnegative, got {n}")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = ops.concat(*parts, axis=axis)
    for _ in range(int(n)):
        size = shape_of(x)[axis]
        if size == 0:  # differences of nothing are nothing, as NumPy gives them
            break
        x = ops.subtract(ops.slice_axis(x, start=1, stop=size, axis=axis, step=1),
                         ops.slice_axis(x, start=0, stop=size - 1, axis=axis, step=1))
    return x

"""NumPy functions on traced arrays: ``FUNCTIONS`` maps each NumPy function to its translation.

A function with a canonical op is a one-line bind; the rest are composites written in ops.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import ops
from .._compat import present
from ..core import Tracer
from ..dtypes import aval_of, check_dtype, result_type
from ..errors import TracingError, bounded
from ..ops._rules import (
    each_axis,
    index_tuple,
    normalize_axes,
    one_axis,
    reduce_axes,
    scalar_axis,
)
from ..providers import numpy_dtype, on_provider_of
from ._out import call_with_out, out_position

__all__ = ["FUNCTIONS", "DYNAMIC_ONLY", "TAKES_LIKE", "NONDIFF", "WITHOUT_TRANSLATION",
           "array_function", "implements",
           "reduction", "astype", "concrete", "known_value"]

FUNCTIONS: dict = {}
# functions whose output shape (or dtype) depends on the data: they read concrete values, so they
# work in dynamic transforms and raise TracingError while staging
DYNAMIC_ONLY: set = set()
# constructors reached through ``like=``: NumPy drops the keyword, so the tracer is passed back
TAKES_LIKE: set = set()
# functions with no derivative: integer, boolean or metadata results (argsort, isclose, shape)
NONDIFF: set = set()
# NumPy functions that need no translation, each with whether derivatives flow through it: they
# take no array to trace (window functions, index generators, dtype and shape queries) or reach
# Advect through functions that dispatch (row_stack calls vstack; fftfreq divides by a traced
# spacing). The support catalog lists them; tests/catalog_samples.py proves each with a call.
WITHOUT_TRANSLATION = {
    **dict.fromkeys(present(np, "row_stack"), True),  # removed in NumPy 2.5
    np.fft.fftfreq: True, np.fft.rfftfreq: True,
    np.isscalar: False, np.iterable: False, np.broadcast_shapes: False,
    np.promote_types: False, np.issubdtype: False, np.isdtype: False, np.typename: False,
    np.mintypecode: False, np.indices: False, np.diag_indices: False, np.tril_indices: False,
    np.triu_indices: False, np.mask_indices: False, np.bartlett: False, np.blackman: False,
    np.hamming: False, np.hanning: False, np.kaiser: False,
}


def implements(*funcs, dynamic_only=False, like=False, nondiff=False):
    """Register a translation of each NumPy function in ``funcs``.

    ``dynamic_only`` marks data-dependent output shapes; ``like`` marks constructors whose
    translation takes the ``like=`` tracer as a keyword; ``nondiff`` marks results with no
    derivative (advect.support_catalog reports all three).
    """
    def register(impl):
        for f in funcs:
            FUNCTIONS[f] = impl
            if dynamic_only:
                DYNAMIC_ONLY.add(f)
            if nondiff:
                NONDIFF.add(f)
            if like:
                TAKES_LIKE.add(f)
        return impl
    return register


def array_function(func, types, args, kwargs, like=None):
    impl = FUNCTIONS.get(func)
    if impl is None:
        raise TracingError(
            f"numpy.{func.__name__} is not supported on traced arrays yet; see "
            "advect.support_catalog() for what is, or write it with supported functions")
    if func in TAKES_LIKE:
        kwargs = {**kwargs, "like": like}
    position = out_position(func, impl)
    if position is not None and (kwargs or 0 <= position < len(args)):
        # NumPy gives it out= and the call may pass it: the result is written there (_out.py)
        return call_with_out(func, impl, position, args, kwargs)
    return impl(*args, **kwargs)


def concrete(x, what):
    """The current value of ``x`` (a NumPy array): read from a tracer in dynamic transforms,
    a ``TracingError`` naming ``what`` while staging."""
    if isinstance(x, Tracer):
        return np.asarray(x._concrete_for(what))
    return np.asarray(x)


def check_device(func, kwargs):
    """NumPy's rule for ``device=``: None or "cpu" (other providers' devices are objects)."""
    device = kwargs.get("device")
    if isinstance(device, str) and device != "cpu":
        raise ValueError(f'numpy.{func.__name__}: Device not understood. Only "cpu" is allowed, '
                         f"but received: {bounded(device)}")


def pair(value, function: str, argument: str) -> tuple:
    """``value`` unpacked as two items; otherwise Python's own error class (as NumPy raises),
    with a message naming the function and the argument."""
    try:
        first, second = value
    except (TypeError, ValueError) as error:
        raise type(error)(f"{function}: {argument}= must be a pair of two items, not "
                          f"{bounded(value)}") from None
    return first, second


def known_value(x):
    """The value of ``x`` when it is known while tracing (a constant, or a tracer of a dynamic
    transform), else None (a staged input): NumPy's checks of values run whenever they can."""
    try:
        return concrete(x, "a value check")
    except TracingError:
        return None



def _shape(x):
    if type(x) is np.ndarray or isinstance(x, Tracer):  # without building an aval
        return x.shape
    return aval_of(x).shape


def operand(x):
    """``x`` as a tracer or NumPy array; lists holding tracers are stacked without detaching."""
    if isinstance(x, Tracer | np.ndarray):
        return x
    if isinstance(x, list | tuple):
        from ._construct import asarray
        return asarray(x)
    return np.asarray(x)


def lift(like, value):
    """The NumPy array ``value`` as a writable value of ``like``'s trace (for ``like=``)."""
    value = np.asarray(value)
    if not isinstance(like, Tracer):
        return value
    zeros = ops.zeros_like(like, shape=value.shape, dtype=value.dtype.name)
    return ops.add(zeros, on_provider_of(like, value)) if value.any() else zeros


def take_axis(a, indices, axis):
    """``a`` indexed by the integer array ``indices`` along ``axis`` (``np.take`` semantics)."""
    shape = _shape(a)
    return ops.gather(a, on_provider_of(a, indices),
                      index=tuple((0, n, 1) for n in shape[:axis]) + ("array",))


def slice_along(a, start, stop, axis, step=1):
    """``a[..., start:stop:step, ...]`` along ``axis`` (bounds already in range)."""
    n = _shape(a)[axis]
    if (start, stop, step) == (0, n, 1):
        return a
    return ops.slice_axis(a, start=start, stop=stop, axis=axis, step=step)


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


def astype(x, dtype, casting="unsafe"):
    # a provider's dtype object (torch.float32, ...) too; object, str and datetime64 values
    # carry no derivative, so a cast to them is refused rather than silently detached
    dtype = check_dtype(numpy_dtype(dtype), "a cast of a traced value (astype or dtype=)")
    if casting != "unsafe":
        if casting not in _CASTINGS:
            raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or "
                             "'unsafe'")
        if not np.can_cast(aval_of(x).dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {aval_of(x).dtype!r} to {dtype!r} "
                            f"according to the rule {casting!r}")
    return x if aval_of(x).dtype == dtype else ops.astype(x, dtype=dtype.name)


def numpy_scalar(x):
    """``x[()]``: a 0-d result as the NumPy scalar NumPy's function returns (``where``,
    ``reshape`` and ``full_like`` give 0-d arrays, as ``np.where`` does); others unchanged."""
    if _shape(x):
        return x
    if aval_of(x).weak:  # a Python scalar's value cannot be indexed: cast it to a NumPy scalar
        return ops.astype(x, dtype=aval_of(x).dtype.name)
    return ops.gather(x, index=())


# --- reductions ------------------------------------------------------------------------------

_FILL = {"reduce_sum": 0, "reduce_prod": 1}


def keepdims_flag(keepdims) -> bool:
    """NumPy's reading of ``keepdims=``: a bool or an integer, else its ``TypeError``."""
    if isinstance(keepdims, bool | np.bool_):
        return bool(keepdims)
    try:
        return bool(operator.index(keepdims))
    except TypeError:
        raise TypeError(f"keepdims= must be True or False, not {bounded(keepdims)}") from None


def where_mask(where):
    """A reduction's ``where=`` as NumPy reads it: an array mask must be boolean (NumPy casts it
    safely); Python scalars and lists are read as booleans."""
    if isinstance(where, list | tuple):
        return np.asarray(where, dtype=bool)
    if isinstance(where, np.generic):  # a NumPy scalar is read as a boolean, as a Python one
        return bool(where)
    dtype = getattr(where, "dtype", None)
    if dtype is not None and numpy_dtype(dtype) != np.bool_:
        raise TypeError(f"Cannot cast array data from {numpy_dtype(dtype)!r} to dtype('bool') "
                        "according to the rule 'safe': where= takes a boolean mask (compare, "
                        "as in where=w != 0)")
    return where


def reduction_axis(axis):
    """A reduction's ``axis=``: NumPy takes None, an integer or a tuple, never a list."""
    if isinstance(axis, list):
        raise TypeError("'list' object cannot be interpreted as an integer: axis= takes an "
                        f"integer or a tuple, as in axis={tuple(axis)}")
    return axis


def reduction(op, a, axis, keepdims, dtype=None, where=True, initial=None):
    keepdims = keepdims_flag(keepdims)
    axis = reduction_axis(axis)
    if initial is not None and (initial.shape if isinstance(initial, Tracer)
                                else np.shape(initial)):  # NumPy's ValueError, named
        raise ValueError("setting an array element with a sequence: initial= must be a scalar, "
                         f"not a value of shape {_shape(operand(initial))}")
    if dtype is not None:
        a = astype(a, dtype)
    identity = _FILL.get(op.name)
    if initial is not None and identity is None:  # max, min: the result has a's dtype
        initial = reduction_initial(initial, aval_of(a).dtype)
    if where is not True:
        where = where_mask(where)
        fill = initial if identity is None else identity
        if fill is None:
            raise ValueError(f"{op.name} has no identity, so a where= mask needs initial=")
        a = ops.where(where, a, fill)
    axes = reduce_axes(axis, len(_shape(a)))
    if initial is not None and identity is None:  # a sum over nothing is 0, plus initial
        a = stand_in_for_empty(a, axes, initial)
    out = op(a, axes=axes, keepdims=keepdims)
    if initial is not None:
        combine = {ops.reduce_sum: ops.add, ops.reduce_prod: ops.multiply,
                   ops.reduce_max: ops.maximum, ops.reduce_min: ops.minimum}[op]
        out = combine(out, reduction_initial(initial, aval_of(out).dtype))
    return out if dtype is None else astype(out, dtype)  # the provider sums int16 in int64


def reduction_initial(initial, dtype):
    """``initial=`` as NumPy reads it: a value of the reduction's result ``dtype``, so a
    float64 initial leaves a float32 sum float32 and ``-1.5`` adds ``-1`` to an integer sum
    (NumPy's ``TypeError`` for a complex initial of a real sum, ``OverflowError`` for ``-1``
    of an unsigned one)."""
    if isinstance(initial, Tracer):
        return initial if aval_of(initial).dtype == dtype else ops.astype(initial,
                                                                          dtype=dtype.name)
    return np.asarray(initial, dtype=dtype).item()  # weak: any provider's array keeps dtype


def stand_in_for_empty(a, axes, initial):
    """``a``, or where the reduced axes hold no element one ``initial`` along each of them: a
    reduction with ``initial=`` over nothing is ``initial`` (max and min have no identity)."""
    shape = _shape(a)
    if isinstance(initial, Tracer) or not any(shape[d] == 0 for d in axes):
        return a
    return ops.full_like(a, fill_value=initial,
                         shape=tuple(1 if d in axes else n for d, n in enumerate(shape)))


_ALL_AXES = [tuple(range(n)) for n in range(64)]


@implements(np.sum)
def _sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    if (axis is None and dtype is None and out is None and initial is None and where is True
            and keepdims is False and isinstance(a, Tracer)):  # np.sum(x), the common call
        return ops.reduce_sum(a, axes=_ALL_AXES[len(a.shape)], keepdims=False)
    return reduction(ops.reduce_sum, a, axis, keepdims, dtype, where, initial)


@implements(np.prod)
def _prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    return reduction(ops.reduce_prod, a, axis, keepdims, dtype, where, initial)


@implements(np.max, np.amax)
def _max(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return reduction(ops.reduce_max, a, axis, keepdims, None, where, initial)


@implements(np.min, np.amin)
def _min(a, axis=None, out=None, keepdims=False, initial=None, where=True):
    return reduction(ops.reduce_min, a, axis, keepdims, None, where, initial)


def _count(shape, axes):
    return math.prod(shape[a] for a in axes)


def count_where(a, axes, keepdims, where=True, dtype="int64"):
    """How many elements each reduction over ``axes`` sees: a Python int, or an array of
    ``dtype`` when masked (the dtype of the sums it divides, so float32 stays float32)."""
    if where is True:
        return _count(_shape(a), axes)
    where = where_mask(where)
    mask = ops.broadcast_to(where, shape=_shape(a)) if _shape(where) != _shape(a) else where
    return ops.reduce_sum(ops.astype(mask, dtype=np.dtype(dtype).name), axes=axes,
                          keepdims=bool(keepdims))


@implements(np.mean)
def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=True):
    if dtype is None and aval_of(a).dtype == np.float16:  # NumPy sums float16 in float32
        return astype(_mean(a, axis, np.float32, None, keepdims, where=where), np.float16)
    if (axis is None and dtype is None and out is None and where is True and keepdims is False
            and isinstance(a, Tracer) and aval_of(a).dtype.kind in "fc"):  # np.mean(x)
        shape = a.shape
        total = ops.reduce_sum(a, axes=_ALL_AXES[len(shape)], keepdims=False)
        return ops.divide(total, math.prod(shape))
    if dtype is None and aval_of(a).dtype.kind not in "fc":
        dtype = np.float64
    axes = normalize_axes(reduction_axis(axis), len(_shape(a)))
    total = reduction(ops.reduce_sum, a, axes, keepdims, dtype, where)
    out = ops.divide(total, count_where(a, axes, keepdims, where, _real_of(total)))
    return _cast_back(out, dtype)


def _cast_back(out, dtype):
    """A mean's or variance's quotient in an integer or bool ``dtype=``: cast back, as NumPy's."""
    return astype(out, dtype) if dtype is not None and numpy_dtype(dtype).kind in "iub" else out


@implements(np.var)
def _var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
         correction=None):
    if correction is not None:
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        ddof = correction
    if dtype is None and aval_of(a).dtype.kind not in "fc":
        dtype = np.float64
    axes = normalize_axes(reduction_axis(axis), len(_shape(a)))
    # NumPy's var takes a float16 mean in float16, where np.mean rounds a float32 mean
    mean_dtype = np.float16 if dtype is None and aval_of(a).dtype == np.float16 else dtype
    mu = _mean(a, axes, mean_dtype, keepdims=True, where=where) if mean is None else mean
    dev = ops.subtract(a, mu)  # as NumPy: the input promoted with the mean, not cast to dtype
    # NumPy squares real inputs' deviations (complex ones for a complex dtype=) and takes
    # |dev|**2 of complex inputs
    complex_input = aval_of(a).dtype.kind == "c" or (aval_of(a).dtype.kind == "b"
                                                     and aval_of(dev).dtype.kind == "c")
    sq = ops.real(ops.multiply(dev, ops.conj(dev))) if complex_input else ops.square(dev)
    total = reduction(ops.reduce_sum, sq, axes, keepdims, dtype, where)
    count = count_where(a, axes, keepdims, where, _real_of(total))
    if isinstance(count, int):  # Python arithmetic keeps the divisor weak
        out = ops.divide(total, max(count - ddof, 0))
    else:
        out = ops.divide(total, ops.maximum(ops.subtract(count, ddof), 0))
    return _cast_back(out, dtype)


def _real_of(x):
    dtype = aval_of(x).dtype
    return np.empty(0, dtype).real.dtype if dtype.kind in "fc" else np.dtype(np.float64)


@implements(np.std)
def _std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=True, mean=None,
         correction=None):
    var = _var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean,
               correction=correction)
    if dtype is None or numpy_dtype(dtype).kind not in "iub":
        return ops.sqrt(var)
    if _shape(var):  # NumPy takes the root in place, which an integer array cannot hold
        raise TypeError(f"Cannot cast ufunc 'sqrt' output to dtype('{numpy_dtype(dtype)}') "
                        "with casting rule 'same_kind': std with an integer or bool dtype= "
                        "works only for a scalar result")
    return astype(ops.sqrt(var), dtype)  # a scalar result is cast back, as NumPy's


def _arg_reduce(op, a, axis, keepdims):
    if axis is None or scalar_axis(axis, len(_shape(a))):  # a 0-d array reads as 1-d
        out = op(_ravel(a), axis=0, keepdims=False)
        return ops.reshape(out, shape=(1,) * len(_shape(a))) if keepdims else out
    return op(a, axis=one_axis(axis, len(_shape(a))), keepdims=bool(keepdims))


@implements(np.argmax, nondiff=True)
def _argmax(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(ops.argmax, a, axis, keepdims)


@implements(np.argmin, nondiff=True)
def _argmin(a, axis=None, out=None, *, keepdims=False):
    return _arg_reduce(ops.argmin, a, axis, keepdims)


@implements(np.cumsum)
def _cumsum(a, axis=None, dtype=None, out=None):
    if dtype is not None:
        a = astype(a, dtype)
    if axis is None or not _shape(a):  # NumPy scans a 0-d array as a 1-element 1-d one
        a = ops.reshape(a, shape=(math.prod(_shape(a)),))
        axis = 0 if axis is None else axis
    out = ops.cumulative_sum(a, axis=one_axis(axis, len(_shape(a))))
    return out if dtype is None else astype(out, dtype)  # int16 stays int16, as in reduction


# --- shape -----------------------------------------------------------------------------------

def _resolve_shape(shape, size):
    shape = index_tuple(shape)
    unknown = sum(n < 0 for n in shape)  # NumPy reads any negative length as the unknown one
    if unknown > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown:
        known = math.prod(n for n in shape if n >= 0)
        if known == 0 or size % known:
            raise ValueError(f"cannot reshape array of size {size} into shape {shape}")
        shape = tuple(size // known if n < 0 else n for n in shape)
    return shape


_ORDERS = ("C", "F", "A", "K")


def check_order(order, what: str) -> str:
    """A memory-layout ``order`` as NumPy validates it (None means "C")."""
    order = "C" if order is None else order
    if not isinstance(order, str):
        raise TypeError(f"{what}: order must be str, not {type(order).__name__}")
    if order.upper() not in _ORDERS:
        raise ValueError(f"{what}: order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return order.upper()


def _reversed_axes(a):
    n = _ndim(a)
    return a if n < 2 else ops.permute_dims(a, axes=tuple(range(n - 1, -1, -1)))


@implements(np.reshape)
def _reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    order = check_order(order, "numpy.reshape")
    if order == "K":
        raise ValueError("order 'K' is not permitted for reshaping")
    shape = _resolve_shape(newshape if shape is None else shape, math.prod(_shape(a)))
    if shape == _shape(a):
        return a
    if _memory_order(a, order, "numpy.reshape") == "F":
        # column-major: reshape the reversed axes, then reverse back
        return _reversed_axes(ops.reshape(_reversed_axes(a), shape=shape[::-1]))
    return ops.reshape(a, shape=shape)


@implements(np.ravel)
def _ravel(a, order="C"):
    order = _memory_order(a, check_order(order, "numpy.ravel"), "numpy.ravel")
    if order is not None:
        return _reshape(a, (-1,), order)
    # order "K" of a value neither C- nor F-contiguous: its elements in memory order
    value = known_value(a)
    ids = np.empty_like(value, dtype=np.intp)  # the same layout (order="K")
    ids[...] = np.arange(value.size).reshape(value.shape)
    return take_axis(_reshape(a, (-1,)), np.ravel(ids, order="K"), 0)


def _memory_order(a, order: str, what: str) -> str | None:
    """The order ``"A"`` or ``"K"`` reads from the memory layout: ``"C"`` or ``"F"`` (``None``:
    neither contiguous, for ``"K"``), read off the array NumPy holds in a dynamic transform.
    A staged value has no layout, so they are refused there (for 2 or more axes)."""
    if order in ("C", "F") or _ndim(a) < 2:
        return "F" if order == "F" else "C"
    value = known_value(a)
    if value is None:
        raise TracingError(f"{what}: order={order!r} reads the memory layout, which a staged "
                           "value does not have (a transpose is F-ordered in NumPy); use "
                           "order='C' or 'F'")
    if value.flags.c_contiguous:
        return "C"
    if value.flags.f_contiguous:
        return "F"
    return "C" if order == "A" else None


def _ndim(x):
    return len(_shape(x))


def flat_axis(a, axis):
    """``a`` and one normalized axis; ``axis=None`` means axis 0 of the flattened array."""
    a = operand(a)
    if axis is None:
        return _ravel(a), 0
    return a, one_axis(axis, _ndim(a))


@implements(np.transpose, np.permute_dims)
def _transpose(a, axes=None):
    ndim = len(_shape(a))
    axes = tuple(reversed(range(ndim))) if axes is None else each_axis(axes, ndim)
    if axes == tuple(range(ndim)):
        return a
    return ops.permute_dims(a, axes=axes)


@implements(np.swapaxes)
def _swapaxes(a, axis1, axis2):
    ndim = len(_shape(a))
    axes = list(range(ndim))
    (i,), (j,) = normalize_axes(axis1, ndim), normalize_axes(axis2, ndim)
    axes[i], axes[j] = axes[j], axes[i]
    return _transpose(a, axes)


@implements(np.moveaxis)
def _moveaxis(a, source, destination):
    ndim = len(_shape(a))
    source = tuple(one_axis(s, ndim) for s in index_tuple(source))
    destination = tuple(one_axis(d, ndim) for d in index_tuple(destination))
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    for name, axes in (("source", source), ("destination", destination)):
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis in `{name}` argument")
    order = [n for n in range(ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return _transpose(a, order)


@implements(np.squeeze)
def _squeeze(a, axis=None):
    shape = _shape(a)
    if axis is None:
        axes = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        axes = reduce_axes(reduction_axis(axis), len(shape))
    return a if not axes else ops.squeeze(a, axes=axes)


@implements(np.expand_dims)
def _expand_dims(a, axis):
    ndim = len(_shape(a)) + len(index_tuple(axis))
    return ops.expand_dims(a, axes=normalize_axes(axis, ndim))


@implements(np.broadcast_to)
def _broadcast_to(array, shape, subok=False):
    shape = index_tuple(shape)
    if _shape(array) == shape:  # still a new (read-only) view, never the array itself
        return array._clone() if isinstance(array, Tracer) else array
    return ops.broadcast_to(array, shape=shape)


@implements(np.concatenate, np.concat)
def _concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [operand(a) if isinstance(a, list | tuple) else a for a in arrays]
    if axis is None:
        arrays = [_ravel(a) for a in arrays]
        axis = 0
    arrays = _joined(arrays, dtype, casting)
    return ops.concat(*arrays, axis=one_axis(axis, len(_shape(arrays[0]))))


def _joined(arrays: list, dtype, casting: str) -> list:
    """The operands of a join cast to ``dtype`` (else their common dtype) under ``casting``,
    NumPy's TypeError where the rule refuses a cast."""
    if dtype is None:
        if casting in ("same_kind", "unsafe"):  # promotion is always a same-kind cast
            return arrays
        dtype = result_type(*(aval_of(a) for a in arrays))
    return [astype(a, dtype, casting) for a in arrays]


@implements(np.stack)
def _stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind"):
    arrays = [operand(a) if isinstance(a, list | tuple) else a for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shape = _shape(arrays[0])
    if any(_shape(a) != shape for a in arrays[1:]):
        raise ValueError("all input arrays must have the same shape")
    n = len(shape) + 1
    axis = axis % n if type(axis) is int and -n <= axis < n else one_axis(axis, n)
    return ops.stack(*_joined(arrays, dtype, casting), axis=axis)


@implements(np.flip)
def _flip(m, axis=None):
    return ops.flip(m, axes=normalize_axes(axis, len(_shape(m))))


@implements(np.roll)
def _roll(a, shift, axis=None):
    shape = _shape(a)
    if axis is None and len(shape) != 1:  # NumPy rolls the flattened array
        return _reshape(_roll(_ravel(a), shift, 0), shape)
    axes, shifts = index_tuple(0 if axis is None else axis), index_tuple(shift)
    if len(axes) != len(shifts):  # NumPy pairs them by broadcasting
        if len(axes) != 1 and len(shifts) != 1:
            raise ValueError("shape mismatch: objects cannot be broadcast to a single shape: "
                             f"{len(shifts)} shifts for {len(axes)} axes")
        axes, shifts = axes * len(shifts), shifts * len(axes)
    ndim = len(shape)
    for x in axes:
        if not -ndim <= x < ndim:
            raise np.exceptions.AxisError(x, ndim)
    return ops.roll(a, shift=shifts, axes=tuple(x % ndim for x in axes))


# the sibling modules register the rest of the table; imported last, as they import from here
from . import (  # noqa: E402,F401
    _creation,
    _elementwise,
    _fft,
    _indexing_funcs,
    _linalg,
    _mathfuncs,
    _padding,
    _products,
    _quantiles,
    _queries,
    _shaping,
    _sorting,
    _statistics,
)

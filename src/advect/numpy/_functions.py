"""NumPy functions on traced arrays: ``FUNCTIONS`` maps each NumPy function to its translation.

A function with a canonical op is a one-line bind; the rest are composites written in ops.
"""

from __future__ import annotations

import math

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
)
from ..providers import numpy_dtype, on_provider_of
from ._out import call_with_out, out_position

__all__ = ["FUNCTIONS", "DYNAMIC_ONLY", "TAKES_LIKE", "NONDIFF", "WITHOUT_TRANSLATION",
           "array_function", "implements",
           "astype", "concrete", "known_value"]

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


def reduction_axis(axis):
    """A reduction's ``axis=``: NumPy takes None, an integer or a tuple, never a list."""
    if isinstance(axis, list):
        raise TypeError("'list' object cannot be interpreted as an integer: axis= takes an "
                        f"integer or a tuple, as in axis={tuple(axis)}")
    return axis


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
    _reductions,
    _shaping,
    _sorting,
    _statistics,
)

"""Abstract rules and JVP helpers that many ops share.

Rules here call ops through the ``ops`` package (``ops.multiply``), looked up at call time, so the
op-table modules can use these helpers while they are being defined.
"""

from __future__ import annotations

import operator
from functools import lru_cache

import numpy as np

from .. import core, ops
from ..core import Tracer
from ..dtypes import Aval, aval_of, float_dtype, real_dtype, result_type

__all__ = ["aval_of", "broadcast_shapes", "float_unary", "same_unary", "broadcast_binary",
           "compare_binary", "bool_unary", "unbroadcast", "elementwise_partials",
           "zeros_like_aval", "conj", "is_linear", "fit", "normalize_axes", "one_axis", "each_axis",
           "reduce_axes", "scalar_axis", "reduced_shape", "real_unary", "add_tangents", "scale",
           "unary_partial", "fitted", "ufunc_abstract", "axis_last", "index_tuple"]


def is_linear(x) -> bool:
    """Whether ``x`` is a variable of the linear tape (inside a transpose rule)."""
    return isinstance(x, Tracer) and x._linear


@lru_cache(maxsize=4096)
def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError("operands could not be broadcast together with shapes "
                         + " ".join(str(s) for s in shapes)) from None


# --- abstract rules --------------------------------------------------------------------------

def same_unary(x: Aval, **_) -> Aval:
    return x


def float_unary(x: Aval, **_) -> Aval:
    """Same shape; dtype follows NumPy's rule for inexact ufuncs (int -> float64)."""
    dtype = float_dtype(x.dtype)
    return x if dtype is x.dtype else Aval(x.shape, dtype, x.weak, x.device)


def real_unary(x: Aval, **_) -> Aval:
    """Same shape; complex inputs give their real dtype (abs, real, imag, angle)."""
    return Aval(x.shape, real_dtype(float_dtype(x.dtype)) if x.dtype.kind == "c" else x.dtype,
                x.weak, x.device)


def bool_unary(x: Aval, **_) -> Aval:
    # a Python scalar in gives a Python bool out (weak), as a dynamic call does
    return Aval(x.shape, np.dtype(bool), x.weak, x.device)


def broadcast_binary(x: Aval, y: Aval, **_) -> Aval:
    if x.shape == y.shape and x.dtype is y.dtype and x.weak == y.weak:
        return x
    shape = x.shape if x.shape == y.shape else broadcast_shapes(x.shape, y.shape)
    if x.dtype is y.dtype and x.weak == y.weak:
        return Aval(shape, x.dtype, x.weak, x.device)
    return Aval(shape, result_type(x, y), x.weak and y.weak, x.device or y.device)


def compare_binary(x: Aval, y: Aval, **_) -> Aval:
    shape = x.shape if x.shape == y.shape else broadcast_shapes(x.shape, y.shape)
    return Aval(shape, np.dtype(bool), x.weak and y.weak, x.device or y.device)


# NEP 50: Python int, float and complex are weak; a Python bool is NumPy's bool
_WEAK_TYPES = {"b": np.dtype(bool), "i": int, "u": int, "f": float, "c": complex}


def ufunc_abstract(ufunc):
    """An abstract rule resolving dtypes exactly as the NumPy ufunc ``ufunc`` does (a zero-argument
    callable returning it defers the lookup, for optional libraries); Python scalars stay weak."""

    @lru_cache(maxsize=256)
    def resolve(keys):
        u = ufunc if isinstance(ufunc, np.ufunc) else ufunc()
        dtypes = tuple(_WEAK_TYPES[dtype.kind] if weak else dtype for dtype, weak in keys)
        return u.resolve_dtypes(dtypes + (None,) * u.nout)[u.nin:]

    def abstract(*avals, **_):
        x = avals[0]
        weak, device = x.weak, x.device
        if len(avals) == 1:  # the hot cases (a tape of divides and negations) build no tuples
            outs = resolve(((x.dtype, x.weak),))
            if len(outs) == 1 and outs[0] is x.dtype:
                return x
            shape = x.shape
        elif len(avals) == 2:
            y = avals[1]
            outs = resolve(((x.dtype, x.weak), (y.dtype, y.weak)))
            if x.shape == y.shape:
                if (len(outs) == 1 and outs[0] is x.dtype and (x.weak == y.weak or not x.weak)
                        and (x.device is not None or y.device is None)):
                    return x  # x's aval is the result's (an array with a Python scalar, too)
                shape = x.shape
            else:
                shape = broadcast_shapes(x.shape, y.shape)
            weak = weak and y.weak
            device = device if device is not None else y.device
        else:
            shape = broadcast_shapes(*(a.shape for a in avals))
            outs = resolve(tuple((a.dtype, a.weak) for a in avals))
            weak = all(a.weak for a in avals)
            device = next((a.device for a in avals if a.device is not None), None)
        if len(outs) == 1:
            return Aval(shape, outs[0], weak and outs[0].kind != "b", device)
        return tuple(Aval(shape, d, weak and d.kind != "b", device) for d in outs)

    return abstract


def index_tuple(value) -> tuple[int, ...]:
    """``value`` as NumPy reads an axis, shape, count or ``kth`` argument: one integer (Python,
    NumPy, or a 0-d integer array) or a sequence of them, as a tuple of Python ints.

    Raises:
        TypeError: for a float, or a sequence holding one (NumPy's error), never a truncation.

    Example:
        >>> index_tuple(np.array(2)), index_tuple([np.int64(1), 3])
        ((2,), (1, 3))
    """
    if getattr(value, "ndim", 0) == 0 and hasattr(value, "__index__"):
        return (operator.index(value),)
    try:
        items = tuple(value)
    except TypeError:
        raise TypeError(f"'{type(value).__name__}' object cannot be interpreted as an "
                        "integer") from None
    return tuple(operator.index(v) for v in items)


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """``axis`` (None, int or sequence, negatives allowed) as a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    out = each_axis(axis, ndim)
    if len(set(out)) != len(out):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return tuple(sorted(out))


def scalar_axis(axis, ndim: int) -> bool:
    """Whether ``axis`` is the integer 0 or -1 given for a 0-d array, which NumPy accepts (a
    tuple of them is an error): reductions and ``squeeze`` then name no axis, and ``take``,
    ``argmax``, ``argsort`` and cumulative sums read the array as 1-d."""
    return ndim == 0 and getattr(axis, "ndim", 0) == 0 and hasattr(axis, "__index__") \
        and operator.index(axis) in (0, -1)


def reduce_axes(axis, ndim: int) -> tuple[int, ...]:
    """``normalize_axes`` as NumPy's reductions and ``squeeze`` read ``axis`` (see
    ``scalar_axis``)."""
    return () if scalar_axis(axis, ndim) else normalize_axes(axis, ndim)


def one_axis(axis, ndim: int) -> int:
    """A single ``axis`` (an integer, negatives allowed) as a non-negative axis: NumPy's
    ``TypeError`` for a tuple or a float (never its first entry), ``AxisError`` out of range."""
    return each_axis(operator.index(axis), ndim)[0]


def each_axis(axes, ndim: int) -> tuple[int, ...]:
    """Each of ``axes`` as a non-negative axis, in the given order (a permutation, say);
    NumPy's ``AxisError`` for one out of range."""
    out = []
    for a in index_tuple(axes):
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    return tuple(out)


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool):
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def axis_last(x, axis: int):
    """``x`` with its axis ``axis`` (any sign) moved last (a view; ``x`` itself if it is)."""
    n = aval_of(x).ndim
    a = axis % n if n else 0
    return x if a >= n - 1 else ops.permute_dims(x, axes=(*(k for k in range(n) if k != a), a))


# --- JVP and transpose helpers ---------------------------------------------------------------

def conj(x):
    """Complex conjugate; the identity (no op emitted) for real values."""
    if type(x) is np.ndarray:  # the hot case
        return ops.conj(x) if x.dtype.kind == "c" else x
    kind = getattr(getattr(x, "dtype", None), "kind", None)
    if kind is None:  # a Python scalar, or a provider dtype without .kind
        kind = aval_of(x).dtype.kind
    return ops.conj(x) if kind == "c" else x


def unbroadcast(x, shape: tuple[int, ...]):
    """Sum ``x`` down to ``shape``: the transpose of broadcasting to ``x``'s shape.

    Axes where ``x`` is smaller than ``shape`` are left alone: the result broadcasts to
    ``shape``, which is all a cotangent of an elementwise op needs (the reverse pass expands it
    only where a transpose needs the exact shape).
    """
    if type(x) is np.ndarray:  # the hot case
        xshape = x.shape
    else:
        xshape = getattr(x, "shape", None)
        xshape = aval_of(x).shape if xshape is None else tuple(xshape)
    if xshape == shape:
        return x
    nx, ns = len(xshape), len(shape)
    lead = max(nx - ns, 0)
    axes = tuple(range(lead)) + tuple(
        i for i in range(lead, nx) if shape[ns - nx + i] == 1 and xshape[i] != 1)
    if not axes:
        return x
    x = ops.reduce_sum(x, axes=axes, keepdims=True)
    return ops.reshape(x, shape=aval_of(x).shape[lead:]) if lead else x


def fit(t, out):
    """Broadcast and cast a tangent to the primal output ``out`` (a value or an Aval)."""
    if type(out) is np.ndarray or type(out) is Aval or isinstance(out, np.generic):  # hot
        shape, dtype = out.shape, out.dtype
    else:
        aval = aval_of(out)
        shape, dtype = aval.shape, aval.dtype
    t_aval = t if type(t) is np.ndarray else t.aval if isinstance(t, Tracer) else aval_of(t)
    if t_aval.shape == shape and t_aval.dtype == dtype:
        return t
    aval = aval_of(out)
    t_aval = aval_of(t)
    if t_aval.dtype != aval.dtype:
        if t_aval.dtype.kind == "c" and aval.dtype.kind != "c":
            t = ops.real(t)
            t_aval = aval_of(t)
        if t_aval.dtype != aval.dtype:
            t = ops.astype(t, dtype=aval.dtype.name)
    if t_aval.shape != aval.shape:
        t = ops.broadcast_to(t, shape=aval.shape)
    return t


def add_tangents(a, b):
    """Sum of two tangents where ``None`` is zero."""
    if a is None:
        return b
    if b is None:
        return a
    return ops.add(a, b)


def scale(t, factor):
    """``t * factor`` for a tangent ``t`` that may be ``None``."""
    return None if t is None else ops.multiply(t, factor)


def elementwise_partials(*partials):
    """A JVP rule from the partial derivatives.

    Either one function ``partials(*primals, out) -> tuple`` (one partial per operand), or one
    function per operand ``partial_i(*primals, out)``, called only when that operand's tangent
    is nonzero (so a constant operand costs nothing). The output tangent is
    ``sum_i t_i * partial_i``, cast to the output's dtype and shape.
    """

    def jvp(primals, tangents, out, **attrs):
        if len(partials) == 1:
            parts = partials[0](*primals, out, **attrs)
        else:
            parts = [None if t is None else p(*primals, out, **attrs)
                     for t, p in zip(tangents, partials)]
        total = None
        for t, p in zip(tangents, parts):
            if t is not None:
                total = fitted(ops.multiply, t, p, out) if total is None else \
                    ops.add(total, ops.multiply(t, p))
        return fit(total, out)

    return jvp


def unary_partial(partial):
    """The JVP rule ``dx * partial(x, out)`` of an elementwise unary op."""

    def jvp(primals, tangents, out, **attrs):
        return fitted(ops.multiply, tangents[0], partial(primals[0], out), out)

    return jvp


def fitted(op, a, b, out):
    """``fit(op(a, b), out)`` where one of ``a``, ``b`` is a tangent and the other a constant
    (``op`` is multiply, or divide with the tangent first).

    When the tangent is a linear tape variable with ``out``'s shape and dtype and the constant
    a NumPy array of the same, the tape records the equation at once: what ``bind`` and the
    tape would record, without dispatching or deriving the aval again (the hot case of
    ``grad``: each unary op's tangent is the tangent times its derivative)."""
    var, constant = (a, b) if type(b) is np.ndarray else (b, a)
    if type(constant) is np.ndarray and type(out) is np.ndarray and isinstance(var, Tracer) \
            and var._linear and core.debug_hooks is None:
        aval = var.aval
        if aval.shape == out.shape == constant.shape and aval.dtype == out.dtype \
                == constant.dtype and not aval.weak and var._trace.alive:
            return var._trace.record(op, (a, b), {}, aval)
    return fit(op(a, b), out)


def zeros_like_aval(x):
    """Zeros with ``x``'s shape and dtype (a constant, even when ``x`` is traced)."""
    if is_linear(x):
        raise AssertionError("zeros_like_aval needs a primal, not a tape variable")
    return ops.zeros_like(x)

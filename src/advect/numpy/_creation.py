"""NumPy constructors on traced arrays: ``zeros_like`` and the other ``*_like`` functions,
``like=`` constructors, ranges with traced endpoints, ``meshgrid`` and the file and buffer
readers reached through ``like=``.

A ``like=x`` constructor returns a writable value of ``x``'s trace, so code can fill it with
traced values (``y = np.zeros(3, like=x); y[0] = x[1]``).
"""

from __future__ import annotations

import math
import operator

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of, check_dtype
from ..errors import TracingError
from ..ops._rules import index_tuple
from ._functions import (
    _moveaxis,
    _reshape,
    _shape,
    astype,
    check_order,
    concrete,
    implements,
    lift,
    operand,
    slice_along,
)
from ._mutation import READ_ONLY, mark_array, mark_view, owned_copy
from ._shaping import _broadcast_arrays


@implements(np.zeros_like, nondiff=True)
def _zeros_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _full_like(a, 0, dtype, order, shape=shape)


@implements(np.ones_like, nondiff=True)
def _ones_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _full_like(a, 1, dtype, order, shape=shape)


@implements(np.empty_like, nondiff=True)
def _empty_like(a, dtype=None, order="K", subok=True, shape=None, *, device=None):
    return _full_like(a, 0, dtype, order, shape=shape)


@implements(np.full_like)
def _full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    check_order(order, "numpy.full_like")
    shape = None if shape is None else index_tuple(shape)
    dtype = None if dtype is None else check_dtype(dtype, "a traced array's dtype=").name
    if hasattr(fill_value, "shape"):  # a traced fill value broadcasts and stays differentiable
        target = ops.zeros_like(a, shape=shape, dtype=dtype)
        # selected, not added (0.0 + -0.0 is +0.0), and cast to the result's dtype (dtype=,
        # else a's), as NumPy writes the fill value
        return mark_array(astype(ops.where(True, fill_value, target), aval_of(target).dtype))
    return mark_array(ops.full_like(a, fill_value=fill_value, shape=shape, dtype=dtype))


def _shape_tuple(shape):
    return (int(shape),) if isinstance(shape, int | np.integer) else tuple(int(n) for n in shape)


def _filled(like, shape, fill_value, dtype):
    shape = _shape_tuple(shape)
    if isinstance(fill_value, Tracer):
        return _full_like(like, fill_value, dtype, shape=shape)
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    if not isinstance(like, Tracer):
        return np.full(shape, fill_value, dtype=dtype)
    return mark_array(ops.full_like(like, fill_value=fill_value, shape=shape,
                                    dtype=check_dtype(dtype, "a traced array's dtype=").name))


@implements(np.zeros, like=True, nondiff=True)
def _zeros(shape, dtype=float, order="C", *, device=None, like=None):
    return _filled(like, shape, 0, dtype)


@implements(np.empty, like=True, nondiff=True)
def _empty(shape, dtype=float, order="C", *, device=None, like=None):
    return _filled(like, shape, 0, dtype)


@implements(np.ones, like=True, nondiff=True)
def _ones(shape, dtype=None, order="C", *, device=None, like=None):
    return _filled(like, shape, 1, float if dtype is None else dtype)


@implements(np.full, like=True)
def _full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    check_order(order, "numpy.full")
    if like is None:
        like = fill_value
    return _filled(like, shape, fill_value, dtype)


@implements(np.eye, like=True, nondiff=True)
def _eye(N, M=None, k=0, dtype=float, order="C", *, device=None, like=None):
    return lift(like, np.eye(N, M, k, dtype=dtype))


@implements(np.identity, like=True, nondiff=True)
def _identity(n, dtype=None, *, like=None):
    return lift(like, np.identity(n, dtype=dtype))


@implements(np.tri, like=True, nondiff=True)
def _tri(N, M=None, k=0, dtype=float, *, like=None):
    return lift(like, np.tri(N, M, k, dtype=dtype))


@implements(np.fromfunction, like=True)
def _fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    coords = np.indices(_shape_tuple(shape), dtype=dtype)
    return function(*(lift(like, c) for c in coords), **kwargs)


def _reader(func):
    def read(*args, like=None, **kwargs):
        return lift(like, func(*args, **kwargs))
    read.__name__ = f"_{func.__name__}"
    return read


for _func in (np.frombuffer, np.fromiter, np.fromstring, np.fromfile, np.loadtxt,
              np.genfromtxt):
    implements(_func, like=True, nondiff=True)(_reader(_func))


@implements(np.arange, like=True, nondiff=True)
def _arange(start_or_stop, /, stop=None, step=None, *, dtype=None, device=None, like=None):
    start = 0 if stop is None else start_or_stop
    stop = start_or_stop if stop is None else stop
    step = 1 if step is None else step
    bounds = [concrete(v, "np.arange with traced bounds (its length depends on data)")
              for v in (start, stop, step)]
    if bounds[2] == 0:  # NumPy's class; Python's bare "division by zero" names nothing
        raise ZeroDivisionError("numpy.arange: step=0 gives no range; pass a nonzero step")
    n = max(0, int(np.ceil((bounds[1] - bounds[0]) / bounds[2])))
    if dtype is None:
        dtype = np.result_type(*bounds)
    if not isinstance(start, Tracer) and not isinstance(step, Tracer):
        return lift(like, np.arange(*bounds, dtype=dtype))
    return astype(ops.add(start, ops.multiply(np.arange(n), step)), dtype)


def _endpoint(v):
    """An endpoint as an array or tracer; Python scalars stay weak (NEP 50)."""
    return v if isinstance(v, int | float | complex) else operand(v)


def _float_dtype(*values):
    # a traced Python scalar stays weak, as the Python scalar it stands for
    return np.result_type(*(v if isinstance(v, int | float | complex)
                            else aval_of(v).dtype.type(0).item() if aval_of(v).weak
                            else aval_of(v).dtype for v in values), 0.0)


def _cast(v, dtype):
    return np.asarray(v, dtype=dtype) if isinstance(v, int | float | complex) else astype(v, dtype)


@implements(np.linspace)
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *,
              device=None):
    num = operator.index(num)  # NumPy's TypeError for a float count
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = _endpoint(start), _endpoint(stop)
    dt = _float_dtype(start, stop)
    start, stop = _cast(start, dt), _cast(stop, dt)
    div = num - 1 if endpoint else num
    delta = ops.subtract(stop, start)
    extra = len(np.broadcast_shapes(_shape(start), _shape(stop)))
    ramp = np.arange(num, dtype=dt).reshape((num,) + (1,) * extra)
    # no step without two points: NumPy's NaN, a constant (zero tangent, not delta * NaN's)
    step = ops.divide(delta, div) if div > 0 else ops.full_like(delta, fill_value=math.nan)
    y = ops.add(ops.multiply(ramp, step) if div > 0 else ops.multiply(ramp, delta), start)
    if endpoint and num > 1:
        last = ops.expand_dims(ops.broadcast_to(stop, shape=_shape(y)[1:]), axes=(0,))
        y = ops.concat(slice_along(y, 0, num - 1, 0), last, axis=0)
    if axis != 0:
        y = _moveaxis(y, 0, axis)
    if dtype is not None:
        y = astype(ops.floor(y) if np.dtype(dtype).kind in "iu" else y, dtype)
    return (y, step) if retstep else y


@implements(np.logspace)
def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    y = _linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    base = operand(base) if not isinstance(base, float | int) else base
    if not isinstance(base, float | int) and _shape(base):
        base = ops.expand_dims(base, axes=(axis % (len(_shape(y))),))
    out = ops.pow(base, y)
    return out if dtype is None else astype(out, dtype)


@implements(np.geomspace)
def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    start, stop = operand(start), operand(stop)
    dt = np.result_type(_float_dtype(start, stop), np.float64)  # as NumPy's geomspace
    for end in (start, stop):
        try:
            value = concrete(end, "np.geomspace")
        except TracingError:  # staged: a zero endpoint gives NaN, where NumPy raises
            continue
        if np.any(value == 0):
            raise ValueError("Geometric sequence cannot include zero")
    start, stop = astype(start, dt), astype(stop, dt)
    # as NumPy: rotate start onto the positive reals (negative and complex endpoints), and back.
    # The sign is a constant factor of a function homogeneous of degree one: no tangent is lost
    sign = ops.sign(start)
    start, stop = ops.divide(start, sign), ops.divide(stop, sign)
    y = ops.pow(10.0, _linspace(ops.log10(start), ops.log10(stop), num=num, endpoint=endpoint))
    if num > 0:  # the endpoints are exact, as in NumPy
        rest = _shape(y)[1:]
        parts = [ops.expand_dims(ops.broadcast_to(start, shape=rest), axes=(0,))]
        if endpoint and num > 1:
            parts += [slice_along(y, 1, num - 1, 0),
                      ops.expand_dims(ops.broadcast_to(stop, shape=rest), axes=(0,))]
        else:
            parts.append(slice_along(y, 1, num, 0))
        y = ops.concat(*parts, axis=0)
    y = ops.multiply(y, sign)
    if axis != 0:
        y = _moveaxis(y, 0, axis)
    return y if dtype is None else astype(y, dtype)


@implements(np.meshgrid)
def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    ndim = len(xi)
    out = []
    for i, x in enumerate(xi):
        shape = [1] * ndim
        shape[i] = -1
        out.append(_reshape(operand(x), tuple(shape)))
    if indexing == "xy" and ndim > 1:
        out[0] = _reshape(out[0], (1, -1) + (1,) * (ndim - 2))
        out[1] = _reshape(out[1], (-1, 1) + (1,) * (ndim - 2))
    if not sparse:
        out = list(_broadcast_arrays(*out))
    for i, x in enumerate(xi):
        if not isinstance(x, Tracer):
            continue
        if copy:  # new arrays, also where no reshape or broadcast was needed
            out[i] = owned_copy(out[i]) if out[i] is x else out[i]
        elif out[i] is not x:  # NumPy's views of the inputs: broadcast ones are read-only
            mark_view(x, out[i], None if sparse else READ_ONLY)
    return tuple(out)

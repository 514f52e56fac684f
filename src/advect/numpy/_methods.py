"""The ndarray surface of every tracer: properties, operators, methods, NumPy protocols.

Methods translate to canonical ops (through the same helpers as the NumPy functions) and never
detach: ``__array__``, ``float()`` while staging and friends raise ``TracingError`` instead.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Tracer
from ..errors import TracingError

__all__ = ["ArrayTracer", "INPUT"]

INPUT = "input"  # the _mut marker of a transform's input: never writable


def _operand(x):
    if isinstance(x, list | tuple):
        return np.asarray(x)
    return x


def _binary(op, reflected=False):
    if reflected:
        def method(self, other):
            return op(_operand(other), self)
    else:
        def method(self, other):
            return op(self, _operand(other))
    method.__name__ = op.name
    return method


def _inplace(name):
    def method(self, other):
        from ._mutation import assign_inplace
        return assign_inplace(self, getattr(self, name)(other), f"{name[:2]}i{name[2:]}")
    return method


class ArrayTracer(Tracer):
    """Methods shared by every user-visible tracer. Subclasses provide ``aval`` and payload."""

    __slots__ = ("_mut",)

    # --- NumPy protocols -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from ._ufuncs import array_ufunc
        return array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from ._functions import array_function
        return array_function(func, types, args, kwargs, self)

    def __array_namespace__(self, api_version=None):
        from ..array_api import namespace_for
        return namespace_for(self, api_version)

    def __array__(self, dtype=None, copy=None):
        raise TracingError(
            "np.asarray()/np.array() was called on a traced value, which would detach it from "
            "differentiation; keep it traced with np.array(..., like=x) or advect.asarray(...), "
            "or use advect.stop_gradient(x) if you really want a constant")

    def __dlpack__(self, *args, **kwargs):
        raise TracingError("a traced value cannot be exported through DLPack")

    # --- properties ------------------------------------------------------------------------
    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        size = 1
        for n in self.shape:
            size *= n
        return size

    @property
    def T(self):
        return ops.permute_dims(self, axes=tuple(reversed(range(self.ndim))))

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return ops.matrix_transpose(self)

    @property
    def real(self):
        return ops.real(self) if self.dtype.kind == "c" else self

    @property
    def imag(self):
        return ops.imag(self) if self.dtype.kind == "c" else ops.zeros_like(self)

    @property
    def device(self):
        return self.aval.device or "cpu"

    @property
    def itemsize(self):
        return np.dtype(self.aval.dtype).itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    # --- Python conversions: read the current value (dynamic) or raise (staged) ---------------
    def _concrete(self):
        raise TracingError("this traced value has no concrete data")

    def __bool__(self):
        return bool(self._concrete_for("bool()"))

    def __float__(self):
        return float(self._concrete_for("float()"))

    def __int__(self):
        return int(self._concrete_for("int()"))

    def __complex__(self):
        return complex(self._concrete_for("complex()"))

    def __index__(self):
        value = self._concrete_for("use as an index")
        if np.asarray(value).dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(value)

    def _concrete_for(self, what):
        return self._concrete()

    def item(self, *args):
        return self._concrete_for(".item()").item(*args)

    def tolist(self):
        return np.asarray(self._concrete_for(".tolist()")).tolist()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __hash__(self):
        raise TypeError("unhashable type: traced array")

    def __repr__(self):
        return f"{type(self).__name__}({self.aval})"

    # --- operators ---------------------------------------------------------------------------
    __add__ = _binary(ops.add)
    __radd__ = _binary(ops.add, reflected=True)
    __sub__ = _binary(ops.subtract)
    __rsub__ = _binary(ops.subtract, reflected=True)
    __mul__ = _binary(ops.multiply)
    __rmul__ = _binary(ops.multiply, reflected=True)
    __truediv__ = _binary(ops.divide)
    __rtruediv__ = _binary(ops.divide, reflected=True)
    __floordiv__ = _binary(ops.floor_divide)
    __rfloordiv__ = _binary(ops.floor_divide, reflected=True)
    __mod__ = _binary(ops.remainder)
    __rmod__ = _binary(ops.remainder, reflected=True)
    __matmul__ = _binary(ops.matmul)
    __rmatmul__ = _binary(ops.matmul, reflected=True)
    __lt__ = _binary(ops.less)
    __le__ = _binary(ops.less_equal)
    __gt__ = _binary(ops.greater)
    __ge__ = _binary(ops.greater_equal)
    __rpow__ = _binary(ops.pow, reflected=True)

    def __pow__(self, other):
        if type(other) is int and other == 2:
            return ops.square(self)
        return ops.pow(self, _operand(other))

    def __eq__(self, other):
        return ops.equal(self, _operand(other))

    def __ne__(self, other):
        return ops.not_equal(self, _operand(other))

    def __divmod__(self, other):
        return self // other, self % other

    def __neg__(self):
        return ops.negative(self)

    def __pos__(self):
        return ops.positive(self)

    def __abs__(self):
        return ops.abs(self)

    def __invert__(self):
        return np.invert(self)

    def __and__(self, other):
        return np.bitwise_and(self, other)

    def __rand__(self, other):
        return np.bitwise_and(other, self)

    def __or__(self, other):
        return np.bitwise_or(self, other)

    def __ror__(self, other):
        return np.bitwise_or(other, self)

    def __xor__(self, other):
        return np.bitwise_xor(self, other)

    def __rxor__(self, other):
        return np.bitwise_xor(other, self)

    __iadd__ = _inplace("__add__")
    __isub__ = _inplace("__sub__")
    __imul__ = _inplace("__mul__")
    __itruediv__ = _inplace("__truediv__")
    __ifloordiv__ = _inplace("__floordiv__")
    __imod__ = _inplace("__mod__")
    __ipow__ = _inplace("__pow__")
    __imatmul__ = _inplace("__matmul__")
    __iand__ = _inplace("__and__")
    __ior__ = _inplace("__or__")
    __ixor__ = _inplace("__xor__")

    # --- indexing ------------------------------------------------------------------------
    def __getitem__(self, key):
        from ._indexing import getitem
        return getitem(self, key)

    def __setitem__(self, key, value):
        from ._mutation import setitem
        setitem(self, key, value)

    # --- methods -------------------------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kw):
        return np.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kw)

    def max(self, axis=None, out=None, keepdims=False, **kw):
        return np.max(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def min(self, axis=None, out=None, keepdims=False, **kw):
        return np.min(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.var(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, **kw):
        return np.std(self, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, **kw)

    def argmax(self, axis=None, out=None, keepdims=False):
        return np.argmax(self, axis=axis, out=out, keepdims=keepdims)

    def argmin(self, axis=None, out=None, keepdims=False):
        return np.argmin(self, axis=axis, out=out, keepdims=keepdims)

    def cumsum(self, axis=None, dtype=None, out=None):
        return np.cumsum(self, axis=axis, dtype=dtype, out=out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return np.cumprod(self, axis=axis, dtype=dtype, out=out)

    def ptp(self, axis=None, keepdims=False):
        return np.ptp(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, out=None, keepdims=False, **kw):
        return np.all(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def any(self, axis=None, out=None, keepdims=False, **kw):
        return np.any(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = shape[0]
        return np.reshape(self, tuple(shape), order=order)

    def ravel(self, order="C"):
        return np.ravel(self, order=order)

    def flatten(self, order="C"):
        return np.ravel(self, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple | list)):
            axes = axes[0]
        return np.transpose(self, axes or None)

    def swapaxes(self, axis1, axis2):
        return np.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        return np.squeeze(self, axis=axis)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        from ._functions import astype
        return astype(self, dtype)

    def copy(self, order="C"):
        from ._mutation import owned_copy
        return owned_copy(self)

    def clip(self, min=None, max=None, out=None, **kw):
        return np.clip(self, min, max, out=out, **kw)

    def conj(self):
        return np.conjugate(self)

    conjugate = conj

    def dot(self, b, out=None):
        return np.dot(self, b, out=out)

    def round(self, decimals=0, out=None):
        return np.round(self, decimals=decimals, out=out)

    def repeat(self, repeats, axis=None):
        return np.repeat(self, repeats, axis=axis)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return np.take(self, indices, axis=axis, out=out, mode=mode)

    def diagonal(self, offset=0, axis1=0, axis2=1):
        return np.diagonal(self, offset=offset, axis1=axis1, axis2=axis2)

    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return np.trace(self, offset=offset, axis1=axis1, axis2=axis2, dtype=dtype, out=out)

    def sort(self, axis=-1, kind=None, order=None):
        raise TypeError("ndarray.sort() sorts in place, which traced values cannot do; use "
                        "y = np.sort(x, axis) instead")

    def argsort(self, axis=-1, kind=None, order=None, stable=None):
        return np.argsort(self, axis=axis, kind=kind, order=order, stable=stable)

    def nonzero(self):
        return np.nonzero(self)

    def fill(self, value):
        from ._mutation import setitem
        setitem(self, Ellipsis, value)

    def view(self, *args, **kwargs):
        raise TypeError("ndarray.view() reinterprets memory, which traced values do not have; "
                        "use .astype() or .reshape()")

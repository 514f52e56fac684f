"""The ndarray surface of every tracer: properties, operators, methods, NumPy protocols.

Methods translate to canonical ops (through the same helpers as the NumPy functions) and never
detach: ``__array__``, writes into plain arrays, and ``float()`` and friends of a value that
depends on a differentiated input (or of any value while staging) raise ``TracingError``;
``.item()`` and ``.tolist()`` of such values stay traced.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Tracer
from ..errors import TracingError
from ..providers import provider_of
from . import _functions, _ufuncs
from ._array_methods import NdarrayMethods
from ._array_methods import view as _view
from ._construct import asarray
from ._conversions import (
    TRACED_TABLE,
    scalar_conversion,
    scipy_caller,
    stays_traced,
    traced_item,
    traced_tolist,
    xarray_caller,
)
from ._indexing import getitem
from ._mutation import (
    INPUT,
    READ_ONLY,
    array_result,
    assign_inplace,
    marks_array,
    owned_copy,
    setitem,
)

__all__ = ["ArrayTracer", "INPUT"]

# NumPy functions whose result is a view of their first argument, and the view's kind: None (a
# transformed view) or READ_ONLY (np.diagonal, np.atleast_*d and tuple results mark their own)
_VIEW_FUNCTIONS = dict.fromkeys((
    np.transpose, np.permute_dims, np.matrix_transpose, np.linalg.matrix_transpose, np.reshape,
    np.ravel, np.swapaxes, np.moveaxis, np.rollaxis, np.squeeze, np.expand_dims, np.real,
    np.imag, np.real_if_close, np.flip, np.fliplr, np.flipud, np.rot90,
)) | {np.broadcast_to: READ_ONLY, np.linalg.diagonal: READ_ONLY}


# NumPy functions whose 0-d result is a 0-d ndarray, written in place by ``v += 1``, where most
# give a NumPy scalar (constructors and np.astype mark their own)
_ARRAY_FUNCTIONS = frozenset({
    np.where, np.select, np.piecewise, np.copy, np.array, np.asarray, np.asanyarray, np.i0,
    np.tensordot, np.roll, np.tile, np.resize, np.pad,
})

# NumPy functions that return a Python scalar (a bool; np.real / np.imag of a Python scalar):
# their weak traced result stays weak
_PYTHON_RESULT_FUNCTIONS = frozenset({np.allclose, np.array_equal, np.array_equiv, np.real,
                                      np.imag})


def _operand(x):
    """A list or tuple operand as an array (traced when it holds tracers)."""
    if isinstance(x, list | tuple):
        return asarray(x)
    return x


def _numpy_result(out):
    """What a NumPy function returns is a NumPy value: a result that is still a weak Python
    scalar (every operand was one) becomes a 0-d array of its dtype, as ``np.sin(0.5)`` is
    ``np.float64(0.479...)``, which promotes like an array and can be indexed. Python operators
    keep Python scalars weak (``0.5 * 2.0`` is a float)."""
    if isinstance(out, ArrayTracer):
        return ops.astype(out, dtype=out.aval.dtype.name) if out._weak() else out
    if type(out) is tuple:  # np.divmod, np.frexp and the like
        return tuple(_numpy_result(o) for o in out)
    return out


def _binary(op, reflected=False):
    python_ints = op in _INT_ARITHMETIC

    def method(self, other):
        if type(other) is not np.ndarray:
            if type(other) is list or type(other) is tuple:  # _operand(other), inline
                other = asarray(other)
            if python_ints and self._weak() and _is_weak(other):
                self, other = _python_int(self), _python_int(other)
        return op(other, self) if reflected else op(self, other)
    method.__name__ = op.name
    return method


# Python's arithmetic on bools is int arithmetic (True + True is 2, -True is -1), where NumPy's
# bool ufuncs give True or refuse: a weak (Python) bool among Python scalars is an int
_INT_ARITHMETIC = frozenset((ops.add, ops.subtract, ops.multiply, ops.floor_divide,
                             ops.remainder, ops.pow))


def _is_weak(x) -> bool:
    return type(x) in _PYTHON_SCALARS or isinstance(x, ArrayTracer) and x._weak()


def _python_int(x):
    """``x`` as Python's arithmetic reads it: a Python bool (or a weak traced one) is an int."""
    if type(x) is bool:
        return int(x)
    if isinstance(x, ArrayTracer) and x._weak() and x.aval.dtype.kind == "b":
        return ops.python_scalar(x, dtype="int64")
    return x


_PYTHON_SCALARS = (bool, int, float, complex)


def _inplace(name):
    def method(self, other):
        new = getattr(self, name)(other)
        if isinstance(new, Tracer) and new.dtype != self.dtype and not self._weak():
            _refuse_inplace(self, f"{name[:2]}i{name[2:]}", other)
        if not self.shape and (self._mut is None or self._mut is INPUT and self._weak()):
            # NumPy gives a 0-d result (np.sum(x), np.sin(x[0]), y[0]) as an immutable
            # scalar, so ``v += 1`` rebinds v and leaves its aliases (``w = v``) alone, as it
            # does for a Python scalar input; a 0-d ndarray (np.zeros(())) is written in place
            return new
        return assign_inplace(self, new, f"{name[:2]}i{name[2:]}")
    return method


def _refuse_inplace(x, name, other):
    """``x op= other`` that changes x's dtype: the standard keeps x's dtype, so a provider
    other than NumPy decides, as it does eagerly (array-api-strict refuses, PyTorch casts)."""
    from ..providers import provider_of
    if provider_of(x) is not np:
        from ..array_api._probes import refuse_inplace_as_provider
        refuse_inplace_as_provider(x, name, other)


def _on_numpy(x) -> bool:
    """Whether ``x`` traces a NumPy value."""
    return type(getattr(x, "primal", None)) is np.ndarray or provider_of(x) is np


def _provider_index(x, key, *value):
    """The key of ``x[key]`` (``x[key] = value``) as x's provider reads it, or its refusal
    (array_api._probes); NumPy tracers skip this."""
    from ..array_api._probes import provider_index
    return provider_index(x, key, *value)


def _part(x, out, kind=None):
    """``out``, ``x.real`` or ``x.imag``: a view of an array, a new NumPy scalar of a NumPy
    scalar (``np.complex64(1j).imag`` is ``np.float32(1.0)``)."""
    if x._weak():  # a Python scalar's is a Python scalar
        return out if out._weak() else ops.python_scalar(out, dtype=out.dtype.name)
    return _view(x, out, kind) if x.shape or marks_array(x._mut) else out


class ArrayTracer(NdarrayMethods, Tracer):
    """Methods shared by every user-visible tracer. Subclasses provide ``aval`` and payload."""

    # _views: weak refs to views (_mutation); _where: source line, set only inside advect.debug
    __slots__ = ("_mut", "_views", "_where", "__weakref__")

    def _weak(self) -> bool:
        """Whether this value stands for a Python scalar (subclasses answer without an aval)."""
        return self.aval.weak

    # --- NumPy protocols -------------------------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        op = _ufuncs.UFUNCS.get(ufunc) if not kwargs and method == "__call__" else None
        if op is not None and (len(inputs) == 1 or list not in map(type, inputs)
                               and tuple not in map(type, inputs)):
            out = op(*inputs)  # the hot path: a plain call on arrays (one input is self)
        else:
            out = _ufuncs.array_ufunc(ufunc, method, inputs, kwargs)
        if type(out) is not tuple and not (isinstance(out, ArrayTracer) and out._weak()):
            return out  # the common case, without the call
        return _numpy_result(out)

    def __array_function__(self, func, types, args, kwargs):
        if kwargs:
            _functions.check_device(func, kwargs)
        out = _functions.array_function(func, types, args, kwargs, self)
        if type(out) is tuple or isinstance(out, ArrayTracer) and out._weak() \
                and func not in _PYTHON_RESULT_FUNCTIONS:
            out = _numpy_result(out)
        if func in _VIEW_FUNCTIONS and args and isinstance(args[0], ArrayTracer) \
                and isinstance(out, ArrayTracer) and (out.shape or func is not np.flip):
            # NumPy returns a view: read-only here, stale after writes (np.flip of a 0-d
            # array indexes it with (), a NumPy scalar)
            out = _part(args[0], out) if func is np.real or func is np.imag else \
                _view(args[0], out, _VIEW_FUNCTIONS[func], kwargs.get("copy"))
        elif func in _ARRAY_FUNCTIONS and isinstance(out, ArrayTracer) and not out.shape:
            out = array_result(out, args)
        return out

    def __array_namespace__(self, api_version=None):
        from ..array_api import namespace_for
        return namespace_for(self, api_version)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        """A ``torch`` function of a traced value: refused with an explanation (an operator of
        a tensor and a tracer defers to the tracer's, as NumPy's do)."""
        name = getattr(func, "__name__", str(func))
        if name == "__setitem__":  # plain[i] = traced
            raise TracingError(
                "writing a traced value into a plain tensor (buf[i] = v) would detach it from "
                "differentiation; create the buffer from a traced value instead "
                "(buf = xp.zeros_like(x), then buf[i] = v), or build the result with xp.stack, "
                "xp.concat or xp.where")
        if name.startswith("__"):
            return NotImplemented
        raise TracingError(
            f"torch.{name} is not traced by Advect: call the array's namespace instead "
            f"(xp = x.__array_namespace__(); xp.{name}(x) where the Array API has it) or the "
            "NumPy function, which Advect differentiates whichever library holds the data")

    def __array__(self, dtype=None, copy=None):
        if not self._trace.alive:  # escaped, or a stale view: say so
            raise self._trace.dead_error("np.asarray")
        caller = scipy_caller()
        if caller is not None:
            raise TracingError(
                f"{caller} is not supported on traced arrays: it converts its input to a plain "
                "NumPy array, which would detach it from differentiation; use the "
                "differentiable SciPy functions of advect.scipy (special, ndimage, linalg, "
                "integrate, signal, ...) "
                "or advect.stop_gradient(x) if you really want a constant")
        method = xarray_caller()
        if method is not None:
            raise TracingError(
                f"xarray's {method} converts its data to a plain NumPy array (it reads the "
                "values, to choose a result's shape or to call compiled code), which would "
                "detach a traced value; select with indices or masks computed outside the "
                "transform, use operations that keep data traced (where, isel, arithmetic, "
                "reductions), or advect.stop_gradient(x) if you really want a constant")
        hint = f" ({TRACED_TABLE})" if self.dtype.kind in "iub" else ""
        raise TracingError(
            "a traced value was converted to a plain NumPy array (np.asarray, np.array, or "
            "writing it into a plain array), which would detach it from differentiation; keep it "
            "traced with np.array(..., like=x) or advect.asarray(...), build arrays to write into "
            "with np.zeros_like(x) or np.zeros(shape, like=x), or use advect.stop_gradient(x) "
            f"if you really want a constant{hint}")

    def __dlpack__(self, *args, **kwargs):
        raise TracingError("a traced value cannot be exported through DLPack")

    def to_device(self, device, /, *, stream=None):
        """The Array API's device move: a traced value stays on its device."""
        if device == self.device:
            return self
        raise TracingError(f"to_device: moving a traced value from {self.device!r} to "
                           f"{device!r} is not supported; create it on that device instead")

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
        if self.ndim < 2:
            return self
        return _view(self, ops.permute_dims(self, axes=tuple(reversed(range(self.ndim)))))

    @property
    def mT(self):
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        return _view(self, ops.matrix_transpose(self))

    @property
    def real(self):
        return _part(self, ops.real(self)) if self.dtype.kind == "c" else self

    @property
    def imag(self):
        if self.dtype.kind == "c":
            return _part(self, ops.imag(self))
        return _part(self, ops.zeros_like(self), READ_ONLY)  # NumPy's are read-only zeros

    @property
    def device(self):
        return self.aval.device or "cpu"

    @property
    def itemsize(self):
        return np.dtype(self.aval.dtype).itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    # --- Python conversions: the current value of an undifferentiated value, else raise -------
    def _concrete(self):
        raise TracingError("this traced value has no concrete data")

    def __bool__(self):
        return bool(self._concrete_for("bool()"))

    def __float__(self):
        return float(scalar_conversion(self, "float"))

    def __int__(self):
        return int(scalar_conversion(self, "int"))

    def __complex__(self):
        return complex(scalar_conversion(self, "complex"))

    def as_integer_ratio(self):  # a NumPy float scalar's (Python's statistics module asks)
        if self.ndim or self.dtype.kind != "f":
            raise AttributeError(f"'numpy.{'ndarray' if self.ndim else self.dtype.name}' object "
                                 "has no attribute 'as_integer_ratio'")
        return scalar_conversion(self, "as_integer_ratio").as_integer_ratio()

    def __trunc__(self):  # math.trunc: as int() (math.floor and math.ceil go through float())
        return int(scalar_conversion(self, "math.trunc"))

    def __index__(self):
        value = scalar_conversion(self, "operator.index")
        if np.asarray(value).dtype.kind not in "iub":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(value)

    def _concrete_for(self, what):
        """The current value (``what`` names the use, for the error while staging)."""
        if not self._trace.alive:
            raise self._trace.dead_error(what)
        return self._concrete()

    def item(self, *args):
        """The element as a Python scalar, or as a traced 0-d value when it depends on a
        differentiated input or has no data (staging), so no derivative is lost."""
        if stays_traced(self):
            return traced_item(self, args)
        return self._concrete_for(".item()").item(*args)

    def tolist(self):
        """Nested lists of Python scalars, or of traced 0-d values (see :meth:`item`)."""
        if stays_traced(self):
            return traced_tolist(self)
        return np.asarray(self._concrete_for(".tolist()")).tolist()

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, value):  # NumPy's: (a == value).any(), not a walk over rows
        return bool(np.any(self == value))

    def __hash__(self):
        raise TypeError("unhashable type: traced array")

    def __repr__(self):
        where = getattr(self, "_where", None)
        return f"{type(self).__name__}({self.aval}{'' if where is None else ', at ' + where})"

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
        if self._weak() and _is_weak(other):
            self, other = _python_int(self), _python_int(other)
        # NumPy's fast scalar powers; other providers compute pow itself (for complex values
        # and at -0.0 and -inf the results differ)
        if type(other) is int and other == 2 and (self.aval.dtype.kind != "c" or _on_numpy(self)):
            return ops.square(self)
        if not self._weak() and self.aval.dtype.kind in "fc" and (
                type(other) is float and other == 0.5 or type(other) is int and other == -1) \
                and _on_numpy(self):
            # sqrt(-0.0) is -0.0, pow(-0.0, 0.5) is 0.0; complex pow(inf, -1) is nan, 1 / inf 0
            return ops.sqrt(self) if other == 0.5 else ops.reciprocal(self)
        return ops.pow(self, _operand(other))

    def __eq__(self, other):
        return ops.equal(self, _operand(other))

    def __ne__(self, other):
        return ops.not_equal(self, _operand(other))

    def __divmod__(self, other):
        return self // other, self % other

    def __rdivmod__(self, other):
        return other // self, other % self

    def __neg__(self):
        return ops.negative(_python_int(self))

    def __pos__(self):
        return ops.positive(_python_int(self))

    def __abs__(self):
        return ops.abs(_python_int(self))

    def __invert__(self):
        return ops.bitwise_invert(_python_int(self))

    __and__ = _binary(ops.bitwise_and)
    __rand__ = _binary(ops.bitwise_and, reflected=True)
    __or__ = _binary(ops.bitwise_or)
    __ror__ = _binary(ops.bitwise_or, reflected=True)
    __xor__ = _binary(ops.bitwise_xor)
    __rxor__ = _binary(ops.bitwise_xor, reflected=True)
    __lshift__ = _binary(ops.bitwise_left_shift)
    __rlshift__ = _binary(ops.bitwise_left_shift, reflected=True)
    __rshift__ = _binary(ops.bitwise_right_shift)
    __rrshift__ = _binary(ops.bitwise_right_shift, reflected=True)

    def __round__(self, ndigits=None):
        if ndigits is None and not self.shape and self.aval.dtype.kind in "fiu":
            # round(np.float64(2.5)) and round(2.5) are the Python int 2
            rounded = ops.astype(np.round(self), dtype="int64")
            return ops.python_scalar(rounded, dtype="int64")
        out = np.round(self, decimals=ndigits or 0)
        if self._weak() and self.aval.dtype.kind in "fiu":  # round(2.567, 2) is a Python float
            out = ops.python_scalar(out, dtype=self.aval.dtype.name)
        return out

    def __copy__(self):
        return owned_copy(self)

    def __deepcopy__(self, memo):
        return owned_copy(self)

    def __reduce_ex__(self, protocol):  # pickle would rebuild a tracer cut off from its trace
        raise TracingError("a traced value cannot be pickled: pickle advect.stop_gradient(x) "
                           "for its current value, or stage the function (advect.stage) and "
                           "pickle the program")

    def __format__(self, spec):
        return format(self._concrete_for("format()"), spec) if spec else str(self)

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
    __ilshift__ = _inplace("__lshift__")
    __irshift__ = _inplace("__rshift__")

    # --- indexing ------------------------------------------------------------------------
    def __getitem__(self, key):
        if not _on_numpy(self):
            key = _provider_index(self, key)  # another provider's tracer
        return getitem(self, key)

    def __setitem__(self, key, value):
        if not _on_numpy(self):
            key = _provider_index(self, key, value)
        setitem(self, key, value)

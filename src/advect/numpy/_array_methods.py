"""The named ndarray methods of every tracer (``x.sum()``, ``x.reshape()``, ``x.sort()``, ...).

Each one spells the NumPy function it stands for, so it reaches the same translation; views
are marked as NumPy's are, and in-place methods are functionalized (see _mutation.py).
``ArrayTracer`` (_methods.py) inherits them with the operators and protocols.
"""

from __future__ import annotations

import numpy as np

from ..core import Tracer
from . import _functions
from ._mutation import (
    Flat,
    View,
    assign_inplace,
    mark_array,
    mark_view,
    numpy_scalar,
    owned_copy,
    setitem,
)

__all__ = ["NdarrayMethods", "view"]


def view(x, out, kind=None, copy=None):
    """``out``, marked as a transformed view of ``x`` (``.T``, ``.reshape()``, ...), or as a
    read-only one (``kind`` READ_ONLY); with ``copy`` true (``np.reshape(x, s, copy=True)``), a
    new array instead."""
    if copy:
        return owned_copy(out) if out is x else out
    if out is not x:
        mark_view(x, out, kind)
    return out


class NdarrayMethods:
    """The named methods; a base of ArrayTracer, which provides ``aval`` and the payload."""

    __slots__ = ()

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

    def all(self, axis=None, out=None, keepdims=False, **kw):
        return np.all(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def any(self, axis=None, out=None, keepdims=False, **kw):
        return np.any(self, axis=axis, out=out, keepdims=keepdims, **kw)

    def reshape(self, *shape, order="C", copy=None):
        if not shape:
            raise TypeError("reshape() takes exactly 1 argument (0 given)")
        if len(shape) == 1 and isinstance(shape[0], tuple | list):
            shape = shape[0]
        out = view(self, np.reshape(self, tuple(shape), order=order))
        return owned_copy(out) if copy else out  # copy=True: a new array, never a view

    def ravel(self, order="C"):
        return view(self, np.ravel(self, order=order))

    def flatten(self, order="C"):  # a copy, never a view (np.ravel's result may be one)
        return owned_copy(np.ravel(self, order=order))

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple | list)):
            axes = axes[0]
        return view(self, np.transpose(self, axes or None))

    def swapaxes(self, axis1, axis2):
        return view(self, np.swapaxes(self, axis1, axis2))

    def squeeze(self, axis=None):
        return view(self, np.squeeze(self, axis=axis))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        _functions.check_order(order, "astype")
        out = _functions.astype(self, dtype, casting)
        out = owned_copy(out) if copy and out is self else out
        # a 0-d ndarray's cast is a 0-d ndarray (a NumPy scalar's, a scalar)
        return mark_array(out) if not self.shape and self._mut is not None else out

    def copy(self, order="C"):
        _functions.check_order(order, "copy")
        return owned_copy(self)

    def clip(self, min=None, max=None, out=None, **kw):
        return np.clip(self, min, max, out=out, **kw)

    def conj(self):  # NumPy's method returns a real array itself (np.conjugate, a new array)
        return np.conjugate(self) if self.dtype.kind == "c" else self

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

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Sort in place like NumPy (functionalized); an input raises MutationError."""
        assign_inplace(self, np.sort(self, axis=axis, kind=kind, order=order, stable=stable),
                       "ndarray.sort() (in place; np.sort(x) returns a sorted copy)")

    def argsort(self, axis=-1, kind=None, order=None, stable=None):
        return np.argsort(self, axis=axis, kind=kind, order=order, stable=stable)

    def setflags(self, write=None, align=None, uic=None):
        """Refused: a traced value is immutable (writes are functionalized, inputs are never
        writable), so its flags cannot change."""
        from ..errors import MutationError
        raise MutationError("setflags() on a traced value: traced arrays are immutable values; "
                            "copy it (y = x.copy()) and write into the copy instead")

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Partition in place like NumPy (functionalized); an input raises MutationError."""
        assign_inplace(self, np.partition(self, kth, axis=axis, kind=kind, order=order),
                       "ndarray.partition() (in place; np.partition(x, kth) returns a copy)")

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return np.argpartition(self, kth, axis=axis, kind=kind, order=order)

    def searchsorted(self, v, side="left", sorter=None):
        return np.searchsorted(self, v, side=side, sorter=sorter)

    def choose(self, choices, out=None, mode="raise"):
        return np.choose(self, choices, out=out, mode=mode)

    def compress(self, condition, axis=None, out=None):
        return np.compress(condition, self, axis=axis, out=out)

    def put(self, indices, values, mode="raise"):
        """Write ``values`` at flat ``indices`` in place like NumPy (functionalized)."""
        np.put(self, indices, values, mode=mode)

    def resize(self, *new_shape, refcheck=True):
        raise TypeError("ndarray.resize() changes an array's size in place, which traced values "
                        "cannot do; use y = np.resize(x, shape) instead")

    @property
    def flat(self):
        return Flat(self)

    @property
    def base(self):
        """The array this one is a view of (None for an array that owns its value)."""
        mut = self._mut
        return mut.parent if type(mut) is View else None

    def tobytes(self, order="C"):
        return np.asarray(self._concrete_for(".tobytes()")).tobytes(order=order)

    def nonzero(self):
        return np.nonzero(self)

    def fill(self, value):
        if value.ndim if isinstance(value, Tracer) else np.ndim(value):  # NumPy's ValueError
            raise ValueError("setting an array element with a sequence: fill() takes a scalar; "
                             "write an array with x[...] = value")
        if not numpy_scalar(self):  # NumPy fills a temporary copy of a scalar
            setitem(self, Ellipsis, value)

    def view(self, *args, **kwargs):
        raise TypeError("ndarray.view() reinterprets memory, which traced values do not have; "
                        "use .astype() or .reshape()")

    # defined only to explain the alternative: advect.support_catalog lists them as unsupported
    view.refuses = resize.refuses = setflags.refuses = True

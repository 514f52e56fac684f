"""NumPy's products (matmul, dot, tensordot, vdot, inner, outer) on traced arrays."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import aval_of
from ..ops._rules import each_axis, index_tuple
from ._functions import _ravel, _shape, implements, operand, pair


@implements(np.matmul)
def _matmul(x1, x2, /, out=None, **kwargs):
    return ops.matmul(x1, x2)


def _array(x):
    """An array_like operand as NumPy reads it: a list or tuple (of tracers, too) is an array."""
    return operand(x) if isinstance(x, list | tuple) else x


def _strong(x):  # np.dot makes arrays of its operands: np.dot(float32_array, 2) is float64
    if type(x) in (bool, int, float, complex):
        return np.asarray(x)
    x = _array(x)
    return ops.astype(x, dtype=aval_of(x).dtype.name) if aval_of(x).weak else x


@implements(np.dot)
def _dot(a, b, out=None):
    a, b = _strong(a), _strong(b)
    na, nb = len(_shape(a)), len(_shape(b))
    if na == 0 or nb == 0:
        return _scalar_product(a, b)
    if nb == 1 or na == 1 and nb <= 2:
        return ops.matmul(a, b)
    return ops.dot_general(a, b, contract=((na - 1,), (nb - 2,)), batch=((), ()))


def _scalar_product(a, b):
    """np.dot or np.inner with a 0-d operand: the elementwise product, which NumPy computes with
    its dot kernel; complex products round there unlike np.multiply's, so they are a matmul
    over one axis of length 1."""
    if aval_of(a).dtype.kind != "c" and aval_of(b).dtype.kind != "c":
        return ops.multiply(a, b)
    if not _shape(a):
        a, b = b, a  # the 0-d operand second
    return ops.matmul(ops.expand_dims(a, axes=(len(_shape(a)),)), ops.reshape(b, shape=(1,)))


@implements(np.tensordot)
def _tensordot(a, b, axes=2):
    a, b = _strong(a), _strong(b)  # np.tensordot makes arrays of its operands, as np.dot
    na, nb = len(_shape(a)), len(_shape(b))
    if getattr(axes, "ndim", 0) == 0 and hasattr(axes, "__index__"):
        (n,) = index_tuple(axes)
        xa, xb = tuple(range(-n, 0)), tuple(range(n))  # as NumPy reads them
    else:
        xa, xb = (index_tuple(x) for x in pair(axes, "numpy.tensordot", "axes"))
    return ops.dot_general(a, b, contract=(each_axis(xa, na), each_axis(xb, nb)), batch=((), ()))


@implements(np.vdot)
def _vdot(a, b):
    a, b = _array(a), _array(b)
    return ops.vecdot(_ravel(a), _ravel(b))  # NumPy's vdot is its vecdot of the flat vectors


@implements(np.inner)
def _inner(a, b):
    a, b = _strong(a), _strong(b)
    na, nb = len(_shape(a)), len(_shape(b))
    if na == 0 or nb == 0:
        return _scalar_product(a, b)
    if na == nb == 1:  # matmul's NumPy scalar, as np.inner returns (tensordot gives a 0-d array)
        return ops.matmul(a, b)
    return ops.dot_general(a, b, contract=((na - 1,), (nb - 1,)), batch=((), ()))


@implements(np.outer)
def _outer(a, b, out=None):
    a, b = _array(a), _array(b)
    return ops.multiply(ops.expand_dims(_ravel(a), axes=(1,)), _ravel(b))

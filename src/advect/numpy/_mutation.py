"""Functionalized mutation: ``y[i] = v``, ``y += v`` and ``out=y`` on owned local arrays.

A tracer is a mutable wrapper around an immutable value: each write emits a pure op (scatter,
add, ...) and repoints the tracer to its result. A transform's inputs are never writable.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of
from ..errors import MutationError, TracingError
from ._indexing import normalize_index
from ._methods import INPUT

__all__ = ["setitem", "assign_inplace", "owned_copy", "check_writable", "write_plain"]


def check_writable(x, what: str) -> None:
    if x._mut is INPUT:
        raise MutationError(
            f"{what} would modify an input of the transformed function, which Advect never "
            "does; copy it first (y = x.copy()) and update the copy")


def _repoint(x, new) -> None:
    if type(new) is not type(x) or new._trace is not x._trace:
        raise MutationError("cannot write a value of an inner transform into an array owned by "
                            "an outer one; build a new array instead")
    x._assign(new)


def _cast_for_write(x, new, what):
    x_dtype, new_dtype = aval_of(x).dtype, aval_of(new).dtype
    if new_dtype != x_dtype:
        if not np.can_cast(new_dtype, x_dtype, "same_kind"):
            raise TypeError(f"{what}: cannot cast {new_dtype} to {x_dtype} with casting rule "
                            "'same_kind'")
        new = ops.astype(new, dtype=x_dtype.name)
    return new


def setitem(x, key, value) -> None:
    check_writable(x, "item assignment")
    index, arrays = normalize_index(x.shape, key)
    if isinstance(value, list | tuple):
        value = np.asarray(value)
    value = _cast_for_write(x, value, "item assignment") if isinstance(value, Tracer) else value
    _repoint(x, ops.scatter(x, value, *arrays, index=index))


def assign_inplace(x, new, name: str):
    check_writable(x, f"in-place operator {name}")
    if tuple(aval_of(new).shape) != tuple(x.shape):
        raise ValueError(f"{name}: non-broadcastable output operand with shape {x.shape} "
                         f"doesn't match the broadcast shape {aval_of(new).shape}")
    _repoint(x, _cast_for_write(x, new, name))
    return x


def owned_copy(x):
    """A writable copy: the same immutable value behind a new wrapper."""
    return x._clone()


def write_plain(target, what: str):
    raise TracingError(
        f"{what} writes a traced value into a plain NumPy array, which would detach it; create "
        "the array from the traced value instead: np.zeros_like(x), or np.zeros(shape, like=x)")

"""Shape operations: all linear, all views or cheap copies in the provider."""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..core import Op
from ..dtypes import Aval, result_type
from ._rules import broadcast_shapes, is_linear, unbroadcast


def _reshape_abstract(x, *, shape):
    if math.prod(shape) != x.size:
        raise ValueError(f"cannot reshape array of size {x.size} into shape {shape}")
    return x.update(shape=tuple(shape))


reshape = Op("reshape", attrs={"shape": "shape"}, abstract=_reshape_abstract,
             impl=lambda xp, x, *, shape: xp.reshape(x, shape), linear=True,
             transpose=lambda ct, x, *, shape: (reshape(ct, shape=x.shape),))


def _permute_abstract(x, *, axes):
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"axes {axes} don't match array of {x.ndim} dimensions")
    return x.update(shape=tuple(x.shape[a] for a in axes))


def _inverse_permutation(axes):
    inverse = [0] * len(axes)
    for i, a in enumerate(axes):
        inverse[a] = i
    return tuple(inverse)


permute_dims = Op("permute_dims", attrs={"axes": "axes"}, abstract=_permute_abstract,
                  impl=lambda xp, x, *, axes: x.transpose(axes) if type(x) is np.ndarray
                  else xp.permute_dims(x, axes), linear=True,  # the method: no Python wrapper
                  transpose=lambda ct, x, *, axes: (
                      permute_dims(ct, axes=_inverse_permutation(axes)),))


def _broadcast_to_abstract(x, *, shape):
    if broadcast_shapes(x.shape, tuple(shape)) != tuple(shape):
        raise ValueError(f"cannot broadcast an array of shape {x.shape} to shape {shape}")
    return Aval(tuple(shape), x.dtype, False, x.device)


broadcast_to = Op("broadcast_to", attrs={"shape": "shape"}, abstract=_broadcast_to_abstract,
                  impl=lambda xp, x, *, shape: xp.broadcast_to(x, shape), linear=True,
                  transpose=lambda ct, x, *, shape: (unbroadcast(ct, x.shape),))


def _expand_dims_abstract(x, *, axes):
    shape = list(x.shape)
    for a in sorted(axes):
        shape.insert(a, 1)
    return x.update(shape=tuple(shape))


def _expand_dims_impl(xp, x, *, axes):
    shape = list(getattr(x, "shape", ()))  # a Python scalar (a weak input) is 0-d
    for a in sorted(axes):
        shape.insert(a, 1)
    return xp.reshape(x, tuple(shape))


expand_dims = Op("expand_dims", attrs={"axes": "new_axes"}, abstract=_expand_dims_abstract,
                 impl=_expand_dims_impl, linear=True,
                 transpose=lambda ct, x, *, axes: (reshape(ct, shape=x.shape),))


def _squeeze_abstract(x, *, axes):
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"cannot squeeze axis {a} of size {x.shape[a]}: only size-1 axes")
    return x.update(shape=tuple(n for i, n in enumerate(x.shape) if i not in axes))


def _squeeze_impl(xp, x, *, axes):
    shape = tuple(x.shape)
    for a in axes:  # the abstract rule's check, which dynamic calls skip: a provider's reshape
        if shape[a] != 1:  # error (PyTorch's RuntimeError) would not say what is wrong
            raise ValueError(f"cannot squeeze axis {a} of size {shape[a]}: only size-1 axes")
    return xp.reshape(x, tuple(n for i, n in enumerate(shape) if i not in axes))


squeeze = Op("squeeze", attrs={"axes": "axes"}, abstract=_squeeze_abstract, impl=_squeeze_impl,
             linear=True, transpose=lambda ct, x, *, axes: (reshape(ct, shape=x.shape),))


def _concat_abstract(*xs, axis):
    first = xs[0]
    for x in xs[1:]:
        if x.ndim != first.ndim or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, first.shape)) if i != axis):
            raise ValueError("all the input array dimensions except for the concatenation axis "
                             f"must match exactly, got shapes {[x.shape for x in xs]}")
    shape = list(first.shape)
    shape[axis] = sum(x.shape[axis] for x in xs)
    weak = all(x.weak for x in xs)
    return Aval(tuple(shape), result_type(*xs), weak, first.device)


def _concat_transpose(ct, *xs, axis):
    out, start = [], 0
    for x in xs:
        size = x.shape[axis]
        if is_linear(x):
            out.append(slice_axis(ct, start=start, stop=start + size, axis=axis))
        else:
            out.append(None)
        start += size
    return tuple(out)


concat = Op("concat", allocates=True, attrs={"axis": "axis"}, abstract=_concat_abstract,
            impl=lambda xp, *xs, axis: xp.concat(xs, axis=axis), linear=True,
            transpose=_concat_transpose)


def _stack_abstract(*xs, axis):
    first = xs[0]
    if not 0 <= axis <= first.ndim:
        raise ValueError(f"axis {axis} is out of bounds for the stacked array of dimension "
                         f"{first.ndim + 1}")
    for x in xs[1:]:
        if x.shape != first.shape:
            raise ValueError("all input arrays must have the same shape, got shapes "
                             f"{[x.shape for x in xs]}")
    shape = list(first.shape)
    shape.insert(axis, len(xs))
    # NumPy makes each operand an array first: a Python scalar is float64 here, not weak
    return Aval(tuple(shape), result_type(*(x.update(weak=False) for x in xs)), False,
                first.device)


def _stack_transpose(ct, *xs, axis):
    lead = ((None, None, None),) * axis
    return tuple(ops.gather(ct, index=lead + (i,)) if is_linear(x) else None
                 for i, x in enumerate(xs))


def _stack_impl(xp, *xs, axis):
    """``xp.stack``; along axis 0 for NumPy values of one dtype (C-contiguous, as the result
    then is) ``np.array(xs)``, which skips np.stack's argument handling: the same values."""
    if axis == 0 and xp is np:
        dtype = getattr(xs[0], "dtype", None)  # None for a Python scalar
        if dtype is not None and all(
                (type(x) is np.ndarray and x.flags.c_contiguous or isinstance(x, np.generic))
                and x.dtype == dtype for x in xs):
            return np.array(xs)
    return xp.stack(xs, axis=axis)


stack = Op("stack", attrs={"axis": "new_axis"}, abstract=_stack_abstract, impl=_stack_impl,
           linear=True, transpose=_stack_transpose)


def _slice_axis_abstract(x, *, start, stop, axis, step=1):
    shape = list(x.shape)
    shape[axis] = len(range(start, stop, step))
    return x.update(shape=tuple(shape))


def _slice_axis_impl(xp, x, *, start, stop, axis, step=1):
    return x[(slice(None),) * axis + (slice(start, stop, step), Ellipsis)]


def _slice_axis_transpose(ct, x, *, start, stop, axis, step=1):
    return (ops.scatter_add(ops.zeros_like(ct, shape=x.shape), ct,
                            index=((None, None, None),) * axis + ((start, stop, step),)),)


slice_axis = Op("slice_axis",
                attrs={"start": "int64", "stop": "int64", "axis": "axis", "step": "int64?"},
                abstract=_slice_axis_abstract, impl=_slice_axis_impl, linear=True,
                transpose=_slice_axis_transpose)

flip = Op("flip", attrs={"axes": "axes"}, abstract=lambda x, *, axes: x,
          impl=lambda xp, x, *, axes: xp.flip(x, axis=axes), linear=True,
          transpose=lambda ct, x, *, axes: (flip(ct, axes=axes),))


def _roll_impl(xp, x, *, shift, axes):
    """``xp.roll``; a NumPy roll along one axis as np.roll's two slice copies, without its
    argument handling (which costs more than the copies for small arrays): the same values."""
    if xp is not np or len(axes) != 1 or not x.ndim:
        return xp.roll(x, shift, axis=axes)
    a = axes[0] % x.ndim
    n = x.shape[a]
    k = shift[0] % n if n else 0
    lead = (slice(None),) * a
    out = np.empty_like(x)
    out[(*lead, slice(k, None))] = x[(*lead, slice(None, n - k))]
    out[(*lead, slice(None, k))] = x[(*lead, slice(n - k, None))]
    return out


roll = Op("roll", allocates=True, attrs={"shift": "int64s", "axes": "axes"},
          abstract=lambda x, *, shift, axes: x,
          impl=_roll_impl, linear=True,
          transpose=lambda ct, x, *, shift, axes: (
              roll(ct, shift=tuple(-s for s in shift), axes=axes),))

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]

"""Indexing: ``gather`` reads ``x[index]``, ``scatter_add`` and ``scatter`` write it.

``index`` is a static tuple with one entry per position of a NumPy index tuple (Ellipsis expanded
by the frontend): an ``int``; a ``(start, stop, step)`` slice (entries may be None); ``None`` for
a new axis; or ``"array"`` for the next integer-array operand. Boolean masks are turned into
integer arrays by the frontend, because their shape depends on data.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from ..core import Op, apply_linear
from ..dtypes import Aval
from . import _portable
from ._rules import aval_of, broadcast_shapes, is_linear, unbroadcast
from .creation import zeros_like


def index_key(index, arrays):
    """The NumPy index tuple that ``index`` and its array operands stand for."""
    if not arrays:  # a basic index: the same key every time
        try:
            return _basic_key(index)
        except TypeError:  # an index that cannot be hashed (lists in a hand-made graph)
            pass
    return _key(index, arrays)


@functools.lru_cache(maxsize=1024)
def _basic_key(index):
    return _key(index, ())


def _key(index, arrays):
    it = iter(arrays)
    key = []
    for e in index:
        if e == "array":
            key.append(next(it))
        elif isinstance(e, tuple):
            key.append(slice(*e))
        else:
            key.append(e)
    return tuple(key)


def index_shape(shape, index, array_shapes):
    """The shape of ``x[index]`` by NumPy's rules, advanced indices included."""
    has_arrays = bool(array_shapes)
    out, adv_at, dim, prev_adv, contiguous = [], [], 0, None, True
    for e in index:
        if e is None:
            out.append(1)
            continue
        if dim >= len(shape):
            raise IndexError(f"too many indices for array of dimension {len(shape)}")
        n = shape[dim]
        if isinstance(e, tuple):
            out.append(len(range(*slice(*e).indices(n))))
        elif e == "array" or has_arrays:
            if isinstance(e, int) and not -n <= e < n:
                raise IndexError(f"index {e} is out of bounds for axis {dim} with size {n}")
            if prev_adv is not None and prev_adv != len(out):
                contiguous = False
            adv_at.append(len(out))
            prev_adv = len(out)
        elif not -n <= e < n:
            raise IndexError(f"index {e} is out of bounds for axis {dim} with size {n}")
        dim += 1
    out.extend(shape[dim:])
    if adv_at:
        adv_shape = list(broadcast_shapes(*array_shapes))
        at = adv_at[0] if contiguous else 0
        out[at:at] = adv_shape
    return tuple(out)


def _gather_abstract(x, *arrays, index):
    for a in arrays:
        if a.dtype.kind not in "iu":
            raise IndexError("arrays used as indices must be of integer type, got " + str(a.dtype))
    return Aval(index_shape(x.shape, index, [a.shape for a in arrays]), x.dtype, False, x.device)


def _gather_transpose(ct, x, *arrays, index):
    return (scatter_add(zeros_like(ct, shape=x.shape), ct, *arrays, index=index),
            *(None for _ in arrays))


def _gather_kernel(xp, n_operands, *, index):
    # a basic index into a NumPy array: x[key], the key built once, indexed from C
    return operator.itemgetter(index_key(index, ())) if xp is np and n_operands == 1 else None


gather = Op("gather", attrs={"index": "index"}, abstract=_gather_abstract, linear=True,
            impl=lambda xp, x, *arrays, index: _portable.getitem(xp, x, index_key(index, arrays)),
            jvp=lambda primals, tangents, out, *, index: apply_linear(
                gather, (tangents[0], *primals[1:]), primals, out, {"index": index}),
            transpose=_gather_transpose, kernel=_gather_kernel)


def _scatter_abstract(x, v, *arrays, index):
    target = index_shape(x.shape, index, [a.shape for a in arrays])
    if broadcast_shapes(v.shape, target) != target:
        raise ValueError(f"could not broadcast input array from shape {v.shape} into shape "
                         f"{target}")
    return Aval(x.shape, x.dtype, False, x.device)


def _scatter_add_impl(xp, x, v, *arrays, index):
    return _portable.scatter_add(xp, x, index_key(index, arrays), v)  # repeats accumulate


def _scatter_add_jvp(primals, tangents, out, *, index):
    dx, dv = tangents[:2]
    arrays = primals[2:]
    if aval_of(out).dtype.kind not in "fc":  # float values written into an integer array
        return None
    if dv is None:
        return dx
    base = zeros_like(out) if dx is None else dx
    return scatter_add(base, dv, *arrays, index=index)


def _scatter_add_transpose(ct, x, v, *arrays, index):
    return (ct if is_linear(x) else None,
            unbroadcast(gather(ct, *arrays, index=index), v.shape) if is_linear(v) else None,
            *(None for _ in arrays))


def _scatter_add_kernel(xp, n_operands, *, index):
    if xp is not np or n_operands != 2:
        return None
    key = index_key(index, ())  # a basic index into a NumPy array, the key built once

    def scatter_add(x, v):
        return _portable.add_basic(x, key, v)
    return scatter_add


scatter_add = Op("scatter_add", allocates=True, attrs={"index": "index"},
                 abstract=_scatter_abstract, impl=_scatter_add_impl, jvp=_scatter_add_jvp,
                 transpose=_scatter_add_transpose, kernel=_scatter_add_kernel)


def _scatter_impl(xp, x, v, *arrays, index):
    return _portable.scatter(xp, x, index_key(index, arrays), v)


def _scatter_jvp(primals, tangents, out, *, index):
    dx, dv = tangents[:2]
    arrays = primals[2:]
    if aval_of(out).dtype.kind not in "fc":  # float values written into an integer array are
        return None                          # truncated: no derivative reaches the output
    base = zeros_like(out) if dx is None else dx
    return scatter(base, 0.0 if dv is None else dv, *arrays, index=index)


def _last_writes(ct, x_shape, arrays, index):
    """Where each entry of ``x[index]`` is the write that lands (repeated indices: the last)."""
    from .. import ops  # the elementwise and shape tables are loaded after this one

    target = index_shape(x_shape, index, [aval_of(a).shape for a in arrays])
    size = int(np.prod(target))
    ids = ops.reshape(ops.iota_like(ct, shape=(size,), axis=0), shape=target)
    written = scatter(ops.full_like(ct, fill_value=-1, shape=x_shape, dtype="int64"), ids,
                      *arrays, index=index)
    return ops.equal(gather(written, *arrays, index=index), ids)


def _scatter_transpose(ct, x, v, *arrays, index):
    ct_v = None
    if is_linear(v):
        ct_v = gather(ct, *arrays, index=index)
        if arrays:  # an overwritten duplicate write does not reach the output
            from .. import ops
            ct_v = ops.where(_last_writes(ct, x.shape, arrays, index), ct_v, 0.0)
        ct_v = unbroadcast(ct_v, v.shape)
    return (scatter(ct, 0.0, *arrays, index=index) if is_linear(x) else None, ct_v,
            *(None for _ in arrays))


scatter = Op("scatter", allocates=True, attrs={"index": "index"}, abstract=_scatter_abstract,
             impl=_scatter_impl, jvp=_scatter_jvp, transpose=_scatter_transpose)

__all__ = ["gather", "scatter_add", "scatter", "index_key", "index_shape"]

"""Linear algebra: matmul, dot_general and friends."""

from __future__ import annotations

import math

from .. import ops
from ..core import Op
from ..dtypes import Aval, aval_of, result_type
from ._rules import add_tangents, broadcast_shapes, conj, fit, is_linear, unbroadcast


def _matmul_abstract(x, y):
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("matmul: input operands must have at least one dimension, got shapes "
                         f"{x.shape} and {y.shape}")
    xs = (1, *x.shape) if x.ndim == 1 else x.shape
    ys = (*y.shape, 1) if y.ndim == 1 else y.shape
    if xs[-1] != ys[-2]:
        raise ValueError(f"matmul: contracted dimensions differ: shapes {x.shape} and {y.shape}")
    batch = broadcast_shapes(xs[:-2], ys[:-2])
    shape = (*batch, *xs[-2:-1][: x.ndim > 1], *ys[-1:][: y.ndim > 1])
    return Aval(shape, result_type(x, y), False, x.device or y.device)


def _matmul_jvp(primals, tangents, out):
    (x, y), (dx, dy) = primals, tangents
    t = add_tangents(None if dx is None else matmul(dx, y), None if dy is None else matmul(x, dy))
    return fit(t, aval_of(out))


def matrix_transpose(x):
    """Swap the last two axes (a view)."""
    n = aval_of(x).ndim
    return ops.permute_dims(x, axes=(*range(n - 2), n - 1, n - 2))


def _matmul_transpose(ct, x, y):
    xs, ys = aval_of(x).shape, aval_of(y).shape
    x2 = x if len(xs) > 1 else None
    if len(xs) == 1:  # treat x as (1, n) and y as (n, 1); restore the removed axes on ct
        ct = ops.expand_dims(ct, axes=(aval_of(ct).ndim - (0 if len(ys) == 1 else 1),))
    if len(ys) == 1:
        ct = ops.expand_dims(ct, axes=(aval_of(ct).ndim,))
    if is_linear(x):
        y2 = ops.reshape(y, shape=(*ys, 1)) if len(ys) == 1 else y
        g = matmul(ct, matrix_transpose(conj(y2)))
        shape = (1, *xs) if len(xs) == 1 else xs
        return (ops.reshape(unbroadcast(g, shape), shape=xs), None)
    x2 = ops.reshape(x, shape=(1, *xs)) if len(xs) == 1 else x
    g = matmul(matrix_transpose(conj(x2)), ct)
    shape = (*ys, 1) if len(ys) == 1 else ys
    return (None, ops.reshape(unbroadcast(g, shape), shape=ys))


matmul = Op("matmul", abstract=_matmul_abstract, impl=lambda xp, x, y: xp.matmul(x, y),
            jvp=_matmul_jvp, transpose=_matmul_transpose)


def _free(ndim, *used):
    taken = {a for axes in used for a in axes}
    return tuple(a for a in range(ndim) if a not in taken)


def _dot_general_abstract(x, y, *, contract, batch):
    (xc, yc), (xb, yb) = contract, batch
    for a, b in (*zip(xc, yc), *zip(xb, yb)):
        if x.shape[a] != y.shape[b]:
            raise ValueError(f"dot_general: axis {a} of shape {x.shape} and axis {b} of shape "
                             f"{y.shape} differ in size")
    shape = (*(x.shape[a] for a in xb), *(x.shape[a] for a in _free(x.ndim, xb, xc)),
             *(y.shape[a] for a in _free(y.ndim, yb, yc)))
    return Aval(shape, result_type(x, y), False, x.device or y.device)


def _dot_general_impl(xp, x, y, *, contract, batch):
    (xc, yc), (xb, yb) = contract, batch
    if not xb:
        return xp.tensordot(x, y, axes=(xc, yc))
    xf, yf = _free(x.ndim, xb, xc), _free(y.ndim, yb, yc)
    bshape = tuple(x.shape[a] for a in xb)
    xfs, yfs = tuple(x.shape[a] for a in xf), tuple(y.shape[a] for a in yf)
    k = math.prod(x.shape[a] for a in xc)
    xt = xp.reshape(xp.permute_dims(x, (*xb, *xf, *xc)), (*bshape, math.prod(xfs), k))
    yt = xp.reshape(xp.permute_dims(y, (*yb, *yc, *yf)), (*bshape, k, math.prod(yfs)))
    return xp.reshape(xp.matmul(xt, yt), (*bshape, *xfs, *yfs))


def _dot_general_jvp(primals, tangents, out, *, contract, batch):
    (x, y), (dx, dy) = primals, tangents
    t = add_tangents(
        None if dx is None else dot_general(dx, y, contract=contract, batch=batch),
        None if dy is None else dot_general(x, dy, contract=contract, batch=batch))
    return fit(t, aval_of(out))


def _dot_general_transpose(ct, x, y, *, contract, batch):
    (xc, yc), (xb, yb) = contract, batch
    nb = len(xb)
    if is_linear(x):
        xf, yf = _free(x.ndim, xb, xc), _free(y.ndim, yb, yc)
        ct_axes = tuple(range(nb + len(xf), nb + len(xf) + len(yf)))
        g = dot_general(ct, conj(y), contract=(ct_axes, yf), batch=(tuple(range(nb)), yb))
        order = (*xb, *xf, *(xc[yc.index(d)] for d in sorted(yc)))
        return (ops.permute_dims(g, axes=tuple(order.index(i) for i in range(x.ndim))), None)
    xf, yf = _free(x.ndim, xb, xc), _free(y.ndim, yb, yc)
    ct_axes = tuple(range(nb, nb + len(xf)))
    g = dot_general(ct, conj(x), contract=(ct_axes, xf), batch=(tuple(range(nb)), xb))
    order = (*yb, *yf, *(yc[xc.index(d)] for d in sorted(xc)))
    return (None, ops.permute_dims(g, axes=tuple(order.index(i) for i in range(y.ndim))))


dot_general = Op("dot_general", attrs=("contract", "batch"), abstract=_dot_general_abstract,
                 impl=_dot_general_impl, jvp=_dot_general_jvp, transpose=_dot_general_transpose)

__all__ = ["matmul", "dot_general", "matrix_transpose"]

"""Linear algebra: matmul, dot_general, solves, inverses and decompositions.

Matrix ops act on the last two axes and batch over the leading ones. Derivatives are the standard
matrix-calculus results written with ops, so they trace to any order and into staged programs.
Decompositions whose outputs have a gauge freedom (eigenvector phases, extra columns of complete
factors) differentiate one smooth choice of it; functions of the outputs that do not depend on
the gauge get exact derivatives.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..core import Op, apply_linear
from ..dtypes import Aval, aval_of, real_dtype, result_type
from ._rules import add_tangents, broadcast_shapes, conj, fit, is_linear, unbroadcast
from .einsum import einsum


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
    # each term is matmul with one operand's tangent in its place: the tape records it with the
    # output's aval (apply_linear) instead of deriving it again
    (x, y), (dx, dy) = primals, tangents
    t = add_tangents(None if dx is None else apply_linear(matmul, (dx, y), primals, out, {}),
                     None if dy is None else apply_linear(matmul, (x, dy), primals, out, {}))
    return fit(t, out)


def matrix_transpose(x):
    """Swap the last two axes (a view)."""
    n = aval_of(x).ndim
    return ops.permute_dims(x, axes=(*range(n - 2), n - 1, n - 2))


def _matmul_transpose(ct, x, y):
    xs, ys = tuple(x.shape), tuple(y.shape)  # tracers' and every provider's arrays'
    if len(xs) == 2 and len(ys) == 1 and not is_linear(x):  # matrix @ vector: one product
        return (None, matmul(matrix_transpose(conj(x)), ct))
    if len(xs) == 1 and len(ys) == 2 and is_linear(x):  # vector @ matrix: one product
        return (matmul(conj(y), ct), None)
    if len(xs) == 1 and len(ys) == 1:  # vector @ vector: a 0-d ct scales the other vector
        return (ops.multiply(ct, conj(y)), None) if is_linear(x) else \
            (None, ops.multiply(conj(x), ct))
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


def _matmul_impl(xp, x, y):
    if xp is np:  # NumPy's matmul leaves BLAS for an operand with a 0 stride (a broadcast
        if type(x) is np.ndarray and 0 in x.strides:  # view, as a staged reverse pass
            x = np.ascontiguousarray(x)  # makes): 4x slower
        if type(y) is np.ndarray and 0 in y.strides:
            y = np.ascontiguousarray(y)
    return xp.matmul(x, y)


matmul = Op("matmul", allocates=True, abstract=_matmul_abstract, impl=_matmul_impl, jvp=_matmul_jvp,
            transpose=_matmul_transpose)


def _vecdot_abstract(x, y):
    if x.ndim == 0 or y.ndim == 0:
        raise ValueError("vecdot: both operands need at least one dimension")
    if x.shape[-1] != y.shape[-1]:
        raise ValueError(f"vecdot: core dimensions differ: shapes {x.shape} and {y.shape}")
    batch = broadcast_shapes(x.shape[:-1], y.shape[:-1])
    return Aval(batch, result_type(x, y), False, x.device or y.device)


def _vecdot_jvp(primals, tangents, out):
    # the tangent as a sum of products (the provider's vecdot computes only the value: its
    # loop may round differently, which the primal must match and the tangent need not)
    (x, y), (dx, dy) = primals, tangents
    if aval_of(x).shape[-1:] == (0,):  # a sum of nothing: a zero tangent, as reduce_sum's
        return None
    axis = (len(aval_of(out).shape),)  # the last axis of the broadcast product
    t = add_tangents(
        None if dx is None else ops.reduce_sum(ops.multiply(conj(dx), y), axes=axis,
                                               keepdims=False),
        None if dy is None else ops.reduce_sum(ops.multiply(conj(x), dy), axes=axis,
                                               keepdims=False))
    return fit(t, out)


def _vecdot_impl(xp, x, y):
    if xp is not np and x.dtype != y.dtype:  # the standard's vecdot may refuse mixed dtypes
        dtype = xp.result_type(x, y)
        x, y = xp.astype(x, dtype), xp.astype(y, dtype)
    return xp.vecdot(x, y, axis=-1)


# sum(conj(x) * y) over the last axes (broadcasting the others): the provider's own vecdot, so
# values round as its eager vecdot does (NumPy's and array-api-strict's: BLAS dot; an int8 one
# stays int8, NumPy's bool one is a logical or)
vecdot = Op("vecdot", allocates=True, abstract=_vecdot_abstract, impl=_vecdot_impl, jvp=_vecdot_jvp)


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
    return fit(t, out)


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


dot_general = Op("dot_general", allocates=True, attrs={"contract": "pairs", "batch": "pairs"},
                 abstract=_dot_general_abstract, impl=_dot_general_impl, jvp=_dot_general_jvp,
                 transpose=_dot_general_transpose)


# --- helpers shared by the matrix rules --------------------------------------------------------

def _pattern(ref, n, dtype, lower=0.0, diag=0.0, upper=0.0):
    """An ``n x n`` constant with one value below, on and above the diagonal (masks, eye)."""
    rows = ops.iota_like(ref, shape=(n, n), axis=0)
    cols = ops.iota_like(ref, shape=(n, n), axis=1)
    values = ops.where(ops.greater(rows, cols), lower,
                       ops.where(ops.equal(rows, cols), diag, upper))
    return ops.astype(values, dtype=dtype)


def _mask_dtype(x) -> str:
    return real_dtype(aval_of(x).dtype).name


def _mH(x):
    """Conjugate transpose of the last two axes."""
    return conj(matrix_transpose(x))


def _diag(x):
    return einsum(x, subscripts="...ii->...i")


def _trace(x):
    return einsum(x, subscripts="...ii->...")


def _columns(x, start, stop, axis=-1):
    ndim = aval_of(x).ndim
    if start == 0 and stop == aval_of(x).shape[axis]:
        return x
    return ops.slice_axis(x, start=start, stop=stop, axis=ndim + axis, step=1)


def hermitian_part(dx, ref, lower):
    """The Hermitian matrix that a routine reading only one triangle (and the real part of the
    diagonal) of ``dx`` sees; ``ref`` is a primal of the same shape, for the mask constant.

    Example:
        >>> import numpy as np
        >>> hermitian_part(np.array([[1.0, 5.0], [2.0, 3.0]]), np.eye(2), lower=True).tolist()
        [[1.0, 2.0], [2.0, 3.0]]
    """
    n = aval_of(ref).shape[-1]
    half = _pattern(ref, n, _mask_dtype(ref), lower=float(lower), diag=0.5, upper=float(not lower))
    m = ops.multiply(dx, half)
    return ops.add(m, _mH(m))


def _gap_inverse(w, ref):
    """``F[..., i, j] = 1 / (w_j - w_i)`` off the diagonal and 0 on it."""
    nd = aval_of(w).ndim
    n = aval_of(w).shape[-1]
    gaps = ops.subtract(ops.expand_dims(w, axes=(nd - 1,)), ops.expand_dims(w, axes=(nd,)))
    eye = ops.equal(ops.iota_like(ref, shape=(n, n), axis=0),
                    ops.iota_like(ref, shape=(n, n), axis=1))
    return ops.where(eye, 0.0, ops.divide(1.0, ops.where(eye, 1.0, gaps)))


def _right_solve_upper(b, r):
    """``b @ inv(r)`` for an upper-triangular ``r``."""
    return _mH(triangular_solve(_mH(r), _mH(b), lower=True))


def _linalg_dtype(dtype, name):
    if dtype.kind in "biu":
        return np.dtype(np.float64)
    if dtype.kind not in "fc" or dtype.itemsize < 4:
        raise TypeError(f"{name}: array type {dtype} is unsupported in linalg; convert it with "
                        ".astype(np.float64) first")
    return dtype


def _matrix_aval(x, name, square=True):
    if x.ndim < 2:
        raise np.linalg.LinAlgError(f"{name}: {x.ndim}-dimensional array given; the array must "
                                    "be at least two-dimensional")
    if square and x.shape[-1] != x.shape[-2]:
        raise np.linalg.LinAlgError(f"{name}: the last 2 dimensions of the array must be square, "
                                    f"got shape {x.shape}")
    return Aval(x.shape, _linalg_dtype(x.dtype, name), False, x.device)


def _complex_of(dtype):
    return np.result_type(dtype, np.complex64)


# --- inverses and solves -----------------------------------------------------------------------

def _inv_jvp(primals, tangents, out):
    (dx,) = tangents
    return fit(ops.negative(matmul(out, matmul(dx, out))), aval_of(out))  # d inv = -inv dA inv


inv = Op("inv", allocates=True, abstract=lambda x: _matrix_aval(x, "inv"),
         impl=lambda xp, x: xp.linalg.inv(x), jvp=_inv_jvp)


def _solve_abstract(a, b, **_):
    a = _matrix_aval(a, "solve")
    if b.ndim < 2 or b.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve: right-hand side of shape {b.shape} does not match a matrix of "
                         f"shape {a.shape}")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dtype = _linalg_dtype(result_type(a, b), "solve")
    return Aval((*batch, *b.shape[-2:]), dtype, False, a.device or b.device)


def _solve_jvp(primals, tangents, out):
    (a, _), (da, db) = primals, tangents  # a x = b  =>  a dx = db - da x
    rhs = db if da is None else add_tangents(db, ops.negative(matmul(da, out)))
    return fit(solve(a, rhs), aval_of(out))


def _solve_transpose(ct, a, b):  # linear in b only: b's cotangent solves with a^H
    return (None, unbroadcast(solve(_mH(a), ct), b.shape))


solve = Op("solve", allocates=True, abstract=_solve_abstract,
           impl=lambda xp, a, b: xp.linalg.solve(a, b), jvp=_solve_jvp, transpose=_solve_transpose)


def _triangular_solve_impl(xp, a, b, *, lower):
    return xp.linalg.solve(xp.tril(a) if lower else xp.triu(a), b)


def _triangular_solve_jvp(primals, tangents, out, *, lower):
    (a, _), (da, db) = primals, tangents
    rhs = db
    if da is not None:  # only the triangle the solve reads moves the solution
        n = aval_of(a).shape[-1]
        tri = _pattern(a, n, _mask_dtype(a), lower=float(lower), diag=1.0, upper=float(not lower))
        rhs = add_tangents(rhs, ops.negative(matmul(ops.multiply(da, tri), out)))
    return fit(triangular_solve(a, rhs, lower=lower), aval_of(out))


def _triangular_solve_transpose(ct, a, b, *, lower):
    return (None, unbroadcast(triangular_solve(_mH(a), ct, lower=not lower), b.shape))


triangular_solve = Op("triangular_solve", allocates=True, attrs={"lower": "bool"},
                      abstract=_solve_abstract, impl=_triangular_solve_impl,
                      jvp=_triangular_solve_jvp, transpose=_triangular_solve_transpose)


def _svd_adjugate(a):
    """adj(a) = det(U) det(V^H) V diag(prod_{j != i} s_j) U^H from a = U S V^H: finite also
    where ``a`` is singular."""
    u, s, vh = svd(a, full_matrices=False)
    nd, n = aval_of(s).ndim, aval_of(s).shape[-1]
    eye = ops.equal(ops.iota_like(a, shape=(n, n), axis=0), ops.iota_like(a, shape=(n, n), axis=1))
    others = ops.reduce_prod(ops.where(eye, 1.0, ops.expand_dims(s, axes=(nd - 1,))),
                             axes=(nd,), keepdims=False)
    phase = ops.multiply(slogdet(u)[0], slogdet(vh)[0])  # unit modulus: the signs suffice
    adj = matmul(ops.multiply(_mH(vh), ops.expand_dims(others, axes=(nd - 1,))), _mH(u))
    return ops.multiply(adj, ops.expand_dims(phase, axes=(nd - 1, nd)))


def _det_jvp(primals, tangents, out):
    # d det = tr(adj(a) da) with adj(a) = det(a) inv(a) where a is well conditioned (|det| not
    # tiny against Hadamard's bound prod_j |a_j|), and from the SVD elsewhere, singular a
    # included. Each branch runs on a stand-in where it is not selected (the identity, a matrix
    # with distinct singular values), so neither leaks inf or nan into the other's derivatives.
    (a,), (da,) = primals, tangents
    nd, n = aval_of(a).ndim, aval_of(a).shape[-1]
    dtype = _mask_dtype(a)
    rows, cols = ops.iota_like(a, shape=(n, n), axis=0), ops.iota_like(a, shape=(n, n), axis=1)
    eye = ops.equal(rows, cols)
    magnitude = ops.abs(a)
    column_norms = ops.sqrt(ops.reduce_sum(ops.multiply(magnitude, magnitude), axes=(nd - 2,),
                                           keepdims=False))
    bound = ops.reduce_prod(column_norms, axes=(nd - 2,), keepdims=False)
    ratio = ops.divide(ops.abs(out), ops.where(ops.equal(bound, 0), 1.0, bound))
    tame = ops.expand_dims(ops.greater(ratio, float(np.finfo(dtype).eps) ** 0.5),
                           axes=(nd - 2, nd - 1))
    by_inverse = ops.multiply(ops.expand_dims(out, axes=(nd - 2, nd - 1)),
                              inv(ops.where(tame, a, ops.astype(eye, dtype=dtype))))
    spread = ops.astype(ops.where(eye, ops.add(rows, 1), 0), dtype=dtype)
    by_svd = _svd_adjugate(ops.where(tame, spread, a))
    adj = ops.where(tame, by_inverse, by_svd)
    return fit(einsum(adj, da, subscripts="...ij,...ji->..."), aval_of(out))


det = Op("det", allocates=True,
         abstract=lambda x: _matrix_aval(x, "det").update(shape=x.shape[:-2]),
         impl=lambda xp, x: xp.linalg.det(x), jvp=_det_jvp)


def _slogdet_abstract(x):
    x = _matrix_aval(x, "slogdet")
    return (x.update(shape=x.shape[:-2]),
            x.update(shape=x.shape[:-2], dtype=real_dtype(x.dtype)))


def _slogdet_jvp(primals, tangents, out):
    # a singular a (sign 0, log|det| = -inf) has a NaN tangent and cotangent: the identity
    # stands in for it, so the solve never raises, and the result is scaled by NaN there
    (a,), (da,) = primals, tangents
    sign, logabsdet = out
    nd, n = aval_of(a).ndim, aval_of(a).shape[-1]
    singular = ops.equal(sign, 0)
    eye = ops.equal(ops.iota_like(a, shape=(n, n), axis=0), ops.iota_like(a, shape=(n, n), axis=1))
    safe = ops.where(ops.expand_dims(singular, axes=(nd - 2, nd - 1)),
                     ops.astype(eye, dtype=aval_of(a).dtype.name), a)
    t = ops.multiply(_trace(solve(safe, da)), ops.where(singular, math.nan, 1.0))
    dsign = None  # a real sign is piecewise constant; a complex one turns by i Im(t)
    if aval_of(sign).dtype.kind == "c":
        dsign = fit(ops.multiply(sign, ops.multiply(ops.imag(t), 1j)), aval_of(sign))
    return dsign, fit(t, aval_of(logabsdet))


slogdet = Op("slogdet", allocates=True, abstract=_slogdet_abstract, multiple_results=True,
             impl=lambda xp, x: tuple(xp.linalg.slogdet(x)), jvp=_slogdet_jvp)


# --- decompositions ----------------------------------------------------------------------------

def _cholesky_jvp(primals, tangents, out):
    # dL = L Phi(L^-1 dA L^-H), Phi: the lower triangle with half the diagonal
    (a,), (da,) = primals, tangents
    n = aval_of(a).shape[-1]
    y = triangular_solve(out, hermitian_part(da, a, lower=True), lower=True)
    s = _mH(triangular_solve(out, _mH(y), lower=True))
    phi = _pattern(a, n, _mask_dtype(a), lower=1.0, diag=0.5)
    return fit(matmul(out, ops.multiply(s, phi)), aval_of(out))


cholesky = Op("cholesky", allocates=True, abstract=lambda x: _matrix_aval(x, "cholesky"),
              impl=lambda xp, x: xp.linalg.cholesky(x), jvp=_cholesky_jvp)


def _eigh_abstract(x, *, lower):
    x = _matrix_aval(x, "eigh")
    return (x.update(shape=x.shape[:-1], dtype=real_dtype(x.dtype)), x)


def _eigh_impl(xp, x, *, lower):
    if xp is np:
        return tuple(np.linalg.eigh(x, UPLO="L" if lower else "U"))
    # other providers read the lower triangle: the upper one is the lower one of x^H
    return tuple(xp.linalg.eigh(x if lower else xp.conj(xp.matrix_transpose(x))))


def _eigh_jvp(primals, tangents, out, *, lower):
    # P = V^H dA V: dw = diag(P), dV = V (F o P) with F = 1 / (w_j - w_i) off the diagonal
    (a,), (da,) = primals, tangents
    w, v = out
    p = matmul(_mH(v), matmul(hermitian_part(da, a, lower), v))
    dv = matmul(v, ops.multiply(p, _gap_inverse(w, a)))
    return fit(_diag(p), aval_of(w)), fit(dv, aval_of(v))


eigh = Op("eigh", allocates=True, attrs={"lower": "bool"}, abstract=_eigh_abstract, impl=_eigh_impl,
          jvp=_eigh_jvp, multiple_results=True)


def _eigvalsh_impl(xp, x, *, lower):
    if xp is np:
        return np.linalg.eigvalsh(x, UPLO="L" if lower else "U")
    return xp.linalg.eigvalsh(x if lower else xp.conj(xp.matrix_transpose(x)))


def _eigvalsh_jvp(primals, tangents, out, *, lower):
    (a,), (da,) = primals, tangents
    _, v = eigh(a, lower=lower)
    dw = einsum(conj(v), hermitian_part(da, a, lower), v, subscripts="...ji,...jk,...ki->...i")
    return fit(dw, aval_of(out))


eigvalsh = Op("eigvalsh", allocates=True, attrs={"lower": "bool"},
              abstract=lambda x, *, lower: _eigh_abstract(x, lower=lower)[0],
              impl=_eigvalsh_impl, jvp=_eigvalsh_jvp)


def _eig_abstract(x):
    x = _matrix_aval(x, "eig")
    dtype = _complex_of(x.dtype)
    return (x.update(shape=x.shape[:-1], dtype=dtype), x.update(dtype=dtype))


def _eig_impl(xp, x):
    if not hasattr(xp.linalg, "eig"):
        raise NotImplementedError(f"eig: the array provider {xp.__name__} has no linalg.eig")
    w, v = xp.linalg.eig(x)
    if xp is np:  # NumPy returns real results when every eigenvalue is real
        dtype = _complex_of(_linalg_dtype(x.dtype, "eig"))
        return w.astype(dtype), v.astype(dtype)
    return w, v


def _eig_jvp(primals, tangents, out):
    # P = V^-1 dA V: dw = diag(P), dV = V (F o P), then held in LAPACK's gauge: unit columns
    # whose largest-modulus component is real
    (a,), (da,) = primals, tangents
    w, v = out
    shape = aval_of(v).shape
    p = solve(v, matmul(da, v))
    dv = matmul(v, ops.multiply(p, _gap_inverse(w, a)))
    norm = ops.real(ops.reduce_sum(ops.multiply(ops.conj(v), dv), axes=(len(shape) - 2,),
                                   keepdims=True))
    dv = ops.subtract(dv, ops.multiply(v, norm))
    top = ops.argmax(ops.abs(v), axis=len(shape) - 2, keepdims=True)
    pick = ops.astype(ops.equal(ops.iota_like(a, shape=shape, axis=len(shape) - 2), top),
                      dtype=_mask_dtype(a))
    v_top = ops.reduce_sum(ops.multiply(v, pick), axes=(len(shape) - 2,), keepdims=True)
    dv_top = ops.reduce_sum(ops.multiply(dv, pick), axes=(len(shape) - 2,), keepdims=True)
    turn = ops.divide(ops.imag(dv_top), ops.real(v_top))
    dv = ops.subtract(dv, ops.multiply(v, ops.multiply(turn, 1j)))
    return fit(_diag(p), aval_of(w)), fit(dv, aval_of(v))


eig = Op("eig", allocates=True, abstract=_eig_abstract, impl=_eig_impl, jvp=_eig_jvp,
         multiple_results=True)


def _svd_abstract(x, *, full_matrices):
    x = _matrix_aval(x, "svd", square=False)
    *batch, m, n = x.shape
    k = min(m, n)
    return (x.update(shape=(*batch, m, m if full_matrices else k)),
            x.update(shape=(*batch, k), dtype=real_dtype(x.dtype)),
            x.update(shape=(*batch, n if full_matrices else k, n)))


def _complete_basis(d1, q1, q2):
    """Tangent of the extra orthonormal columns ``q2`` of a complete factor: ``-q1 d1^H q2``
    keeps ``[q1 q2]`` unitary."""
    return ops.negative(matmul(q1, matmul(_mH(d1), q2)))


def _svd_jvp(primals, tangents, out, *, full_matrices):
    (a,), (da,) = primals, tangents
    u, s, vh = out
    m, n = aval_of(a).shape[-2:]
    k = min(m, n)
    u1, v1 = _columns(u, 0, k), _mH(_columns(vh, 0, k, axis=-2))
    dp = matmul(_mH(u1), matmul(da, v1))
    f = _gap_inverse(ops.square(s), a)  # 1 / (s_j^2 - s_i^2)
    s_row = ops.expand_dims(s, axes=(aval_of(s).ndim - 1,))
    dps = ops.multiply(dp, s_row)
    sdp = ops.multiply(ops.expand_dims(s, axes=(aval_of(s).ndim,)), dp)
    du = matmul(u1, ops.multiply(f, ops.add(dps, _mH(dps))))
    dv = matmul(v1, ops.multiply(f, ops.add(sdp, _mH(sdp))))
    if aval_of(dp).dtype.kind == "c":  # the phase shared by u_i and v_i: put it all on u_i
        phase = ops.divide(ops.multiply(ops.imag(_diag(dp)), 1j), s)
        du = ops.add(du, ops.multiply(u1, ops.expand_dims(phase, axes=(aval_of(s).ndim - 1,))))
    if m > k:
        du = ops.add(du, ops.divide(ops.subtract(matmul(da, v1), matmul(u1, dp)), s_row))
    if n > k:
        dv = ops.add(dv, ops.divide(ops.subtract(matmul(_mH(da), u1), matmul(v1, _mH(dp))),
                                    s_row))
    if full_matrices and m > k:
        du = ops.concat(du, _complete_basis(du, u1, _columns(u, k, m)), axis=aval_of(u).ndim - 1)
    if full_matrices and n > k:
        v2 = _mH(_columns(vh, k, n, axis=-2))
        dv = ops.concat(dv, _complete_basis(dv, v1, v2), axis=aval_of(vh).ndim - 1)
    return fit(du, aval_of(u)), fit(_diag(dp), aval_of(s)), fit(_mH(dv), aval_of(vh))


svd = Op("svd", allocates=True, attrs={"full_matrices": "bool"}, abstract=_svd_abstract,
         multiple_results=True,
         impl=lambda xp, x, *, full_matrices: tuple(xp.linalg.svd(x, full_matrices=full_matrices)),
         jvp=_svd_jvp)


def _svdvals_impl(xp, x):
    if hasattr(xp.linalg, "svdvals"):
        return xp.linalg.svdvals(x)
    return xp.linalg.svd(x, compute_uv=False)


def _svdvals_jvp(primals, tangents, out):
    (a,), (da,) = primals, tangents  # ds_i = Re(u_i^H dA v_i)
    u, _, vh = svd(a, full_matrices=False)
    return fit(einsum(conj(u), da, conj(vh), subscripts="...ai,...ab,...ib->...i"), aval_of(out))


svdvals = Op("svdvals", allocates=True, abstract=lambda x: _svd_abstract(x, full_matrices=False)[1],
             impl=_svdvals_impl, jvp=_svdvals_jvp)


def _qr_abstract(x, *, complete):
    x = _matrix_aval(x, "qr", square=False)
    *batch, m, n = x.shape
    k = m if complete else min(m, n)
    return (x.update(shape=(*batch, m, k)), x.update(shape=(*batch, k, n)))


def _skew_part(c, ref):
    """Q^H dQ from C = Q^H dA R^-1: the strict lower triangle of C made skew-Hermitian, and the
    imaginary part of its diagonal (R keeps a real diagonal)."""
    k = aval_of(c).shape[-1]
    low = ops.multiply(c, _pattern(ref, k, _mask_dtype(ref), lower=1.0))
    omega = ops.subtract(low, _mH(low))
    if aval_of(c).dtype.kind == "c":
        d = ops.multiply(c, _pattern(ref, k, _mask_dtype(ref), diag=0.5))
        omega = ops.add(omega, ops.subtract(d, ops.conj(d)))
    return omega


def _qr_jvp(primals, tangents, out, *, complete):
    # A = QR: with X the first k columns, C = Q1^H dX R1^-1 = Omega + dR1 R1^-1
    (a,), (da,) = primals, tangents
    q, r = out
    m, n = aval_of(a).shape[-2:]
    k = min(m, n)
    q1, r1, dx = _columns(q, 0, k), _columns(_columns(r, 0, k), 0, k, axis=-2), _columns(da, 0, k)
    c = _right_solve_upper(matmul(_mH(q1), dx), r1)
    omega = _skew_part(c, a)
    dr = matmul(ops.subtract(c, omega), r1)
    dq = matmul(q1, omega)
    nd = aval_of(a).ndim
    if m > k:
        dq = ops.add(dq, ops.subtract(_right_solve_upper(dx, r1), matmul(q1, c)))
    if n > k:  # wide: R = [R1 R2] and dR2 = Q^H dY - Omega R2
        r2 = _columns(_columns(r, 0, k, axis=-2), k, n)
        dr2 = ops.subtract(matmul(_mH(q1), _columns(da, k, n)), matmul(omega, r2))
        dr = ops.concat(dr, dr2, axis=nd - 1)
    if complete and m > k:
        dq = ops.concat(dq, _complete_basis(dq, q1, _columns(q, k, m)), axis=nd - 1)
        zeros = ops.zeros_like(r, shape=(*aval_of(r).shape[:-2], m - k, n))
        dr = ops.concat(dr, zeros, axis=nd - 2)
    return fit(dq, aval_of(q)), fit(dr, aval_of(r))


qr = Op("qr", allocates=True, attrs={"complete": "bool"}, abstract=_qr_abstract,
        multiple_results=True,
        impl=lambda xp, x, *, complete: tuple(xp.linalg.qr(
            x, mode="complete" if complete else "reduced")),
        jvp=_qr_jvp)

__all__ = [name for name, value in globals().items() if isinstance(value, Op)] + [
    "matrix_transpose", "hermitian_part"]

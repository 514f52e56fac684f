"""Matrix ops computed by ``scipy.linalg``: the matrix exponential, its Fréchet derivative, and
the pivoted LU factorization.

``expm``'s JVP is ``expm_frechet(a, da)``, the exact Fréchet derivative: the top-right block of
``expm([[a, da], [0, a]])``. It is linear in ``da`` with the real adjoint
``expm_frechet(a^H, ct)``, and its own JVP is again a Fréchet derivative of a block matrix, so
every order reduces to ``expm`` of larger blocks. ``lu_factor`` returns LAPACK's packed
``(lu, piv)``; the pivots are locally constant, and ``lu``'s JVP is ``L tril(F, -1) + triu(F) U``
with ``F = L^{-1} P da U^{-1}``. SciPy is imported on first use only.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Op
from ..dtypes import Aval, aval_of
from ._rules import broadcast_shapes, fit, unbroadcast
from .linalg import _mask_dtype, _pattern, _right_solve_upper, matrix_transpose
from .linalg import _matrix_aval as _numpy_matrix_aval
from .special import scipy_function


def _scipy_linalg(name: str):
    return scipy_function("linalg", name, "matrix function")


def _numpy_only(name, xp):
    if xp is not np:
        raise TypeError(f"{name} is computed by scipy.linalg, which takes NumPy arrays; the "
                        f"array provider {xp.__name__} is not supported")


def _mH(x):
    t = matrix_transpose(x)
    return ops.conj(t) if aval_of(x).dtype.kind == "c" else t


# --- the matrix exponential ---------------------------------------------------------------------

def _matrix_aval(x, name):
    """NumPy's linalg rule, except that SciPy computes float16 input in float32."""
    return _numpy_matrix_aval(x.update(dtype=np.dtype(np.float32)) if x.dtype == np.float16
                              else x, name)


def _expm_jvp(primals, tangents, out):
    return expm_frechet(primals[0], tangents[0])


def _expm_impl(xp, a):
    _numpy_only("expm", xp)
    return np.asarray(_scipy_linalg("expm")(a))


expm = Op("expm", allocates=True, abstract=lambda a: _matrix_aval(a, "expm"), impl=_expm_impl,
          jvp=_expm_jvp)


def _frechet_abstract(a, e):
    dtype = np.result_type(a.dtype, e.dtype, np.float32)  # the block the impl builds
    a = _matrix_aval(a, "expm_frechet")
    if e.shape[-2:] != a.shape[-2:]:
        raise ValueError(f"expm_frechet: direction of shape {e.shape} does not match a matrix "
                         f"of shape {a.shape}")
    _matrix_aval(e, "expm_frechet")
    return Aval((*broadcast_shapes(a.shape[:-2], e.shape[:-2]), *a.shape[-2:]), dtype, False,
                a.device or e.device)


def _frechet_impl(xp, a, e):
    _numpy_only("expm_frechet", xp)
    n = a.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], e.shape[:-2])
    block = np.zeros((*batch, 2 * n, 2 * n), np.result_type(a, e, np.float32))
    block[..., :n, :n] = a
    block[..., n:, n:] = a
    block[..., :n, n:] = e
    return np.asarray(_scipy_linalg("expm")(block)[..., :n, n:])


def _block(a, e, zero):
    """``[[a, e], [zero, a]]`` along the last two axes."""
    lower = ops.concat(zero, a, axis=aval_of(a).ndim - 1)
    upper = ops.concat(a, e, axis=aval_of(a).ndim - 1)
    return ops.concat(upper, lower, axis=aval_of(a).ndim - 2)


def _frechet_jvp(primals, tangents, out):
    (a, e), (da, de) = primals, tangents
    if da is None:
        return expm_frechet(a, de)
    # L(a, e) is the top-right block of expm([[a, e], [0, a]]), so its derivative in both
    # arguments is the top-right block of that block matrix's Fréchet derivative
    n = aval_of(a).shape[-1]
    ndim = aval_of(out).ndim
    a_full = ops.broadcast_to(a, shape=aval_of(out).shape) if aval_of(a).shape != \
        aval_of(out).shape else a
    e_full = ops.broadcast_to(e, shape=aval_of(out).shape) if aval_of(e).shape != \
        aval_of(out).shape else e
    da_full = fit(da, aval_of(out))
    de_full = ops.zeros_like(e_full, dtype=aval_of(da_full).dtype.name) if de is None else \
        fit(de, aval_of(out))
    zero = ops.zeros_like(a_full, dtype=aval_of(da_full).dtype.name)  # a primal: not on the tape
    grown = expm_frechet(_block(a_full, e_full, ops.zeros_like(a_full)),
                         _block(da_full, de_full, zero))
    rows = ops.slice_axis(grown, start=0, stop=n, step=1, axis=ndim - 2)
    return ops.slice_axis(rows, start=n, stop=2 * n, step=1, axis=ndim - 1)


def _frechet_transpose(ct, a, e):  # linear in e; <L(a, e), c> = <e, L(a^H, c)>
    return (None, unbroadcast(expm_frechet(_mH(a), ct), e.shape))


expm_frechet = Op("expm_frechet", abstract=_frechet_abstract, impl=_frechet_impl,
                  jvp=_frechet_jvp, transpose=_frechet_transpose)


# --- the pivoted LU factorization ---------------------------------------------------------------

def _lu_abstract(a):
    dtype = np.result_type(a.dtype, np.float32)  # SciPy's LAPACK type: int8 -> float32
    a = _matrix_aval(a, "lu_factor").update(dtype=dtype)
    return a, Aval(a.shape[:-1], np.dtype(np.int32), False, a.device)


def _lu_impl(xp, a):
    _numpy_only("lu_factor", xp)
    lu, piv = _scipy_linalg("lu_factor")(a)
    return np.asarray(lu), np.asarray(piv, np.int32)


def _lu_jvp(primals, tangents, out):
    (da,), (lu, piv) = tangents, out
    n = aval_of(lu).shape[-1]
    dtype = _mask_dtype(lu)
    perm = lu_permutation(piv)
    ndim = aval_of(perm).ndim
    rows = ops.expand_dims(perm, axes=(ndim,))  # P[..., i, j] = (perm[..., i] == j)
    p = ops.astype(ops.equal(rows, ops.iota_like(lu, shape=(n, n), axis=1)), dtype=dtype)
    strict = _pattern(lu, n, dtype, lower=1.0)
    upper = _pattern(lu, n, dtype, diag=1.0, upper=1.0)
    lower = ops.add(ops.multiply(lu, strict), _pattern(lu, n, dtype, diag=1.0))
    u = ops.multiply(lu, upper)
    f = _right_solve_upper(ops.triangular_solve(lower, ops.matmul(p, da), lower=True), u)
    dlu = ops.add(ops.matmul(lower, ops.multiply(f, strict)),
                  ops.matmul(ops.multiply(f, upper), u))
    return fit(dlu, aval_of(lu)), None


lu_factor = Op("lu_factor", allocates=True, abstract=_lu_abstract, impl=_lu_impl, jvp=_lu_jvp,
               multiple_results=True)


def _permutation_impl(xp, piv):
    """Rows of ``P a`` as indices into ``a``: LAPACK's swaps ``i <-> piv[i]`` in order."""
    _numpy_only("lu_permutation", xp)
    piv = np.asarray(piv)
    perm = np.broadcast_to(np.arange(piv.shape[-1]), piv.shape).copy()
    for index in np.ndindex(piv.shape[:-1]):
        row = perm[index]
        for i, j in enumerate(piv[index]):
            row[i], row[j] = row[j], row[i]
    return perm


lu_permutation = Op("lu_permutation", impl=_permutation_impl, nondiff=True,
                    abstract=lambda piv: Aval(piv.shape, np.dtype(np.int64), False, piv.device))

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]

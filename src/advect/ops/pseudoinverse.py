"""The Moore-Penrose pseudoinverse, ``pinv``, with NumPy's cutoff: singular values at or below
``rcond * max(s)`` are dropped.

The JVP reads ``P = f(A^H A) A^H`` with the spectral function ``f(l) = 1/l`` on the kept
eigenvalues ``l = s**2`` and ``0`` on the dropped ones, and differentiates ``f`` by the
Daleckii-Krein formula: ``d f(H) = V (F * (V^H dH V)) V^H`` with ``F[i, j] = (f_i - f_j) /
(l_i - l_j)``, i.e. ``-f_i f_j`` between kept values, ``f_i / (l_i - l_j)`` from a kept to a
dropped one and ``0`` between dropped ones. So a cutoff that drops nonzero singular values
differentiates the truncated inverse it computes (the constant-rank formula of Golub and Pereyra
does not), and exactly-zero or repeated dropped values cannot produce NaN. A wide ``A`` is
handled through ``pinv(A)^H = pinv(A^H)``.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Op
from ..dtypes import aval_of
from ._rules import fit
from .linalg import _matrix_aval, _mH, hermitian_part, matmul, svd


def _pinv_abstract(x, *, rcond, hermitian):
    x = _matrix_aval(x, "pinv", square=False)
    return x.update(shape=(*x.shape[:-2], x.shape[-1], x.shape[-2]))


def _pinv_impl(xp, x, *, rcond, hermitian):
    if xp is np:
        if rcond is None:
            return np.linalg.pinv(x, hermitian=hermitian)
        return np.linalg.pinv(x, rcond=rcond, hermitian=hermitian)
    return xp.linalg.pinv(x, rtol=rcond)


def _tall_pinv_jvp(a, da, p, rcond):
    """dP for ``a`` with at least as many rows as columns (``V`` is then square)."""
    u, s, vh = svd(a, full_matrices=False)
    nd = aval_of(s).ndim
    top = ops.reduce_max(s, axes=(nd - 1,), keepdims=True)
    kept = ops.greater(s, ops.multiply(top, 1e-15 if rcond is None else rcond))  # NumPy's
    lam = ops.square(s)
    f = ops.where(kept, ops.divide(1.0, ops.where(kept, lam, 1.0)), 0.0)
    col, row = (nd,), (nd - 1,)
    fi, fj = ops.expand_dims(f, axes=col), ops.expand_dims(f, axes=row)
    ki, kj = ops.expand_dims(kept, axes=col), ops.expand_dims(kept, axes=row)
    out_i = ops.logical_and(ki, ops.logical_not(kj))  # i kept, j dropped
    out_j = ops.logical_and(kj, ops.logical_not(ki))
    gap = ops.subtract(ops.expand_dims(lam, axes=col), ops.expand_dims(lam, axes=row))
    gap = ops.where(ops.logical_or(out_i, out_j), gap, 1.0)
    big = ops.where(out_i, ops.divide(fi, gap), ops.where(out_j, ops.divide(fj, ops.negative(
        gap)), 0.0))
    coupling = ops.where(ops.logical_and(ki, kj), ops.negative(ops.multiply(fi, fj)), big)
    v = _mH(vh)
    n = matmul(_mH(u), matmul(da, v))  # U^H dA V; V^H dH V = S N + N^H S
    sn = ops.multiply(ops.expand_dims(s, axes=col), n)
    m = ops.add(sn, _mH(sn))
    inner = ops.multiply(ops.multiply(coupling, m), ops.expand_dims(s, axes=row))
    d_f_at = matmul(v, matmul(inner, _mH(u)))  # d f(H) A^H, with A^H = V S U^H
    return ops.add(d_f_at, matmul(matmul(p, _mH(p)), _mH(da)))  # + f(H) dA^H


def _pinv_jvp(primals, tangents, out, *, rcond, hermitian):
    (a,), (da,) = primals, tangents
    if hermitian:  # NumPy's Hermitian route reads the lower triangle only: out = pinv(H(a))
        a, da = hermitian_part(a, a, lower=True), hermitian_part(da, a, lower=True)
    m, n = aval_of(a).shape[-2:]
    if m >= n:
        t = _tall_pinv_jvp(a, da, out, rcond)
    else:
        t = _mH(_tall_pinv_jvp(_mH(a), _mH(da), _mH(out), rcond))
    return fit(t, aval_of(out))


pinv = Op("pinv", allocates=True, attrs={"rcond": "rcond", "hermitian": "bool"},
          abstract=_pinv_abstract, impl=_pinv_impl, jvp=_pinv_jvp)

__all__ = ["pinv"]

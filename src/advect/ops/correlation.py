"""One-dimensional correlation: the op behind ``np.convolve`` and ``np.correlate``.

``correlate(a, w, start=, stop=)`` is entries ``start:stop`` of the full correlation of the
vectors ``a`` and ``w`` (no conjugation): entry ``k`` is ``sum_j a[k - (m - 1) + j] * w[j]`` with
``m = len(w)`` and ``a`` zero outside its entries. NumPy computes it with ``np.correlate``, so its
values round as NumPy's do (each window a dot product of the overlapping parts, short float
kernels summed in NumPy's own loop); other providers take dot products of gathered windows. The
op is linear in each operand; both transposes are correlations again.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Op
from ..dtypes import Aval, result_type
from ._rules import add_tangents, conj, fit, is_linear


def _correlate_abstract(a, w, *, start, stop):
    if a.ndim != 1 or w.ndim != 1 or not a.shape[0] or not w.shape[0]:
        raise ValueError(f"correlate takes two non-empty vectors, got shapes {a.shape} and "
                         f"{w.shape}")
    if not 0 <= start <= stop <= a.shape[0] + w.shape[0] - 1:
        raise ValueError(f"correlate: entries {start}:{stop} are not entries of the full "
                         f"correlation, of length {a.shape[0] + w.shape[0] - 1}")
    return Aval((stop - start,), result_type(a, w), False, a.device or w.device)


def _correlate_impl(xp, a, w, *, start, stop):
    if xp is np:  # np.correlate conjugates its second operand: give it the conjugate
        full = np.correlate(a, np.conj(w) if w.dtype.kind == "c" else w, "full")
        return full[start:stop]
    m = w.shape[0]
    dtype = xp.result_type(a, w)
    a, w = xp.astype(a, dtype), xp.astype(w, dtype)
    zeros = xp.zeros((m - 1,), dtype=dtype, device=a.device)
    padded = xp.concat((zeros, a, zeros))
    index = np.arange(start, stop)[:, None] + np.arange(m)
    windows = xp.reshape(xp.take(padded, xp.asarray(index.reshape(-1), device=a.device)),
                         (stop - start, m))
    return xp.sum(windows * w, axis=-1)


def _correlate_jvp(primals, tangents, out, *, start, stop):
    (a, w), (da, dw) = primals, tangents
    return fit(add_tangents(None if da is None else correlate(da, w, start=start, stop=stop),
                            None if dw is None else correlate(a, dw, start=start, stop=stop)),
               out)


def _correlate_transpose(ct, a, w, *, start, stop):
    n, m = a.shape[0], w.shape[0]
    full = n + m - 1  # the cotangent of every entry of the full correlation, zeros around ct
    parts = [ops.zeros_like(ct, shape=(start,))] if start else []
    parts.append(ct)
    if stop < full:
        parts.append(ops.zeros_like(ct, shape=(full - stop,)))
    ct = ops.concat(*parts, axis=0) if len(parts) > 1 else ct
    if is_linear(a):  # a's entry i meets w[j] in entry i + m - 1 - j
        return (correlate(ct, conj(ops.flip(w, axes=(0,))), start=m - 1, stop=m - 1 + n), None)
    # w's entry j meets a[q] in entry q + m - 1 - j: read backwards from a correlation with a
    g = correlate(ct, conj(a), start=n - 1, stop=n + m - 1)
    return (None, ops.flip(g, axes=(0,)))


correlate = Op("correlate", allocates=True, attrs={"start": "int64", "stop": "int64"},
               abstract=_correlate_abstract, impl=_correlate_impl, jvp=_correlate_jvp,
               transpose=_correlate_transpose)

__all__ = ["correlate"]

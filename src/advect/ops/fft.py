"""Discrete Fourier transforms: ``fft`` (complex, forward or inverse), ``rfft`` and ``irfft``.

Every transform is linear over the reals, so each carries a transpose: the real adjoint under
``Re(vdot(a, b))``. The adjoint of a complex transform is the opposite transform with the dual
normalization (``backward`` <-> ``forward``, ``ortho`` stays). ``rfft`` keeps only half of a
Hermitian spectrum, so its adjoint and that of ``irfft`` weigh the bins that stand for two
conjugate frequencies (all but the zero and, for even lengths, the Nyquist bin) differently.
Frontends resize inputs (``n=``, ``s=``) before binding: the ops transform the axes as given.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Op
from ..dtypes import Aval, aval_of, real_dtype
from ..providers import numpy_dtype

_DUAL = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _check(x, axes, norm, name):
    if norm not in _DUAL:
        raise ValueError(f"{name}: invalid norm {norm!r}; use 'backward', 'ortho' or 'forward'")
    if len(set(axes)) != len(axes) or any(not 0 <= a < x.ndim for a in axes):
        raise ValueError(f"{name}: axes {axes} are not distinct axes of an array with {x.ndim} "
                         "dimensions")
    return _complex_dtype(x.dtype)


def _complex_dtype(dtype):
    # NumPy transforms integers and bools in double precision (not float_dtype's float16)
    return np.result_type(dtype if dtype.kind in "fc" else np.float64, np.complex64)


def _fft_abstract(x, *, axes, inverse, norm):
    return Aval(x.shape, _check(x, axes, norm, "fft"), False, x.device)


def _fft_impl(xp, x, *, axes, inverse, norm):
    if xp is not np and numpy_dtype(x.dtype).kind != "c":  # the standard takes complex input only
        x = xp.astype(x, getattr(xp, _complex_dtype(numpy_dtype(x.dtype)).name))
    return (xp.fft.ifftn if inverse else xp.fft.fftn)(x, axes=axes, norm=norm)


fft = Op("fft", allocates=True, attrs={"axes": "fft_axes", "inverse": "bool", "norm": "norm"},
         abstract=_fft_abstract, impl=_fft_impl,
         linear=True, transpose=lambda ct, x, *, axes, inverse, norm: (
             fft(ct, axes=axes, inverse=not inverse, norm=_DUAL[norm]),))


def _bin_weights(ref, n, axis, ndim, edge, interior):
    """Weights along ``axis`` of a half spectrum of length-``n`` signals: ``edge`` on the zero
    bin (and the Nyquist bin when ``n`` is even), ``interior`` on the rest."""
    half = n // 2 + 1
    k = ops.iota_like(ref, shape=(half,), axis=0)
    on_edge = ops.equal(k, 0)
    if n % 2 == 0:
        on_edge = ops.logical_or(on_edge, ops.equal(k, n // 2))
    weights = ops.astype(ops.where(on_edge, edge, interior),
                         dtype=real_dtype(aval_of(ref).dtype).name)
    return ops.reshape(weights, shape=tuple(half if a == axis else 1 for a in range(ndim)))


def _rfft_abstract(x, *, axes, norm):
    dtype = _check(x, axes, norm, "rfft")
    if x.dtype.kind == "c":
        raise TypeError("rfft: the input must be real; use fft for complex input")
    shape = list(x.shape)
    shape[axes[-1]] = shape[axes[-1]] // 2 + 1
    return Aval(tuple(shape), dtype, False, x.device)


def _rfft_transpose(ct, x, *, axes, norm):
    # <ct, rfft(x)> = sum_j x_j Re(sum_k ct_k e^{+2 pi i jk/n}): the inverse of the spectrum that
    # keeps the edge bins and halves the others (irfft doubles them back)
    n = x.shape[axes[-1]]
    half = ops.multiply(ct, _bin_weights(ct, n, axes[-1], len(x.shape), 1.0, 0.5))
    return (irfft(half, axes=axes, s=tuple(x.shape[a] for a in axes), norm=_DUAL[norm]),)


rfft = Op("rfft", allocates=True, attrs={"axes": "fft_axes", "norm": "norm"},
          abstract=_rfft_abstract, linear=True,
          impl=lambda xp, x, *, axes, norm: xp.fft.rfftn(x, axes=axes, norm=norm),
          transpose=_rfft_transpose)


def _irfft_abstract(x, *, axes, s, norm):
    dtype = real_dtype(_check(x, axes, norm, "irfft"))
    if x.dtype == np.float16 and len(axes) == 1:
        dtype = x.dtype  # NumPy's one-axis irfft of real float16 data stays float16
    if len(s) != len(axes):
        raise ValueError(f"irfft: s={s} and axes={axes} must have the same length")
    expected = tuple(s[:-1]) + (s[-1] // 2 + 1,)
    got = tuple(x.shape[a] for a in axes)
    if got != expected or s[-1] < 1:
        raise ValueError(f"irfft: an input with sizes {got} along axes {axes} cannot give "
                         f"outputs of sizes {s}; resize it to {expected} first")
    shape = list(x.shape)
    for a, n in zip(axes, s):
        shape[a] = n
    return Aval(tuple(shape), dtype, False, x.device)


def _irfft_transpose(ct, x, *, axes, s, norm):
    # irfft counts each interior bin twice (for its conjugate partner) and reads only the real
    # part of the edge bins, whose rfft is real
    spectrum = rfft(ct, axes=axes, norm=_DUAL[norm])
    return (ops.multiply(spectrum, _bin_weights(ct, s[-1], axes[-1], len(x.shape), 1.0, 2.0)),)


irfft = Op("irfft", allocates=True, attrs={"axes": "fft_axes", "s": "sizes", "norm": "norm"},
           abstract=_irfft_abstract, linear=True,
           impl=lambda xp, x, *, axes, s, norm: xp.fft.irfftn(x, s=s, axes=axes, norm=norm),
           transpose=_irfft_transpose)

__all__ = ["fft", "rfft", "irfft"]

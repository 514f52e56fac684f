"""The ``fft`` extension on tracers: the same resizing and canonical ops as ``numpy.fft``.

``fftfreq`` and ``rfftfreq`` take sizes, not arrays, so they always run on the provider.
"""

from __future__ import annotations

from ..numpy._fft import _SWAP, _complex_fft, _conj, _inverse_real_fft, _norm, _real_fft, _shift
from ._tables import translates

__all__: list = []


def _one(n):
    return None if n is None else (n,)


@translates("fft.fft", needs=("fft",))
def _fft(ctx, x, /, *, n=None, axis=-1, norm="backward"):
    return _complex_fft(x, _one(n), (axis,), norm, False)


@translates("fft.ifft", needs=("fft",))
def _ifft(ctx, x, /, *, n=None, axis=-1, norm="backward"):
    return _complex_fft(x, _one(n), (axis,), norm, True)


@translates("fft.fftn", needs=("fft",))
def _fftn(ctx, x, /, *, s=None, axes=None, norm="backward"):
    return _complex_fft(x, s, axes, norm, False)


@translates("fft.ifftn", needs=("fft",))
def _ifftn(ctx, x, /, *, s=None, axes=None, norm="backward"):
    return _complex_fft(x, s, axes, norm, True)


@translates("fft.rfft", needs=("rfft",))
def _rfft(ctx, x, /, *, n=None, axis=-1, norm="backward"):
    return _real_fft(x, _one(n), (axis,), norm)


@translates("fft.irfft", needs=("irfft",))
def _irfft(ctx, x, /, *, n=None, axis=-1, norm="backward"):
    return _inverse_real_fft(x, _one(n), (axis,), norm)


@translates("fft.rfftn", needs=("rfft",))
def _rfftn(ctx, x, /, *, s=None, axes=None, norm="backward"):
    return _real_fft(x, s, axes, norm)


@translates("fft.irfftn", needs=("irfft",))
def _irfftn(ctx, x, /, *, s=None, axes=None, norm="backward"):
    return _inverse_real_fft(x, s, axes, norm)


@translates("fft.hfft", needs=("irfft",))
def _hfft(ctx, x, /, *, n=None, axis=-1, norm="backward"):
    # the real signal whose Hermitian spectrum has ``x`` as its first half
    return _inverse_real_fft(_conj(x), _one(n), (axis,), _SWAP[_norm(norm)])


@translates("fft.ihfft", needs=("rfft",))
def _ihfft(ctx, x, /, *, n=None, axis=-1, norm="backward"):
    return _conj(_real_fft(x, _one(n), (axis,), _SWAP[_norm(norm)]))


@translates("fft.fftshift")
def _fftshift(ctx, x, /, *, axes=None):
    return _shift(x, axes, 1)


@translates("fft.ifftshift")
def _ifftshift(ctx, x, /, *, axes=None):
    return _shift(x, axes, -1)

"""``numpy.fft`` on traced arrays: every transform, the shifts and the frequency helpers.

Transforms resize their input (``n=``, ``s=``: zero-pad or crop, as NumPy does) and bind one of
the three canonical ops of ``ops/fft.py``; ``hfft`` and ``ihfft`` are the real transforms of the
conjugate. ``fftfreq`` and ``rfftfreq`` take sizes, not arrays: NumPy's own functions already
work with a traced spacing ``d``.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import ops
from ..dtypes import aval_of
from ..ops._rules import normalize_axes, one_axis
from ._functions import implements

__all__: list = []

_SWAP = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _norm(norm):
    norm = "backward" if norm is None else norm
    if norm not in _SWAP:
        raise ValueError(f"numpy.fft: invalid norm {norm!r}; use None, 'backward', 'ortho' or "
                         "'forward'")
    return norm


def _written(out, value, name):
    """``value``, or ``value`` written into ``out`` (an owned traced array) as NumPy does."""
    if out is None:
        return value
    from ._mutation import assign_inplace
    return assign_inplace(out, value, f"numpy.fft.{name}(out=...)")


def _resize(x, axis, n):
    """Crop or zero-pad ``x`` to length ``n`` along ``axis``."""
    shape = aval_of(x).shape
    if n < 1:
        raise ValueError(f"numpy.fft: invalid number of data points ({n}) specified")
    if n == shape[axis]:
        return x
    if n < shape[axis]:
        return ops.slice_axis(x, start=0, stop=n, axis=axis, step=1)
    pad = tuple(n - shape[axis] if a == axis else s for a, s in enumerate(shape))
    return ops.concat(x, ops.zeros_like(x, shape=pad), axis=axis)


def _axes_and_sizes(x, s, axes):
    """NumPy's rules for ``s`` and ``axes`` of the n-dimensional transforms."""
    ndim = len(aval_of(x).shape)
    if axes is None:
        axes = tuple(range(ndim)) if s is None else tuple(range(ndim - len(s), ndim))
    axes = tuple(one_axis(int(a), ndim) for a in axes)
    if s is None:
        s = tuple(aval_of(x).shape[a] for a in axes)
    elif len(s) != len(axes):
        raise ValueError("numpy.fft: shape and axes have different lengths")
    s = tuple(aval_of(x).shape[a] if n == -1 else operator.index(n) for a, n in zip(axes, s))
    return axes, s


def _complex_fft(x, s, axes, norm, inverse):
    axes, s = _axes_and_sizes(x, s, axes)
    if not axes:  # NumPy transforms nothing and returns the data as an array, dtype kept
        from ._mutation import array_result
        return array_result(ops.fft(x, axes=(), inverse=inverse, norm=_norm(norm)), (x,))
    if len(set(axes)) != len(axes):  # NumPy resizes and transforms a repeated axis repeatedly,
        for a, n in zip(reversed(axes), reversed(s)):  # the last axis first
            x = ops.fft(_resize(x, a, n), axes=(a,), inverse=inverse, norm=_norm(norm))
        return x
    for a, n in zip(axes, s):
        x = _resize(x, a, n)
    return ops.fft(x, axes=axes, inverse=inverse, norm=_norm(norm))


def _real_fft(x, s, axes, norm):
    if aval_of(x).dtype.kind == "c":
        raise TypeError("numpy.fft.rfft: the input must be real; use numpy.fft.fft for complex "
                        "input")
    axes, s = _axes_and_sizes(x, s, axes)
    if len(set(axes)) != len(axes):  # NumPy's steps: rfft of the last axis, then complex
        x = ops.rfft(_resize(x, axes[-1], s[-1]), axes=axes[-1:], norm=_norm(norm))
        return _complex_fft(x, s[:-1], axes[:-1], norm, False)  # ffts of the others
    for a, n in zip(axes, s):
        x = _resize(x, a, n)
    return ops.rfft(x, axes=axes, norm=_norm(norm))


def _inverse_real_fft(x, s, axes, norm):
    ndim = len(aval_of(x).shape)
    if s is None:
        axes = tuple(range(ndim)) if axes is None else axes
        axes = tuple(one_axis(a, ndim) for a in axes)
        shape = aval_of(x).shape
        s = tuple(shape[a] for a in axes[:-1]) + (2 * (shape[axes[-1]] - 1),)
    axes, s = _axes_and_sizes(x, s, axes)
    if len(set(axes)) != len(axes):  # NumPy's steps: complex inverse transforms front to back,
        for a, n in zip(axes[:-1], s[:-1]):  # then the real one of the last axis
            x = ops.fft(_resize(x, a, n), axes=(a,), inverse=True, norm=_norm(norm))
        axes, s = axes[-1:], s[-1:]
    for a, n in zip(axes[:-1], s[:-1]):
        x = _resize(x, a, n)
    x = _resize(x, axes[-1], s[-1] // 2 + 1)
    return ops.irfft(x, axes=axes, s=s, norm=_norm(norm))


def _one(n):
    if n is not None and operator.index(n) < 1:  # -1 keeps an axis only in s= of the n-d ones
        raise ValueError(f"numpy.fft: invalid number of data points ({n}) specified; n= must be "
                         "positive, or None for the input's length")
    return None if n is None else (n,)


@implements(np.fft.fft)
def _fft(a, n=None, axis=-1, norm=None, out=None):
    return _written(out, _complex_fft(a, _one(n), (axis,), norm, False), "fft")


@implements(np.fft.ifft)
def _ifft(a, n=None, axis=-1, norm=None, out=None):
    return _written(out, _complex_fft(a, _one(n), (axis,), norm, True), "ifft")


@implements(np.fft.fft2)
def _fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _written(out, _complex_fft(a, s, axes, norm, False), "fft2")


@implements(np.fft.ifft2)
def _ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _written(out, _complex_fft(a, s, axes, norm, True), "ifft2")


@implements(np.fft.fftn)
def _fftn(a, s=None, axes=None, norm=None, out=None):
    return _written(out, _complex_fft(a, s, axes, norm, False), "fftn")


@implements(np.fft.ifftn)
def _ifftn(a, s=None, axes=None, norm=None, out=None):
    return _written(out, _complex_fft(a, s, axes, norm, True), "ifftn")


@implements(np.fft.rfft)
def _rfft(a, n=None, axis=-1, norm=None, out=None):
    return _written(out, _real_fft(a, _one(n), (axis,), norm), "rfft")


@implements(np.fft.rfft2)
def _rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _written(out, _real_fft(a, s, axes, norm), "rfft2")


@implements(np.fft.rfftn)
def _rfftn(a, s=None, axes=None, norm=None, out=None):
    return _written(out, _real_fft(a, s, axes, norm), "rfftn")


@implements(np.fft.irfft)
def _irfft(a, n=None, axis=-1, norm=None, out=None):
    return _written(out, _inverse_real_fft(a, _one(n), (axis,), norm), "irfft")


@implements(np.fft.irfft2)
def _irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    return _written(out, _inverse_real_fft(a, s, axes, norm), "irfft2")


@implements(np.fft.irfftn)
def _irfftn(a, s=None, axes=None, norm=None, out=None):
    return _written(out, _inverse_real_fft(a, s, axes, norm), "irfftn")


def _conj(x):
    return ops.conj(x) if aval_of(x).dtype.kind == "c" else x


@implements(np.fft.hfft)
def _hfft(a, n=None, axis=-1, norm=None, out=None):
    """The real signal whose spectrum is Hermitian with half ``a``: irfft of the conjugate."""
    value = _inverse_real_fft(_conj(a), _one(n), (axis,), _SWAP[_norm(norm)])
    return _written(out, value, "hfft")


@implements(np.fft.ihfft)
def _ihfft(a, n=None, axis=-1, norm=None, out=None):
    return _written(out, ops.conj(_real_fft(a, _one(n), (axis,), _SWAP[_norm(norm)])), "ihfft")


def _shift(x, axes, sign):
    shape = aval_of(x).shape
    axes = normalize_axes(axes, len(shape))
    if not axes:
        return x
    return ops.roll(x, shift=tuple(sign * (shape[a] // 2) for a in axes), axes=axes)


@implements(np.fft.fftshift)
def _fftshift(x, axes=None):
    return _shift(x, axes, 1)


@implements(np.fft.ifftshift)
def _ifftshift(x, axes=None):
    return _shift(x, axes, -1)

"""Differentiable ``scipy.signal`` convolutions, with SciPy's signatures.

``convolve``, ``correlate``, ``fftconvolve`` and ``oaconvolve`` take SciPy's ``mode``
(``"full"``, ``"same"``, ``"valid"``) and, where SciPy has them, ``method`` and ``axes``. On
plain arrays every function returns SciPy's own result. On traced arrays the direct method adds
shifted copies of the larger input scaled by the entries of the smaller one (linear memory, one
multiply-add per entry of the smaller: exact for integers); the FFT method multiplies real
(or complex) FFTs padded to SciPy's fast lengths. Both are differentiable in both inputs, to
any order, and stage into programs that save and load. Shapes and dtypes are SciPy's
(``convolve`` keeps ``result_type(in1, in2)``, float32 included; ``fftconvolve`` computes in
the FFT's float type). ``method="auto"`` picks ``direct`` for integer inputs and for a smaller
input of at most 64 entries, else ``fft`` (SciPy times its own two methods; the values agree
to rounding, except that a ``nan`` spreads over the whole FFT result). ``oaconvolve`` returns
what ``fftconvolve`` does: overlap-add is a schedule of the same sum.

Example:
    >>> import numpy as np, advect as ad
    >>> from advect.scipy import signal
    >>> signal.convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    >>> ad.grad(lambda h: signal.convolve(np.array([1.0, 2.0, 3.0]), h, "valid")[0])(
    ...     np.zeros(2)).tolist()
    [2.0, 1.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.fft as _fft
import scipy.signal as _signal

from ._windows import asarray, traced

__all__ = ["convolve", "correlate", "fftconvolve", "oaconvolve"]

_MODES = ("full", "same", "valid")
_DIRECT_MAX = 64  # method="auto": the largest smaller input convolved directly


def _check_mode(mode: Any) -> None:
    if mode not in _MODES:
        raise ValueError("Acceptable mode flags are 'valid', 'same', or 'full'.")


def _check_method(method: Any) -> None:
    if method not in ("auto", "direct", "fft"):
        raise ValueError("Acceptable method flags are 'auto', 'direct', or 'fft'.")


def _swap_needed(mode, shape1, shape2, axes) -> bool:
    """SciPy's rule: in ``valid`` mode the first input must be the larger on every axis."""
    if mode != "valid" or not shape1:
        return False
    ok1 = all(shape1[i] >= shape2[i] for i in axes)
    ok2 = all(shape2[i] >= shape1[i] for i in axes)
    if not (ok1 or ok2):
        raise ValueError("For 'valid' mode, one must be at least as large as the other in every "
                         "dimension")
    return not ok1


def _centered(x, shape):
    start = [(n - m) // 2 for n, m in zip(x.shape, shape)]
    return x[tuple(slice(s, s + m) for s, m in zip(start, shape))]


def _apply_mode(full, s1, s2, mode, axes):
    if mode == "full":
        return full
    if mode == "same":
        return _centered(full, s1)
    return _centered(full, [s1[a] - s2[a] + 1 if a in axes else full.shape[a]
                            for a in range(full.ndim)])


def _reverse_and_conj(x):
    x = x[(slice(None, None, -1),) * x.ndim]
    return np.conj(x) if x.dtype.kind == "c" else x


def _direct_full(a, b):
    """The full convolution over every axis: shifted, zero-padded copies of the larger input
    scaled by each entry of the smaller one."""
    if b.size > a.size:
        a, b = b, a
    total = None
    for index in np.ndindex(*b.shape):
        pad = [(j, m - 1 - j) for j, m in zip(index, b.shape)]
        term = np.pad(a, pad) * b[index]
        total = term if total is None else total + term
    return total


def _fft_dtype(x) -> np.dtype:
    """The dtype ``scipy.fft`` computes ``x`` in: float16 as float32, integers as float64."""
    kind = x.dtype.kind
    if kind in "biu":
        return np.dtype(np.float64)
    return np.result_type(x.dtype, np.float32)


def _frequency_full(in1, in2, axes, shape):
    """The convolution over ``axes`` (broadcasting over the others) through FFTs padded to
    SciPy's fast lengths, cropped to ``shape``."""
    if not axes:
        return in1 * in2
    dtype = np.result_type(_fft_dtype(in1), _fft_dtype(in2))
    real = dtype.kind != "c"
    in1, in2 = in1.astype(dtype, copy=False), in2.astype(dtype, copy=False)
    fshape = [_fft.next_fast_len(shape[a], real) for a in axes]
    if real:
        spectrum = np.fft.rfftn(in1, fshape, axes=axes) * np.fft.rfftn(in2, fshape, axes=axes)
        full = np.fft.irfftn(spectrum, fshape, axes=axes)
    else:
        full = np.fft.ifftn(np.fft.fftn(in1, fshape, axes=axes)
                            * np.fft.fftn(in2, fshape, axes=axes), fshape, axes=axes)
    return full[tuple(slice(n) for n in shape)].astype(dtype, copy=False)


def _conv_axes(in1, in2, mode, axes):
    """SciPy's ``axes`` rules: normalized, unique, nonempty when given; axes where an input
    has length 1 broadcast instead; the other axes must match or broadcast."""
    ndim = in1.ndim
    if axes is None:
        axes = list(range(ndim))
    else:
        given = [axes] if np.ndim(axes) == 0 else list(axes)
        if not given:
            raise ValueError("when provided, axes cannot be empty")
        if any(not -ndim <= int(a) < ndim for a in given):
            raise ValueError("axes exceeds dimensionality of input")
        axes = [int(a) % ndim for a in given]
        if len(set(axes)) != len(axes):
            raise ValueError("all axes must be unique")
    s1, s2 = in1.shape, in2.shape
    axes = [a for a in axes if s1[a] != 1 and s2[a] != 1]
    if not all(s1[a] == s2[a] or 1 in (s1[a], s2[a]) for a in range(ndim) if a not in axes):
        raise ValueError(f"incompatible shapes for in1 and in2: {s1} and {s2}")
    if _swap_needed(mode, s1, s2, axes):
        in1, in2 = in2, in1
    return in1, in2, axes


def _fftconvolve(in1, in2, mode, axes):
    if in1.ndim == in2.ndim == 0:
        return in1 * in2
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if in1.size == 0 or in2.size == 0:
        return np.zeros((0,), like=in1 if traced(in1) else in2)
    _check_mode(mode)
    in1, in2, axes = _conv_axes(in1, in2, mode, axes)
    s1, s2 = in1.shape, in2.shape
    shape = [s1[i] + s2[i] - 1 if i in axes else max(s1[i], s2[i]) for i in range(in1.ndim)]
    return _apply_mode(_frequency_full(in1, in2, axes, shape), s1, s2, mode, axes)


def _numpy_1d(volume, kernel, mode) -> bool:
    """Whether SciPy hands a direct convolution to NumPy: vectors, and for 'same' (which NumPy
    sizes by the longer input, SciPy by the first) a first input at least as long."""
    return volume.ndim == kernel.ndim == 1 and (
        mode in ("full", "valid") or mode == "same" and volume.size >= kernel.size)


def _convolve(volume, kernel, mode, method):
    if volume.ndim == kernel.ndim == 0:
        return volume * kernel
    if volume.ndim != kernel.ndim:
        raise ValueError("volume and kernel should have the same dimensionality")
    _check_mode(mode)
    _check_method(method)
    if volume.size == 0 or kernel.size == 0:
        raise ValueError("scipy.signal.convolve: inputs cannot be empty")
    axes = range(volume.ndim)
    if _swap_needed(mode, volume.shape, kernel.shape, axes):
        volume, kernel = kernel, volume
    dtype = np.result_type(volume.dtype, kernel.dtype)
    if method == "auto":
        small = min(volume.size, kernel.size) <= _DIRECT_MAX
        method = "direct" if small or dtype.kind not in "fc" else "fft"
    if method == "direct":
        if _numpy_1d(volume, kernel, mode):  # SciPy calls np.convolve, and so do we
            return np.convolve(volume, kernel, mode)
        full = _direct_full(volume, kernel)
        return _apply_mode(full, volume.shape, kernel.shape, mode, axes).astype(dtype)
    out = _fftconvolve(volume, kernel, mode, None)
    if dtype.kind in "biu":
        out = np.round(out)
    return out.astype(dtype)


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """The N-dimensional convolution ``out[n] = sum_k in1[k] in2[n - k]``; ``same`` is the
    centre of the full result the size of ``in1``, ``valid`` where the inputs overlap fully.

    Example:
        >>> import numpy as np, advect as ad
        >>> x = np.arange(4.0)
        >>> staged = ad.stage(lambda x: convolve(x, np.ones(2), "same", method="fft"), x)
        >>> np.round(staged(x), 12).tolist()
        [0.0, 1.0, 3.0, 5.0]
    """
    if not traced(in1, in2):
        return _signal.convolve(in1, in2, mode, method)
    return _convolve(asarray(in1), asarray(in2), mode, method)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto") -> Any:
    """The cross-correlation ``out[k] = sum_n in1[n + k] conj(in2[n])``: ``convolve`` with
    ``in2`` reversed and conjugated, as SciPy computes it.

    Example:
        >>> import numpy as np
        >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5])).tolist()
        [0.5, 2.0, 3.5, 3.0, 0.0]
    """
    if not traced(in1, in2):
        return _signal.correlate(in1, in2, mode, method)
    in1, in2 = asarray(in1), asarray(in2)
    if in1.ndim == in2.ndim == 0:
        return in1 * (np.conj(in2) if in2.dtype.kind == "c" else in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    _check_mode(mode)
    if method == "direct" and _numpy_1d(in1, in2, mode):  # SciPy calls np.correlate
        return np.correlate(in1, in2, mode)
    return _convolve(in1, _reverse_and_conj(in2), mode, method)


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """The convolution over ``axes`` (default all; the others broadcast) through FFTs.

    Example:
        >>> import numpy as np, advect as ad
        >>> x = np.ones((2, 3))
        >>> g = ad.grad(lambda x: fftconvolve(x, np.array([[1.0, -1.0]]), axes=1).sum())(x)
        >>> np.round(g, 12).tolist()
        [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
    """
    if not traced(in1, in2):
        return _signal.fftconvolve(in1, in2, mode, axes)
    return _fftconvolve(asarray(in1), asarray(in2), mode, axes)


def oaconvolve(in1: Any, in2: Any, mode: str = "full", axes: Any = None) -> Any:
    """The overlap-add convolution: on traced arrays, ``fftconvolve``'s result (the same sum).

    Example:
        >>> import numpy as np
        >>> np.round(oaconvolve(np.arange(3.0), np.ones(2)), 12).tolist()
        [0.0, 1.0, 3.0, 2.0]
    """
    if not traced(in1, in2):
        return _signal.oaconvolve(in1, in2, mode, axes)
    return _fftconvolve(asarray(in1), asarray(in2), mode, axes)

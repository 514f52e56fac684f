"""Differentiable ``scipy.ndimage`` filters and grey morphology, with SciPy's signatures.

On plain arrays every function returns SciPy's own result. On traced arrays each filter is
written with Advect's ops from one building block: the window stack. Along each filtered axis
the input is extended by the boundary ``mode`` through a precomputed index map (a ``take``,
whose transpose is a scatter-add, so every mode has its exact adjoint; ``constant`` entries are
``cval`` and get no derivative) and the ``size`` shifted copies are stacked on a trailing axis.
Linear filters contract that axis with their weights (differentiable too); rank filters and
grey morphology pick an element of it (``take_along_axis`` of the argsort, or a max/min), so
the cotangent reaches the selected element. Staging and saved programs come for free.

Modes: ``reflect`` (= ``grid-mirror``), ``constant`` (= ``grid-constant``), ``nearest``,
``mirror``, ``wrap`` (= ``grid-wrap``), as SciPy's filters treat them.

Example:
    >>> import numpy as np, advect as ad
    >>> from advect.scipy import ndimage
    >>> x = np.array([0.0, 1.0, 4.0, 9.0])
    >>> ndimage.uniform_filter1d(x, 3, mode="nearest").round(12).tolist()
    [0.333333333333, 1.666666666667, 4.666666666667, 7.333333333333]
    >>> ad.grad(lambda x: ndimage.uniform_filter1d(x, 3, mode="nearest")[0])(x).round(12).tolist()
    [0.666666666667, 0.333333333333, 0.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.ndimage as _nd

from ..ops._rules import each_axis, one_axis
from ._morphology import (
    black_tophat,
    grey_closing,
    grey_dilation,
    grey_erosion,
    grey_opening,
    morphological_gradient,
    morphological_laplace,
    white_tophat,
)
from ._windows import (
    asarray,
    axes_given,
    correlate_along,
    finish,
    gaussian_kernel,
    normalize_axes,
    per_axis,
    rank_of,
    traced,
    window_count,
    windows,
)

__all__ = ["gaussian_filter", "gaussian_filter1d", "gaussian_laplace", "uniform_filter",
           "uniform_filter1d", "convolve", "convolve1d", "correlate", "correlate1d", "laplace",
           "sobel", "prewitt", "minimum_filter", "minimum_filter1d", "maximum_filter",
           "maximum_filter1d", "median_filter", "rank_filter", "percentile_filter",
           "grey_erosion", "grey_dilation", "grey_opening", "grey_closing",
           "morphological_gradient", "morphological_laplace", "white_tophat", "black_tophat"]

# --- linear filters ------------------------------------------------------------------------------

def correlate1d(input: Any, weights: Any, axis: int = -1, output: Any = None,
                mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """One-dimensional correlation ``out[i] = sum_k weights[k] input[i + k - len // 2 -
    origin]`` along ``axis``; differentiable in ``input`` and ``weights``.

    Example:
        >>> import numpy as np, advect as ad
        >>> correlate1d(np.array([1.0, 2.0, 4.0]), np.array([1.0, -1.0]), mode="wrap").tolist()
        [3.0, -1.0, -2.0]
        >>> ad.grad(lambda x: correlate1d(x, np.array([1.0, 2.0]), mode="constant")[1])(
        ...     np.zeros(3)).tolist()
        [1.0, 2.0, 0.0]
    """
    if not traced(input, weights):
        return _nd.correlate1d(input, weights, axis, output, mode, cval, origin)
    return _correlate1d(input, weights, axis, output, mode, cval, origin, conjugate=True)


def _correlate1d(input, weights, axis, output, mode, cval, origin, conjugate):
    x, w = asarray(input), asarray(weights)
    w, output = _complex_weights(x, w, output, conjugate)
    return finish(correlate_along(x, w, one_axis(axis, x.ndim), mode, cval, origin), x, output)


def _complex_weights(x, w, output, conjugate):
    """SciPy's rules for complex weights: a correlation conjugates them (a convolution does
    not), and with no ``output`` the result is complex, in the input's precision."""
    if np.dtype(w.dtype).kind != "c":
        return w, output
    if output is None:
        output = np.result_type(np.dtype(x.dtype), np.complex64)
    return (np.conj(w) if conjugate else w), output


def convolve1d(input: Any, weights: Any, axis: int = -1, output: Any = None,
               mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """One-dimensional convolution: ``correlate1d`` with the weights reversed (and the origin
    mirrored), as SciPy defines it.

    Example:
        >>> import numpy as np
        >>> convolve1d(np.array([1.0, 2.0, 4.0]), np.array([1.0, -1.0]), mode="wrap").tolist()
        [1.0, 2.0, -3.0]
    """
    if not traced(input, weights):
        return _nd.convolve1d(input, weights, axis, output, mode, cval, origin)
    w = asarray(weights)[::-1]
    return _correlate1d(input, w, axis, output, mode, cval, -origin - (1 - len(w) % 2),
                        conjugate=False)


def _correlate_nd(input, weights, output, mode, cval, origin, axes, flip):
    x, w = asarray(input), asarray(weights)
    axes = normalize_axes(axes, x.ndim)
    if w.ndim != len(axes):
        raise RuntimeError(f"scipy.ndimage: weights have {w.ndim} dimensions, expected "
                           f"{len(axes)} (one per filtered axis)")
    origins = [int(o) for o in per_axis(origin, len(axes), "origin")]
    if flip:
        w = w[(slice(None, None, -1),) * w.ndim]
        origins = [-o - (1 - s % 2) for o, s in zip(origins, w.shape)]
    w, output = _complex_weights(x, w, output, conjugate=not flip)
    stack = windows(x, axes, list(w.shape), origins, [mode] * len(axes), cval)
    flat = np.reshape(stack, (*x.shape, -1))
    return finish(flat @ np.reshape(w, (-1,)), x, output)


def correlate(input: Any, weights: Any, output: Any = None, mode: str = "reflect",
              cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """Multidimensional correlation with ``weights`` (one dimension per filtered axis).

    Example:
        >>> import numpy as np, advect as ad
        >>> x = np.arange(9.0).reshape(3, 3)
        >>> correlate(x, np.ones((2, 2)), mode="nearest").tolist()
        [[0.0, 2.0, 6.0], [6.0, 8.0, 12.0], [18.0, 20.0, 24.0]]
        >>> ad.grad(lambda w: correlate(x, w, mode="nearest")[1, 1])(np.ones((2, 2))).tolist()
        [[0.0, 1.0], [3.0, 4.0]]
    """
    if not traced(input, weights):
        return _nd.correlate(input, weights, output, mode, cval, origin, **axes_given(axes))
    return _correlate_nd(input, weights, output, mode, cval, origin, axes, flip=False)


def convolve(input: Any, weights: Any, output: Any = None, mode: str = "reflect",
             cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """Multidimensional convolution: ``correlate`` with the weights reversed on every axis.

    Example:
        >>> import numpy as np
        >>> convolve(np.arange(4.0), np.array([1.0, 0.0, 0.0]), mode="constant").tolist()
        [1.0, 2.0, 3.0, 0.0]
    """
    if not traced(input, weights):
        return _nd.convolve(input, weights, output, mode, cval, origin, **axes_given(axes))
    return _correlate_nd(input, weights, output, mode, cval, origin, axes, flip=True)


def gaussian_filter1d(input: Any, sigma: float, axis: int = -1, order: int = 0,
                      output: Any = None, mode: str = "reflect", cval: float = 0.0,
                      truncate: float = 4.0, *, radius: int | None = None) -> Any:
    """One-dimensional Gaussian filter (``order > 0``: convolution with that derivative of
    the Gaussian); the kernel reaches ``radius`` (default ``int(truncate * sigma + 0.5)``).

    Example:
        >>> import numpy as np, advect as ad
        >>> x = np.array([0.0, 0.0, 1.0, 0.0, 0.0])
        >>> bool(np.isclose(ad.grad(lambda x: gaussian_filter1d(x, 1.0).sum())(x).sum(), 5.0))
        True
    """
    if not traced(input):
        return _nd.gaussian_filter1d(input, sigma, axis, order, output, mode, cval, truncate,
                                     radius=radius)
    x = asarray(input)
    radius = int(float(truncate) * float(sigma) + 0.5) if radius is None else int(radius)
    kernel = gaussian_kernel(float(sigma), int(order), radius)
    return finish(correlate_along(x, kernel, one_axis(axis, x.ndim), mode, cval, 0), x, output)


def gaussian_filter(input: Any, sigma: Any, order: Any = 0, output: Any = None,
                    mode: Any = "reflect", cval: float = 0.0, truncate: float = 4.0, *,
                    radius: Any = None, axes: Any = None) -> Any:
    """Multidimensional Gaussian filter: ``gaussian_filter1d`` along each axis (``sigma``,
    ``order``, ``mode`` and ``radius`` per axis or shared); axes with ``sigma == 0`` are left.

    Example:
        >>> import numpy as np, advect as ad
        >>> x = np.zeros((5, 5)); x[2, 2] = 1.0
        >>> round(float(gaussian_filter(x, 1.0, mode="constant")[2, 2]), 6)
        0.159156
        >>> g = ad.grad(lambda x: gaussian_filter(x, 1.0, mode="constant")[2, 2])(x)
        >>> bool(np.allclose(g, gaussian_filter(x, 1.0, mode="constant")))  # symmetric kernel
        True
    """
    if not traced(input):
        return _nd.gaussian_filter(input, sigma, order, output, mode, cval, truncate,
                                   radius=radius, **axes_given(axes))
    x = asarray(input)
    axes = normalize_axes(axes, x.ndim)
    n = len(axes)
    out = x
    for axis, s, o, m, r in zip(axes, per_axis(sigma, n, "sigma"), per_axis(order, n, "order"),
                                per_axis(mode, n, "mode"), per_axis(radius, n, "radius")):
        if float(s) > 1e-15:
            out = gaussian_filter1d(out, s, axis, o, None, m, cval, truncate, radius=r)
    return finish(out, x, output)


def gaussian_laplace(input: Any, sigma: Any, output: Any = None, mode: Any = "reflect",
                     cval: float = 0.0, *, axes: Any = None, **kwargs: Any) -> Any:
    """The Laplacian of a Gaussian-smoothed input: the sum over axes of second-order Gaussian
    derivatives (``truncate``/``radius`` pass through).

    Example:
        >>> import numpy as np, advect as ad
        >>> x = np.zeros((5, 5)); x[2, 2] = 1.0
        >>> staged = ad.stage(lambda x: gaussian_laplace(x, 1.0), x)
        >>> bool(np.allclose(staged(x), gaussian_laplace(x, 1.0), rtol=1e-13))
        True
    """
    if not traced(input):
        return _nd.gaussian_laplace(input, sigma, output, mode, cval, **axes_given(axes),
                                    **kwargs)
    x = asarray(input)
    axes = normalize_axes(axes, x.ndim)
    modes = per_axis(mode, len(axes), "mode")
    total = None
    for i in range(len(axes)):
        orders = [2 if j == i else 0 for j in range(len(axes))]
        # SciPy's generic_laplace: the i-th term filters every axis with modes[i]
        term = gaussian_filter(x, sigma, orders, None, modes[i], cval, axes=axes, **kwargs)
        total = term if total is None else total + term
    return finish(total, x, output)


def uniform_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """The mean over windows of ``size`` along ``axis``.

    Example:
        >>> import numpy as np
        >>> uniform_filter1d(np.array([2.0, 4.0, 6.0]), 2, mode="nearest").tolist()
        [2.0, 3.0, 5.0]
    """
    if not traced(input):
        return _nd.uniform_filter1d(input, size, axis, output, mode, cval, origin)
    if int(size) < 1:
        raise RuntimeError("scipy.ndimage.uniform_filter1d: incorrect filter size")
    x = asarray(input)
    (axis,) = each_axis(axis, x.ndim)
    # the window sum divided by the size, as SciPy computes it: times 1/size would give
    # -0.999... for a mean of -1, which an integer output truncates to 0
    total = correlate_along(x, np.ones(int(size)), axis, mode, cval, origin)
    return finish(total / int(size), x, output)


def uniform_filter(input: Any, size: Any = 3, output: Any = None, mode: Any = "reflect",
                   cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """The mean over boxes of ``size`` (per axis or shared): one ``uniform_filter1d`` per axis.

    Example:
        >>> import numpy as np
        >>> uniform_filter(np.ones((3, 3)), 2, mode="constant").tolist()[0]
        [0.25, 0.5, 0.5]
    """
    if not traced(input):
        return _nd.uniform_filter(input, size, output, mode, cval, origin, **axes_given(axes))
    x = asarray(input)
    axes = normalize_axes(axes, x.ndim)
    n = len(axes)
    out = x
    for axis, s, m, o in zip(axes, per_axis(size, n, "size"), per_axis(mode, n, "mode"),
                             per_axis(origin, n, "origin")):
        if int(s) > 1:
            out = uniform_filter1d(out, s, axis, None, m, cval, o)
    return finish(out, x, output)


def _derivative_sum(x, kernel, axes, modes, cval):
    total = None
    for axis, mode in zip(axes, modes):
        term = correlate_along(x, kernel, axis, mode, cval, 0)
        total = term if total is None else total + term
    return total


def laplace(input: Any, output: Any = None, mode: Any = "reflect", cval: float = 0.0, *,
            axes: Any = None) -> Any:
    """The discrete Laplacian: the sum over axes of the second difference ``[1, -2, 1]``.

    Example:
        >>> import numpy as np
        >>> laplace(np.array([0.0, 1.0, 4.0, 9.0]), mode="nearest").tolist()
        [1.0, 2.0, 2.0, -5.0]
    """
    if not traced(input):
        return _nd.laplace(input, output, mode, cval, **axes_given(axes))
    x = asarray(input)
    axes = normalize_axes(axes, x.ndim)
    total = _derivative_sum(x, np.array([1.0, -2.0, 1.0]), axes,
                            per_axis(mode, len(axes), "mode"), cval)
    return finish(total, x, output)


def _edge(x, axis, output, mode, cval, smooth):
    x = asarray(x)
    (axis,) = each_axis(axis, x.ndim)
    modes = per_axis(mode, x.ndim, "mode")
    out = correlate_along(x, np.array([-1.0, 0.0, 1.0]), axis, modes[axis], cval, 0)
    for other in range(x.ndim):
        if other != axis:
            out = correlate_along(out, smooth, other, modes[other], cval, 0)
    return finish(out, x, output)


def sobel(input: Any, axis: int = -1, output: Any = None, mode: Any = "reflect",
          cval: float = 0.0) -> Any:
    """The Sobel derivative along ``axis``: ``[-1, 0, 1]`` there, ``[1, 2, 1]`` on the others.

    Example:
        >>> import numpy as np
        >>> sobel(np.array([0.0, 1.0, 4.0, 9.0])).tolist()
        [1.0, 4.0, 8.0, 5.0]
    """
    if not traced(input):
        return _nd.sobel(input, axis, output, mode, cval)
    return _edge(input, axis, output, mode, cval, np.array([1.0, 2.0, 1.0]))


def prewitt(input: Any, axis: int = -1, output: Any = None, mode: Any = "reflect",
            cval: float = 0.0) -> Any:
    """The Prewitt derivative along ``axis``: ``[-1, 0, 1]`` there, ``[1, 1, 1]`` on the others.

    Example:
        >>> import numpy as np
        >>> prewitt(np.array([[0.0, 1.0, 4.0]]), axis=1).tolist()
        [[3.0, 12.0, 9.0]]
    """
    if not traced(input):
        return _nd.prewitt(input, axis, output, mode, cval)
    return _edge(input, axis, output, mode, cval, np.array([1.0, 1.0, 1.0]))


# --- rank filters (grey morphology is in _morphology) ---------------------------------------

def rank_filter(input: Any, rank: int, size: Any = None, footprint: Any = None,
                output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0,
                *, axes: Any = None) -> Any:
    """The ``rank``-th smallest value (negative: from the top) in each window of ``size`` or
    ``footprint``; the derivative is that element's.

    Example:
        >>> import numpy as np, advect as ad
        >>> x = np.array([3.0, 1.0, 2.0, 5.0])
        >>> rank_filter(x, 1, size=3).tolist()
        [3.0, 2.0, 2.0, 5.0]
        >>> ad.grad(lambda x: rank_filter(x, 1, size=3)[1])(x).tolist()
        [0.0, 0.0, 1.0, 0.0]
    """
    if not traced(input):
        return _nd.rank_filter(input, rank, size, footprint, output, mode, cval, origin,
                               **axes_given(axes))
    return rank_of(input, rank, size, footprint, output, mode, cval, origin, axes, "rank_filter")


def median_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                  mode: str = "reflect", cval: float = 0.0, origin: Any = 0, *,
                  axes: Any = None) -> Any:
    """The median of each window (rank ``count // 2``, as SciPy).

    Example:
        >>> import numpy as np
        >>> median_filter(np.array([3.0, 1.0, 2.0, 5.0]), size=3).tolist()
        [3.0, 2.0, 2.0, 5.0]
    """
    if not traced(input):
        return _nd.median_filter(input, size, footprint, output, mode, cval, origin,
                                 **axes_given(axes))
    rank = window_count(size, footprint, np.ndim(input), axes) // 2
    return rank_of(input, rank, size, footprint, output, mode, cval, origin, axes,
                 "median_filter")


def percentile_filter(input: Any, percentile: float, size: Any = None, footprint: Any = None,
                      output: Any = None, mode: str = "reflect", cval: float = 0.0,
                      origin: Any = 0, *, axes: Any = None) -> Any:
    """The ``percentile`` of each window, rounded down to an element as SciPy does.

    Example:
        >>> import numpy as np
        >>> percentile_filter(np.array([3.0, 1.0, 2.0, 5.0]), 90, size=3).tolist()
        [3.0, 3.0, 5.0, 5.0]
    """
    if not traced(input):
        return _nd.percentile_filter(input, percentile, size, footprint, output, mode, cval,
                                     origin, **axes_given(axes))
    count = window_count(size, footprint, np.ndim(input), axes)
    percentile = float(percentile) + (100.0 if percentile < 0 else 0.0)
    if not 0.0 <= percentile <= 100.0:
        raise RuntimeError("scipy.ndimage.percentile_filter: invalid percentile")
    rank = min(int(count * percentile / 100.0), count - 1)
    return rank_of(input, rank, size, footprint, output, mode, cval, origin, axes,
                 "percentile_filter")


def minimum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                   mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *,
                   axes: Any = None) -> Any:
    """The minimum of each window (ties: the first minimum gets the derivative).

    Example:
        >>> import numpy as np
        >>> minimum_filter(np.array([3.0, 1.0, 2.0, 5.0]), size=2).tolist()
        [3.0, 1.0, 1.0, 2.0]
    """
    if not traced(input):
        return _nd.minimum_filter(input, size, footprint, output, mode, cval, origin,
                                  **axes_given(axes))
    return rank_of(input, 0, size, footprint, output, mode, cval, origin, axes, "minimum_filter")


def maximum_filter(input: Any, size: Any = None, footprint: Any = None, output: Any = None,
                   mode: Any = "reflect", cval: float = 0.0, origin: Any = 0, *,
                   axes: Any = None) -> Any:
    """The maximum of each window (ties: the first maximum gets the derivative).

    Example:
        >>> import numpy as np
        >>> maximum_filter(np.array([3.0, 1.0, 2.0, 5.0]), size=2).tolist()
        [3.0, 3.0, 2.0, 5.0]
    """
    if not traced(input):
        return _nd.maximum_filter(input, size, footprint, output, mode, cval, origin,
                                  **axes_given(axes))
    return rank_of(input, -1, size, footprint, output, mode, cval, origin, axes, "maximum_filter")


def minimum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """The minimum over windows of ``size`` along ``axis``.

    Example:
        >>> import numpy as np
        >>> minimum_filter1d(np.array([3.0, 1.0, 2.0, 5.0]), 3).tolist()
        [1.0, 1.0, 1.0, 2.0]
    """
    if not traced(input):
        return _nd.minimum_filter1d(input, size, axis, output, mode, cval, origin)
    return rank_of(input, 0, size, None, output, mode, cval, origin, axis % np.ndim(input),
                 "minimum_filter1d")


def maximum_filter1d(input: Any, size: int, axis: int = -1, output: Any = None,
                     mode: str = "reflect", cval: float = 0.0, origin: int = 0) -> Any:
    """The maximum over windows of ``size`` along ``axis``.

    Example:
        >>> import numpy as np
        >>> maximum_filter1d(np.array([3.0, 1.0, 2.0, 5.0]), 3).tolist()
        [3.0, 3.0, 5.0, 5.0]
    """
    if not traced(input):
        return _nd.maximum_filter1d(input, size, axis, output, mode, cval, origin)
    return rank_of(input, -1, size, None, output, mode, cval, origin, axis % np.ndim(input),
                 "maximum_filter1d")

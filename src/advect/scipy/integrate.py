"""Differentiable ``scipy.integrate`` quadrature of sampled data, with SciPy's signatures.

``trapezoid``, ``cumulative_trapezoid`` and ``simpson`` integrate samples ``y`` (at points ``x``,
or spaced ``dx``) along ``axis``. On plain arrays every function returns SciPy's own result; on
traced arrays each is SciPy's formula written with NumPy calls, so derivatives reach ``y``,
``x`` and ``dx`` alike, at any order, and the call stages into programs that save and load.
Result shapes and dtypes are SciPy's: float32 samples integrate in float32 (``simpson``
asks the installed SciPy, whose float32 rules changed in 1.18, for its result dtype).

Example:
    >>> import numpy as np, advect as ad
    >>> from advect.scipy import integrate
    >>> float(integrate.trapezoid(np.array([0.0, 1.0, 4.0])))
    3.0
    >>> ad.grad(lambda y: integrate.simpson(y, dx=0.5))(np.zeros(3)).tolist()
    [0.16666666666666666, 0.6666666666666666, 0.16666666666666666]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.integrate as _si

from ._windows import asarray, traced

__all__ = ["trapezoid", "cumulative_trapezoid", "simpson"]


def _along(ndim: int, axis: int, index: Any) -> tuple:
    """``index`` on ``axis``, everything on the other axes."""
    key = [slice(None)] * ndim
    key[axis] = index
    return tuple(key)


def trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1) -> Any:
    """The trapezoidal rule: ``sum((x[i+1] - x[i]) * (y[i+1] + y[i]) / 2)`` along ``axis``
    (``x`` 1-d, or broadcastable to ``y``; without ``x`` the spacing is ``dx``).

    Example:
        >>> import numpy as np, advect as ad
        >>> x = np.array([0.0, 1.0, 3.0])
        >>> ad.grad(lambda x: trapezoid(x ** 2, x))(x).tolist()  # points and samples move
        [-0.5, -1.5, 11.0]
    """
    if not traced(y, x, dx):
        return _si.trapezoid(y, x, dx, axis)
    y = asarray(y)
    nd = y.ndim
    upper, lower = _along(nd, axis, slice(1, None)), _along(nd, axis, slice(None, -1))
    if x is None:
        d = dx
    else:
        x = asarray(x)
        if x.ndim == 1:  # broadcastable to y
            key = [None] * nd
            key[axis] = slice(None)
            d = np.diff(x)[tuple(key)]
        else:
            x = np.broadcast_to(x, y.shape)
            d = x[upper] - x[lower]
    dtype = np.float64 if y.dtype.kind in "biu" else y.dtype  # SciPy sums in y's float type
    return np.sum(d * (y[upper] + y[lower]) / 2.0, axis=axis, dtype=dtype)


def cumulative_trapezoid(y: Any, x: Any = None, dx: Any = 1.0, axis: int = -1,
                         initial: Any = None) -> Any:
    """The running trapezoidal integral along ``axis`` (one sample fewer than ``y``, or as
    many with ``initial=0``, which SciPy prepends; other values are refused as in SciPy).

    Example:
        >>> import numpy as np
        >>> cumulative_trapezoid(np.array([0.0, 1.0, 4.0]), initial=0).tolist()
        [0.0, 0.5, 3.0]
    """
    if not traced(y, x, dx):
        return _si.cumulative_trapezoid(y, x, dx, axis, initial)
    y = asarray(y)
    if y.shape[axis] == 0:
        raise ValueError("At least one point is required along `axis`.")
    nd = y.ndim
    if x is None:
        d = dx
    else:
        x = asarray(x)
        if x.ndim == 1:
            d = np.reshape(np.diff(x), [-1 if i == axis % nd else 1 for i in range(nd)])
        elif x.ndim != nd:
            raise ValueError("If given, shape of x must be 1-D or the same as y.")
        else:
            d = np.diff(x, axis=axis)
        if d.shape[axis] != y.shape[axis] - 1:
            raise ValueError("If given, length of x along axis must be the same as y.")
    upper, lower = _along(nd, axis, slice(1, None)), _along(nd, axis, slice(None, -1))
    res = np.cumsum(d * (y[upper] + y[lower]) / 2.0, axis=axis)
    if initial is None:
        return res
    if initial != 0:
        raise ValueError("`initial` must be `None` or `0`.")
    if not np.isscalar(initial):
        raise ValueError("`initial` parameter should be a scalar.")
    shape = list(res.shape)
    shape[axis] = 1
    return np.concatenate([np.zeros(shape, dtype=res.dtype, like=res), res], axis=axis)


def _basic_simpson(y, stop, x, dx, axis):
    """Composite Simpson over the pairs of intervals ``[0, stop]`` (SciPy's helper)."""
    nd = y.ndim
    y0, y1, y2 = (y[_along(nd, axis, slice(k, stop + k, 2))] for k in range(3))
    if x is None:
        return _add_in_place(np.sum(y0 + 4.0 * y1 + y2, axis=axis), dx / 3.0, np.multiply)
    h = np.diff(x, axis=axis)
    h0 = h[_along(nd, axis, slice(0, stop, 2))].astype(float, copy=False)
    h1 = h[_along(nd, axis, slice(1, stop + 1, 2))].astype(float, copy=False)
    hsum, hprod = h0 + h1, h0 * h1
    ratio = _divide(h0, h1)
    return np.sum(hsum / 6.0 * (y0 * (2.0 - _divide(1.0, ratio)) + y1 * (hsum * _divide(
        hsum, hprod)) + y2 * (2.0 - ratio)), axis=axis)


def _add_in_place(result, value, ufunc=np.add):
    """SciPy's ``result += value`` (or ``*=``): an array result keeps its dtype, a scalar one
    (of a 1-d input) is promoted."""
    out = ufunc(result, value)
    return out.astype(result.dtype) if result.ndim else out


def _divide(num, den):
    """``num / den`` where ``den != 0``, else 0 (SciPy's guard against repeated points), with
    no derivative through the masked entries."""
    zero = den == 0
    return np.where(zero, 0.0, num / np.where(zero, 1.0, den))


def simpson(y: Any, x: Any = None, *, dx: Any = 1.0, axis: int = -1) -> Any:
    """Composite Simpson's rule along ``axis``; for an even number of samples the last
    interval gets Cartwright's correction, as in SciPy 1.11+.

    Example:
        >>> import numpy as np
        >>> float(simpson(np.array([0.0, 1.0, 4.0, 9.0])))  # exact for a parabola
        9.0
    """
    if not traced(y, x, dx):
        return _si.simpson(y, x, dx=dx, axis=axis)
    y = asarray(y)
    result = _simpson(y, x, dx, axis)
    dtype = _simpson_dtype(y, x, dx, axis)
    return result if result.dtype == dtype else result.astype(dtype)


def _simpson_dtype(y, x, dx, axis):
    """The dtype of SciPy's ``simpson`` for these operands, from a call on ones of their dtypes
    (and of y's length along ``axis``)."""
    n = y.shape[axis]
    shape = [n if i == axis % y.ndim else 1 for i in range(y.ndim)]
    if x is not None:
        x = np.ones((n,) if np.ndim(x) == 1 else shape, asarray(x).dtype)
    dx = np.ones((), dx.dtype) if traced(dx) else dx
    return np.asarray(_si.simpson(np.ones(shape, y.dtype), x, dx=dx, axis=axis)).dtype


def _simpson(y, x, dx, axis):
    nd, n = y.ndim, y.shape[axis]
    if x is not None:
        x = asarray(x)
        if x.ndim == 1:
            x = np.reshape(x, [x.shape[0] if i == axis % nd else 1 for i in range(nd)])
        elif x.ndim != nd:
            raise ValueError("If given, shape of x must be 1-D or the same as y.")
        if x.shape[axis] != n:
            raise ValueError("If given, length of x along axis must be the same as y.")
    if n % 2:
        return _basic_simpson(y, n - 2, x, dx, axis)
    last, second, third = (_along(nd, axis, k) for k in (-1, -2, -3))
    if n == 2:
        spacing = dx if x is None else x[last] - x[second]
        return 0.0 + 0.5 * spacing * (y[last] + y[second])
    result = _basic_simpson(y, n - 3, x, dx, axis)
    if x is None:
        h0 = h1 = dx.astype(np.float64) if traced(dx) else np.float64(dx)
    else:
        diffs = np.diff(x, axis=axis).astype(np.float64)
        h0, h1 = diffs[second], diffs[last]
    alpha = _divide(2 * h1 ** 2 + 3 * h0 * h1, 6 * (h1 + h0))
    beta = _divide(h1 ** 2 + 3.0 * h0 * h1, 6 * h0)
    eta = _divide(1 * h1 ** 3, 6 * h0 * (h0 + h1))
    return _add_in_place(result, alpha * y[last] + beta * y[second] - eta * y[third])

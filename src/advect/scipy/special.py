"""Differentiable ``scipy.special``: SciPy's signatures, SciPy's values, derivatives of any order.

The unary functions are SciPy's own ufuncs called on the input: a traced array routes the call
through Advect's ufunc table (so ``out=``, ``where=``, ``dtype=`` and the other ufunc keywords
work as in NumPy), a plain array gets SciPy's result. ``polygamma`` binds Advect's op; the
reductions ``logsumexp``, ``softmax`` and ``log_softmax`` are written with NumPy calls on traced
arrays, shifted by the maximum so that large inputs neither overflow nor lose their gradient.
On plain arrays every function returns exactly what SciPy returns.

Calling ``scipy.special`` ufuncs directly on traced arrays works too (91 of them, see
``advect.support_catalog()``); these functions add the composites and a documented home.

Example:
    >>> import numpy as np, advect as ad
    >>> from advect.scipy import special
    >>> x = np.array([1000.0, 1000.0])
    >>> float(special.logsumexp(x)) == 1000.0 + float(np.log(2.0))
    True
    >>> ad.grad(special.logsumexp)(x).tolist()
    [0.5, 0.5]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.special as _sc

from .. import ops
from ..core import Tracer
from ..ops._rules import normalize_axes
from ..providers import numpy_dtype

__all__ = ["gammaln", "digamma", "polygamma", "erf", "erfc", "erfcx", "erfinv", "expit",
           "log_expit", "ndtr", "log_ndtr", "ndtri", "logsumexp", "softmax", "log_softmax"]


def _call(ufunc: np.ufunc, x: Any, out: Any, kwargs: dict) -> Any:
    if out is not None:
        kwargs["out"] = out
    return ufunc(x, **kwargs)


def gammaln(x: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """``log |Gamma(x)|``; its derivative is ``digamma(x)``.

    Example:
        >>> import advect as ad
        >>> round(ad.grad(gammaln)(1.0), 12)  # digamma(1) = -Euler's constant
        -0.577215664902
    """
    return _call(_sc.gammaln, x, out, kwargs)


def digamma(x: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """The digamma function ``Gamma'(x) / Gamma(x)``; its derivative is ``polygamma(1, x)``.

    Complex inputs have values but no derivative (SciPy's polygamma is real only).

    Example:
        >>> import numpy as np, advect as ad
        >>> bool(np.isclose(ad.grad(digamma)(1.0), np.pi ** 2 / 6))
        True
    """
    return _call(_sc.digamma, x, out, kwargs)


def polygamma(n: Any, x: Any) -> Any:
    """``polygamma(n, x)``, the ``n``-th derivative of digamma; ``n`` is a nonnegative integer
    (no derivative flows to it), the derivative in ``x`` is ``polygamma(n + 1, x)``.

    Example:
        >>> import numpy as np, advect as ad
        >>> bool(np.isclose(ad.grad(lambda x: polygamma(1, x))(1.0), -2 * 1.2020569031595942))
        True
    """
    if isinstance(n, Tracer) or isinstance(x, Tracer):
        return ops.polygamma(n, x)
    return _sc.polygamma(n, x)


def erf(z: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """The error function (real and complex).

    Example:
        >>> import numpy as np, advect as ad
        >>> bool(np.isclose(ad.grad(erf)(0.0), 2 / np.sqrt(np.pi)))
        True
    """
    return _call(_sc.erf, z, out, kwargs)


def erfc(x: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """The complementary error function ``1 - erf(x)`` (real and complex).

    Example:
        >>> import numpy as np, advect as ad
        >>> bool(np.isclose(ad.grad(erfc)(0.0), -2 / np.sqrt(np.pi)))
        True
    """
    return _call(_sc.erfc, x, out, kwargs)


def erfcx(x: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """The scaled complementary error function ``exp(x**2) erfc(x)``, finite where ``erfc``
    underflows; its derivative ``2 x erfcx(x) - 2 / sqrt(pi)`` is too.

    Example:
        >>> import advect as ad
        >>> abs(ad.grad(erfcx)(30.0)) < 1e-3
        True
    """
    return _call(_sc.erfcx, x, out, kwargs)


def erfinv(y: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """The inverse of ``erf`` on (-1, 1).

    Example:
        >>> import numpy as np, advect as ad
        >>> bool(np.isclose(ad.grad(erfinv)(0.0), np.sqrt(np.pi) / 2))
        True
    """
    return _call(_sc.erfinv, y, out, kwargs)


def expit(x: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """The logistic sigmoid ``1 / (1 + exp(-x))``; float32 stays float32.

    Example:
        >>> import advect as ad
        >>> ad.grad(expit)(0.0)
        0.25
    """
    return _call(_sc.expit, x, out, kwargs)


def log_expit(x: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """``log(expit(x))`` without overflow; its derivative is ``expit(-x)``.

    Example:
        >>> import advect as ad
        >>> ad.grad(log_expit)(-800.0)
        1.0
    """
    return _call(_sc.log_expit, x, out, kwargs)


def ndtr(x: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """The standard normal CDF (real and complex).

    Example:
        >>> import numpy as np, advect as ad
        >>> bool(np.isclose(ad.grad(ndtr)(0.0), 1 / np.sqrt(2 * np.pi)))
        True
    """
    return _call(_sc.ndtr, x, out, kwargs)


def log_ndtr(x: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """``log(ndtr(x))``, accurate far into the left tail; its derivative (the inverse Mills
    ratio, about ``-x`` there) is formed in log space and stays finite.

    Example:
        >>> import advect as ad
        >>> round(ad.grad(log_ndtr)(-40.0), 3)
        40.025
    """
    return _call(_sc.log_ndtr, x, out, kwargs)


def ndtri(y: Any, /, out: Any = None, **kwargs: Any) -> Any:
    """The inverse of ``ndtr`` (the standard normal quantile function).

    Example:
        >>> import numpy as np, advect as ad
        >>> bool(np.isclose(ad.grad(ndtri)(0.5), np.sqrt(2 * np.pi)))
        True
    """
    return _call(_sc.ndtri, y, out, kwargs)


# --- reductions ----------------------------------------------------------------------------------

def _traced(*values: Any) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def _finite_max(x: Any, axis: Any) -> Any:
    """The maximum over ``axis`` (kept), 0 where it is not finite: the shift that keeps
    ``exp(x - shift)`` in range (an all ``-inf`` slice then gives ``-inf``, not NaN)."""
    kind = numpy_dtype(x.dtype).kind
    if kind in "biu":  # integers are finite (and -inf is no integer): x - max as in SciPy
        return np.max(x, axis=axis, keepdims=True)
    m = np.max(np.real(x) if kind == "c" else x, axis=axis,
               keepdims=True, initial=-np.inf)  # an empty slice sums to 0: log gives -inf
    return np.where(np.isfinite(m), m, 0.0)


def _asarray(x: Any) -> Any:
    return x if isinstance(x, Tracer) else np.asarray(x)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False) -> Any:
    """``log(sum(b * exp(a), axis))`` without overflow, as ``scipy.special.logsumexp``.

    ``b`` scales the terms (it may be negative; then pass ``return_sign=True`` to get
    ``(log|sum|, sign)``); complex ``a`` works. The gradient is the softmax weights, finite for
    inputs in the thousands.

    Example:
        >>> import numpy as np, advect as ad
        >>> a = np.array([[0.0, 1000.0], [2.0, 2.0]])
        >>> logsumexp(a, axis=1).round(6).tolist()
        [1000.0, 2.693147]
        >>> ad.grad(lambda a: logsumexp(a, axis=1).sum())(a).tolist()
        [[0.0, 1.0], [0.5, 0.5]]
    """
    if not _traced(a, b):
        return _sc.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=return_sign)
    a = _asarray(a)
    if numpy_dtype(a.dtype).kind in "biu":  # SciPy computes integers in float64
        a = a.astype(np.float64)
    if a.ndim == 0 and np.ndim(b) == 0:  # SciPy reads a 0-d a as 1-d: keepdims keeps an axis
        a = np.reshape(a, (1,))
    if b is not None:
        if not isinstance(b, (int, float, complex)):  # a Python scalar stays weak (NEP 50)
            b = _asarray(b)
        shape = np.broadcast_shapes(a.shape, np.shape(b))
        a = np.broadcast_to(a, shape)
        if not isinstance(b, (int, float, complex)):
            b = np.broadcast_to(b, shape)
        counted = b != 0
        a_for_max = np.where(counted, a, -np.inf)  # terms with b == 0 do not count
    else:
        a_for_max = a
    axes = normalize_axes(axis, a.ndim)
    shift = _finite_max(a_for_max, axes)
    if b is not None:
        # nor does a term with b == 0 whose exp(a - shift) is inf or NaN (0 * inf would be NaN,
        # SciPy drops it); a finite one keeps its derivative in b, exp(a - shift)
        limit = float(np.log(np.finfo(numpy_dtype(a.dtype)).max))
        a = np.where(counted | (np.real(a) - shift <= limit), a, -np.inf)
    terms = np.exp(a - shift)
    if b is not None:
        terms = b * terms
    total = np.sum(terms, axis=axes, keepdims=True)
    if return_sign:
        sign = (total / np.abs(total) if numpy_dtype(total.dtype).kind == "c"
                else np.sign(total))
        total = np.abs(total)
    with np.errstate(divide="ignore"):  # a sum of zeros: log 0 = -inf, as SciPy returns
        out = np.log(total) + shift
    if not keepdims:  # a 0-d result is a NumPy scalar, as SciPy returns it
        out = np.squeeze(out, axis=axes)[()]
    if not return_sign:
        return out
    return out, (sign if keepdims else np.squeeze(sign, axis=axes)[()])


def softmax(x: Any, axis: Any = None) -> Any:
    """``exp(x) / sum(exp(x), axis)``, shifted by the maximum (as SciPy computes it).

    Example:
        >>> import numpy as np, advect as ad
        >>> softmax(np.array([0.0, np.log(3.0)])).round(12).tolist()
        [0.25, 0.75]
        >>> ad.jacobian(softmax)(np.zeros(2)).tolist()
        [[0.25, -0.25], [-0.25, 0.25]]
    """
    if not _traced(x):
        return _sc.softmax(x, axis=axis)
    axes = normalize_axes(axis, x.ndim)
    shifted = np.exp(x - np.max(x, axis=axes, keepdims=True))
    return shifted / np.sum(shifted, axis=axes, keepdims=True)


def log_softmax(x: Any, axis: Any = None) -> Any:
    """``x - logsumexp(x, axis)``, as ``scipy.special.log_softmax``; finite for inputs far
    apart, where ``log(softmax(x))`` gives ``-inf``.

    Example:
        >>> import numpy as np, advect as ad
        >>> log_softmax(np.array([0.0, 2000.0])).tolist()
        [-2000.0, 0.0]
        >>> ad.grad(lambda x: log_softmax(x)[0])(np.array([0.0, 2000.0])).tolist()
        [1.0, -1.0]
    """
    if not _traced(x):
        return _sc.log_softmax(x, axis=axis)
    axes = normalize_axes(axis, x.ndim)
    shifted = x - _finite_max(x, axes)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axes, keepdims=True))

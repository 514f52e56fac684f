"""Special functions (SciPy's ``scipy.special`` ufuncs): error functions, the logistic
function, gamma-family functions and the normal distribution.

SciPy is optional and imported only when one of these ops first runs, so ``import advect``
never imports it. Dtype rules follow the SciPy ufunc itself (float32 stays float32 where SciPy
has a float32 loop).
"""

from __future__ import annotations

import math

import numpy as np

from ..core import Op
from ..dtypes import Aval, aval_of
from ._rules import broadcast_shapes, elementwise_partials, fit
from .elementwise import (
    add,
    divide,
    equal,
    exp,
    log,
    logical_and,
    multiply,
    negative,
    reciprocal,
    sign,
    square,
    subtract,
    ufunc_abstract,
    where,
)

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_SQRT_TWO_PI = math.sqrt(2.0 * math.pi)


def scipy_special(name: str):
    """``scipy.special.<name>``, importing SciPy on first use with a clear error without it."""
    try:
        import scipy.special
    except ImportError:
        raise ImportError(f"the special function {name!r} needs SciPy; install it with "
                          "`pip install scipy`") from None
    return getattr(scipy.special, name)


def _impl(name):
    def impl(xp, *args):
        if xp is not np:
            raise TypeError(f"{name} is computed by scipy.special, which takes NumPy arrays; "
                            f"the array provider {xp.__name__} is not supported")
        return scipy_special(name)(*args)
    return impl


def _special(name, partials):
    return Op(name, abstract=ufunc_abstract(lambda: scipy_special(name)), impl=_impl(name),
              jvp=elementwise_partials(partials), elementwise=True)


erf = _special("erf", lambda x, out: (multiply(_TWO_OVER_SQRT_PI, exp(negative(square(x)))),))
erfc = _special("erfc",
                lambda x, out: (multiply(-_TWO_OVER_SQRT_PI, exp(negative(square(x)))),))
# erfcx(x) = exp(x^2) erfc(x)
erfcx = _special("erfcx", lambda x, out: (subtract(multiply(multiply(2.0, x), out),
                                                   _TWO_OVER_SQRT_PI),))
erfinv = _special("erfinv", lambda x, out: (multiply(_SQRT_PI_OVER_TWO, exp(square(out))),))
expit = _special("expit", lambda x, out: (multiply(out, subtract(1.0, out)),))
log_expit = _special("log_expit", lambda x, out: (expit(negative(x)),))
gammaln = _special("gammaln", lambda x, out: (digamma(x),))
gamma = _special("gamma", lambda x, out: (multiply(out, digamma(x)),))
ndtr = _special("ndtr", lambda x, out: (divide(exp(multiply(-0.5, square(x))), _SQRT_TWO_PI),))
# d log Phi(x) = phi(x) / Phi(x), formed in log space so it stays finite far in the left tail
log_ndtr = _special("log_ndtr", lambda x, out: (
    divide(exp(subtract(multiply(-0.5, square(x)), out)), _SQRT_TWO_PI),))
ndtri = _special("ndtri", lambda x, out: (multiply(_SQRT_TWO_PI, exp(multiply(0.5, square(out)))),))


logit = _special("logit", lambda x, out: (reciprocal(multiply(x, subtract(1.0, x))),))
entr = _special("entr", lambda x, out: (subtract(negative(log(x)), 1.0),))  # entr = -x log x
rel_entr = _special("rel_entr", lambda x, y, out: (add(log(divide(x, y)), 1.0),
                                                   negative(divide(x, y))))


def _betaln_partials(a, b, out):
    both = digamma(add(a, b))
    return subtract(digamma(a), both), subtract(digamma(b), both)


betaln = _special("betaln", _betaln_partials)


def _over_x(value_at_zero, f):
    """``f(x, safe)`` with ``safe`` = x away from 0, and ``value_at_zero`` at 0 (its limit)."""
    def partial(x):
        zero = equal(x, 0)
        return where(zero, value_at_zero, f(x, where(zero, 1.0, x)))
    return partial


# modified Bessel functions: I0' = I1, I1' = I0 - I1/x; the e-scaled ones carry exp(-|x|)
i0 = _special("i0", lambda x, out: (i1(x),))
i1 = _special("i1", lambda x, out: (_over_x(0.5, lambda x, s: subtract(i0(x),
                                                                     divide(out, s)))(x),))
i0e = _special("i0e", lambda x, out: (subtract(i1e(x), multiply(sign(x), out)),))
i1e = _special("i1e", lambda x, out: (_over_x(0.5, lambda x, s: subtract(
    i0e(x), multiply(out, add(sign(x), reciprocal(s)))))(x),))


def _polygamma_jvp(primals, tangents, out):
    (n, x), (_, dx) = primals, tangents  # the order n is an integer: no tangent
    if dx is None:
        return None
    order = n + 1 if isinstance(n, int) else add(n, 1)
    return fit(multiply(dx, polygamma(order, x)), aval_of(out))


def _polygamma_abstract(n, x):
    # SciPy evaluates polygamma through zeta in double precision, whatever the input dtype
    return Aval(broadcast_shapes(n.shape, x.shape), np.dtype(np.float64), False,
                x.device or n.device)


polygamma = Op("polygamma", abstract=_polygamma_abstract,
               impl=lambda xp, n, x: np.asarray(_impl("polygamma")(xp, n, x)),
               jvp=_polygamma_jvp, elementwise=True)
digamma = _special("digamma", lambda x, out: (polygamma(1, x),))


def _at_pole(x, y, pole):  # the one non-differentiable point of x * log(y - pole)
    return logical_and(equal(x, 0), equal(y, pole))


def _xlog_partials(log_fn, pole):
    """Partials of x * log(y - pole), with 0 at x == 0, y == pole instead of -inf or nan."""
    def partials(x, y, out):
        at_pole = _at_pole(x, y, pole)
        shifted = y if pole == 0 else subtract(y, pole)
        return (log_fn(where(at_pole, 0.0, 1.0), y), divide(x, where(at_pole, 1.0, shifted)))
    return partials


xlogy = _special("xlogy", _xlog_partials(lambda w, y: xlogy(w, y), 0))
xlog1py = _special("xlog1py", _xlog_partials(lambda w, y: xlog1py(w, y), -1))

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]
__all__ += ["scipy_special"]

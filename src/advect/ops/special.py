"""Special functions (SciPy's ``scipy.special`` ufuncs): error functions, the logistic
function, gamma-family functions and the normal distribution; and NumPy's ``sinc``.

SciPy is optional and imported only when one of these ops first runs, so ``import advect``
never imports it. Dtype rules follow the SciPy ufunc itself (float32 stays float32 where SciPy
has a float32 loop).
"""

from __future__ import annotations

import functools
import importlib
import math

import numpy as np

from ..core import Op
from ..dtypes import Aval, aval_of
from ..errors import NoJVPError
from ._rules import broadcast_shapes, elementwise_partials, fit, unary_partial
from .elementwise import (
    abs,
    add,
    cos,
    cosh,
    divide,
    equal,
    exp,
    greater_equal,
    less,
    less_equal,
    log,
    log1p,
    logical_and,
    maximum,
    multiply,
    negative,
    pow,
    reciprocal,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    subtract,
    ufunc_abstract,
    where,
)

_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0
_SQRT_TWO_PI = math.sqrt(2.0 * math.pi)


@functools.cache
def scipy_module(name: str):
    """``scipy.<name>`` (``"special"``, ``"linalg"``), or None without SciPy: looked for once,
    so a missing SciPy is not searched for again on every abstract evaluation."""
    try:
        return importlib.import_module(f"scipy.{name}")
    except ImportError:
        return None


def scipy_function(module: str, name: str, what: str):
    """``scipy.<module>.<name>``, with a clear error (naming ``what``) without SciPy."""
    found = scipy_module(module)
    if found is None:
        raise ImportError(f"the {what} {name!r} needs SciPy; install it with "
                          "`pip install scipy`")
    return getattr(found, name)


def scipy_special(name: str):
    """``scipy.special.<name>``, importing SciPy on first use with a clear error without it."""
    return scipy_function("special", name, "special function")


def _impl(name):
    def impl(xp, *args):
        if xp is not np:
            raise TypeError(f"{name} is computed by scipy.special, which takes NumPy arrays; "
                            f"the array provider {xp.__name__} is not supported")
        return scipy_special(name)(*args)
    return impl


def _special(name, *partials):
    """The op of the scipy.special ufunc ``name``; ``partials`` as ``elementwise_partials``."""
    return Op(name, abstract=ufunc_abstract(lambda: scipy_special(name)), impl=_impl(name),
              jvp=elementwise_partials(*partials), elementwise=True)


erf = _special("erf", lambda x, out: (multiply(_TWO_OVER_SQRT_PI, exp(negative(square(x)))),))
erfc = _special("erfc",
                lambda x, out: (multiply(-_TWO_OVER_SQRT_PI, exp(negative(square(x)))),))
# erfcx(x) = exp(x^2) erfc(x)
erfcx = _special("erfcx", lambda x, out: (subtract(multiply(multiply(2.0, x), out),
                                                   _TWO_OVER_SQRT_PI),))
erfinv = _special("erfinv", lambda x, out: (multiply(_SQRT_PI_OVER_TWO, exp(square(out))),))
# expit(x) expit(-x), not out (1 - out): 1 - out is 0 once out rounds to 1 (x > 17 in float32)
expit = _special("expit", lambda x, out: (multiply(out, expit(negative(x))),))
log_expit = _special("log_expit", lambda x, out: (expit(negative(x)),))
gammaln = _special("gammaln", lambda x, out: (digamma(x),))
gamma = _special("gamma", lambda x, out: (multiply(out, digamma(x)),))
ndtr = _special("ndtr", lambda x, out: (divide(exp(multiply(-0.5, square(x))), _SQRT_TWO_PI),))
# d log Phi(x) = phi(x) / Phi(x) = sqrt(2/pi) / erfcx(-x / sqrt(2)): exact to rounding far in the
# left tail (about -x there) and 0 where erfcx overflows on the right
log_ndtr = _special("log_ndtr", lambda x, out: (
    divide(math.sqrt(2.0 / math.pi), erfcx(multiply(-math.sqrt(0.5), x))),))
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


def _real_polygamma(dtype) -> None:
    """Both lifetimes refuse a complex argument (SciPy's zeta would, with a bare TypeError)."""
    if np.dtype(dtype).kind == "c":
        raise TypeError("scipy.special.polygamma takes real arguments only, so complex digamma "
                        "(and loggamma beyond first order) has no derivative; use real inputs")


def _polygamma_abstract(n, x):
    # SciPy evaluates polygamma through zeta in double precision, whatever the input dtype
    _real_polygamma(x.dtype)
    return Aval(broadcast_shapes(n.shape, x.shape), np.dtype(np.float64), False,
                x.device or n.device)


def _polygamma_impl(xp, n, x):
    _real_polygamma(np.result_type(x))
    return np.asarray(_impl("polygamma")(xp, n, x))


polygamma = Op("polygamma", abstract=_polygamma_abstract, impl=_polygamma_impl,
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



# --- more scipy.special ufuncs whose derivatives are other scipy.special functions ----------

def _no_partial(name, operand):
    """The partial of ``name`` w.r.t. an operand SciPy has no function for: a tangent there
    raises NoJVPError rather than being dropped."""
    def partial(*args):
        raise NoJVPError(f"scipy.special.{name} is differentiable only in its other operands; "
                         f"its derivative w.r.t. {operand} is not a scipy.special function. "
                         f"Pass {operand} as a constant (not a differentiated input)", op=name)
    return partial


_DEG = math.pi / 180.0

erfcinv = _special("erfcinv", lambda x, out: (multiply(-_SQRT_PI_OVER_TWO, exp(square(out))),))
erfi = _special("erfi", lambda x, out: (multiply(_TWO_OVER_SQRT_PI, exp(square(x))),))
dawsn = _special("dawsn", lambda x, out: (subtract(1.0, multiply(multiply(2.0, x), out)),))
# Faddeeva w(z) = exp(-z^2) erfc(-iz):  w'(z) = -2 z w(z) + 2i / sqrt(pi)
wofz = _special("wofz", lambda z, out: (add(multiply(multiply(-2.0, z), out),
                                            1j * _TWO_OVER_SQRT_PI),))
# ndtri_exp(x) = ndtri(exp(x)): the derivative exp(x) / phi(out), formed in log space
ndtri_exp = _special("ndtri_exp", lambda x, out: (
    multiply(_SQRT_TWO_PI, exp(add(x, multiply(0.5, square(out))))),))
loggamma = _special("loggamma", lambda x, out: (digamma(x),))
exp10 = _special("exp10", lambda x, out: (multiply(out, math.log(10.0)),))
cosdg = _special("cosdg", lambda x, out: (multiply(-_DEG, sindg(x)),))
sindg = _special("sindg", lambda x, out: (multiply(_DEG, cosdg(x)),))
tandg = _special("tandg", lambda x, out: (multiply(_DEG, add(1.0, square(out))),))
cotdg = _special("cotdg", lambda x, out: (multiply(-_DEG, add(1.0, square(out))),))
cosm1 = _special("cosm1", lambda x, out: (negative(sin(x)),))
# spence(z) = integral from 1 to z of log(t) / (1 - t) dt. At z = 1 the integrand is its Taylor
# polynomial in u = z - 1, so derivatives there are exact to fourth order
def _spence_partial(z, out):
    one = equal(z, 1.0)
    u = subtract(z, 1.0)
    series = add(-1.0, multiply(u, add(0.5, multiply(u, add(-1 / 3, multiply(u, 0.25))))))
    return where(one, series, divide(log(z), where(one, 2.0, negative(u))))


spence = _special("spence", lambda z, out: (_spence_partial(z, out),))
kl_div = _special("kl_div", lambda x, y, out: (log(divide(x, y)), subtract(1.0, divide(x, y))))


def _huber_partials(delta, r, out):
    inside = less_equal(abs(r), delta)
    return (where(inside, 0.0, subtract(abs(r), delta)),
            where(inside, r, multiply(delta, sign(r))))


def _pseudo_huber_partials(delta, r, out):
    root = sqrt(add(1.0, square(divide(r, delta))))
    return (subtract(multiply(multiply(2.0, delta), subtract(root, 1.0)),
                     divide(square(r), multiply(delta, root))),
            divide(r, root))


huber = _special("huber", _huber_partials)
pseudo_huber = _special("pseudo_huber", _pseudo_huber_partials)


def _beta_partials(a, b, out):
    both = digamma(add(a, b))
    return multiply(out, subtract(digamma(a), both)), multiply(out, subtract(digamma(b), both))


beta = _special("beta", _beta_partials)
# poch(z, m) = gamma(z + m) / gamma(z)
poch = _special("poch", lambda z, m, out: (
    multiply(out, subtract(digamma(add(z, m)), digamma(z))), multiply(out, digamma(add(z, m)))))


def _at_zero(series, partial):
    """``partial(m, safe, out)`` with ``safe`` = m away from 0, and the Taylor polynomial
    ``series(m)`` at 0 (so derivatives there are exact to the polynomial's degree)."""
    def at(m, out):
        zero = equal(m, 0)
        return where(zero, series(m), partial(m, where(zero, 0.5, m), out))
    return at


def _polynomial(*coefficients):
    def value(m):
        total = coefficients[-1]
        for c in coefficients[-2::-1]:
            total = add(c, multiply(m, total))
        return total
    return value


# complete elliptic integrals of the parameter m; at m = 0, K' and E' are their Taylor series
# (K = pi/2 (1 + m/4 + 9 m^2/64 + 25 m^3/256 + ...), E = pi/2 (1 - m/4 - 3 m^2/64 - ...))
_HALF_PI = math.pi / 2
ellipk = _special("ellipk", lambda m, out: (_at_zero(
    _polynomial(_HALF_PI / 4, _HALF_PI * 9 / 32, _HALF_PI * 75 / 256),
    lambda m, s, out: divide(subtract(ellipe(s), multiply(subtract(1.0, s), ellipk(s))),
                             multiply(multiply(2.0, s), subtract(1.0, s))))(m, out),))
ellipe = _special("ellipe", lambda m, out: (_at_zero(
    _polynomial(-_HALF_PI / 4, -_HALF_PI * 3 / 32, -_HALF_PI * 15 / 256),
    lambda m, s, out: divide(subtract(ellipe(s), ellipk(s)), multiply(2.0, s)))(m, out),))

# Bessel functions of integer order 0 and 1: J0' = -J1, J1' = J0 - J1/x (the same for Y),
# K0' = -K1, K1' = -K0 - K1/x; the e-scaled K carry exp(x)
j0 = _special("j0", lambda x, out: (negative(j1(x)),))
j1 = _special("j1", lambda x, out: (_over_x(0.5, lambda x, s: subtract(j0(x),
                                                                     divide(out, s)))(x),))
y0 = _special("y0", lambda x, out: (negative(y1(x)),))
y1 = _special("y1", lambda x, out: (subtract(y0(x), divide(out, x)),))
k0 = _special("k0", lambda x, out: (negative(k1(x)),))
k1 = _special("k1", lambda x, out: (subtract(negative(k0(x)), divide(out, x)),))
k0e = _special("k0e", lambda x, out: (subtract(out, k1e(x)),))
k1e = _special("k1e", lambda x, out: (subtract(subtract(out, k0e(x)), divide(out, x)),))


# Bessel functions of real order v (not differentiable in v): J' = (J(v-1) - J(v+1)) / 2, the
# same for Y, I' = (I(v-1) + I(v+1)) / 2 and K' = -(K(v-1) + K(v+1)) / 2
jv = _special("jv", _no_partial("jv", "the order v"), lambda v, x, out: multiply(
    0.5, subtract(jv(subtract(v, 1.0), x), jv(add(v, 1.0), x))))
yv = _special("yv", _no_partial("yv", "the order v"), lambda v, x, out: multiply(
    0.5, subtract(yv(subtract(v, 1.0), x), yv(add(v, 1.0), x))))
iv = _special("iv", _no_partial("iv", "the order v"), lambda v, x, out: multiply(
    0.5, add(iv(subtract(v, 1.0), x), iv(add(v, 1.0), x))))
kv = _special("kv", _no_partial("kv", "the order v"), lambda v, x, out: multiply(
    -0.5, add(kv(subtract(v, 1.0), x), kv(add(v, 1.0), x))))


# regularized incomplete gamma and beta functions and their inverses, differentiable in x (y)
def _gamma_density(a, x):  # x^(a-1) exp(-x) / gamma(a), the derivative of gammainc in x
    return exp(subtract(subtract(xlogy(subtract(a, 1.0), x), x), gammaln(a)))


def _beta_density(a, b, x):  # x^(a-1) (1-x)^(b-1) / B(a, b), the derivative of betainc in x
    return exp(subtract(add(xlogy(subtract(a, 1.0), x), xlog1py(subtract(b, 1.0), negative(x))),
                        betaln(a, b)))


gammainc = _special("gammainc", _no_partial("gammainc", "a"),
                    lambda a, x, out: _gamma_density(a, x))
gammaincc = _special("gammaincc", _no_partial("gammaincc", "a"),
                     lambda a, x, out: negative(_gamma_density(a, x)))
gammaincinv = _special("gammaincinv", _no_partial("gammaincinv", "a"),
                       lambda a, y, out: reciprocal(_gamma_density(a, out)))
gammainccinv = _special("gammainccinv", _no_partial("gammainccinv", "a"),
                        lambda a, y, out: negative(reciprocal(_gamma_density(a, out))))
betainc = _special("betainc", _no_partial("betainc", "a"), _no_partial("betainc", "b"),
                   lambda a, b, x, out: _beta_density(a, b, x))
betaincinv = _special("betaincinv", _no_partial("betaincinv", "a"),
                      _no_partial("betaincinv", "b"),
                      lambda a, b, y, out: reciprocal(_beta_density(a, b, out)))

# exponential integrals: Ei' = e^x / x, E1' = -e^-x / x, E_n' = -E_{n-1} (E_0 = e^-x / x)
expi = _special("expi", lambda x, out: (divide(exp(x), x),))
exp1 = _special("exp1", lambda x, out: (negative(divide(exp(negative(x)), x)),))
expn = _special("expn", _no_partial("expn", "the order n"), lambda n, x, out: where(
    greater_equal(n, 1), negative(expn(maximum(subtract(n, 1), 0), x)),
    negative(multiply(out, add(1.0, reciprocal(x))))))
# hypergeometric functions, differentiable in their argument
hyp2f1 = _special("hyp2f1", _no_partial("hyp2f1", "a"), _no_partial("hyp2f1", "b"),
                  _no_partial("hyp2f1", "c"), lambda a, b, c, z, out: multiply(
                      divide(multiply(a, b), c), hyp2f1(add(a, 1.0), add(b, 1.0), add(c, 1.0), z)))
hyp1f1 = _special("hyp1f1", _no_partial("hyp1f1", "a"), _no_partial("hyp1f1", "b"),
                  lambda a, b, x, out: multiply(divide(a, b), hyp1f1(add(a, 1.0), add(b, 1.0), x)))
# Struve functions: H_v' = H_{v-1} - (v / x) H_v, the same for the modified L_v
struve = _special("struve", _no_partial("struve", "the order v"), lambda v, x, out: subtract(
    struve(subtract(v, 1.0), x), multiply(divide(v, x), out)))
modstruve = _special("modstruve", _no_partial("modstruve", "the order v"),
                     lambda v, x, out: subtract(modstruve(subtract(v, 1.0), x),
                                                multiply(divide(v, x), out)))


def _owens_t_partials(h, a, out):
    # T(h, a) = integral_0^a exp(-h^2 (1 + t^2) / 2) / (2 pi (1 + t^2)) dt
    dh = multiply(-0.5 / _SQRT_TWO_PI, multiply(exp(multiply(-0.5, square(h))),
                                                erf(multiply(math.sqrt(0.5), multiply(a, h)))))
    one_a2 = add(1.0, square(a))
    da = divide(exp(multiply(-0.5, multiply(square(h), one_a2))), multiply(2 * math.pi, one_a2))
    return dh, da


owens_t = _special("owens_t", _owens_t_partials)
# chi-squared and Student t distribution functions, differentiable in x (t)
chdtr = _special("chdtr", _no_partial("chdtr", "the degrees of freedom v"),
                 lambda v, x, out: multiply(0.5, _gamma_density(multiply(0.5, v),
                                                                multiply(0.5, x))))
chdtrc = _special("chdtrc", _no_partial("chdtrc", "the degrees of freedom v"),
                  lambda v, x, out: multiply(-0.5, _gamma_density(multiply(0.5, v),
                                                                  multiply(0.5, x))))
stdtr = _special("stdtr", _no_partial("stdtr", "the degrees of freedom df"),
                 lambda df, t, out: exp(subtract(
                     subtract(subtract(gammaln(multiply(0.5, add(df, 1.0))),
                                       gammaln(multiply(0.5, df))),
                              multiply(0.5, log(multiply(math.pi, df)))),
                     multiply(multiply(0.5, add(df, 1.0)), log1p(divide(square(t), df))))))
# incomplete elliptic integrals, differentiable in the amplitude phi
ellipkinc = _special("ellipkinc", lambda phi, m, out: reciprocal(
    sqrt(subtract(1.0, multiply(m, square(sin(phi)))))), _no_partial("ellipkinc", "m"))
ellipeinc = _special("ellipeinc", lambda phi, m, out: sqrt(
    subtract(1.0, multiply(m, square(sin(phi))))), _no_partial("ellipeinc", "m"))

# more distribution functions and transforms, through the densities above
gdtr = _special("gdtr", lambda a, b, x, out: multiply(x, _gamma_density(b, multiply(a, x))),
                _no_partial("gdtr", "the shape b"),
                lambda a, b, x, out: multiply(a, _gamma_density(b, multiply(a, x))))
gdtrc = _special("gdtrc", lambda a, b, x, out: negative(multiply(
    x, _gamma_density(b, multiply(a, x)))), _no_partial("gdtrc", "the shape b"),
    lambda a, b, x, out: negative(multiply(a, _gamma_density(b, multiply(a, x)))))


def _f_density(dfn, dfd, x):  # fdtr(dfn, dfd, x) = betainc(dfn/2, dfd/2, dfn x / (dfd + dfn x))
    denominator = add(dfd, multiply(dfn, x))
    t = divide(multiply(dfn, x), denominator)
    return multiply(_beta_density(multiply(0.5, dfn), multiply(0.5, dfd), t),
                    divide(multiply(dfn, dfd), square(denominator)))


fdtr = _special("fdtr", _no_partial("fdtr", "dfn"), _no_partial("fdtr", "dfd"),
                lambda dfn, dfd, x, out: _f_density(dfn, dfd, x))
fdtrc = _special("fdtrc", _no_partial("fdtrc", "dfn"), _no_partial("fdtrc", "dfd"),
                 lambda dfn, dfd, x, out: negative(_f_density(dfn, dfd, x)))
hyp0f1 = _special("hyp0f1", _no_partial("hyp0f1", "v"),
                  lambda v, z, out: divide(hyp0f1(add(v, 1.0), z), v))
# Box-Cox transforms, differentiable in the data (not in lambda): d/dx (x^l - 1)/l = x^(l-1)
boxcox = _special("boxcox", lambda x, lmbda, out: pow(x, subtract(lmbda, 1.0)),
                  _no_partial("boxcox", "lmbda"))
boxcox1p = _special("boxcox1p", lambda x, lmbda, out: pow(add(1.0, x), subtract(lmbda, 1.0)),
                    _no_partial("boxcox1p", "lmbda"))
inv_boxcox = _special("inv_boxcox", lambda y, lmbda, out: pow(out, subtract(1.0, lmbda)),
                      _no_partial("inv_boxcox", "lmbda"))
inv_boxcox1p = _special("inv_boxcox1p",
                        lambda y, lmbda, out: pow(add(1.0, out), subtract(1.0, lmbda)),
                        _no_partial("inv_boxcox1p", "lmbda"))


# --- ufuncs with several outputs -----------------------------------------------------------------

def _several(name, partials):
    """The op of a scipy.special ufunc with several outputs of one argument; ``partials(x,
    outs)`` gives each output's derivative."""
    def jvp(primals, tangents, out):
        (x,), (dx,) = primals, tangents
        return tuple(fit(multiply(dx, p), aval_of(o)) for p, o in zip(partials(x, out), out))
    return Op(name, abstract=ufunc_abstract(lambda: scipy_special(name)), impl=_impl(name),
              jvp=jvp, multiple_results=True, elementwise=True)


def _over_x_series(f, series):
    """``f(x) / x``, and its Taylor polynomial ``series(x)`` at 0 (exact to fifth order)."""
    def value(x):
        zero = equal(x, 0)
        return where(zero, series(x), divide(f(x), where(zero, 1.0, x)))
    return value


_sin_over_x = _over_x_series(sin, lambda x: add(1.0, multiply(square(x), add(
    -1 / 6, multiply(square(x), 1 / 120)))))
_sinh_over_x = _over_x_series(sinh, lambda x: add(1.0, multiply(square(x), add(
    1 / 6, multiply(square(x), 1 / 120)))))
# Si' = sin x / x, Ci' = cos x / x; Shi' = sinh x / x, Chi' = cosh x / x
sici = _several("sici", lambda x, out: (_sin_over_x(x), divide(cos(x), x)))
shichi = _several("shichi", lambda x, out: (_sinh_over_x(x), divide(cosh(x), x)))
# S' = sin(pi x^2 / 2), C' = cos(pi x^2 / 2)
fresnel = _several("fresnel", lambda x, out: (sin(multiply(math.pi / 2, square(x))),
                                              cos(multiply(math.pi / 2, square(x)))))
# (Ai, Ai', Bi, Bi'): Airy's equation y'' = x y gives every derivative from the outputs
airy = _several("airy", lambda x, out: (out[1], multiply(x, out[0]), out[3],
                                        multiply(x, out[2])))

def _ellipj_jvp(primals, tangents, out):
    (_, m), (du, dm) = primals, tangents  # no derivative in m: checked below
    if dm is not None:
        _no_partial("ellipj", "the parameter m")()
    sn, cn, dn, _ = out
    partials = (multiply(cn, dn), negative(multiply(sn, dn)), negative(multiply(m, multiply(
        sn, cn))), dn)
    return tuple(fit(multiply(du, p), aval_of(o)) for p, o in zip(partials, out))


# Jacobi elliptic functions (sn, cn, dn, ph) of u: sn' = cn dn, cn' = -sn dn, dn' = -m sn cn,
# ph' = dn
ellipj = Op("ellipj", abstract=ufunc_abstract(lambda: scipy_special("ellipj")),
            impl=_impl("ellipj"), jvp=_ellipj_jvp, multiple_results=True, elementwise=True)

# --- NumPy's sinc ----------------------------------------------------------------------------

def _sinc_abstract(x: Aval, **_) -> Aval:
    # pi * x: an integer or bool x gives float64; never weak (NumPy makes an array of x first)
    return Aval(x.shape, np.result_type(x.dtype, 1.0), False, x.device)


def _sinc_impl(xp, x):
    # NumPy 2.1+'s algorithm, so its bits on every provider: the dtype's eps stands in for 0
    # (NumPy 2.0's 1e-20 underflows in float16, where its sinc(0) is NaN)
    y = xp.multiply(math.pi, xp.asarray(x) if xp is np else x)
    dtype = aval_of(y).dtype
    y = xp.where(y == 0, float(np.finfo(dtype).eps) if dtype.kind == "f" else 1e-20, y)
    return xp.sin(y) / y


def _sinc_coefficients(eps) -> list[float]:
    """sin(y)/y = sum_k (-1)**k y**(2k) / (2k+1)!, to the first k whose next term's second
    derivative at |y| = 1, relative to sinc''(0) = -1/3, is below eps/4."""
    k = 0
    while 3 * (2 * k + 2) * (2 * k + 1) / math.factorial(2 * k + 3) >= float(eps) / 4:
        k += 1
    return [(-1) ** i / math.factorial(2 * i + 1) for i in range(k + 1)]


def _sinc_partial(x, out):
    """sinc'(x) = (cos(pi x) - sinc(x)) / x, which cancels for small |pi x| (every digit at
    x = 1e-4 in float32): there the derivative of sinc's Taylor series, exact to the dtype's eps
    for this derivative and the next. Each branch sees only its own arguments, so neither
    computes a NaN or an overflow."""
    y = multiply(math.pi, x)
    small = less(abs(y), 1)
    x_far = where(small, 1.0, x)
    far = divide(subtract(cos(multiply(math.pi, x_far)), sinc(x_far)), x_far)
    y_near = where(small, y, 0.0)
    c = _sinc_coefficients(np.finfo(aval_of(out).dtype).eps)
    # d/dx sum_k c_k y**(2k) = pi y sum_{k >= 1} 2k c_k (y**2)**(k - 1)
    poly, y2 = 0.0, square(y_near)
    for k in range(len(c) - 1, 0, -1):
        poly = add(multiply(poly, y2), 2 * k * c[k])
    return where(small, multiply(multiply(math.pi, y_near), poly), far)


sinc = Op("sinc", abstract=_sinc_abstract, impl=_sinc_impl, jvp=unary_partial(_sinc_partial),
          elementwise=True, strong=True)

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]
__all__ += ["scipy_special"]

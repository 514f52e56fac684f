"""Elementwise operations: one record per op, its rules right above it.

Binary ops broadcast and promote as NumPy 2 does (NEP 50: Python scalars are weak operands).
"""

from __future__ import annotations

import cmath
import math

import numpy as np

from .. import core, ops
from ..core import Op, Tracer
from ..dtypes import Aval, aval_of
from . import _portable
from ._rules import (
    add_tangents,
    bool_unary,
    broadcast_binary,
    compare_binary,
    elementwise_partials,
    fit,
    fitted,
    float_unary,
    is_linear,
    real_unary,
    same_unary,
    ufunc_abstract,
    unary_partial,
    unbroadcast,
)
from ._rules import conj as conj_if_complex  # emits nothing for real values

_LN2, _LN10 = math.log(2.0), math.log(10.0)  # Python floats: weak, so float32 stays float32


def _unary(name, impl, partial=None, abstract=float_unary):
    """An elementwise unary op; ``partial(x, out)`` is its derivative (None: zero derivative)."""
    if partial is None:
        return Op(name, abstract=abstract, impl=impl, nondiff=True, elementwise=True)
    return Op(name, abstract=abstract, impl=impl, elementwise=True,
              jvp=unary_partial(partial))


def _quotient(name, impl, denominator):
    """An elementwise unary op with derivative ``1 / denominator(x, out)``. The JVP divides the
    tangent, so the reverse pass keeps the denominator (often an array alive anyway), and no
    reciprocal is computed."""

    def jvp(primals, tangents, out):
        return fitted(divide, tangents[0], denominator(primals[0], out), out)

    return Op(name, abstract=float_unary, impl=impl, jvp=jvp, elementwise=True)


def _comparison(name, impl, abstract=compare_binary):
    return Op(name, abstract=abstract, impl=impl, nondiff=True, elementwise=True)


# --- arithmetic -----------------------------------------------------------------------------

def _add_jvp(primals, tangents, out):
    dx, dy = tangents
    return fit(add_tangents(dx, dy), out)


def _add_transpose(ct, x, y):
    # unbroadcast(ct, a.shape) for each linear operand a, without the calls where ct fits
    shape = ct.shape if type(ct) is np.ndarray else None
    dx = dy = None
    if isinstance(x, Tracer) and x._linear:
        dx = ct if shape == x.shape else unbroadcast(ct, x.shape)
    if isinstance(y, Tracer) and y._linear:
        dy = ct if shape == y.shape else unbroadcast(ct, y.shape)
    return dx, dy


add = Op("add", abstract=broadcast_binary, impl=lambda xp, x, y: xp.add(x, y),
         jvp=_add_jvp, transpose=_add_transpose, linear=True, elementwise=True)


def _subtract_jvp(primals, tangents, out):
    dx, dy = tangents
    if dy is None:
        return fit(dx, out)
    return fit(negative(dy) if dx is None else subtract(dx, dy), out)


def _subtract_transpose(ct, x, y):
    return (unbroadcast(ct, x.shape) if is_linear(x) else None,
            unbroadcast(negative(ct), y.shape) if is_linear(y) else None)


def _subtract_abstract(x, y, **_):
    if x.dtype.kind == "b" and y.dtype.kind == "b":
        raise TypeError("subtract: NumPy does not subtract booleans; use np.logical_xor (the ^ "
                        "operator) or convert them with .astype(int) first")
    return broadcast_binary(x, y)


subtract = Op("subtract", abstract=_subtract_abstract, impl=lambda xp, x, y: xp.subtract(x, y),
              jvp=_subtract_jvp, transpose=_subtract_transpose, linear=True, elementwise=True,
              signed_transpose=(_add_transpose, (False, True)))


def _positive_transpose(ct, x):
    return (ct,)


negative = Op("negative", abstract=ufunc_abstract(np.negative),
              impl=lambda xp, x: xp.negative(x), linear=True,
              transpose=lambda ct, x: (negative(ct),), elementwise=True,
              signed_transpose=(_positive_transpose, (True,)))

positive = Op("positive", allocates=False, abstract=ufunc_abstract(np.positive),
              impl=lambda xp, x: xp.positive(x), linear=True, transpose=_positive_transpose,
              elementwise=True)


def _multiply_jvp(primals, tangents, out):
    (x, y), (dx, dy) = primals, tangents
    if x is y and dx is dy:  # x * x: one product on the tape instead of two and a sum
        return _square_jvp((x,), (dx,), out)
    if dy is None:
        return fitted(multiply, dx, y, out)
    if dx is None:
        return fitted(multiply, x, dy, out)
    return fit(add(multiply(dx, y), multiply(x, dy)), out)


# A product transposes the one case the linear tape holds: a linear operand times a constant.
# Transposes are real adjoints, so complex constants are conjugated. For a NumPy cotangent and a
# real NumPy or Python constant the product is called directly: what the general line computes.
_REAL_SCALARS = (float, int)


def _multiply_transpose(ct, x, y):
    if isinstance(x, Tracer) and x._linear:  # is_linear(x), inline: the hottest transpose
        if type(ct) is np.ndarray and core.debug_hooks is None and (
                type(y) in _REAL_SCALARS or type(y) is np.ndarray and y.dtype.kind != "c"):
            out = np.multiply(ct, y)
            return (out if out.shape == x.shape else unbroadcast(out, x.shape), None)
        return (unbroadcast(multiply(ct, conj_if_complex(y)), x.shape), None)
    if type(ct) is np.ndarray and core.debug_hooks is None and (
            type(x) in _REAL_SCALARS or type(x) is np.ndarray and x.dtype.kind != "c"):
        out = np.multiply(x, ct)
        return (None, out if out.shape == y.shape else unbroadcast(out, y.shape))
    return (None, unbroadcast(multiply(conj_if_complex(x), ct), y.shape))


multiply = Op("multiply", abstract=broadcast_binary, impl=lambda xp, x, y: xp.multiply(x, y),
              jvp=_multiply_jvp, transpose=_multiply_transpose, elementwise=True)


def _divide_jvp(primals, tangents, out):
    (_, y), (dx, dy) = primals, tangents
    t = None if dx is None else divide(dx, y)
    if dy is not None:
        t = add_tangents(t, negative(multiply(dy, divide(out, y))))
    return fit(t, out)


def _divide_transpose(ct, x, y):  # only the numerator can be linear
    return (unbroadcast(divide(ct, conj_if_complex(y)), x.shape), None)


divide = Op("divide", abstract=ufunc_abstract(np.divide), impl=lambda xp, x, y: xp.divide(x, y),
            jvp=_divide_jvp, transpose=_divide_transpose, elementwise=True)


def _pow_jvp(primals, tangents, out):
    (x, y), (dx, dy) = primals, tangents
    t = None
    if dx is not None:
        # y * x**(y-1); x**0 is constant, so y == 0 gives zero where 0 * 0**-1 would be nan
        # (at x == 0 the exponent becomes 1: 0 * x**1 stays 0 in every order and mode)
        if not isinstance(y, int | float | complex):
            at_zero = logical_and(equal(x, 0), equal(y, 0))
            t = multiply(dx, multiply(y, pow(x, where(at_zero, 1, subtract(y, 1)))))
        elif y != 0:
            t = multiply(dx, multiply(y, pow(x, y - 1)))
    if dy is not None:
        if isinstance(x, int | float | complex):  # a Python base: its log stays a Python scalar
            log_x = (0.0 if x == 0 else cmath.log(x) if isinstance(x, complex)
                     else math.log(x) if x > 0 else math.nan)
        else:
            log_x = log(where(equal(x, 0), 1, x))
        t = add_tangents(t, multiply(dy, multiply(out, log_x)))
    return None if t is None else fit(t, out)


pow = Op("pow", abstract=ufunc_abstract(np.power), impl=lambda xp, x, y: xp.pow(x, y),
         jvp=_pow_jvp, elementwise=True)

def _square_jvp(primals, tangents, out):
    (x,), (dx,) = primals, tangents
    if (x.size if type(x) is np.ndarray else aval_of(x).size) >= _SMALL:
        # (dx * 2) * x keeps only x (alive anyway) for the reverse pass, not a new array 2x
        return fit(multiply(multiply(dx, 2), x), out)
    return fitted(multiply, dx, multiply(2, x), out)  # small: one tape entry instead of two


_SMALL = 4096  # below this many elements, per-op overhead matters more than a residual array


square = Op("square", abstract=ufunc_abstract(np.square), impl=lambda xp, x: xp.square(x),
            jvp=_square_jvp, elementwise=True)
sqrt = _quotient("sqrt", lambda xp, x: xp.sqrt(x), lambda x, out: multiply(2, out))
cbrt = _unary("cbrt", lambda xp, x: xp.cbrt(x),
              lambda x, out: divide(1.0, multiply(3, square(out))), ufunc_abstract(np.cbrt))
reciprocal = _unary("reciprocal", lambda xp, x: xp.reciprocal(x),
                    lambda x, out: negative(square(out)), ufunc_abstract(np.reciprocal))


def _abs_jvp(primals, tangents, out):
    (x,), (dx,) = primals, tangents
    if aval_of(x).dtype.kind == "c":  # d|z| = Re(conj(z) dz) / |z|, zero at z == 0
        safe = where(equal(out, 0), 1, out)
        return divide(real(multiply(conj_if_complex(x), dx)), safe)
    return fitted(multiply, dx, sign(x), out)


abs = Op("abs", abstract=real_unary, impl=lambda xp, x: xp.abs(x), jvp=_abs_jvp,
         elementwise=True)


def _sign_jvp(primals, tangents, out):
    """Zero for real ``x``; for complex ``s = z/|z|``, ``ds = (dz - s Re(conj(s) dz)) / |z|``
    (the tangent's part across the ray), zero at z == 0 as abs'(0) is."""
    (x,), (dx,) = primals, tangents
    if aval_of(x).dtype.kind != "c":
        return None
    inverse = divide(abs(out), where(equal(out, 0), 1, abs(x)))  # 1/|z|, 0 at z == 0
    return multiply(subtract(dx, multiply(out, real(multiply(conj(out), dx)))), inverse)


sign = Op("sign", abstract=ufunc_abstract(np.sign), impl=lambda xp, x: xp.sign(x),
          jvp=_sign_jvp, elementwise=True)

# --- exponentials and logarithms -------------------------------------------------------------

exp = _unary("exp", lambda xp, x: xp.exp(x), lambda x, out: out)
exp2 = _unary("exp2", lambda xp, x: xp.exp2(x), lambda x, out: multiply(out, _LN2))
# exp(x), not out + 1: that cancels where expm1(x) is near -1 (0 instead of exp(-40))
expm1 = _unary("expm1", lambda xp, x: xp.expm1(x), lambda x, out: exp(x))
log = _quotient("log", lambda xp, x: xp.log(x), lambda x, out: x)
log2 = _quotient("log2", lambda xp, x: xp.log2(x), lambda x, out: multiply(x, _LN2))
log10 = _quotient("log10", lambda xp, x: xp.log10(x), lambda x, out: multiply(x, _LN10))
log1p = _quotient("log1p", lambda xp, x: xp.log1p(x), lambda x, out: add(x, 1))


logaddexp = Op("logaddexp", abstract=ufunc_abstract(np.logaddexp),
               impl=lambda xp, x, y: xp.logaddexp(x, y),
               jvp=elementwise_partials(lambda x, y, out: exp(subtract(x, out)),
                                        lambda x, y, out: exp(subtract(y, out))),
               elementwise=True)


logaddexp2 = Op("logaddexp2", abstract=ufunc_abstract(np.logaddexp2),
                impl=lambda xp, x, y: xp.logaddexp2(x, y),
                jvp=elementwise_partials(lambda x, y, out: exp2(subtract(x, out)),
                                         lambda x, y, out: exp2(subtract(y, out))),
                elementwise=True)

# --- trigonometric and hyperbolic ------------------------------------------------------------

sin = _unary("sin", lambda xp, x: xp.sin(x), lambda x, out: cos(x))
cos = _unary("cos", lambda xp, x: xp.cos(x), lambda x, out: negative(sin(x)))
tan = _unary("tan", lambda xp, x: xp.tan(x), lambda x, out: add(1, square(out)))


def _arc_denominator(x, out, across):
    """sqrt(1 - x**2), the derivative's denominator of asin (``across=cos``) and of acos
    (``sin``, negated there). For complex x it is read from the output, cos(asin(x)): on the
    branch cut |x| > 1 that picks the side NumPy's values come from, which sqrt(1 - x**2)
    cannot see (the sign of a zero imaginary part is lost in 1 - x**2)."""
    if aval_of(x).dtype.kind == "c":
        return across(out)
    return sqrt(multiply(subtract(1, x), add(1, x)))  # (1 - x)(1 + x): accurate near |x| = 1


asin = _quotient("asin", lambda xp, x: xp.asin(x),
                 lambda x, out: _arc_denominator(x, out, cos))
acos = _quotient("acos", lambda xp, x: xp.acos(x),
                 lambda x, out: negative(_arc_denominator(x, out, sin)))
atan = _quotient("atan", lambda xp, x: xp.atan(x), lambda x, out: add(1, square(x)))
sinh = _unary("sinh", lambda xp, x: xp.sinh(x), lambda x, out: cosh(x))
cosh = _unary("cosh", lambda xp, x: xp.cosh(x), lambda x, out: sinh(x))
tanh = _unary("tanh", lambda xp, x: xp.tanh(x), lambda x, out: subtract(1, square(out)))


def _hyperbolic_denominator(x, out, across, real):
    """sqrt(x**2 + 1) for asinh (``across=cosh``), sqrt(x - 1) sqrt(x + 1) for acosh (``sinh``).
    For complex x it is read from the output, as for asin: sqrt(x**2 - 1) is the other branch
    wherever Re(x) < 0, cosh(asinh(x)) and sinh(acosh(x)) are NumPy's own branch."""
    return across(out) if aval_of(x).dtype.kind == "c" else real(x)


def _hypot_one(x):
    """sqrt(x**2 + 1) as m sqrt(1 + (n/m)**2) with m, n the larger and the smaller of |x| and 1:
    x**2 overflows from |x| = 256 in float16 (a zero derivative of asinh where it is 1/|x|)."""
    ax = abs(x)
    m = maximum(ax, 1)
    return multiply(m, sqrt(add(square(divide(minimum(ax, 1), m)), 1)))


asinh = _quotient("asinh", lambda xp, x: xp.asinh(x),
                  lambda x, out: _hyperbolic_denominator(x, out, cosh, _hypot_one))
# sqrt(x - 1) sqrt(x + 1): (x - 1)(x + 1) overflows as x**2 does
acosh = _quotient("acosh", lambda xp, x: xp.acosh(x),
                  lambda x, out: _hyperbolic_denominator(
                      x, out, sinh, lambda x: multiply(sqrt(subtract(x, 1)), sqrt(add(x, 1)))))
# (1 - x)(1 + x), not 1 - x**2: accurate near |x| = 1, as for asin
atanh = _quotient("atanh", lambda xp, x: xp.atanh(x),
                  lambda x, out: multiply(subtract(1, x), add(1, x)))
# NumPy's own ufuncs, so an int8 input gives float16 as the abstract rule says
deg2rad = _unary("deg2rad", lambda xp, x: np.deg2rad(x) if xp is np
                 else xp.multiply(x, np.pi / 180), lambda x, out: np.pi / 180,
                 ufunc_abstract(np.deg2rad))
rad2deg = _unary("rad2deg", lambda xp, x: np.rad2deg(x) if xp is np
                 else xp.multiply(x, 180 / np.pi), lambda x, out: 180 / np.pi,
                 ufunc_abstract(np.rad2deg))


def _atan2_partials(y, x, out):
    # x / (x^2 + y^2), scaled by s = max(|x|, |y|) first: x^2 + y^2 underflows or overflows
    # long before the partials do (basic ops only: hypot is not in every Array API revision)
    ax, ay = abs(x), abs(y)
    s = where(greater(ax, ay), ax, ay)
    xs, ys = divide(x, s), divide(y, s)
    r2 = add(multiply(xs, xs), multiply(ys, ys))
    return divide(divide(xs, r2), s), negative(divide(divide(ys, r2), s))


atan2 = Op("atan2", abstract=ufunc_abstract(np.arctan2), impl=lambda xp, y, x: xp.atan2(y, x),
           jvp=elementwise_partials(_atan2_partials), elementwise=True)


def _hypot_partials(x, y, out):
    safe = where(equal(out, 0), 1, out)
    return divide(x, safe), divide(y, safe)


hypot = Op("hypot", abstract=ufunc_abstract(np.hypot), impl=lambda xp, x, y: xp.hypot(x, y),
           jvp=elementwise_partials(_hypot_partials), elementwise=True)

# --- selection -------------------------------------------------------------------------------


def _pick_partials(x, y, out, first):
    """Partials of maximum/minimum: the whole tangent goes to the chosen operand, split
    equally on ties (as the mean of the one-sided derivatives)."""
    chosen = first(x, y)
    tie = equal(x, y)
    half = where(tie, 0.5, 1.0)
    return (multiply(where(logical_or(chosen, tie), 1.0, 0.0), half),
            multiply(where(logical_or(logical_not(chosen), tie), 1.0, 0.0), half))


maximum = Op("maximum", abstract=broadcast_binary, impl=lambda xp, x, y: xp.maximum(x, y),
             jvp=elementwise_partials(lambda x, y, out: _pick_partials(x, y, out, greater)),
             elementwise=True)
minimum = Op("minimum", abstract=broadcast_binary, impl=lambda xp, x, y: xp.minimum(x, y),
             jvp=elementwise_partials(lambda x, y, out: _pick_partials(x, y, out, less)),
             elementwise=True)


def _where_abstract(c, x, y, **_):
    # np.where returns an array, never a Python scalar: its result is strong (NEP 50), even
    # when both branches are Python scalars (np.where(c, 1.0, 0.0) * float32_x is float64)
    out = broadcast_binary(x, y)
    shape = c.shape if c.shape == out.shape else ops._rules.broadcast_shapes(c.shape, out.shape)
    if out.weak:
        out = out.update(weak=False)
    return out if shape == out.shape else out.update(shape=shape)


def _where_jvp(primals, tangents, out):
    (c, _, _), (_, dx, dy) = primals, tangents
    return fit(where(c, 0.0 if dx is None else dx, 0.0 if dy is None else dy), out)


def _where_transpose(ct, c, x, y):
    return (None,
            unbroadcast(where(c, ct, 0.0), x.shape) if is_linear(x) else None,
            unbroadcast(where(c, 0.0, ct), y.shape) if is_linear(y) else None)


where = Op("where", abstract=_where_abstract, impl=_portable.where,
           jvp=_where_jvp, transpose=_where_transpose, elementwise=True)


def _clip_abstract(x, lo, hi, **_):
    return broadcast_binary(broadcast_binary(x, lo), hi)


def _clip_jvp(primals, tangents, out):
    (x, lo, hi), (dx, dlo, dhi) = primals, tangents
    # NumPy's clip is minimum(maximum(x, lo), hi): hi wins wherever lo > hi
    above = greater(maximum(x, lo), hi)
    below = logical_and(less(x, lo), logical_not(above))
    t = None if dx is None else where(logical_or(below, above), 0.0, dx)
    if dlo is not None:
        t = add_tangents(t, where(below, dlo, 0.0))
    if dhi is not None:
        t = add_tangents(t, where(above, dhi, 0.0))
    return fit(t, out)


clip = Op("clip", abstract=_clip_abstract, impl=lambda xp, x, lo, hi: xp.clip(x, lo, hi),
          jvp=_clip_jvp, elementwise=True)


def _copysign_jvp(primals, tangents, out):
    (x, _), (dx, _) = primals, tangents
    if dx is None:
        return None
    return fit(multiply(dx, multiply(sign(x), sign(out))), out)


copysign = Op("copysign", abstract=ufunc_abstract(np.copysign),
              impl=lambda xp, x, y: xp.copysign(x, y), jvp=_copysign_jvp, elementwise=True)


def _remainder_partials(x, y, out):
    return 1.0, negative(floor_divide(x, y))


remainder = Op("remainder", abstract=ufunc_abstract(np.remainder),
               impl=lambda xp, x, y: xp.remainder(x, y),
               jvp=elementwise_partials(_remainder_partials), elementwise=True)
fmod = Op("fmod", abstract=ufunc_abstract(np.fmod), impl=lambda xp, x, y: xp.fmod(x, y),
          jvp=elementwise_partials(lambda x, y, out: (1.0, negative(trunc(divide(x, y))))),
          elementwise=True)
floor_divide = _comparison("floor_divide", lambda xp, x, y: xp.floor_divide(x, y),
                           abstract=ufunc_abstract(np.floor_divide))

# --- rounding (zero derivative) -------------------------------------------------------------

def _integers_kept(name):
    """An integer-valued rounding: integer and bool input comes back as it is (the Array API's
    rule, and NumPy's from 2.1; NumPy 2.0 rounds them to floats, which its frontend casts for)."""
    def impl(xp, x):
        if aval_of(x).dtype.kind in "biu":
            return xp.asarray(x, copy=True)
        return getattr(xp, name)(x)
    return _unary(name, impl, abstract=same_unary)


floor = _integers_kept("floor")
ceil = _integers_kept("ceil")
trunc = _integers_kept("trunc")
def _round_abstract(x, *, decimals=0):
    if x.dtype.kind != "b":
        return x
    if decimals:  # NumPy cannot write x * 10**decimals back into bools
        raise TypeError("round: bool values cannot be rounded to decimals; convert them with "
                        ".astype(np.float64) first")
    return Aval(x.shape, np.dtype(np.float16), False, x.device)  # NumPy's rint of bool


round = Op("round", abstract=_round_abstract, attrs={"decimals": "c_int?"}, nondiff=True,
           elementwise=True,
           impl=lambda xp, x, *, decimals=0: xp.round(x, decimals=decimals)
           if decimals else xp.round(x))

# --- comparisons and logic (nondifferentiable) -----------------------------------------------

equal = _comparison("equal", lambda xp, x, y: xp.equal(x, y))
not_equal = _comparison("not_equal", lambda xp, x, y: xp.not_equal(x, y))
less = _comparison("less", lambda xp, x, y: xp.less(x, y))
less_equal = _comparison("less_equal", lambda xp, x, y: xp.less_equal(x, y))
greater = _comparison("greater", lambda xp, x, y: xp.greater(x, y))
greater_equal = _comparison("greater_equal", lambda xp, x, y: xp.greater_equal(x, y))
logical_and = _comparison("logical_and", lambda xp, x, y: xp.logical_and(x, y))
logical_or = _comparison("logical_or", lambda xp, x, y: xp.logical_or(x, y))
logical_xor = _comparison("logical_xor", lambda xp, x, y: xp.logical_xor(x, y))
logical_not = _unary("logical_not", lambda xp, x: xp.logical_not(x), abstract=bool_unary)
isnan = _unary("isnan", lambda xp, x: xp.isnan(x), abstract=bool_unary)
isinf = _unary("isinf", lambda xp, x: xp.isinf(x), abstract=bool_unary)
isfinite = _unary("isfinite", lambda xp, x: xp.isfinite(x), abstract=bool_unary)
signbit = _unary("signbit", lambda xp, x: xp.signbit(x), abstract=bool_unary)

# --- complex parts ---------------------------------------------------------------------------


def _real_transpose(ct, x):  # the adjoint of Re is the embedding of the reals
    return (ct if x.dtype.kind != "c" else ops.astype(ct, dtype=x.dtype.name),)


real = Op("real", allocates=False, abstract=real_unary, impl=lambda xp, x: xp.real(x), linear=True,
          transpose=_real_transpose, elementwise=True)


def _imag_transpose(ct, x):  # <Im z, c> = Re(conj(z) * 1j c)
    return (multiply(ct, 1j),)


imag = Op("imag", allocates=False, abstract=real_unary, impl=lambda xp, x: xp.imag(x), linear=True,
          transpose=_imag_transpose, elementwise=True)
conj = Op("conj", allocates=False, abstract=ufunc_abstract(np.conjugate),
          impl=lambda xp, x: xp.conj(x), linear=True, transpose=lambda ct, x: (conj(ct),),
          elementwise=True)


def _angle_jvp(primals, tangents, out):
    (x,), (dx,) = primals, tangents
    if aval_of(x).dtype.kind != "c":
        return None
    # d angle = Im(conj(u) dz) / |z| with u = z/|z|: |z|^2 would underflow (complex64 near
    # 1e-20) or overflow (near 1e20); zero at z == 0
    mag = abs(x)
    safe = where(equal(mag, 0), 1, mag)
    return divide(imag(multiply(ops.conj(divide(x, safe)), dx)), safe)


def _angle_abstract(x, **_):
    if x.dtype.kind == "c":
        return real_unary(x)
    # NumPy computes arctan2(0, x) for real x: int8 gives float16, bool float64
    out = _ATAN2_ABSTRACT(Aval((), np.dtype(np.int64), True), x)
    return out if out.weak == x.weak else out.update(weak=x.weak)


_ATAN2_ABSTRACT = ufunc_abstract(np.arctan2)
angle = Op("angle", abstract=_angle_abstract, impl=lambda xp, x: xp.angle(x) if xp is np
           else xp.atan2(xp.imag(x), xp.real(x)), jvp=_angle_jvp, elementwise=True)

# --- NumPy's IEEE-aware selection and step functions ------------------------------------------

def numpy_impl(name, fallback=None):
    """``impl`` of a NumPy-only ufunc; ``fallback(xp, *args)`` serves other providers."""
    ufunc = getattr(np, name)

    def impl(xp, *args):
        if xp is np:
            return ufunc(*args)
        if fallback is None:
            raise TypeError(f"{name} is a NumPy ufunc with no Array API equivalent; the array "
                            f"provider {xp.__name__} does not offer it")
        return fallback(xp, *args)

    return impl


fabs = Op("fabs", abstract=ufunc_abstract(np.fabs),
          impl=numpy_impl("fabs", lambda xp, x: xp.abs(x)), elementwise=True,
          jvp=elementwise_partials(lambda x, out: (sign(x),)))


def _nan_aware_partials(x, y, out, first):
    """Partials of fmax/fmin: a NaN operand loses; ties split the tangent equally."""
    x_wins = logical_or(first(x, y), logical_and(isnan(y), logical_not(isnan(x))))
    y_wins = logical_or(first(y, x), logical_and(isnan(x), logical_not(isnan(y))))
    tie = equal(x, y)
    return (where(x_wins, 1.0, where(tie, 0.5, 0.0)), where(y_wins, 1.0, where(tie, 0.5, 0.0)))


fmax = Op("fmax", abstract=ufunc_abstract(np.fmax), elementwise=True,
          impl=numpy_impl("fmax", lambda xp, x, y: xp.where(
              xp.isnan(y), x, xp.where(xp.isnan(x), y, xp.maximum(x, y)))),
          jvp=elementwise_partials(lambda x, y, out: _nan_aware_partials(x, y, out, greater)))
fmin = Op("fmin", abstract=ufunc_abstract(np.fmin), elementwise=True,
          impl=numpy_impl("fmin", lambda xp, x, y: xp.where(
              xp.isnan(y), x, xp.where(xp.isnan(x), y, xp.minimum(x, y)))),
          jvp=elementwise_partials(lambda x, y, out: _nan_aware_partials(x, y, out, less)))


def _heaviside_jvp(primals, tangents, out):
    # H(x, h) is h where x == 0 and constant elsewhere: only the tangent of h passes, there
    (x, _), (_, dh) = primals, tangents
    if dh is None:
        return None
    return fit(where(equal(x, 0), dh, 0.0), aval_of(out))


heaviside = Op("heaviside", abstract=ufunc_abstract(np.heaviside), elementwise=True,
               impl=numpy_impl("heaviside", lambda xp, x, h: xp.where(
                   x == 0, h, xp.where(x > 0, xp.ones_like(x), xp.zeros_like(x)))),
               jvp=_heaviside_jvp)
rint = _unary("rint", numpy_impl("rint", lambda xp, x: xp.round(x)),
              abstract=ufunc_abstract(np.rint))
isnat = _unary("isnat", numpy_impl("isnat"), abstract=ufunc_abstract(np.isnat))

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]

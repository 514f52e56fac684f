"""Sample inputs for every NumPy ufunc and ufunc method form, from a small domain table.

Each ufunc gets one builder per operand; domains keep derivative checks smooth (logarithms see
positive numbers, arcsin sees (-1, 1), bit operations see integers). ``method_call`` builds a
function and its arguments for ``ufunc.<method>`` from the same domains.
"""

from __future__ import annotations

import numpy as np


def _rng(seed):
    return np.random.default_rng(seed)


def floats(*shape, seed=0):
    return _rng(seed).uniform(-1.5, 1.5, shape)


def positive(*shape, seed=1):
    return _rng(seed).uniform(0.5, 2.0, shape)


def unit(*shape, seed=2):
    return _rng(seed).uniform(-0.8, 0.8, shape)


def above_one(*shape, seed=3):
    return _rng(seed).uniform(1.2, 3.0, shape)


def ints(*shape, seed=4):
    return _rng(seed).integers(1, 30, shape)


def shifts(*shape, seed=5):
    return _rng(seed).integers(0, 4, shape)


def exponents(*shape, seed=6):
    return _rng(seed).integers(-3, 4, shape)


def signs(*shape, seed=9):  # integers with zeros: heaviside's second operand then matters
    return _rng(seed).integers(-1, 2, shape)


def probabilities(*shape, seed=10):
    return _rng(seed).uniform(0.1, 0.9, shape)


def above_e(*shape, seed=11):  # where a function applied twice (ufunc.at) stays in its domain
    return _rng(seed).uniform(3.0, 5.0, shape)


def orders(*shape, seed=12):  # small integer orders and shape parameters (jv, gammainc)
    return _rng(seed).integers(1, 4, shape)


def nonpositive(*shape, seed=15):  # integer parameters that must not be differentiated
    return _rng(seed).integers(-3, 1, shape)


def negatives(*shape, seed=13):
    return _rng(seed).uniform(-3.0, -0.2, shape)


def degrees(*shape, seed=14):
    return _rng(seed).uniform(20.0, 70.0, shape)


def dates(*shape, seed=8):
    days = _rng(seed).integers(0, 1000, shape).astype("M8[D]")
    days.reshape(-1)[::2] = np.datetime64("NaT")
    return days


_UNARY = {
    "arccos": unit, "arcsin": unit, "arctanh": unit, "arccosh": above_one,
    "log": positive, "log2": positive, "log10": positive, "log1p": positive, "sqrt": positive,
    "cbrt": positive, "reciprocal": positive, "invert": ints, "bitwise_count": ints,
    "isnat": dates,
    # scipy.special
    "erfinv": unit, "gammaln": positive, "gamma": positive, "psi": positive, "ndtri": probabilities,
    "logit": probabilities, "entr": positive, "erfcinv": probabilities, "ndtri_exp": negatives,
    "loggamma": positive, "cotdg": degrees, "spence": positive, "y0": positive, "y1": positive,
    "k0": positive, "k1": positive, "k0e": positive, "k1e": positive, "ellipk": unit,
    "ellipe": unit, "expi": positive, "exp1": positive, "sici": positive, "shichi": positive,
}
_BINARY = {
    "divide": (floats, positive), "floor_divide": (floats, positive),
    "remainder": (positive, positive), "fmod": (positive, positive),
    "divmod": (floats, positive), "power": (positive, floats), "float_power": (positive, floats),
    "arctan2": (floats, positive), "copysign": (positive, floats),
    "heaviside": (signs, floats), "ldexp": (floats, exponents),
    "left_shift": (ints, shifts), "right_shift": (ints, shifts),
    "bitwise_and": (ints, ints), "bitwise_or": (ints, ints), "bitwise_xor": (ints, ints),
    "gcd": (ints, ints), "lcm": (ints, ints),
    # scipy.special
    "xlogy": (floats, positive), "xlog1py": (floats, positive), "rel_entr": (positive, positive),
    "betaln": (positive, positive), "kl_div": (positive, positive), "huber": (positive, floats),
    "pseudo_huber": (positive, floats), "beta": (positive, positive), "poch": (positive, positive),
    "jv": (orders, positive), "yv": (orders, positive), "iv": (orders, floats),
    "kv": (orders, positive), "gammainc": (orders, positive), "gammaincc": (orders, positive),
    "gammaincinv": (orders, probabilities), "gammainccinv": (orders, probabilities),
    "betainc": (orders, orders, probabilities), "betaincinv": (orders, orders, probabilities),
    "expn": (orders, positive), "struve": (orders, positive), "modstruve": (orders, positive),
    "chdtr": (orders, positive), "chdtrc": (orders, positive), "stdtr": (orders, floats),
    "ellipkinc": (floats, nonpositive), "ellipeinc": (floats, nonpositive),
    "hyp2f1": (orders, orders, orders, unit), "hyp1f1": (orders, orders, floats),
    "gdtr": (positive, orders, positive), "gdtrc": (positive, orders, positive),
    "fdtr": (orders, orders, positive), "fdtrc": (orders, orders, positive),
    "hyp0f1": (orders, floats), "boxcox": (positive, nonpositive),
    "boxcox1p": (positive, nonpositive), "inv_boxcox": (unit, orders),
    "inv_boxcox1p": (unit, orders), "ellipj": (floats, nonpositive),
}
# ufunc.at applies a unary ufunc twice at a repeated index: log(log(x)) needs x > e
_AT = {"log": above_e, "log2": above_e, "log10": above_e, "arccosh": above_e,
       "heaviside": floats}
_SHAPES = {"matmul": ((3, 4), (4, 2)), "vecdot": ((3, 4), (3, 4)), "matvec": ((3, 4), (4,)),
           "vecmat": ((3,), (3, 4)), "betainc": ((4,), (4,), (3, 4)),
           "betaincinv": ((4,), (4,), (3, 4)), "hyp2f1": ((4,), (4,), (4,), (3, 4)),
           "hyp1f1": ((4,), (4,), (3, 4)), "gdtr": ((3, 4), (4,), (4,)),
           "gdtrc": ((3, 4), (4,), (4,)), "fdtr": ((4,), (4,), (3, 4)),
           "fdtrc": ((4,), (4,), (3, 4))}
# reductions fold the result back in as the first operand, so every element comes from the
# domain that keeps the fold smooth
_FOLD = {"power": positive, "float_power": positive, "divide": positive,
         "floor_divide": positive, "remainder": positive, "fmod": positive, "arctan2": positive,
         "ldexp": exponents, "left_shift": shifts, "right_shift": shifts}


def domains(ufunc):
    name = ufunc.__name__
    if ufunc.nin == 1:
        return (_UNARY.get(name, floats),)
    return _BINARY.get(name, (floats, floats))


def ufunc_args(ufunc):
    shapes = _SHAPES.get(ufunc.__name__, ((3, 4),) if ufunc.nin == 1 else ((3, 4), (4,)))
    return [make(*shape, seed=i + 10) for i, (make, shape) in
            enumerate(zip(domains(ufunc), shapes))]


def _fold_domain(ufunc):
    return _FOLD.get(ufunc.__name__, domains(ufunc)[-1])


AT_INDEX = np.array([0, 2, 2, 4])
REDUCEAT_INDEX = [0, 2, 1, 3]


def method_call(ufunc, method):
    """``(f, args)`` such that ``f(*args)`` calls ``ufunc.<method>`` on sample data."""
    if method == "reduce":
        return (lambda x: ufunc.reduce(x, axis=0)), [_fold_domain(ufunc)(4, 3, seed=20)]
    if method == "accumulate":
        return (lambda x: ufunc.accumulate(x, axis=1)), [_fold_domain(ufunc)(3, 4, seed=21)]
    if method == "reduceat":
        return (lambda x: ufunc.reduceat(x, REDUCEAT_INDEX)), [_fold_domain(ufunc)(5, seed=22)]
    if method == "outer":
        first, second = domains(ufunc)
        return (lambda a, b: ufunc.outer(a, b)), [first(3, seed=23), second(2, seed=24)]
    first, *rest = domains(ufunc)
    first = _AT.get(ufunc.__name__, first)

    def at(a, *b):
        y = a.copy()
        ufunc.at(y, AT_INDEX, *b)
        return y
    return at, [first(5, seed=25), *(make(4, seed=26) for make in rest)]

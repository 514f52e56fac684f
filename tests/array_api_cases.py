"""Sample inputs for every Array API function: one or more cases per qualified name.

Builders make NumPy arrays; tests convert them to the provider under test. ``diff`` names the
argument positions derivatives are checked for (default: every floating argument); ``post``
maps a result to gauge-free values before derivatives are compared (eigenvector signs, ...).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


def _rng(seed):
    return np.random.default_rng(seed)


class Build:
    """A NumPy array builder; ``Build(fn)`` calls ``fn()``."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self):
        return self.fn()


def F(*shape, seed=0):
    return Build(lambda: _rng(seed).uniform(-1.5, 1.5, shape))


def P(*shape, seed=1):
    return Build(lambda: _rng(seed).uniform(0.5, 2.0, shape))


def U(*shape, seed=2):
    return Build(lambda: _rng(seed).uniform(-0.8, 0.8, shape))


def A(*shape, seed=3):
    return Build(lambda: _rng(seed).uniform(1.2, 3.0, shape))


def C(*shape, seed=4):
    return Build(lambda: _rng(seed).uniform(-1, 1, shape) + 1j * _rng(seed + 1).uniform(-1, 1,
                                                                                       shape))


def D(*shape, seed=5):
    """Distinct values far apart: no ties for max, sort and friends."""
    n = int(np.prod(shape))
    return Build(lambda: _rng(seed).permutation(n).reshape(shape) * 0.37 + 0.1)


def I(*shape, high=3, seed=6):  # noqa: E743
    return Build(lambda: _rng(seed).integers(0, high, shape))


def B(*shape, seed=7):
    return Build(lambda: _rng(seed).uniform(size=shape) > 0.5)


def SPD(n, seed=8):
    def build():
        a = _rng(seed).uniform(-1, 1, (n, n))
        return a @ a.T + n * np.eye(n)
    return Build(build)


def WELL(n, seed=9):
    """A well-conditioned square matrix with real, distinct eigenvalues."""
    def build():
        return np.diag(np.arange(1.0, n + 1)) + 0.2 * _rng(seed).uniform(-1, 1, (n, n))
    return Build(build)


def SORTED(n, seed=10):
    return Build(lambda: np.sort(_rng(seed).uniform(-2, 2, n)))


def REPEATS(*shape):
    return Build(lambda: np.array([1.5, 2.0, 1.5, 3.0, 2.0, 0.5]).reshape(shape or (6,)))


@dataclass
class Case:
    args: tuple
    kwargs: dict = field(default_factory=dict)
    diff: tuple | None = None
    post: Any = None
    label: str = ""


def case(*args, diff=None, post=None, label="", **kwargs):
    return Case(args, kwargs, diff, post, label)


def _abs2(xp, r):
    return xp.real(r * xp.conj(r)) if xp.isdtype(r.dtype, "complex floating") else r * r


UNARY = {
    "abs": D(3, 4), "acos": U(3, 4), "acosh": A(3, 4), "asin": U(3, 4), "asinh": F(3, 4),
    "atan": F(3, 4), "atanh": U(3, 4), "ceil": F(3, 4), "cos": F(3, 4), "cosh": F(3, 4),
    "exp": F(3, 4), "expm1": F(3, 4), "floor": F(3, 4), "isfinite": F(3, 4),
    "isinf": F(3, 4), "isnan": F(3, 4), "log": P(3, 4), "log1p": P(3, 4), "log2": P(3, 4),
    "log10": P(3, 4), "logical_not": B(3, 4), "negative": F(3, 4), "positive": F(3, 4),
    "round": F(3, 4), "sign": F(3, 4), "signbit": F(3, 4), "sin": F(3, 4), "sinh": F(3, 4),
    "square": F(3, 4), "sqrt": P(3, 4), "tan": U(3, 4), "tanh": F(3, 4), "trunc": F(3, 4),
    "reciprocal": P(3, 4), "conj": C(3, 4), "real": C(3, 4), "imag": C(3, 4),
    "bitwise_invert": I(3, 4, high=50),
}

BINARY = {
    "add": (F(3, 4), F(4, seed=11)), "atan2": (F(3, 4), P(3, 4)),
    "bitwise_and": (I(3, 4, high=50), I(3, 4, high=50, seed=12)),
    "bitwise_or": (I(3, 4, high=50), I(3, 4, high=50, seed=12)),
    "bitwise_xor": (I(3, 4, high=50), I(3, 4, high=50, seed=12)),
    "bitwise_left_shift": (I(3, 4, high=50), I(3, 4, high=4, seed=12)),
    "bitwise_right_shift": (I(3, 4, high=50), I(3, 4, high=4, seed=12)),
    "copysign": (D(3, 4), F(3, 4)), "divide": (F(3, 4), P(3, 4)),
    "equal": (I(3, 4), I(3, 4, seed=12)), "floor_divide": (F(3, 4), P(3, 4)),
    "greater": (F(3, 4), F(3, 4, seed=12)), "greater_equal": (F(3, 4), F(3, 4, seed=12)),
    "hypot": (F(3, 4), F(3, 4, seed=12)), "less": (F(3, 4), F(3, 4, seed=12)),
    "less_equal": (F(3, 4), F(3, 4, seed=12)), "logaddexp": (F(3, 4), F(3, 4, seed=12)),
    "logical_and": (B(3, 4), B(3, 4, seed=12)), "logical_or": (B(3, 4), B(3, 4, seed=12)),
    "logical_xor": (B(3, 4), B(3, 4, seed=12)),
    "maximum": (D(3, 4), D(3, 4, seed=12)), "minimum": (D(3, 4), D(3, 4, seed=12)),
    "multiply": (F(3, 4), F(3, 4, seed=12)), "nextafter": (F(3, 4), F(3, 4, seed=12)),
    "not_equal": (I(3, 4), I(3, 4, seed=12)), "pow": (P(3, 4), F(3, 4)),
    "remainder": (P(3, 4), A(3, 4)), "subtract": (F(3, 4), F(3, 1, seed=12)),
}

CASES: dict[str, list[Case]] = {name: [case(b)] for name, b in UNARY.items()}
CASES.update({name: [case(*bs)] for name, bs in BINARY.items()})
CASES["add"].append(case(F(3, 4), 2.5, label="scalar"))
for _name in ("exp", "sin", "cosh", "tanh", "square", "negative", "abs", "sqrt", "log",
              "reciprocal", "expm1", "log1p"):
    CASES[_name].append(case(C(3, 4), label="complex"))
for _name in ("multiply", "divide", "subtract", "pow"):
    CASES[_name].append(case(C(3, 4), C(3, 4, seed=12), label="complex"))
CASES["multiply"].append(case(3, F(3, 4), label="scalar"))

CASES.update({
    "clip": [case(F(3, 4), min=-0.5, max=0.5), case(F(3, 4), max=0.5, label="max")],
    # creation
    "asarray": [case(F(3, 4)), case(F(3, 4), dtype="float32", label="dtype")],
    "empty_like": [case(F(3, 4))],
    "zeros_like": [case(F(3, 4))], "ones_like": [case(F(3, 4), dtype="float32")],
    "full_like": [case(F(3, 4), 2.5)],
    "tril": [case(F(4, 4), k=1)], "triu": [case(F(2, 4, 4), k=-1)],
    "meshgrid": [case(F(3), F(2, seed=11)), case(F(3), F(2, seed=11), indexing="ij",
                                                  label="ij")],
    "from_dlpack": [case(F(3, 4))],
    # data types
    "astype": [case(F(3, 4), "float32"), case(F(3, 4), "complex128", label="complex")],
    # linear algebra
    "matmul": [case(F(3, 4), F(4, 2, seed=11)), case(F(2, 3, 4), F(4, seed=11), label="mv")],
    "matrix_transpose": [case(F(2, 3, 4))],
    "tensordot": [case(F(3, 4), F(4, 5, seed=11), axes=1),
                  case(F(2, 3, 4), F(3, 4, 2, seed=11), label="axes2")],
    "vecdot": [case(F(3, 4), F(3, 4, seed=11)), case(C(3, 4), C(4, seed=11), label="complex")],
    # manipulation
    "broadcast_arrays": [case(F(3, 1), F(4, seed=11))],
    "broadcast_to": [case(F(3, 1), (2, 3, 4))],
    "concat": [case([F(2, 3), F(1, 3, seed=11)]), case([F(2, 3), F(2, 2, seed=11)], axis=1,
                                                      label="axis1"),
               case([F(2, 3), F(2, seed=11)], axis=None, label="flat")],
    "expand_dims": [case(F(3, 4), axis=1)],
    "flip": [case(F(3, 4), axis=0), case(F(3, 4), label="all")],
    "permute_dims": [case(F(2, 3, 4), (2, 0, 1))],
    "reshape": [case(F(3, 4), (2, 6)), case(F(3, 4), (-1,), label="infer")],
    "roll": [case(F(3, 4), 1, axis=1), case(F(3, 4), -2, label="flat")],
    "squeeze": [case(F(3, 1), axis=1)],
    "stack": [case([F(3), F(3, seed=11)], axis=1)],
    "moveaxis": [case(F(2, 3, 4), 0, -1)],
    "repeat": [case(F(3), 2), case(F(2, 3), 2, axis=1, label="axis")],
    "tile": [case(F(2, 3), (2, 1)), case(F(3), (2, 2), label="grow")],
    "unstack": [case(F(3, 4), axis=1)],
    # searching
    "argmax": [case(D(3, 4), axis=1), case(D(3, 4), label="flat")],
    "argmin": [case(D(3, 4), axis=0, keepdims=True)],
    "nonzero": [case(I(3, 4))],
    "where": [case(B(3, 4), F(3, 4), F(3, 4, seed=11))],
    "searchsorted": [case(SORTED(6), F(3, 2)), case(SORTED(6), F(4), side="right",
                                                    label="right")],
    "count_nonzero": [case(I(3, 4), axis=1), case(B(3, 4), label="bool")],
    # sets
    # repeated values have no derivative by finite differences: a nudge splits them
    "unique_values": [case(REPEATS(), diff=()), case(D(6), label="distinct")],
    "unique_counts": [case(REPEATS(), diff=()),
                      case(D(6), post=lambda xp, r: r.values, label="distinct")],
    "unique_inverse": [case(REPEATS(), diff=()), case(REPEATS(2, 3), diff=(), label="2d"),
                       case(D(6), post=lambda xp, r: r.values, label="distinct")],
    "unique_all": [case(REPEATS(), diff=()), case(REPEATS(3, 2), diff=(), label="2d"),
                   case(D(6), post=lambda xp, r: r.values, label="distinct")],
    "isin": [case(I(3, 4, high=6), I(3, high=6, seed=11))],
    # sorting
    "argsort": [case(D(3, 4)), case(D(3, 4), axis=0, descending=True, label="descending")],
    "sort": [case(D(3, 4)), case(D(3, 4), axis=0, descending=True, label="descending")],
    # statistics
    "max": [case(D(3, 4), axis=1)], "min": [case(D(3, 4))],
    "mean": [case(F(3, 4), axis=0), case(C(3, 4), label="complex")],
    "prod": [case(F(3, 4), axis=1, keepdims=True)],
    "std": [case(F(3, 4), correction=1)],
    "var": [case(F(3, 4), axis=1)],
    "sum": [case(F(3, 4)), case(F(3, 4), axis=(0, 1), keepdims=True, label="keepdims"),
            case(C(3, 4), axis=0, label="complex")],
    "cumulative_sum": [case(F(3, 4), axis=1),
                       case(F(5), include_initial=True, label="initial")],
    "cumulative_prod": [case(F(3, 4), axis=1)],
    # utilities
    "all": [case(B(3, 4), axis=0)], "any": [case(B(3, 4))],
    "diff": [case(F(3, 5), n=2), case(F(3, 5), axis=0, label="axis0")],
    # indexing
    "take": [case(F(5), I(3, high=5)), case(F(3, 4), I(2, high=4), axis=1, label="axis")],
    "take_along_axis": [case(F(3, 4), I(3, 2, high=4), axis=1)],
    # linalg
    "linalg.cholesky": [case(SPD(3)), case(SPD(3), upper=True, label="upper")],
    "linalg.cross": [case(F(4, 3), F(4, 3, seed=11))],
    "linalg.det": [case(WELL(3))],
    "linalg.diagonal": [case(F(3, 4), offset=1), case(F(2, 4, 3), offset=-1, label="neg")],
    "linalg.eigh": [case(SPD(3), post=lambda xp, r: (r.eigenvalues, _abs2(xp, r.eigenvectors)))],
    "linalg.eigvalsh": [case(SPD(3))],
    "linalg.inv": [case(WELL(3))],
    "linalg.matmul": [case(F(3, 4), F(4, 2, seed=11))],
    "linalg.matrix_norm": [case(F(3, 4)), case(F(3, 4), ord="nuc", label="nuc"),
                           case(F(3, 4), ord=2, label="2"), case(F(3, 4), ord=1, label="1"),
                           case(F(3, 4), ord=float("inf"), keepdims=True, label="inf")],
    "linalg.matrix_power": [case(WELL(3), 3), case(WELL(3), -2, label="neg"),
                            case(WELL(3), 0, label="zero")],
    "linalg.matrix_rank": [case(F(3, 4))],
    "linalg.matrix_transpose": [case(F(2, 3, 4))],
    "linalg.outer": [case(F(3), F(4, seed=11))],
    "linalg.pinv": [case(F(3, 4))],
    "linalg.qr": [case(F(4, 3))],
    "linalg.slogdet": [case(WELL(3))],
    "linalg.solve": [case(WELL(3), F(3, 2, seed=11)),
                     case(WELL(3), C(3, 2, seed=11), label="complex")],
    "linalg.svd": [case(F(3, 4), full_matrices=False,
                        post=lambda xp, r: (r.U * r.U, r.S, r.Vh * r.Vh))],
    "linalg.svdvals": [case(F(3, 4))],
    "linalg.tensordot": [case(F(3, 4), F(4, 5, seed=11), axes=1)],
    "linalg.trace": [case(F(3, 3)), case(F(2, 3, 4), offset=1, label="offset")],
    "linalg.vecdot": [case(F(3, 4), F(3, 4, seed=11), axis=-2)],
    "linalg.vector_norm": [case(F(3, 4)), case(F(3, 4), axis=1, ord=1, label="1"),
                           case(F(3, 4), ord=float("inf"), label="inf"),
                           case(F(3, 4), axis=0, ord=3, keepdims=True, label="3")],
    "linalg.eig": [case(WELL(3), post=lambda xp, r: (r.eigenvalues, _abs2(xp, r.eigenvectors)))],
    "linalg.eigvals": [case(WELL(3))],
    # fft
    "fft.fft": [case(C(8))], "fft.ifft": [case(C(8))],
    "fft.fftn": [case(C(4, 6))], "fft.ifftn": [case(C(4, 6))],
    "fft.rfft": [case(F(8))], "fft.irfft": [case(C(5))],
    "fft.rfftn": [case(F(4, 6))], "fft.irfftn": [case(C(4, 4))],
    "fft.hfft": [case(C(5))], "fft.ihfft": [case(F(8))],
    "fft.fftshift": [case(F(3, 4))], "fft.ifftshift": [case(F(3, 4), axes=0)],
})

# Functions that take no arrays: called inside a transform, they run on the provider.
CONSTANT_CALLS = {
    "arange": ((1, 7, 2), {}), "empty": (((2, 3),), {}), "eye": ((3,), {"k": 1}),
    "full": (((2, 2), 1.5), {}), "ones": (((2,),), {}), "zeros": ((3,), {}),
    "linspace": ((0.0, 1.0, 5), {}), "fft.fftfreq": ((8,), {}), "fft.rfftfreq": ((8,), {}),
}

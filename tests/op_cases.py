"""One row per canonical op: the op, how to build its arguments, its static attrs.

``tests/test_ops.py`` runs every row through every law: finite differences and the adjoint
identity to second order in both modes, and the abstract rule against the implementation.
Domains keep each check smooth so tolerances stay tight.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from advect import ops


def _rng(seed):
    return np.random.default_rng(seed)


def floats(*shape, seed=0, dtype=np.float64):
    return lambda: _rng(seed).uniform(-1.5, 1.5, shape).astype(dtype)


def positive(*shape, seed=1):
    return lambda: _rng(seed).uniform(0.5, 2.0, shape)


def unit(*shape, seed=2):
    return lambda: _rng(seed).uniform(-0.8, 0.8, shape)


def above_one(*shape, seed=3):
    return lambda: _rng(seed).uniform(1.2, 3.0, shape)


def complexes(*shape, seed=4):
    return lambda: (_rng(seed).uniform(-1, 1, shape) + 1j * _rng(seed + 1).uniform(-1, 1, shape))


def distinct(*shape, seed=5):
    """Values far apart, so max/min/sort have no ties near the test point."""
    n = int(np.prod(shape))
    return lambda: (_rng(seed).permutation(n).reshape(shape) * 0.37 + 0.1)


def ints(*shape, high=3, seed=6):
    return lambda: _rng(seed).integers(0, high, shape)


def const(value):
    return lambda: value


def spd(*shape, seed=7, complex_=False):
    """Well-conditioned Hermitian positive definite matrices (cholesky, eigh, solves)."""
    def make():
        a = _rng(seed).uniform(-1, 1, shape)
        if complex_:
            a = a + 1j * _rng(seed + 1).uniform(-1, 1, shape)
        return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])
    return make


def spread_eigenvalues(n, seed=8):
    """A nonsymmetric matrix with real eigenvalues 1..n, far apart (eig)."""
    def make():
        q = np.eye(n) + 0.3 * _rng(seed).uniform(-1, 1, (n, n))
        return q @ np.diag(np.arange(1.0, n + 1)) @ np.linalg.inv(q)
    return make


@dataclass
class OpCase:
    op: Any
    args: tuple            # one builder per operand
    attrs: dict = field(default_factory=dict)
    diff: tuple | None = None  # operand positions to differentiate (default: inexact operands)
    order: int = 2
    name: str = ""

    def __post_init__(self):
        self.args = tuple(self.args) if isinstance(self.args, tuple | list) else (self.args,)
        if not self.name:
            self.name = self.op.name

    def build(self):
        return [make() for make in self.args]


C = OpCase


def _special_cases():
    """scipy.special rows, present when SciPy is installed."""
    if importlib.util.find_spec("scipy") is None:
        return []
    probabilities = lambda: _rng(7).uniform(0.1, 0.9, 5)  # noqa: E731
    unit_interval = lambda: _rng(7).uniform(0.1, 0.9, 3)  # noqa: E731
    return [
        C(ops.erf, (floats(5),)),
        C(ops.erfc, (floats(5),)),
        C(ops.erfcx, (floats(5),)),
        C(ops.erfinv, (unit(5),)),
        C(ops.expit, (floats(5),)),
        C(ops.expit, (floats(5, dtype=np.float32),), name="expit_float32"),
        C(ops.log_expit, (floats(5),)),
        C(ops.gammaln, (positive(5),)),
        C(ops.gamma, (positive(5),)),
        C(ops.digamma, (positive(5),)),
        C(ops.polygamma, (const(np.array([1, 2, 1])), positive(3))),
        C(ops.ndtr, (floats(5),)),
        C(ops.log_ndtr, (floats(5),)),
        C(ops.ndtri, (probabilities,)),
        C(ops.xlogy, (floats(4), positive(4))),
        C(ops.xlogy, (const(np.array([0.0, 1.2, 0.0])), const(np.array([0.5, 0.7, 2.0]))),
          name="xlogy_zero"),
        C(ops.xlog1py, (floats(4), positive(4))),
        C(ops.logit, (lambda: _rng(8).uniform(0.1, 0.9, 5),)),
        C(ops.entr, (positive(5),)),
        C(ops.rel_entr, (positive(4), positive(4, seed=2))),
        C(ops.betaln, (positive(4), positive(4, seed=2))),
        C(ops.i0, (floats(5),)),
        C(ops.i1, (floats(5),)),
        C(ops.i1, (const(np.array([0.0, 0.7, -1.2])),), name="i1_at_zero"),
        C(ops.i0e, (floats(5),)),
        C(ops.i1e, (floats(5),)),
        C(ops.erfcinv, (lambda: _rng(9).uniform(0.2, 1.8, 5),)),
        C(ops.erfi, (floats(5),)),
        C(ops.erfi, (complexes(3),), name="erfi_complex"),
        C(ops.erf, (complexes(3),), name="erf_complex"),
        C(ops.dawsn, (floats(5),)),
        C(ops.wofz, (complexes(3),)),
        C(ops.ndtri_exp, (lambda: -_rng(9).uniform(0.2, 3.0, 5),)),
        C(ops.loggamma, (positive(5),)),
        C(ops.loggamma, (lambda: 1.5 + complexes(3)(),), order=1, name="loggamma_complex"),
        C(ops.beta, (positive(4), positive(4, seed=2))),
        C(ops.poch, (positive(4), positive(4, seed=2))),
        C(ops.exp10, (floats(5),)),
        C(ops.cosdg, (lambda: 40 * floats(5)(),)),
        C(ops.sindg, (lambda: 40 * floats(5)(),)),
        C(ops.tandg, (lambda: 40 * floats(5)(),)),
        C(ops.cotdg, (lambda: 30 + 40 * positive(5)(),)),
        C(ops.cosm1, (floats(5),)),
        C(ops.spence, (const(np.array([0.3, 1.0, 1.7, 2.5])),)),
        C(ops.kl_div, (positive(4), positive(4, seed=2))),
        C(ops.huber, (const(np.array([0.5, 1.0, 0.7, 0.2])), const(np.array([0.3, -1.6, -0.1,
                                                                             0.9]))),
          order=1),
        C(ops.pseudo_huber, (positive(4), floats(4))),
        C(ops.ellipk, (const(np.array([0.1, 0.3, -0.7, 0.6])),)),
        C(ops.ellipe, (const(np.array([0.1, 0.3, -0.7, 0.6])),)),
        C(ops.ellipk, (const(np.array([0.0, 0.5])),), order=1, name="ellipk_at_zero"),
        C(ops.ellipe, (const(np.array([0.0, 0.5])),), order=1, name="ellipe_at_zero"),
        C(ops.j0, (floats(5),)),
        C(ops.j1, (const(np.array([0.0, 0.7, -1.2])),)),
        C(ops.y0, (positive(5),)),
        C(ops.y1, (positive(5),)),
        C(ops.k0, (positive(5),)),
        C(ops.k1, (positive(5),)),
        C(ops.k0e, (positive(5),)),
        C(ops.k1e, (positive(5),)),
        C(ops.jv, (const(np.array([0.5, 1.0, 2.5])), positive(3)), diff=(1,)),
        C(ops.jv, (const(np.array([0.5, 1.0, 2.5])), complexes(3)), diff=(1,),
          name="jv_complex"),
        C(ops.yv, (const(np.array([0.5, 1.0, 2.5])), positive(3)), diff=(1,)),
        C(ops.iv, (const(np.array([0.5, 1.0, 2.5])), floats(3)), diff=(1,)),
        C(ops.kv, (const(np.array([0.5, 1.0, 2.5])), positive(3)), diff=(1,)),
        C(ops.gammainc, (const(np.array([0.7, 2.0, 3.5])), positive(3)), diff=(1,)),
        C(ops.gammaincc, (const(np.array([0.7, 2.0, 3.5])), positive(3)), diff=(1,)),
        C(ops.gammaincinv, (const(np.array([0.7, 2.0, 3.5])), unit_interval), diff=(1,)),
        C(ops.gammainccinv, (const(np.array([0.7, 2.0, 3.5])), unit_interval), diff=(1,)),
        C(ops.betainc, (const(np.array([0.7, 2.0, 3.5])), const(np.array([1.5, 0.8, 2.0])),
                        unit_interval), diff=(2,)),
        C(ops.betaincinv, (const(np.array([0.7, 2.0, 3.5])), const(np.array([1.5, 0.8, 2.0])),
                           unit_interval), diff=(2,)),
        C(ops.expi, (positive(5),)),
        C(ops.expi, (lambda: 1.0 + complexes(3)(),), name="expi_complex"),
        C(ops.exp1, (positive(5),)),
        C(ops.expn, (const(np.array([0, 1, 3])), positive(3)), diff=(1,)),
        C(ops.hyp2f1, (const(np.array([0.5, 1.0, 1.5])), const(np.array([1.0, 2.0, 0.5])),
                       const(np.array([2.5, 3.0, 1.5])), unit_interval), diff=(3,)),
        C(ops.hyp1f1, (const(np.array([0.5, 1.0, 1.5])), const(np.array([1.0, 2.0, 0.5])),
                       floats(3)), diff=(2,)),
        C(ops.struve, (const(np.array([0.0, 1.0, 2.5])), positive(3)), diff=(1,)),
        C(ops.modstruve, (const(np.array([0.0, 1.0, 2.5])), positive(3)), diff=(1,)),
        C(ops.owens_t, (floats(4), floats(4, seed=1))),
        C(ops.chdtr, (const(np.array([1.0, 2.0, 5.0])), positive(3)), diff=(1,)),
        C(ops.chdtrc, (const(np.array([1.0, 2.0, 5.0])), positive(3)), diff=(1,)),
        C(ops.stdtr, (const(np.array([1.0, 2.5, 7.0])), floats(3)), diff=(1,)),
        C(ops.ellipkinc, (floats(3), const(np.array([0.2, -0.5, 0.7]))), diff=(0,)),
        C(ops.ellipeinc, (floats(3), const(np.array([0.2, -0.5, 0.7]))), diff=(0,)),
        C(ops.sici, (positive(4),)),
        C(ops.shichi, (positive(4),)),
        C(ops.fresnel, (floats(4),)),
        C(ops.airy, (floats(4),)),
        C(ops.airy, (complexes(3),), name="airy_complex"),
        C(ops.gdtr, (positive(3), const(np.array([1.0, 2.5, 4.0])), positive(3, seed=3)),
          diff=(0, 2)),
        C(ops.gdtrc, (positive(3), const(np.array([1.0, 2.5, 4.0])), positive(3, seed=3)),
          diff=(0, 2)),
        C(ops.fdtr, (const(np.array([1.0, 3.0, 6.0])), const(np.array([2.0, 5.0, 9.0])),
                     positive(3)), diff=(2,)),
        C(ops.fdtrc, (const(np.array([1.0, 3.0, 6.0])), const(np.array([2.0, 5.0, 9.0])),
                      positive(3)), diff=(2,)),
        C(ops.hyp0f1, (const(np.array([0.5, 1.5, 3.0])), floats(3)), diff=(1,)),
        C(ops.boxcox, (positive(3), const(np.array([0.0, 0.5, -1.2]))), diff=(0,)),
        C(ops.boxcox1p, (positive(3), const(np.array([0.0, 0.5, -1.2]))), diff=(0,)),
        C(ops.inv_boxcox, (unit(3), const(np.array([0.0, 0.5, 0.3]))), diff=(0,)),
        C(ops.inv_boxcox1p, (unit(3), const(np.array([0.0, 0.5, 0.3]))), diff=(0,)),
        C(ops.ellipj, (floats(3), const(np.array([0.2, 0.5, 0.8]))), diff=(0,)),
        # scipy.linalg-backed matrix ops
        C(ops.expm, (lambda: 0.5 * floats(3, 3)(),)),
        C(ops.expm, (lambda: 0.5 * complexes(3, 3)(),), name="expm_complex"),
        C(ops.expm_frechet, (lambda: 0.5 * floats(3, 3)(), floats(2, 3, 3, seed=1))),
        C(ops.lu_factor, (floats(3, 3),)),
        C(ops.lu_factor, (floats(2, 3, 3, seed=2),), name="lu_factor_batch"),
        C(ops.lu_permutation, (const(np.array([2, 1, 2], dtype=np.int32)),)),
    ]


SPECIAL_CASES = _special_cases()
CASES = [
    # elementwise arithmetic
    C(ops.add, (floats(3, 4), floats(4, seed=1))),
    C(ops.subtract, (floats(3, 1), floats(4, seed=1))),
    C(ops.multiply, (floats(2, 3), floats(2, 3, seed=1))),
    C(ops.multiply, (complexes(3), floats(3)), name="multiply_complex"),
    C(ops.divide, (floats(3), positive(3))),
    C(ops.negative, (floats(5),)),
    C(ops.positive, (floats(5),)),
    C(ops.pow, (positive(4), floats(4))),
    C(ops.pow, (floats(4), const(3)), name="pow_int_exponent"),
    C(ops.square, (floats(5),)),
    C(ops.square, (floats(64, 64),), name="square_large"),  # the memory-lean JVP form
    C(ops.sqrt, (positive(5),)),
    C(ops.cbrt, (positive(5),)),
    C(ops.reciprocal, (positive(5),)),
    C(ops.abs, (distinct(5),)),
    C(ops.abs, (complexes(4),), name="abs_complex"),
    C(ops.sign, (distinct(5),)),
    # exponentials and logarithms
    C(ops.exp, (floats(5),)),
    C(ops.exp, (complexes(3),), name="exp_complex"),
    C(ops.exp2, (floats(5),)),
    C(ops.expm1, (floats(5),)),
    C(ops.sinc, (floats(5),)),
    C(ops.sinc, (complexes(3),), name="sinc_complex"),
    C(ops.log, (positive(5),)),
    C(ops.log2, (positive(5),)),
    C(ops.log10, (positive(5),)),
    C(ops.log1p, (positive(5),)),
    C(ops.logaddexp, (floats(4), floats(4, seed=1))),
    C(ops.logaddexp2, (floats(4), floats(4, seed=1))),
    # trigonometric and hyperbolic
    C(ops.sin, (floats(3, 4),)),
    C(ops.sin, (complexes(3),), name="sin_complex"),
    C(ops.cos, (floats(5),)),
    C(ops.tan, (unit(5),)),
    C(ops.asin, (unit(5),)),
    C(ops.acos, (unit(5),)),
    C(ops.atan, (floats(5),)),
    C(ops.atan2, (floats(5), positive(5))),
    C(ops.sinh, (floats(5),)),
    C(ops.cosh, (floats(5),)),
    C(ops.tanh, (floats(5),)),
    C(ops.asinh, (floats(5),)),
    C(ops.acosh, (above_one(5),)),
    C(ops.atanh, (unit(5),)),
    C(ops.hypot, (positive(4), floats(4))),
    C(ops.deg2rad, (floats(4),)),
    C(ops.rad2deg, (floats(4),)),
    # selection
    C(ops.maximum, (distinct(6), floats(6))),
    C(ops.minimum, (distinct(6), floats(6))),
    C(ops.where, (const(np.array([True, False, True])), floats(3), floats(3, seed=1))),
    C(ops.clip, (distinct(6), const(0.5), const(1.5))),
    C(ops.copysign, (positive(4), floats(4))),
    C(ops.remainder, (positive(4), const(0.3))),
    C(ops.fmod, (positive(4), const(0.3))),
    # complex parts and casts
    C(ops.real, (complexes(4),)),
    C(ops.imag, (complexes(4),)),
    C(ops.conj, (complexes(4),)),
    C(ops.angle, (complexes(4),)),
    C(ops.astype, (floats(4),), {"dtype": "float32"}, order=1),
    C(ops.astype, (floats(4),), {"dtype": "complex128"}, name="astype_complex"),
    C(ops.python_scalar, (floats(),), {"dtype": "float64"}),
    # reductions
    C(ops.reduce_sum, (floats(2, 3),), {"axes": (1,), "keepdims": False}),
    C(ops.reduce_sum, (floats(2, 3, 2),), {"axes": (0, 2), "keepdims": True},
      name="reduce_sum_keepdims"),
    C(ops.reduce_sum_where, (floats(2, 3), const(np.array([True, False, True]))),
      {"axes": (1,), "keepdims": False}),
    C(ops.reduce_prod, (floats(2, 3),), {"axes": (1,), "keepdims": False}),
    C(ops.reduce_max, (distinct(3, 4),), {"axes": (1,), "keepdims": False}),
    C(ops.reduce_max, (distinct(3, 4, 2),), {"axes": (0, 2), "keepdims": True},
      name="reduce_max_multi"),
    C(ops.reduce_min, (distinct(3, 4),), {"axes": (0,), "keepdims": False}),
    C(ops.cumulative_sum, (floats(3, 4),), {"axis": 1}),
    # shape
    C(ops.reshape, (floats(2, 6),), {"shape": (3, 4)}),
    C(ops.permute_dims, (floats(2, 3, 4),), {"axes": (2, 0, 1)}),
    C(ops.broadcast_to, (floats(3, 1),), {"shape": (2, 3, 4)}),
    C(ops.expand_dims, (floats(3),), {"axes": (0, 2)}),
    C(ops.squeeze, (floats(3, 1),), {"axes": (1,)}),
    C(ops.concat, (floats(2, 3), floats(4, 3, seed=1)), {"axis": 0}),
    C(ops.stack, (floats(2, 3), floats(2, 3, seed=1)), {"axis": 1}),
    C(ops.slice_axis, (floats(3, 6),), {"start": 1, "stop": 5, "step": 2, "axis": 1}),
    C(ops.flip, (floats(3, 4),), {"axes": (1,)}),
    C(ops.roll, (floats(3, 4),), {"shift": (1, -2), "axes": (0, 1)}),
    # indexing
    C(ops.gather, (floats(4, 5),), {"index": (1, (0, 5, 2))}, name="gather_basic"),
    C(ops.gather, (floats(4, 5), const(np.array([0, 2, 2]))), {"index": ("array",)},
      name="gather_advanced"),
    C(ops.scatter_add, (floats(5), floats(3, seed=1), const(np.array([0, 2, 2]))),
      {"index": ("array",)}),
    C(ops.scatter, (floats(5), floats(2, seed=1)), {"index": ((1, 5, 2),)}),
    # linear algebra
    C(ops.matmul, (floats(3, 4), floats(4, 2, seed=1))),
    C(ops.matmul, (floats(4), floats(2, 4, 3, seed=1)), name="matmul_vector_batch"),
    C(ops.matmul, (floats(2, 3, 4), floats(4, seed=1)), name="matmul_batch_vector"),
    C(ops.vecdot, (floats(2, 3, 4), floats(3, 4, seed=1))),
    C(ops.vecdot, (complexes(4), complexes(2, 4, seed=1)), name="vecdot_complex"),
    C(ops.reduce_sum_initial, (floats(3, 4), floats(seed=1)), {"axes": (0,), "keepdims": False}),
    C(ops.reduce_sum_initial, (floats(3, 4), const(0.5)), {"axes": (0, 1), "keepdims": True},
      name="reduce_sum_initial_literal"),
    C(ops.reduce_sum_where_initial, (floats(2, 3), const(np.array([True, False, True])),
                                     floats(seed=1)), {"axes": (1,), "keepdims": False}),
    C(ops.reduce_prod_initial, (floats(3, 4), floats(seed=1)), {"axes": (1,), "keepdims": False}),
    C(ops.reduce_prod_initial, (floats(3, 4), const(-1.5)), {"axes": (0, 1), "keepdims": True},
      name="reduce_prod_initial_literal"),
    C(ops.reduce_logaddexp, floats(3, 4), {"base": "e", "axes": (0,), "keepdims": False}),
    C(ops.reduce_logaddexp, floats(3, 4), {"base": "2", "axes": (0, 1), "keepdims": True},
      name="reduce_logaddexp2"),
    C(ops.correlate, (floats(7), floats(3, seed=1)), {"start": 0, "stop": 9}),
    C(ops.correlate, (floats(5), floats(5, seed=1)), {"start": 2, "stop": 7},
      name="correlate_tail"),
    C(ops.correlate, (floats(3), floats(6, seed=1)), {"start": 1, "stop": 4},
      name="correlate_long_kernel"),
    C(ops.correlate, (complexes(6), complexes(4, seed=1)), {"start": 3, "stop": 6},
      name="correlate_complex"),
    C(ops.dot_general, (floats(2, 3, 4), floats(4, 2, 5, seed=1)),
      {"contract": ((2,), (0,)), "batch": ((0,), (1,))}),
    C(ops.dot_general, (floats(3, 4), floats(4, 5, seed=1)),
      {"contract": ((1,), (0,)), "batch": ((), ())}, name="dot_general_plain"),
    # --- elementwise and special-function ops added later (ufunc work) ---
    C(ops.fabs, (distinct(5),)),
    C(ops.fmax, (distinct(6), floats(6))),
    C(ops.fmin, (distinct(6), floats(6))),
    C(ops.fmax, (const(np.array([np.nan, 0.3, 2.0, -1.0])), floats(4)), diff=(0, 1),
      name="fmax_nan"),
    C(ops.fmin, (floats(4), const(np.array([0.2, np.nan, -2.0, np.nan]))), diff=(0, 1),
      name="fmin_nan"),
    C(ops.heaviside, (const(np.array([-1.0, 0.0, 2.0, 0.0])), floats(4)), diff=(1,)),
    C(ops.rint, (floats(5),)),
    C(ops.isnat, (const(np.array(["2020-01-01", "NaT"], dtype="M8[D]")),)),
    C(ops.ldexp, (floats(4), const(np.array([1, -2, 0, 3])))),
    C(ops.frexp, (floats(2, 3),)),
    C(ops.modf, (floats(5),)),
    C(ops.nextafter, (floats(4), floats(4, seed=1))),
    C(ops.spacing, (floats(4),)),
    C(ops.bitwise_and, (ints(5, high=9), ints(5, high=9, seed=1))),
    C(ops.bitwise_or, (ints(5, high=9), ints(5, high=9, seed=1))),
    C(ops.bitwise_xor, (ints(5, high=9), ints(5, high=9, seed=1))),
    C(ops.bitwise_invert, (ints(5, high=9),)),
    C(ops.bitwise_left_shift, (ints(5, high=9), ints(5, high=4, seed=1))),
    C(ops.bitwise_right_shift, (ints(5, high=90), ints(5, high=4, seed=1))),
    C(ops.bitwise_count, (ints(5, high=90),)),
    C(ops.gcd, (ints(5, high=30), ints(5, high=30, seed=1))),
    C(ops.lcm, (ints(5, high=30), ints(5, high=30, seed=1))),
    C(ops.cumulative_prod, (floats(3, 4),), {"axis": 1}),
    C(ops.cumulative_prod, (const(np.array([[1.5, 0.0, 2.0, 0.5, 3.0],
                                            [0.5, 2.0, 0.0, 0.0, 1.2]])),), {"axis": 1},
      diff=(0,), name="cumulative_prod_zeros"),
    C(ops.cumulative_max, (distinct(3, 5),), {"axis": 1}),
    C(ops.cumulative_min, (distinct(4, 3),), {"axis": 0}),
    *SPECIAL_CASES,
    # --- reductions, shape, indexing and creation ops added later (NumPy functions work) ---
    C(ops.argsort, (distinct(3, 4),), {"axis": 1, "stable": True}),
    C(ops.argsort, (ints(7),), {"axis": 0, "stable": True}, name="argsort_ties"),
    C(ops.argpartition, (distinct(3, 5),), {"kth": (1, 3), "axis": 1}),
    C(ops.searchsorted, (const(np.array([0.1, 0.5, 0.9])), floats(2, 3)), {"side": "right"}),
    # --- linalg, einsum and fft ops ---
    C(ops.einsum, (floats(3, 4), floats(4, 2, seed=1)), {"subscripts": "ij,jk->ik"}),
    C(ops.einsum, (floats(3, 3),), {"subscripts": "ii->i"}, name="einsum_diagonal"),
    C(ops.einsum, (floats(3, 3),), {"subscripts": "ii->"}, name="einsum_trace"),
    C(ops.einsum, (floats(3, 3, 2), floats(2, seed=1)), {"subscripts": "iij,j->ij"},
      name="einsum_repeated_letter"),
    C(ops.einsum, (floats(3, 2), floats(4, seed=1)), {"subscripts": "ij,k->k"},
      name="einsum_letter_in_one_operand"),
    C(ops.einsum, (floats(2, 1, 3), floats(4, 3, seed=1)), {"subscripts": "...i,...i->..."},
      name="einsum_ellipsis_broadcast"),
    C(ops.einsum, (complexes(2, 3), floats(3, 2), floats(2, 2, seed=1)),
      {"subscripts": "ij,jk,kl->il"}, name="einsum_chain_complex"),
    C(ops.inv, (spd(3, 3),)),
    C(ops.inv, (spd(2, 3, 3, complex_=True),), name="inv_batch_complex"),
    C(ops.solve, (spd(3, 3), floats(3, 2))),
    C(ops.solve, (spd(2, 3, 3), floats(3, 1)), name="solve_batch_broadcast"),
    C(ops.triangular_solve, (spd(3, 3), floats(3, 2)), {"lower": True}),
    C(ops.triangular_solve, (spd(3, 3, complex_=True), complexes(3, 2)), {"lower": False},
      name="triangular_solve_upper_complex"),
    C(ops.det, (floats(2, 3, 3),)),
    C(ops.slogdet, (floats(3, 3),)),
    C(ops.slogdet, (complexes(3, 3),), name="slogdet_complex"),
    C(ops.pinv, (floats(4, 3),), {"rcond": None, "hermitian": False}),
    C(ops.cholesky, (spd(3, 3),)),
    C(ops.cholesky, (spd(2, 3, 3, complex_=True),), name="cholesky_batch_complex"),
    C(ops.eigh, (spd(4, 4),), {"lower": True}),
    C(ops.eigh, (spd(4, 4),), {"lower": False}, name="eigh_upper"),
    C(ops.eigvalsh, (spd(2, 3, 3, complex_=True),), {"lower": True}),
    C(ops.eig, (spread_eigenvalues(3),)),
    C(ops.svd, (floats(4, 3),), {"full_matrices": False}),
    C(ops.svd, (floats(2, 3, 4),), {"full_matrices": False}, name="svd_wide_batch"),
    C(ops.svdvals, (complexes(4, 3),)),
    C(ops.qr, (floats(4, 3),), {"complete": False}),
    C(ops.qr, (floats(3, 4),), {"complete": False}, name="qr_wide"),
    C(ops.qr, (complexes(3, 3),), {"complete": False}, name="qr_complex"),
    C(ops.fft, (complexes(3, 4),), {"axes": (1,), "inverse": False, "norm": "backward"}),
    C(ops.fft, (floats(3, 4),), {"axes": (0, 1), "inverse": True, "norm": "ortho"},
      name="fft_inverse_real_input"),
    C(ops.rfft, (floats(3, 6),), {"axes": (1,), "norm": "backward"}),
    C(ops.rfft, (floats(3, 5),), {"axes": (0, 1), "norm": "forward"}, name="rfft_odd_2d"),
    C(ops.irfft, (complexes(3, 4),), {"axes": (1,), "s": (6,), "norm": "backward"}),
    C(ops.irfft, (complexes(3, 4),), {"axes": (0, 1), "s": (3, 7), "norm": "ortho"},
      name="irfft_odd_2d"),
    # --- checkpoint, implicit and custom primitive ops ---
]

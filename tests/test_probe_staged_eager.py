"""Staged values equal eager NumPy's bit for bit where the optimizer or a frontend shortcut
could change them: a negation moved across a promotion (an integer negation wraps before the
cast), a complex product or quotient by one (not the identity at infinities and signed zeros),
a sum over no axes (it still adds: -0.0 becomes +0.0) and NumPy's fast scalar powers
(``x ** 0.5`` is ``sqrt``, ``x ** -1`` is ``reciprocal``). Each row is compared as staged, as
restored from its saved form, and on a large input (blocked elementwise execution)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import advect as ad

OLD_NUMPY = np.lib.NumpyVersion(np.__version__) < "2.1.0"

F = np.array([1.5, 2.5, -0.5, 4.0])
U8 = np.array([1, 200, 0, 255], dtype=np.uint8)
I8 = np.array([-128, 3, 127, -1], dtype=np.int8)
F16 = np.array([-0.0, -np.inf, 1.5, 0.0, np.inf, -2.0, 3e-5], dtype=np.float16)
SPECIAL = [complex(-0.0, 0.0), complex(0.0, -0.0), complex(np.inf, 0.0), complex(0.0, np.inf),
           complex(np.nan, 1.0), 1 + 2j, complex(-np.inf, -0.0), 0j]
C64 = np.array(SPECIAL, dtype=np.complex64)
C128 = np.array(SPECIAL, dtype=np.complex128)
SIGNED_ZEROS = np.array([-0.0, 0.0, np.nan, -np.inf, 1.5])


def _quiet(f, *args, **kwargs):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args, **kwargs)


def _assert_bits(got, expected, what):
    """Same type, shape and dtype, and the same values: NaN where NumPy has NaN, and the
    sign of every zero (of both parts of a complex number)."""
    assert type(got) is type(expected), f"{what}: {type(got).__name__}, NumPy gives " \
        f"{type(expected).__name__}"
    got, expected = np.asarray(got), np.asarray(expected)
    assert (got.shape, got.dtype) == (expected.shape, expected.dtype), what
    parts = (lambda a: (a.real, a.imag)) if got.dtype.kind == "c" else (lambda a: (a,))
    for g, e in zip(parts(got), parts(expected)):
        np.testing.assert_array_equal(g, e, err_msg=what)
        if g.dtype.kind == "f":
            signs = np.signbit(g) & ~np.isnan(g), np.signbit(e) & ~np.isnan(e)
            np.testing.assert_array_equal(*signs, err_msg=f"{what}: signs of zero differ")


def _check(f, *args):
    """``f`` staged, restored and staged on large copies of ``args`` gives eager NumPy's bits."""
    expected = _quiet(f, *args)
    program = _quiet(ad.stage, f, *args)
    _assert_bits(_quiet(program, *args), expected, "staged")
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    _assert_bits(_quiet(restored, *args), expected, "restored")
    large = [np.resize(a, 100_003) for a in args]
    _assert_bits(_quiet(ad.stage(f, *large), *large), _quiet(f, *large), "large")


# --- a negation moves across an op only where it happens in that op's dtype ------------------

NEGATIONS = {
    "float + -uint8": (lambda a, k: a + (-k), (F, U8)),
    "float - -uint8": (lambda a, k: a - (-k), (F, U8)),
    "-uint8 + float": (lambda a, k: (-k) + a, (F, U8)),
    "-uint8 * float": (lambda a, k: (-k) * a, (F, U8)),
    "float * -uint8": (lambda a, k: a * (-k), (F, U8)),
    "2.5 * -uint8": (lambda a, k: 2.5 * (-k), (F, U8)),
    "2 * -uint8": (lambda a, k: 2 * (-k), (F, U8)),  # -2 does not fit uint8
    "float + -int8 min": (lambda a, k: a + (-k), (F, I8)),  # -(-128) wraps in int8
    "2.0 * -int8": (lambda a, k: 2.0 * (-k), (F, I8)),
    "-128 * -int8": (lambda a, k: -128 * (-k), (F, I8)),  # 128 does not fit int8
    "int8 - -int8": (lambda a, k: k - (-k), (F, I8)),  # same dtype: exact, wraps alike
    "float16 + -float64": (lambda a, k: a.astype(np.float16) + (-a), (F, I8)),
}


@pytest.mark.parametrize("name", NEGATIONS)
def test_negation_across_a_promotion(name):
    f, args = NEGATIONS[name]
    _check(f, *args)


def test_a_negation_in_the_result_dtype_is_still_absorbed():
    assert "negative" not in str(ad.stage(lambda a, b: a + (-b), F, F))
    assert "negative" not in str(ad.stage(lambda a: 3.0 * (-a), F))
    assert "negative" not in str(ad.stage(lambda k: 2 * (-k), I8))


# --- complex products and quotients by one are kept --------------------------------------------

UNITS = {
    "x * 1": lambda x: x * 1,
    "1 * x": lambda x: 1 * x,
    "x * 1.0": lambda x: x * 1.0,
    "x * (1+0j)": lambda x: x * (1 + 0j),
    "x / 1": lambda x: x / 1,
    "x / 1.0": lambda x: x / 1.0,
    "x * ones(1)": lambda x: x * np.ones(1, x.dtype),
    "x * float64(1)": lambda x: x * np.float64(1),
    "broadcast * 1": lambda x: np.broadcast_to(np.broadcast_to(x, (2, x.size)), (3, 2, x.size))
    * 1,
}


@pytest.mark.parametrize("x", [C64, C128], ids=["complex64", "complex128"])
@pytest.mark.parametrize("name", UNITS)
def test_complex_unit_factor(name, x):
    _check(UNITS[name], x)


def test_real_unit_factors_are_still_dropped():
    assert "multiply" not in str(ad.stage(lambda x: x * 1, F))
    assert "divide" not in str(ad.stage(lambda x: x / 1.0, F))
    _check(lambda x: (x * 1, x / 1.0), SIGNED_ZEROS)


# --- a float sum over no axes adds a zero -------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex128,
                                   np.int8, bool])
def test_sum_over_no_axes(dtype):
    x = SIGNED_ZEROS[1:] if np.dtype(dtype).kind in "iub" else SIGNED_ZEROS
    x = _quiet(x.astype, dtype)
    _check(lambda x: np.sum(x, axis=()), x)
    _check(lambda x: x.sum(axis=()) * 2, x)


# --- NumPy's fast scalar powers -----------------------------------------------------------------

POWERS = {
    "x ** 0.5 float16": (lambda x: x ** 0.5, F16),
    "x ** 0.5 float32": (lambda x: x ** 0.5, F16.astype(np.float32)),
    "x ** 0.5 complex64": (lambda x: x ** 0.5, C64),
    "x ** 0.5 complex128": (lambda x: x ** 0.5, C128),
    "x ** -1 complex64": (lambda x: x ** -1, C64),
    "x ** -1 complex128": (lambda x: x ** -1, C128),
    "x ** -1 float16": (lambda x: x ** -1, F16),
    "x ** -1.0 complex128": (lambda x: x ** -1.0, C128),  # a float exponent: power
    "x ** float64(0.5) complex128": (lambda x: x ** np.float64(0.5), C128),
    "np.power(x, 0.5) float16": (lambda x: np.power(x, 0.5), F16),
    "in place x **= 0.5": (lambda x: (lambda y: y.__ipow__(0.5))(x.copy()), C128),
}


@pytest.mark.skipif(OLD_NUMPY, reason="NumPy < 2.1 takes other fast paths for scalar powers")
@pytest.mark.parametrize("name", POWERS)
def test_fast_scalar_power(name):
    f, x = POWERS[name]
    _check(f, x)
    value, _ = _quiet(ad.jvp(f), x, tangents=np.ones_like(x))  # the dynamic lifetime too
    _assert_bits(value, _quiet(f, x), "dynamic")


@pytest.mark.skipif(OLD_NUMPY, reason="NumPy < 2.1 takes other fast paths for scalar powers")
def test_fast_scalar_power_derivatives():
    x = np.array([0.5, 2.0, 3.0], dtype=np.float32)
    for f in (lambda x: np.sum(x ** 0.5), lambda x: np.sum(x ** -1)):
        dynamic = ad.grad(f)(x)
        staged = ad.grad(ad.stage(f, x))(x)
        assert staged.dtype == dynamic.dtype == np.float32
        np.testing.assert_allclose(staged, dynamic, rtol=1e-6)

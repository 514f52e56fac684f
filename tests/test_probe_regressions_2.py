"""Regressions for silent wrong answers and crashes found by a second round of probing.

Each row is ordinary NumPy code that Advect once answered differently from eager NumPy (a value,
a dtype, a derivative, a crash, an accepted call NumPy refuses); values are checked in the
dynamic lifetime (``jvp``) and the staged one (``stage``).
"""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad

RNG = np.random.default_rng(20261202)
X = RNG.standard_normal((3, 4))
X32 = X.astype(np.float32)


def _jvp_value(f, x):
    return ad.jvp(f)(x, tangents=np.ones_like(x))[0]


def _staged_value(f, x):
    return ad.stage(f, x)(x)


LIFETIMES = [pytest.param(_jvp_value, id="jvp"), pytest.param(_staged_value, id="stage")]


def _with_nan_column(x):  # column 2 of the 3x4 input is all NaN
    return np.where(np.arange(4) == 2, np.nan, x)


SAME_AS_NUMPY = [
    # max and min with initial= over an empty axis crashed ("zero-size array ... no identity")
    pytest.param(lambda x: np.max(x[:, :0], axis=1, initial=-1.0), X, id="max-empty-initial"),
    pytest.param(lambda x: x[:0].min(axis=0, initial=2.0), X32, id="min-empty-initial-f32"),
    pytest.param(lambda x: np.fmax.reduce(x[:, :0], axis=1, initial=-1.0), X,
                 id="fmax-reduce-empty-initial"),
    pytest.param(lambda x: np.nanmax(x[:0], axis=0, initial=0.5), X, id="nanmax-empty-initial"),
    # an all-NaN slice gave NaN although initial= was given (NumPy: initial)
    pytest.param(lambda x: np.nanmax(_with_nan_column(x), axis=0, initial=0.5), X,
                 id="nanmax-all-nan-initial"),
    pytest.param(lambda x: np.nanmin(_with_nan_column(x), axis=0, initial=-0.5), X,
                 id="nanmin-all-nan-initial"),
    # the prefix scan combined the first entry with the identity: hypot(0, -3) = 3, not -3
    pytest.param(lambda x: np.hypot.accumulate(x, axis=1), X, id="hypot-accumulate-first"),
    pytest.param(lambda x: np.gcd.accumulate(np.round(x * 5).astype(np.int64), axis=0), X,
                 id="gcd-accumulate-first"),
    # the fold started from the first entry where NumPy starts from the identity
    pytest.param(lambda x: np.hypot.reduce(x[:, :1], axis=1), X, id="hypot-reduce-one"),
    # guards for that fix: reduceat segments still start from their first entry, and a fold
    # over nothing returns initial= in the loop's dtype
    pytest.param(lambda x: np.hypot.reduceat(x, [0, 3], axis=1), X, id="hypot-reduceat"),
    pytest.param(lambda x: np.subtract.reduce(x[:0], axis=0, initial=2), X32,
                 id="subtract-reduce-empty-initial-dtype"),
    # guard for the casting check below: an allowed casting still casts
    pytest.param(lambda x: np.einsum("ij->j", x, dtype=np.float32, casting="same_kind"), X,
                 id="einsum-dtype-same-kind"),
]


@pytest.mark.parametrize("lifetime", LIFETIMES)
@pytest.mark.parametrize(("f", "x"), SAME_AS_NUMPY)
def test_same_value_and_dtype_as_numpy(f, x, lifetime):
    with np.errstate(all="ignore"):
        want = np.asarray(f(x))
        got = np.asarray(lifetime(f, x))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


REFUSED = [
    # subtract, divide, power, arctan2 are not reorderable: NumPy reduces them over one axis
    pytest.param(lambda x: np.subtract.reduce(x, axis=None), ValueError, id="subtract-axis-none"),
    pytest.param(lambda x: np.divide.reduce(x, axis=(0, 1)), ValueError, id="divide-two-axes"),
    pytest.param(lambda x: np.arctan2.reduce(x, axis=(1, 0)), ValueError, id="arctan2-two-axes"),
    # einsum's default casting='safe' refuses float64 -> float32
    pytest.param(lambda x: np.einsum("ij->j", x, dtype=np.float32), TypeError,
                 id="einsum-dtype-unsafe"),
    pytest.param(lambda x: np.einsum("i,i", x[0], np.arange(4), casting="no"), TypeError,
                 id="einsum-casting-no"),
]


@pytest.mark.parametrize("lifetime", LIFETIMES)
@pytest.mark.parametrize(("f", "error"), REFUSED)
def test_refused_like_numpy(f, error, lifetime):
    with pytest.raises(error):
        f(X)
    with pytest.raises(error):
        lifetime(f, X)


# --- derivatives against central differences ----------------------------------------------

def _central(f, z, h=1e-6):
    return (f(z + h) - f(z - h)) / (2 * h)


def test_arccosh_complex_derivative_left_half_plane():
    # the JVP used 1/sqrt(z**2 - 1), the other branch wherever Re(z) < 0
    z = np.array([-0.13 + 0.95j, -0.54 - 0.62j, 0.13 + 1.3j, -2.0 + 0.5j])
    _, tangent = ad.jvp(np.arccosh)(z, tangents=np.ones_like(z))
    np.testing.assert_allclose(tangent, _central(np.arccosh, z), rtol=1e-6)
    grad = ad.grad(lambda z: np.sum(np.abs(np.arccosh(z)) ** 2))(z)
    re = _central(lambda t: np.abs(np.arccosh(t)) ** 2, z)
    im = (np.abs(np.arccosh(z + 1e-6j)) ** 2 - np.abs(np.arccosh(z - 1e-6j)) ** 2) / 2e-6
    np.testing.assert_allclose(grad, re + 1j * im, rtol=1e-5)


def test_sinc_float16_zero_and_second_derivative_at_zero():
    # the stand-in 1e-20 for 0 underflowed in float16 (sinc(0) was NaN), and the Hessian at 0
    # was 0 instead of -pi**2/3
    x16 = np.array([0.0, 0.25], np.float16)
    expected = np.sinc(x16)
    expected[0] = 1.0  # NumPy 2.0's own float16 sinc(0) is NaN; later releases give 1
    for got in (_jvp_value(np.sinc, x16), _staged_value(np.sinc, x16)):
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, expected)
    x = np.array([0.0, 0.5])
    hessian = ad.hessian(lambda x: np.sum(np.sinc(x)))(x)
    np.testing.assert_allclose(hessian[0, 0], -np.pi ** 2 / 3, rtol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3), (3, 5)])
def test_pinv_jvp_with_a_cutoff_that_drops_singular_values(shape):
    # the constant-rank formula ignored how the kept singular vectors turn toward dropped ones:
    # with a cutoff dropping the smallest singular value the JVP was off by ~0.2
    rng = np.random.default_rng(7)
    a, t = rng.standard_normal(shape), rng.standard_normal(shape)
    s = np.linalg.svd(a, compute_uv=False)
    rcond = float((s[-1] + s[-2]) / 2 / s[0])  # between the two smallest
    f = lambda a: np.linalg.pinv(a, rcond=rcond)
    _, tangent = ad.jvp(f)(a, tangents=t)
    np.testing.assert_allclose(tangent, (f(a + 1e-6 * t) - f(a - 1e-6 * t)) / 2e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reductions_of_vectors_are_numpy_scalars(name):
    a = np.array([1.0, 3.0, -2.0])
    f = getattr(np, name)
    expected = f(a)  # np.int64, not a 0-d array
    for actual in (ad.stage(f, a)(a), ad.vjp(f)(a)[0]):
        assert type(actual) is type(expected) and actual == expected


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_nanarg_of_an_all_nan_slice_is_refused_where_values_are_known(name, axis):
    f = getattr(np, name)
    a = np.full((2, 2), np.nan)
    a[0, 1] = 1.0  # column 0 and row 1 are all NaN
    try:
        expected = f(a, axis=axis)
    except ValueError:
        with pytest.raises(ValueError, match="All-NaN slice"):
            ad.vjp(lambda x: f(x, axis=axis))(a)
    else:
        np.testing.assert_array_equal(ad.vjp(lambda x: f(x, axis=axis))(a)[0], expected)

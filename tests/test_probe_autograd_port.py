"""Probes from porting HIPS-autograd-style numerical code: plain ``import numpy as np``
functions differentiated with Advect, checked against central differences, the other mode,
autograd's conventions and staged replay."""

import warnings

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient


def _check(f, x, rtol=1e-6):
    """grad vs central differences, jvp vs vjp, staged value/dtype/type vs eager and the
    staged gradient vs the dynamic one."""
    g = ad.grad(f)(x)
    np.testing.assert_allclose(g, central_gradient(f, x), rtol=1e-5, atol=1e-6)
    t = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    np.testing.assert_allclose(ad.jvp(f)(x, tangents=t)[1], np.sum(g * t), rtol=rtol, atol=1e-9)
    program = ad.stage(f, x)
    value, staged = f(x), program(x)
    assert type(staged) is type(value) and np.asarray(staged).dtype == np.asarray(value).dtype
    np.testing.assert_allclose(staged, value, rtol=rtol)
    np.testing.assert_allclose(ad.grad(program)(x), g, rtol=rtol, atol=1e-12)
    return g


# --- x ** 0 at x == 0: a constant, so a zero derivative (autograd's answer), not nan --------

COEFFS = np.array([0.3, -1.0, 2.0, 0.5])


def _polynomial_features(x, powers):
    return np.sum((x[:, None] ** powers) @ COEFFS)


@pytest.mark.parametrize("powers", [np.arange(4), np.arange(4.0)], ids=["int", "float"])
def test_vandermonde_features_have_finite_gradients_at_zero(powers):
    x = np.array([0.0, 0.5, -1.0, 2.0])
    g = _check(lambda a: _polynomial_features(a, powers), x)
    expected = COEFFS[1] + 2 * COEFFS[2] * x + 3 * COEFFS[3] * x ** 2
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    h = ad.hessian(lambda a: _polynomial_features(a, powers))(x)
    np.testing.assert_allclose(np.diag(h), 2 * COEFFS[2] + 6 * COEFFS[3] * x, rtol=1e-12)
    assert np.all(np.isfinite(ad.hessian_diag(lambda a: _polynomial_features(a, powers))(x)))


@pytest.mark.parametrize("exponent", [0, 0.0, np.float64(0.0), np.zeros(2)],
                         ids=["int", "float", "numpy", "array"])
def test_a_zero_exponent_has_a_zero_derivative_at_zero(exponent):
    x = np.array([0.0, 3.0])
    f = lambda a: np.sum(a ** exponent + np.power(a, exponent))  # noqa: E731
    for g in (ad.grad(f)(x), ad.grad(ad.stage(f, x))(x),
              ad.vjp(lambda a: a ** exponent)(x)[1](np.ones(2))):
        np.testing.assert_array_equal(g, np.zeros(2))
    np.testing.assert_array_equal(ad.jvp(f)(x, tangents=np.ones(2))[1], 0.0)
    x32 = x.astype(np.float32)
    assert ad.grad(f)(x32).dtype == np.float32


def test_power_mixed_second_derivatives_stay_exact_at_a_zero_exponent():
    # d2/dxdy x**y = x**(y-1) (1 + y log x), 1/x at y == 0: a zero exponent must not be
    # replaced where x != 0 (autograd's where(y, y - 1, 1) gives x here)
    h = ad.hessian(lambda v: v[0] ** v[1])(np.array([2.0, 0.0]))
    np.testing.assert_allclose(h, [[0.0, 0.5], [0.5, np.log(2.0) ** 2]], rtol=1e-12, atol=0)
    assert ad.grad(lambda x, y: x ** y, argnums=(0, 1))(0.0, 0.0) == (0.0, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 * inf on the way
        np.testing.assert_array_equal(ad.hessian(lambda v: v[0] ** v[1])(np.zeros(2)),
                                      np.zeros((2, 2)))


# --- np.pad with a dict pad_width (NumPy 2.3+) -------------------------------------------

@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.3.0",
                    reason="dict pad_width arrived in NumPy 2.3")
@pytest.mark.parametrize("width", [{1: (1, 2)}, {-1: 2}, {0: (True, 1)}, {}],
                         ids=["pair", "negative-axis", "bool", "empty"])
@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "mean"])
def test_pad_takes_numpy_s_dict_pad_width(width, mode):
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    expected = np.pad(x, width, mode=mode)
    weights = np.arange(expected.size, dtype=float).reshape(expected.shape)
    f = lambda a: np.sum(np.pad(a, width, mode=mode) * weights)  # noqa: E731
    np.testing.assert_array_equal(ad.stage(lambda a: np.pad(a, width, mode=mode), x)(x),
                                  expected)
    _check(f, x)


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.3.0",
                    reason="dict pad_width arrived in NumPy 2.3")
@pytest.mark.parametrize("width", [{0: [1, 2]}, {0: 1.5}, {0: (1, 2, 3)}, {5: 1}, {"a": 1}])
def test_pad_refuses_the_dict_pad_widths_numpy_refuses(width):
    x = np.ones((2, 3))
    with pytest.raises(Exception) as expected:
        np.pad(x, width)
    with pytest.raises(expected.type):
        ad.grad(lambda a: np.sum(np.pad(a, width)))(x)


# --- np.polyval as NumPy's Horner loop over the leading axis -----------------------------

@pytest.mark.parametrize("shape, x", [((3, 2), np.array([0.5, -1.5])), ((3, 2), np.ones((4, 1))),
                                      ((3, 1, 2), np.array([0.5, 2.0]))],
                         ids=["columns", "broadcast", "3d"])
def test_polyval_evaluates_a_batch_of_polynomials_as_numpy(shape, x):
    p = np.linspace(-1.0, 1.0, int(np.prod(shape))).reshape(shape)
    expected = np.polyval(p, x)
    weights = np.arange(expected.size, dtype=float).reshape(expected.shape) - 1.0
    _check(lambda c: np.sum(np.polyval(c, x) * weights), p)
    _check(lambda v: np.sum(np.polyval(p, v) * weights), x)
    np.testing.assert_allclose(ad.stage(lambda c: np.polyval(c, x), p)(p), expected, rtol=1e-14)



def test_polyval_of_0d_coefficients_is_numpy_s_type_error_and_no_coefficients_give_zeros():
    for p in (3.0, np.array(3.0)):
        with pytest.raises(TypeError):
            np.polyval(p, 2.0)
        with pytest.raises(TypeError):
            ad.grad(lambda x, p=p: np.polyval(p, x))(2.0)
    for p, x in (([], 2.0), (np.ones((0, 2)), np.array([1.0, 2.0]))):
        expected = np.polyval(p, x)
        for got in (ad.stage(lambda v, p=p: np.polyval(p, v), x)(x),
                    ad.jvp(lambda v, p=p: np.polyval(p, v))(x, tangents=np.ones_like(x))[0]):
            assert type(got) is type(expected) and np.shape(got) == np.shape(expected)
            np.testing.assert_array_equal(got, expected)

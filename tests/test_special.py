"""scipy.special ufuncs on traced arrays, through the same ufunc table as NumPy's."""

import subprocess
import sys

import numpy as np
import pytest

import advect as ad

special = pytest.importorskip("scipy.special")

X = np.array([-1.3, -0.4, 0.2, 0.9, 1.7])
P = np.array([0.6, 1.1, 2.5, 4.0])  # positive, for the gamma family
Q = np.array([0.05, 0.3, 0.5, 0.9])  # probabilities


def _derivative(f, x):
    return ad.jvp(f)(x, tangents=np.ones_like(x))[1]


CLOSED_FORMS = [
    ("erf", X, lambda x: 2 / np.sqrt(np.pi) * np.exp(-x**2)),
    ("erfc", X, lambda x: -2 / np.sqrt(np.pi) * np.exp(-x**2)),
    ("erfcx", X, lambda x: 2 * x * special.erfcx(x) - 2 / np.sqrt(np.pi)),
    ("erfinv", Q, lambda x: np.sqrt(np.pi) / 2 * np.exp(special.erfinv(x) ** 2)),
    ("expit", X, lambda x: special.expit(x) * special.expit(-x)),
    ("log_expit", X, lambda x: special.expit(-x)),
    ("gammaln", P, lambda x: special.digamma(x)),
    ("gamma", P, lambda x: special.gamma(x) * special.digamma(x)),
    ("digamma", P, lambda x: special.polygamma(1, x)),
    ("psi", P, lambda x: special.polygamma(1, x)),
    ("ndtr", X, lambda x: np.exp(-x**2 / 2) / np.sqrt(2 * np.pi)),
    ("log_ndtr", X, lambda x: np.exp(-x**2 / 2) / np.sqrt(2 * np.pi) / special.ndtr(x)),
    ("ndtri", Q, lambda x: np.sqrt(2 * np.pi) * np.exp(special.ndtri(x) ** 2 / 2)),
    ("logit", Q, lambda x: 1 / (x * (1 - x))),
    ("entr", P, lambda x: -np.log(x) - 1),
    ("i0", X, lambda x: special.i1(x)),
    ("i1", X, lambda x: (special.i0(x) + special.iv(2, x)) / 2),
    ("i0e", X, lambda x: special.i1e(x) - np.sign(x) * special.i0e(x)),
    ("i1e", X, lambda x: (special.ive(0, x) + special.ive(2, x)) / 2 - np.sign(x) * special.i1e(x)),
]


@pytest.mark.parametrize("name, x, derivative", CLOSED_FORMS, ids=[c[0] for c in CLOSED_FORMS])
def test_unary_special_functions_value_and_derivative(name, x, derivative):
    f = getattr(special, name)
    value, tangent = ad.jvp(f)(x, tangents=np.ones_like(x))
    np.testing.assert_allclose(value, f(x), rtol=1e-13)
    np.testing.assert_allclose(tangent, derivative(x), rtol=1e-10)
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(f(x)))(x), derivative(x), rtol=1e-10)
    np.testing.assert_allclose(ad.stage(f, x)(x), f(x), rtol=1e-13)


def test_xlogy_and_xlog1py_partials_including_x_zero():
    x, y = np.array([0.0, 1.5, 2.0]), np.array([0.5, 2.0, 3.0])
    gx, gy = ad.grad(lambda x, y: np.sum(special.xlogy(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.log(y))
    np.testing.assert_allclose(gy, x / y)
    gx, gy = ad.grad(lambda x, y: np.sum(special.xlog1py(x, y)), argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, np.log1p(y))
    np.testing.assert_allclose(gy, x / (1 + y))
    # at x == 0, y == 0 the function is 0 along x == 0; the gradient stays finite
    g = ad.grad(lambda x: np.sum(special.xlogy(x, np.zeros(1))))(np.zeros(1))
    np.testing.assert_array_equal(g, [0.0])


def test_binary_special_functions_partials():
    a, b = np.array([0.7, 1.5, 3.0]), np.array([2.0, 0.4, 1.1])
    ga, gb = ad.grad(lambda a, b: np.sum(special.betaln(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, special.digamma(a) - special.digamma(a + b), rtol=1e-10)
    np.testing.assert_allclose(gb, special.digamma(b) - special.digamma(a + b), rtol=1e-10)
    gx, gy = ad.grad(lambda x, y: np.sum(special.rel_entr(x, y)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose(gx, np.log(a / b) + 1, rtol=1e-12)
    np.testing.assert_allclose(gy, -a / b, rtol=1e-12)


def test_bessel_derivatives_at_zero_are_the_limits():
    g = ad.grad(lambda x: np.sum(special.i1(x) + special.i1e(x)))(np.zeros(2))
    np.testing.assert_allclose(g, [1.0, 1.0])


def test_log_ndtr_derivative_is_finite_far_in_the_left_tail():
    x = np.array([-40.0, -20.0])
    g = ad.grad(lambda x: np.sum(special.log_ndtr(x)))(x)
    # the Mills-ratio expansion: d log Phi(x) = -x - 1/x + 2/x**3 + O(x**-5) for x -> -inf
    np.testing.assert_allclose(g, -x - 1 / x + 2 / x**3, rtol=1e-6)


def test_float32_stays_float32():
    x = X.astype(np.float32)
    for f in (special.erf, special.expit, special.log_expit, special.ndtr):
        g = ad.grad(lambda a, f=f: np.sum(f(a)))(x)
        assert g.dtype == np.float32


def test_second_derivatives_match_scipy():
    hess = ad.hessian_diag(lambda x: np.sum(special.gammaln(x)))(P)
    np.testing.assert_allclose(hess, special.polygamma(1, P), rtol=1e-10)


def test_unsupported_scipy_ufunc_raises_a_named_error():
    with pytest.raises(ad.TracingError, match="scipy.special.zetac"):
        ad.grad(lambda x: np.sum(special.zetac(x)))(X)


def test_importing_advect_does_not_import_scipy():
    code = ("import sys, advect, numpy as np; advect.grad(np.sin)(1.0); "
            "print('scipy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

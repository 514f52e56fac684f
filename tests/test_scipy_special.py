"""advect.scipy.special against SciPy: values, derivatives (central differences, both modes,
second order), staged programs that save and load, stability at large inputs and in tails."""

import json
import subprocess
import sys

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

sc = pytest.importorskip("scipy.special")
from advect.scipy import special  # noqa: E402

rng = np.random.default_rng(0)
X = rng.uniform(-1.5, 1.5, 6)
P = rng.uniform(0.5, 3.0, 6)
Q = rng.uniform(0.05, 0.95, 6)
Z = rng.uniform(-1, 1, 4) + 1j * rng.uniform(-1, 1, 4)

UNARY = [("gammaln", P), ("digamma", P), ("erf", X), ("erfc", X), ("erfcx", X),
         ("erfinv", 2 * Q - 1), ("expit", X), ("log_expit", X), ("ndtr", X), ("log_ndtr", X),
         ("ndtri", Q)]
COMPLEX = [("erf", Z), ("erfc", Z), ("ndtr", Z), ("log_ndtr", Z + 0.5), ("erfcx", Z)]


def _reload(program):
    return ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))


def _staged_agrees(f, *args, rtol=1e-13):
    program = ad.stage(f, *args)
    np.testing.assert_allclose(_reload(program)(*args), f(*args), rtol=rtol)
    return program


@pytest.mark.parametrize("name, x", UNARY + COMPLEX,
                         ids=[n for n, _ in UNARY] + [f"{n}_complex" for n, _ in COMPLEX])
def test_unary_values_derivatives_and_staging(name, x):
    f = getattr(special, name)
    np.testing.assert_array_equal(f(x), getattr(sc, name)(x))
    order = 1 if name == "digamma" and x.dtype.kind == "c" else 2
    check_grads(f, (x,), order=order)
    _staged_agrees(f, x)
    if x.dtype.kind == "f":
        loss = lambda x: np.sum(f(x))  # noqa: E731
        np.testing.assert_allclose(ad.grad(_reload(ad.stage(loss, x)))(x), ad.grad(loss)(x),
                                   rtol=1e-13)


def test_unary_functions_take_ufunc_keywords_on_traced_arrays():
    def f(x):
        y = np.zeros_like(x)
        special.expit(x, out=y, where=x > 0)
        return np.sum(y) + np.sum(special.erf(x, dtype=np.float32))
    expected = np.sum(np.where(X > 0, sc.expit(X), 0.0)) + np.sum(sc.erf(X.astype(np.float32)))
    # (SciPy 1.17's own expit ignores where= on some entries; the traced call follows NumPy)
    value, g = ad.value_and_grad(f)(X)
    np.testing.assert_allclose(value, expected, rtol=1e-6)
    np.testing.assert_allclose(g, np.where(X > 0, sc.expit(X) * sc.expit(-X), 0.0)
                               + 2 / np.sqrt(np.pi) * np.exp(-X**2), rtol=1e-6)


def test_float32_stays_float32():
    x = X.astype(np.float32)
    assert ad.grad(lambda x: np.sum(special.expit(x)))(x).dtype == np.float32
    assert special.log_softmax(x).dtype == np.float32


def test_polygamma_values_and_derivative_to_third_order():
    np.testing.assert_allclose(special.polygamma(2, P), sc.polygamma(2, P))
    check_grads(lambda x: special.polygamma(1, x), (P,), order=2)
    third = ad.jvp(lambda x: ad.jvp(lambda x: special.polygamma(1, x))(
        x, tangents=np.ones_like(x))[1])(P, tangents=np.ones_like(P))[1]
    np.testing.assert_allclose(third, sc.polygamma(3, P), rtol=1e-10)
    _staged_agrees(lambda x: special.polygamma(2, x), P)


def test_log_ndtr_gradient_in_the_far_left_tail():
    x = np.array([-40.0, -200.0, -1e4])
    g = ad.grad(lambda x: np.sum(special.log_ndtr(x)))(x)
    # the inverse Mills ratio phi(x) / Phi(x) = -x - 1/x + 2/x^3 - 10/x^5 + ... for x -> -inf
    np.testing.assert_allclose(g, -x - 1 / x + 2 / x**3 - 10 / x**5, rtol=1e-10)
    assert np.all(np.isfinite(special.log_ndtr(x)))


AXES = [None, 0, 1, (0, 1), -1]


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_matches_scipy_and_its_gradient_is_softmax(axis, keepdims):
    a = rng.uniform(-3, 3, (3, 4))
    f = lambda a: special.logsumexp(a, axis=axis, keepdims=keepdims)  # noqa: E731
    np.testing.assert_allclose(ad.jvp(f)(a, tangents=np.zeros_like(a))[0],
                               sc.logsumexp(a, axis=axis, keepdims=keepdims), rtol=1e-14)
    check_grads(f, (a,), order=2)
    _staged_agrees(f, a)


def test_logsumexp_of_large_inputs_and_of_minus_infinity():
    a = np.array([1e4, 1e4 + 1.0, -np.inf])
    g = ad.grad(special.logsumexp)(a)
    np.testing.assert_allclose(g, [sc.expit(-1.0), sc.expit(1.0), 0.0], rtol=1e-14)
    with np.errstate(invalid="ignore"):  # the tangent of log at a zero sum is 0 / 0
        value = ad.jvp(special.logsumexp)(np.full(3, -np.inf), tangents=np.ones(3))[0]
    assert value == -np.inf == sc.logsumexp(np.full(3, -np.inf))


@pytest.mark.parametrize("axis", [None, 1])
def test_logsumexp_with_weights_and_signs(axis):
    a, b = rng.uniform(-2, 2, (2, 5)), np.array([1.0, -2.0, 0.5, 0.0, 3.0])
    f = lambda a, b: special.logsumexp(a, axis=axis, b=b, return_sign=True)  # noqa: E731
    got = ad.jvp(f, (0, 1))(a, b, tangents=(np.zeros_like(a), np.zeros_like(b)))[0]
    want = sc.logsumexp(a, axis=axis, b=b, return_sign=True)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-14)
    np.testing.assert_array_equal(got[1], want[1])
    check_grads(lambda a, b: f(a, b)[0], (a, b), order=2)
    _staged_agrees(lambda a, b: f(a, b)[0], a, b)


def test_logsumexp_of_complex_inputs():
    f = lambda z: special.logsumexp(z)  # noqa: E731
    np.testing.assert_allclose(ad.jvp(f)(Z, tangents=np.zeros_like(Z))[0], sc.logsumexp(Z),
                               rtol=1e-14)
    check_grads(f, (Z,), order=2)


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_softmax_and_log_softmax(name, axis):
    x = rng.uniform(-3, 3, (3, 4))
    f = lambda x: getattr(special, name)(x, axis=axis)  # noqa: E731
    np.testing.assert_allclose(ad.jvp(f)(x, tangents=np.zeros_like(x))[0],
                               getattr(sc, name)(x, axis=axis), rtol=1e-14, atol=1e-15)
    check_grads(f, (x,), order=2)
    _staged_agrees(f, x)


def test_log_softmax_of_far_apart_inputs_stays_finite():
    x = np.array([0.0, 3000.0, 3000.0])
    g = ad.grad(lambda x: special.log_softmax(x)[1])(x)
    np.testing.assert_allclose(g, [0.0, 0.5, -0.5], atol=1e-15)


def test_a_derivative_scipy_cannot_express_raises():
    with pytest.raises(ad.NoJVPError, match="the order v"):
        ad.grad(lambda v: np.sum(sc.jv(v, P)))(np.ones(6))
    with pytest.raises(ad.NoJVPError, match="w.r.t. a"):
        ad.grad(lambda a: np.sum(sc.gammainc(a, P)))(P)


def test_elliptic_integral_derivatives_at_zero_are_the_series_coefficients():
    def second(f, m):
        first = lambda m: ad.jvp(f)(m, tangents=np.ones_like(m))[1]  # noqa: E731
        return ad.jvp(first)(m, tangents=np.ones_like(m))[1]
    np.testing.assert_allclose(second(sc.ellipk, np.zeros(1)), [np.pi / 2 * 9 / 32])
    np.testing.assert_allclose(second(sc.ellipe, np.zeros(1)), [-np.pi / 2 * 3 / 32])


def test_sine_integral_derivatives_at_zero_are_the_series():
    f = lambda x: sc.sici(x)[0]  # noqa: E731
    first = lambda x: ad.jvp(f)(x, tangents=np.ones_like(x))[1]  # noqa: E731
    with np.errstate(divide="ignore", invalid="ignore"):  # Ci' = cos x / x is infinite at 0
        third = ad.jvp(lambda x: ad.jvp(first)(x, tangents=np.ones_like(x))[1])(
            np.zeros(1), tangents=np.ones(1))[1]
        np.testing.assert_allclose(first(np.zeros(1)), [1.0])
    np.testing.assert_allclose(third, [-1 / 3])  # Si = x - x^3/18 + ...


def test_an_uncovered_scipy_function_names_itself():
    import scipy.integrate
    with pytest.raises(ad.TracingError, match="scipy.integrate.trapezoid"):
        ad.grad(lambda x: scipy.integrate.trapezoid(np.sin(x)))(X)


def test_importing_advect_imports_no_scipy():
    code = "import sys, advect, advect.scipy; print('scipy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

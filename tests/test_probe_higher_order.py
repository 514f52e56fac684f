"""Higher-order derivatives across op families, checked against JAX (float64)."""
import itertools

import numpy as np
import pytest

import advect as ad

pytest.importorskip("scipy")
import advect.scipy.special as asp  # noqa: E402

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
jsp = pytest.importorskip("jax.scipy.special")

# (name, function of (numpy-like module, special module, x), point)
CASES = [
    ("arctan2_hypot_logaddexp",
     lambda m, s, x: m.sum(m.tanh(x) * m.arctan2(x, x[::-1] + 0.5)
                           + m.hypot(x, 2 * x[::-1]) + m.logaddexp(x, x**2)),
     [0.3, 0.7, 1.1, 0.5]),
    ("power_array_exponent",
     lambda m, s, x: m.sum(m.power(x, x[::-1] + 1.0) + m.expm1(x) * m.log1p(x**2)),
     [0.3, 0.7, 1.1, 0.5]),
    ("prod_cumprod", lambda m, s, x: m.prod(x) + m.sum(m.cumprod(x) ** 2), [0.3, 0.7, 1.1, 0.5]),
    ("cumprod_with_zero", lambda m, s, x: m.sum(m.cumprod(x)), [1.5, 0.0, 3.0, 0.5]),
    ("add_at_gather",
     lambda m, s, x: m.sum(x[m.array([0, 2, 2, 3])] ** 3) + m.sum(x[::-2] * x[1::2]),
     [0.3, 0.7, 1.1, 0.5]),
    ("linalg", lambda m, s, x: m.linalg.slogdet(x.reshape(2, 2) + 3 * m.eye(2))[1]
     + m.sum(m.linalg.svd(x.reshape(2, 2) + m.diag(m.array([0.0, 3.0])), compute_uv=False) ** 3),
     [0.3, 0.7, 1.1, 0.5]),
    ("fft_magnitudes",
     lambda m, s, x: m.sum(m.abs(m.fft.fft(x)) ** 3) + m.sum(m.fft.irfft(x, n=6) ** 3),
     [0.3, 0.7, 1.1, 0.5]),
    ("special",
     lambda m, s, x: m.sum(s.gammaln(x + 1) * s.digamma(x + 1) + s.erf(x) ** 3)
     + s.logsumexp(x**2),
     [0.3, 0.7, 1.1, 0.5]),
]


def _jax_special():
    class S:
        gammaln, digamma, erf, logsumexp = jsp.gammaln, jsp.digamma, jsp.erf, jsp.logsumexp
    return S


def _hessians(fn, x):
    fj = lambda v: fn(jnp, _jax_special(), v)
    return (np.asarray(jax.hessian(fj)(jnp.asarray(x))),
            np.asarray(jax.jacfwd(jax.hessian(fj))(jnp.asarray(x))))


@pytest.mark.slow
@pytest.mark.parametrize("name,fn,point", CASES, ids=[c[0] for c in CASES])
def test_second_and_third_order_match_jax(name, fn, point):
    x = np.asarray(point, float)
    v = np.linspace(-1.0, 1.0, x.size)
    f = lambda y: fn(np, asp, y)
    H, T = _hessians(fn, x)
    np.testing.assert_allclose(ad.hessian(f)(x), H, atol=1e-9)
    np.testing.assert_allclose(ad.jacobian(ad.grad(f))(x), H, atol=1e-9)
    np.testing.assert_allclose(ad.hessian_diag(f)(x), np.diag(H), atol=1e-9)
    np.testing.assert_allclose(ad.hvp(f)(x, vectors=v)[1], H @ v, atol=1e-9)
    np.testing.assert_allclose(ad.jacobian(ad.hessian(f))(x), T, atol=1e-8)
    np.testing.assert_allclose(ad.hessian(ad.stage(f, x))(x), H, atol=1e-9)
    H32 = ad.hessian(f)(x.astype(np.float32))
    assert H32.dtype == np.float32


@pytest.mark.parametrize("point", [[0.0, 2.0, 3.0, 0.5], [0.0, 2.0, 0.0, 0.5]])
def test_prod_hessian_at_zero_entries(point):
    x = np.asarray(point)
    H, _ = _hessians(lambda m, s, y: m.prod(y), x)
    np.testing.assert_allclose(ad.hessian(np.prod)(x), H, atol=1e-12)


def test_det_third_derivative_at_singular_matrix():
    x = np.array([1.0, 2.0, 3.0, 2.0, 4.0, 6.0, 0.5, 1.0, 2.0])
    f = lambda m, s, y: m.linalg.det(y.reshape(3, 3))
    # det is multilinear: d^3 det / dA[0,a] dA[1,b] dA[2,c] is the sign of the permutation
    # (a, b, c), in any order of the three entries, and 0 elsewhere (JAX releases differ here)
    T = np.zeros((9, 9, 9))
    for perm in itertools.permutations(range(3)):
        sign = np.linalg.det(np.eye(3)[list(perm)])
        entries = [3 * row + col for row, col in enumerate(perm)]
        for order in itertools.permutations(entries):
            T[order] = sign
    np.testing.assert_allclose(ad.jacobian(ad.hessian(lambda y: f(np, None, y)))(x), T, atol=1e-9)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 2), (2, 0)])
@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_prod_first_order_rule_agrees_with_the_branchless_one(axis, zeros):
    # the concrete first-order rule (where-branches) against the one nested and staged
    # derivatives use (exclusive prefix and suffix products)
    x = np.random.default_rng(zeros).uniform(0.5, 1.5, (2, 3, 4))
    x.flat[[5, 17][:zeros]] = 0.0
    def f(y):
        p = np.prod(y, axis=axis)
        return np.sum(p * np.arange(1.0, 1 + np.size(p)).reshape(np.shape(p)))

    concrete = ad.grad(f)(x)
    np.testing.assert_allclose(ad.grad(ad.stage(f, x))(x), concrete, rtol=1e-13, atol=1e-15)
    nested = ad.jvp(ad.grad(f))(x, tangents=np.zeros_like(x))[0]
    np.testing.assert_allclose(nested, concrete, rtol=1e-13, atol=1e-15)

"""Porting JAX / HIPS autograd tutorial programs to Advect: every answer against JAX (x64),
central differences and the other AD mode; the porting guide's claims about JAX."""

from __future__ import annotations

import re
from collections import namedtuple
from pathlib import Path

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient

RNG = np.random.default_rng(20261203)
DOCS = Path(__file__).resolve().parents[1] / "docs"


@pytest.fixture
def jax(jax_x64):
    return jax_x64  # conftest's: JAX with 64-bit types


def _close(a, b, **kw):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-9, atol=1e-11, **kw)


# --- a neural network over a list of dicts ------------------------------------------------------

SIZES = [3, 4, 2]
PARAMS = [{"W": RNG.normal(size=(m, n)) * 0.5, "b": RNG.normal(size=n) * 0.1}
          for m, n in zip(SIZES[:-1], SIZES[1:])]
X = RNG.normal(size=(5, 3))
Y = RNG.normal(size=(5, 2))


def mlp_loss(params, x, y, xp=np):
    h = x
    for layer in params[:-1]:
        h = xp.tanh(h @ layer["W"] + layer["b"])
    return xp.mean((h @ params[-1]["W"] + params[-1]["b"] - y) ** 2)


def test_mlp_list_of_dicts_matches_jax(jax):
    jnp = jax.numpy
    g = ad.grad(mlp_loss)(PARAMS, X, Y)
    gj = jax.jit(jax.grad(lambda p, x, y: mlp_loss(p, x, y, jnp)))(PARAMS, X, Y)
    assert type(g) is list and all(type(layer) is dict for layer in g)
    for a, b in zip(g, gj):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    (gp, gy) = ad.grad(mlp_loss, argnums=(0, -1))(PARAMS, X, Y)
    _, gyj = jax.jit(jax.grad(lambda p, x, y: mlp_loss(p, x, y, jnp), argnums=(0, 2)))(
        PARAMS, X, Y)
    _close(gy, gyj)
    _close(gp[0]["W"], gj[0]["W"])


def test_mlp_gradient_against_central_differences():
    w = PARAMS[0]["W"]

    def only_w(w):
        return mlp_loss([{"W": w, "b": PARAMS[0]["b"]}, PARAMS[1]], X, Y)

    np.testing.assert_allclose(ad.grad(only_w)(w), central_gradient(only_w, w), atol=1e-7)


P = namedtuple("P", "w b")


def nt_loss(p, xp=np):
    return xp.sum(xp.sin(p.w) * p.b) + p.b ** 2


def test_namedtuple_params_with_a_python_float_leaf(jax):
    p = P(np.array([0.1, 0.2, 0.3]), 0.5)
    g = ad.grad(nt_loss)(p)
    gj = jax.grad(lambda p: nt_loss(p, jax.numpy))(p)
    assert type(g) is P and type(g.b) is float
    _close(g.w, gj.w)
    _close(g.b, gj.b)
    value, g2, aux = ad.value_and_grad(lambda p: (nt_loss(p), {"w": p.w}), has_aux=True)(p)
    assert type(value) is type(nt_loss(p)) and value == nt_loss(p)
    _close(g2.w, g.w)
    np.testing.assert_array_equal(aux["w"], p.w)


def test_argnames_and_argnums_together():
    def loss(x, *, scale, shift=1.0):
        return np.sum(scale * x ** 2) + shift

    named = ad.grad(loss, argnames=("scale", "shift"))(np.ones(3), scale=2.0, shift=3.0)
    assert named == {"scale": 3.0, "shift": 1.0}
    assert all(type(v) is float for v in named.values())
    pos, named = ad.grad(loss, argnums=0, argnames="scale")(np.ones(3), scale=2.0, shift=3.0)
    _close(pos, [4.0, 4.0, 4.0])
    assert named == {"scale": 3.0}
    value, (pos, named) = ad.value_and_grad(loss, argnums=(0,), argnames=("scale",))(
        np.ones(3), scale=2.0)
    assert value == 7.0 and type(pos) is tuple and named == {"scale": 3.0}


def test_selection_errors_are_clear():
    with pytest.raises(IndexError, match="out of range"):
        ad.grad(lambda x: x, argnums=2)(1.0)
    with pytest.raises(IndexError, match="out of range"):
        ad.grad(lambda x, y: x, argnums=-3)(1.0, 2.0)
    with pytest.raises(ValueError, match="argnames"):
        ad.grad(lambda x: x, argnames="z")(1.0)
    with pytest.raises(ValueError, match="real output"):
        ad.grad(lambda x: x * 1j)(1.0)
    with pytest.raises(ValueError, match="scalar output"):
        ad.grad(lambda x: x)(np.ones(2))


# --- Gaussian-process log-likelihood ------------------------------------------------------------

GX = RNG.normal(size=(6, 2))
GY = RNG.normal(size=6)


def gp_nll(log_ell, log_sf, log_sn, x, y, xp=np):
    d2 = xp.sum((x[:, None, :] - x[None, :, :]) ** 2, axis=-1)
    k = xp.exp(2 * log_sf) * xp.exp(-0.5 * d2 / xp.exp(2 * log_ell)) \
        + xp.exp(2 * log_sn) * xp.eye(x.shape[0])
    chol = xp.linalg.cholesky(k)
    alpha = xp.linalg.solve(chol.T, xp.linalg.solve(chol, y))
    return 0.5 * y @ alpha + xp.sum(xp.log(xp.diag(chol))) + 0.5 * len(y) * xp.log(2 * xp.pi)


HYPER = (0.3, -0.1, -1.0)


def test_gp_python_float_hyperparameters_against_central_differences():
    value, g = ad.value_and_grad(gp_nll, argnums=(0, 1, 2))(*HYPER, GX, GY)
    assert value == gp_nll(*HYPER, GX, GY)
    assert type(g) is tuple and all(type(t) is float for t in g)
    theta = np.array(HYPER)
    np.testing.assert_allclose(g, central_gradient(lambda t: gp_theta(t, GX, GY), theta),
                               rtol=1e-7, atol=1e-8)
    h = ad.hessian(gp_nll, argnums=(0, 1))(*HYPER, GX, GY)
    assert all(type(e) is float for row in h for e in row)
    grad_01 = lambda t: np.array(ad.grad(gp_nll, argnums=(0, 1))(*t, HYPER[2], GX, GY))  # noqa
    numeric = np.stack([(grad_01(np.array(HYPER[:2]) + e) - grad_01(np.array(HYPER[:2]) - e))
                        / 2e-6 for e in 1e-6 * np.eye(2)], axis=1)
    np.testing.assert_allclose(np.array(h), numeric, rtol=1e-6, atol=1e-7)


@pytest.mark.slow
def test_gp_python_float_hyperparameters_match_jax(jax):
    jnp = jax.numpy
    value, g = ad.value_and_grad(gp_nll, argnums=(0, 1, 2))(*HYPER, GX, GY)
    jv, gj = jax.jit(jax.value_and_grad(lambda a, b, c: gp_nll(a, b, c, GX, GY, jnp),
                                        argnums=(0, 1, 2)))(*HYPER)
    _close(value, jv)
    assert type(g) is tuple and all(type(t) is float for t in g)
    _close(g, gj)
    h = ad.hessian(gp_nll, argnums=(0, 1))(*HYPER, GX, GY)
    hj = jax.jit(jax.hessian(lambda a, b: gp_nll(a, b, HYPER[2], GX, GY, jnp),
                             argnums=(0, 1)))(*HYPER[:2])
    assert all(type(e) is float for row in h for e in row)
    _close(np.array(h), np.array(hj))


def gp_theta(theta, x, y, xp=np):
    return gp_nll(theta[0], theta[1], theta[2], x, y, xp)


@pytest.mark.slow
def test_gp_cho_factor_and_slogdet_versions(jax):
    pytest.importorskip("scipy")
    import advect.scipy.linalg as asl

    jnp = jax.numpy
    theta = np.array(HYPER)

    def with_cho(theta):
        d2 = np.sum((GX[:, None, :] - GX[None, :, :]) ** 2, axis=-1)
        k = np.exp(2 * theta[1]) * np.exp(-0.5 * d2 / np.exp(2 * theta[0])) \
            + np.exp(2 * theta[2]) * np.eye(6)
        c = asl.cho_factor(k, lower=True)
        return 0.5 * GY @ asl.cho_solve(c, GY) + np.sum(np.log(np.diag(c[0])))

    def with_slogdet(theta):
        d2 = np.sum((GX[:, None, :] - GX[None, :, :]) ** 2, axis=-1)
        k = np.exp(2 * theta[1]) * np.exp(-0.5 * d2 / np.exp(2 * theta[0])) \
            + np.exp(2 * theta[2]) * np.eye(6)
        return 0.5 * GY @ np.linalg.solve(k, GY) + 0.5 * np.linalg.slogdet(k)[1]

    reference = lambda t: gp_theta(t, jnp.asarray(GX), jnp.asarray(GY), jnp)  # noqa: E731
    gj, hj = jax.jit(jax.grad(reference))(theta), jax.jit(jax.hessian(reference))(theta)
    for f in (with_cho, with_slogdet):
        _close(ad.grad(f)(theta), gj)
        _close(ad.hessian(f)(theta), hj)
        _close(ad.hessian_diag(f)(theta), np.diag(hj))
    np.testing.assert_allclose(ad.grad(with_cho)(theta), central_gradient(with_cho, theta),
                               atol=1e-7)


def test_gp_float32_stays_float32():
    theta, x, y = (np.array(HYPER, np.float32), GX.astype(np.float32), GY.astype(np.float32))
    assert ad.grad(gp_theta)(theta, x, y).dtype == np.float32
    assert ad.hessian(gp_theta)(theta, x, y).dtype == np.float32
    assert ad.hessian_diag(gp_theta)(theta, x, y).dtype == np.float32
    g = ad.grad(gp_nll, argnums=(0, 3))(np.float32(0.3), np.float32(-0.1), -1.0, x, y)
    assert type(g[0]) is np.float32 and g[1].dtype == np.float32


# --- physics: a Lennard-Jones cluster ----------------------------------------------------------

POS = np.array([[0.0, 0, 0], [1.1, 0, 0], [0, 1.2, 0], [0.3, 0.4, 1.0]])


def lj(pos, xp=np):
    i, j = np.triu_indices(pos.shape[0], 1)
    r2 = xp.sum((pos[i] - pos[j]) ** 2, axis=-1)
    s6 = (1.0 / r2) ** 3
    return xp.sum(4 * (s6 ** 2 - s6))


def test_lennard_jones_forces_hessian_hvp(jax):
    jnp = jax.numpy
    ref = lambda p: lj(p, jnp)  # noqa: E731
    forces = -ad.grad(lj)(POS)
    _close(forces, -jax.jit(jax.grad(ref))(POS))
    np.testing.assert_allclose(-forces, central_gradient(lj, POS), rtol=1e-6, atol=1e-6)
    h = ad.hessian(lj)(POS)
    hj = jax.jit(jax.hessian(ref))(POS)
    assert h.shape == (4, 3, 4, 3)
    _close(h, hj)
    _close(ad.hessian_diag(lj)(POS), np.einsum("ijij->ij", hj))
    v = RNG.normal(size=POS.shape)
    value, hv = ad.hvp(lj)(POS, vectors=v)
    assert type(value) is type(lj(POS))
    _close(hv, jax.jit(lambda p, v: jax.jvp(jax.grad(ref), (p,), (v,))[1])(POS, v))
    _, t = ad.jvp(lj)(POS, tangents=v)
    _close(t, np.sum(-forces * v))


def test_pullback_single_use_and_context_manager():
    value, pb = ad.vjp(lj)(POS)
    g = ad.grad(lj)(POS)
    _close(pb(1.0), g)
    with pytest.raises(RuntimeError, match="single-use"):
        pb(1.0)
    with ad.vjp(lj)(POS)[1] as pb2:
        _close(pb2(2.0), 2 * g)
    _, pb3 = ad.vjp(lj)(POS)
    with pb3:
        pass
    with pytest.raises(RuntimeError):
        pb3(1.0)


# --- sum-of-squares fits -----------------------------------------------------------------------

T = np.linspace(0, 3, 20)
YFIT = 2 * np.exp(-0.7 * T) + 0.1 + 0.01 * RNG.normal(size=20)


def residuals(theta, t, y, xp=np):
    return theta[0] * xp.exp(-theta[1] * t) + theta[2] - y


def test_jacobian_linear_map_and_gauss_newton(jax):
    jnp = jax.numpy
    theta = np.array([1.5, 0.5, 0.0])
    jac = ad.jacobian(residuals)(theta, T, YFIT)
    _close(jac, jax.jacfwd(lambda th: residuals(th, T, YFIT, jnp))(theta))
    value, lm = ad.linearize(residuals, theta, T, YFIT)
    with lm:
        _close(lm(np.eye(3)[0]), jac[:, 0])
        cols = lm.apply_many(list(np.eye(3)))
        _close(np.stack(cols, axis=1), jac)
        rows = lm.transpose_many(list(np.eye(20)))
        _close(np.stack(rows), jac)
        _close(lm.pullback(value), jac.T @ value)
        _close(lm.transpose()(value), jac.T @ value)
        # the adjoint identity
        t, c = RNG.normal(size=3), RNG.normal(size=20)
        np.testing.assert_allclose(c @ lm(t), lm.pullback(c) @ t)
    with pytest.raises(RuntimeError, match="closed"):
        lm(theta)
    for _ in range(10):
        r = residuals(theta, T, YFIT)
        jac = ad.jacobian(residuals)(theta, T, YFIT)
        theta = theta - np.linalg.solve(jac.T @ jac, jac.T @ r)
    step = np.linalg.lstsq(jac, residuals(theta, T, YFIT))[0]
    assert np.max(np.abs(step)) < 1e-10  # converged: a further Gauss-Newton step is zero


def test_jacobian_forward_and_reverse_choices(jax):
    jnp = jax.numpy
    big = np.linspace(0, 1, 50)
    tall = ad.jacobian(lambda x: np.outer(x[:3], x).ravel())(big)
    _close(tall, jax.jit(jax.jacfwd(lambda x: jnp.outer(x[:3], x).ravel()))(big))
    wide = ad.jacobian(lambda x: np.sin(x[:2]) * np.sum(x))(big)
    _close(wide, jax.jit(jax.jacrev(lambda x: jnp.sin(x[:2]) * jnp.sum(x)))(big))
    x32 = big.astype(np.float32)
    assert ad.jacobian(lambda x: np.outer(x[:3], x).ravel())(x32).dtype == np.float32
    assert ad.jacobian(lambda x: np.sin(x[:2]) * np.sum(x))(x32).dtype == np.float32


def test_jacobian_pytrees_in_and_out(jax):
    jnp = jax.numpy
    p = {"W": np.arange(6.0).reshape(2, 3) / 10, "b": np.array([0.1, -0.2])}
    x = np.array([0.3, -0.5, 0.8])

    def model(p, x, xp=np):
        h = xp.tanh(p["W"] @ x + p["b"])
        return {"out": h, "norm": xp.sum(h ** 2)}

    jac = ad.jacobian(model)(p, x)
    jj = jax.jacrev(lambda p: model(p, x, jnp))(p)
    for o in ("out", "norm"):
        for i in ("W", "b"):
            assert jac[o][i].shape == np.shape(jj[o][i])
            _close(jac[o][i], jj[o][i])
    both = ad.jacobian(model, argnums=(0, 1))(p, x)
    assert type(both["out"]) is tuple and both["out"][1].shape == (2, 3)
    named = ad.jacobian(lambda x, *, w: {"a": np.sin(w * x)}, argnames="w")(x, w=x + 1)
    _close(named["a"]["w"], np.diag(x * np.cos((x + 1) * x)))


# --- hessians with tuple and negative argnums ---------------------------------------------------

A = RNG.normal(size=(3, 3))
A = A @ A.T + 3 * np.eye(3)


def energy(x, y, xp=np):
    return 0.5 * x @ A @ x + xp.sum(xp.sin(x) * y ** 2) + xp.sum(y ** 4)


def test_hessian_blocks_hvp_and_diagonals(jax):
    jnp = jax.numpy
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    h = ad.hessian(energy, argnums=(0, 1))(x, y)
    hj = jax.jit(jax.hessian(lambda x, y: energy(x, y, jnp), argnums=(0, 1)))(x, y)
    for i in range(2):
        for j in range(2):
            _close(h[i][j], hj[i][j])
    _close(ad.hessian(energy, argnums=-1)(x, y), hj[1][1])
    _close(ad.hessian(energy, argnums=(-1, 0))(x, y)[0][1], hj[1][0])
    d0, d1 = ad.hessian_diag(energy, argnums=(0, 1))(x, y)
    _close(d0, np.diag(hj[0][0]))
    _close(d1, np.diag(hj[1][1]))
    _, hv = ad.hvp(energy, argnums=(0, 1))(x, y, vectors=(x, y))
    hvj = jax.jit(lambda x, y: jax.jvp(jax.grad(lambda x, y: energy(x, y, jnp), argnums=(0, 1)),
                                       (x, y), (x, y))[1])(x, y)
    _close(hv[0], hvj[0])
    _close(hv[1], hvj[1])


def test_python_float_lists_like_jax():
    # jax.grad gives [6., 1.] and jax.hessian [[6., 2.], [2., 0.]] here, as weak 0-d arrays
    f = lambda xs: xs[0] ** 2 * xs[1]  # noqa: E731
    g = ad.grad(f)([1.0, 3.0])
    assert g == [6.0, 1.0] and all(type(e) is float for e in g)
    h = ad.hessian(f)([1.0, 3.0])
    assert h == [[6.0, 2.0], [2.0, 0.0]] and all(type(e) is float for r in h for e in r)


# --- jvp / vjp / linearize over dicts ----------------------------------------------------------

def dict_model(p, xp=np):
    return {"y": xp.tanh(p["w"] * 2 + p["b"]), "s": xp.sum(p["w"]) * p["b"]}


def test_dict_jvp_vjp_linearize_match_jax(jax):
    jnp = jax.numpy
    w, v = RNG.normal(size=3), RNG.normal(size=3)
    p, tangent, cot = {"w": w, "b": 0.3}, {"w": v, "b": 1.0}, {"y": w, "s": 2.0}
    ref = lambda p: dict_model(p, jnp)  # noqa: E731
    _, tan = ad.jvp(dict_model)(p, tangents=tangent)
    _, tj = jax.jvp(ref, (p,), (tangent,))
    _close(tan["y"], tj["y"])
    _close(tan["s"], tj["s"])
    assert type(tan["s"]) is type(dict_model(p)["s"])
    _, pb = ad.vjp(dict_model)(p)
    ct = pb(cot)
    cj = jax.vjp(ref, p)[1](cot)[0]
    _close(ct["w"], cj["w"])
    _close(ct["b"], cj["b"])
    assert type(ct["b"]) is float
    _close(np.sum(ct["w"] * v) + ct["b"], np.sum(w * tan["y"]) + 2.0 * tan["s"])
    with ad.linearize(dict_model, p)[1] as lm:
        outs = lm.apply_many([tangent, {"w": w, "b": 0.0}])
        _close(outs[0]["y"], tj["y"])
        (back,) = lm.transpose_many([cot])
        _close(back["w"], cj["w"])
        assert type(back["b"]) is float


def test_has_aux_layouts_eager_and_staged(jax):
    jnp = jax.numpy
    p, x = {"w": np.array([0.5, -0.25, 0.1]), "b": 0.1}, np.array([1.0, 2.0, -1.0])

    def loss(p, x, xp=np):
        pred = xp.tanh(x * p["w"] + p["b"])
        return xp.sum(pred ** 2), {"pred": pred}

    value, g, aux = ad.value_and_grad(loss, has_aux=True)(p, x)
    (vj, auxj), gj = jax.value_and_grad(lambda p, x: loss(p, x, jnp), has_aux=True)(p, x)
    _close(value, vj)
    _close(g["w"], gj["w"])
    _close(g["b"], gj["b"])
    _close(aux["pred"], auxj["pred"])
    g2, aux2 = ad.grad(loss, has_aux=True)(p, x)
    g2j, _ = jax.grad(lambda p, x: loss(p, x, jnp), has_aux=True)(p, x)
    _close(g2["w"], g2j["w"])
    staged = ad.value_and_grad(ad.stage(loss, p, x), has_aux=True)
    sv, sg, saux = staged(p, x)
    _close(sv, value)
    _close(sg["w"], g["w"])
    assert type(sg["b"]) is float
    (sgp, sgx), _ = ad.grad(ad.stage(loss, p, x), argnums=(0, -1), has_aux=True)(p, x)
    _close(sgx, jax.grad(lambda p, x: loss(p, x, jnp)[0], 1)(p, x))


# --- complex inputs ---------------------------------------------------------------------------

Z = np.array([1.0 + 2.0j, 3.0 - 1.0j, -0.5 + 0.2j])


def complex_loss(z, xp=np):
    return xp.sum(xp.abs(xp.sin(z)) ** 2 + xp.real(z * xp.conj(z) * z))


def test_complex_gradient_is_the_conjugate_of_jax(jax):
    jnp = jax.numpy
    g = ad.grad(complex_loss)(Z)
    _close(g, np.conj(jax.jit(jax.grad(lambda z: complex_loss(z, jnp)))(Z)))
    # dL/dx + 1j dL/dy from central differences
    dx = central_gradient(lambda x: complex_loss(x + 1j * Z.imag), Z.real)
    dy = central_gradient(lambda y: complex_loss(Z.real + 1j * y), Z.imag)
    np.testing.assert_allclose(g, dx + 1j * dy, rtol=1e-6)
    assert ad.grad(complex_loss)(Z.astype(np.complex64)).dtype == np.complex64
    z0 = np.complex128(3 + 4j)
    assert ad.grad(lambda z: abs(z) ** 2)(z0) == 6 + 8j
    assert jax.grad(lambda z: abs(z) ** 2)(z0) == 6 - 8j
    _close(ad.jacobian(lambda z: np.abs(z) ** 2)(Z), np.diag(2 * Z))
    _, hv = ad.hvp(complex_loss)(Z, vectors=np.ones(3, complex))
    hvj = jax.jit(lambda z: jax.jvp(jax.grad(lambda z: complex_loss(z, jnp)), (z,),
                                    (jnp.ones(3, complex),))[1])(Z)
    _close(hv, np.conj(hvj))


def test_complex_pullback_and_holomorphic_jvp_conversions(jax):
    jnp = jax.numpy
    f = lambda z, xp=np: z ** 2 * xp.exp(z)  # noqa: E731
    c = np.array([1 + 1j, 2.0, -1j])
    jax_pullback = jax.vjp(lambda z: f(z, jnp), Z)[1]
    _close(np.conj(ad.vjp(f)(Z)[1](np.conj(c))), jax_pullback(c)[0])
    _, t = ad.jvp(f)(Z, tangents=np.ones(3, complex))
    _close(t, jax.jvp(lambda z: f(z, jnp), (Z,), (jnp.ones(3, complex),))[1])


def test_python_complex_is_refused_in_every_transform():
    for call in (lambda: ad.grad(lambda z: abs(z) ** 2)(3 + 4j),
                 lambda: ad.jvp(lambda z: z * z)(1 + 2j, tangents=1 + 0j),
                 lambda: ad.vjp(lambda z: z * z)(1 + 2j),
                 lambda: ad.jacobian(lambda z: abs(z))(1 + 2j)):
        with pytest.raises(TypeError, match="np.complex128"):
            call()


# --- Python scalars, integer and bool inputs, NumPy scalars ------------------------------------

def test_python_int_and_float_inputs_give_python_floats():
    cube = lambda x: x ** 3  # noqa: E731
    for x in (2, 2.0):
        assert type(ad.grad(cube)(x)) is float and ad.grad(cube)(x) == 12.0
    assert ad.value_and_grad(lambda x, y: x * y, argnums=(0, 1))(2, 3.0) == (6.0, (3.0, 2.0))
    for result in (ad.hessian(cube)(2.0), ad.hessian_diag(cube)(2.0), ad.jacobian(cube)(2.0),
                   ad.vjp(cube)(2.0)[1](1.0)):
        assert type(result) is float
    assert ad.hvp(cube)(2.0, vectors=1.0) == (8.0, 12.0)
    assert ad.jvp(cube)(2.0, tangents=1.0) == (8.0, 12.0)
    value, lm = ad.linearize(cube, 2.0)
    assert (value, lm(1.0), lm.pullback(1.0)) == (8.0, 12.0, 12.0)
    assert type(lm.pullback(1.0)) is float
    assert ad.grad(lambda x: 3.0)(2.0) == 0.0 and type(ad.grad(lambda x: 3.0)(2.0)) is float


def test_integer_and_bool_inputs_get_zeros_of_their_dtype():
    x, n, m = np.array([1.0, 2.0, 3.0]), np.array([1, 2, 3]), np.array([True, False, True])
    f = lambda x, n, m: np.sum(x ** 2 * n * np.where(m, 1.0, 2.0))  # noqa: E731
    expected = 2 * x * n * np.where(m, 1.0, 2.0)

    def check(result):
        gx, gn, gm = result
        _close(gx, expected)
        assert gn.dtype == n.dtype and gn.shape == n.shape and not gn.any()
        assert gm.dtype == m.dtype and gm.shape == m.shape and not gm.any()

    check(ad.grad(f, argnums=(0, 1, 2))(x, n, m))
    check(ad.value_and_grad(f, argnums=(0, 1, 2))(x, n, m)[1])
    check(ad.jacobian(f, argnums=(0, 1, 2))(x, n, m))
    check(ad.vjp(f, argnums=(0, 1, 2))(x, n, m)[1](1.0))
    (hxx, hxn), (hnx, hnn) = ad.hessian(f, argnums=(0, 1))(x, n, m)
    assert hxn.dtype == n.dtype and hnn.dtype == n.dtype
    assert not hxn.any() and not hnx.any() and not hnn.any()
    assert ad.hessian_diag(f, argnums=1)(x, n, m).dtype == n.dtype
    _, (hv_x, hv_n) = ad.hvp(f, argnums=(0, 1))(x, n, m, vectors=(x, np.zeros(3, int)))
    assert hv_n.dtype == n.dtype and not hv_n.any()
    _, t = ad.jvp(f, argnums=(0, 1))(x, n, m, tangents=(x, np.zeros(3, int)))
    _close(t, expected @ x)


def test_numpy_scalar_inputs_keep_grads_types_in_every_transform():
    """A NumPy float scalar's derivative is a NumPy scalar in every transform (0-d Jacobian,
    Hessian and Hessian-diagonal blocks were 0-d arrays while grad gave a NumPy scalar); an
    integer or bool NumPy scalar's zero derivative is ``np.zeros_like`` of it, a 0-d array
    (the convention tests/test_probe_deploy_workloads.py pins), staged or not."""
    x, k = np.float64(2.0), np.int64(3)
    f = lambda x, k: x ** 3 * k  # noqa: E731
    gx, gk = ad.grad(f, argnums=(0, 1))(x, k)
    assert type(gx) is np.float64 and type(gk) is np.ndarray and gk.dtype == k.dtype
    assert not gk
    assert type(ad.grad(lambda b: b * 2.0)(np.bool_(True))) is np.ndarray
    assert [type(g) for g in ad.vjp(f, argnums=(0, 1))(x, k)[1](1.0)] == [np.float64,
                                                                         np.ndarray]
    jx, jk = ad.jacobian(f, argnums=(0, 1))(x, k)
    assert (type(jx), type(jk)) == (np.float64, np.ndarray) and jx == 36.0
    (hxx, hxk), (hkx, hkk) = ad.hessian(f, argnums=(0, 1))(x, k)
    assert type(hxx) is np.float64 and hxx == 36.0 and type(hxk) is np.ndarray
    assert hxk.dtype == k.dtype and not hxk and not hkx and not hkk
    assert type(ad.hessian_diag(lambda x: x ** 3)(x)) is np.float64
    assert type(ad.hessian_diag(lambda x: x ** 3)(np.float32(2.0))) is np.float32
    assert type(ad.jacobian(lambda x: np.sum(x) * 3.0)(np.float32(2.0))) is np.float32
    assert type(ad.jacobian(lambda x: x * 3.0)(np.array(2.0))) is np.ndarray
    assert type(ad.hessian_diag(lambda x: x ** 3)(np.array(2.0))) is np.ndarray
    _, (hv_x, hv_k) = ad.hvp(f, argnums=(0, 1))(x, k, vectors=(1.0, np.int64(0)))
    assert type(hv_x) is np.float64 and type(hv_k) is np.ndarray
    # a staged program's gradient has the same types
    args = (x, k, np.bool_(True))
    staged = ad.grad(ad.stage(lambda x, k, b: x * k * b, *args), argnums=(0, 1, 2))(*args)
    dynamic = ad.grad(lambda x, k, b: x * k * b, argnums=(0, 1, 2))(*args)
    assert [type(g) for g in staged] == [type(g) for g in dynamic] == [np.float64, np.ndarray,
                                                                     np.ndarray]
    # nested: the outer derivative of a 0-d inner result
    assert ad.grad(lambda x: ad.hessian_diag(lambda x: x ** 3)(x))(x) == 6.0  # d(6x)/dx
    assert ad.hessian(lambda x: ad.jacobian(lambda x: x ** 4)(x))(x) == 48.0  # 24x


# --- float32 through every transform ------------------------------------------------------------

def test_float32_is_preserved_everywhere():
    x = np.linspace(0.1, 1, 4, dtype=np.float32)
    e = lambda x: np.sum(np.sin(x) * x ** 2) + 0.5 * np.sum(x) ** 2  # noqa: E731
    results = [ad.grad(e)(x), ad.value_and_grad(e)(x)[0], ad.hessian(e)(x),
               ad.hessian_diag(e)(x), ad.hvp(e)(x, vectors=x)[1],
               ad.jvp(e)(x, tangents=x)[1], ad.vjp(e)(x)[1](np.float32(1)),
               ad.jacobian(lambda x: np.sin(x) * 2.0)(x),
               ad.vjp(np.cos)(x)[1](np.ones(4)), ad.jvp(np.cos)(x, tangents=np.ones(4))[1]]
    value, lm = ad.linearize(lambda x: np.cos(x) * 3.0, x)
    with lm:
        results += [value, lm(x), lm.pullback(x), *lm.apply_many([x, x]),
                    *lm.transpose_many([x])]
    assert [np.asarray(r).dtype for r in results] == [np.float32] * len(results)
    np.testing.assert_allclose(ad.grad(e)(x), central_gradient(e, x.astype(np.float64)),
                               rtol=1e-5)


# --- the porting guide ------------------------------------------------------------------------

def _python_blocks(name):
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(), re.S)


def test_porting_guide_examples_run_and_match_jax(jax, capsys):
    scope: dict = {}
    for block in _python_blocks("porting.md"):
        exec(compile(block, "porting.md", "exec"), scope)  # noqa: S102
    lines = capsys.readouterr().out.splitlines()
    assert lines[1:4] == ["True", "True", "True"]
    assert lines[0].startswith("0.28749501161183")
    jnp = jax.numpy
    params = {"w": jnp.array([0.5, -0.25]), "b": 0.1}

    def loss(params, x, y):
        pred = jnp.tanh(x @ params["w"] + params["b"])
        return jnp.mean((pred - y) ** 2), pred

    (value, _), g = jax.value_and_grad(loss, has_aux=True)(params, scope["x"], scope["y"])
    _close(scope["value"], value)  # the last example's value: the same loss
    _close(scope["g"], g["w"])
    assert isinstance(jax.grad(loss, has_aux=True)(params, scope["x"], scope["y"]), tuple)


def test_porting_guide_claims_about_jax(jax):
    jnp = jax.numpy
    # JAX's grad refuses integer inputs unless allow_int=True, then gives float0 zeros
    with pytest.raises(TypeError):
        jax.grad(lambda i: i * 2.0)(3)
    assert jax.grad(lambda i: i * 2.0, allow_int=True)(3).dtype == jax.dtypes.float0
    assert ad.grad(lambda i: i * 2.0)(np.array(3)).dtype == np.int64
    # JAX defaults to float32 without x64
    jax.config.update("jax_enable_x64", False)
    try:
        assert jnp.ones(2).dtype == np.float32
    finally:
        jax.config.update("jax_enable_x64", True)
    # has_aux nesting
    (v, aux), g = jax.value_and_grad(lambda x: (x ** 2, x), has_aux=True)(3.0)
    assert (v, aux, g) == (9.0, 3.0, 6.0)
    assert ad.value_and_grad(lambda x: (x ** 2, x), has_aux=True)(3.0) == (9.0, 6.0, 3.0)
    # a non-array leaf gets None
    g = ad.grad(lambda d: np.sum(d["x"] ** 2) * len(d["name"]))({"x": np.ones(2), "name": "ab"})
    assert g["name"] is None


def test_porting_guide_staging_randomness_and_mutation_claims():
    program = ad.stage(lambda x: np.sum(np.sin(x)), np.ones(3))
    with pytest.raises(ValueError, match="shape"):
        program(np.ones(4))
    with pytest.raises(ValueError, match="dtype"):
        program(np.ones(3, np.float32))
    with pytest.raises(ad.AdvectError, match="random"):
        ad.stage(lambda x: x + np.random.normal(size=3), np.ones(3))
    with pytest.raises(ad.TracingError):
        ad.stage(lambda x: x if np.sum(x) > 0 else -x, np.ones(3))
    _close(ad.grad(lambda x: np.sum(x) if np.sum(x) > 0 else -np.sum(x))(-np.ones(3)),
           -np.ones(3))

    def owned(x):
        y = np.zeros(3, like=x)
        y[1] = x[0]
        y += x
        np.multiply(y, 2, out=y)
        return np.sum(y ** 2)

    _close(ad.grad(owned)(np.arange(3.0)), [8.0, 8.0, 16.0])  # JAX's .at[1].set version

    def plain_buffer(x):
        y = np.zeros(3)
        y[1] = x[0]
        return np.sum(y)

    with pytest.raises(ad.TracingError, match="like=x"):
        ad.grad(plain_buffer)(np.arange(3.0))

    def writes_input(x):
        x[0] = 1.0
        return np.sum(x)

    caller = np.ones(3)
    with pytest.raises(ad.MutationError):
        ad.grad(writes_input)(caller)
    np.testing.assert_array_equal(caller, np.ones(3))

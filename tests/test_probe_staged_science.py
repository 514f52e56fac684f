"""Probe: a computational scientist who stages everything and ships saved programs.

Realistic staged programs (an RK4 / Euler integrator, a Newton solve with and without
``implicit_root``, a checkpointed block inside a loss, an MLP training step, a loss with keyword
inputs and ``StaticSpec`` options) checked against eager NumPy, the dynamic transforms, central
differences and JAX: values, dtypes and result types, derivatives of first and second order,
``vjp_program`` selections, saving through JSON and pickle, call-contract errors, and that calls
neither mutate their inputs nor change earlier results.
"""

from __future__ import annotations

import collections
import contextlib
import json
import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose

import advect as ad
from advect.pytree import tree_leaves
from oracles import central_gradient


def _json_roundtrip(program):
    return ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict(), sort_keys=True)))


def _pickle_roundtrip(program):
    return pickle.loads(pickle.dumps(program))


def _same(a, b):
    """Equal pytrees with leaves of one type and dtype and identical bits."""
    la, lb = tree_leaves(a), tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert type(x) is type(y), (type(x), type(y))
        assert np.asarray(x).dtype == np.asarray(y).dtype
        assert np.array_equal(x, y, equal_nan=True)
    assert type(a) is type(b)


def _assert_reloads(program, *args, **kwargs):
    """A program and its JSON and pickle copies give bit-identical results of the same types."""
    expected = program(*args, **kwargs)
    for restored in (_json_roundtrip(program), _pickle_roundtrip(program)):
        _same(restored(*args, **kwargs), expected)
        assert json.dumps(restored.to_dict(), sort_keys=True) == json.dumps(
            program.to_dict(), sort_keys=True)
    return expected


@contextlib.contextmanager
def _x64(jax):
    """JAX in double precision for the block, restoring the previous setting."""
    enabled = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", enabled)


# --------------------------------------------------------------------------- ODE integrators


def rk4_energy(y0, k, dt):
    def rhs(y):
        return np.stack([y[1], -k * y[0] - 0.1 * y[1] ** 3])

    y = y0
    for _ in range(20):
        a = rhs(y)
        b = rhs(y + dt / 2 * a)
        c = rhs(y + dt / 2 * b)
        d = rhs(y + dt * c)
        y = y + dt / 6 * (a + 2 * b + 2 * c + d)
    return np.sum(y**2)


Y0 = np.array([1.0, 0.0])
K = np.asarray(2.0)


def test_rk4_value_type_and_signature():
    program = ad.stage(rk4_energy, Y0, K, 0.05)
    pos, kw = program.signature
    assert pos[2].weak and kw == {}
    eager = rk4_energy(Y0, K, 0.05)
    got = _assert_reloads(program, Y0, K, 0.05)
    assert type(got) is type(eager) is np.float64
    assert got == eager
    # a Python int fits the weak float slot, as NumPy promotion allows
    assert_allclose(program(Y0, K, 1), rk4_energy(Y0, K, 1), rtol=1e-13)


def test_rk4_gradients_all_inputs_against_dynamic_and_differences():
    program = ad.stage(rk4_energy, Y0, K, 0.05)
    staged = ad.grad(program, argnums=(0, 1, 2))
    gy, gk, gdt = _assert_reloads(staged, Y0, K, 0.05)
    dy, dk, ddt = ad.grad(rk4_energy, argnums=(0, 1, 2))(Y0, K, 0.05)
    assert type(gy) is np.ndarray and type(gk) is np.ndarray and gk.shape == ()
    assert type(gdt) is float  # a Python scalar input gets a Python float gradient
    assert_allclose(gy, dy, rtol=1e-12)
    assert_allclose(gk, dk, rtol=1e-12)
    assert_allclose(gdt, ddt, rtol=1e-10)
    assert_allclose(gy, central_gradient(lambda y: rk4_energy(y, K, 0.05), Y0), rtol=1e-7)
    fd_dt = (rk4_energy(Y0, K, 0.05 + 1e-6) - rk4_energy(Y0, K, 0.05 - 1e-6)) / 2e-6
    assert_allclose(gdt, fd_dt, rtol=1e-6)


def test_rk4_second_order_staged():
    program = ad.stage(rk4_energy, Y0, K, 0.05)
    hessian = ad.hessian(program)(Y0, K, 0.05)
    assert_allclose(hessian, ad.hessian(rk4_energy)(Y0, K, 0.05), rtol=1e-10)
    # grad(grad(program)) of the scalar spring constant: a program of a program
    gg = ad.grad(ad.grad(program, argnums=1), argnums=1)
    assert isinstance(gg, ad.StagedProgram)
    expected = ad.grad(lambda k: ad.grad(rk4_energy, argnums=1)(Y0, k, 0.05))(K)
    assert_allclose(_assert_reloads(gg, Y0, K, 0.05), expected, rtol=1e-10)
    # hvp of the staged program equals the Hessian times the vector
    v = np.array([0.3, -1.2])
    value, hv = ad.hvp(program)(Y0, K, 0.05, vectors=v)
    assert_allclose(value, rk4_energy(Y0, K, 0.05), rtol=1e-14)
    assert_allclose(hv, hessian @ v, rtol=1e-10)


def euler_energy(y0, k, dt, *, n):
    y = y0
    for _ in range(n):
        y = y + dt * np.stack([y[1], -k * np.sin(y[0])])
    return np.sum(y**2)


def test_float32_euler_keeps_precision_and_types_like_dynamic_and_jax():
    y0 = np.array([1.0, 0.0], np.float32)
    k = np.float32(2.0)
    program = ad.stage(euler_energy, y0, k, 0.05, kw_specs={"n": ad.StaticSpec(10)})
    assert program.signature[0][1].numpy_scalar
    got = _assert_reloads(program, y0, k, 0.05, n=10)
    eager = euler_energy(y0, k, 0.05, n=10)
    assert type(got) is type(eager) is np.float32 and got == eager
    staged = ad.grad(program, argnums=(0, 1, 2))(y0, k, 0.05, n=10)
    dynamic = ad.grad(euler_energy, argnums=(0, 1, 2))(y0, k, 0.05, n=10)
    assert [type(t) for t in staged] == [type(t) for t in dynamic] == [np.ndarray, np.float32,
                                                                        float]
    assert staged[0].dtype == np.float32
    for s, d in zip(staged, dynamic):
        assert_allclose(s, d, rtol=1e-6)
    with pytest.raises(TypeError, match="static value 11 differs"):
        program(y0, k, 0.05, n=11)


def test_euler_gradients_match_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    y0 = np.array([0.7, -0.2])
    k = np.asarray(1.3)

    def jax_energy(y, k, dt):
        for _ in range(10):
            y = y + dt * jnp.stack([y[1], -k * jnp.sin(y[0])])
        return jnp.sum(y**2)

    with _x64(jax):
        expected = jax.grad(jax_energy, argnums=(0, 1, 2))(jnp.asarray(y0), jnp.asarray(k), 0.05)
        expected = [np.asarray(e) for e in expected]
    program = ad.stage(euler_energy, y0, k, 0.05, kw_specs={"n": ad.StaticSpec(10)})
    got = ad.grad(program, argnums=(0, 1, 2))(y0, k, 0.05, n=10)
    for g, e in zip(got, expected):
        assert_allclose(g, e, rtol=1e-12)


# --------------------------------------------------------------------------- Newton solves

A0 = np.array([[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 5.0]])


def newton_unrolled(p, u0):
    u = u0
    for _ in range(8):
        residual = A0 @ u + p * np.sin(u) - 1.0
        jac = A0 + p * np.diag(np.cos(u))
        u = u - np.linalg.solve(jac, residual)
    return np.sum(u**2)


def test_unrolled_newton_staged_derivatives():
    p, u0 = np.asarray(0.3), np.zeros(3)
    program = ad.stage(newton_unrolled, p, u0)
    assert _assert_reloads(program, p, u0) == newton_unrolled(p, u0)
    value, gradient = _assert_reloads(ad.value_and_grad(program), p, u0)
    assert value == newton_unrolled(p, u0)
    fd = (newton_unrolled(p + 1e-6, u0) - newton_unrolled(p - 1e-6, u0)) / 2e-6
    assert_allclose(gradient, fd, rtol=1e-7)
    second = ad.grad(ad.grad(program))(p, u0)
    assert_allclose(second, ad.grad(ad.grad(newton_unrolled))(p, u0), rtol=1e-10)
    pullback = ad.vjp_program(program, argnums=(0, 1))
    gp, gu = _assert_reloads(pullback, p, u0, cotangent=np.float64(2.0))
    assert_allclose(gp, 2 * gradient, rtol=1e-12)
    assert np.max(np.abs(gu)) < 1e-12  # the converged root forgets its initial guess


def _residual(u, p):
    return u**3 + p["a"] * u - p["b"]


def _newton(f, u):
    for _ in range(40):
        u = u - np.linalg.solve(ad.jacobian(f)(u), f(u))
    return u


def _dense_solve(matvec, b):
    a = np.stack([matvec(e) for e in np.eye(b.size)], axis=1)
    return np.linalg.solve(a, b)


def test_implicit_root_with_a_staged_residual():
    u0 = np.ones(3)
    p = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([1.0, 0.5, 2.0])}
    residual = ad.stage(_residual, u0, p)
    root = ad.implicit_root(residual, solve=_newton, linear_solve=_dense_solve)
    eager_root = ad.implicit_root(_residual, solve=_newton, linear_solve=_dense_solve)

    def objective(a, root=root):
        return np.sum(root({"a": a, "b": p["b"]}, initial=u0) ** 2)

    g = ad.grad(objective)(p["a"])
    assert_allclose(g, ad.grad(lambda a: objective(a, eager_root))(p["a"]), rtol=1e-12)
    assert_allclose(g, central_gradient(objective, p["a"]), rtol=1e-6)
    h = ad.hessian(objective)(p["a"])
    assert_allclose(h, ad.hessian(lambda a: objective(a, eager_root))(p["a"]), rtol=1e-10)
    v = np.array([1.0, -1.0, 0.5])
    _, hv = ad.hvp(objective)(p["a"], vectors=v)
    assert_allclose(hv, h @ v, rtol=1e-10)
    # the residual's own Jacobians, through the staged program
    assert_allclose(ad.jacobian(residual)(u0, p), np.diag(3 * u0**2 + p["a"]))
    jp = ad.jacobian(residual, argnums=1)(u0, p)
    assert_allclose(jp["a"], np.diag(u0))
    assert_allclose(jp["b"], -np.eye(3))


# --------------------------------------------------------------------------- checkpoint


def _layer(x, w):
    return np.tanh(x @ w) + 0.1 * x


def _ckpt_loss(x, w):
    block = ad.checkpoint(_layer)
    for _ in range(4):
        x = block(x, w)
    return np.sum(x**2)


def _plain_loss(x, w):
    for _ in range(4):
        x = _layer(x, w)
    return np.sum(x**2)


def test_checkpointed_block_inside_a_staged_loss():
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(3, 4)), 0.5 * rng.normal(size=(4, 4))
    program = ad.stage(_ckpt_loss, x, w)
    assert "checkpoint" not in str(program)
    gx, gw = _assert_reloads(ad.grad(program, argnums=(0, 1)), x, w)
    dx, dw = ad.grad(_plain_loss, argnums=(0, 1))(x, w)
    assert_allclose(gx, dx, rtol=1e-12)
    assert_allclose(gw, dw, rtol=1e-12)
    staged_grad = ad.stage(ad.grad(_ckpt_loss, argnums=1), x, w)
    assert "checkpoint" not in str(staged_grad)
    assert_allclose(staged_grad(x, w), dw, rtol=1e-12)
    # second order of a function calling the staged program
    h = ad.hessian(lambda w: program(x, w))(w)
    assert h.shape == (4, 4, 4, 4)
    assert_allclose(h, ad.hessian(lambda w: _plain_loss(x, w))(w), rtol=1e-10, atol=1e-13)
    # float32 in, float32 out, in every derived program
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    p32 = ad.stage(_ckpt_loss, x32, w32)
    assert type(p32(x32, w32)) is np.float32
    assert [g.dtype for g in ad.grad(p32, argnums=(0, 1))(x32, w32)] == [np.float32] * 2
    pullback = ad.vjp_program(p32, argnums=1)
    assert pullback.signature[1]["cotangent"] == ad.ArraySpec((), "float32")
    assert pullback(x32, w32, cotangent=np.float32(1)).dtype == np.float32
    with pytest.raises(ValueError, match=r"argument\['cotangent'\].*float64"):
        pullback(x32, w32, cotangent=np.float64(1))


# --------------------------------------------------------------------------- MLP training


def _mlp_loss(params, x, y):
    h = np.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return np.mean((out - y) ** 2)


def _train_step(params, x, y, lr):
    g = ad.grad(_mlp_loss)(params, x, y)
    return {k: params[k] - lr * g[k] for k in params}, _mlp_loss(params, x, y)


def _mlp_data(dtype=np.float64):
    rng = np.random.default_rng(0)
    params = {"w1": rng.normal(size=(3, 5)), "b1": np.zeros(5), "w2": rng.normal(size=(5, 1)),
              "b2": np.zeros(1)}
    params = {k: v.astype(dtype) for k, v in params.items()}
    return params, rng.normal(size=(8, 3)).astype(dtype), rng.normal(size=(8, 1)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mlp_training_step_program(dtype):
    params, x, y = _mlp_data(dtype)
    snapshot = {k: v.copy() for k, v in params.items()}
    step = ad.stage(_train_step, params, x, y, 0.1)
    new, loss = _assert_reloads(step, params, x, y, 0.1)
    eager_new, eager_loss = _train_step(params, x, y, 0.1)
    assert type(loss) is type(eager_loss) is np.dtype(dtype).type
    assert_allclose(loss, eager_loss, rtol=1e-6 if dtype == np.float32 else 1e-14)
    assert new.keys() == eager_new.keys()
    for k in params:
        assert new[k].dtype == dtype
        assert_allclose(new[k], eager_new[k], rtol=1e-5 if dtype == np.float32 else 1e-13)
        assert np.array_equal(params[k], snapshot[k])  # the caller's parameters are untouched
    # a training loop with the program; the loss decreases and earlier results stay put
    first = {k: v.copy() for k, v in new.items()}
    p, losses = params, []
    for _ in range(4):
        p, value = step(p, x, y, 0.1)
        losses.append(value)
    assert all(b < a for a, b in zip(losses, losses[1:]))
    for k in params:
        assert np.array_equal(new[k], first[k])


def test_meta_gradient_through_a_staged_training_step():
    params, x, y = _mlp_data()
    step = ad.stage(_train_step, params, x, y, 0.1)

    def meta(lr, step=step):
        new, _ = step(params, x, y, lr)
        return _mlp_loss(new, x, y)

    g = ad.grad(meta)(0.1)
    assert type(g) is float
    assert_allclose(g, ad.grad(lambda lr: meta(lr, _train_step))(0.1), rtol=1e-12)
    assert_allclose(g, (meta(0.1 + 1e-6) - meta(0.1 - 1e-6)) / 2e-6, rtol=1e-6)


def test_mlp_gradient_matches_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    params, x, y = _mlp_data()

    def jax_loss(params):
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)

    with _x64(jax):
        expected = jax.grad(jax_loss)({k: jnp.asarray(v) for k, v in params.items()})
        expected = {k: np.asarray(v) for k, v in expected.items()}
    got = ad.grad(ad.stage(_mlp_loss, params, x, y))(params, x, y)
    for k in params:
        assert_allclose(got[k], expected[k], rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------- keyword losses


LOSS_SPECS = dict(
    specs=(ad.ArraySpec((4,), "float64"), ad.ArraySpec((4,), "float64")),
    kw_specs={"weight": ad.ArraySpec((4,), "float64"), "reg": ad.ArraySpec((), "float64"),
              "opts": {"kind": ad.StaticSpec("huber"), "delta": ad.StaticSpec(0.5)}},
)


def _robust_loss(pred, target, *, weight, reg, opts):
    r = pred - target
    if opts["kind"] == "huber":
        d = opts["delta"]
        a = np.abs(r)
        per = np.where(a < d, 0.5 * r**2, d * (a - 0.5 * d))
    else:
        per = r**2
    return np.sum(weight * per) + reg * np.sum(pred**2)


PRED = np.array([0.1, 1.0, -0.7, 0.3])
TARGET = np.array([0.0, 0.2, 0.1, 0.9])
KW = {"weight": np.array([1.0, 2.0, 0.5, 1.5]), "reg": np.asarray(0.01),
      "opts": {"kind": "huber", "delta": 0.5}}


def test_keyword_loss_and_its_derived_programs():
    program = ad.stage(**LOSS_SPECS)(_robust_loss)
    value = _assert_reloads(program, PRED, TARGET, **KW)
    eager = _robust_loss(PRED, TARGET, **KW)
    assert type(value) is type(eager) and value == eager

    def dyn(pred, target, weight, reg):
        return _robust_loss(pred, target, weight=weight, reg=reg, opts=KW["opts"])

    d_pred, d_target, d_weight, d_reg = ad.grad(dyn, argnums=(0, 1, 2, 3))(
        PRED, TARGET, KW["weight"], KW["reg"])

    pullback = ad.vjp_program(program, argnums=(0,), argnames=("weight", "reg"))
    assert "cotangent" in pullback.signature[1]
    (gp,), named = _assert_reloads(pullback, PRED, TARGET, **KW, cotangent=np.float64(2.0))
    assert list(named) == ["weight", "reg"]
    assert_allclose(gp, 2 * d_pred, rtol=1e-14)
    assert_allclose(named["weight"], 2 * d_weight, rtol=1e-14)
    assert type(named["reg"]) is np.ndarray and named["reg"].shape == ()
    assert_allclose(named["reg"], 2 * d_reg, rtol=1e-14)
    # a 0-d array cotangent is accepted as well, and an integer argnums returns the leaf itself
    last = ad.vjp_program(program, argnums=-1)(PRED, TARGET, **KW, cotangent=np.asarray(1.0))
    assert_allclose(last, d_target, rtol=1e-14)

    positional, named = ad.grad(program, argnums=1, argnames=("reg",))(PRED, TARGET, **KW)
    assert_allclose(positional, d_target, rtol=1e-14)
    assert_allclose(named["reg"], d_reg, rtol=1e-14)
    v, g = ad.value_and_grad(program, argnames=("weight",))(PRED, TARGET, **KW)
    assert v == eager and list(g) == ["weight"]
    assert_allclose(g["weight"], d_weight, rtol=1e-14)
    grads = central_gradient(lambda w: _robust_loss(PRED, TARGET, **{**KW, "weight": w}),
                             KW["weight"])
    assert_allclose(g["weight"], grads, rtol=1e-7)


@pytest.mark.parametrize("change, error, pattern", [
    ({"opts": {"kind": "l2", "delta": 0.5}}, TypeError, r"argument\['opts'\]\['kind'\].*'l2'"),
    ({"opts": {"kind": "huber"}}, TypeError, r"argument\['opts'\].*keys \['delta', 'kind'\]"),
    ({"reg": 0.01}, ValueError, r"argument\['reg'\].*Python float"),
    ({"reg": np.float32(0.01)}, ValueError, r"argument\['reg'\].*float32"),
    ({"weight": np.ones(5)}, ValueError, r"argument\['weight'\].*\(5,\)"),
    ({"extra": np.ones(2)}, TypeError, r"unexpected \['extra'\]"),
])
def test_keyword_loss_contract_errors(change, error, pattern):
    program = ad.stage(**LOSS_SPECS)(_robust_loss)
    with pytest.raises(error, match=pattern):
        program(PRED, TARGET, **{**KW, **change})


def test_call_contract_errors_name_the_leaf():
    program = ad.stage(**LOSS_SPECS)(_robust_loss)
    with pytest.raises(TypeError, match=r"missing \['opts'\]"):
        program(PRED, TARGET, weight=KW["weight"], reg=KW["reg"])
    with pytest.raises(TypeError, match="2 positional arguments, got 1"):
        program(PRED, **KW)
    with pytest.raises(ValueError, match=r"argument\[0\].*float32"):
        program(PRED.astype(np.float32), TARGET, **KW)
    with pytest.raises(TypeError, match=r"argument\[0\].*list"):
        program(PRED.tolist(), TARGET, **KW)
    pullback = ad.vjp_program(program)
    with pytest.raises(TypeError, match=r"missing \['cotangent'\]"):
        pullback(PRED, TARGET, **KW)
    with pytest.raises(ValueError, match=r"argument\['cotangent'\].*\(2,\)"):
        pullback(PRED, TARGET, **KW, cotangent=np.ones(2))
    with pytest.raises(ValueError, match="'nope' is not a keyword input"):
        ad.vjp_program(program, argnames=("nope",))
    with pytest.raises(IndexError, match="out of range"):
        ad.vjp_program(program, argnums=-3)


State = collections.namedtuple("State", "pos vel")


def _energy(s, params):
    return 0.5 * np.sum(s.vel**2) + params[0] * np.sum(s.pos**2) + params[1]


def test_pytree_structure_errors_and_namedtuple_gradients():
    s = State(np.ones(2), np.zeros(2))
    prm = [np.asarray(1.0), np.asarray(0.5)]
    program = ad.stage(_energy, s, prm)
    with pytest.raises(TypeError, match=r"argument\[0\].*expected a State, got a tuple"):
        program((np.ones(2), np.zeros(2)), prm)
    with pytest.raises(TypeError, match=r"argument\[1\].*list of length 2, got a tuple"):
        program(s, tuple(prm))
    with pytest.raises(TypeError, match=r"argument\[1\].*got a list of length 3"):
        program(s, [*prm, np.asarray(1.0)])
    with pytest.raises(ValueError, match=r"argument\[0\]\[0\].*\(3,\)"):
        program(State(np.ones(3), np.zeros(3)), prm)
    with pytest.raises(TypeError, match=r"argument\[0\]\[1\].*NoneType"):
        program(State(np.ones(2), None), prm)
    with pytest.raises(ValueError, match=r"argument\[0\]\[0\].*int64"):
        program(State(np.ones(2, np.int64), np.zeros(2)), prm)
    gradient = _assert_reloads(ad.grad(program), s, prm)
    assert type(gradient) is State
    assert_allclose(gradient.pos, 2 * s.pos)
    assert_allclose(gradient.vel, s.vel)


def test_static_options_round_trip_and_mismatch():
    def scaled(x, *, cfg):
        y = x * cfg["gain"]
        for a in cfg["shifts"]:
            y = y + a
        if cfg["clip"] is not None:
            y = np.clip(y, *cfg["clip"])
        return np.sum(y) + cfg["tol"]

    cfg = {"gain": 1.5, "shifts": (1, 2.5), "clip": (-1.0, float("inf")), "tol": 1e-3}
    program = ad.stage(scaled, np.ones(3), kw_specs={"cfg": ad.StaticSpec(cfg)})
    assert _assert_reloads(program, np.ones(3), cfg=cfg) == scaled(np.ones(3), cfg=cfg)
    with pytest.raises(TypeError, match="static value"):
        program(np.ones(3), cfg={**cfg, "shifts": [1, 2.5]})
    with pytest.raises(TypeError, match="static value"):
        _json_roundtrip(program)(np.ones(3), cfg={**cfg, "gain": 1.5000001})
    with pytest.raises(TypeError, match="saved format cannot represent"):
        ad.stage(lambda x, *, c: x + c, np.ones(2),
                 kw_specs={"c": ad.StaticSpec(np.float32(2))}).to_dict()


# --------------------------------------------------------------------------- types vs eager

X = np.linspace(0.0, 1.0, 5)
X32 = X.astype(np.float32)
I64 = np.arange(5)
I8 = np.arange(5, dtype=np.int8)

TYPE_CASES = {
    "sum": (lambda x: np.sum(x), (X,)),
    "sum32": (lambda x: np.sum(x), (X32,)),
    "mean_int": (lambda x: np.mean(x), (I64,)),
    "sum_int8": (lambda x: np.sum(x), (I8,)),
    "mean_int8": (lambda x: x.mean(), (I8,)),
    "prod_int8": (lambda x: np.prod(x + 1), (I8,)),
    "cumsum_int8": (lambda x: np.cumsum(x), (I8,)),
    "index": (lambda x: x[2], (X,)),
    "index_ellipsis": (lambda x: x[2, ...], (X,)),
    "weak_times_f32": (lambda x, s: x * s, (X32, 2.0)),
    "weak_only": (lambda x, s: s * 2 + 1, (X, 2.0)),
    "int_power": (lambda x, n: x**n, (X32, 3)),
    "weak_int_only": (lambda n: n * 2, (3,)),
    "numpy_scalar": (lambda s: s * 2, (np.float32(1.5),)),
    "numpy_scalar_copy": (lambda s: s.copy(), (np.float32(1.5),)),
    "numpy_scalar_view": (lambda s: s[...], (np.float32(1.5),)),
    "numpy_scalar_plus_array": (lambda s, x: s + x, (np.float32(1.5), X)),
    "zeros": (lambda x: np.zeros(()), (X,)),
    "where": (lambda x: np.where(x[0] > 0.5, x[1], x[2]), (X,)),
    "int_true_divide": (lambda i: i / 2, (I64,)),
    "int_floor_divide": (lambda i: i // 2, (I64,)),
    "int32_times_weak_int": (lambda i, s: i * s, (I64.astype(np.int32), 2)),
    "int32_times_weak_float": (lambda i, s: i * s, (I64.astype(np.int32), 2.0)),
    "folded": (lambda x: np.sum(np.ones(3)), (X,)),
    "dot": (lambda x: x @ x, (X,)),
    "argmax": (lambda x: np.argmax(x), (X,)),
    "max32": (lambda x: x.max(), (X32,)),
    "compare": (lambda x: x > 0.5, (X,)),
    "any": (lambda x: np.any(x > 0.5), (X,)),
    "identity": (lambda x: x, (X,)),
    "identity_0d": (lambda x: x, (np.asarray(1.0),)),
    "identity_numpy_scalar": (lambda x: x, (np.float64(1.0),)),
    "mixed_tuple": (lambda x: (x.sum(), x[0], x * 2, np.float32(3) * x[1]), (X32,)),
    "item": (lambda x: x[0].item() * 2.0, (X,)),
    "norm32": (lambda x: np.linalg.norm(x), (X32,)),
    "bool_sum": (lambda b: np.sum(b), (np.array([True, False, True]),)),
    "float16": (lambda x: np.exp(x) * 2.0, (X.astype(np.float16),)),
    "complex64": (lambda z: np.abs(z) ** 2, (X.astype(np.complex64),)),
    "std32": (lambda x: x.std(), (X32,)),
    "astype_int16": (lambda x: x.astype(np.int16), (X32 * 10,)),
    "uint8_wrap": (lambda u: u - 1, (np.arange(3, dtype=np.uint8),)),
    "weak_base_power": (lambda s, x: s**x, (2, X32)),
    "weak_bool": (lambda b, x: x * b, (True, X)),
    "float64_scalar_times_f32": (lambda s, x: s * x, (np.float64(2.0), X32)),
    "det": (lambda m: np.linalg.det(m), (2 * np.eye(3),)),
}


@pytest.mark.parametrize("name", sorted(TYPE_CASES))
def test_staged_results_have_eager_numpy_values_dtypes_and_types(name):
    f, args = TYPE_CASES[name]
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    eager = f(*args)
    program = ad.stage(f, *args)
    _same(_assert_reloads(program, *args), eager)
    for a, c in zip(args, copies):
        if isinstance(a, np.ndarray):
            assert np.array_equal(a, c)


# --------------------------------------------------------------------------- aliasing


def test_outputs_do_not_change_when_called_again_and_inputs_stay_put():
    n = 50_000

    def f(x, y):
        a = np.sin(x) * 2
        c = np.exp(-a) * y
        d = c * (a + 1) - a
        return a, d, d.reshape(-1)[::2], np.sum(d), c

    x = np.linspace(0.0, 1.0, n)
    y = np.cos(x)
    xs, ys = x.copy(), y.copy()
    program = ad.stage(f, x, y)
    first = program(x, y)
    kept = [np.array(t, copy=True) for t in first]
    program(3 * x, y + 1)
    for got, want in zip(first, kept):
        assert np.array_equal(got, want)
    first[0][:] = 7.0  # writing into one call's results changes nothing later
    first[4][:] = 9.0
    _same(program(x, y), f(xs, ys))
    assert np.array_equal(x, xs) and np.array_equal(y, ys)

    vg = ad.value_and_grad(ad.stage(lambda x, y: np.sum(f(x, y)[1] ** 2), x, y),
                           argnums=(0, 1))
    _, (gx, gy) = vg(x, y)
    gx0, gy0 = gx.copy(), gy.copy()
    vg(x + 1, y)
    assert np.array_equal(gx, gx0) and np.array_equal(gy, gy0)


@pytest.mark.parametrize("f", [lambda x: x * 1.0, lambda x: x + 0.0, lambda x: x.copy(),
                               lambda x: x.reshape(3), lambda x: -(-x), lambda x: x[:]],  # noqa: B002,
                         ids=["mul1", "add0", "copy", "reshape", "negneg", "slice"])
def test_optimized_away_ops_never_hand_back_the_callers_buffer(f):
    x = np.linspace(0.0, 1.0, 3)
    program = ad.stage(f, x)
    given = x.copy()
    out = program(given)
    out[0] = 50.0
    assert np.array_equal(given, x)
    pullback = ad.vjp_program(program)
    cotangent = np.array([1.0, 2.0, 3.0])
    ct = pullback(x, cotangent=cotangent)
    assert not np.shares_memory(ct, cotangent)
    ct[0] = 100.0
    assert np.array_equal(cotangent, [1.0, 2.0, 3.0])


def test_returned_constants_cannot_change_later_calls():
    # A captured array the program returns is read-only on NumPy (the spec); a folded constant
    # (the gradient of np.sum) is a fresh copy, as writable as dynamic grad's: `g *= lr` works
    c = np.array([1.0, 2.0, 3.0])
    program = ad.stage(lambda x: (c, x + c, c * 2, np.ones(3)), np.zeros(3))
    outs = program(np.zeros(3))
    for out in (outs[0], outs[2], outs[3]):
        with pytest.raises(ValueError, match="read-only"):
            out[0] = 99.0
    outs[1][0] = 99.0
    _same(program(np.zeros(3)), (c, c + 0.0, 2 * c, np.ones(3)))
    gradient = ad.grad(ad.stage(lambda x: np.sum(x), np.zeros(3)))
    g = gradient(np.zeros(3))
    assert g.flags.writeable and ad.grad(lambda x: np.sum(x))(np.zeros(3)).flags.writeable
    g *= 0.5
    assert_allclose(gradient(np.zeros(3)), np.ones(3))


def test_selected_integer_bool_and_python_int_inputs():
    x = np.linspace(-1.0, 1.0, 3)
    p_int = ad.stage(lambda x, n: np.sum(x**2) * n[1], x, np.arange(3))
    staged = ad.grad(p_int, argnums=(0, 1))(x, np.arange(3))[1]
    dynamic = ad.grad(lambda x, n: np.sum(x**2) * n[1], argnums=(0, 1))(x, np.arange(3))[1]
    _same(staged, dynamic)
    assert staged.dtype == np.int64
    p_bool = ad.stage(lambda x, b: np.sum(x**2) * b, x, True)
    _same(ad.grad(p_bool, argnums=1)(x, True),
          ad.grad(lambda x, b: np.sum(x**2) * b, argnums=1)(x, True))
    p_pow = ad.stage(lambda x, n: np.sum(np.abs(x) ** n), x, 2)
    g = ad.grad(p_pow, argnums=1)(x, 2)
    assert type(g) is float
    assert_allclose(g, ad.grad(lambda x, n: np.sum(np.abs(x) ** n), argnums=1)(x, 2))
    with pytest.raises(TypeError, match="Python int"):
        ad.vjp_program(p_pow, argnums=1)


def test_third_order_and_jvp_of_staged_derivatives_match_jax():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    x = np.linspace(0.0, 1.0, 4)
    k = np.asarray(0.7)

    def f(k, x):
        return np.sum(np.sin(k * x) ** 2 / (1 + k**2))

    def jf(k, x):
        return jnp.sum(jnp.sin(k * x) ** 2 / (1 + k**2))

    program = ad.stage(f, k, x)
    g1 = ad.grad(program)
    g3 = ad.grad(ad.grad(g1))
    with _x64(jax):
        third = float(jax.grad(jax.grad(jax.grad(jf)))(0.7, jnp.asarray(x)))
        mixed = np.asarray(jax.jacobian(jax.grad(jf), argnums=1)(0.7, jnp.asarray(x)))
    assert_allclose(_assert_reloads(g3, k, x), third, rtol=1e-12)
    v = np.array([1.0, 0.5, -0.2, 0.3])
    value, tangent = ad.jvp(g1, argnums=1)(k, x, tangents=v)
    assert_allclose(value, g1(k, x), rtol=1e-15)
    assert_allclose(tangent, mixed @ v, rtol=1e-12)
    assert_allclose(ad.vjp_program(ad.grad(program, argnums=1), argnums=0)(k, x, cotangent=v),
                    mixed @ v, rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.complex64])
def test_restored_constants_have_native_byte_order(dtype):
    # a restored constant was decoded as little-endian ('<f4'): equal to float32, but results
    # computed from it reported dtype('<f4') (repr, str) where the original gave float32
    c = np.arange(4, dtype=dtype).reshape(2, 2)
    program = ad.stage(lambda x: (c @ x, c), np.ones(2, dtype))
    for restored in (_json_roundtrip(program), _pickle_roundtrip(program)):
        for got, want in zip(restored(np.ones(2, dtype)), program(np.ones(2, dtype))):
            assert got.dtype.byteorder == want.dtype.byteorder
            assert str(got.dtype) == str(want.dtype) == np.dtype(dtype).name
            assert repr(got) == repr(want)
        assert all(const.dtype.isnative and str(const.dtype) == np.dtype(dtype).name
                   for const in restored.graph.constants.values())


def _configured(cfg, x):
    y = x * cfg["scale"]
    return np.sum(y ** cfg["p"]) if cfg["mode"] == "pow" else np.sum(y)


def test_static_leaves_inside_a_positional_dict_and_nested_staging():
    x = np.linspace(0.1, 1.0, 3)
    cfg = {"scale": np.asarray(2.0), "p": 3, "mode": "pow"}
    program = ad.stage(_configured, {"scale": np.asarray(2.0), "p": ad.StaticSpec(3),
                                     "mode": ad.StaticSpec("pow")}, x)
    assert _assert_reloads(program, cfg, x) == _configured(cfg, x)
    assert_allclose(ad.grad(program, argnums=-1)(cfg, x),
                    ad.grad(_configured, argnums=1)(cfg, x), rtol=1e-14)
    with pytest.raises(TypeError, match="static value 3"):
        ad.grad(program, argnums=0)  # p's number is a compile-time constant

    def outer(s, x):
        return 2 * program({"scale": s, "p": 3, "mode": "pow"}, x)

    nested = ad.stage(outer, np.asarray(2.0), x)
    assert _assert_reloads(nested, np.asarray(2.0), x) == 2 * _configured(cfg, x)
    h = ad.hessian(nested, argnums=(0, 1))(np.asarray(2.0), x)
    hd = ad.hessian(lambda s, x: 2 * _configured({"scale": s, "p": 3, "mode": "pow"}, x),
                    argnums=(0, 1))(np.asarray(2.0), x)
    for a in range(2):
        for b in range(2):
            assert_allclose(h[a][b], hd[a][b], rtol=1e-12)
    with pytest.raises(TypeError, match=r"argument\[0\]\['p'\].*static value 2"):
        ad.stage(lambda s, x: program({"scale": s, "p": 2, "mode": "pow"}, x),
                 np.asarray(2.0), x)
    with pytest.raises(ValueError, match=r"argument\[1\].*traced array of float64\[2\]"):
        ad.stage(lambda s, x: program({"scale": s, "p": 3, "mode": "pow"}, x[:2]),
                 np.asarray(2.0), x)
    with pytest.raises(ValueError, match=r"argument\[1\].*traced array of float32\[3\]"):
        ad.grad(lambda x: program(cfg, x.astype(np.float32)))(x)


@pytest.mark.parametrize("example", [2.0, np.float32(2.0), np.asarray(2.0)],
                         ids=["python", "numpy-scalar", "0d-array"])
@pytest.mark.parametrize("transform", ["jacobian", "hessian", "hvp", "grad2"])
def test_dense_transforms_of_a_scalar_program_have_the_dynamic_types(example, transform):
    def cube(k):
        return k**3 if not isinstance(k, np.ndarray) else np.sum(k**3)

    def apply(f):
        if transform == "hvp":
            return ad.hvp(f)(example, vectors=type(example)(1.0) if not isinstance(
                example, np.ndarray) else np.asarray(1.0))
        if transform == "grad2":
            return ad.grad(ad.grad(f))(example)
        return getattr(ad, transform)(f)(example)

    _same(apply(ad.stage(cube, example)), apply(cube))


def _integrate_in_place(y0, k):
    y = y0.copy()
    buf = np.empty_like(y)
    for _ in range(5):
        np.multiply(y, -k, out=buf)
        y += 0.1 * buf
        y[0] = y[0] * 0.99
    return y


def test_in_place_integrator_is_functionalized_in_every_derived_program():
    y0, k = np.array([1.0, 2.0]), np.asarray(0.5)
    kept = y0.copy()
    program = ad.stage(_integrate_in_place, y0, k)
    _same(_assert_reloads(program, y0, k), _integrate_in_place(kept, k))
    assert np.array_equal(y0, kept)
    jac = ad.jacobian(program, argnums=(0, 1))(y0, k)
    dyn = ad.jacobian(_integrate_in_place, argnums=(0, 1))(y0, k)
    for a, b in zip(jac, dyn):
        assert_allclose(a, b, rtol=1e-14)
    pullback = ad.vjp_program(program, argnums=1)
    assert_allclose(_assert_reloads(pullback, y0, k, cotangent=np.ones(2)), dyn[1].sum(),
                    rtol=1e-14)
    assert np.array_equal(y0, kept)

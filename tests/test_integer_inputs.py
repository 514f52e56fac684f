"""Integer, bool and non-array inputs in every transform: zero derivatives of the input's shape
and dtype, and the function runs exactly as without the transform."""

import numpy as np
import pytest

import advect as ad

X = np.array([1.0, 2.0, 3.0])
K = np.array([1, 0, 2])


def f(x, k):  # k indexes, counts and takes part in bitwise ops, as it would without Advect
    return np.sum(x[k] ** 2) + np.sum(np.bincount(k)) + np.sum(k & 1)


def _zeros_like_k(g):
    assert g.dtype == K.dtype and g.shape == K.shape and not g.any()


def test_grad_value_and_grad_and_vjp():
    gx, gk = ad.grad(f, argnums=(0, 1))(X, K)
    np.testing.assert_allclose(gx, 2 * X)
    _zeros_like_k(gk)
    value, gk = ad.value_and_grad(f, argnums=1)(X, K)
    assert value == f(X, K)
    _zeros_like_k(gk)
    value, pullback = ad.vjp(f, argnums=(0, 1))(X, K)
    gx, gk = pullback(1.0)
    np.testing.assert_allclose(gx, 2 * X)
    _zeros_like_k(gk)


def test_jvp_takes_none_or_zero_tangents_and_refuses_others():
    expected = np.sum(2 * X)
    for tk in (None, np.zeros(3, int), np.zeros(3)):
        value, t = ad.jvp(f, argnums=(0, 1))(X, K, tangents=(np.ones(3), tk))
        assert value == f(X, K) and t == pytest.approx(expected)
    with pytest.raises(ValueError, match="zero"):
        ad.jvp(f, argnums=(0, 1))(X, K, tangents=(np.ones(3), np.ones(3, int)))
    value, t = ad.jvp(f, argnums=1)(X, K, tangents=None)  # nothing differentiable: zero
    assert t == 0.0


def test_linearize_and_jacobian():
    value, lin = ad.linearize(f, X, K, argnums=(0, 1))
    assert lin((np.ones(3), None)) == pytest.approx(np.sum(2 * X))
    gx, gk = lin.pullback(1.0)
    np.testing.assert_allclose(gx, 2 * X)
    _zeros_like_k(gk)
    jx, jk = ad.jacobian(lambda x, k: x[k] * 2, argnums=(0, 1))(X, K)
    np.testing.assert_allclose(jx, 2 * np.eye(3)[K])
    assert jk.shape == (3, 3) and jk.dtype == K.dtype and not jk.any()


def test_hessians():
    (hxx, hxk), (hkx, hkk) = ad.hessian(f, argnums=(0, 1))(X, K)
    np.testing.assert_allclose(hxx, 2 * np.eye(3))
    assert not hxk.any() and not hkx.any() and not hkk.any()
    _zeros_like_k(ad.hessian_diag(f, argnums=1)(X, K))


def test_bool_inputs_and_a_traced_count():
    mask = np.array([True, False, True])
    np.testing.assert_allclose(ad.grad(lambda x, m: np.sum(x ** 2 * m))(X, mask), [2, 0, 6])
    g = ad.grad(lambda x, m: np.sum(x ** 2 * m), 1)(X, mask)
    assert g.dtype == np.bool_ and g.shape == (3,) and not g.any()
    n = np.int64(2)
    gn, gx = ad.grad(lambda n, x: np.sum(np.split(x, n)[0]) + (n & 3), argnums=(0, 1))(
        n, np.arange(4.0))
    assert gn == 0 and gn.dtype == np.int64
    np.testing.assert_allclose(gx, [1, 1, 0, 0])
    i = np.ravel_multi_index((np.array([1]), np.array([2])), (2, 3))
    _, g = ad.grad(lambda x, i: np.sum(x.reshape(2, 3).ravel()[i]), argnums=(0, 1))(
        np.arange(6.0), i)
    assert g.dtype == i.dtype and not g.any()


def test_non_array_leaves_pass_through_with_none():
    g = ad.grad(lambda d: np.sum(d["x"] ** 2) * len(d["name"]))({"x": X, "name": "abc"})
    assert g["name"] is None
    np.testing.assert_allclose(g["x"], 6 * X)


def test_a_bool_tangent_for_a_real_input_is_a_type_error():
    with pytest.raises(TypeError, match="bool tangent"):
        ad.jvp(np.sin)(X, tangents=np.ones(3, bool))


def test_staged_derivatives_of_integer_inputs():
    g = lambda x, k: np.sum(x[k] ** 2) + np.sum(k & 1)
    program = ad.stage(g, X, K)
    gx, gk = ad.grad(program, argnums=(0, 1))(X, K)
    np.testing.assert_allclose(gx, 2 * X)
    _zeros_like_k(gk)
    restored = ad.StagedProgram.from_dict(ad.grad(program, argnums=(0, 1)).to_dict())
    _zeros_like_k(restored(X, K)[1])
    gx, gk = ad.vjp_program(program, argnums=(0, 1))(X, K, cotangent=np.asarray(1.0))
    np.testing.assert_allclose(gx, 2 * X)
    _zeros_like_k(gk)

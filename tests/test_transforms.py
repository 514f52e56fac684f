"""The dynamic transforms against closed forms: selection rules, Pullback, LinearMap, dense
derivatives, nesting, control flow, dtypes and the complex convention."""

import math
from collections import namedtuple

import numpy as np
import pytest

import advect as ad

X = np.array([0.5, -1.0, 2.0])
Y = np.array([1.5, 0.25, -0.75])


def _dot(x, y):
    return np.sum(x * y)


# --- grad and value_and_grad: selection ----------------------------------------------------

def test_grad_defaults_to_the_first_input():
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(np.sin(x) ** 2))(X),
                               2 * np.sin(X) * np.cos(X), rtol=1e-14)


@pytest.mark.parametrize("argnums, expected", [
    (1, X), (-1, X), (-2, Y), ((0, 1), (Y, X)), ((1, 0), (X, Y)), ((-1,), (X,)),
    (np.int64(1), X),
])
def test_grad_argnums(argnums, expected):
    g = ad.grad(_dot, argnums)(X, Y)
    if isinstance(expected, tuple):
        assert isinstance(g, tuple) and len(g) == len(expected)
        for a, b in zip(g, expected):
            np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_array_equal(g, expected)


def test_grad_argnames_gives_a_dict():
    f = lambda x, *, y, z: np.sum(x * y * z)
    g = ad.grad(f, argnames=("y", "z"))(X, y=Y, z=2.0)
    assert set(g) == {"y", "z"}
    np.testing.assert_array_equal(g["y"], 2.0 * X)
    assert g["z"] == pytest.approx(np.sum(X * Y)) and type(g["z"]) is float


def test_grad_argnames_string_and_argnums_together():
    f = lambda x, *, y: np.sum(x ** 2 * y)
    pos, named = ad.grad(f, argnums=0, argnames="y")(X, y=Y)
    np.testing.assert_array_equal(pos, 2 * X * Y)
    np.testing.assert_array_equal(named["y"], X ** 2)
    (pos,), named = ad.grad(f, argnums=(0,), argnames=["y"])(X, y=Y)
    np.testing.assert_array_equal(pos, 2 * X * Y)


def test_value_and_grad_returns_value_and_gradient():
    value, g = ad.value_and_grad(lambda x: np.sum(x ** 3))(X)
    assert float(value) == pytest.approx(np.sum(X ** 3))
    np.testing.assert_allclose(g, 3 * X ** 2)


def test_has_aux():
    f = lambda x: (np.sum(x ** 2), {"double": 2 * x, "label": "ok"})
    g, aux = ad.grad(f, has_aux=True)(X)
    np.testing.assert_array_equal(g, 2 * X)
    np.testing.assert_array_equal(aux["double"], 2 * X)
    assert aux["label"] == "ok" and not ad.is_traced(aux["double"])
    value, g, aux = ad.value_and_grad(f, has_aux=True)(X)
    assert float(value) == pytest.approx(np.sum(X ** 2))
    np.testing.assert_array_equal(g, 2 * X)
    assert aux["label"] == "ok"


def test_has_aux_needs_a_pair():
    with pytest.raises(TypeError, match="pair"):
        ad.grad(lambda x: np.sum(x), has_aux=True)(X)


def test_python_scalars_are_lifted_and_gradients_are_python_floats():
    g = ad.grad(lambda x, y: x ** 2 * y, argnums=(0, 1))(3.0, 2)
    assert g == (12.0, 9.0)
    assert all(type(v) is float for v in g)
    assert type(ad.grad(lambda x: x * x)(1.5)) is float


def test_grad_of_non_scalar_output_raises():
    with pytest.raises(ValueError, match="scalar output"):
        ad.grad(lambda x: x * 2)(X)


def test_grad_of_complex_output_raises():
    with pytest.raises(ValueError, match="real output"):
        ad.grad(lambda z: np.sum(z * z))(X + 1j)


def test_grad_argnums_out_of_range_raises_index_error():
    with pytest.raises(IndexError, match="out of range"):
        ad.grad(_dot, argnums=2)(X, Y)
    with pytest.raises(IndexError):
        ad.grad(_dot, argnums=-3)(X, Y)


def test_grad_of_integer_and_bool_inputs_is_zeros_of_their_dtype():
    g = ad.grad(lambda x: np.sum(x * 1.0))(np.arange(3))
    assert g.dtype == np.int64 and g.shape == (3,) and not g.any()
    g = ad.grad(lambda b: 1.0)(True)
    assert g.dtype == np.bool_ and g.shape == () and not g


def test_grad_of_missing_argname_raises():
    with pytest.raises(ValueError, match="argnames"):
        ad.grad(lambda x, **kw: np.sum(x), argnames="w")(X)


def test_grad_of_constant_function_is_zero():
    g = ad.grad(lambda x: 3.0)(X)
    np.testing.assert_array_equal(g, np.zeros(3))


# --- vjp -----------------------------------------------------------------------------------

def test_vjp_pullback_is_single_use():
    value, pullback = ad.vjp(np.sin)(X)
    np.testing.assert_array_equal(value, np.sin(X))
    np.testing.assert_allclose(pullback(Y), Y * np.cos(X))
    with pytest.raises(RuntimeError, match="single-use"):
        pullback(Y)


def test_vjp_pullback_close_and_context_manager():
    _, pullback = ad.vjp(np.sin)(X)
    pullback.close()
    with pytest.raises(RuntimeError):
        pullback(Y)
    with ad.vjp(np.exp)(X)[1] as pullback:
        np.testing.assert_allclose(pullback(Y), Y * np.exp(X))
    with pytest.raises(RuntimeError):
        pullback(Y)


def test_vjp_with_pytree_output_and_tuple_argnums():
    f = lambda x, y: {"p": x * y, "s": np.sum(x)}
    value, pullback = ad.vjp(f, (0, 1))(X, Y)
    gx, gy = pullback({"p": np.ones(3), "s": 2.0})
    np.testing.assert_allclose(gx, Y + 2.0)
    np.testing.assert_allclose(gy, X)


def test_vjp_rejects_a_cotangent_of_the_wrong_shape_or_structure():
    _, pullback = ad.vjp(np.sin)(X)
    with pytest.raises(ValueError, match="shape"):
        pullback(np.ones(4))
    np.testing.assert_allclose(pullback(Y), Y * np.cos(X))  # a refused call does not consume it
    _, pullback = ad.vjp(lambda x: (x, x))(X)
    with pytest.raises(TypeError, match="structure"):
        pullback(np.ones(3))


# --- jvp -----------------------------------------------------------------------------------

def test_jvp_single_and_tuple_argnums():
    value, tangent = ad.jvp(np.sin)(X, tangents=Y)
    np.testing.assert_allclose(tangent, np.cos(X) * Y)
    value, tangent = ad.jvp(lambda x, y: x * y, (0, 1))(X, Y, tangents=(np.ones(3), 2 * np.ones(3)))
    np.testing.assert_allclose(tangent, Y + 2 * X)


def test_jvp_gives_zero_tangents_to_outputs_that_do_not_depend_on_inputs():
    value, tangent = ad.jvp(lambda x: (2 * x, np.ones(2), 7.0))(X, tangents=Y)
    np.testing.assert_array_equal(tangent[0], 2 * Y)
    np.testing.assert_array_equal(tangent[1], np.zeros(2))
    assert float(tangent[2]) == 0.0


def test_jvp_rejects_tangent_of_wrong_shape():
    with pytest.raises(ValueError, match="shape"):
        ad.jvp(np.sin)(X, tangents=np.ones(2))


# --- linearize -----------------------------------------------------------------------------

def test_linear_map_apply_pullback_transpose_and_batches():
    f = lambda x: np.sin(x) * x
    deriv = np.cos(X) * X + np.sin(X)
    value, lm = ad.linearize(f, X)
    np.testing.assert_allclose(value, f(X))
    np.testing.assert_allclose(lm(Y), deriv * Y)
    np.testing.assert_allclose(lm(Y), deriv * Y)  # reusable
    np.testing.assert_allclose(lm.pullback(Y), deriv * Y)
    np.testing.assert_allclose(lm.transpose()(Y), deriv * Y)
    many = lm.apply_many([Y, 2 * Y])
    np.testing.assert_allclose(many[1], 2 * deriv * Y)
    np.testing.assert_allclose(lm.transpose_many([Y, X])[1], deriv * X)


def test_transposed_linear_map_pulls_back_to_the_jvp():
    _, lm = ad.linearize(lambda x: np.cumsum(x) * x, X)
    adjoint = lm.transpose()
    J = np.tril(np.ones((3, 3))) * X[:, None] + np.diag(np.cumsum(X))
    np.testing.assert_allclose(adjoint(Y), J.T @ Y)
    np.testing.assert_allclose(adjoint.pullback(Y), J @ Y)
    np.testing.assert_allclose(adjoint.transpose()(Y), J @ Y)
    np.testing.assert_allclose(adjoint.apply_many([Y])[0], J.T @ Y)
    np.testing.assert_allclose(adjoint.transpose_many([Y])[0], J @ Y)


def test_linear_map_of_non_square_function_transposes_to_the_adjoint():
    A = np.arange(6.0).reshape(2, 3)
    _, lm = ad.linearize(lambda x: A @ np.tanh(x), X)
    J = A * (1 - np.tanh(X) ** 2)
    np.testing.assert_allclose(lm(Y), J @ Y)
    np.testing.assert_allclose(lm.transpose()(np.array([1.0, -2.0])), J.T @ [1.0, -2.0])


def test_linear_map_close_and_context_manager():
    _, lm = ad.linearize(np.sin, X)
    transposed = lm.transpose()
    lm.close()
    for call in (lambda: lm(Y), lambda: lm.pullback(Y), lambda: lm.transpose(),
                 lambda: lm.apply_many([Y])):
        with pytest.raises(RuntimeError, match="closed"):
            call()
    with pytest.raises(RuntimeError, match="closed"):
        transposed(Y)  # a transpose shares its map's tape
    with ad.linearize(np.sin, X)[1] as lm:
        lm(Y)
    with pytest.raises(RuntimeError):
        lm(Y)


# --- dense derivatives ---------------------------------------------------------------------

def _poly(x):
    return np.array([1.0, 2.0]) * np.sum(x ** 2) + x[:2] * x[1:]


def _poly_jacobian(x):
    J = 2 * np.outer([1.0, 2.0], x)
    J[0, 0] += x[1]
    J[0, 1] += x[0]
    J[1, 1] += x[2]
    J[1, 2] += x[1]
    return J


def test_jacobian_reverse_mode_more_inputs_than_outputs():
    np.testing.assert_allclose(ad.jacobian(_poly)(X), _poly_jacobian(X))


def test_jacobian_forward_mode_more_outputs_than_inputs():
    f = lambda x: np.outer(np.sin(x), x)  # 9 outputs, 3 inputs
    J = ad.jacobian(f)(X)
    assert J.shape == (3, 3, 3)
    expected = np.zeros((3, 3, 3))
    for i in range(3):
        for j in range(3):
            expected[i, j, i] += np.cos(X[i]) * X[j]
            expected[i, j, j] += np.sin(X[i])
    np.testing.assert_allclose(J, expected)


def test_jacobian_block_shapes_with_pytrees_in_and_out():
    M = np.arange(6.0).reshape(2, 3)
    f = lambda p: {"mat": p["a"] * p["b"], "total": np.sum(p["a"])}
    J = ad.jacobian(f)({"a": X, "b": M})
    assert J["mat"]["a"].shape == (2, 3, 3)
    assert J["mat"]["b"].shape == (2, 3, 2, 3)
    assert J["total"]["a"].shape == (3,) and J["total"]["b"].shape == (2, 3)
    np.testing.assert_array_equal(J["mat"]["a"], M[:, :, None] * np.eye(3))
    np.testing.assert_array_equal(J["total"]["a"], np.ones(3))
    np.testing.assert_array_equal(J["total"]["b"], np.zeros((2, 3)))


def test_jacobian_forward_mode_with_pytrees_in_and_out():
    f = lambda p: (np.outer(p["u"], p["v"]), {"sq": p["u"] ** 2})  # 8 outputs, 3 inputs
    u, v = np.array([1.0, 2.0]), 3.0
    J = ad.jacobian(f)({"u": u, "v": v})
    outer_v = np.zeros((2, 1, 2))
    outer_v[0, 0, 0], outer_v[1, 0, 1] = v, v
    np.testing.assert_array_equal(J[0]["u"], outer_v)
    np.testing.assert_array_equal(J[0]["v"], u.reshape(2, 1))
    np.testing.assert_array_equal(J[1]["sq"]["u"], np.diag(2 * u))
    np.testing.assert_array_equal(J[1]["sq"]["v"], np.zeros(2))


def test_jacobian_tuple_argnums_and_python_scalar_input():
    Jx, Jy = ad.jacobian(lambda x, y: x * y, (0, 1))(X, Y)
    np.testing.assert_array_equal(Jx, np.diag(Y))
    np.testing.assert_array_equal(Jy, np.diag(X))
    np.testing.assert_array_equal(ad.jacobian(lambda s: s * X)(2.0), X)


def test_jacobian_refuses_complex_outputs():
    with pytest.raises(ValueError, match="real"):
        ad.jacobian(lambda x: x * 1j)(X)


def _cubic(x, y):
    return np.sum(x ** 2 * y) + np.sum(y ** 3)


def test_hessian_single_and_tuple_argnums():
    np.testing.assert_allclose(ad.hessian(_cubic)(X, Y), np.diag(2 * Y))
    H = ad.hessian(_cubic, (0, 1))(X, Y)
    np.testing.assert_allclose(H[0][0], np.diag(2 * Y))
    np.testing.assert_allclose(H[0][1], np.diag(2 * X))
    np.testing.assert_allclose(H[1][0], np.diag(2 * X))
    np.testing.assert_allclose(H[1][1], np.diag(6 * Y))


def test_hessian_of_a_coupled_function():
    f = lambda x: x[0] ** 2 * x[1] + np.sin(x[2]) * x[0]
    x0, x1, x2 = X
    expected = np.array([[2 * x1, 2 * x0, np.cos(x2)],
                         [2 * x0, 0, 0],
                         [np.cos(x2), 0, -np.sin(x2) * x0]])
    np.testing.assert_allclose(ad.hessian(f)(X), expected)
    np.testing.assert_allclose(ad.hessian_diag(f)(X), np.diag(expected))


def test_hessian_diag_pytrees_and_scalars():
    f = lambda p: np.sum(p[0] ** 3) * p[1] + p[1] ** 2
    diag = ad.hessian_diag(f)((X, 2.0))
    np.testing.assert_allclose(diag[0], 6 * X * 2.0)
    assert diag[1] == 2.0 and type(diag[1]) is float
    d0, d1 = ad.hessian_diag(lambda a, b: np.sum(a ** 3 * b), argnums=(0, 1))(X, X)
    np.testing.assert_allclose(d0, 6 * X * X)
    np.testing.assert_allclose(d1, np.zeros(3))


def test_hvp_without_forming_the_hessian():
    value, hv = ad.hvp(_cubic)(X, Y, vectors=np.ones(3))
    assert float(value) == pytest.approx(_cubic(X, Y))
    np.testing.assert_allclose(hv, 2 * Y)
    value, (hx, hy) = ad.hvp(_cubic, (0, 1))(X, Y, vectors=(np.ones(3), np.ones(3)))
    np.testing.assert_allclose(hx, 2 * Y + 2 * X)
    np.testing.assert_allclose(hy, 2 * X + 6 * Y)


# --- nesting -------------------------------------------------------------------------------

def test_grad_of_grad_and_third_order():
    f = lambda x: x ** 4 + np.sin(x)
    assert ad.grad(ad.grad(f))(1.3) == pytest.approx(12 * 1.3 ** 2 - math.sin(1.3))
    assert ad.grad(ad.grad(ad.grad(f)))(1.3) == pytest.approx(24 * 1.3 - math.cos(1.3))


def test_jvp_of_grad_is_a_hessian_vector_product():
    _, hv = ad.jvp(ad.grad(lambda x: np.sum(np.exp(x) * x)))(X, tangents=Y)
    np.testing.assert_allclose(hv, (2 * np.exp(X) + X * np.exp(X)) * Y)


def test_grad_of_jvp_and_of_vjp():
    tangent_of = lambda x: ad.jvp(np.sin)(x, tangents=np.ones(3))[1]
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(tangent_of(x)))(X), -np.sin(X))

    def pulled(x):
        _, pullback = ad.vjp(lambda x: x ** 3)(x)
        return np.sum(pullback(np.ones(3)))
    np.testing.assert_allclose(ad.grad(pulled)(X), 6 * X)


@pytest.mark.parametrize("x", [-2.0, 0.0, 3.5])
def test_no_perturbation_confusion(x):
    f = lambda x: x * ad.grad(lambda y: x + y)(1.0)
    assert ad.grad(f)(x) == 1.0
    g = lambda x: x * ad.grad(lambda y: x * y)(1.0)  # x * x
    assert ad.grad(g)(x) == pytest.approx(2 * x)


# --- Python control flow -------------------------------------------------------------------

def _branchy(x):
    if x > 0:
        y = x
        while y < 10.0:
            y = y * 2
        return y
    return -x ** 3


@pytest.mark.parametrize("x, expected", [(1.5, 8.0), (0.1, 128.0), (-2.0, -12.0)])
def test_if_and_while_follow_the_data(x, expected):
    assert ad.grad(_branchy)(x) == pytest.approx(expected)


def test_bool_float_int_and_iteration_read_the_current_value():
    # values that do not depend on a differentiated input (tests/test_detach.py: those that do)
    def f(x):
        total = 0.0
        for v in x:  # iteration yields traced elements
            if bool(v > 0):
                total = total + v * float(ad.stop_gradient(v))
        return total * int(np.argmax(x))

    expected = np.where(X > 0, X, 0.0) * int(np.argmax(X))
    np.testing.assert_allclose(ad.grad(f)(X), expected)


# --- dtypes and complex --------------------------------------------------------------------

def test_nep50_python_scalars_keep_float32():
    x = np.array([1.0, 2.0], np.float32)
    value, tangent = ad.jvp(lambda x: x * 2.0 + 1)(x, tangents=np.ones(2, np.float32))
    assert value.dtype == np.float32 and tangent.dtype == np.float32
    g = ad.grad(lambda x: np.sum(x ** 2 * 3.0))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 6 * x)


def test_float32_with_float64_array_promotes_like_numpy():
    x = np.array([1.0, 2.0], np.float32)
    value = ad.jvp(lambda x: x * np.ones(2))(x, tangents=x)[0]
    assert value.dtype == (x * np.ones(2)).dtype


def test_complex_gradient_convention():
    z = np.array([1.0 + 2.0j, -0.5 + 0.25j])
    np.testing.assert_allclose(ad.grad(lambda z: np.sum(np.abs(z) ** 2))(z), 2 * z)
    # d/dx + i d/dy of Re(z^2) = x^2 - y^2 is 2x - 2iy = 2 conj(z)
    np.testing.assert_allclose(ad.grad(lambda z: np.sum(np.real(z * z)))(z), 2 * np.conj(z))


def test_complex_outputs_through_vjp_and_jvp_use_the_real_adjoint():
    z = np.array([1.0 + 1.0j])
    _, tangent = ad.jvp(lambda z: z * z)(z, tangents=np.array([1.0 + 0j]))
    np.testing.assert_allclose(tangent, 2 * z)
    _, pullback = ad.vjp(lambda z: z * z)(z)
    np.testing.assert_allclose(pullback(np.array([1.0 + 0j])), np.conj(2 * z))


# --- stop_gradient and is_traced -----------------------------------------------------------

def test_stop_gradient_blocks_derivatives_and_keeps_structure():
    g = ad.grad(lambda x: np.sum(x * ad.stop_gradient(x)))(X)
    np.testing.assert_array_equal(g, X)
    Point = namedtuple("Point", "a b")

    def f(x):
        stopped = ad.stop_gradient(Point(x, {"k": [x * 2, "tag"]}))
        assert isinstance(stopped, Point) and stopped.b["k"][1] == "tag"
        assert not ad.is_traced(stopped.a) and isinstance(stopped.b["k"][0], np.ndarray)
        return np.sum(x * stopped.b["k"][0])
    np.testing.assert_array_equal(ad.grad(f)(X), 2 * X)


def test_is_traced():
    seen = []
    ad.grad(lambda x: (seen.append(ad.is_traced(x)), np.sum(x))[1])(X)
    assert seen == [True]
    assert not ad.is_traced(X) and not ad.is_traced(1.0)

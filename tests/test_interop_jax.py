"""advect.interop.jax: values and gradients against JAX's own autodiff of the same function and
central differences, eagerly and under jit; dtypes, complex conventions, one forward pass,
staged programs and higher orders."""

import numpy as np
import pytest

import advect as ad
from interop_cases import central_gradient, complex_model, imports_after_advect, model

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax.config.update("jax_enable_x64", True)
from advect.interop.jax import wrap  # noqa: E402


def jax_model(x, params, *, scale):
    hidden = jnp.tanh(x @ params["w"] + params["b"]) * scale
    return {"hidden": hidden, "energy": jnp.sum(hidden ** 2) + jnp.sum(params["w"] ** 3)}


def _params(dtype=np.float64):
    rng = np.random.default_rng(0)
    return (jnp.asarray(rng.normal(size=(3, 2)), dtype),
            {"w": jnp.asarray(rng.normal(size=(2, 4)), dtype),
             "b": jnp.asarray(rng.normal(size=4), dtype)})


def _loss(fn):
    def loss(params, x):
        out = fn(x, {**params, "tag": "dense"} if fn is not jax_model else params, scale=0.5)
        return out["energy"] + jnp.sum(out["hidden"])
    return loss


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_values_and_gradients_match_jax_and_central_differences(jit):
    x, params = _params()
    transform = jax.jit if jit else (lambda f: f)
    ours = transform(jax.value_and_grad(_loss(wrap(model))))(params, x)
    theirs = jax.value_and_grad(_loss(jax_model))(params, x)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    for key in ("w", "b"):
        np.testing.assert_allclose(ours[1][key], theirs[1][key], rtol=1e-12, atol=1e-12)

    def numpy_loss(w):
        out = model(np.asarray(x), {"w": w, "b": np.asarray(params["b"])}, scale=0.5)
        return out["energy"] + np.sum(out["hidden"])
    np.testing.assert_allclose(ours[1]["w"], central_gradient(numpy_loss, np.asarray(
        params["w"])), rtol=1e-6, atol=1e-8)


def test_float32_stays_float32():
    x, params = _params(np.float32)
    out = wrap(model)(x, params, scale=2.0)
    assert out["hidden"].dtype == jnp.float32
    g = jax.grad(lambda p: wrap(model)(x, p, scale=2.0)["energy"])(params)
    assert g["w"].dtype == jnp.float32 and g["b"].dtype == jnp.float32


@pytest.mark.parametrize("dtype", [pytest.param(np.complex64, marks=pytest.mark.slow),
                                   np.complex128])
def test_a_real_loss_of_complex_outputs_gets_jax_s_gradient(dtype):
    z = jnp.asarray([1 + 2j, -0.5 + 0.3j, 0.2 - 1.1j], dtype)

    def host_loss(fn):
        return lambda z: jnp.sum(jnp.real(fn(z)) ** 2 + 3 * jnp.imag(fn(z)))
    ours = jax.jit(jax.grad(host_loss(wrap(complex_model))))(z)
    theirs = jax.grad(host_loss(lambda z: jnp.exp(z) * jnp.conj(z) + z ** 2))(z)
    assert ours.dtype == dtype
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol)
    norm = jax.grad(wrap(lambda z: np.sum(np.abs(z) ** 2)))(z)
    np.testing.assert_allclose(norm, 2 * np.conj(z), rtol=tol)  # JAX's convention


def test_one_forward_pass_per_call_with_given_result_shapes():
    calls = []

    def counted(x):
        calls.append(1)
        return np.sum(np.sin(x) ** 2)
    f = wrap(counted, result_shape_dtypes=jax.ShapeDtypeStruct((), jnp.float64))
    x = jnp.asarray([0.1, 0.7])
    np.testing.assert_allclose(jax.grad(f)(x), np.sin(2 * x), rtol=1e-12)
    assert len(calls) == 1
    calls.clear()
    np.testing.assert_allclose(jax.jit(jax.grad(f))(x), np.sin(2 * x), rtol=1e-12)
    assert len(calls) == 1


def test_a_staged_program_gives_jit_its_result_shapes():
    program = ad.stage(lambda x, y: {"s": np.sum(np.exp(x) * y), "p": x * y},
                       np.zeros(3), np.zeros(3))
    f = wrap(program)
    x, y = jnp.asarray([0.0, 1.0, -1.0]), jnp.asarray([2.0, 3.0, 4.0])
    out = jax.jit(f)(x, y)
    np.testing.assert_allclose(out["p"], x * y)
    gx, gy = jax.jit(jax.grad(lambda x, y: f(x, y)["s"], (0, 1)))(x, y)
    np.testing.assert_allclose(gx, np.exp(x) * y, rtol=1e-12)
    np.testing.assert_allclose(gy, np.exp(x), rtol=1e-12)


def _nested_grads(f, order):
    for _ in range(order):
        f = (lambda g: lambda x: jnp.sum(jax.grad(g)(x)))(f)
    return f


_F = wrap(lambda x: np.sum(np.sin(x) * x ** 2))
_F_REF = lambda x: jnp.sum(jnp.sin(x) * x ** 2)  # noqa: E731
_X = np.array([0.3, -1.2, 2.0])


def test_second_derivatives_cross_the_bridge():
    np.testing.assert_allclose(_nested_grads(_F, 2)(_X), _nested_grads(_F_REF, 2)(_X),
                               rtol=1e-10)


@pytest.mark.slow
def test_third_derivatives_jacobians_and_vmap_match_jax():
    np.testing.assert_allclose(_nested_grads(_F, 3)(_X), _nested_grads(_F_REF, 3)(_X),
                               rtol=1e-10)
    np.testing.assert_allclose(jax.jit(jax.jacrev(jax.grad(_F)))(_X), jax.hessian(_F_REF)(_X),
                               rtol=1e-10, atol=1e-12)
    batch = jnp.stack([_X, 2 * _X])
    np.testing.assert_allclose(jax.vmap(jax.grad(_F))(batch), jax.vmap(jax.grad(_F_REF))(batch),
                               rtol=1e-12)


def test_has_aux_returns_the_aux_undifferentiated():
    f = wrap(lambda x: (np.sum(x ** 2), {"peak": np.max(x)}), has_aux=True)
    (value, aux), g = jax.value_and_grad(f, has_aux=True)(jnp.asarray([1.0, 3.0]))
    assert float(value) == 10.0 and float(aux["peak"]) == 3.0
    np.testing.assert_allclose(g, [2.0, 6.0])


def test_an_unstageable_function_needs_result_shape_dtypes():
    def branchy(x):
        return x * 2.0 if bool(np.sum(x) > 0) else x
    with pytest.raises(TypeError, match="result_shape_dtypes"):
        wrap(branchy)(jnp.ones(2))
    f = wrap(branchy, result_shape_dtypes=jax.ShapeDtypeStruct((2,), jnp.float64))
    np.testing.assert_allclose(jax.grad(lambda x: jnp.sum(f(x)))(jnp.ones(2)), [2.0, 2.0])


def test_importing_advect_imports_no_framework():
    assert imports_after_advect() == set()


def test_integer_arrays_cross_as_constants_and_integer_outputs_get_no_gradient():
    f = wrap(lambda x, idx: (x[idx] * 2.0, np.argmax(x)))
    x, idx = jnp.asarray([3.0, 1.0, 2.0]), jnp.asarray([2, 0])
    picked, best = jax.jit(f)(x, idx)
    assert int(best) == 0 and best.dtype == jnp.int64
    g = jax.jit(jax.grad(lambda x, i: jnp.sum(f(x, i)[0] ** 2)))(x, idx)
    np.testing.assert_allclose(g, [24.0, 0.0, 16.0])


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_a_vjp_pullback_applies_more_than_once_as_jax_s_does(jit):
    x = jnp.array([0.3, -1.2])
    f = wrap(lambda x: np.sin(x) * x)
    y, pullback = (jax.jit(lambda x: jax.vjp(f, x)) if jit else lambda x: jax.vjp(f, x))(x)
    _, reference = jax.vjp(lambda x: jnp.sin(x) * x, x)
    for ct in (jnp.ones(2), jnp.array([2.0, -0.5]), jnp.ones(2)):
        np.testing.assert_allclose(pullback(ct)[0], reference(ct)[0], rtol=1e-12)

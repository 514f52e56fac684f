"""advect.interop.autograd: values and gradients against autograd's own differentiation of the
same function and central differences; dtypes, complex conventions, one forward pass."""

import numpy as np
import pytest

import advect as ad
from interop_cases import central_gradient, complex_model, model

autograd = pytest.importorskip("autograd")
anp = pytest.importorskip("autograd.numpy")
from advect.interop.autograd import wrap  # noqa: E402


def autograd_model(x, params, *, scale):
    hidden = anp.tanh(anp.dot(x, params["w"]) + params["b"]) * scale
    return {"hidden": hidden, "energy": anp.sum(hidden ** 2) + anp.sum(params["w"] ** 3)}


def _loss(fn, x, b):
    def loss(w):
        out = fn(x, {"w": w, "b": b, **({"tag": "dense"} if fn is not autograd_model else {})},
                 scale=0.5)
        return out["energy"] + anp.sum(out["hidden"])
    return loss


def test_values_and_gradients_match_autograd_and_central_differences():
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(3, 2)), rng.normal(size=(2, 4)), rng.normal(size=4)
    ours = autograd.value_and_grad(_loss(wrap(model), x, b))(w)
    theirs = autograd.value_and_grad(_loss(autograd_model, x, b))(w)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[1], central_gradient(_loss(model, x, b), w), rtol=1e-6)


def test_gradients_of_several_arguments_and_float32():
    f = wrap(lambda x, y: np.sum(np.sin(x) * y))
    x, y = np.array([0.2, 1.0], np.float32), np.array([3.0, -1.0], np.float32)
    gx, gy = autograd.grad(lambda x, y: f(x, y), (0, 1))(x, y)
    assert gx.dtype == np.float32 and gy.dtype == np.float32
    np.testing.assert_allclose(gx, np.cos(x) * y, rtol=1e-6)
    np.testing.assert_allclose(gy, np.sin(x), rtol=1e-6)


def test_a_real_loss_of_complex_outputs_gets_autograd_s_gradient():
    z = np.array([1 + 2j, -0.5 + 0.3j, 0.2 - 1.1j])

    def host_loss(fn):
        return lambda z: anp.sum(anp.real(fn(z)) ** 2 + 3 * anp.imag(fn(z)))
    ours = autograd.grad(host_loss(wrap(complex_model)))(z)
    theirs = autograd.grad(host_loss(lambda z: anp.exp(z) * anp.conj(z) + z ** 2))(z)
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    # autograd's convention is the conjugate of Advect's
    np.testing.assert_allclose(ours, np.conj(central_gradient(host_loss(complex_model), z)),
                               rtol=1e-6)


def test_one_forward_pass_per_call_and_no_record_without_autograd():
    calls = []

    def counted(x):
        calls.append(ad.is_traced(x))
        return np.sum(np.sin(x) ** 2)
    x = np.array([0.1, 0.7])
    np.testing.assert_allclose(autograd.grad(wrap(counted))(x), np.sin(2 * x), rtol=1e-12)
    assert calls == [True]
    calls.clear()
    assert float(wrap(counted)(x)) == pytest.approx(np.sum(np.sin(x) ** 2))
    assert calls == [False]

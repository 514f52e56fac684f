"""checkpoint: same values and derivatives as the plain block, at every order; less memory."""

import sys
from pathlib import Path

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))


def layer(x):
    return np.sin(x) * 1.01 + 0.1 * np.tanh(x)


def chain(x, step, n=4):
    for _ in range(n):
        x = step(x)
    return np.sum(x ** 2)


def chain_gradient(x, n=4):
    """d/dx sum(x_n^2) for x_{k+1} = layer(x_k), by hand."""
    slope = np.ones_like(x)
    for _ in range(n):
        slope = slope * (1.01 * np.cos(x) + 0.1 / np.cosh(x) ** 2)
        x = layer(x)
    return 2 * x * slope


X = np.linspace(-1.0, 1.0, 5)


def test_gradient_matches_the_closed_form():
    g = ad.grad(chain)(X, ad.checkpoint(layer))
    np.testing.assert_allclose(g, chain_gradient(X), rtol=1e-13)


def test_value_outside_transforms_is_the_block_value():
    np.testing.assert_array_equal(ad.checkpoint(layer)(X), layer(X))


def test_derivatives_up_to_third_order_pass_the_laws():
    check_grads(lambda x: chain(x, ad.checkpoint(layer), 2), (X,), order=3)


def test_hessian_and_grad_of_grad_equal_the_plain_ones():
    plain = ad.hessian(chain)(X, layer)
    np.testing.assert_allclose(ad.hessian(chain)(X, ad.checkpoint(layer)), plain, rtol=1e-12,
                               atol=1e-14)

    def grad_norm(x, step):
        return np.sum(ad.grad(chain)(x, step) ** 2)
    np.testing.assert_allclose(ad.grad(grad_norm)(X, ad.checkpoint(layer)),
                               ad.grad(grad_norm)(X, layer), rtol=1e-12)


def test_forward_mode_and_forward_over_reverse():
    t = np.cos(X)
    _, plain = ad.jvp(chain)(X, layer, tangents=t)
    _, ckpt = ad.jvp(chain)(X, ad.checkpoint(layer), tangents=t)
    np.testing.assert_allclose(ckpt, plain, rtol=1e-13)
    _, hv = ad.hvp(chain)(X, ad.checkpoint(layer), vectors=t)
    np.testing.assert_allclose(hv, ad.hvp(chain)(X, layer, vectors=t)[1], rtol=1e-12)


def test_reverse_over_forward_mode():
    t = np.cos(X)

    def directional(x, step):
        return ad.jvp(chain)(x, step, tangents=t)[1]
    np.testing.assert_allclose(ad.grad(directional)(X, ad.checkpoint(layer)),
                               ad.grad(directional)(X, layer), rtol=1e-12)


def test_the_block_is_recomputed_during_the_backward_pass():
    calls = []

    def counted(x):
        calls.append(type(x).__name__)
        return layer(x)
    ad.grad(chain)(X, ad.checkpoint(counted), 3)
    # 3 primal runs on plain arrays, then 3 recomputations on traced values
    assert calls[:3] == ["ndarray"] * 3
    assert len(calls) == 6 and "ndarray" not in calls[3:]


def test_linearize_map_and_its_transpose():
    def f(x):
        return ad.checkpoint(layer)(x) * x
    value, lm = ad.linearize(f, X)
    with lm:
        t, ct = np.cos(X), np.sin(X)
        jt = lm(t)
        expected = (1.01 * np.cos(X) + 0.1 / np.cosh(X) ** 2) * X + layer(X)
        np.testing.assert_allclose(jt, expected * t, rtol=1e-13)
        np.testing.assert_allclose(lm.pullback(ct), expected * ct, rtol=1e-13)
    np.testing.assert_allclose(ad.jacobian(f)(X), np.diag(expected), rtol=1e-13, atol=1e-15)


def test_pytree_arguments_static_leaves_and_several_outputs():
    def block(params, x, *, power, label):
        assert label == "scaled"
        y = params["w"] * x ** power + params["b"]
        return {"y": y, "peak": np.argmax(y), "sum": np.sum(y)}

    def loss(w, b, x, step):
        out = step({"w": w, "b": b}, x, power=2, label="scaled")
        return out["sum"] + np.sum(out["y"] ** 2) + 0.0 * out["peak"]

    args = (np.array(1.5), np.array([0.1, -0.2, 0.3, 0.0, 0.5]), X)
    plain = ad.grad(loss, argnums=(0, 1, 2))(*args, block)
    ckpt = ad.grad(loss, argnums=(0, 1, 2))(*args, ad.checkpoint(block))
    for a, b in zip(ckpt, plain):
        np.testing.assert_allclose(a, b, rtol=1e-13)


def test_nested_checkpoints():
    outer = ad.checkpoint(lambda x: ad.checkpoint(layer)(ad.checkpoint(layer)(x)))
    np.testing.assert_allclose(ad.grad(chain)(X, outer, 2), chain_gradient(X, 4), rtol=1e-13)


def test_a_traced_value_captured_from_outside_raises():
    def loss(x, w):
        return np.sum(ad.checkpoint(lambda y: y * w)(x))
    with pytest.raises(ad.TracingError, match="not one of its arguments"):
        ad.grad(loss, argnums=(0, 1))(X, np.array(2.0))


def test_a_constant_captured_from_outside_is_fine():
    w = np.array(2.0)
    g = ad.grad(lambda x: np.sum(ad.checkpoint(lambda y: np.sin(y) * w)(x)))(X)
    np.testing.assert_allclose(g, 2.0 * np.cos(X), rtol=1e-14)


def test_writing_to_a_block_input_raises():
    def block(x):
        x[0] = 0.0
        return x

    with pytest.raises((ValueError, ad.MutationError)):
        ad.grad(lambda x: np.sum(ad.checkpoint(block)(x * 1.0)))(X)


def test_staging_inlines_the_block():
    program = ad.stage(lambda x: chain(x, ad.checkpoint(layer)), X)
    assert "checkpoint" not in str(program)
    np.testing.assert_allclose(ad.grad(program)(X), chain_gradient(X), rtol=1e-13)
    staged_grad = ad.stage(ad.grad(lambda x: chain(x, ad.checkpoint(layer))), X)
    assert "checkpoint" not in str(staged_grad)
    np.testing.assert_allclose(staged_grad(X), chain_gradient(X), rtol=1e-13)


def test_peak_memory_is_well_under_the_plain_gradient():
    from checkpoint_memory import measure

    # per layer the plain tape keeps ~2 arrays, a checkpointed layer only its input; with
    # segments of 8 of 64 layers: 8 segment inputs plus one segment's tape at a time
    peaks = measure(size=20_000, layers=64, variants=(None, 1, 8))
    assert peaks[1] < 0.65 * peaks[None]
    assert peaks[8] < 0.3 * peaks[None]


def test_complex_blocks_and_float32_precision():
    block = ad.checkpoint(lambda z: np.exp(1j * z) * z)
    z = np.array([0.3 + 0.1j, -0.5j])
    check_grads(block, (z,), order=2)
    check_grads(lambda z: np.sum(np.abs(block(z)) ** 2), (z,), order=2)
    g = ad.grad(lambda x: np.sum(ad.checkpoint(layer)(x)))(X.astype(np.float32))
    assert g.dtype == np.float32


def test_array_api_provider_values_stay_with_their_provider():
    xps = pytest.importorskip("array_api_strict")

    def block(x):
        xp = x.__array_namespace__()
        return xp.sin(x) * 1.01 + 0.1 * xp.tanh(x)

    def loss(x, step):
        xp = x.__array_namespace__()
        return xp.sum(step(step(x)) ** 2)
    x = xps.asarray(X)
    g = ad.grad(loss)(x, ad.checkpoint(block))
    assert isinstance(g, type(x))
    np.testing.assert_allclose(np.asarray(g), chain_gradient(X, 2), rtol=1e-13)

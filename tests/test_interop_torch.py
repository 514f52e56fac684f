"""advect.interop.torch: values and gradients against PyTorch's own autograd of the same
function and central differences; dtypes, complex conventions, one forward pass, any order."""

import numpy as np
import pytest

import advect as ad
from interop_cases import central_gradient, complex_model, imports_after_advect, model

torch = pytest.importorskip("torch")
from advect.interop.torch import wrap  # noqa: E402


def torch_model(x, params, *, scale):
    hidden = torch.tanh(x @ params["w"] + params["b"]) * scale
    return {"hidden": hidden, "energy": torch.sum(hidden ** 2) + torch.sum(params["w"] ** 3)}


def _inputs(dtype=torch.float64, seed=0):
    rng = np.random.default_rng(seed)
    x = torch.tensor(rng.normal(size=(3, 2)), dtype=dtype)
    w = torch.tensor(rng.normal(size=(2, 4)), dtype=dtype, requires_grad=True)
    b = torch.tensor(rng.normal(size=4), dtype=dtype, requires_grad=True)
    return x, w, b


def test_importing_advect_imports_no_framework():
    assert imports_after_advect() == set()


def test_values_and_gradients_of_pytrees_match_torch_and_central_differences():
    x, w, b = _inputs()
    out = wrap(model)(x, {"w": w, "b": b, "tag": "dense"}, scale=0.5)
    loss = out["energy"] + out["hidden"].sum()
    loss.backward()
    w2, b2 = w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    expected = torch_model(x, {"w": w2, "b": b2}, scale=0.5)
    (expected["energy"] + expected["hidden"].sum()).backward()
    torch.testing.assert_close(out["hidden"], expected["hidden"], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(w.grad, w2.grad, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(b.grad, b2.grad, rtol=1e-12, atol=1e-12)

    def numpy_loss(w_np):
        out = model(x.numpy(), {"w": w_np, "b": b.detach().numpy()}, scale=0.5)
        return out["energy"] + out["hidden"].sum()
    np.testing.assert_allclose(w.grad.numpy(), central_gradient(numpy_loss, w.detach().numpy()),
                               rtol=1e-6, atol=1e-8)


def test_float32_stays_float32_in_values_and_gradients():
    x, w, b = _inputs(torch.float32)
    out = wrap(model)(x, {"w": w, "b": b}, scale=2.0)
    assert out["hidden"].dtype == torch.float32 and out["energy"].dtype == torch.float32
    out["energy"].backward()
    assert w.grad.dtype == torch.float32 and b.grad.dtype == torch.float32


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128])
def test_a_real_loss_of_complex_outputs_gets_torch_s_gradient(dtype):
    z = torch.tensor([1 + 2j, -0.5 + 0.3j, 0.2 - 1.1j], dtype=dtype, requires_grad=True)
    z_ref = z.detach().clone().requires_grad_()

    def host_loss(w):
        return (w.real ** 2 + 3 * w.imag).sum()
    host_loss(wrap(complex_model)(z)).backward()
    host_loss(torch.exp(z_ref) * torch.conj(z_ref) + z_ref ** 2).backward()
    assert z.grad.dtype == dtype
    tol = 1e-5 if dtype == torch.complex64 else 1e-12
    torch.testing.assert_close(z.grad, z_ref.grad, rtol=tol, atol=tol)
    norm = wrap(lambda z: np.sum(np.abs(z) ** 2))
    z.grad = None
    norm(z).backward()
    torch.testing.assert_close(z.grad, 2 * z.detach())


def test_one_forward_pass_per_call_and_the_backward_reuses_it():
    calls = []

    def counted(x):
        calls.append(1)
        return np.sum(np.sin(x) ** 2)
    x = torch.tensor([0.1, 0.7], dtype=torch.float64, requires_grad=True)
    wrap(counted)(x).backward()
    assert len(calls) == 1
    torch.testing.assert_close(x.grad, torch.sin(2 * x.detach()))


def test_second_and_third_derivatives_cross_the_bridge():
    f = wrap(lambda x: np.sum(np.sin(x) * x ** 2))
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    x_ref = x.detach().clone().requires_grad_()
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    (t,) = torch.autograd.grad(h.sum(), x)
    (g_ref,) = torch.autograd.grad(torch.sum(torch.sin(x_ref) * x_ref ** 2), x_ref,
                                   create_graph=True)
    (h_ref,) = torch.autograd.grad(g_ref.sum(), x_ref, create_graph=True)
    (t_ref,) = torch.autograd.grad(h_ref.sum(), x_ref)
    for ours, theirs in ((g, g_ref), (h, h_ref), (t, t_ref)):
        torch.testing.assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_integer_tensors_are_constants_and_integer_outputs_are_not_differentiable():
    f = wrap(lambda x, idx: (x[idx] * 2.0, np.argmax(x)))
    x = torch.tensor([3.0, 1.0, 2.0], dtype=torch.float64, requires_grad=True)
    picked, best = f(x, torch.tensor([2, 0]))
    assert best.dtype == torch.int64 and not best.requires_grad and int(best) == 0
    picked.sum().backward()
    torch.testing.assert_close(x.grad, torch.tensor([2.0, 0.0, 2.0], dtype=torch.float64))


def test_a_staged_program_is_wrapped_like_a_function():
    program = ad.stage(lambda x: np.sum(np.exp(x)), np.zeros(3))
    x = torch.tensor([0.0, 1.0, -1.0], dtype=torch.float64, requires_grad=True)
    wrap(program)(x).backward()
    torch.testing.assert_close(x.grad, torch.exp(x.detach()))


def test_without_requires_grad_the_call_records_nothing():
    traced = []
    f = wrap(lambda x: traced.append(ad.is_traced(x)) or x * 2.0)
    out = f(torch.ones(2, dtype=torch.float64))
    assert traced == [False] and out.grad_fn is None
    with torch.no_grad():
        f(torch.ones(2, requires_grad=True))
    assert traced == [False, False]


def test_gradients_with_negative_strides_cross_the_bridge():
    # the gradient of a cumsum along a length-1 axis is a reversed view: a negative stride on
    # a C-contiguous array, which torch.from_numpy refuses
    x = torch.tensor([[0.3], [-0.5]], dtype=torch.float64, requires_grad=True)
    wrap(lambda v: np.sum(np.cumsum(v, axis=-1) ** 2))(x).backward()
    torch.testing.assert_close(x.grad, 2 * x.detach())

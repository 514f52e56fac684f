"""Probe: Advect functions inside PyTorch / JAX / autograd programs, and Advect transforms of
PyTorch tensors through the Array API, checked against each host's own autodiff."""

import numpy as np
import pytest

import advect as ad

torch = pytest.importorskip("torch")

from advect.interop.torch import wrap as torch_wrap  # noqa: E402


def _mlp_np(x, params):
    hidden = np.tanh(x @ params["w1"] + params["b1"])
    return hidden @ params["w2"] + params["b2"]


class _Net(torch.nn.Module):
    def __init__(self, dtype, layer=None):
        super().__init__()
        g = torch.Generator().manual_seed(1)
        self.w1 = torch.nn.Parameter(torch.randn(3, 8, generator=g, dtype=dtype))
        self.b1 = torch.nn.Parameter(torch.zeros(8, dtype=dtype))
        self.w2 = torch.nn.Parameter(torch.randn(8, 1, generator=g, dtype=dtype))
        self.b2 = torch.nn.Parameter(torch.zeros(1, dtype=dtype))
        self.layer = layer

    def forward(self, x):
        if self.layer is None:
            return torch.tanh(x @ self.w1 + self.b1) @ self.w2 + self.b2
        return self.layer(x, {"w1": self.w1, "b1": self.b1, "w2": self.w2, "b2": self.b2})


def _train(net, x, y, optimizer, steps=5):
    opt = optimizer(net.parameters(), lr=0.05)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
@pytest.mark.parametrize("optimizer", [torch.optim.SGD, torch.optim.Adam])
def test_a_wrapped_numpy_layer_trains_like_the_torch_layer(dtype, optimizer):
    x = torch.randn(16, 3, dtype=dtype, generator=torch.Generator().manual_seed(2))
    y = torch.sin(x.sum(1, keepdim=True))
    ours, theirs = _Net(dtype, torch_wrap(_mlp_np)), _Net(dtype)
    tol = 1e-12 if dtype == torch.float64 else 1e-5
    np.testing.assert_allclose(_train(ours, x, y, optimizer), _train(theirs, x, y, optimizer),
                               rtol=tol, atol=tol)
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert a.dtype == dtype and a.grad.dtype == dtype
        torch.testing.assert_close(a, b, rtol=tol, atol=tol)


def test_a_wrapped_staged_program_trains_like_the_torch_layer():
    shapes = {"w1": (3, 8), "b1": (8,), "w2": (8, 1), "b2": (1,)}
    program = ad.stage(_mlp_np, np.zeros((16, 3)), {k: np.zeros(s) for k, s in shapes.items()})
    x = torch.randn(16, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    y = torch.cos(x[:, :1])
    ours, theirs = _Net(torch.float64, torch_wrap(program)), _Net(torch.float64)
    np.testing.assert_allclose(_train(ours, x, y, torch.optim.SGD, 3),
                               _train(theirs, x, y, torch.optim.SGD, 3), rtol=1e-12)
    with torch.no_grad():
        assert not ours(x).requires_grad
    with torch.inference_mode():
        assert ours(x).shape == (16, 1)


def _layer(x, w):
    return np.tanh(x @ w).sum(axis=0) * np.exp(-w[0])


@pytest.mark.parametrize("staged", [False, True])
def test_gradcheck_and_gradgradcheck_through_the_bridge(staged):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(3, 2, dtype=torch.float64, generator=g, requires_grad=True)
    f = torch_wrap(ad.stage(_layer, np.zeros((4, 3)), np.zeros((3, 2))) if staged else _layer)
    assert torch.autograd.gradcheck(f, (x, w))
    assert torch.autograd.gradgradcheck(f, (x, w))
    assert torch.autograd.gradcheck(f, (x, w), check_forward_ad=True)
    assert torch.autograd.gradgradcheck(f, (x, w), check_fwd_over_rev=True)


@pytest.mark.parametrize("f", [
    lambda z: np.sin(z) * np.conj(z),             # complex -> complex
    lambda z: np.real(z * z) + np.abs(z),          # complex -> real
])
def test_gradcheck_of_complex_functions(f):
    z = torch.tensor([1 + 2j, 0.3 - 0.5j], dtype=torch.complex128, requires_grad=True)
    assert torch.autograd.gradcheck(torch_wrap(f), (z,))
    assert torch.autograd.gradgradcheck(torch_wrap(f), (z,))


def test_gradcheck_of_pytree_outputs_with_integer_inputs_and_outputs():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(3, dtype=torch.float64, generator=g, requires_grad=True)
    w = torch.randn(3, dtype=torch.float64, generator=g, requires_grad=True)
    idx = torch.tensor([2, 0])
    f = torch_wrap(lambda d, idx: {"a": np.sin(d["x"])[idx] * d["w"][0],
                                   "b": [np.cumsum(d["w"] * d["x"]), np.argmin(d["x"])]})
    out = f({"x": x, "w": w}, idx)
    assert out["b"][1].dtype == torch.int64 and not out["b"][1].requires_grad

    def g2(x, w):
        o = f({"x": x, "w": w}, idx)
        return o["a"], o["b"][0]

    assert torch.autograd.gradcheck(g2, (x, w))
    assert torch.autograd.gradgradcheck(g2, (x, w))


def test_third_derivatives_and_a_differentiated_cotangent_match_torch():
    y = torch.tensor([0.3, -1.2], dtype=torch.float64, requires_grad=True)
    yt = y.detach().clone().requires_grad_()
    results = []
    for f, arg in ((torch_wrap(lambda x: np.sum(np.exp(np.sin(x)))), y),
                   (lambda x: torch.exp(torch.sin(x)).sum(), yt)):
        (g,) = torch.autograd.grad(f(arg), arg, create_graph=True)
        (h,) = torch.autograd.grad(g.sum(), arg, create_graph=True)
        (t,) = torch.autograd.grad(h.sum(), arg)
        results.append(t)
    torch.testing.assert_close(*results)

    # d/dv <v, J(x)>: the cotangent of the first backward is itself differentiated
    x = torch.tensor([0.3, 0.5], dtype=torch.float64, requires_grad=True)
    grads = []
    for f in (torch_wrap(lambda a: np.sin(a) * a[::-1]), lambda a: torch.sin(a) * a.flip(0)):
        v = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
        (vjp,) = torch.autograd.grad(f(x), x, grad_outputs=v, create_graph=True)
        grads.append(torch.autograd.grad(vjp.sum(), v)[0])
    torch.testing.assert_close(*grads)


def test_float32_keeps_float32_through_first_and_second_order():
    x32 = torch.tensor([0.3, 0.5], requires_grad=True)
    f = torch_wrap(lambda a: np.sum(np.sin(a) * a))
    (g,) = torch.autograd.grad(f(x32), x32, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x32)
    assert f(x32).dtype == g.dtype == h.dtype == torch.float32
    # promotion by a float64 constant: the output is float64, the gradient the input's dtype
    x = torch.ones(3, requires_grad=True)
    out = torch_wrap(lambda a: np.sum(a * np.arange(3.0)))(x)
    out.backward()
    assert out.dtype == torch.float64 and x.grad.dtype == torch.float32
    torch.testing.assert_close(x.grad, torch.arange(3.0))


def test_requires_grad_false_inputs_views_and_repeated_inputs():
    x = torch.randn(4, 3, dtype=torch.float64)
    w = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)
    torch_wrap(_layer)(x, w).sum().backward()
    wt = w.detach().clone().requires_grad_()
    (torch.tanh(x @ wt).sum(0) * torch.exp(-wt[0])).sum().backward()
    assert x.grad is None
    torch.testing.assert_close(w.grad, wt.grad)

    z = torch.ones(3, 2, dtype=torch.float64, requires_grad=True)   # a transposed view
    torch_wrap(lambda a: np.sum(a[0] * np.arange(3.0)))(z.T).backward()
    torch.testing.assert_close(z.grad, torch.tensor([[0.0, 0], [1, 0], [2, 0]],
                                                    dtype=torch.float64))
    e = torch.ones(3, dtype=torch.float64, requires_grad=True)      # an expanded (stride 0) one
    torch_wrap(lambda a: np.sum(a ** 2))(e.expand(4, 3)).backward()
    torch.testing.assert_close(e.grad, torch.full((3,), 8.0, dtype=torch.float64))
    r = torch.tensor([1.0, 2.0], requires_grad=True)                # one tensor, two arguments
    torch_wrap(lambda a, b: np.sum(a * b))(r, r).backward()
    torch.testing.assert_close(r.grad, torch.tensor([2.0, 4.0]))


def test_outputs_never_alias_the_callers_tensors():
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    identity = torch_wrap(lambda a: a)
    y = identity(x)
    with torch.no_grad():
        y[0] = 100.0
    assert x.tolist() == [1.0, 2.0, 3.0]
    x0 = torch.tensor([1.0, 2.0])
    y0 = identity(x0)
    y0[0] = 100.0
    assert x0.tolist() == [1.0, 2.0]


def test_integer_indices_and_masks_are_constants():
    x = torch.tensor([0.5, -1.0, 2.0, 0.25, 1.5], dtype=torch.float64, requires_grad=True)
    idx = torch.tensor([0, 2, 2])
    torch_wrap(lambda a, i: np.sum(a[i] ** 2))(x, idx).backward()
    torch.testing.assert_close(x.grad, 2 * x.detach() * torch.tensor([1.0, 0, 2, 0, 0],
                                                                     dtype=torch.float64))
    x.grad = None
    mask = x.detach() > 0.4
    torch_wrap(lambda a, m: np.sum(np.where(m, a, 0.0) ** 3))(x, mask).backward()
    torch.testing.assert_close(x.grad, 3 * x.detach() ** 2 * mask)


def test_forward_mode_and_torch_checkpoint_around_the_bridge():
    import torch.autograd.forward_ad as fwad

    f = torch_wrap(lambda a, i: {"s": np.sin(a[i]), "k": np.argmax(a)})
    a = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)
    with fwad.dual_level():
        out = f(fwad.make_dual(a, torch.ones(3, dtype=torch.float64)), torch.tensor([2, 2]))
        torch.testing.assert_close(fwad.unpack_dual(out["s"]).tangent, torch.cos(a[[2, 2]]))
        assert fwad.unpack_dual(out["k"]).tangent is None
    x = torch.tensor([0.3, -0.7, 1.1], dtype=torch.float64, requires_grad=True)
    g = torch_wrap(lambda t: np.sum(np.tanh(t) ** 2))
    torch.utils.checkpoint.checkpoint(lambda t: g(t) * 2, x, use_reentrant=False).backward()
    th = torch.tanh(x.detach())
    torch.testing.assert_close(x.grad, 4 * th * (1 - th ** 2))


def test_torch_functional_jacobian_and_hessian():
    f = torch_wrap(lambda a: np.sum(np.sin(a) * a))
    x = torch.tensor([0.4, 1.3], dtype=torch.float64)
    h = torch.autograd.functional.hessian(f, x)
    torch.testing.assert_close(h, torch.diag(2 * torch.cos(x) - x * torch.sin(x)))
    j = torch.autograd.functional.jacobian(torch_wrap(np.sin), x)
    torch.testing.assert_close(j, torch.diag(torch.cos(x)))


def test_unsupported_torch_use_gets_advect_s_errors():
    x = torch.ones(2, 3)
    with pytest.raises(NotImplementedError, match="torch.func"):
        torch.func.vmap(torch_wrap(np.sin))(x)
    with pytest.raises(NotImplementedError, match="torch.func"):
        torch.func.grad(torch_wrap(lambda a: np.sum(np.sin(a))))(torch.ones(3))
    with pytest.raises(TypeError, match="bfloat16.*cast"):
        torch_wrap(np.sin)(torch.ones(3, dtype=torch.bfloat16, requires_grad=True))
    with pytest.raises(TypeError, match="pytree of arrays"):
        torch_wrap(lambda a: "label")(torch.ones(2, requires_grad=True))
    program = ad.stage(lambda a: np.sum(a ** 2), np.zeros(3))
    for t in (torch.ones(3), torch.ones(3, requires_grad=True)):
        with pytest.raises(ValueError, match="float64"):
            torch_wrap(program)(t)


# -- Advect transforms of torch tensors (the torch provider) ---------------------------------

def _energy(x):
    xp = x.__array_namespace__()
    return xp.sum(xp.sin(x) ** 2 * xp.exp(-x))


def _energy_torch(x):
    return torch.sum(torch.sin(x) ** 2 * torch.exp(-x))


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_advect_transforms_of_torch_tensors_match_torch_autograd(dtype):
    x = torch.linspace(-1, 1, 5, dtype=dtype)
    xt = x.clone().requires_grad_()
    _energy_torch(xt).backward()
    value, gradient = ad.value_and_grad(_energy)(x)
    assert type(gradient) is torch.Tensor and gradient.dtype == dtype
    assert gradient.device == x.device and value.dtype == dtype
    torch.testing.assert_close(gradient, xt.grad)
    torch.testing.assert_close(value, _energy_torch(x))
    tangent = torch.ones(5, dtype=dtype)
    _, jt = ad.jvp(_energy)(x, tangents=tangent)
    torch.testing.assert_close(jt, torch.func.jvp(_energy_torch, (x,), (tangent,))[1])
    torch.testing.assert_close(ad.hessian(_energy)(x),
                               torch.autograd.functional.hessian(_energy_torch, x))
    assert ad.grad(_energy)(x).dtype == dtype


def test_checkpoint_of_torch_tensors():
    # the checkpointed block's primal ran on the raw tensors: no __array_namespace__ there
    x = torch.linspace(-1, 1, 5, dtype=torch.float64)
    torch.testing.assert_close(ad.grad(ad.checkpoint(_energy))(x), ad.grad(_energy)(x))
    torch.testing.assert_close(ad.hessian(ad.checkpoint(_energy))(x), ad.hessian(_energy)(x))
    assert ad.grad(ad.checkpoint(_energy))(x.float()).dtype == torch.float32
    g = ad.grad(ad.checkpoint(lambda a: np.sum(np.sin(a))))(x)   # NumPy calls stay torch
    assert type(g) is torch.Tensor
    torch.testing.assert_close(g, torch.cos(x))


def test_torch_functions_of_tracers_raise_advect_s_error():
    x = torch.linspace(-1, 1, 3, dtype=torch.float64)
    with pytest.raises(ad.TracingError, match=r"torch.sin is not traced.*xp.sin"):
        ad.grad(lambda a: torch.sin(a).sum())(x)
    with pytest.raises(ad.TracingError, match="torch.add"):
        ad.grad(lambda a: torch.ones(3, dtype=torch.float64).add(a).sum())(x)
    with pytest.raises(ad.TracingError, match="torch.sin"):
        ad.grad(lambda a: torch.sin(a).sum())(np.ones(2))
    # operators with a tensor on the left still defer to the tracer
    ones = torch.ones(3, dtype=torch.float64)
    torch.testing.assert_close(ad.grad(lambda a: np.sum(ones - a) + np.sum(ones @ a))(x),
                               torch.zeros(3, dtype=torch.float64))


def test_writing_a_tracer_into_a_plain_tensor_says_how_to_build_the_buffer():
    x = torch.linspace(-1, 1, 3, dtype=torch.float64)

    def plain_buffer(a):
        xp = a.__array_namespace__()
        buf = xp.zeros(3, dtype=xp.float64)
        buf[0] = a[0]  # was torch's "multiple dispatch failed" TypeError
        return xp.sum(buf * a)

    with pytest.raises(ad.TracingError, match=r"buf = xp.zeros_like\(x\), then buf\[i\] = v"):
        ad.grad(plain_buffer)(x)

    def traced_buffer(a):
        xp = a.__array_namespace__()
        buf = xp.zeros_like(a)
        buf[0] = a[0]
        return xp.sum(buf * a)

    torch.testing.assert_close(ad.grad(traced_buffer)(x),
                               torch.tensor([-2.0, 0.0, 0.0], dtype=torch.float64))


def test_torch_autograd_through_advect_grad_of_a_tensor_requiring_grad():
    x = torch.linspace(-1, 1, 4, dtype=torch.float64)
    xr = x.clone().requires_grad_()
    (h,) = torch.autograd.grad(ad.grad(_energy)(xr).sum(), xr)
    torch.testing.assert_close(h, ad.hessian(_energy)(x).sum(0))


# -- JAX ------------------------------------------------------------------------------------

def test_jax_grad_jit_vmap_and_hessians(jax_x64):
    jax = jax_x64
    import jax.numpy as jnp

    from advect.interop.jax import wrap

    rng = np.random.default_rng(0)
    x, w = jnp.array(rng.normal(size=(4, 3))), jnp.array(rng.normal(size=(3, 2)))
    f = wrap(lambda x, w: np.sum(np.tanh(x @ w) ** 2) + np.sum(w ** 3))

    def fj(x, w):
        return jnp.sum(jnp.tanh(x @ w) ** 2) + jnp.sum(w ** 3)

    np.testing.assert_allclose(jax.jit(jax.grad(f, 1))(x, w), jax.grad(fj, 1)(x, w))
    np.testing.assert_allclose(jax.jacrev(jax.grad(f, 1), 1)(x, w), jax.hessian(fj, 1)(x, w))
    batch = jnp.stack([x, 2 * x])
    np.testing.assert_allclose(jax.vmap(jax.grad(f, 1), (0, None))(batch, w),
                               jax.vmap(jax.grad(fj, 1), (0, None))(batch, w))
    with pytest.raises(TypeError, match="forward-mode"):  # JAX's refusal, documented
        jax.hessian(f, 1)(x, w)
    a = jnp.array([0.5, -1.0, 2.0])
    g = wrap(lambda a, i: np.sum(np.sin(a[i]) ** 3))
    i = jnp.array([0, 1, 1])
    np.testing.assert_allclose(jax.jit(jax.jacrev(jax.grad(g)))(a, i),
                               jax.jacrev(jax.grad(lambda a: jnp.sum(jnp.sin(a[i]) ** 3)))(a))
    assert jax.grad(wrap(lambda a: np.sum(a ** 2)))(a.astype(jnp.float32)).dtype == jnp.float32


def test_jax_staged_program_and_result_shape_dtypes(jax_x64):
    jax = jax_x64
    import jax.numpy as jnp

    from advect.interop.jax import wrap

    program = ad.stage(lambda a, b: (np.sin(a) * b, np.sum(a * b)), np.zeros(3), np.zeros(3))
    a, b = jnp.array([0.1, 0.2, 0.3]), jnp.array([1.0, -2.0, 0.5])
    ga, gb = jax.jit(jax.grad(lambda a, b: wrap(program)(a, b)[1], argnums=(0, 1)))(a, b)
    np.testing.assert_allclose(ga, b)
    np.testing.assert_allclose(gb, a)
    structs = {"y": jax.ShapeDtypeStruct((3,), jnp.float64),
               "n": jax.ShapeDtypeStruct((), jnp.float64)}
    h = wrap(lambda a: {"y": np.sin(a), "n": np.sum(a)}, result_shape_dtypes=structs)
    np.testing.assert_allclose(jax.jit(jax.grad(lambda a: h(a)["n"] + h(a)["y"][0]))(a),
                               [1 + np.cos(0.1), 1, 1])


@pytest.mark.parametrize("declared", [((4,), "float64"), ((3,), "float32")])
def test_jax_a_wrong_result_shape_dtypes_is_refused_not_converted(jax_x64, declared):
    jax = jax_x64
    import jax.numpy as jnp

    from advect.interop.jax import wrap

    shape, dtype = declared
    bad = wrap(np.sin, result_shape_dtypes=jax.ShapeDtypeStruct(shape, dtype))
    with pytest.raises(Exception, match="declared result"):  # raised inside JAX's callback
        np.asarray(jax.jit(bad)(jnp.arange(3.0)))


def test_jax_without_x64_keeps_jax_s_32_bit_dtypes():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from advect.interop.jax import wrap

    if jax.config.jax_enable_x64:
        pytest.skip("needs JAX's default 32-bit mode")
    f = wrap(lambda a, i: (np.sum(np.sin(a[i]) ** 3), np.argmax(a), a.astype(np.float64) * 2))
    value, top, doubled = jax.jit(f)(jnp.arange(4.0), jnp.array([0, 1, 1]))
    assert (value.dtype, top.dtype, doubled.dtype) == (jnp.float32, jnp.int32, jnp.float32)


# -- autograd -------------------------------------------------------------------------------

def test_autograd_bridge_matches_autograd():
    autograd = pytest.importorskip("autograd")
    import autograd.numpy as anp

    from advect.interop.autograd import wrap

    x = np.array([0.3, -0.7, 1.1])
    f = wrap(lambda a: np.sum(np.sin(a) * a ** 2))

    def fa(a):
        return anp.sum(anp.sin(a) * a ** 2)

    np.testing.assert_allclose(autograd.grad(f)(x), autograd.grad(fa)(x))
    np.testing.assert_allclose(autograd.hessian(f)(x), autograd.hessian(fa)(x), atol=1e-14)

    def third(g):
        return autograd.grad(lambda a: anp.sum(autograd.grad(lambda b: anp.sum(
            autograd.grad(g)(b)))(a)))(x)

    np.testing.assert_allclose(third(f), third(fa))
    np.testing.assert_allclose(autograd.jacobian(wrap(lambda a: np.cumsum(a ** 2)))(x),
                               autograd.jacobian(lambda a: anp.cumsum(a ** 2))(x))
    assert autograd.grad(wrap(lambda a: np.sum(a ** 2)))(x.astype(np.float32)).dtype == \
        np.float32
    np.testing.assert_allclose(
        autograd.grad(wrap(lambda a, i: np.sum(a[i] ** 2)))(x, np.array([0, 0])),
        [4 * x[0], 0, 0])
    program = ad.stage(lambda a: np.sum(np.exp(a)), np.zeros(3))
    np.testing.assert_allclose(autograd.hessian(wrap(program))(x), np.diag(np.exp(x)))


def test_writing_into_an_input_is_refused_and_the_tensor_is_unchanged():
    def f(a):
        a[0] = 5.0
        return np.sum(a)

    t = torch.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="read-only") as info:
        torch_wrap(f)(t)
    assert any("must not write into its inputs" in n for n in info.value.__notes__)
    r = torch.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(ad.MutationError):
        torch_wrap(f)(r)
    assert t.tolist() == r.tolist() == [1.0, 2.0]


def test_jax_a_vjp_pullback_applied_twice(jax_x64):
    jax = jax_x64
    import jax.numpy as jnp

    from advect.interop.jax import wrap

    x = jnp.array([0.5, 1.0, -0.3])
    _, pullback = jax.vjp(wrap(lambda a: np.sum(np.sin(a))), x)
    (first,) = pullback(1.0)
    (second,) = pullback(2.0)
    np.testing.assert_allclose(second, 2 * first)

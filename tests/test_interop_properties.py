"""The host bridges on the random programs of ``tests/programs.py``: the loss wrapped for
PyTorch, JAX and HIPS autograd gives the values, gradients and Hessian-vector products that
Advect gives itself (each framework is skipped when it is not installed)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import given, settings

import advect as ad
from programs import programs
from test_composition_transforms import FAST, _arrays, _setup

RTOL, ATOL = 1e-12, 1e-12


def _installed(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def _reference(program):
    _, f, xs, argnums, ts, _ = _setup(program)
    value, grads = ad.value_and_grad(f, argnums=argnums)(*xs)
    _, hv = ad.hvp(f, argnums=argnums)(*xs, vectors=ts)
    return f, xs, ts, value, grads, hv


def _close(got, want, what: str) -> None:
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        assert np.shape(g) == np.shape(w), f"{what} [{k}]"
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=RTOL, atol=ATOL,
                                   err_msg=f"{what} [{k}]")


@pytest.mark.skipif(not _installed("torch"), reason="PyTorch is not installed")
@FAST
@given(programs())
def test_torch_bridge_on_random_programs(program):
    import torch

    from advect.interop.torch import wrap

    f, xs, ts, value, grads, hv = _reference(program)
    tensors = [torch.tensor(x, requires_grad=True) for x in xs]
    loss = wrap(f)(*tensors)
    np.testing.assert_allclose(loss.detach().numpy(), value, rtol=RTOL, atol=ATOL)
    first = torch.autograd.grad(loss, tensors, create_graph=True, allow_unused=True)
    _close([np.zeros(np.shape(x)) if g is None else g.detach().numpy()
            for g, x in zip(first, xs)], grads, "torch gradient")
    inner = sum(torch.sum(g * torch.tensor(t)) for g, t in zip(first, ts) if g is not None)
    if isinstance(inner, torch.Tensor) and inner.requires_grad:  # else the Hessian is zero
        second = torch.autograd.grad(inner, tensors, allow_unused=True)
        _close([np.zeros(np.shape(x)) if g is None else g.numpy()
                for g, x in zip(second, xs)], hv, "torch Hessian-vector product")


@pytest.mark.skipif(not _installed("jax"), reason="JAX is not installed")
@settings(FAST, max_examples=20)  # JAX traces and compiles each program: slower
@given(programs())
def test_jax_bridge_on_random_programs(program):
    import jax
    import jax.numpy as jnp

    from advect.interop.jax import wrap

    jax.config.update("jax_enable_x64", True)
    f, xs, ts, value, grads, hv = _reference(program)
    argnums = tuple(range(len(xs)))
    wrapped = wrap(f)
    args = [jnp.asarray(x) for x in xs]
    got_value, got_grads = jax.value_and_grad(wrapped, argnums)(*args)
    np.testing.assert_allclose(np.asarray(got_value), value, rtol=RTOL, atol=ATOL)
    _close([np.asarray(g) for g in got_grads], grads, "jax gradient")
    def inner(*a):  # reverse over reverse: jvp of a custom_vjp function is not defined
        return sum(jnp.sum(g * t) for g, t in zip(jax.grad(wrapped, argnums)(*a), ts))
    got_hv = jax.grad(inner, argnums)(*args)
    _close([np.asarray(h) for h in got_hv], hv, "jax Hessian-vector product")


@pytest.mark.skipif(not _installed("autograd"), reason="HIPS autograd is not installed")
@FAST
@given(programs())
def test_autograd_bridge_on_random_programs(program):
    import autograd

    from advect.interop.autograd import wrap

    f, xs, _, value, grads, _ = _reference(program)
    wrapped = wrap(f)
    np.testing.assert_allclose(wrapped(*_arrays(program)), value, rtol=RTOL, atol=ATOL)
    got = [autograd.grad(wrapped, i)(*xs) for i in range(len(xs))]
    _close(got, grads, "autograd gradient")

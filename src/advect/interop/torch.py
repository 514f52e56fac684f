"""PyTorch bridge: an Advect function as one ``torch.autograd.Function``.

``wrap(f)`` returns a function of PyTorch tensors (positional and keyword pytrees; other leaves
are passed through as constants). Floating and complex tensors are the differentiable operands:
they cross as NumPy arrays of the same dtype (float32 stays float32), ``f`` runs once under
``advect.vjp``, and ``loss.backward()`` applies the recorded pullback without rerunning ``f``.
Under ``torch.autograd.grad(..., create_graph=True)`` the backward is itself a wrapped Advect
function, so derivatives of any order cross the bridge. Tensors on another device are copied
to the CPU and the results copied back.

Complex numbers: PyTorch's gradient of a real loss ``L`` with respect to ``z = x + iy`` is
``dL/dx + i dL/dy`` (its docs call it the conjugate Wirtinger derivative, scaled so that
``z.grad`` of ``abs(z)**2`` is ``2*z``), and a ``Function``'s backward receives and returns
cotangents in that convention. That is Advect's convention too, so cotangents cross unchanged.

Example:
    >>> import numpy as np, torch
    >>> from advect.interop.torch import wrap
    >>> f = wrap(lambda x, *, scale: np.sum(np.sin(x)) * scale)
    >>> x = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    >>> f(x, scale=2.0).backward()
    >>> torch.allclose(x.grad, 2 * torch.cos(x.detach()))
    True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from ..pytree import tree_flatten, tree_unflatten
from . import Bridge

__all__ = ["wrap"]


def _is_operand(leaf) -> bool:
    return isinstance(leaf, torch.Tensor) and (leaf.is_floating_point() or leaf.is_complex())


def _to_numpy(leaf):
    if isinstance(leaf, torch.Tensor):
        try:
            return leaf.detach().cpu().resolve_conj().resolve_neg().numpy()
        except TypeError as e:  # bfloat16 and the other dtypes NumPy lacks
            raise TypeError(f"advect.interop.torch: a tensor of dtype {leaf.dtype} has no "
                            "NumPy dtype, so Advect cannot take it; cast it (to float32, "
                            f"for example) before the call ({e})") from e
        except RuntimeError as e:  # a batched tensor of vmap, which has no NumPy data
            raise NotImplementedError(f"{_NO_FUNCTORCH} ({e})") from e
    return leaf


_NO_FUNCTORCH = (
    "advect.interop.torch: a wrapped function cannot run under torch vmap or the other "
    "torch.func transforms (torch.func.vmap, jvp, grad, jacrev, autograd.grad("
    "is_grads_batched=True), jacobian(..., vectorize=True)); call it without vectorizing, or "
    "use torch.autograd (backward, autograd.grad, autograd.forward_ad)")


def _to_torch(array: np.ndarray, device) -> torch.Tensor:
    # torch refuses negative strides, even on a length-1 axis of a C-contiguous array (the
    # gradient of a cumsum along such an axis is a reversed view)
    if not array.flags.writeable or not array.flags.c_contiguous or min(array.strides,
                                                                        default=0) < 0:
        array = np.array(array, order="C")
    return torch.from_numpy(array).to(device)


class _AdvectFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, bridge: Bridge, device, *tensors):
        arrays = [_to_numpy(t) for t in tensors]
        outs, record = bridge.forward(arrays)
        ctx.bridge, ctx.record, ctx.device = bridge, record, device
        ctx.operands = [(a.shape, a.dtype) for a in arrays]  # for jvp (forward-mode AD)
        ctx.save_for_backward(*tensors)
        results = tuple(_to_torch(o, device) for o in outs)
        ctx.mark_non_differentiable(*(r for r in results
                                      if not (r.is_floating_point() or r.is_complex())))
        return results

    @staticmethod
    def backward(ctx, *grads):
        # reading the saved tensors makes a second backward through a freed graph raise
        # PyTorch's own error; with retain_graph (and in torch.autograd.functional.jacobian)
        # the record serves every backward pass, so it stays open until the graph is freed
        tensors, bridge = ctx.saved_tensors, ctx.bridge
        if torch.is_grad_enabled():  # create_graph=True: the backward must be differentiable
            cts = _apply(bridge.vjp_bridge(), [*tensors, *grads], ctx.device)
        else:
            cts = [None if c is None else _to_torch(c, ctx.device) for c in bridge.backward(
                ctx.record, [None if g is None else _to_numpy(g) for g in grads], keep=True)]
        return (None, None, *cts)

    @staticmethod
    def jvp(ctx, _bridge, _device, *tangents):
        # forward-mode AD (torch.autograd.forward_ad): the recorded linear map applies the JVP
        ts = tuple(np.zeros(shape, dtype) if t is None else _to_numpy(t).astype(dtype)
                   for (shape, dtype), t in zip(ctx.operands, tangents))
        outs = tree_flatten(ctx.record.pullback(ts))[0]
        return tuple(_to_torch(np.asarray(o), ctx.device) if d.kind in "fc" else None
                     for o, d in zip(outs, ctx.record.out_dtypes))


def _is_dual(tensor) -> bool:
    return torch.autograd.forward_ad.unpack_dual(tensor).tangent is not None


def _apply(bridge: Bridge, tensors: list, device) -> list:
    try:
        return list(_AdvectFunction.apply(bridge, device, *tensors))
    except RuntimeError as e:  # torch.func.grad, jvp, jacrev, ... refuse the Function
        if "setup_context" in str(e):
            raise NotImplementedError(f"{_NO_FUNCTORCH} ({e})") from e
        raise


def wrap(f: Callable) -> Callable:
    """Make ``f`` (an Advect function: NumPy code) one differentiable PyTorch operation.

    The wrapped function takes PyTorch tensors anywhere in its positional and keyword pytrees
    and returns ``f``'s output pytree with tensors as leaves.

    Raises:
        TypeError: ``f`` returns a leaf that is not an array.

    Example:
        >>> import numpy as np, torch
        >>> from advect.interop.torch import wrap
        >>> norm2 = wrap(lambda z: np.sum(np.abs(z) ** 2))
        >>> z = torch.tensor([1 + 2j], requires_grad=True)
        >>> norm2(z).backward()
        >>> z.grad
        tensor([2.+4.j])
    """

    def wrapped(*args, **kwargs):
        bridge = Bridge.of(f, args, kwargs, is_operand=_is_operand, to_numpy=_to_numpy)
        inputs, bridge.inputs = bridge.inputs, []
        device = inputs[0].device if inputs else torch.device("cpu")
        if (torch.is_grad_enabled() and any(t.requires_grad for t in inputs)
                or any(_is_dual(t) for t in inputs)):
            outs = _apply(bridge, inputs, device)
        else:  # nothing to differentiate: no record, no autograd node
            outs = [_to_torch(o, device) for o in bridge.run([_to_numpy(t) for t in inputs])]
        return tree_unflatten(bridge.out_def, outs)

    wrapped.__wrapped__ = f
    wrapped.__doc__ = getattr(f, "__doc__", None)
    return wrapped

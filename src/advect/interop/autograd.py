"""autograd bridge: an Advect function as one primitive of HIPS autograd.

``wrap(f)`` returns a function of NumPy arrays (positional and keyword pytrees) that
``autograd.grad`` and ``autograd.make_vjp`` differentiate through: the forward pass runs ``f``
once under ``advect.linearize``, and the backward pass applies that recorded pullback (``f`` is
not rerun). Floating and complex leaves are the differentiable operands and keep their dtype;
other leaves are constants. Reverse mode only; the VJP is itself a primitive built from an Advect
function, so ``autograd.hessian`` and deeper orders work (each reruns ``f`` in its pullback).

Complex numbers: autograd's gradient of a real ``f`` at ``z = x + iy`` is ``df/dx - i df/dy``
(its tutorial: ``grad(abs(z)**2) == 2*conj(z)``; the conjugate of the steepest-ascent
direction), and its VJPs carry cotangents in that convention. Advect's real adjoint gives
``df/dx + i df/dy``, so the bridge conjugates complex cotangents on the way in and out.

Example:
    >>> import numpy as np, autograd
    >>> from advect.interop.autograd import wrap
    >>> f = wrap(lambda x, *, scale: np.sum(np.sin(x)) * scale)
    >>> x = np.array([0.0, 1.0])
    >>> np.allclose(autograd.grad(lambda x: f(x, scale=2.0))(x), 2 * np.cos(x))
    True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from autograd.builtins import DictBox, SequenceBox
from autograd.extend import defvjp_argnum, primitive
from autograd.tracer import Box, getval

from ..pytree import tree_flatten, tree_unflatten
from . import Bridge

__all__ = ["wrap"]


def _is_operand(leaf) -> bool:
    value = getval(leaf)
    return getattr(np.asarray(value) if np.isscalar(value) else value, "dtype",
                   np.dtype(object)).kind in "fc" and not isinstance(value, str)


@primitive
def _apply(bridge: Bridge, shared: dict, *arrays):
    """The flat outputs of one forward pass (a tuple); its record waits in ``shared``."""
    outs, shared["record"] = bridge.forward([np.asarray(a) for a in arrays])
    return tuple(outs)


def _call(bridge: Bridge, operands: list):
    """The bridge's flat outputs: a primitive when autograd differentiates the call, else a
    plain run (no record)."""
    if not any(isinstance(x, Box) for x in operands):
        return bridge.run(operands)
    return _apply(bridge, {}, *operands)


def _vjp(argnum, outs, args, kwargs):
    bridge, shared, *arrays = args

    def vjp(cotangents):
        if any(isinstance(x, Box) for x in [*arrays, *cotangents]):
            # the backward differentiated again (autograd.hessian): the VJP as a primitive
            return _call(bridge.vjp_bridge(), [*arrays, *cotangents])[argnum - 2]
        # autograd asks for one VJP per differentiated argument, all with the same
        # cotangents: the first to run applies the recorded pullback, for all of them. A new
        # backward pass (autograd.jacobian, a make_vjp pullback called again) brings new
        # cotangents, so the record stays open for it
        if shared.get("cotangents") is not cotangents:
            shared["grads"] = bridge.backward(shared["record"], list(cotangents), keep=True)
            shared["cotangents"] = cotangents
        grad = shared["grads"][argnum - 2]
        return np.zeros_like(arrays[argnum - 2]) if grad is None else grad

    return vjp


defvjp_argnum(_apply, _vjp)


def wrap(f: Callable) -> Callable:
    """Make ``f`` (an Advect function: NumPy code) one differentiable autograd primitive.

    Raises:
        TypeError: ``f`` returns a leaf that is not an array.

    Example:
        >>> import numpy as np, autograd
        >>> from advect.interop.autograd import wrap
        >>> norm2 = wrap(lambda z: np.sum(np.abs(z) ** 2))
        >>> autograd.grad(norm2)(np.array([1 + 2j]))
        array([2.-4.j])
    """

    def wrapped(*args, **kwargs):
        args, kwargs = _open_boxes(args), _open_boxes(kwargs)
        leaves, _ = tree_flatten((args, kwargs))
        bridge = Bridge.of(f, tuple(_unbox(a) for a in args),
                           {k: _unbox(v) for k, v in kwargs.items()},
                           is_operand=_is_operand, conjugate=True)
        operands = [leaf for leaf in leaves if _is_operand(leaf)]
        bridge.inputs = []
        outs = _call(bridge, operands)
        return tree_unflatten(bridge.out_def, [outs[i] for i in range(len(outs))])

    wrapped.__wrapped__ = f
    return wrapped


def _open_boxes(tree):
    """The tree with autograd's boxed containers (a tuple, list or dict argument that autograd
    differentiates as a whole) opened into containers of boxed leaves."""
    if isinstance(tree, DictBox):
        return {k: _open_boxes(tree[k]) for k in getval(tree)}
    if isinstance(tree, SequenceBox):
        items = [_open_boxes(tree[i]) for i in range(len(tree))]
        return tuple(items) if isinstance(getval(tree), tuple) else items
    if type(tree) in (tuple, list):
        return type(tree)(_open_boxes(x) for x in tree)
    if type(tree) is dict:
        return {k: _open_boxes(v) for k, v in tree.items()}
    return tree


def _unbox(tree):
    """The tree with autograd's boxes replaced by their values (the bridge sees NumPy)."""
    leaves, treedef = tree_flatten(tree)
    return tree_unflatten(treedef, [getval(leaf) for leaf in leaves])

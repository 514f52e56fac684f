"""Derivative checks for Advect's own tests and for users' functions and primitives.

``check_grads`` compares forward mode with central differences and reverse mode with forward
mode through the adjoint identity ``<ct, J t> == <J^T ct, t>`` (real inner product, so complex
functions are checked as real-linear maps), then repeats both on the derivative itself up to
``order``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .autodiff.api import jvp, vjp
from .pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["check_grads", "check_gradient"]


def _concrete(x):
    if hasattr(x, "_concrete"):
        x = x._concrete()
    return np.asarray(x)


def _random_like(x, rng):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    if x.dtype.kind == "f":
        return rng.standard_normal(x.shape).astype(x.dtype)
    return None


def _inner(a_leaves, b_leaves) -> float:
    total = 0.0
    for a, b in zip(a_leaves, b_leaves):
        if a is None or b is None:
            continue
        a, b = np.asarray(_concrete(a)), np.asarray(_concrete(b))
        total += float(np.real(np.vdot(a.astype(np.complex128), b.astype(np.complex128))))
    return total


def _tolerances(args, rtol, atol, eps, out=None):
    leaves = tree_flatten(args)[0] + tree_flatten(out)[0]
    low = any(np.dtype(a.dtype) in (np.float32, np.complex64, np.float16)
              for a in leaves if hasattr(a, "dtype"))
    return (rtol if rtol is not None else (2e-2 if low else 1e-5),
            atol if atol is not None else (2e-2 if low else 1e-5),
            eps if eps is not None else (1e-3 if low else 1e-6))


def _inexact_leaves(tree):
    return [leaf if np.asarray(_concrete(leaf)).dtype.kind in "fc" else None
            for leaf in tree_flatten(tree)[0]]


def _check_jvp(f, args, tangents, rtol, atol, eps, what):
    argnums = tuple(range(len(args)))
    _, out_t = jvp(f, argnums)(*args, tangents=tangents)
    shifted = [tree_map(lambda a, t, s=s: a + s * eps * t, x, t)
               for s in (1.0, -1.0) for x, t in [(args, tangents)]]
    plus, minus = f(*shifted[0]), f(*shifted[1])
    fd = [None if p is None else (_concrete(p) - _concrete(m)) / (2 * eps)
          for p, m in zip(_inexact_leaves(plus), _inexact_leaves(minus))]
    for k, (got, want) in enumerate(zip(tree_flatten(out_t)[0], fd)):
        if want is None:
            continue
        got = _concrete(got)
        if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(f"{what}: JVP disagrees with central differences at output "
                                 f"leaf {k}:\nJVP   {got}\nfinite differences {want}")


def _check_vjp(f, args, tangents, rng, rtol, atol, what):
    argnums = tuple(range(len(args)))
    out, pullback = vjp(f, argnums)(*args)
    _, out_t = jvp(f, argnums)(*args, tangents=tangents)
    out_leaves, out_def = tree_flatten(out)
    cts = [_random_like(_concrete(o), rng) for o in out_leaves]
    cts = [c if c is not None else np.zeros(np.shape(_concrete(o)), np.float64)
           for c, o in zip(cts, out_leaves)]
    in_cts = pullback(tree_unflatten(out_def, cts))
    lhs = _inner(cts, [t if c is not None else None
                       for t, c in zip(tree_flatten(out_t)[0], _inexact_leaves(out))])
    rhs = _inner(tree_flatten(in_cts)[0], tree_flatten(tangents)[0])
    scale = max(1.0, abs(lhs), abs(rhs))
    if abs(lhs - rhs) > (rtol + atol) * scale:
        raise AssertionError(f"{what}: reverse mode disagrees with forward mode: <ct, J t> = "
                             f"{lhs!r} but <J^T ct, t> = {rhs!r}")


def check_grads(f: Callable, args: Sequence[Any], order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), *, rtol: float | None = None,
                atol: float | None = None, eps: float | None = None, seed: int = 0) -> None:
    """Check ``f``'s derivatives w.r.t. all of ``args`` up to ``order``.

    Raises ``AssertionError`` naming what disagrees.

    Example:
        >>> import numpy as np
        >>> check_grads(lambda x: np.sin(x) * x, (np.array([0.5, 1.0]),), order=2)
    """
    args = tuple(args)
    rtol, atol, eps = _tolerances(args, rtol, atol, eps, f(*args))
    rng = np.random.default_rng(seed)
    _check_order(f, args, order, tuple(modes), rng, rtol, atol, eps, "order 1")


def _check_order(f, args, order, modes, rng, rtol, atol, eps, what):
    tangents = tuple(tree_map(lambda a: _random_like(a, rng), a) for a in args)
    if "fwd" in modes:
        _check_jvp(f, args, tangents, rtol, atol, eps, what)
    if "rev" in modes:
        _check_vjp(f, args, tangents, rng, rtol, atol, what)
    if order <= 1:
        return
    argnums = tuple(range(len(args)))
    nxt = f"order {int(what.split()[-1]) + 1}"
    if "fwd" in modes:
        def derivative(*xs):
            return jvp(f, argnums)(*xs, tangents=tangents)[1]
        _check_order(derivative, args, order - 1, modes, rng, rtol * 10, atol * 10, eps, nxt)
    if "rev" in modes:
        out = f(*args)
        def cotangent(o):  # integer outputs (frexp's exponent) get zero cotangents
            ct = _random_like(_concrete(o), rng)
            return np.zeros(np.shape(_concrete(o))) if ct is None else ct
        cts = tree_map(cotangent, out)

        def pulled(*xs):
            return vjp(f, argnums)(*xs)[1](cts)
        _check_order(pulled, args, order - 1, modes, rng, rtol * 10, atol * 10, eps, nxt)


def check_gradient(f: Callable, primal: Any, *, tangent: Any = None, rtol: float | None = None,
                   atol: float | None = None, eps: float | None = None) -> None:
    """Check ``f``'s JVP at ``primal`` against central differences and its reverse mode against
    its forward mode (the adjoint identity); ``tangent`` fixes the direction.

    Example:
        >>> import numpy as np
        >>> check_gradient(np.tanh, np.array([0.1, 0.7]))
    """
    rtol, atol, eps = _tolerances((primal,), rtol, atol, eps)
    rng = np.random.default_rng(0)
    tangents = (tree_map(lambda a: _random_like(a, rng), primal) if tangent is None
                else tangent,)
    _check_jvp(f, (primal,), tangents, rtol, atol, eps, "check_gradient")
    _check_vjp(f, (primal,), tangents, rng, rtol, atol, "check_gradient")


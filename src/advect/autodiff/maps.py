"""The maps a dynamic transform hands back over the tape of one call: the single-use
:class:`Pullback` of ``vjp`` and the reusable :class:`LinearMap` of ``linearize``.

Both map pytrees to pytrees through a selection (``autodiff.api._Selection``): its ``primals``,
``treedefs`` and ``unflatten`` give the differentiated inputs' structure.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..dtypes import aval_of
from ..pytree import tree_flatten, tree_unflatten
from .reverse import backward, forward

__all__ = ["Pullback", "LinearMap", "tangent_leaves", "zero_tangent"]


class _TapeMap:
    """A map over the tape of one call: reverse (transposes) or forward (the JVP), until
    ``close()`` releases the tape. Transposes of a map share its state, so closing one closes
    all."""

    _closed = "this map was closed"

    def __init__(self, tape, in_vars, out_vars, out_def, sel, out_primals):
        self._state = [(tape, in_vars, out_vars, out_def, sel, out_primals)]

    def _live(self):
        state = self._state[0]
        if state is None:
            raise RuntimeError(self._closed)
        return state

    def _pull(self, cotangent, keep: bool):
        tape, in_vars, out_vars, out_def, sel, _ = self._live()
        cts = _cotangent_leaves(cotangent, out_def, out_vars)
        if not keep:
            self._state[0] = None
        result = backward(tape, list(zip(out_vars, cts)), keep=keep)
        return sel.unflatten([ops.zeros_like(p) if v.index not in result else result[v.index]
                              for v, p in zip(in_vars, sel.primals)])

    def close(self) -> None:
        """Release the tape; later calls raise ``RuntimeError``."""
        state, self._state[0] = self._state[0], None
        if state is not None:
            state[0].clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Pullback(_TapeMap):
    """The single-use reverse map of one ``vjp`` call: output cotangent -> input cotangents
    (the real adjoint). Applying or closing it frees its tape; reuse raises ``RuntimeError``.

    Example:
        >>> import numpy as np, advect as ad
        >>> with ad.vjp(lambda x: x ** 2)(np.array([3.0]))[1] as pullback:
        ...     pullback(np.array([1.0]))
        array([6.])
    """

    _closed = ("this Pullback was already applied or closed; a Pullback is single-use: call "
               "vjp again, or use linearize for a reusable map")

    def __call__(self, cotangent):
        return self._pull(cotangent, keep=False)


def _cotangent_leaves(cotangent, treedef, out_vars):
    leaves, ct_def = tree_flatten(cotangent)
    if ct_def != treedef:  # None stands for a zero cotangent of any output leaf or subtree
        leaves = []
        _leaves_up_to(treedef, cotangent, leaves, cotangent)
    for leaf, var in zip(leaves, out_vars):
        if leaf is None:
            continue
        if var is not None and tuple(aval_of(leaf).shape) != var.aval.shape:
            raise ValueError(f"cotangent of shape {aval_of(leaf).shape} does not match the "
                             f"output shape {var.aval.shape}")
    return leaves


def _leaves_up_to(treedef, value, out: list, whole) -> None:
    """Append the cotangent leaves of ``value`` matching ``treedef``, ``None`` for each leaf
    position under a ``None``."""
    if value is None and treedef.kind is not type(None):
        out.extend([None] * treedef.num_leaves)
        return
    if treedef.kind is None:
        out.append(value)
        return
    children, node = tree_flatten(value, is_leaf=lambda v: v is not value)
    if node.kind is not treedef.kind or node.aux != treedef.aux or len(children) != len(
            treedef.children):
        raise TypeError(f"cotangent structure {tree_flatten(whole)[1]!r} does not match the "
                        f"output structure {treedef!r} (None stands for a zero cotangent)")
    for child_def, child in zip(treedef.children, children):
        _leaves_up_to(child_def, child, out, whole)


class LinearMap(_TapeMap):
    """The JVP of one ``linearize`` call as a reusable linear map, until ``close()``.

    ``lm(t)`` applies the JVP; ``lm.pullback(ct)`` its real adjoint; ``lm.transpose()`` is the
    adjoint as a LinearMap; ``apply_many`` / ``transpose_many`` map lists. Use after
    ``close()`` raises ``RuntimeError``.

    Example:
        >>> import numpy as np, advect as ad
        >>> value, lm = ad.linearize(lambda x: x ** 2, np.array([1.0, 3.0]))
        >>> lm(np.array([1.0, 1.0])), lm.pullback(np.array([1.0, 0.0]))
        (array([2., 6.]), array([2., 0.]))
        >>> lm.close()
    """

    _closed = "this LinearMap was closed; call linearize again"
    _transposed = False

    def _jvp(self, tangent):
        tape, in_vars, out_vars, out_def, sel, out_primals = self._live()
        values = forward(tape, in_vars, tangent_leaves(tangent, sel))
        return tree_unflatten(out_def, [
            zero_tangent(p) if v is None or v.index not in values else values[v.index]
            for v, p in zip(out_vars, out_primals)])

    def __call__(self, vector):
        return self._pull(vector, keep=True) if self._transposed else self._jvp(vector)

    def pullback(self, cotangent):
        """The adjoint of this map applied to ``cotangent``."""
        return self._jvp(cotangent) if self._transposed else self._pull(cotangent, keep=True)

    def transpose(self) -> LinearMap:
        """The adjoint map (sharing this map's tape)."""
        self._live()
        out = LinearMap.__new__(LinearMap)
        out._state, out._transposed = self._state, not self._transposed
        return out

    def apply_many(self, vectors) -> list:
        return [self(v) for v in vectors]

    def transpose_many(self, cotangents) -> list:
        return [self.pullback(c) for c in cotangents]


def tangent_leaves(tangents, sel) -> list:
    """The flat tangents of the differentiated input leaves from ``tangents`` (one pytree per
    selected input), checked against the selection's structure and shapes and cast to the
    inputs' dtypes. ``None`` is a zero tangent; an integer, bool or non-array input's tangent
    must be ``None`` or zero-valued."""
    parts = (tangents,) if sel.single else tuple(tangents)
    if len(parts) != len(sel.treedefs):
        raise TypeError(f"expected {len(sel.treedefs)} tangents, got {len(parts)}")
    flat = []
    for part, treedef in zip(parts, sel.treedefs):
        leaves, t_def = tree_flatten(part)
        if t_def != treedef:  # None (a zero tangent) may stand in for a leaf
            leaves, t_def = tree_flatten(part, is_leaf=lambda x: x is None)
            if t_def != treedef:
                raise TypeError(f"tangent structure {t_def!r} does not match the input "
                                f"{treedef!r}")
        flat.extend(leaves)
    out = []
    primals = iter(sel.primals)
    for i, t in enumerate(flat):
        if i in sel.fixed:
            if t is not None and (not hasattr(sel.fixed[i], "shape") or np.any(np.asarray(t))):
                raise ValueError("the tangent of an integer, bool or non-array input must be "
                                 "zero (or None): such inputs have no derivative")
            continue
        p = next(primals)
        if t is None:
            out.append(None)
            continue
        t = np.asarray(t, dtype=float) if type(t) in (int, float) else t
        if type(t) is bool or getattr(aval_of(t).dtype, "kind", "") == "b":
            raise TypeError(f"a bool tangent was given for an input of dtype "
                            f"{aval_of(p).dtype}; tangents must be floating or complex")
        if tuple(aval_of(t).shape) != tuple(aval_of(p).shape):
            raise ValueError(f"tangent of shape {aval_of(t).shape} does not match the input "
                             f"shape {aval_of(p).shape}")
        if aval_of(t).dtype != aval_of(p).dtype:
            t = ops.astype(t, dtype=aval_of(p).dtype.name)
        out.append(t)
    return out


def zero_tangent(primal):
    """The zero tangent of an output that does not depend on the inputs."""
    aval = aval_of(primal)
    dtype = aval.dtype if aval.dtype.kind in "fc" else np.dtype(np.float64)
    return ops.zeros_like(primal, dtype=dtype.name) if hasattr(primal, "shape") else \
        np.zeros(aval.shape, dtype)

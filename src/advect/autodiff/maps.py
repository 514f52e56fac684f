"""The maps a dynamic transform hands back over the tape of one call: the single-use
:class:`Pullback` of ``vjp`` and the reusable :class:`LinearMap` of ``linearize``.

Both map pytrees to pytrees through a selection (``autodiff.api._Selection``): its ``primals``,
``treedefs`` and ``unflatten`` give the differentiated inputs' structure.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of
from ..numpy._methods import ArrayTracer
from ..numpy._mutation import mark_array, marks_array
from ..ops.casts import PYTHON_DTYPES
from ..providers import namespace_of
from ..pytree import tree_flatten, tree_unflatten
from .reverse import backward, forward

__all__ = ["Pullback", "LinearMap", "input_type", "output_type", "tangent_leaves",
           "zero_tangent"]


class _Shared:
    """The tape of one call and what a map needs around it, shared by a map and its
    transposes. ``users`` counts applications in progress: closing waits for none of them, but
    the tape is released only when the last one has finished, so an application running in
    another thread completes correctly."""

    __slots__ = ("parts", "lock", "users", "closed")

    def __init__(self, parts: tuple):
        self.parts = parts  # (tape, in_vars, out_vars, out_def, sel, out_primals)
        self.lock = threading.Lock()
        self.users = 0
        self.closed = False

    def release(self) -> None:
        parts, self.parts = self.parts, None
        if parts is not None:
            parts[0].clear()


class _TapeMap:
    """A map over the tape of one call: reverse (transposes) or forward (the JVP), until
    ``close()`` releases the tape. Transposes of a map share its state, so closing one closes
    all. Maps may be applied from several threads at once."""

    _closed = "this map was closed"

    def __init__(self, tape, in_vars, out_vars, out_def, sel, out_primals):
        self._shared = _Shared((tape, in_vars, out_vars, out_def, sel, out_primals))

    def _enter(self, take: bool = False) -> tuple:
        """The tape's parts for one application; ``take``: the only one (a Pullback)."""
        shared = self._shared
        with shared.lock:
            if shared.closed:
                raise RuntimeError(self._closed)
            if take:
                shared.closed = True
                parts, shared.parts = shared.parts, None
                return parts
            shared.users += 1
            return shared.parts

    def _exit(self) -> None:
        shared = self._shared
        with shared.lock:
            shared.users -= 1
            if shared.closed and not shared.users:
                shared.release()

    def _pull(self, cotangent, keep: bool):
        parts = self._shared.parts
        if parts is None:
            raise RuntimeError(self._closed)
        cts = _cotangent_leaves(cotangent, parts[3], parts[2], parts[4].primals)  # before a
        # Pullback is used up
        parts = self._enter(take=not keep)
        tape, in_vars, out_vars, _, sel, _ = parts
        try:
            result = backward(tape, list(zip(out_vars, cts)), keep=keep)
        finally:
            if keep:
                self._exit()
        return sel.unflatten([input_type(_fresh(result[v.index], cts), p) if v.index in result
                              else input_type(ops.zeros_like(p), p)
                              for v, p in zip(in_vars, sel.primals)])

    def close(self) -> None:
        """Release the tape (once applications in progress finish); later calls raise
        ``RuntimeError``."""
        shared = self._shared
        with shared.lock:
            shared.closed = True
            if not shared.users:
                shared.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def input_type(g, primal):
    """The cotangent ``g`` of a 0-d ndarray input as a 0-d ndarray (a staged program's type
    too), of a NumPy scalar input as a NumPy scalar: NumPy computes some 0-d cotangents as
    NumPy scalars (``x * 2``), others as arrays (the sum of a broadcast); other cotangents
    unchanged."""
    if type(primal) is np.ndarray:
        array = not primal.shape
    elif isinstance(primal, np.generic):
        array = False
    elif isinstance(primal, Tracer) and not primal.shape and not primal._weak():
        # traced inside an outer transform or while staging: the type its marker gives it
        array = marks_array(primal._mut)
        if isinstance(g, Tracer):
            return mark_array(g) if array else g
    else:
        return g
    if array:
        return np.array(g) if isinstance(g, np.generic) else g
    return g[()] if type(g) is np.ndarray and not g.shape else g


def _fresh(value, given: list):
    """``value``, copied if it is (a view of) one of the caller's arrays ``given``: a map
    returns new arrays, so writing to its result never changes the caller's."""
    for g in given:
        if value is g or (type(value) is np.ndarray and type(g) is np.ndarray
                          and np.may_share_memory(value, g)):
            return ops.positive(value)
    return value


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


def _cotangent_leaves(cotangent, treedef, out_vars, inputs):
    leaves, ct_def = tree_flatten(cotangent)
    if ct_def != treedef:  # None stands for a zero cotangent of any output leaf or subtree
        leaves = []
        _leaves_up_to(treedef, cotangent, leaves, cotangent, "cotangent", "output")
    if not any(isinstance(p, Tracer) for p in inputs):  # a NumPy cotangent for torch values:
        # refused; a traced cotangent (the map applied inside another transform) is checked
        # by the operations it meets
        namespace_of((*inputs, *(leaf for leaf in leaves if not isinstance(leaf, Tracer))))
    for leaf, var in zip(leaves, out_vars):
        if leaf is None:
            continue
        if var is not None and tuple(aval_of(leaf).shape) != var.aval.shape:
            raise ValueError(f"cotangent of shape {aval_of(leaf).shape} does not match the "
                             f"output shape {var.aval.shape}")
        if var is not None and aval_of(leaf).dtype.kind == "c" and var.aval.dtype.kind != "c":
            raise TypeError(f"a complex cotangent was given for an output of dtype "
                            f"{var.aval.dtype}: a real output's cotangent is real (the real "
                            "adjoint would drop the imaginary part); pass its real part")
    return leaves


def _leaves_up_to(treedef, value, out: list, whole, what: str, of: str) -> None:
    """Append the (co)tangent leaves of ``value`` matching ``treedef``, ``None`` for each leaf
    position under a ``None``; ``what`` and ``of`` name them in the error."""
    if value is None and treedef.kind is not type(None):
        out.extend([None] * treedef.num_leaves)
        return
    children, node = tree_flatten(value, is_leaf=lambda v: v is not value)
    if treedef.kind is None and node.kind is None:
        out.append(value)
        return
    if node.kind is not treedef.kind or node.aux != treedef.aux or len(children) != len(
            treedef.children):
        differ = getattr(treedef.aux, "describe_mismatch", None)  # advect.xarray labels
        detail = f": {differ(node.aux)}" if differ and node.kind is treedef.kind else ""
        if not detail and node.kind is treedef.kind and node.aux != treedef.aux:
            # static fields (a dataclass's, say) do not show in the structures' reprs
            detail = (f": the {getattr(node.kind, '__name__', node.kind)} metadata "
                      f"{node.aux!r} differs from {treedef.aux!r}")
        raise TypeError(f"{what} structure {tree_flatten(whole)[1]!r} does not match the "
                        f"{of} structure {treedef!r}{detail} (None stands for a zero {what})")
    for child_def, child in zip(treedef.children, children):
        _leaves_up_to(child_def, child, out, whole, what, of)


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
        tape, in_vars, out_vars, out_def, sel, out_primals = self._enter()
        try:
            given = tangent_leaves(tangent, sel)
            values = forward(tape, in_vars, given)
            return tree_unflatten(out_def, [
                zero_tangent(p) if v is None or v.index not in values
                else output_type(_fresh(values[v.index], given), p)
                for v, p in zip(out_vars, out_primals)])
        finally:
            self._exit()

    def __call__(self, vector):
        return self._pull(vector, keep=True) if self._transposed else self._jvp(vector)

    def pullback(self, cotangent):
        """The adjoint of this map applied to ``cotangent``."""
        return self._jvp(cotangent) if self._transposed else self._pull(cotangent, keep=True)

    def transpose(self) -> LinearMap:
        """The adjoint map (sharing this map's tape)."""
        if self._shared.closed:
            raise RuntimeError(self._closed)
        out = LinearMap.__new__(LinearMap)
        out._shared, out._transposed = self._shared, not self._transposed
        return out

    def apply_many(self, vectors) -> list:
        if self._shared.closed:  # also for an empty batch
            raise RuntimeError(self._closed)
        return [self(v) for v in vectors]

    def transpose_many(self, cotangents) -> list:
        if self._shared.closed:
            raise RuntimeError(self._closed)
        return [self.pullback(c) for c in cotangents]


def tangent_leaves(tangents, sel) -> list:
    """The flat tangents of the differentiated input leaves from ``tangents`` (one pytree per
    selected input), checked against the selection's structure and shapes and cast to the
    inputs' dtypes. ``None`` is a zero tangent; an integer, bool or non-array input's tangent
    must be ``None`` or zero-valued."""
    if not sel.single and not isinstance(tangents, tuple | list):
        raise TypeError(f"with a tuple argnums, tangents must be a tuple of one tangent per "
                        f"selected input ({len(sel.treedefs)}), got a "
                        f"{type(tangents).__name__}")
    parts = (tangents,) if sel.single else tuple(tangents)
    if len(parts) != len(sel.treedefs):
        raise TypeError(f"expected {len(sel.treedefs)} tangents, got {len(parts)}")
    flat = []
    for part, treedef in zip(parts, sel.treedefs):
        leaves, t_def = tree_flatten(part)
        if t_def != treedef:  # None (a zero tangent) may stand in for a leaf or a subtree
            leaves = []
            _leaves_up_to(treedef, part, leaves, part, "tangent", "input")
        flat.extend(leaves)
    out = []
    primals = iter(sel.primals)
    for i, t in enumerate(flat):
        if i in sel.fixed:
            # bool(np.any(t)): a traced tangent (of an outer transform) is read, not detached
            if t is not None and (not hasattr(sel.fixed[i], "shape") or bool(np.any(t))):
                raise ValueError("the tangent of an integer, bool or non-array input must be "
                                 "zero (or None): such inputs have no derivative")
            continue
        p = next(primals)
        if t is None:
            out.append(None)
            continue
        if type(t) in (int, float):
            t = np.asarray(t, dtype=float)
        elif not isinstance(p, Tracer) and not isinstance(t, Tracer):
            namespace_of((p, t))  # a NumPy tangent for a torch input: refused, never mixed
        if type(t) is bool or getattr(aval_of(t).dtype, "kind", "") == "b":
            raise TypeError(f"a bool tangent was given for an input of dtype "
                            f"{aval_of(p).dtype}; tangents must be floating or complex")
        if tuple(aval_of(t).shape) != tuple(aval_of(p).shape):
            raise ValueError(f"tangent of shape {aval_of(t).shape} does not match the input "
                             f"shape {aval_of(p).shape}")
        if aval_of(t).dtype.kind == "c" and aval_of(p).dtype.kind != "c":
            raise TypeError(f"a complex tangent was given for an input of dtype "
                            f"{aval_of(p).dtype}: a real input's tangent is real (casting "
                            "would drop the imaginary part); pass its real part, or make the "
                            "input complex")
        if aval_of(t).dtype != aval_of(p).dtype:
            t = ops.astype(t, dtype=aval_of(p).dtype.name)
        out.append(t)
    return out


def output_type(tangent, primal):
    """An output ``tangent`` with its ``primal``'s rank-0 type (the rule of ``zero_tangent``):
    a Python scalar for a Python scalar, a NumPy scalar for a NumPy scalar, a 0-d ndarray for a
    0-d ndarray, whatever the rules computed it as. For a traced primal (while staging, or
    inside an outer transform) the type is the one its marker gives it when it comes out: a
    traced tangent becomes weak or is marked an array to match."""
    if isinstance(primal, ArrayTracer):
        if primal.shape:
            return tangent
        kind = float if primal._weak() else np.ndarray if marks_array(primal._mut) else None
    elif type(primal) in (float, complex):
        kind = float
    elif type(primal) is np.ndarray and not primal.shape:
        kind = np.ndarray
    elif isinstance(primal, np.generic):
        kind = None  # a NumPy scalar
    else:
        return tangent
    if isinstance(tangent, ArrayTracer):  # (a linear tape's variable has no type to give)
        if not tangent.shape and kind is float and not tangent._weak():
            dtype = PYTHON_DTYPES.get(aval_of(tangent).dtype.kind, "float64")
            return ops.python_scalar(tangent, dtype=dtype)
        if not tangent.shape and kind is np.ndarray:
            mark_array(tangent)  # (a NumPy-scalar tracer only: others keep their marker)
        return tangent
    if kind is float:
        return tangent.item() if isinstance(tangent, np.ndarray | np.generic) else tangent
    if kind is np.ndarray:
        return np.asarray(tangent) if isinstance(tangent, np.generic) else tangent
    return tangent[()] if type(tangent) is np.ndarray and not tangent.shape else tangent


def zero_tangent(primal):
    """The zero tangent of an output that does not depend on the inputs, of the type a
    dependent one gets: a Python zero for a Python scalar, a NumPy scalar for a NumPy scalar."""
    aval = aval_of(primal)
    dtype = aval.dtype if aval.dtype.kind in "fc" else np.dtype(np.float64)
    if type(primal) in (bool, int, float, complex):
        return 0j if dtype.kind == "c" else 0.0
    if isinstance(primal, np.generic):
        return np.zeros((), dtype)[()]
    return ops.zeros_like(primal, dtype=dtype.name) if hasattr(primal, "shape") else \
        np.zeros(aval.shape, dtype)

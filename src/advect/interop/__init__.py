"""Host bridges: one Advect function as one differentiable operation of another framework.

``advect.interop.torch.wrap``, ``advect.interop.jax.wrap`` and ``advect.interop.autograd.wrap``
each import their framework when used; importing ``advect`` or this package imports none.
They share the :class:`Bridge` below: the host's array leaves (positional and keyword pytrees)
become NumPy arrays, the forward pass runs once under ``advect.vjp`` and the recorded pullback
answers the host's backward pass (``f`` is never rerun for a first derivative). For higher
derivatives the backward is itself an Advect function (:meth:`Bridge.vjp_bridge`), wrapped by
the same host bridge.

Complex numbers: Advect's cotangents are real adjoints (``grad(abs(z)**2) == 2*z``). Each host
module states its own convention and the conversion (``conjugate=True`` conjugates cotangents
on the way in and out).

Example:
    >>> import numpy as np
    >>> from advect.interop import Bridge
    >>> bridge = Bridge.of(lambda x, *, k: np.sin(x) * k, (np.array([0.0]),), {"k": 2.0},
    ...                    is_operand=lambda leaf: isinstance(leaf, np.ndarray))
    >>> outs, record = bridge.forward([np.array([0.0])])
    >>> outs, bridge.backward(record, [np.array([1.0])])
    ([array([0.])], [array([2.])])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autodiff.api import linearize, vjp
from ..pytree import TreeDef, tree_flatten, tree_unflatten

__all__ = ["Bridge", "Record"]


class Record:
    """One forward pass: the output structure and its linear map, whose pullback serves one
    backward pass or a batch of them (``None`` when the function has no operand)."""

    __slots__ = ("out_def", "pullback", "out_dtypes")

    def __init__(self, out_def: TreeDef, pullback, out_dtypes: list):
        self.out_def, self.pullback, self.out_dtypes = out_def, pullback, out_dtypes

    def close(self) -> None:
        if self.pullback is not None:
            self.pullback.close()
            self.pullback = None


class Bridge:
    """An Advect function of the host call's operand leaves (the other leaves are constants).

    ``call(*arrays)`` runs the function; :meth:`forward` runs it once under ``vjp`` and returns
    the flat NumPy outputs; :meth:`backward` applies the recorded pullback to the flat output
    cotangents; :meth:`vjp_bridge` is the backward as a Bridge of its own, for higher orders.
    """

    def __init__(self, f: Callable, treedef: TreeDef, leaves: list, positions: list[int],
                 conjugate: bool = False):
        self.f, self.treedef, self.leaves, self.positions = f, treedef, leaves, positions
        self.conjugate = conjugate
        self.out_def: TreeDef | None = None
        self.out_dtypes: list[np.dtype] = []
        self.inputs: list = []  # the host's operand leaves of the call this bridge serves

    @classmethod
    def of(cls, f: Callable, args: tuple, kwargs: dict, *, is_operand: Callable[[Any], bool],
           to_numpy: Callable[[Any], Any] | None = None, conjugate: bool = False) -> Bridge:
        """The bridge of one host call: leaves accepted by ``is_operand`` are differentiable
        operands; the others are constants, passed through ``to_numpy`` (which converts host
        arrays and returns other leaves unchanged)."""
        to_numpy = to_numpy or (lambda leaf: leaf)
        leaves, treedef = tree_flatten((tuple(args), dict(kwargs)))
        positions = [i for i, leaf in enumerate(leaves) if is_operand(leaf)]
        operand = set(positions)
        constants = [None if i in operand else to_numpy(leaf) for i, leaf in enumerate(leaves)]
        bridge = cls(f, treedef, constants, positions, conjugate)
        bridge.inputs = [leaves[i] for i in positions]
        return bridge

    def call(self, *arrays):
        leaves = list(self.leaves)
        for i, a in zip(self.positions, arrays):
            leaves[i] = a
        args, kwargs = tree_unflatten(self.treedef, leaves)
        return self.f(*args, **kwargs)

    def _flat_outputs(self, out) -> tuple[list, TreeDef]:
        leaves, out_def = tree_flatten(out)
        arrays = []
        for k, leaf in enumerate(leaves):
            array = np.asarray(leaf)
            if array.dtype.kind not in "biufc":
                raise TypeError(f"advect.interop: output leaf {k} is a {type(leaf).__name__}; "
                                "a bridged function returns a pytree of arrays")
            arrays.append(array)
        if self.out_def is None:
            self.out_def, self.out_dtypes = out_def, [a.dtype for a in arrays]
        elif out_def != self.out_def:  # e.g. result_shape_dtypes= that does not match
            raise TypeError(f"advect.interop: the function returned the structure {out_def!r}, "
                            f"expected {self.out_def!r} (the declared or first result's)")
        return arrays, out_def

    def run(self, arrays: Sequence) -> list:
        """The outputs alone (no derivative is recorded). The arrays may share the host's
        memory, so ``f`` sees read-only views, as inside a transform."""
        try:
            out = self.call(*map(_read_only, arrays))
        except ValueError as e:
            if "read-only" in str(e):
                e.add_note("advect.interop: a bridged function must not write into its inputs "
                           "(they are the caller's arrays); copy the input first (x = x.copy())")
            raise
        return self._flat_outputs(out)[0]

    def forward(self, arrays: Sequence) -> tuple[list, Record]:
        """Run once under ``linearize``: the flat outputs and the record for
        :meth:`backward`."""
        if not arrays:
            outs, out_def = self._flat_outputs(self.call())
            return outs, Record(out_def, None, [o.dtype for o in outs])
        out, linear_map = linearize(self.call, *arrays, argnums=tuple(range(len(arrays))))
        outs, out_def = self._flat_outputs(out)
        return outs, Record(out_def, linear_map, [o.dtype for o in outs])

    def backward(self, record: Record, cotangents: Sequence, keep: bool = False) -> list:
        """Input cotangents (host convention) from output cotangents (host convention); an
        output cotangent may be ``None`` (zero). Closes the record unless ``keep``."""
        if record.pullback is None:
            return [None] * len(self.positions)
        cts = [_cotangent(c, dtype, self.conjugate) for c, dtype in
               zip(cotangents, record.out_dtypes)]
        try:
            results = record.pullback.pullback(tree_unflatten(record.out_def, cts))
        finally:
            if not keep:
                record.close()
        return [_conj(np.asarray(r), self.conjugate) for r in results]

    def vjp_bridge(self) -> Bridge:
        """The backward as an Advect function of ``(*operands, *output cotangents)`` with the
        host's convention, so a host can differentiate it again (higher orders)."""
        n, conjugate, call = len(self.positions), self.conjugate, self.call
        out_def, inexact = self.out_def, [d.kind in "fc" for d in self.out_dtypes]

        def pullback_of(*xs):
            arrays, cts = xs[:n], xs[n:]
            _, pullback = vjp(call, tuple(range(n)))(*arrays)
            cts = [_conj(c, conjugate) if keep else None for c, keep in zip(cts, inexact)]
            results = pullback(tree_unflatten(out_def, cts))
            return tuple(_conj(r, conjugate) for r in results)

        m = out_def.num_leaves
        return Bridge(pullback_of, tree_flatten((tuple(range(n + m)), {}))[1],
                      [None] * (n + m), list(range(n + m)), conjugate)


def _conj(array, conjugate: bool):
    """Conjugate a complex array (NumPy or traced) for a host whose convention asks for it."""
    return np.conj(array) if conjugate and array.dtype.kind == "c" else array


def _read_only(array):
    if isinstance(array, np.ndarray) and array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array


def _cotangent(ct, dtype: np.dtype, conjugate: bool):
    """A host cotangent for an output of ``dtype`` in Advect's convention (None: zero)."""
    if ct is None or dtype.kind not in "fc":
        return None
    ct = np.asarray(ct)
    if ct.dtype != dtype and not (ct.dtype.kind == "c" and dtype.kind == "f"):
        ct = ct.astype(dtype)
    if dtype.kind == "f" and ct.dtype.kind == "c":
        ct = ct.real.astype(dtype)  # the real part is the cotangent of a real output
    return _conj(ct, conjugate)

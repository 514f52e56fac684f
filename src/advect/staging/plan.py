"""The execution plan: a graph scheduled once, run by a loop that only calls and stores.

Values live in a dense slot table (inputs first, then constants and literals, then node
outputs). Each step is a small closure over a provider callable resolved at build time; it
fetches its operands, calls, stores, and drops every value whose last use it was. With NumPy,
an elementwise op whose operand dies at that step writes into the operand's buffer (``out=``)
when that is provably safe: the buffer is a fresh array this plan allocated (not an input, a
constant, a view or an output), nothing alive aliases it, and its shape and dtype are the
result's. Donation saves the page faults of fresh allocations, which is how a staged call can
beat eager NumPy on large arrays.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable

import numpy as np

from ..core import Op
from . import blocks
from .blocks import block_regions, region_order
from .graph import Graph, Literal

__all__ = ["Plan"]

_NEVER = float("inf")


# ops whose NumPy ufunc (on this NumPy) differs from the op for integer input: NumPy 2.0's
# floor, ceil and trunc round integers to floats, the ops keep them
_NOT_THEIR_UFUNC = frozenset(name for name in ("floor", "ceil", "trunc")
                             if getattr(np, name)(np.zeros(1, np.int64)).dtype.kind != "i")


def donation_ufunc(op: Op, n_inputs: int, attrs: dict):
    """The NumPy ufunc an elementwise op's NumPy implementation calls, if it takes ``out=``."""
    if attrs or not op.elementwise:
        return None
    key = (op, n_inputs)
    try:
        return _UFUNC_OF[key]
    except KeyError:
        pass
    ufunc = None if op.multiple_results or op.name in _NOT_THEIR_UFUNC else getattr(
        np, op.name, None)
    if not (isinstance(ufunc, np.ufunc) and ufunc.nin == n_inputs and ufunc.nout == 1):
        ufunc = None
    _UFUNC_OF[key] = ufunc
    return ufunc


_UFUNC_OF: dict[tuple, object] = {}  # (op, number of operands) -> its ufunc or None


def _ufuncs(graph: Graph) -> list:
    """Per node, the NumPy ufunc it calls directly (None for custom primitives and others)."""
    return [donation_ufunc(n.op, len(n.inputs), n.attrs) if getattr(n.op, "handle", None)
            is None else None for n in graph.nodes]


class Plan:
    """``run(inputs) -> outputs`` for one graph on one provider namespace ``xp``."""

    __slots__ = ("xp", "n_inputs", "template", "steps", "out_slots", "donations",
                 "copied_outputs", "blocked")

    def __init__(self, graph: Graph, xp=np, device=None, blocked: bool = True):
        # device: where a non-NumPy provider's constants go (None: its default device);
        # blocked=False: no cache-blocked regions (every step over whole arrays)
        self.xp = xp
        ufuncs = _ufuncs(graph) if xp is np else [None] * len(graph.nodes)
        self.blocked = blocked = blocked and xp is np and any(
            u is not None and graph.avals[n.outputs[0]].size >= blocks.MIN_ELEMENTS
            for n, u in zip(graph.nodes, ufuncs))
        if blocked:  # longer elementwise regions: nodes outside them may move after them
            order = region_order(graph, ufuncs)
            if order is not None:
                graph = graph.copy(nodes=False)
                graph.nodes = order
                ufuncs = _ufuncs(graph)
        slot: dict[int, int] = {v: i for i, v in enumerate(graph.inputs)}
        self.n_inputs = len(graph.inputs)
        template: list = [None] * self.n_inputs
        for vid, const in graph.constants.items():
            slot[vid] = len(template)
            if xp is not np:  # saved as read-only NumPy, which torch would share, with a warning
                const = np.array(const)
            template.append(const if xp is np else xp.asarray(const) if device is None
                            else xp.asarray(const, device=device))

        def operand(x) -> int:
            if type(x) is Literal:
                template.append(x.value)
                return len(template) - 1
            return slot[x]

        for node in graph.nodes:
            for v in node.outputs:
                slot.setdefault(v, -1)  # assigned below, after operand slots
        node_args = []
        for node in graph.nodes:
            args = tuple(operand(x) for x in node.inputs)
            for v in node.outputs:
                slot[v] = len(template)
                template.append(None)
            node_args.append(args)
        self.template = template
        self.out_slots = tuple(operand(x) for x in graph.outputs)
        self.copied_outputs = self._copied_outputs(graph, node_args, slot)
        self.steps, self.donations = self._schedule(graph, node_args, slot, ufuncs)

    def _copied_outputs(self, graph, node_args, slot) -> tuple:
        """Outputs returned as a fresh copy on each call: the caller's input or a view of one
        (an optimized-away ``x.copy()`` or ``x * 1.0``: writing the result must not change the
        input), a folded constant (a gradient of ones: as writable as eager NumPy's), and any
        constant on providers other than NumPy (a captured array is returned read-only on
        NumPy). Two outputs may still share storage (docs/staging.md)."""
        rooted = set(range(self.n_inputs))
        for node, args in zip(graph.nodes, node_args):
            if not node.op.allocates and not rooted.isdisjoint(args):
                rooted.update(slot[v] for v in node.outputs)  # conservatively a view
        copied = {slot[v] for v in graph.constants
                  if self.xp is not np or graph.origins.get(v) != "captured"}
        return tuple(i for i, s in enumerate(self.out_slots) if s in rooted or s in copied)

    def _schedule(self, graph, node_args, slot, ufuncs):
        outputs = set(self.out_slots)
        last_use: dict[int, float] = {}
        for k, args in enumerate(node_args):
            for s in args:
                last_use[s] = k
        for s in outputs:
            last_use[s] = _NEVER
        fresh, roots = self._aliases(graph, node_args, slot, ufuncs)
        # a fresh buffer is free once every value that may alias it has had its last use
        free_at: dict[int, float] = {}
        for s, rs in roots.items():
            for r in rs:
                free_at[r] = max(free_at.get(r, -1), last_use.get(s, -1))
        first_node_slot = self.n_inputs + len(graph.constants)
        dying: dict[int, list] = {}  # step -> the node results it reads last
        for s, k in last_use.items():
            if s >= first_node_slot and k != _NEVER:
                dying.setdefault(k, []).append(s)
        steps, deads, donations = [], [], 0
        avals = graph.avals
        for k, (node, args, ufunc) in enumerate(zip(graph.nodes, node_args, ufuncs)):
            vids = node.outputs
            outs = (slot[vids[0]],) if len(vids) == 1 else tuple(slot[v] for v in vids)
            dead = tuple(dying[k]) if k in dying else ()
            unread = [s for s in outs if s not in last_use]  # results nobody reads
            if unread:
                dead += tuple(unread)
            donor = None if ufunc is None else _donor(graph, node, args, fresh, free_at, k)
            donations += donor is not None
            steps.append(_step(node, ufunc, self.xp, args, outs, dead, donor,
                               [avals[v] for v in vids]))
            deads.append(dead)
        if self.blocked:  # elementwise regions over large arrays, in chunks
            steps = block_regions(graph, node_args, slot, steps, ufuncs, last_use, deads,
                                  (fresh, roots, free_at))
        return tuple(steps), donations

    def _aliases(self, graph, node_args, slot, ufuncs):
        """Which slots hold fresh buffers, and for each slot the fresh buffers it may alias.

        Only results that may be views of (or equal to) an operand inherit its buffers: an op
        that always allocates its result aliases nothing, which keeps every set small (a chain
        of ops would otherwise carry the union of all buffers before it: quadratic time)."""
        fresh: set[int] = set()
        roots: dict[int, frozenset] = {}
        avals = graph.avals
        if self.xp is not np or not any(  # donation happens only with NumPy, for larger arrays
                u is not None and avals[n.outputs[0]].size >= _DONATE_MIN
                for n, u in zip(graph.nodes, ufuncs)):
            return fresh, roots
        empty = frozenset()
        for node, args, ufunc in zip(graph.nodes, node_args, ufuncs):
            outs = [slot[v] for v in node.outputs]
            if ufunc is not None:
                if avals[node.outputs[0]].size >= _DONATE_MIN:
                    fresh.add(outs[0])
                    roots[outs[0]] = frozenset(outs)
                else:
                    roots[outs[0]] = empty  # small: never donated
                continue
            if node.op.allocates:
                for s in outs:
                    roots[s] = empty
                continue
            inherited = frozenset().union(*(roots.get(s, empty) for s in args))
            for s in outs:
                roots[s] = inherited  # conservatively a view of any operand
        return fresh, roots

    def run(self, inputs) -> list:
        env = self.template.copy()
        env[:self.n_inputs] = inputs
        for step in self.steps:
            step(env)
        outs = [env[s] for s in self.out_slots]
        for i in self.copied_outputs:
            if not isinstance(outs[i], bool | int | float | complex | np.generic):  # immutable
                outs[i] = self.xp.asarray(outs[i], copy=True)
        return outs


# results smaller than this are not donated: analysing aliases costs more plan time than
# reusing such a buffer saves (a 0-d result is never donated: it may be a NumPy scalar)
_DONATE_MIN = 64


def _donor(graph, node, args, fresh, free_at, k):
    """The operand slot a ufunc node may write its result into: a fresh buffer this step
    frees, of the result's aval (None: none)."""
    aval = graph.avals[node.outputs[0]]
    if aval.size < _DONATE_MIN:
        return None
    for x, s in zip(node.inputs, args):
        if s in fresh and free_at.get(s) == k and graph.avals[x] == aval:
            return s
    return None


def _step(node, ufunc, xp, args: tuple, outs: tuple, dead: tuple, donor, avals: list) -> Callable:
    """One step as a closure; variants by arity so the common cases index directly
    (``ufunc``: the NumPy ufunc the node calls, None for others)."""
    op = node.op
    if donor is not None:
        return _donating_step(ufunc, args, outs[0], donor, dead)
    # an elementwise op's NumPy implementation is its ufunc: call it without the wrapper
    fn = ufunc if ufunc is not None else _kernel(op, xp, len(args), node.attrs)
    handle = getattr(op, "handle", None)
    if handle is not None:  # a custom primitive: its outputs must be what its rule declared
        fn = _checked(fn, handle, avals)
    if avals and not op.multiple_results and avals[0].weak:
        fn = _python_scalar(fn, _EXACT_INT.get(op.name))  # a Python scalar out, as bind gives
    out = outs if op.multiple_results else outs[0]
    if op.multiple_results:
        def step(env):
            for s, v in zip(out, fn(*[env[a] for a in args])):
                env[s] = v
            for s in dead:
                env[s] = None
        return step
    if len(args) == 1 and not dead:
        (a,) = args

        def step(env):
            env[out] = fn(env[a])
        return step
    if len(args) == 2 and not dead:
        a, b = args

        def step(env):
            env[out] = fn(env[a], env[b])
        return step
    if len(args) == 1 and len(dead) == 1:
        (a,), (d,) = args, dead

        def step(env):
            env[out] = fn(env[a])
            env[d] = None
        return step
    if len(args) == 2 and len(dead) == 1:
        (a, b), (d,) = args, dead

        def step(env):
            env[out] = fn(env[a], env[b])
            env[d] = None
        return step
    if len(args) == 2:
        a, b = args

        def step(env):
            env[out] = fn(env[a], env[b])
            for s in dead:
                env[s] = None
        return step

    def step(env):
        env[out] = fn(*[env[a] for a in args])
        for s in dead:
            env[s] = None
    return step


def _kernel(op: Op, xp, n_operands: int, attrs: dict) -> Callable:
    """The callable of the operands alone that runs ``op`` with these attrs."""
    fn = None if op.kernel is None else op.kernel(xp, n_operands, **attrs)
    return functools.partial(op.impl, xp, **attrs) if fn is None else fn


# Python's integer arithmetic, for nodes whose operands are all Python ints: eager code computes
# those in Python, exactly, where int64 would wrap (2**40 * 2**40)
_EXACT_INT = {"add": operator.add, "subtract": operator.sub, "multiply": operator.mul,
              "negative": operator.neg, "abs": abs,
              "bitwise_left_shift": lambda x, y: x << y if y >= 0 else None,
              "pow": lambda x, y: x**y if y >= 0 else None}  # None: NumPy's answer, 2**-1 raises


def _python_scalar(fn, exact=None):
    def call(*arrays):
        if exact is not None and all(type(a) is int for a in arrays):
            out = exact(*arrays)
            if out is not None:
                return out
        out = fn(*arrays)
        return out.item() if isinstance(out, np.generic) else out
    return call


def _checked(fn, handle, avals):
    def call(*arrays):
        outs = fn(*arrays)
        handle.check_replay(outs, avals)
        return outs
    return call


def _donating_step(ufunc, args, out, donor, dead):
    if len(args) == 1:
        (a,) = args

        def step(env):
            env[out] = ufunc(env[a], out=env[donor])
            for s in dead:
                env[s] = None
        return step
    if len(args) == 2:
        a, b = args

        def step(env):
            env[out] = ufunc(env[a], env[b], out=env[donor])
            for s in dead:
                env[s] = None
        return step

    def step(env):
        env[out] = ufunc(*[env[a] for a in args], out=env[donor])
        for s in dead:
            env[s] = None
    return step

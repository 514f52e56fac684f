"""``checkpoint(f)``: differentiate a block by recomputing it instead of storing its intermediates.

Inside a reverse-mode trace (``grad``, ``vjp``, ``linearize``, ...) a checkpointed block runs its
primal on plain values (no tape, every intermediate freed at once) and puts one equation on the
linear tape: ``checkpoint_jvp``, whose residuals are only the block's inputs. Its transpose
re-linearizes the block at those inputs, pulls the cotangent back through that short-lived tape
and drops it. The recomputation happens inside whatever outer traces are live, so derivatives of
any order equal the un-checkpointed ones.

Other cases need no tape at this level: with concrete values and tangents (plain forward mode) or
inside a staging trace the block simply runs inline. Forward mode over an outer reverse trace
runs the block's JVP as one checkpointed block of that outer trace.

``checkpoint_jvp`` is a tape-only op: it is created here, never by a frontend, and never reaches
a staged graph (staging inlines the block), which is why it lives with ``checkpoint`` and not in
``ops/``: its rules need the autodiff machinery that ``ops`` cannot import.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import core, ops
from ..core import Op, Tracer
from ..dtypes import Aval, aval_of
from ..errors import EscapedTracerError, TracingError
from ..generators import GENERATOR_KINDS, generators_of, same_state
from ..generators import set_state as _set_rng_state
from ..generators import state_of as _rng_state
from ..numpy._mutation import View, input_marker, mark_view
from ..providers import is_array
from ..pytree import TreeDef, tree_flatten, tree_unflatten
from . import state
from .forward import JVPTrace, JVPTracer, split
from .reverse import LinearTracer, _root, backward, linearize_flat, lower

__all__ = ["checkpoint", "jvp_flat", "vjp_flat", "innermost_trace", "is_array_leaf"]


# --- running a flat function's JVP or VJP afresh ------------------------------------------------

def innermost_trace(leaves: Sequence[Any]):
    """The live trace of highest level among ``leaves`` (``None`` when none is traced)."""
    trace, level = None, 0
    for x in leaves:
        if isinstance(x, Tracer):
            t = x._trace
            if not t.alive:
                raise EscapedTracerError(
                    "a traced value was used after the transform that created it returned; "
                    "return it from the function instead of storing it outside")
            if t.level > level:
                trace, level = t, t.level
    return trace


def _inputs(trace, primals, tangents):
    """Read-only forward-mode tracers for the array inputs (so that every array operand is
    traced, even for providers whose operators refuse foreign operands); others pass as is."""
    inputs = []
    for p, t in zip(primals, tangents):
        if t is None and not is_array_leaf(p):
            inputs.append(p)
        else:
            x = JVPTracer(trace, p, t)
            x._mut = input_marker(p)
            inputs.append(x)
    return inputs


def jvp_flat(fun: Callable, primals: Sequence[Any], tangents: Sequence[Any]
             ) -> tuple[TreeDef, list, list]:
    """Run ``fun(*inputs)`` in a fresh forward-mode trace (``None`` tangents are zeros).

    Returns the output tree structure, the output primal leaves and their tangents (``None``
    where an output does not depend on the inputs). Primals and tangents may be tracers of
    outer transforms: the run nests inside them.
    """
    trace = JVPTrace()
    state.hide(trace)  # an internal trace: transform_state sees the levels around it
    try:
        out = fun(*_inputs(trace, primals, tangents))
        leaves, treedef = tree_flatten(out)
        pairs = [lower(trace, leaf) for leaf in leaves]
    finally:
        trace.close()
    return treedef, [p for p, _ in pairs], [t for _, t in pairs]


def vjp_flat(fun: Callable, primals: Sequence[Any], cotangents: Sequence[Any]) -> list:
    """Pull ``cotangents`` (one per output leaf of ``fun``, ``None`` for zero) back to
    ``primals`` (floating arrays or tracers); returns one cotangent per primal, ``None`` for
    zero. The tape lives only for this call."""

    def hidden(*xs):
        if xs:  # an internal trace: transform_state sees the levels around it
            state.hide(xs[0]._trace)
        return fun(*xs)

    out, in_vars, trace, tape = linearize_flat(hidden, list(primals))
    try:
        leaves = tree_flatten(out)[0]
        if len(leaves) != len(cotangents):
            raise ValueError(f"expected {len(leaves)} output cotangents, got {len(cotangents)}")
        seeds = [(lower(trace, leaf)[1], ct) for leaf, ct in zip(leaves, cotangents)]
        result = backward(tape.tape, seeds)
    finally:
        trace.close()
        tape.close()
    return [result.get(v.index) for v in in_vars]


# --- the tape-only op ----------------------------------------------------------------------------

class _Block:
    """A checkpointed block as the tape sees it: the flat function of its array inputs, which
    inputs carry tangents (``diff_in``), which outputs are differentiable (``diff_out``, of
    ``n_out`` output leaves) and the avals of those outputs; the random generators the primal
    run drew from, with their states before it (``draws``), a fingerprint of its
    differentiable outputs (``prints``) that every recomputation must reproduce, and the
    transform-state levels the primal run saw (``levels``). Never serialized."""

    __slots__ = ("fun", "n_in", "diff_in", "n_out", "diff_out", "out_avals", "draws", "prints",
                 "levels")

    def __init__(self, fun: Callable, n_in: int, diff_in: tuple[int, ...], n_out: int,
                 diff_out: tuple[int, ...], out_avals: tuple[Aval, ...], draws: list,
                 prints: list, levels: tuple):
        self.fun, self.n_in, self.diff_in = fun, n_in, diff_in
        self.n_out, self.diff_out, self.out_avals = n_out, diff_out, out_avals
        self.draws, self.prints, self.levels = draws, prints, levels

    def replay(self, *args):
        """``fun(*args)`` again, drawing the primal run's random numbers; refuses a result that
        differs from the primal run's (a source of randomness or state the block does not
        receive as an argument), which would make the derivative silently wrong."""
        now = [(g, _rng_state(g)) for g, _ in self.draws]
        try:
            for g, before in self.draws:
                _set_rng_state(g, before)
            with state.replaying(self.levels):
                out = self.fun(*args)
        finally:
            for g, current in now:
                _set_rng_state(g, current)
        leaves = tree_flatten(out)[0]
        for j, expected in zip(self.diff_out, self.prints):
            if not _same_print(_fingerprint(leaves[j]), expected):
                raise TracingError(
                    f"checkpoint: recomputing {self!r} gave output {j} different values than "
                    "its first run, so its derivative would be wrong. The block must be "
                    "deterministic: pass random numbers (or the random generator) and any "
                    "state it reads (globals, ad.transform_state it updates) as arguments of "
                    "the checkpointed function")
        return out

    def split(self, args: Sequence[Any]) -> tuple[list, list]:
        """``checkpoint_jvp`` operands -> (primals, tangents with ``None`` where absent)."""
        primals = list(args[:self.n_in])
        tangents: list = [None] * self.n_in
        for i, t in zip(self.diff_in, args[self.n_in:]):
            tangents[i] = t
        return primals, tangents

    def __repr__(self) -> str:
        return f"<checkpointed block {getattr(self.fun, '__qualname__', self.fun)!r}>"


def _block_jvp(block: _Block, args: Sequence[Any]) -> tuple:
    """The block's output tangents (the ``diff_out`` ones, zeros filled in) by recomputation."""
    primals, tangents = block.split(args)
    _, outs, out_tangents = jvp_flat(block.replay, primals, tangents)
    return tuple(ops.zeros_like(outs[j]) if out_tangents[j] is None else out_tangents[j]
                 for j in block.diff_out)


def _checkpoint_jvp_abstract(*avals, block):
    return block.out_avals


def _checkpoint_jvp_impl(xp, *args, block):
    return _block_jvp(block, args)


def _checkpoint_jvp_jvp(primals, tangents, out, *, block):
    # d(J(p) t) = J(p) dt + (dJ(p)[dp]) t: the JVP of the recomputed JVP
    return tuple(jvp_flat(lambda *a: _block_jvp(block, a), primals, tangents)[2])


def _checkpoint_jvp_transpose(ct, *args, block):
    primals = args[:block.n_in]

    def block_of_diff_inputs(*xs):
        full = list(primals)
        for i, x in zip(block.diff_in, xs):
            full[i] = x
        return block.replay(*full)

    out_cts: list = [None] * block.n_out
    for j, c in zip(block.diff_out, ct):
        out_cts[j] = c
    in_cts = vjp_flat(block_of_diff_inputs, [primals[i] for i in block.diff_in], out_cts)
    return (None,) * block.n_in + tuple(in_cts)


checkpoint_jvp = Op(
    "checkpoint_jvp", attrs={"block": "process"}, abstract=_checkpoint_jvp_abstract,
    impl=_checkpoint_jvp_impl, jvp=_checkpoint_jvp_jvp, transpose=_checkpoint_jvp_transpose,
    multiple_results=True)


# --- what a recomputation must reproduce ------------------------------------------------------

def _generators(fun: Callable, static: Sequence[Any]) -> tuple:
    """The random generators a block may draw from: NumPy's global one, those among its
    non-array arguments and those its function names (closure cells and globals)."""
    found = [np.random.mtrand._rand, *(x for x in static if isinstance(x, GENERATOR_KINDS)),
             *(g for _, g in generators_of(fun))]
    return tuple({id(g): g for g in found}.values())


def _draws(generators: tuple, before: list) -> list:
    """``(generator, state before)`` for the generators whose state changed since ``before``."""
    return [(g, saved) for g, saved in zip(generators, before)
            if not same_state(_rng_state(g), saved)]


def _fingerprint(leaf) -> tuple | None:
    """Cheap summary of a concrete NumPy output (sums that see order and size, and the squared
    norm), or ``None`` where there is no concrete NumPy value (staging, other providers)."""
    while type(leaf) is JVPTracer:
        leaf = leaf.primal
    if isinstance(leaf, Tracer) or not isinstance(leaf, np.ndarray | np.generic | float | complex):
        return None
    flat = np.asarray(leaf).reshape(-1)
    return (np.sum(flat), np.sum(flat[::3]), np.vdot(flat, flat).real, flat.size,
            np.finfo(flat.dtype).eps ** 0.5)


def _same_print(a: tuple | None, b: tuple | None) -> bool:
    if a is None or b is None:
        return True
    (s, s3, sq, n, rtol), (t, t3, tq, m, _) = a, b
    if n != m:
        return False
    if not np.isfinite([s, s3, sq, t, t3, tq]).all():  # NaN or inf: nothing to compare
        return True
    scale = max(float(sq), float(tq))
    bound = rtol * (n * scale) ** 0.5 + np.finfo(float).tiny  # Cauchy-Schwarz: |sum| <= this
    return abs(s - t) <= bound and abs(s3 - t3) <= bound and abs(sq - tq) <= rtol * scale


# --- the transform ------------------------------------------------------------------------------

def is_array_leaf(x) -> bool:
    """Array leaves (of any provider, and traced ones) are a block's inputs; others are static."""
    return isinstance(x, Tracer | np.generic) or is_array(x)


def _inexact(x) -> bool:
    """A differentiable output leaf: a floating array, or a Python float or complex (the weak
    scalar a block of Python-scalar inputs computes)."""
    return type(x) in (float, complex) or is_array_leaf(x) and aval_of(x).dtype.kind in "fc"


def _readonly(x):
    if type(x) is np.ndarray and x.flags.writeable:
        x = x.view()
        x.flags.writeable = False
    return x


def _wrap(trace, value, tangent):
    return JVPTracer(trace, value, tangent) if tangent is not None or is_array_leaf(value) \
        else value


def _captures(trace, leaves) -> bool:
    """Whether a block's output ``leaves`` hold a value of ``trace`` (or of a trace inside it)
    that did not come in through the block's arguments."""
    return any(isinstance(leaf, Tracer) and leaf._trace.level >= trace.level for leaf in leaves)


def _check_captured(trace, leaves, where):
    if _captures(trace, leaves):
        raise TracingError(
            f"{where}: the block uses a traced value that is not one of its arguments, so "
            "its derivative cannot be recomputed; pass that value to the checkpointed "
            "function as an argument")


def _call(fun: Callable, args: list, generators: tuple, outer: bool = False):
    """``fun(*args)`` with array ``args``, checkpointed against the innermost trace among them;
    ``generators`` are the random generators the block may draw from. ``outer``: the call
    checkpoints the block against the traces around an inner transform's block (see
    ``_linearized``)."""
    trace = innermost_trace(args)
    if type(trace) is not JVPTrace:  # no transform, or staging: there is no tape to spare
        return fun(*args)
    primals, tangents = split(trace, args)
    if any(type(t) is LinearTracer for t in tangents):
        return _linearized(trace, fun, args, primals, tangents, generators, outer)
    if not any(isinstance(v, Tracer) for v in (*primals, *tangents)):
        return fun(*args)  # plain forward mode: nothing is recorded anywhere
    return _forward(trace, fun, args, primals, tangents, generators, outer)


def _inline(fun: Callable, args: list, generators: tuple, before: list):
    """``fun(*args)`` run again as it is, its random draws those of its first run: a block an
    inner transform checkpoints may use a value of an outer trace that is not one of its
    arguments (a constant to the inner transform); against that outer trace the block is then
    not a function of its arguments alone, so it is recorded there op by op."""
    for g, saved in _draws(generators, before):
        _set_rng_state(g, saved)
    return fun(*args)


def _source(leaf, inputs) -> tuple[int | None, bool]:
    """``(i, same)``: the block input ``inputs[i]`` that the output ``leaf`` of the block's run
    is (``same``) or views (a NumPy view of it, or a view tracer of an outer trace), else
    ``(None, False)``."""
    for i, p in enumerate(inputs):
        if leaf is p:
            return i, True
    if type(leaf) is np.ndarray and leaf.base is not None:
        base = leaf.base
        while isinstance(base, np.ndarray):  # a view of an input's view (inputs are read-only
            for i, p in enumerate(inputs):  # views), else of memory that input views
                if base is p:
                    return i, False
            base = base.base
        root = _root(leaf)
        for i, p in enumerate(inputs):
            if type(p) is np.ndarray and (p if p.base is None else _root(p)) is root:
                return i, False
    elif isinstance(leaf, Tracer):
        mut = leaf._mut
        while type(mut) is View:
            for i, p in enumerate(inputs):
                if mut.parent is p:
                    return i, False
            mut = mut.parent._mut
    return None, False


def _outputs(trace, args, inputs, leaves, out_tangents) -> list:
    """The block's output tracers. As for ``fun`` itself, an output that is one of the block's
    arguments is that argument, and one that views an argument is a view of it (a transformed
    one: not written through, and stale once the argument is written), so a write into either
    side is never silently lost on the other."""
    outs = [_wrap(trace, o, t) for o, t in zip(leaves, out_tangents)]
    for j, o in enumerate(leaves):
        i, same = _source(o, inputs)
        if i is None:
            continue
        a = args[i]
        if not (isinstance(a, Tracer) and a._trace is trace):
            continue
        if same:
            outs[j] = a
        elif isinstance(outs[j], Tracer):
            mark_view(a, outs[j], None)
    return outs


def _linearized(trace, fun, args, primals, tangents, generators, outer=False):
    """Reverse mode: the primal without a tape, then one ``checkpoint_jvp`` equation."""
    before = [_rng_state(g) for g in generators]
    levels = state.visible_levels()
    inputs = [_readonly(p) for p in primals]
    try:
        if innermost_trace(primals) is None and (core.debug_hooks is not None or not all(
                type(p) is np.ndarray for p in primals)):
            # inside ad.debug: run the primal traced (no tangents, so no tape) so that its
            # operations get source locations and numerics checks, as everywhere else; and
            # so for another provider's arrays (a torch tensor has no __array_namespace__,
            # and NumPy functions would turn it into a NumPy array)
            out_def, outs, _ = jvp_flat(fun, inputs, [None] * len(inputs))
            out = tree_unflatten(out_def, outs)
        else:
            out = _call(fun, inputs, generators, outer=True)
    except ValueError as e:
        if "read-only" in str(e):
            e.add_note("advect.checkpoint: a checkpointed block must not write into its inputs "
                       "(the recomputation reads them); copy the input first (x = x.copy())")
        raise
    leaves, treedef = tree_flatten(out)
    if outer and _captures(trace, leaves):
        return _inline(fun, args, generators, before)
    draws = _draws(generators, before)
    _check_captured(trace, leaves, "checkpoint")
    diff_in = tuple(i for i, t in enumerate(tangents) if t is not None)
    diff_out = tuple(j for j, o in enumerate(leaves) if _inexact(o))
    out_tangents: list = [None] * len(leaves)
    if diff_out:
        block = _Block(fun, len(primals), diff_in, len(leaves), diff_out,
                       tuple(aval_of(leaves[j]) for j in diff_out), draws,
                       [_fingerprint(leaves[j]) for j in diff_out], levels)
        results = checkpoint_jvp(*primals, *(tangents[i] for i in diff_in), block=block)
        for j, t in zip(diff_out, results):
            out_tangents[j] = t
    return tree_unflatten(treedef, _outputs(trace, args, inputs, leaves, out_tangents))


def _forward(trace, fun, args, primals, tangents, generators, outer=False):
    """Forward mode over outer traces: the block's JVP, checkpointed against those traces."""
    n = len(primals)
    diff_in = [i for i, t in enumerate(tangents) if t is not None]

    def fun_jvp(*xs):
        ts: list = [None] * n
        for k, i in enumerate(diff_in):
            ts[i] = xs[n + k]
        treedef, outs, out_ts = jvp_flat(fun, xs[:n], ts)
        return tree_unflatten(treedef, outs), out_ts

    inputs = [*primals, *(tangents[i] for i in diff_in)]
    before = [_rng_state(g) for g in generators] if outer else None
    out, out_tangents = _call(fun_jvp, inputs, generators, outer=True)
    leaves, treedef = tree_flatten(out)
    if outer and _captures(trace, [*leaves, *out_tangents]):
        return _inline(fun, args, generators, before)
    _check_captured(trace, leaves, "checkpoint")
    return tree_unflatten(treedef, _outputs(trace, args, inputs[:n], leaves, out_tangents))


def checkpoint(fun: Callable) -> Callable:
    """Wrap ``fun`` so that differentiating it recomputes its intermediates instead of storing them.

    Under reverse mode (``grad``, ``vjp``, ``linearize``, ``jacobian``, ``hessian``, ...) the
    wrapped block is recorded as one operation that keeps only its inputs; its intermediates are
    recomputed during the backward pass. Results and derivatives of every order are those of
    ``fun`` itself. Without a transform, in plain forward mode and while staging, ``fun`` runs
    as is (staged graphs have no tape, so staging inlines the block).

    Arguments may be pytrees; array leaves are the block's inputs, other leaves are passed
    through unchanged. The block must not write to its inputs, and every traced value it uses
    must come in through its arguments.

    Raises:
        TracingError: the block used a traced value of the active transform that was not passed
            as an argument.

    Example:
        >>> import numpy as np, advect as ad
        >>> def block(x):
        ...     return np.sin(x) * 1.01 + 0.1 * np.tanh(x)
        >>> def loss(x, layer):
        ...     for _ in range(3):
        ...         x = layer(x)
        ...     return np.sum(x)
        >>> x = np.array([0.1, 0.2])
        >>> bool(np.allclose(ad.grad(loss)(x, ad.checkpoint(block)), ad.grad(loss)(x, block)))
        True
    """

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        leaves, treedef = tree_flatten((args, kwargs))
        dynamic = [i for i, leaf in enumerate(leaves) if is_array_leaf(leaf)]
        static = [None if is_array_leaf(leaf) else leaf for leaf in leaves]  # the tape keeps these

        def flat(*xs):
            full = list(static)
            for i, x in zip(dynamic, xs):
                full[i] = x
            a, k = tree_unflatten(treedef, full)
            return fun(*a, **k)

        flat.__qualname__ = getattr(fun, "__qualname__", repr(fun))  # names the block in errors
        return _call(flat, [leaves[i] for i in dynamic], _generators(fun, static))

    return wrapped

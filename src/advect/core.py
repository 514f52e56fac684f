"""The engine: the ``Op`` record, ``bind``, traces with levels and the tracer base.

``bind(op, *args, **attrs)`` hands the call to the innermost live trace that owns one of its
arguments; with no tracer among the arguments it calls the provider directly. Each trace gets a
level from a process-wide counter when it is created, so a trace nested inside another always has
the higher level; values of outer traces are constants to inner ones (no perturbation confusion).
Traces never consult global state, so threads differentiating at once cannot see each other.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from .dtypes import Aval, aval_of
from .errors import EscapedTracerError, NoJVPError
from .providers import namespace_of

__all__ = ["Op", "bind", "apply_linear", "Trace", "Tracer", "REGISTRY", "new_level"]

REGISTRY: dict[str, Op] = {}

_levels = itertools.count(1)

# advect.debug's hooks while a debug context is active in any thread (see debug.py); else None
debug_hooks = None


def new_level() -> int:
    return next(_levels)


class Op:
    """One canonical operation: everything Advect knows about it.

    ``abstract(*avals, **attrs)`` returns the output aval (a tuple of them when
    ``multiple_results``); ``impl(xp, *arrays, **attrs)`` calls the provider;
    ``jvp(primals, tangents, out, **attrs)`` returns the output tangent, written with ops, with
    ``None`` for a zero tangent; ``transpose(ct, *args, **attrs)`` returns one cotangent per
    argument (``None`` where the argument is not linear) and exists only for ops that can appear
    on the linear tape. ``nondiff`` marks ops whose derivative is zero (comparisons, floor, argmax).
    ``strong`` marks ops whose result is a NumPy value even for Python scalars in (``astype``);
    every other op gives a weak Python scalar for Python scalars in, as NEP 50 says.
    ``signed_transpose = (rule, signs)`` says that ``transpose`` is ``rule`` with the cotangents
    of the arguments flagged in ``signs`` negated (subtract, negative): the reverse pass carries
    those signs instead of computing the negations. ``kernel(xp, n_operands, **attrs)``, where
    given, returns a callable of the operands alone that computes what ``impl`` with those attrs
    does, or None: a staged plan, whose attrs are fixed, asks once per node, so work that
    depends on the attrs only (an index tuple) is done once instead of on every call.

    ``attrs`` maps each attr the op takes to its kind, the check a loaded program's value must
    pass (``"axes"``, ``"bool"``, ``"shape_or_none"``: the kinds of ``staging/attrs.py``; a
    trailing ``?`` marks an attr a node may leave out; ``"process"``, a Python object of the
    running process, makes the op unsaveable). ``allocates`` says that ``impl`` always returns
    a new array, never an operand nor a view of one (a staged plan may then write into it);
    by default elementwise ops do and others may not.
    """

    __slots__ = ("name", "abstract", "impl", "jvp", "transpose", "attrs", "linear", "nondiff",
                 "multiple_results", "elementwise", "strong", "signed_transpose", "kernel",
                 "allocates", "__weakref__")

    def __init__(self, name: str, *, abstract: Callable, impl: Callable,
                 jvp: Callable | None = None, transpose: Callable | None = None,
                 attrs: dict[str, str] | None = None, linear: bool = False,
                 nondiff: bool = False, multiple_results: bool = False,
                 elementwise: bool = False, strong: bool = False,
                 signed_transpose: tuple | None = None, kernel: Callable | None = None,
                 allocates: bool | None = None):
        if name in REGISTRY:
            raise ValueError(f"an op named {name!r} is already registered")
        self.name = name
        self.abstract = abstract
        self.impl = impl
        self.transpose = transpose
        self.attrs = dict(attrs or {})
        self.allocates = elementwise if allocates is None else allocates
        self.linear = linear
        self.nondiff = nondiff
        self.multiple_results = multiple_results
        self.elementwise = elementwise
        self.strong = strong
        self.signed_transpose = signed_transpose
        self.kernel = kernel
        if jvp is None and linear:
            jvp = _linear_jvp(self)
        self.jvp = jvp
        REGISTRY[name] = self

    def __repr__(self) -> str:
        return f"Op({self.name!r})"

    def missing_jvp(self):
        return NoJVPError(f"operation {self.name!r} has no JVP rule, so it cannot be "
                          "differentiated in forward or reverse mode", op=self.name)


def _linear_jvp(op: Op) -> Callable:
    """A linear op's JVP is the op applied to the tangents (zeros filled in where needed)."""

    def jvp(primals, tangents, out, **attrs):
        if len(tangents) == 1 or all(t is not None for t in tangents):  # one: never None
            return apply_linear(op, tangents, primals, out, attrs)
        from .ops._rules import zeros_like_aval  # the rules module imports core

        filled = [zeros_like_aval(p) if t is None else t for p, t in zip(primals, tangents)]
        return bind(op, *filled, **attrs)

    return jvp


def apply_linear(op: Op, args, primals, out, attrs: dict):
    """``bind(op, *args, **attrs)`` for a JVP rule that applies a linear ``op`` to tangents in
    place of the ``primals`` it got (``out`` is the primal result).

    When each argument is a variable of one linear tape with its primal's aval, or the primal
    itself (a constant operand such as an index array), the result has the primal result's
    aval: the tape records it without deriving it again (the hot case of ``grad``)."""
    trace = None
    if debug_hooks is None and not op.multiple_results:
        for a, p in zip(args, primals):
            if isinstance(a, Tracer):
                if not a._linear or trace is not None and a._trace is not trace:
                    break
                aval = a.aval
                if type(p) is np.ndarray:  # the hot case, without building p's aval
                    if aval.shape != p.shape or aval.dtype != p.dtype or aval.weak \
                            or aval.device is not None:
                        break
                elif not aval == aval_of(p):
                    break
                trace = a._trace
            elif a is not p:
                break
        else:
            if trace is not None and trace.alive:
                return trace.record(op, args, attrs, Aval(out.shape, out.dtype) if (
                    type(out) is np.ndarray or isinstance(out, np.generic)) else aval_of(out))
    return bind(op, *args, **attrs)


def bind(op: Op, *args, **attrs):
    """Apply ``op`` to ``args``: the innermost trace among them interprets the call."""
    trace = None
    level = 0
    for a in args:
        if isinstance(a, Tracer):
            t = a._trace
            if not t.alive:
                raise t.dead_error(op.name)
            if t.level > level:
                trace, level = t, t.level
    if debug_hooks is not None:
        return debug_hooks.bind(op, trace, args, attrs)
    if trace is None:
        if args and (type(args[0]) is np.ndarray or len(args) == 2 and type(
                args[1]) is np.ndarray and type(args[0]) in _PYTHON_SCALARS):
            return op.impl(np, *args, **attrs)  # NumPy's: namespace_of(args), without the call
        out = op.impl(namespace_of(args), *args, **attrs)
        if (not args or type(args[0]) in _PYTHON_SCALARS) and isinstance(out, np.generic) \
                and not op.strong and all(type(a) in _PYTHON_SCALARS for a in args):
            return out.item()  # Python scalars in, a (weak) Python scalar out, as NEP 50 says
        return out
    return trace.process(op, args, attrs)


_PYTHON_SCALARS = (bool, int, float, complex)


Op.__call__ = bind  # ops.sin(x) is bind(ops.sin, x), without an extra call frame


class Trace:
    """An interpreter of ``bind``. Subclasses implement ``process``."""

    __slots__ = ("level", "alive")

    def __init__(self):
        self.level = next(_levels)  # new_level(), inline: one per transform call
        self.alive = True

    def process(self, op: Op, args: tuple, attrs: dict):
        raise NotImplementedError

    def close(self) -> None:
        """Mark the trace finished: its tracers can no longer be used."""
        self.alive = False

    def dead_error(self, what: str) -> Exception:
        """The error for using a tracer of this trace after it closed (``what`` names the use)."""
        return EscapedTracerError(
            f"{what}: a traced value was used after the transform that created it returned; "
            "return it from the function instead of storing it outside")


class Tracer:
    """Base of every traced value. Subclasses hold their trace's payload and an ``aval``."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000.0
    _linear = False  # True only for the linear tape's variables

    @property
    def aval(self):
        raise NotImplementedError


class OnFree:
    """Calls ``undo(*args)`` when freed. A context manager written as a generator keeps one in
    its frame: normally its ``finally`` has already undone everything (``undo`` must be
    idempotent) and this is a no-op; after an interrupt cut the ``finally`` short, the frame's
    teardown undoes what is left."""

    __slots__ = ("args", "undo")

    def __init__(self, undo: Callable, *args):
        self.args = args
        self.undo = undo  # set last: a half-built OnFree (an interrupt in here) does nothing

    def __del__(self):
        undo = getattr(self, "undo", None)
        if undo is not None:
            undo(*self.args)

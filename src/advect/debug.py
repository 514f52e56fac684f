"""``advect.debug``: source locations for operations, and NaN/inf detection, on request.

While a ``debug`` context is active in some thread, ``core.bind`` hands every call to
:meth:`_Hooks.bind` (and ``reverse.backward`` each transpose to :meth:`_Hooks.transpose`);
outside any context ``core.debug_hooks`` is ``None`` and the engine pays one global read per
call. The per-thread state below is consulted only while that global is set.

Locations are the first stack frame outside Advect and NumPy: the user's line that called the
operation. A bind made by Advect's own rules and transforms (an op inside a JVP rule, a tape
equation, a transpose) belongs to the user-level operation in progress: it inherits that
operation's name and location, and numerics are checked once per user-level operation, after it
returns, so a NaN is named by the operation the user wrote, not by the ops its rules use.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from . import core
from .autodiff.forward import JVPTracer
from .autodiff.reverse import LinearTrace
from .core import Tracer
from .errors import NumericsError, _RuleError
from .numpy._methods import ArrayTracer
from .providers import namespace_of

__all__ = ["debug"]

_SKIPPED = tuple(os.path.dirname(m.__file__) + os.sep for m in (sys.modules["advect"], np))
# binds made from these belong to the operation in progress (rules, transforms, the tape); binds
# from anywhere else (frontends, user code, checkpointed blocks, solver callbacks) are user-level
_INTERNAL = tuple(os.path.join(_SKIPPED[0], part) for part in
                  ("ops" + os.sep, "autodiff" + os.sep, "staging" + os.sep, "core.py"))


class _State(threading.local):
    def __init__(self):
        self.numerics: list[_Entry] = []  # one per active debug context of this thread
        # (op name, user-level op name, location) of the binds and transposes in progress
        self.stack: list[tuple[str, str, str]] = []
        self.origins: dict = {}  # id(tape variable) -> (variable, op name, location)
        self.prune_at = _PRUNE_AT


_PRUNE_AT = 100_000  # origins kept before dropping those of released tapes


def _prune(state: _State) -> None:
    """Forget the origins of tape variables nothing but this table holds (released tapes)."""
    origins = state.origins
    for key in [k for k, entry in origins.items() if sys.getrefcount(entry[0]) <= 2]:
        del origins[key]
    state.prune_at = max(_PRUNE_AT, 2 * len(origins))


_state = _State()
# reentrant: a context cut short by an interrupt is left by its generator's finalizer, which
# may run at any allocation, also while this thread holds the lock
_lock = threading.RLock()
_contexts: set = set()  # the debug contexts active in all threads


def _user_location() -> str:
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_SKIPPED):
        frame = frame.f_back
    if frame is None:
        return "<unknown location>"
    path = frame.f_code.co_filename
    if path.startswith(os.getcwd() + os.sep):
        path = os.path.relpath(path)
    return f"{path}:{frame.f_lineno} in {frame.f_code.co_name}"


def _concrete_parts(value, phase: str) -> Iterator[tuple[object, str]]:
    """The concrete arrays inside ``value`` (primal and tangents of nested JVP tracers), in the
    order they were computed: the primal, then the tangents from the innermost level out (a
    tangent from a non-finite primal, as log's at 0, is not where the NaN appeared)."""
    tangents = []
    while type(value) is JVPTracer:
        if value.tangent is not None:
            tangents.append(value.tangent)
        value = value.primal
    if not isinstance(value, Tracer):
        yield value, phase
    for tangent in reversed(tangents):
        yield from _concrete_parts(tangent, "JVP" if phase == "primal" else phase)


def _nonfinite(x) -> str | None:
    """``"NaN"`` or ``"inf"`` when the inexact array ``x`` holds one, else ``None``."""
    if isinstance(x, np.ndarray | np.generic):
        if x.dtype.kind not in "fc" or np.isfinite(x).all():
            return None
        return "NaN" if np.isnan(x).any() else "inf"
    if isinstance(x, float | complex):
        x = np.asarray(x)
        return None if np.isfinite(x) else ("NaN" if np.isnan(x) else "inf")
    dtype = getattr(x, "dtype", None)
    if dtype is None or not (str(dtype).startswith(("float", "complex"))):
        return None
    xp = namespace_of((x,))
    if bool(xp.all(xp.isfinite(x))):
        return None
    return "NaN" if bool(xp.any(xp.isnan(x))) else "inf"


_PHASES = {"primal": "primal value", "JVP": "JVP (tangent)", "VJP": "VJP (cotangent)"}


def _check(values, name: str, where: str, phase: str, detail: str = "") -> None:
    for value in values:
        for part, part_phase in _concrete_parts(value, phase):
            kind = _nonfinite(part)
            if kind is not None:
                error = NumericsError(f"{kind} in the {_PHASES[part_phase]} of operation "
                                      f"{name!r} at {where}{detail}")
                error.op, error.phase, error.location = name, part_phase, where
                raise error


def _annotate(error: BaseException, stack: list, where: str) -> None:
    if getattr(error, "_advect_located", False):
        return  # an inner operation already said where
    chain = " inside ".join(repr(op_name) for op_name, _, _ in reversed(stack))
    error.add_note(f"advect.debug: raised by operation {chain} called at {where}")
    if isinstance(error, _RuleError) and error.source_location is None:
        error.source_location = where  # NoJVPError & co. expose it
    try:
        error._advect_located = True
    except AttributeError:
        pass


def _eager(op, args, attrs):
    """``op`` on concrete ``args``, as ``core.bind`` computes it without a trace: Python
    scalars in give a (weak) Python scalar out, as NEP 50 says."""
    out = op.impl(namespace_of(args), *args, **attrs)
    if isinstance(out, np.generic) and not op.strong and all(
            type(a) in core._PYTHON_SCALARS for a in args):
        return out.item()
    return out


class _Hooks:
    """What ``core.bind`` and ``reverse.backward`` call while any debug context is active."""

    @staticmethod
    def bind(op, trace, args, attrs):
        state = _state
        if not state.numerics:  # debugging in another thread only
            return _eager(op, args, attrs) if trace is None else trace.process(op, args, attrs)
        stack = state.stack
        user_level = not stack or not sys._getframe(2).f_code.co_filename.startswith(_INTERNAL)
        if user_level and stack and op is getattr(getattr(op, "handle", None), "linear_map", None):
            user_level = False  # a custom primitive's tape op, bound by its own JVP rule
        if user_level:
            name, where = op.name, _user_location()
        else:  # an op inside a rule belongs to the user-level operation in progress
            _, name, where = stack[-1]
        stack.append((op.name, name, where))
        try:
            out = _eager(op, args, attrs) if trace is None else trace.process(op, args, attrs)
        except Exception as e:
            _annotate(e, stack, where)
            raise
        finally:
            stack.pop()
        outs = out if op.multiple_results else (out,)
        for o in outs:
            if isinstance(o, ArrayTracer):
                o._where = where
        if type(trace) is LinearTrace:
            for o in outs:
                state.origins[id(o)] = (o, name, where)
            if len(state.origins) > state.prune_at:
                _prune(state)
        elif user_level and state.numerics[-1]:
            _check(outs, name, where, "primal")
        return out

    @staticmethod
    def transpose(op, out, ct, args, attrs):
        state = _state
        if not state.numerics:
            return op.transpose(ct, *args, **attrs)
        var = out[0] if op.multiple_results else out
        origin = state.origins.get(id(var))
        if origin is not None and origin[0] is var:
            name, where = origin[1], origin[2]
        else:
            name, where = op.name, _user_location()
        stack = state.stack
        stack.append((op.name, name, where))  # ops the transpose binds belong to ``name``
        try:
            arg_cts = op.transpose(ct, *args, **attrs)
        except Exception as e:
            _annotate(e, stack, where)
            raise
        finally:
            stack.pop()
        if state.numerics[-1]:
            detail = f" (in the transpose of {op.name!r})" if op.name != name else ""
            _check([c for c in arg_cts if c is not None], name, where, "VJP", detail)
        return arg_cts


_HOOKS = _Hooks()


@contextmanager
def debug(*, numerics: bool = False) -> Iterator[None]:
    """Trace operations with their source locations; optionally stop at the first NaN or inf.

    Inside the context (in this thread only), every error raised by an operation carries a note
    naming the operation and the user source line that called it, and tracer reprs show where
    they were computed. With ``numerics=True`` the first NaN or infinity in a primal value, a
    forward-mode tangent (JVP) or a reverse-mode cotangent (VJP) raises ``NumericsError``
    naming the operation, the phase and the source line (also as ``.op``, ``.phase``,
    ``.location``). Contexts nest; the innermost decides ``numerics``. Outside every context
    Advect does none of this work. Entering and leaving are interrupt-safe: after a
    ``KeyboardInterrupt`` at any point the hooks are off once the last context has exited.

    Raises:
        NumericsError: with ``numerics=True``, a value became NaN or infinite.

    Example:
        >>> import numpy as np, advect as ad
        >>> with ad.debug(numerics=True), np.errstate(divide="ignore"):
        ...     ad.grad(lambda x: np.sum(np.sqrt(x)))(np.array([1.0, 0.0]))
        Traceback (most recent call last):
        ...
        advect.errors.NumericsError: inf in the VJP (cotangent) of operation 'sqrt' at ...
    """
    state = _state
    entry = _Entry(numerics)
    _leaver = core.OnFree(_leave, state, entry)  # noqa: F841 (kept for its __del__)
    try:
        state.numerics.append(entry)
        with _lock:
            _contexts.add(entry)
            core.debug_hooks = _HOOKS
        yield
    finally:
        try:
            _leave(state, entry)
        finally:
            _leave(state, entry)  # again, in case an interrupt cut the first one short


class _Entry:
    """One active debug context; true when it checks numerics (the innermost one decides)."""

    __slots__ = ("numerics",)

    def __init__(self, numerics: bool):
        self.numerics = bool(numerics)

    def __bool__(self) -> bool:
        return self.numerics


def checks_numerics() -> bool:
    """Whether the innermost debug context of this thread checks numerics (a warm staged call
    then interprets its graph op by op, so the first NaN or inf is named, as in eager code)."""
    numerics = _state.numerics
    return bool(numerics) and bool(numerics[-1])


def _leave(state: _State, entry: _Entry) -> None:
    """Undo one context's registration; idempotent, so it can be retried after an interrupt."""
    if entry in state.numerics:  # compared by identity: _Entry has no __eq__
        state.numerics.remove(entry)
    if not state.numerics:  # the thread's last context: no bind of it is in progress
        state.origins.clear()
        state.stack.clear()  # an interrupt between a push and its try may have left one
    with _lock:
        _contexts.discard(entry)
        if not _contexts:
            core.debug_hooks = None

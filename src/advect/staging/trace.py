"""The staging trace: abstract values in, a graph out.

A :class:`StageTracer` knows only its aval (shape, dtype, weakness, device); every op applied to
it becomes a graph node through :meth:`StageTrace.process`. Anything that needs data (``bool()``,
``float()``, a boolean mask, ambient random numbers) raises a ``TracingError`` naming the call.
Arrays that are not tracers become snapshotted, read-only constants; Python scalars stay weak
literals, so NEP 50 promotion is the same as in eager NumPy.
"""

from __future__ import annotations

import ast
import dis
import functools
import linecache
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

import numpy as np

from ..core import OnFree, Trace, Tracer
from ..dtypes import Aval, aval_of, check_dtype
from ..errors import AmbientRandomnessError, StagedIterationError, TracingError
from ..generators import GENERATOR_KINDS, generators_of, same_state, set_state, state_of
from ..numpy._methods import INPUT, ArrayTracer
from ..numpy._mutation import marks_array
from ..providers import default_device, namespace_of, to_numpy
from ..pytree import TreeDef, tree_flatten
from .graph import Graph, Literal, Node

__all__ = ["StageTrace", "StageTracer", "AmbientRandomnessError", "StagedIterationError",
           "trace_graph", "no_ambient_randomness", "generators_untouched", "stage_trace_of",
           "refuse_drawn_statics"]

_PYTHON_SCALARS = (bool, int, float, complex)


class StageTrace(Trace):
    """Builds a :class:`Graph`. ``xp`` is the provider whose dtype objects tracers report;
    ``array_api_version`` is the revision ``x.__array_namespace__()`` serves while staging."""

    __slots__ = ("graph", "xp", "array_api_version", "device", "_captured")

    def __init__(self, xp=np, array_api_version=None, device=None):
        super().__init__()
        self.graph = Graph()
        self.xp = xp
        self.array_api_version = array_api_version
        # what ``x.device`` reports for a value whose aval names no device: the examples'
        # device (their provider's default device unless they were elsewhere)
        self.device = default_device(xp) if device is None else device
        self._captured: dict[int, tuple[object, int]] = {}  # id(array) -> (array, value id)

    def new_input(self, aval: Aval, numpy_scalar: bool = False) -> StageTracer:
        """A graph input; ``numpy_scalar``: it stands for a NumPy scalar, not a 0-d array
        (``input_marker``)."""
        vid = self.graph.new_value(aval)
        self.graph.inputs.append(vid)
        return StageTracer(self, vid, aval, None if numpy_scalar else INPUT)

    def operand(self, x, where: str):
        """The graph operand (value id or Literal) standing for ``x``."""
        if isinstance(x, StageTracer) and x._trace is self:
            return x._vid
        if isinstance(x, Tracer):
            if not x._trace.alive:  # escaped, or a stale view (numpy/_mutation.py)
                raise x._trace.dead_error(where)
            raise TracingError(
                f"{where}: a value of another transform reached a staged function (for example "
                "an ad.grad input captured by a closure); pass it to the staged function as an "
                "argument instead")
        if type(x) in _PYTHON_SCALARS:
            return Literal(x)
        return self.capture(x, where)

    def capture(self, x, where: str) -> int:
        seen = self._captured.get(id(x))
        if seen is not None and seen[0] is x:
            return seen[1]
        try:
            snapshot = to_numpy(x)  # saved as NumPy; a plan moves it to its call's device
        except (TypeError, ValueError, RuntimeError) as exc:
            raise TypeError(f"{where}: cannot use a {type(x).__name__} as an array "
                            f"operand ({exc})") from None
        dtype = check_dtype(snapshot.dtype, f"{where}: a captured constant")
        if dtype != snapshot.dtype:  # the other byte order: computed in the native one
            snapshot = snapshot.astype(dtype)
        snapshot.setflags(write=False)  # later writes to x change nothing; returned ones raise
        vid = self.graph.add_constant(snapshot, "captured")
        self._captured[id(x)] = (x, vid)
        return vid

    def lift(self, array) -> StageTracer:
        """A captured constant as a tracer, so ops on it become graph nodes."""
        vid = self.capture(array, "constant")
        return StageTracer(self, vid, self.graph.avals[vid])

    def process(self, op, args, attrs):
        graph = self.graph
        inputs, avals = [], []
        python_int = False
        for a in args:  # the common operands first, inline: this trace's tracers
            if type(a) is StageTracer and a._trace is self:
                inputs.append(a._vid)
                avals.append(a.aval)
                continue
            python_int = python_int or type(a) is int
            x = self.operand(a, op.name)
            inputs.append(x)
            avals.append(aval_of(x.value) if type(x) is Literal else graph.avals[x])
        inputs = tuple(inputs)
        out = op.abstract(*avals, **attrs)
        if python_int and op.elementwise and self.xp is np:
            _refuse_unfit_ints(op, args, avals, attrs)
        if not attrs:
            attrs = _NO_ATTRS  # one shared (never changed) dict, not one per node
        if op.multiple_results:
            outs = tuple(graph.new_value(a) for a in out)
            graph.nodes.append(Node(op, inputs, attrs, outs))
            return tuple(StageTracer(self, v, a) for v, a in zip(outs, out))
        vid = len(graph.avals)  # graph.new_value(out), inline
        graph.avals.append(out)
        graph.nodes.append(Node(op, inputs, attrs, (vid,)))
        return StageTracer(self, vid, out)

    def dtype_of(self, dtype: np.dtype):
        """The provider's dtype object for a NumPy dtype (NumPy's own for NumPy)."""
        return dtype if self.xp is np else getattr(self.xp, dtype.name)


_NO_ATTRS: dict = {}


def _refuse_unfit_ints(op, args, avals, attrs) -> None:
    """NumPy's ``OverflowError`` for a Python int that its integer operand's dtype cannot
    hold (``uint8_array + 300``), raised while staging, where the eager call raises it, not
    when the program first runs: the op is tried on one zero of each operand's dtype."""
    if len(avals) < 2 or all(a.dtype.kind not in "iu" for a in avals):
        return
    zeros = [a if type(a) is int else np.zeros((), v.dtype) for a, v in zip(args, avals)]
    try:
        with np.errstate(all="ignore"):
            op.impl(np, *zeros, **attrs)
    except OverflowError:
        raise
    except Exception:  # noqa: BLE001 - any other refusal is for the program's values to make
        return


class StageTracer(ArrayTracer):
    """A staged value: an aval and a graph value id, no data."""

    __slots__ = ("_vid", "aval")  # a slot, not a property: read on every op

    def __init__(self, trace: StageTrace, vid: int, aval: Aval, mut=None):
        self._trace = trace
        self._vid = vid
        self.aval = aval
        self._mut = mut

    @property
    def dtype(self):
        return self._trace.dtype_of(self.aval.dtype)

    @property
    def device(self):
        device = self.aval.device
        return self._trace.device if device is None else device

    def __len__(self):
        # also a TypeError: list(x) inside NumPy's dispatch asks for a length hint, and a
        # TypeError there means "no hint"
        raise StagedIterationError(
            f"len() of a staged value ({self.aval!r}): staging refuses it so that a loop "
            "over it is not frozen into the program by accident; use x.shape[0] for the length")

    def __iter__(self):
        if not _numpy_iterates(sys._getframe(1)):
            raise StagedIterationError(
                f"iterating over a staged value ({self.aval!r}): a staged program must not "
                "unroll a loop over its data by accident; use vectorized operations, or index "
                "explicitly with `for i in range(x.shape[0]): ... x[i]`")
        return super().__iter__()

    def __repr__(self) -> str:
        return f"StageTracer(%{self._vid}: {self.aval!r})"

    def _concrete(self):
        return self._concrete_for("reading the value")

    def _concrete_for(self, what):
        raise TracingError(
            f"{what} needs the data of a staged value ({self.aval!r}), which staging does not "
            "have: a staged program must work for every input of its signature. Choose values "
            "with np.where(condition, a, b) instead of a Python branch, pass compile-time "
            "values as StaticSpec, or use a dynamic transform (ad.grad, ...) for code that "
            "needs the data")

    def _clone(self) -> StageTracer:
        return StageTracer(self._trace, self._vid, self.aval)

    def _assign(self, other: StageTracer) -> None:
        self._vid = other._vid
        self.aval = other.aval


# NumPy functions whose __array_function__ dispatcher returns the array itself, so that NumPy's
# C code iterates over it (into a list of candidate arguments) before dispatching to Advect
_DISPATCH_ITERATES = frozenset({"poly", "roots", "concatenate"})


def _numpy_iterates(frame) -> bool:
    """Whether the iteration that asks is NumPy's (its Python code, or the dispatch of
    ``np.poly`` / ``np.roots``), not the staged function's own."""
    module = frame.f_globals.get("__name__", "")
    if module == "numpy" or module.startswith(("numpy.", "advect.")):
        return True
    code = frame.f_code
    try:
        if not dis.opname[code.co_code[frame.f_lasti]].startswith("CALL"):
            return False  # a for loop, a comprehension, unpacking, *x
        positions = list(code.co_positions())[frame.f_lasti // 2]
        first, last, start, end = positions
        lines = [linecache.getline(code.co_filename, n) for n in range(first, last + 1)]
        lines[-1] = lines[-1][:end]
        lines[0] = lines[0][start:]
        call = ast.parse("".join(lines).strip(), mode="eval").body
    except Exception:  # no source, or not one call expression
        return False
    func = getattr(call, "func", None)
    name = getattr(func, "attr", None) or getattr(func, "id", None)
    return name in _DISPATCH_ITERATES


def stage_trace_of(values) -> StageTrace | None:
    """The staging trace under the tracers among ``values`` (through JVP tracers' primals)."""
    for x in values:
        while isinstance(x, Tracer):
            if isinstance(x, StageTracer):
                return x._trace if x._trace.alive else None
            x = getattr(x, "primal", None)
    return None


# --- ambient randomness ------------------------------------------------------------------------
# numpy.random's functions and classes (Generator, RandomState, the bit generators, SeedSequence)
# are wrapped while any thread stages; a wrapper raises only in a thread that is staging and
# calls through otherwise, so other threads keep working. The originals are put back when the
# last staging ends, also when it fails.

# reentrant: a context cut short by an interrupt is left by its generator's finalizer, which
# may run at any allocation, also while this thread holds the lock
_patch_lock = threading.RLock()
_guard_tokens: set = set()  # one per active no_ambient_randomness context, in all threads
_originals: dict[str, Callable] = {}
_local = threading.local()


def _refuse_if_staging(name: str) -> None:
    if getattr(_local, "tokens", None):  # this thread is staging
        raise AmbientRandomnessError(
            f"numpy.random.{name}() was called while staging: its numbers would be frozen "
            "into the program and repeat on every call. Draw them outside and pass them in "
            "as an input (ArraySpec), or use a dynamic transform")


def _guard(name: str, original: Callable) -> Callable:
    if isinstance(original, type):
        return _GuardedClass(name, original)

    @functools.wraps(original)
    def guarded(*args, **kwargs):
        _refuse_if_staging(name)
        return original(*args, **kwargs)
    return guarded


class _GuardedClass:
    """Stands in for a numpy.random class while staging: constructing one raises in a staging
    thread; ``isinstance``, ``issubclass``, subclassing and attributes reach the class itself."""

    def __init__(self, name: str, cls: type):
        self._name, self._cls = name, cls
        functools.update_wrapper(self, cls, updated=())

    def __call__(self, *args, **kwargs):
        _refuse_if_staging(self._name)
        return self._cls(*args, **kwargs)

    def __instancecheck__(self, obj) -> bool:
        return isinstance(obj, self._cls)

    def __subclasscheck__(self, cls) -> bool:
        return issubclass(cls, self._cls)

    def __mro_entries__(self, bases) -> tuple[type]:
        return (self._cls,)

    def __getattr__(self, name: str):
        return getattr(self._cls, name)

    def __repr__(self) -> str:
        return repr(self._cls)


def _random_functions() -> Iterator[tuple[str, Callable]]:
    """numpy.random's public functions and classes (all of its classes make random numbers)."""
    for name in np.random.__all__:
        value = getattr(np.random, name, None)
        if callable(value):
            yield name, value


@contextmanager
def no_ambient_randomness() -> Iterator[None]:
    """Make numpy.random's functions raise in this thread for the duration.

    Interrupt-safe: each context registers a token (atomic set insertions) inside the ``try``
    that removes it; leaving is idempotent and retried, and runs once more when the context's
    frame is torn down (if an interrupt cut its ``finally`` short), so a ``KeyboardInterrupt``
    at any point leaves numpy.random unwrapped once the last context of all threads exited."""
    token = object()
    tokens = _thread_tokens()
    _leaver = OnFree(_leave_guard, token, tokens)  # noqa: F841 (kept for its __del__)
    try:
        _enter_guard(token, tokens)
        yield
    finally:
        try:
            _leave_guard(token, tokens)
        finally:
            _leave_guard(token, tokens)  # again, in case an interrupt cut the first one short


def staging_in_this_thread() -> bool:
    """Whether this thread is staging (inside a randomness-guard context); read by
    ``ad.transform_state``, which is refused while staging."""
    return bool(getattr(_local, "tokens", None))


def _thread_tokens() -> set:
    """This thread's active guard tokens (non-empty: the thread is staging)."""
    tokens = getattr(_local, "tokens", None)
    if tokens is None:
        tokens = _local.tokens = set()
    return tokens


def _enter_guard(token, tokens: set) -> None:
    with _patch_lock:
        _guard_tokens.add(token)
        for name, value in _random_functions():  # idempotent: wraps what is not wrapped yet
            if name not in _originals:
                _originals[name] = value
                setattr(np.random, name, _guard(name, value))
    tokens.add(token)


def _leave_guard(token, tokens: set) -> None:
    tokens.discard(token)
    with _patch_lock:
        _guard_tokens.discard(token)
        if not _guard_tokens:  # idempotent: puts back what is still wrapped
            for name in list(_originals):
                value = _originals.get(name)  # a nested leave may have restored it already
                if value is not None:
                    setattr(np.random, name, value)
                _originals.pop(name, None)


@contextmanager
def generators_untouched(function) -> Iterator[None]:
    """Raise if ``function`` drew numbers from a generator it names; restore its state."""
    watched = [(name, g, state_of(g)) for name, g in generators_of(function)]
    failed = True
    try:
        yield
        failed = False
    finally:
        used = [(name, g, state) for name, g, state in watched
                if not same_state(state_of(g), state)]
        for _, g, state in used:  # every one rewound before raising
            set_state(g, state)
        if used and not failed:
            raise _drawn_error(f"the random generator {used[0][0]!r}")


def refuse_drawn_statics(statics: list[tuple[str, object, object]]) -> None:
    """Raise if the function drew numbers from a generator passed as a static value:
    ``(where, staged value, the copy the function received)`` triples."""
    for where, value, received in statics:
        if isinstance(value, GENERATOR_KINDS) and type(received) is type(value) \
                and not same_state(state_of(received), state_of(value)):
            raise _drawn_error(f"the random generator passed as the static value {where}")


def _drawn_error(what: str) -> AmbientRandomnessError:
    return AmbientRandomnessError(
        f"{what} was used while staging: its numbers would be frozen into the program and "
        "repeat on every call. Draw them outside and pass them in as an input (ArraySpec), "
        "or use a dynamic transform")


# --- tracing a function --------------------------------------------------------------------------

def trace_graph(fn: Callable[[list], object], in_avals: list[Aval], xp=np,
                read_only: bool = True, array_api_version=None, scalar_inputs: Sequence[bool] = ()
                ) -> tuple[Graph, TreeDef, list[bool | None]]:
    """Trace ``fn(tracers)`` once; returns the graph, the output tree structure and, per output
    leaf, what eager NumPy returns for it (:func:`numpy_scalar`).

    ``read_only`` marks the tracers as inputs, so writing into them raises ``MutationError``;
    ``scalar_inputs`` says which inputs stand for NumPy scalars (``ArraySpec.numpy_scalar``).
    """
    devices = [a.device for a in in_avals if a.device is not None]
    trace = StageTrace(xp, array_api_version, devices[0] if devices else None)
    flags = list(scalar_inputs) + [False] * (len(in_avals) - len(scalar_inputs))
    tracers = [trace.new_input(aval, s) for aval, s in zip(in_avals, flags)]
    if not read_only:
        for t in tracers:
            t._mut = None
    try:
        with no_ambient_randomness():
            out = fn(tracers)
        leaves, treedef = tree_flatten(out)
        graph = trace.graph
        graph.outputs = [_output(trace, leaf, k) for k, leaf in enumerate(leaves)]
        inputs = {id(t) for t in tracers}  # alive while ``tracers`` is
        custom = {v for node in graph.nodes if getattr(node.op, "handle", None) is not None
                  for v in node.outputs}  # custom primitives: what their implementation gives
        scalars = [numpy_scalar(leaf, id(leaf) in inputs or getattr(leaf, "_vid", None)
                                in custom) for leaf in leaves]
    finally:
        trace.close()
    return graph, treedef, scalars


def numpy_scalar(leaf, as_computed: bool = False) -> bool | None:
    """Whether an output leaf is a NumPy scalar (True) or a 0-d ndarray (False) in eager NumPy;
    None where the plan's result already has the eager type: arrays of rank > 0, Python
    scalars, other providers' arrays, and (``as_computed``) an input returned as it is (its
    argument's type) or a custom primitive's result (its implementation's type).
    A 0-d tracer stands for a NumPy scalar unless numpy/_mutation.py marked it an owned 0-d
    array (``np.zeros(())``, ``np.where``, a copy) or a view (``y[0, ...]``, an input's)."""
    if isinstance(leaf, StageTracer):
        if leaf.aval.shape or leaf.aval.weak or as_computed:
            return None
        return not marks_array(leaf._mut)
    if type(leaf) is np.ndarray and not leaf.shape:
        return False
    return True if isinstance(leaf, np.generic) else None


def _output(trace: StageTrace, leaf, k: int):
    if isinstance(leaf, Tracer) or type(leaf) in _PYTHON_SCALARS:
        return trace.operand(leaf, f"output {k}")
    if isinstance(leaf, np.ndarray | np.generic) or hasattr(leaf, "__array_namespace__") \
            or namespace_of((leaf,)) is not np:  # a torch tensor has no __array_namespace__
        return trace.capture(leaf, f"output {k}")
    raise TypeError(f"a staged function must return arrays, Python scalars or pytrees of them; "
                    f"output leaf {k} is a {type(leaf).__name__}")

"""``stage`` and ``StagedProgram``: one signature traced once, optimized, and run by a plan.

A program holds its signature (specs), the optimized graph, the execution plan and the output
structure; nothing else, in particular not the Python function it came from. A warm call with
plain NumPy arrays checks them against the signature and runs the plan; a call with traced
arguments (inside ``ad.grad`` or another staging) interprets the graph with ``bind``, so the
program differentiates and inlines like any other function.
"""

from __future__ import annotations

import copy
import gc
import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any, NamedTuple

import numpy as np

from .. import core as _core
from ..core import Tracer
from ..numpy._mutation import mark_array
from ..providers import device_of, is_array, namespace_of
from ..pytree import (
    LEAF,
    Static,
    TreeDef,
    format_path,
    tree_flatten,
    tree_flatten_with_paths,
    tree_structure_in_order,
    tree_unflatten,
)
from .graph import Graph, evaluate, listing, operand_aval, validate
from .passes import OptimizationReport, PassReport, optimize
from .plan import Plan
from .specs import (
    LATEST_API_VERSION,
    PYTHON_SCALAR,
    SUPPORTED_API_VERSIONS,
    AbstractValue,
    ArraySpec,
    StaticSpec,
    check_call,
    flat_checks,
    flat_operands,
    is_spec,
    spec_of_example,
)
from .trace import generators_untouched, refuse_drawn_statics, stage_trace_of, trace_graph

__all__ = ["stage", "StagedProgram", "ArraySpec", "StaticSpec", "AbstractValue",
           "OptimizationReport", "PassReport", "Constant", "SUPPORTED_API_VERSIONS",
           "LATEST_API_VERSION", "build_program", "require_program"]


class Constant(NamedTuple):
    """A constant of a staged program: its graph value, shape, dtype, origin and value."""

    value_id: int
    shape: tuple[int, ...]
    dtype: np.dtype
    origin: str
    value: np.ndarray

    def __eq__(self, other: object) -> bool:
        # the value compares as a whole (bit for bit, NaNs included), not elementwise
        if not isinstance(other, Constant):
            return NotImplemented
        return (self[:4] == other[:4] and self.value.shape == other.value.shape
                and self.value.tobytes() == other.value.tobytes())

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((self.value_id, self.shape, self.dtype, self.origin))


class StagedProgram:
    """An immutable, single-signature compiled function. Build one with :func:`stage`.

    Example:
        >>> import numpy as np, advect as ad
        >>> program = ad.stage(lambda x: np.sin(x) * 2, np.zeros(3))
        >>> program(np.zeros(3)).tolist()
        [0.0, 0.0, 0.0]
    """

    __slots__ = ("_graph", "_plan", "_plans", "_provider", "_in_def", "_specs", "_pos_specs",
                 "_kw_specs", "_out_def", "_out_python", "_out_scalars", "_convert", "_version",
                 "_report", "_seconds", "_fast", "_flat", "_name", "__weakref__")

    def __init__(self, *, graph: Graph, in_def: TreeDef, specs: list, out_def: TreeDef,
                 out_python: list[bool], version: str, report: OptimizationReport,
                 seconds: float, name: str, xp=np, plan: Plan | None = None,
                 out_scalars: list[bool | None] | None = None):
        # xp None: no recorded provider (derived and restored programs); plan: one already
        # built for graph, else each provider's plan is built on its first call (a program
        # that is only differentiated, never called, is never planned); out_scalars: per
        # output, a NumPy scalar (True), a 0-d ndarray (False) or as the plan computes it
        # (None; all None: a program saved without the record)
        set_ = object.__setattr__
        set_(self, "_graph", graph)
        set_(self, "_provider", xp)
        set_(self, "_plan", plan)
        set_(self, "_plans", {} if plan is None else {(id(plan.xp), None): plan})
        set_(self, "_in_def", in_def)
        set_(self, "_specs", list(specs))
        pos, kw = tree_unflatten(in_def, specs)
        set_(self, "_pos_specs", tuple(pos))
        set_(self, "_kw_specs", dict(kw))
        set_(self, "_out_def", out_def)
        set_(self, "_out_python", tuple(out_python))
        scalars = (None,) * len(out_python) if out_scalars is None else tuple(out_scalars)
        set_(self, "_out_scalars", scalars)
        set_(self, "_convert", tuple(  # (output index, conversion), applied by _finish
            (i, _to_python if p else _to_numpy_scalar if k else _to_array)
            for i, (p, k) in enumerate(zip(out_python, scalars)) if p or k is not None))
        set_(self, "_version", version)
        set_(self, "_report", report)
        set_(self, "_seconds", seconds)
        set_(self, "_name", name)
        simple = (xp in (np, None) and not kw and all(
            isinstance(s, ArraySpec) and not s.weak and s.device is None for s in specs)
            and in_def.children[0] == tree_flatten(tuple(specs))[1])
        set_(self, "_fast", tuple((s.shape, s.dtype) for s in specs) if simple else None)
        set_(self, "_flat", flat_checks(in_def, specs, pos, kw) if xp in (np, None) else None)

    def __setattr__(self, name, value):
        raise AttributeError("StagedProgram is immutable; stage again to change it")

    def __delattr__(self, name):
        raise AttributeError("StagedProgram is immutable")

    def __copy__(self) -> StagedProgram:
        return self

    def __deepcopy__(self, memo) -> StagedProgram:
        return self

    def __reduce__(self):
        # pickling goes through the saved format (never closures): a restored program, as
        # from_dict gives; the modules defining its custom primitives are imported first
        from .encoding import saved_node_modules
        payload = self.to_dict()
        classes = tuple(sorted({entry[2] for entry in payload.get("namedtuples", ())}
                               | saved_node_modules([self._in_def, self._out_def])))
        return (_restore, (payload, _primitive_modules(self._graph), classes))

    # --- calling ---------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _core.debug_hooks is not None and _debug_numerics():
            return self._checked_call(args, kwargs)
        fast = self._fast
        if fast is not None and not kwargs and len(args) == len(fast):
            for a, (shape, dtype) in zip(args, fast):
                if type(a) is not np.ndarray or a.dtype is not dtype or a.shape != shape:
                    break
            else:
                return self._finish((self._plan or self._first_plan()).run(args))
        flat = self._flat
        if flat is not None and len(args) == len(self._pos_specs) and len(kwargs) == len(
                self._kw_specs):
            operands = flat_operands(flat, args, kwargs)
            if operands is not None:
                return self._finish((self._plan or self._first_plan()).run(operands))
        operands = check_call(self._in_def, self._specs, args, kwargs, self._provider,
                              self._version)
        for a in operands:
            if isinstance(a, Tracer):
                return self._traced(operands)
        return self._finish(self._plan_for(operands).run(operands))

    def _checked_call(self, args: tuple, kwargs: dict):
        """A call inside ``ad.debug(numerics=True)``: the graph interpreted with ``bind``, so
        each operation's output is checked (and named) as in eager code; not the plan."""
        operands = check_call(self._in_def, self._specs, args, kwargs, self._provider,
                              self._version)
        if any(isinstance(a, Tracer) for a in operands):
            return self._traced(operands)
        return self._finish(self._interpret(operands))

    def _traced(self, operands: list):
        """The outputs for traced operands, each 0-d one what it stands for, so that an
        enclosing trace records the type eager NumPy gives (see :func:`_output_tracer`)."""
        outs = self._interpret(operands)
        for i, k in enumerate(self._out_scalars):
            o = outs[i]
            if k is not None:
                outs[i] = _output_tracer(o, not k, any(o is a for a in operands)) if isinstance(
                    o, Tracer) else _to_array(o) if k is False else _to_numpy_scalar(o)
        return tree_unflatten(self._out_def, outs)

    def _interpret(self, operands: list) -> list:
        # inside a staging (derivatives of programs, programs calling programs) constants
        # become that graph's constants, so rules applied to them (a transpose of a captured
        # matrix, say) are nodes the optimizer sees, not fresh captured arrays
        trace = stage_trace_of(operands)
        constants = None if trace is None else {
            v: trace.lift(c) for v, c in self._graph.constants.items()}
        return evaluate(self._graph, operands, constants)

    def _first_plan(self) -> Plan:
        """The plan for the program's own provider (NumPy when none is recorded), built once."""
        xp = np if self._provider is None else self._provider
        plan = self._plans.get((id(xp), None))
        if plan is None:
            with _collector_paused():  # thousands of closures: no collection while they are made
                plan = self._plans.setdefault((id(xp), None), Plan(self._graph, xp))
        object.__setattr__(self, "_plan", plan)
        return plan

    def _plan_for(self, operands: list) -> Plan:
        # one plan per (provider, device): constants live on the device of the call
        xp = namespace_of(operands)
        device = None
        if xp is not np:
            for a in operands:
                if is_array(a):
                    device = device_of(a)
                    break
        key = (id(xp), None if device is None else str(device))
        plan = self._plans.get(key)
        if plan is None:  # another provider or device than the first plan's
            plan = self._plans.setdefault(key, Plan(self._graph, xp, device))
        return plan

    def _finish(self, outs: list):
        for i, convert in self._convert:
            outs[i] = convert(outs[i])
        if self._out_def is LEAF:
            return outs[0]
        return tree_unflatten(self._out_def, outs)

    # --- what it is ------------------------------------------------------------------------
    @property
    def signature(self) -> tuple[tuple, dict]:
        """``((positional specs...), {keyword: spec})``. Static values are copies: changing
        one never changes the program's contract."""
        leaves, treedef = tree_flatten((self._pos_specs, self._kw_specs), is_leaf=is_spec)
        if not any(isinstance(s, StaticSpec) for s in leaves):
            return self._pos_specs, dict(self._kw_specs)
        return tree_unflatten(treedef, [StaticSpec(_static_copy(s)) if isinstance(
            s, StaticSpec) else s for s in leaves])

    @property
    def array_api_version(self) -> str:
        return self._version

    @property
    def optimization(self) -> OptimizationReport:
        return self._report

    @property
    def compile_seconds(self) -> float:
        return self._seconds

    @property
    def constants(self) -> tuple[Constant, ...]:
        g = self._graph
        return tuple(Constant(v, c.shape, c.dtype, g.origins.get(v, "captured"), c)
                     for v, c in sorted(g.constants.items()))

    @property
    def graph(self) -> Graph:
        """A copy of the optimized graph (the program itself never changes)."""
        return self._graph.copy()

    @property
    def output_specs(self) -> Any:
        """The output pytree with an ArraySpec per leaf (weak for Python-scalar outputs)."""
        # outputs live on the inputs' device (None: the call provider's default device)
        device = next((s.device for s in self._specs
                       if isinstance(s, ArraySpec) and s.device is not None), None)
        specs = []
        for x, python in zip(self._graph.outputs, self._out_python):
            aval = operand_aval(self._graph, x)
            weak = python and aval.shape == ()
            specs.append(ArraySpec(aval.shape, aval.dtype, weak=weak,
                                   device=None if weak else device))
        return tree_unflatten(self._out_def, specs)

    def __str__(self) -> str:
        return listing(self._graph)

    def to_dot(self) -> str:
        """Graphviz DOT text of the graph: inputs, constants, ops with shapes and dtypes, outputs.

        Example:
            >>> import numpy as np, advect as ad
            >>> ad.stage(lambda x: np.sin(x), np.ones(3)).to_dot().splitlines()[0]
            'digraph "<lambda>" {'
        """
        from .dot import to_dot
        graph = self._graph.copy()  # its outputs in the order the output specs flatten
        n = self._out_def.num_leaves
        graph.outputs = [graph.outputs[i] for i in tree_flatten(tree_unflatten(
            self._out_def, range(n)))[0]]
        return to_dot(graph, self.signature, self.output_specs, self._name)

    def __repr__(self) -> str:
        pos = ", ".join(map(repr, self._pos_specs))
        kw = "".join(f", {k}={v!r}" for k, v in self._kw_specs.items())
        n = len(self._graph.nodes)
        return (f"<StagedProgram {self._name}({pos}{kw}): {n} node{'' if n == 1 else 's'}, "
                f"Array API {self._version}>")

    # --- saving ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The program as plain JSON types (see docs/staging.md for the format).

        Example:
            >>> import json, numpy as np, advect as ad
            >>> program = ad.stage(lambda x: x * 2, np.ones(2))
            >>> restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
            >>> restored(np.array([1.0, 2.0])).tolist()
            [2.0, 4.0]
        """
        from .serialize import to_dict
        return to_dict(self)

    @classmethod
    def from_dict(cls, payload: dict) -> StagedProgram:
        """Validate a payload made by :meth:`to_dict` and rebuild the program.

        Raises:
            ValueError: a malformed payload (naming the field), another schema version, or an
                op that is not registered (import or register the primitive first).
        """
        from .serialize import from_dict
        return from_dict(payload)

    def _with_output_types(self, flags: list[bool],
                           scalars: list[bool | None]) -> StagedProgram:
        return StagedProgram(graph=self._graph, in_def=self._in_def, specs=self._specs,
                             out_def=self._out_def, out_python=flags, version=self._version,
                             report=self._report, seconds=self._seconds, name=self._name,
                             xp=self._provider, plan=self._plan, out_scalars=scalars)


def _output_tracer(out: Tracer, array: bool, fresh: bool) -> Tracer:
    """A 0-d traced output for an enclosing trace: a new wrapper where it is an operand
    (``fresh``: the optimizer reduced ``np.conj(x)`` or ``x.copy()`` to ``x``, which an
    enclosing staging must neither take for its input nor let a write reach), marked an owned
    0-d ndarray where it is one (``array``), and so the primals under a JVP tracer."""
    if fresh:
        out = out._clone()
    primal = getattr(out, "primal", out)
    if isinstance(primal, Tracer):
        if primal is not out:
            out.primal = _output_tracer(primal, array, fresh)
    else:  # the data of a dynamic transform
        out.primal = _to_array(primal) if array else _to_numpy_scalar(primal)
    return mark_array(out) if array else out


def _to_python(value):
    if type(value) in (bool, int, float, complex):  # a literal output (2**70 too): Python's
        return value
    return PYTHON_SCALAR[np.asarray(value).dtype.kind](value)


def _to_numpy_scalar(value):
    return value[()] if type(value) is np.ndarray else value  # a 0-d array's NumPy scalar


def _to_array(value):
    return np.asarray(value) if isinstance(value, np.generic) else value


def _debug_numerics() -> bool:
    from ..debug import checks_numerics  # loaded once a debug context exists
    return checks_numerics()


def _primitive_modules(graph: Graph) -> tuple[tuple[str, str], ...]:
    """(primitive name, defining module) for each custom primitive the graph uses."""
    found = {}
    for node in graph.nodes:
        handle = getattr(node.op, "handle", None)
        if handle is not None:
            found[handle.name] = getattr(handle.function, "__module__", None) or "__main__"
    return tuple(sorted(found.items()))


def _restore(payload: dict, modules: tuple = (), classes: tuple = ()) -> StagedProgram:
    """Unpickle a program: import the modules that define its custom primitives and, where
    they can be imported, those of its namedtuple classes (pickle imports by name anyway;
    loading then gives back those classes), then load the saved form."""
    import importlib

    from ..errors import UnregisteredOpError

    for module in classes:
        try:
            importlib.import_module(module)
        except ImportError:
            pass  # the namedtuple is restored as a class rebuilt from its name and fields

    for name, module in modules:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise UnregisteredOpError(
                f"unpickling a StagedProgram: its custom primitive {name!r} is defined in module "
                f"{module!r}, which cannot be imported here ({exc}); make that module importable "
                "in this process (install it or add it to sys.path)") from None
    try:
        return StagedProgram.from_dict(payload)
    except UnregisteredOpError as exc:
        where = dict(modules)
        missing = [n for n in where if f"{n!r}" in str(exc)]
        if not missing:
            raise
        module = where[missing[0]]
        hint = ("a __main__ script's primitives are not defined in other processes: define it "
                "in an importable module" if module == "__main__" else
                f"importing {module!r} did not register it")
        raise UnregisteredOpError(f"unpickling a StagedProgram: custom primitive "
                                  f"{missing[0]!r} is not registered after importing its module "
                                  f"{module!r}; {hint}") from None


# --- stage -----------------------------------------------------------------------------------

def stage(function: Callable | None = None, *examples: Any, specs: tuple | None = None,
          kw_specs: dict | None = None, array_api_version: str | None = None):
    """Compile one call signature of ``function`` into an immutable StagedProgram.

    Declare the positional signature either with concrete ``examples`` (their pytree
    structure, shapes, dtypes, devices and Python-scalar categories; wrap compile-time leaves
    in ``StaticSpec``) or with ``specs`` (a tuple of spec trees); ``kw_specs`` declares keyword
    inputs. Without ``function``, returns a decorator. The function is traced once with
    abstract values; the program never calls it again.

    The Array API revision: with examples and no ``array_api_version``, the newest one
    their provider serves; with specs alone, Advect's newest; an explicit one must be served
    by the examples' provider. A program staged from NumPy examples or specs replays on any
    one provider serving its revision; one staged from another provider's examples (also
    PyTorch tensors) takes that provider's arrays only. Devices are part of the signature.

    Raises:
        TypeError: neither or both of examples and specs, a leaf that is not an array, Python
            scalar or spec, an unsupported dtype, or examples of several providers.
        ValueError: an unsupported ``array_api_version``, or incompatible shapes or dtypes
            found while tracing.
        RevisionError: (a ValueError and a TypeError) an explicit ``array_api_version`` that
            the examples' provider does not serve.
        TracingError: the function needs data (a Python branch on a value, ``float(x)``, a
            boolean mask) or draws random numbers.

    Example:
        >>> import numpy as np, advect as ad
        >>> program = ad.stage(lambda x: x + 1, np.array([1.0, 2.0]))
        >>> program(np.array([3.0, 4.0])).tolist()
        [4.0, 5.0]
    """
    if examples and specs is not None:
        raise TypeError("stage: pass either example arguments or specs=, not both")
    if not examples and specs is None:
        raise TypeError("stage: declare the positional signature with example arguments or "
                        "specs=(ArraySpec(...), ...); use specs=() for a function without "
                        "positional arguments")
    if function is None:
        def decorator(fn: Callable) -> StagedProgram:
            return stage(fn, *examples, specs=specs, kw_specs=kw_specs,
                         array_api_version=array_api_version)
        return decorator
    if not callable(function):
        raise TypeError(f"stage: expected a callable, got {type(function).__name__}")
    start = time.perf_counter()
    pos, xp = _positional_specs(examples, specs)
    kw = _keyword_specs(kw_specs)
    version = _select_version(array_api_version, xp, bool(examples))
    return build_program(function, pos, kw, version, start, xp)


def build_program(function: Callable, pos: tuple, kw: dict, version: str,
                  start: float | None = None, xp=np) -> StagedProgram:
    """Trace ``function`` against spec trees ``pos`` / ``kw``, optimize, and plan; ``xp`` is
    the provider the program is for (None: none recorded, NumPy while tracing)."""
    start = time.perf_counter() if start is None else start
    specs, in_def = tree_flatten((tuple(pos), dict(kw)), is_leaf=is_spec)
    in_avals = [s.aval for s in specs if isinstance(s, ArraySpec)]
    paths = tree_flatten_with_paths((tuple(pos), dict(kw)), is_leaf=is_spec)[0]

    returned = []  # the output's structure, dicts in the order the function built them

    def call(tracers):
        it = iter(tracers)
        leaves = [next(it) if isinstance(s, ArraySpec) else _static_copy(s) for s in specs]
        args, kwargs = tree_unflatten(in_def, leaves)
        out = function(*args, **kwargs)
        statics = [(f"argument{format_path(path[1:])}", s.value, leaf)
                   for (path, s), leaf in zip(paths, leaves) if isinstance(s, StaticSpec)]
        _static_nodes(in_def, (args, kwargs), (), statics)
        refuse_drawn_statics(statics)
        returned.append(tree_structure_in_order(out))
        return out

    with _collector_paused(), generators_untouched(function):
        graph, _, scalars = trace_graph(
            call, in_avals, np if xp is None else xp, array_api_version=version,
            scalar_inputs=[s.numpy_scalar for s in specs if isinstance(s, ArraySpec)])
        validate(graph, derive=False)  # the trace derived every aval with the ops' rules
        graph, report = optimize(graph)  # renumbered densely
        out_def, order = returned[-1]
        graph.outputs = [graph.outputs[i] for i in order]
        scalars = [scalars[i] for i in order]
        python = [operand_aval(graph, x).weak and operand_aval(graph, x).shape == ()
                  for x in graph.outputs]
        name = getattr(function, "__name__", type(function).__name__)
        return StagedProgram(graph=graph, in_def=in_def, specs=specs, out_def=out_def,
                             out_python=python, version=version, report=report,
                             seconds=time.perf_counter() - start, name=name, xp=xp,
                             out_scalars=scalars)


def _static_nodes(treedef: TreeDef, value, path: tuple, out: list) -> None:
    """Append ``(where, staged value, received value)`` for each ``static(...)`` node of
    ``treedef`` in the arguments ``value`` the function received."""
    if treedef.kind is Static:
        out.append((f"argument{format_path(path[1:])}", treedef.aux.value, value.value))
    elif treedef.kind is not None and _has_static(treedef):
        children = tree_flatten(value, is_leaf=lambda v: v is not value)[0]
        keys = treedef.aux if treedef.kind is dict else range(len(children))
        for key, child_def, child in zip(keys, treedef.children, children):
            _static_nodes(child_def, child, (*path, key), out)


def _has_static(treedef: TreeDef) -> bool:
    return treedef.kind is Static or any(_has_static(c) for c in treedef.children)


@contextmanager
def _collector_paused():
    """Python's cycle collector off while a program is built: staging allocates many small
    objects that live on (nodes, avals, plan steps), and each full collection would walk all
    of them again (a fifth of the time on large graphs). Cycles made meanwhile are collected
    afterwards, as usual."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _static_copy(spec: StaticSpec):
    return copy.deepcopy(spec.value)


def _positional_specs(examples: tuple, specs) -> tuple[tuple, Any]:
    if specs is not None:
        if not isinstance(specs, tuple | list):
            raise TypeError(f"stage: specs must be a tuple of spec trees, got "
                            f"{type(specs).__name__}")
        _check_spec_leaves(specs, "specs")
        return tuple(specs), np
    trees = []
    for k, example in enumerate(examples):
        leaves, treedef = tree_flatten(example, is_leaf=lambda v: isinstance(v, StaticSpec))
        converted = [spec_of_example(leaf, f"stage: example {k} (leaf {i})")
                     for i, leaf in enumerate(leaves)]
        trees.append(tree_unflatten(treedef, converted))
    arrays = [leaf for e in examples for leaf in tree_flatten(
        e, is_leaf=lambda v: isinstance(v, StaticSpec))[0]
        if is_array(leaf) and not isinstance(leaf, Tracer | StaticSpec)]
    namespaces = {id(namespace_of((a,))): namespace_of((a,)) for a in arrays}
    if len(namespaces) > 1:
        raise TypeError("stage: the examples come from several array providers ("
                        + ", ".join(sorted(getattr(x, "__name__", str(x))
                                           for x in namespaces.values()))
                        + "); convert them to one provider")
    xp = next(iter(namespaces.values()), np)
    return tuple(trees), xp


def _check_spec_leaves(tree, where: str) -> None:
    for i, leaf in enumerate(tree_flatten(tree, is_leaf=is_spec)[0]):
        if not is_spec(leaf):
            raise TypeError(f"stage: {where} leaf {i} is a {type(leaf).__name__}; every leaf "
                            "must be an ArraySpec or a StaticSpec")


def _keyword_specs(kw_specs) -> dict:
    if kw_specs is None:
        return {}
    if not isinstance(kw_specs, dict) or not all(isinstance(k, str) for k in kw_specs):
        raise TypeError("stage: kw_specs must be a dict from keyword names to spec trees")
    _check_spec_leaves(kw_specs, "kw_specs")
    return dict(kw_specs)


def _select_version(requested, xp, from_examples: bool) -> str:
    """Spec 001: examples without a revision get the newest one their provider serves; specs
    alone get Advect's newest; an explicit revision must be served by the examples' provider."""
    from ..array_api import check_revision, newest_revision

    if requested is None:
        return newest_revision((xp,) if from_examples else ())
    if requested not in SUPPORTED_API_VERSIONS:
        raise ValueError(f"stage: array_api_version {requested!r} is not supported; use one of "
                         f"{', '.join(SUPPORTED_API_VERSIONS)}")
    return check_revision(requested, (xp,) if from_examples else ())


def require_program(f, where: str) -> StagedProgram:
    if not isinstance(f, StagedProgram):
        raise TypeError(f"{where} needs a StagedProgram (from ad.stage), got "
                        f"{type(f).__name__}; use ad.vjp for a dynamic pullback")
    return f

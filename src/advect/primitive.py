"""Custom primitives: a user function that Advect treats as one operation with the user's rules.

``primitive(f, name=...)`` returns a :class:`Primitive` handle. Calling it flattens the pytree
arguments and binds one :class:`~advect.core.Op` registered under ``name``, so graphs and saved
programs refer to the primitive by that name. The rules are attached with ``def_abstract``,
``def_jvp`` and ``def_transpose``:

* ``abstract(*args, **static)`` gets the dynamic arguments with ``AbstractValue`` leaves and
  returns the output's ``ArraySpec`` pytree (staging needs it); once it has described a call
  signature, implementation outputs for it that differ in shape or dtype raise ``ValueError``
  (a staged or restored program replayed directly or under a dynamic transform);
* ``jvp(output, primals, tangents, **static)`` gets the output as ``f`` returned it and flat
  tuples of the dynamic leaves and their tangents (``None`` for a zero or nondifferentiable
  tangent); it returns the output tangent, written with NumPy calls so that it traces;
* ``transpose(cotangent, primals, output, **static)`` gets the output cotangent (``None``
  leaves are zeros) and returns one cotangent (or ``None``) per dynamic leaf: the real adjoint
  of the JVP, ``J^T ct``.

Forward mode runs the JVP rule. Reverse mode runs the transpose rule when there is one: the
linear tape records the primitive's own linear-map op (registered as ``name + ".linear_map"``),
whose transpose calls the rule. Without a transpose rule, the JVP rule runs on tape variables
and reverse mode transposes what it recorded. A primitive with only a transpose rule raises
``NoJVPError`` in forward mode; a transform that needs a missing rule raises
``MissingPrimitiveRuleError`` naming the primitive and the rule.

Example:
    >>> import numpy as np
    >>> import advect as ad
    >>> @ad.primitive(name="doc_cube")
    ... def cube(x):
    ...     return x ** 3
    >>> @cube.def_jvp
    ... def _(output, primals, tangents):
    ...     (x,), (dx,) = primals, tangents
    ...     return 3 * x ** 2 * dx
    >>> ad.grad(lambda x: np.sum(cube(x)))(np.array([1.0, 2.0]))
    array([ 3., 12.])
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .core import Op, Tracer, bind
from .dtypes import Aval, aval_of
from .errors import (
    MissingJVPRuleError,
    MissingPrimitiveRuleError,
    MissingVJPRuleError,
    NoJVPError,
    TracingError,
)
from .ops._rules import fit, is_linear
from .primitive_operands import (
    LINEAR_MAP_SUFFIX,
    RESERVED_PREFIX,
    SCALARS,
    call_rule,
    check_outputs,
    checked_rule,
    default_name,
    fitting,
    flatten_operand,
    inexact,
    is_array,
    leaf_count,
    leaves_like,
    parameters,
    rebuild_operands,
    release_name,
    signature_key,
    static_value,
    transpose_keywords,
)
from .primitive_residual import PrimitiveResult, Residual, frame_stack, note_call
from .primitive_trace import RuleTrace
from .providers import provider_of
from .pytree import TreeDef, tree_flatten, tree_map, tree_unflatten

__all__ = ["primitive", "Primitive", "PrimitiveResult", "LINEAR_MAP_SUFFIX"]

MAX_OUT_TREES = 1024  # output structures a primitive remembers (see _record_out_tree)

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def primitive(function: Callable | None = None, /, *, name: str | None = None,
              static_argnames: str | Iterable[str] = (),
              nondiff_argnames: str | Iterable[str] = (), residual: bool = False
              ) -> Primitive | Callable[[Callable], Primitive]:
    """Make ``function`` a custom operation named ``name`` (decorator, bare decorator or direct
    call). The name defaults to ``f"{module}.{qualname}"`` of ``function``; names starting with
    ``advect.`` are reserved.

    Arguments named in ``static_argnames`` become attributes of the operation (they must be
    ``None``, bools, ints, floats, strings or tuples/lists of them, so saved programs can hold
    them); every other argument is a dynamic operand: an array, a Python scalar, or a pytree of
    them made of tuples, lists, dicts with string keys and ``None``. Arguments named in
    ``nondiff_argnames`` are dynamic operands whose tangents are always ``None``.

    The name must be new, except that running the same definition again (the same module and
    qualified name: a reloaded module, a re-run notebook cell) replaces the earlier primitive.

    With ``residual=True`` the function returns ``PrimitiveResult(output, residual, release)``:
    the residual (any Python object, such as a factorization) is handed to the transpose rule
    as its ``residual=`` keyword and is never saved or returned; ``release()`` runs exactly once,
    when nothing can need the residual any more (the pullback applied or closed, the linear map
    closed, the transform failed, or at once for a plain call). A staged program runs such a
    primitive forward; staged derivatives that would have to save the residual are refused.

    Raises:
        ValueError: the name is taken by a built-in op or another primitive, or the argnames
            are not parameters of ``function`` or overlap.
        TypeError: ``function`` is not callable or takes ``*args`` / ``**kwargs``.

    Example:
        >>> import numpy as np
        >>> import advect as ad
        >>> @ad.primitive(name="doc_scale", static_argnames="factor")
        ... def scale(x, factor):
        ...     return x * factor
        >>> scale(np.array([1.0, 2.0]), factor=3)
        array([3., 6.])
    """
    if function is None:
        return lambda f: Primitive(f, name=name, static_argnames=static_argnames,
                                   nondiff_argnames=nondiff_argnames, residual=residual)
    return Primitive(function, name=name, static_argnames=static_argnames,
                     nondiff_argnames=nondiff_argnames, residual=residual)


class _PrimitiveOp(Op):
    """An ``Op`` that knows the primitive handle it belongs to."""

    __slots__ = ("handle",)

    def __init__(self, handle: Primitive, name: str, **fields):
        super().__init__(name, **fields)
        self.handle = handle


class Primitive:
    """The callable handle of a custom primitive; see :func:`primitive`.

    ``op`` is the registered operation; ``linear_map`` is the op the linear tape records for
    a primitive with a transpose rule.
    """

    def __init__(self, function: Callable, *, name: str | None = None, static_argnames=(),
                 nondiff_argnames=(), residual: bool = False):
        if not callable(function):
            raise TypeError(f"primitive {name!r}: expected a function, got "
                            f"{type(function).__name__}")
        if name is None:
            name = default_name(function)
        if not isinstance(name, str) or not name:
            raise ValueError(f"primitive: name must be a non-empty string, got {name!r}")
        if name.startswith(RESERVED_PREFIX):
            raise ValueError(f"primitive {name!r}: names starting with {RESERVED_PREFIX!r} are "
                             "reserved for Advect's own operations; pass name= with another "
                             "prefix (such as your package's name)")
        self._residual = bool(residual)
        self._transpose_kwargs: frozenset = frozenset()
        self._transpose_call: tuple = (None, frozenset())  # (rule, keywords), read as one
        self.name = name
        self.function = function
        self._signature, self._dynamic, self._static, self._nondiff = parameters(
            name, function, static_argnames, nondiff_argnames)
        params = self._signature.parameters.values()
        self._positional = tuple(p.name for p in params if p.kind in _POSITIONAL)
        self._keywords = tuple(p.name for p in params if p.kind not in _POSITIONAL)
        # every parameter positional and dynamic: calls skip Signature.bind and rebuilding
        self._plain = not self._keywords and not self._static
        self._abstract: Callable | None = None
        self._jvp: Callable | None = None
        self._transpose: Callable | None = None
        self._out_trees: dict = {}  # at most MAX_OUT_TREES entries, oldest dropped first
        self._out_trees_lock = threading.Lock()
        release_name(name, function)
        self.op = _PrimitiveOp(self, name, abstract=self._abstract_rule, impl=self._impl,
                               jvp=self._jvp_rule, transpose=self._transpose_rule,
                               attrs={"operands": "primitive", "static": "primitive"},
                               multiple_results=True)
        self.linear_map = _PrimitiveOp(
            self, name + LINEAR_MAP_SUFFIX, abstract=self._linear_abstract,
            impl=self._linear_impl, jvp=self._linear_jvp, transpose=self._linear_transpose,
            attrs={"operands": "primitive", "static": "primitive",
                   "tangents": "primitive"}, multiple_results=True)
        functools.update_wrapper(self, function, updated=())

    def __repr__(self) -> str:
        return f"Primitive({self.name!r})"

    @property
    def _label(self) -> str:
        label = getattr(self, "__name__", "")
        return label if label.isidentifier() else "primitive"

    # --- rules ---------------------------------------------------------------------------------
    def def_abstract(self, rule: Callable) -> Callable:
        """Set the abstract rule ``abstract(*args, **static) -> ArraySpec pytree``; returns it.

        Example:
            >>> import numpy as np, advect as ad
            >>> double = ad.primitive(lambda x: 2 * x, name="doc_double")
            >>> @double.def_abstract
            ... def _(x):
            ...     return x.spec
        """
        self._abstract = checked_rule(self.name, "abstract", rule)
        with self._out_trees_lock:  # what an earlier abstract rule declared no longer holds
            self._out_trees.clear()
        return rule

    def def_jvp(self, rule: Callable) -> Callable:
        """Set the JVP rule ``jvp(output, primals, tangents, **static) -> output tangent``.

        Example:
            >>> import numpy as np, advect as ad
            >>> sine = ad.primitive(lambda x: np.sin(x), name="doc_sine")
            >>> _ = sine.def_jvp(lambda out, primals, tangents: np.cos(primals[0]) * tangents[0])
            >>> ad.jvp(sine)(np.array([0.0]), tangents=np.array([2.0]))[1]
            array([2.])
        """
        self._jvp = checked_rule(self.name, "jvp", rule)
        return rule

    def def_transpose(self, rule: Callable) -> Callable:
        """Set the transpose rule ``transpose(cotangent, primals, output, **static)``, which
        returns one cotangent (or ``None``) per dynamic leaf.

        Example:
            >>> import numpy as np, advect as ad
            >>> sine = ad.primitive(lambda x: np.sin(x), name="doc_sine_rev")
            >>> _ = sine.def_transpose(lambda ct, primals, out: (ct * np.cos(primals[0]),))
            >>> ad.grad(lambda x: np.sum(sine(x)))(np.array([0.0]))
            array([1.])
        """
        rule = checked_rule(self.name, "transpose", rule)
        keywords = transpose_keywords(self.name, rule, self._residual)  # refused: not installed
        self._transpose_call = (rule, keywords)  # one assignment: threads see a matching pair
        self._transpose_kwargs, self._transpose = keywords, rule
        return rule

    # --- calling -------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves, operands, static = self._operands(args, kwargs)
        note_call(self.name)
        if not self._residual:
            outs = bind(self.op, *leaves, operands=operands, static=static)
            return tree_unflatten(self._out_tree(operands, static, leaves), outs)
        frame: list = [None, self]  # [the residual its implementation made, its owner]
        stack = frame_stack()
        stack.append(frame)
        try:
            outs = bind(self.op, *leaves, operands=operands, static=static)
        finally:
            stack.pop()
            holder = frame[0]
            if holder is not None and not holder.taped:
                holder.close()  # no tape holds it: nothing can need it any more
        return tree_unflatten(self._out_tree(operands, static, leaves), outs)

    def abstract_eval(self, *args: Any, **kwargs: Any) -> Any:
        """The output's ``ArraySpec`` pytree for a call, from the abstract rule alone.

        Raises:
            MissingPrimitiveRuleError: the primitive has no abstract rule.

        Example:
            >>> import numpy as np, advect as ad
            >>> half = ad.primitive(lambda x: x[::2], name="doc_half")
            >>> _ = half.def_abstract(lambda x: ad.ArraySpec(((x.shape[0] + 1) // 2,), x.dtype))
            >>> half.abstract_eval(np.zeros(5, np.float32))
            ArraySpec((3,), 'float32')
        """
        array_spec, _ = _staging_classes(self.name)
        leaves, operands, static = self._operands(args, kwargs)
        avals = self.op.abstract(*map(aval_of, leaves), operands=operands, static=static)
        specs = [array_spec(a.shape, a.dtype, device=a.device, weak=a.weak) for a in avals]
        return tree_unflatten(self._out_tree(operands, static, leaves), specs)

    def _operands(self, args, kwargs):
        """Flat dynamic leaves and the op's attrs (``operands``, ``static``) for a call."""
        if self._plain and not kwargs and len(args) == len(self._positional):
            values = dict(zip(self._positional, args))
        else:
            try:
                bound = self._signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise TypeError(f"primitive {self.name!r}: {exc}") from None
            bound.apply_defaults()
            values = bound.arguments
        leaves: list = []
        operands = tuple((pname, flatten_operand(self.name, pname, values[pname], leaves))
                         for pname in self._dynamic)
        static = tuple((pname, static_value(self.name, pname, values[pname]))
                       for pname in self._static)
        return leaves, operands, static

    def _call_function(self, operands, static, leaves):
        if self._plain and len(leaves) == len(operands) == len(self._positional) and all(
                code == "*" for _, code in operands):
            return self.function(*leaves)
        values = dict(zip((p for p, _ in operands), rebuild_operands(operands, leaves)))
        values.update(static)
        params = self._signature.parameters
        if len(values) != len(params) or any(p not in values for p in params):
            raise ValueError(f"primitive {self.name!r} was bound with the arguments "
                             f"{sorted(values)}, but its function takes {list(params)}; load a "
                             "saved program with the primitive definition it was saved with")
        return self.function(*(values[p] for p in self._positional),
                             **{p: values[p] for p in self._keywords})

    # --- output structure ------------------------------------------------------------------------
    # The op's results are flat. Whichever rule first sees a call signature (the implementation
    # or the abstract rule, both reached by every bind) records the output's tree structure here,
    # keyed by the attrs and the input shapes and dtypes; the handle and the JVP and transpose
    # rules read it back.
    # The abstract rule also records its output avals: an implementation run for a signature the
    # abstract rule has described (a staged program replayed by a dynamic transform, a restored
    # program) is checked against them.
    def _record_out_tree(self, operands, static, leaves, treedef: TreeDef,
                         avals: tuple | None = None) -> tuple | None:
        """Record (or check) the output structure of a call signature; return the output avals
        the abstract rule declared for it (``None`` when it has not run for it)."""
        key = signature_key(operands, static, leaves)
        trees = self._out_trees
        known = trees.get(key)
        if known is None or (avals is not None and known[1] is None):
            with self._out_trees_lock:  # bounded: one entry per distinct static value and shape
                known = trees.get(key)
                if known is None and len(trees) >= MAX_OUT_TREES:
                    del trees[next(iter(trees))]  # the oldest; a rule needing it finds it again
                if known is None or (avals is not None and known[1] is None
                                     and known[0] == treedef):
                    known = trees[key] = (treedef, avals)
        known, declared = known
        if known != treedef:
            raise ValueError(f"primitive {self.name!r} returned the structure {treedef!r} where "
                             f"it returned {known!r} before for the same input shapes and "
                             "dtypes; a primitive's output structure must depend only on them "
                             "(and its abstract rule must agree with its implementation)")
        return declared

    def _out_tree(self, operands, static, leaves) -> TreeDef:
        key = signature_key(operands, static, leaves)
        entry = self._out_trees.get(key)
        if entry is None and self._abstract is not None:  # dropped from the bounded table
            self._abstract_rule(*map(aval_of, leaves), operands=operands, static=static)
            entry = self._out_trees.get(key)
        if entry is None:
            raise TracingError(f"primitive {self.name!r}: its output structure is unknown for "
                               "this call because neither its implementation nor its abstract "
                               "rule ran for it")
        return entry[0]

    # --- the registered op's rules ---------------------------------------------------------------
    def _impl(self, xp, *leaves, operands, static):
        out = self._call_function(operands, static, leaves)
        if self._residual:
            out = self._take_residual(out)
        elif isinstance(out, PrimitiveResult):
            raise TypeError(f"primitive {self.name!r} returned a PrimitiveResult; declare it "
                            "with residual=True to pass a residual to its transpose rule")
        outs, treedef = tree_flatten(out)
        for k, o in enumerate(outs):
            if isinstance(o, Tracer):
                raise TracingError(
                    f"primitive {self.name!r}: its implementation returned a traced value "
                    f"(output leaf {k}): it uses a traced array it captured by closure or from "
                    "a global. Pass every array the implementation uses as an argument")
            if not (is_array(o) or type(o) in SCALARS):
                raise TypeError(f"primitive {self.name!r} returned a {type(o).__name__} as "
                                f"output leaf {k}; outputs must be arrays or pytrees of arrays")
        declared = self._record_out_tree(operands, static, leaves, treedef)
        if declared is not None:
            self.check_replay(outs, declared)
        return tuple(outs)

    def _take_residual(self, out):
        """Unpack a PrimitiveResult: keep its residual for this call's rules (in the caller's
        frame), or release it at once when no transform is running (a plain or staged call)."""
        if not isinstance(out, PrimitiveResult):
            raise TypeError(f"primitive {self.name!r} is declared with residual=True, so its "
                            "function must return ad.PrimitiveResult(output, residual, "
                            f"release), got a {type(out).__name__}")
        holder = Residual(out.residual, out.release)
        stack = frame_stack()
        if stack and stack[-1][1] is self and stack[-1][0] is None:  # this handle's own call
            stack[-1][0] = holder
        else:
            holder.close()
        return out.output

    def _tape_residual(self, fallback: bool, primals) -> dict | None:
        """The ``residual`` attr for a linear-map equation on the tape; ``None`` when there is
        no residual to hold (a staged derivative) and ``fallback`` allows transposing the JVP
        rule instead."""
        if not self._residual:
            return {}
        stack = frame_stack()
        holder = stack[-1][0] if stack and stack[-1][1] is self else None
        if holder is not None and any(isinstance(p, Tracer) for p in primals):
            # the primals belong to an outer transform too (a Hessian, a JVP of a gradient):
            # the residual is a plain value computed from their concrete values, so outer
            # transforms could not differentiate through it; the transpose rule would give them
            # a cotangent with the residual's dependence on the primals silently dropped
            if fallback:
                return None
            raise TracingError(
                f"primitive {self.name!r} has residual=True and only a transpose rule, and it "
                "is differentiated inside another transform (a Hessian, a gradient of a "
                "gradient): the outer transform cannot differentiate through the residual, a "
                "plain value. Give the primitive a JVP rule, which nested reverse mode "
                "transposes instead")
        if holder is None:
            if fallback:
                return None
            raise TracingError(
                f"primitive {self.name!r} has residual=True, and this derivative would need its "
                "residual after the call: a staged derivative would have to save it (residuals "
                "are never saved), and a staged or restored program replayed under a dynamic "
                "transform holds none. Differentiate a direct call of the primitive with a "
                "dynamic transform (ad.grad, ad.vjp), or give the primitive a JVP rule so "
                "reverse mode can transpose that instead")
        holder.taped = True
        return {"residual": holder}

    def check_replay(self, outs, avals) -> None:
        """Check a staged replay's implementation outputs against the abstract rule's avals."""
        check_outputs(self.name, outs, avals)

    def _abstract_rule(self, *avals, operands, static):
        if self._abstract is None:
            raise self._missing("abstract", "to stage it or to put it on a linear tape")
        array_spec, abstract_value = _staging_classes(self.name)
        args = rebuild_operands(operands, [_abstract_leaf(abstract_value, array_spec, a)
                                            for a in avals])
        result = call_rule(self.name, "abstract", self._abstract, *args, **dict(static))
        if result is None:  # a rule without its return: staging would return None silently
            raise TypeError(f"primitive {self.name!r}: the abstract rule returned None; return "
                            "the output's ArraySpec pytree (x.spec for an output like input x)")
        specs, treedef = tree_flatten(result, is_leaf=lambda s: isinstance(s, array_spec))
        out = []
        for k, s in enumerate(specs):
            if not isinstance(s, array_spec):
                raise TypeError(f"primitive {self.name!r}: the abstract rule returned a "
                                f"{type(s).__name__} as output leaf {k}; return ArraySpecs")
            out.append(s.aval)
        out = tuple(out)
        self._record_out_tree(operands, static, avals, treedef, out)
        return out

    def _jvp_rule(self, primals, tangents, out, *, operands, static):
        tangents = self._live_tangents(operands, primals, tangents)
        if all(t is None for t in tangents) or not any(inexact(o) for o in out):
            return (None,) * len(out)  # integer and boolean outputs need no rule
        on_tape = any(is_linear(t) for t in tangents if t is not None)
        if self._transpose is not None and (on_tape or self._jvp is None):
            if not on_tape:
                raise NoJVPError(f"primitive {self.name!r} has only a transpose rule, so it works "
                                 "in reverse mode only; define a JVP rule with "
                                 f"@{self._label}.def_jvp to use it in forward mode",
                                 op=self.name)
            residual = self._tape_residual(self._jvp is not None, primals)
            if residual is not None:
                slots = tuple(i for i, t in enumerate(tangents) if t is not None)
                result = bind(self.linear_map, *primals, *out, *(tangents[i] for i in slots),
                              operands=operands, static=static, tangents=slots, **residual)
                return tuple(r if inexact(o) else None for r, o in zip(result, out))
        if self._jvp is None:
            raise self._missing("jvp", "to differentiate it (or a transpose rule, for reverse "
                                "mode only)", reverse=on_tape)
        return self._run_jvp(primals, tangents, out, operands, static)

    def _transpose_rule(self, ct, *args, operands, static):
        # reached only when a JVP rule applied this primitive to tangents (a linear primitive)
        if self._transpose is None:
            raise self._missing("transpose", "because a JVP rule applied it to tangents, which "
                                "puts it on the linear tape of reverse mode", reverse=True)
        active = tuple(i for i, a in enumerate(args) if is_linear(a))
        cts = self._run_transpose(ct, args, None, operands, static, active)
        return tuple(c if is_linear(a) else None for a, c in zip(args, cts))

    # --- the linear map of a primitive with a transpose rule ------------------------------------
    def _split_linear(self, args, operands, tangents):
        n = sum(leaf_count(code) for _, code in operands)
        n_out = len(args) - n - len(tangents)
        return args[:n], args[n:n + n_out], args[n + n_out:]

    def _linear_abstract(self, *avals, operands, static, tangents, residual=None):
        _, out_avals, _ = self._split_linear(avals, operands, tangents)
        return tuple(out_avals)

    def _linear_impl(self, xp, *args, operands, static, tangents, residual=None):
        # applying the linear map forward (LinearMap, forward-mode jacobian) is the JVP
        if self._jvp is None:
            raise NoJVPError(f"primitive {self.name!r} has only a transpose rule, so its "
                             "linearization cannot be applied forward; define a JVP rule with "
                             f"@{self._label}.def_jvp", op=self.name)
        primals, out, given = self._split_linear(args, operands, tangents)
        full = [None] * len(primals)
        for i, t in zip(tangents, given):
            full[i] = t
        result = self._run_jvp(primals, full, out, operands, static)
        return tuple(xp.zeros_like(o) if r is None else r for r, o in zip(result, out))

    def _linear_jvp(self, primals, tangents, out, **attrs):
        raise NoJVPError(f"the linear map of primitive {self.name!r} has no JVP rule",
                         op=self.name)

    def _linear_transpose(self, ct, *args, operands, static, tangents, residual=None):
        primals, out, _ = self._split_linear(args, operands, tangents)
        cts = self._run_transpose(ct, primals, out, operands, static, tuple(tangents),
                                  residual)
        return (None,) * (len(primals) + len(out)) + tuple(cts[i] for i in tangents)

    # --- running the user's rules -----------------------------------------------------------------
    def _live_tangents(self, operands, primals, tangents) -> list:
        """Tangents with ``None`` forced for nondifferentiable arguments and non-float leaves."""
        live = list(tangents)
        i = 0
        for pname, code in operands:
            n = leaf_count(code)
            for k in range(i, i + n):
                if pname in self._nondiff or not inexact(primals[k]):
                    live[k] = None
            i += n
        return live

    def _run_jvp(self, primals, tangents, out, operands, static) -> tuple:
        treedef = self._out_tree(operands, static, primals)
        output = tree_unflatten(treedef, out)
        trace = RuleTrace(provider_of(primals[0]) if primals else np)
        try:
            views = tuple(None if t is None else trace.view(t) for t in tangents)
            result = call_rule(self.name, "jvp", self._jvp, output, tuple(primals), views,
                               **dict(static))
            result = tree_map(trace.unview, result, is_leaf=lambda x: x is None)
        finally:
            trace.close()
        if result is None:
            return (None,) * len(out)
        leaves = leaves_like(treedef, result)  # None nodes of the output take a None
        if leaves is None:
            leaves = tree_flatten(result, is_leaf=lambda x: x is None)[0]
        if len(leaves) != len(out):
            raise ValueError(f"primitive {self.name!r}: the JVP rule returned {len(leaves)} "
                             f"tangents for {len(out)} outputs; return one per output leaf, "
                             "in the output's structure")
        if any(is_linear(t) for t in tangents if t is not None):
            # by linearity, a tangent that does not depend on the tape's variables is zero
            leaves = [t if is_linear(t) else None for t in leaves]
        return tuple(None if t is None or not inexact(o)
                     else fit(fitting(self.name, "JVP", "tangent", "output", k, t, o), aval_of(o))
                     for k, (t, o) in enumerate(zip(leaves, out)))

    def _run_transpose(self, ct, primals, out, operands, static, active: tuple,
                       residual: Residual | None = None) -> tuple:
        treedef = self._out_tree(operands, static, primals)
        cotangent = tree_unflatten(treedef, ct)
        output = None if out is None else tree_unflatten(treedef, out)
        extra = {}
        rule, keywords = self._transpose_call
        if "active_input_indices" in keywords:
            extra["active_input_indices"] = active
        if self._residual:
            if residual is None:
                raise self._missing_residual()
            extra["residual"] = residual.value
        result = call_rule(self.name, "transpose", rule, cotangent, tuple(primals), output,
                           **dict(static), **extra)
        if not isinstance(result, tuple | list) or len(result) != len(primals):
            got = (f"{len(result)} entries" if isinstance(result, tuple | list)
                   else f"a {type(result).__name__}")
            raise ValueError(f"primitive {self.name!r}: the transpose rule returned {got}; it "
                             f"must return a tuple with one cotangent (or None) for each of "
                             f"its {len(primals)} dynamic leaves")
        live = self._live_tangents(operands, primals, result)
        return tuple(None if c is None
                     else fitting(self.name, "transpose", "cotangent", "dynamic input", k, c, p,
                                  " (summed over any axes the primitive broadcast)")
                     for k, (c, p) in enumerate(zip(live, primals)))

    def _missing_residual(self) -> TracingError:
        return TracingError(f"primitive {self.name!r} has residual=True, but its transpose rule "
                            "was reached without the residual of a dynamic call (a primitive "
                            "applied to tangents inside a JVP rule has none); give it a JVP "
                            "rule instead")

    def _missing(self, rule: str, why: str, reverse: bool | None = None
                 ) -> MissingPrimitiveRuleError:
        """The error for a missing rule: also a NoVJPError in reverse mode, a NoJVPError in
        forward mode (``reverse=None``: neither mode, e.g. staging without an abstract rule)."""
        cls = (MissingPrimitiveRuleError if reverse is None
               else MissingVJPRuleError if reverse else MissingJVPRuleError)
        return cls(f"primitive {self.name!r} has no {rule} rule, which it needs {why}; define "
                   f"one with @{self._label}.def_{rule}", op=self.name)


# --- staging classes, imported lazily (staging imports this package) ----------------------------

def _staging_classes(name: str):
    try:
        from .staging.specs import AbstractValue, ArraySpec
    except ImportError:
        raise TracingError(f"primitive {name!r}: abstract evaluation needs advect's staging "
                           "module, which is not available") from None
    return ArraySpec, AbstractValue


def _abstract_leaf(abstract_value, array_spec, aval: Aval) -> Any:
    return abstract_value(array_spec(aval.shape, aval.dtype, device=aval.device, weak=aval.weak))

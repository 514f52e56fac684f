"""The dynamic transforms: grad, value_and_grad, vjp, jvp, linearize (the dense derivatives,
jacobian, hessian and hvp, are in dense.py).

Each call traces the function afresh with concrete values; the record lives as long as the call
(or its Pullback / LinearMap).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of, check_dtype
from ..numpy._methods import ArrayTracer
from ..numpy._mutation import input_marker, mark_array, marks_array
from ..pytree import LEAF, TreeDef, tree_flatten, tree_map, tree_unflatten
from .forward import JVPTrace, JVPTracer
from .maps import LinearMap, Pullback, input_type, output_type, tangent_leaves, zero_tangent
from .reverse import backward, call_uncollected, linearize_flat, lower, ones_like_scalar

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "Pullback", "LinearMap",
           "stop_gradient", "is_traced"]


# --- selecting the differentiated inputs ---------------------------------------------------------

def selected_argnums(argnums, where: str) -> tuple[bool, tuple]:
    """``(single, entries)`` of an ``argnums``: an int, or a sequence of ints (not bools)."""
    if argnums is None:
        return False, ()
    single = isinstance(argnums, int | np.integer)
    try:
        nums = (argnums,) if single else tuple(argnums)
    except TypeError:
        raise TypeError(f"{where}: argnums must be an int or a tuple of ints, got "
                        f"{type(argnums).__name__}") from None
    for n in nums:
        if not isinstance(n, int | np.integer) or isinstance(n, bool | np.bool_):
            raise TypeError(f"{where}: argnums must be ints, got {type(n).__name__}")
    return single, nums


def selected_argnames(argnames, where: str) -> tuple:
    """The names of an ``argnames``: a str, or a sequence of distinct strs."""
    if argnames is None:
        return ()
    try:
        names = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    except TypeError:
        raise TypeError(f"{where}: argnames must be a str or a tuple of strs, got "
                        f"{type(argnames).__name__}") from None
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{where}: argnames must be strs, got {type(name).__name__}")
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: argnames {argnames} selects an input twice")
    return names


class _Selection:
    """Which inputs are differentiated, their flat leaves, and how to rebuild both the call
    and the gradient structure (int argnums -> tree, tuple -> tuple, argnames -> dict)."""

    def __init__(self, args: tuple, kwargs: dict, argnums, argnames, where: str):
        if argnums is None and argnames is None:
            argnums = 0
        x = args[0] if len(args) == 1 else None
        self.simple = (argnums == 0 and type(argnums) is int and argnames is None
                       and not kwargs and type(x) is np.ndarray and x.dtype.kind in "fc")
        if self.simple:  # f(x) for one floating array: the common call, without the loops
            self.single, self.nums, self.names, self.argnums, self.argnames = True, [0], (), 0, None
            self.args, self.kwargs, self.slots, self.fixed = [x], {}, [("pos", 0)], {}
            self.treedefs, self.primals, self.python_scalar, self.count = [LEAF], [x], [False], 1
            return
        self.single, nums = selected_argnums(argnums, where)
        resolved = []
        for n in nums:
            if not -len(args) <= n < len(args):
                raise IndexError(f"{where}: argnums {n} is out of range for {len(args)} "
                                 "positional arguments")
            resolved.append(int(n) % len(args))
        if len(set(resolved)) != len(resolved):
            raise ValueError(f"{where}: argnums {argnums} contains duplicates")
        names = selected_argnames(argnames, where)
        for name in names:
            if name not in kwargs:
                raise ValueError(f"{where}: argnames {name!r} is not a keyword argument of "
                                 "this call")
        self.nums, self.names, self.argnums, self.argnames = resolved, names, argnums, argnames
        self.args, self.kwargs = list(args), dict(kwargs)
        self.slots = [("pos", n) for n in resolved] + [("kw", k) for k in names]
        self.treedefs: list[TreeDef] = []
        self.primals: list = []  # the differentiated (floating or complex) leaves
        self.python_scalar: list[bool] = []  # per differentiated leaf
        self.fixed: dict[int, Any] = {}  # flat position -> an integer, bool or non-array leaf
        self.count = 0  # all selected leaves
        for kind, key in self.slots:
            value = self.args[key] if kind == "pos" else self.kwargs[key]
            if type(value) is np.ndarray and value.dtype.kind in "fc":  # the common case
                self.treedefs.append(LEAF)
                self.python_scalar.append(False)
                self.primals.append(value)
                self.count += 1
                continue
            leaves, treedef = tree_flatten(value)
            self.treedefs.append(treedef)
            for leaf in leaves:
                if _differentiable(leaf, where):
                    self.python_scalar.append(_is_python_number(leaf))
                    self.primals.append(_lift(leaf))
                else:
                    self.fixed[self.count] = leaf
                self.count += 1

    def _full(self, flat: Sequence, fill: Callable) -> list:
        """All selected leaves from the differentiated ones, ``fill(leaf)`` at the others."""
        if not self.fixed:
            return list(flat)
        it = iter(flat)
        return [fill(self.fixed[i]) if i in self.fixed else next(it) for i in range(self.count)]

    def call(self, f: Callable) -> Callable:
        if self.simple or len(self.args) == 1 and self.nums == [0] and not self.kwargs \
                and self.treedefs[0] is LEAF and not self.fixed:
            return f  # f(x): the flat call is the call
        def call_flat(*leaves):
            leaves = self._full(leaves, lambda leaf: leaf)
            args, kwargs = list(self.args), dict(self.kwargs)
            start = 0
            for (kind, key), treedef in zip(self.slots, self.treedefs):
                part = leaves[start] if treedef is LEAF else tree_unflatten(
                    treedef, leaves[start:start + treedef.num_leaves])
                start += treedef.num_leaves
                if kind == "pos":
                    args[key] = part
                else:
                    kwargs[key] = part
            return f(*args, **kwargs)
        return call_flat

    def unflatten(self, flat: list, fill: Callable | None = None) -> Any:
        """Per-input results, in the gradient structure the selection asks for. ``flat`` has one
        entry per differentiated leaf; the others get ``fill(leaf)`` (default: zeros of the
        leaf's shape and dtype, ``None`` for a leaf that is not an array)."""
        if self.simple:
            return flat[0]
        if any(self.python_scalar):
            flat = [_python_float(g) if scalar else g
                    for g, scalar in zip(flat, self.python_scalar)]
        flat = self._full(flat, fill or _zero_gradient)
        parts, start = [], 0
        for treedef in self.treedefs:
            parts.append(flat[start] if treedef is LEAF else tree_unflatten(
                treedef, flat[start:start + treedef.num_leaves]))
            start += treedef.num_leaves
        positional = parts[:len(self.nums)]
        named = dict(zip(self.names, parts[len(self.nums):]))
        pos = positional[0] if self.single else tuple(positional)
        if self.argnames is None:
            return pos
        if self.argnums is None:
            return named
        return pos, named


def _python_float(g):
    """The gradient of a Python ``int``/``float`` input: a Python float (a traced weak float64
    scalar while staging, which a staged program returns as a Python float)."""
    if isinstance(g, Tracer):
        return ops.python_scalar(g, dtype="float64") if aval_of(g).shape == () else g
    return float(g) if np.ndim(g) == 0 else g


def _is_array(leaf) -> bool:
    return isinstance(leaf, Tracer) or hasattr(leaf, "dtype") and hasattr(leaf, "shape")


def _is_python_number(leaf) -> bool:
    """A Python ``int``/``float``, concrete or traced while staging (a weak int or float
    scalar, as a staged signature records one)."""
    if isinstance(leaf, Tracer):
        aval = aval_of(leaf)
        return aval.weak and aval.shape == () and aval.dtype.kind in "if"
    return type(leaf) in (int, float)


def _differentiable(leaf, where: str) -> bool:
    """Whether a selected leaf gets a derivative: floating and complex arrays and Python
    ``int``/``float`` (also traced ones). Integer and bool arrays (and Python bools) are passed
    through unchanged with zero derivatives, as are non-array leaves such as strings; a Python
    complex is refused."""
    if _is_python_number(leaf):
        return True
    if type(leaf) is complex:
        raise TypeError(f"{where}: a Python complex input cannot be differentiated as a weak "
                        "scalar; pass np.complex128(z) or a 0-d complex array")
    if not _is_array(leaf):
        return False
    dtype = aval_of(leaf).dtype
    if dtype.kind not in "biufc":  # object, str, datetime: refused, never silent zeros
        check_dtype(dtype, f"{where}: a selected input")
    return dtype.kind in "fc"


def _zero_gradient(leaf):
    """The derivative of an integer, bool or non-array input: zeros of its shape and dtype
    (``None`` for a leaf that is not an array)."""
    if type(leaf) is bool or isinstance(leaf, np.generic):
        return np.zeros((), np.asarray(leaf).dtype)
    if not _is_array(leaf):
        return None
    return ops.zeros_like(leaf)


def _lift(leaf):
    """A Python ``int``/``float`` input becomes a Python float primal: weak, so it promotes as
    a Python scalar does (``3.0 * float32_array`` stays float32). A traced Python int (a weak
    int64 scalar while staging) becomes a traced weak float64 the same way."""
    if type(leaf) is int:
        return float(leaf)
    if isinstance(leaf, Tracer) and _is_python_number(leaf) and aval_of(leaf).dtype.kind == "i":
        return ops.python_scalar(leaf, dtype="float64")
    return leaf


def _mark_inputs(fun):
    """Wrap ``fun`` so its tracer inputs are read-only (mutating them raises MutationError)."""
    def wrapped(*tracers):
        for t in tracers:
            t._mut = input_marker(t.primal)
        return fun(*tracers)
    return wrapped


def _lower_all(trace, out) -> tuple[list, list, TreeDef]:
    """Split the function's output into primal leaves and tangent variables (None: constant);
    a dead tracer there (escaped, or a stale view) raises instead of passing as a constant.
    0-d NumPy primals and tangents get eager NumPy's types (``_eager_type``)."""
    leaves, treedef = tree_flatten(out)
    primals, tangents = [], []
    for leaf in leaves:
        if isinstance(leaf, Tracer) and not leaf._trace.alive:
            raise leaf._trace.dead_error("the transformed function's output")
        p, t = lower(trace, leaf)
        if p is not leaf:
            p = _eager_type(leaf._mut, p)
            t = output_type(_eager_type(leaf._mut, t), p)  # the primal's 0-d type
        primals.append(p)
        tangents.append(t)
    return primals, tangents, treedef


def _eager_type(mut, value):
    """``value``, an output's primal or tangent, with the type eager NumPy gives a 0-d result:
    a 0-d ndarray where the tracer's marker ``mut`` says so (``marks_array``), else a NumPy
    scalar (staged programs follow the same rule; an input passed through keeps its type, as
    its marker says: ``input_marker``). A traced 0-d value (staging, or an outer transform's)
    is marked an array where ``mut`` says so, which gives it that type when it comes out."""
    if type(value) is np.ndarray:
        return value if value.shape or marks_array(mut) else value[()]
    if isinstance(value, np.generic) and marks_array(mut):
        return np.asarray(value)
    if isinstance(value, ArrayTracer) and not value.shape and marks_array(mut):
        mark_array(value)  # (a NumPy-scalar tracer only: others keep their marker)
    return value


def _owned(leaves: list, inputs: list) -> list:
    """The output leaves with each NumPy array that is an input, or may be a view of one,
    copied: a transform passes a traced value through ``a.copy()``, ``a.astype(a.dtype)`` or
    ``ad.array(a)``, and whoever writes into a result must not change the caller's input (the
    rule a staged plan follows for its outputs)."""
    arrays = [p for p in inputs if type(p) is np.ndarray]
    if not arrays:
        return leaves
    return [leaf.copy() if type(leaf) is np.ndarray and any(
        leaf is a or np.may_share_memory(leaf, a) for a in arrays) else leaf for leaf in leaves]


def _linearize_leaves(fun, sel: _Selection):
    """Run ``fun`` on the selection's inputs under a linearize trace. Returns the output's
    primal leaves, their tape variables (None for constant leaves), its tree definition, the
    tape and the input variables; the traces are closed."""
    out, in_vars, trace, tape = linearize_flat(fun, sel.primals)
    equations = tape.tape  # closing the trace lets go of it
    try:
        leaves, out_vars, treedef = _lower_all(trace, out)
    finally:
        trace.close()
        tape.close()
    return _owned(leaves, sel.primals), out_vars, treedef, equations, in_vars


# --- reverse mode --------------------------------------------------------------------------------

_REAL_SCALARS = frozenset({np.float64, np.float32, np.float16})


def _check_scalar_output(value, where):
    try:
        aval = aval_of(value)
    except TypeError:  # a string, an object: not a number at all
        raise TypeError(f"{where} needs a function returning one real scalar, got "
                        f"{_output_kind(value)}") from None
    if aval.shape != ():
        raise ValueError(f"{where} needs a function with a scalar output, got shape {aval.shape};"
                         " use jacobian or vjp for array outputs")
    if aval.dtype.kind == "c":
        raise ValueError(f"{where} needs a real output, got {aval.dtype}; use vjp, jvp or "
                         "linearize for complex outputs")
    if aval.dtype.kind != "f":
        raise ValueError(f"{where} needs a floating-point output, got {aval.dtype}")


def _output_kind(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, tuple | list | dict):
        n = len(value)
        return f"a {type(value).__name__} of {n} item{'s' if n != 1 else ''}"
    if isinstance(value, Tracer):  # not the internal class name: what the user returned
        aval = aval_of(value)
        return f"one {aval.dtype} value of shape {aval.shape}"
    if _labeled_scalar(value):  # a 0-d xarray.DataArray: the container is not the scalar
        return f"a {type(value).__name__} holding one scalar (return the scalar itself: its .data)"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiouAEIOU' else 'a'} {name}"


def _labeled_scalar(value) -> bool:
    """Whether ``value`` is a pytree node other than a list, tuple or dict holding one 0-d leaf."""
    if isinstance(value, tuple | list | dict) or isinstance(value, Tracer):
        return False
    leaves = tree_flatten(value)[0]
    return len(leaves) == 1 and leaves[0] is not value and hasattr(leaves[0], "shape") \
        and not tuple(leaves[0].shape)


def value_and_grad(f: Callable, argnums: int | Sequence[int] | None = None, *,
                   argnames: str | Sequence[str] | None = None, has_aux: bool = False):
    """Return a function computing ``f``'s value and its reverse-mode gradient.

    Selection follows :func:`grad`. With ``has_aux``, ``f`` returns ``(value, aux)`` and the
    result is the flat ``(value, gradient, aux)`` (JAX nests it as ``((value, aux), gradient)``).
    A ``StagedProgram`` gives a ``StagedProgram``.

    Example:
        >>> import numpy as np, advect as ad
        >>> value, g = ad.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
        >>> float(value), g
        (5.0, array([2., 4.]))
    """
    if _is_program(f):
        from ..staging.derive import staged_value_and_grad
        return staged_value_and_grad(f, argnums, argnames=argnames, has_aux=has_aux)
    return _value_and_grad(f, argnums, argnames, has_aux, "value_and_grad")


def _value_and_grad(f: Callable, argnums, argnames, has_aux: bool, where: str):
    """The dynamic ``value_and_grad`` (``where`` names the transform the user called)."""

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        sel = _Selection(args, kwargs, argnums, argnames, where)
        out, in_vars, trace, tape = linearize_flat(sel.call(f), sel.primals)
        try:
            if has_aux and not (isinstance(out, tuple | list) and len(out) == 2):  # as JAX
                raise TypeError(f"{where}(has_aux=True) needs a function returning a "
                                f"pair (value, aux), got {_output_kind(out)}")
            value, aux = out if has_aux else (out, None)
            if type(value) is JVPTracer and value._trace is trace:  # the common case
                primal, var = value.primal, value.tangent
                if value._mut is not None or type(primal) is np.ndarray:  # 0-d: NumPy's type
                    primal = _eager_type(value._mut, primal)
            else:
                primals, tangents, out_def = _lower_all(trace, value)
                if out_def != LEAF:
                    raise ValueError(
                        "grad needs a function returning one real scalar, got "
                        f"{_output_kind(value)}" + (
                            "; use has_aux=True for a (value, aux) pair"
                            if isinstance(value, tuple) and len(value) == 2 and not has_aux
                            else "" if value is None or _labeled_scalar(value)
                            else "; use jacobian or vjp for several outputs"))
                (primal,), (var,) = primals, tangents
            if type(primal) not in _REAL_SCALARS:  # np.sum & co. return NumPy scalars
                _check_scalar_output(primal, "grad")
                primal = _owned([primal], sel.primals)[0]  # a 0-d input passed through
            cts = backward(tape.tape, [(var, ones_like_scalar(primal))])
            grads = []
            for v, p in zip(in_vars, sel.primals):
                g = cts.get(v.index)
                grads.append(input_type(ops.zeros_like(p), p) if g is None else g if type(
                    p) is np.ndarray and p.shape else input_type(g, p))  # (0-d: the call)
            if has_aux:
                aux_leaves, _, aux_def = _lower_all(trace, aux)
                aux = tree_unflatten(aux_def, _owned(aux_leaves, sel.primals))
        finally:
            trace.close()
            tape.close()
        result = grads[0] if sel.simple else sel.unflatten(grads)
        return (primal, result, aux) if has_aux else (primal, result)

    return wrapped


def grad(f: Callable, argnums: int | Sequence[int] | None = None, *,
         argnames: str | Sequence[str] | None = None, has_aux: bool = False):
    """Return a function computing the reverse-mode gradient of a real scalar ``f``.

    ``argnums`` int gives that input's gradient pytree, a tuple gives a tuple; ``argnames``
    selects keyword inputs (a dict of gradients); both give ``(positional, named)``. ``None``
    selects input 0 unless ``argnames`` is given. Python ``int``/``float`` inputs are lifted to
    weak float64 scalars (they promote as Python scalars do) and their gradients returned as
    Python floats. Integer and bool inputs pass through unchanged and get gradients of zeros in
    their own shape and dtype; non-array leaves (strings) get ``None``. A ``StagedProgram``
    gives a ``StagedProgram``.

    Raises:
        ValueError: the output is not a real floating scalar.
        IndexError: an ``argnums`` entry is out of range.
        TypeError: a selected input is a Python complex.

    Example:
        >>> import numpy as np, advect as ad
        >>> ad.grad(lambda x: np.sum(np.sin(x) ** 2))(np.array([0.0, np.pi / 4]))
        array([0., 1.])
    """
    if _is_program(f):
        from ..staging.derive import staged_grad
        return staged_grad(f, argnums, argnames=argnames, has_aux=has_aux)
    vg = _value_and_grad(f, argnums, argnames, has_aux, "grad")

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        out = vg(*args, **kwargs)
        return out[1:] if has_aux else out[1]

    return wrapped


def _is_program(f) -> bool:
    program = sys.modules.get("advect.staging.program")  # loaded once staging is used
    return program is not None and isinstance(f, program.StagedProgram)


def vjp(f: Callable, argnums: int | Sequence[int] = 0):
    """Return ``vjp_f(*args, **kw) -> (value, Pullback)``; the pullback maps an output
    cotangent to input cotangents (real adjoint) and may be applied once.

    Example:
        >>> import numpy as np, advect as ad
        >>> value, pullback = ad.vjp(np.sin)(np.array([0.0]))
        >>> pullback(np.array([2.0]))
        array([2.])
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        sel = _Selection(args, kwargs, argnums, None, "vjp")
        leaves, out_vars, treedef, tape, in_vars = _linearize_leaves(sel.call(f), sel)
        return tree_unflatten(treedef, leaves), Pullback(tape, in_vars, out_vars, treedef,
                                                         sel, None)

    return wrapped


# --- forward mode --------------------------------------------------------------------------------

def jvp(f: Callable, argnums: int | Sequence[int] = 0):
    """Return ``jvp_f(*args, tangents=..., **kw) -> (value, tangent)`` (forward mode).

    With a tuple ``argnums``, ``tangents`` is a tuple with one pytree per selected input.

    Example:
        >>> import numpy as np, advect as ad
        >>> ad.jvp(np.sin)(np.array([0.0]), tangents=np.array([3.0]))
        (array([0.]), array([3.]))
    """

    @functools.wraps(f)
    def wrapped(*args, tangents, **kwargs):
        sel = _Selection(args, kwargs, argnums, None, "jvp")
        flat_t = tangent_leaves(tangents, sel)
        trace = JVPTrace()
        try:
            inputs = [JVPTracer(trace, p, t) for p, t in zip(sel.primals, flat_t)]
            out = call_uncollected(_mark_inputs(sel.call(f)), inputs)
            leaves, tangents, treedef = _lower_all(trace, out)
        finally:
            trace.close()
        leaves = _owned(leaves, sel.primals)
        tangents = _owned([zero_tangent(p) if t is None else t
                           for p, t in zip(leaves, tangents)], flat_t)
        return tree_unflatten(treedef, leaves), tree_unflatten(treedef, tangents)

    return wrapped


# --- linearize ---------------------------------------------------------------------------------

def linearize(f: Callable, /, *primals, argnums: int | Sequence[int] = 0, **kwargs):
    """Linearize ``f`` at ``primals``: returns ``(value, LinearMap)``.

    Example:
        >>> import numpy as np, advect as ad
        >>> value, lm = ad.linearize(np.sin, np.array([0.0, np.pi]))
        >>> lm(np.array([1.0, 1.0]))
        array([ 1., -1.])
        >>> lm.close()
    """
    sel = _Selection(primals, kwargs, argnums, None, "linearize")
    out_primals, out_vars, out_def, tape, in_vars = _linearize_leaves(sel.call(f), sel)
    return tree_unflatten(out_def, out_primals), LinearMap(tape, in_vars, out_vars, out_def,
                                                           sel, out_primals)


# --- helpers -----------------------------------------------------------------------------------

def stop_gradient(value):
    """A pytree-preserving concrete copy of traced leaves: no derivative flows through it.

    Example:
        >>> import numpy as np, advect as ad
        >>> ad.grad(lambda x: np.sum(x * ad.stop_gradient(x)))(np.array([3.0]))
        array([3.])
    """
    def detach(leaf):
        if not isinstance(leaf, Tracer):
            return leaf
        value = leaf._concrete_for("stop_gradient")
        return value.copy() if isinstance(value, np.ndarray) else value  # the tape keeps its own
    return tree_map(detach, value)


def is_traced(value) -> bool:
    """Whether ``value`` is an Advect tracer.

    Example:
        >>> import numpy as np, advect as ad
        >>> ad.is_traced(np.ones(2))
        False
    """
    return isinstance(value, Tracer)

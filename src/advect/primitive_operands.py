"""A custom primitive's arguments: which are static, how pytree operands flatten into the
op's leaves and a JSON-friendly structure code (so saved programs can rebuild them), and the
registry names primitives take."""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from .core import REGISTRY, Tracer
from .dtypes import Aval, aval_of
from .pytree import TreeDef, tree_flatten

LINEAR_MAP_SUFFIX = ".linear_map"
SCALARS = (bool, int, float, complex)
RESERVED_PREFIX = "advect."


def parameters(name, function, static_argnames, nondiff_argnames):
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        raise TypeError(f"primitive {name!r}: cannot read the signature of {function!r}; wrap "
                        "it in a def with named parameters") from None
    params = signature.parameters
    for p in params.values():
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise TypeError(f"primitive {name!r}: parameter {p.name!r} is variadic; a "
                            "primitive's parameters must be named")
    static = _argnames(name, "static_argnames", static_argnames, params)
    nondiff = _argnames(name, "nondiff_argnames", nondiff_argnames, params)
    both = static & nondiff
    if both:
        raise ValueError(f"primitive {name!r}: {sorted(both)} are named in both static_argnames "
                         "and nondiff_argnames; a static argument has no tangent anyway")
    dynamic = tuple(p for p in params if p not in static)
    return signature, dynamic, tuple(p for p in params if p in static), frozenset(nondiff)


def _argnames(name, what, names, params) -> frozenset:
    names = (names,) if isinstance(names, str) else tuple(names)
    for n in names:
        if n not in params:
            raise ValueError(f"primitive {name!r}: {what} names {n!r}, which is not a parameter "
                             f"of the function (its parameters: {', '.join(params) or 'none'})")
    return frozenset(names)


def default_name(function) -> str:
    """A primitive's name when none is given: ``f"{module}.{qualname}"``."""
    return _qualified(function)


def transpose_keywords(name: str, rule, residual: bool) -> frozenset:
    """The keyword-only parameters a transpose rule takes among ``active_input_indices`` and
    ``residual`` (required for a residual primitive)."""
    try:
        params = inspect.signature(rule).parameters
    except (TypeError, ValueError):
        params = {}
    takes_all = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    names = frozenset(n for n in ("active_input_indices", "residual") if n in params or takes_all)
    if residual and "residual" not in names:
        raise TypeError(f"primitive {name!r} has residual=True, so its transpose rule must take "
                        "a keyword-only residual parameter: def transpose(ct, primals, output, *, "
                        "residual)")
    return names


def checked_rule(name: str, rule: str, fn) -> Callable:
    if not callable(fn):
        raise TypeError(f"primitive {name!r}: def_{rule} expects a function, got "
                        f"{type(fn).__name__}")
    return fn


def release_name(name: str, function) -> None:
    """Refuse a taken name, except for a re-run of the same definition, which replaces it."""
    taken = []
    for n in (name, name + LINEAR_MAP_SUFFIX):
        existing = REGISTRY.get(n)
        if existing is None:
            continue
        handle = getattr(existing, "handle", None)
        if handle is None:
            raise ValueError(f"primitive {name!r}: {n!r} is the name of a built-in operation; "
                             "choose another name")
        if not _same_definition(handle.function, function):
            raise ValueError(f"primitive {name!r}: the name {n!r} is taken by the primitive "
                             f"{handle.name!r} defined by {_qualified(handle.function)}; "
                             "choose another name")
        taken.append(n)
    for n in taken:
        del REGISTRY[n]


def _qualified(function) -> str:
    return (f"{getattr(function, '__module__', '?')}."
            f"{getattr(function, '__qualname__', type(function).__name__)}")


def _same_definition(a, b) -> bool:
    return (getattr(a, "__qualname__", None) is not None
            and _qualified(a) == _qualified(b))


def is_array(x) -> bool:
    return isinstance(x, Tracer | np.ndarray | np.generic) or (
        hasattr(x, "shape") and hasattr(x, "dtype"))


def inexact(x) -> bool:
    return aval_of(x).dtype.kind in "fc"


def flatten_operand(name: str, pname: str, value, leaves: list):
    """Append ``value``'s leaves to ``leaves``; return its JSON-friendly structure code."""
    if is_array(value) or type(value) in SCALARS:
        leaves.append(value)
        return "*"
    flat, treedef = tree_flatten(value)
    for leaf in flat:
        if not (is_array(leaf) or isinstance(leaf, SCALARS)):
            raise TypeError(f"primitive {name!r}: argument {pname!r} holds a "
                            f"{type(leaf).__name__}, not an array or a number; name it in "
                            "static_argnames if it is a setting")
    leaves.extend(flat)
    return _tree_code(name, pname, treedef)


def _tree_code(name: str, pname: str, treedef: TreeDef):
    """``"*"`` for a leaf, ``None`` for None, ``("tuple"|"list", children)``,
    ``("dict", keys, children)``: a structure saved programs can store."""
    kind = treedef.kind
    if kind is None:
        return "*"
    if kind is type(None):
        return None
    children = tuple(_tree_code(name, pname, c) for c in treedef.children)
    if kind is tuple or kind is list:
        return (kind.__name__, children)
    if kind is dict and all(isinstance(k, str) for k in treedef.aux):
        return ("dict", tuple(treedef.aux), children)
    raise TypeError(f"primitive {name!r}: argument {pname!r} is a pytree with a "
                    f"{kind.__name__} node; primitive operands may nest only tuples, lists, "
                    "dicts with string keys and None, so that saved programs can rebuild them")


def leaf_count(code) -> int:
    if code == "*":
        return 1
    if code is None:
        return 0
    return sum(leaf_count(c) for c in code[-1])


def _rebuild(code, leaves):
    if code == "*":
        return next(leaves)
    if code is None:
        return None
    if code[0] == "dict":
        return {k: _rebuild(c, leaves) for k, c in zip(code[1], code[2])}
    items = [_rebuild(c, leaves) for c in code[1]]
    return tuple(items) if code[0] == "tuple" else items


def rebuild_operands(operands, leaves) -> list:
    it = iter(leaves)
    return [_rebuild(code, it) for _, code in operands]


def static_value(name: str, pname: str, value):
    if value is None or type(value) in (bool, int, float, str):
        return value
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        return value.item()
    if isinstance(value, tuple | list):
        return tuple(static_value(name, pname, v) for v in value)
    raise TypeError(f"primitive {name!r}: static argument {pname!r} is a "
                    f"{type(value).__name__}; static arguments become attributes of saved "
                    "programs, so they must be None, bools, ints, floats, strings or "
                    "tuples/lists of them (pass arrays as dynamic arguments)")


def _frozen(x):
    return tuple(_frozen(v) for v in x) if isinstance(x, tuple | list) else x


def _typed(x):
    """A static value with the type of each scalar in it: ``2``, ``2.0`` and ``True`` are equal
    in Python but are different settings (``x ** 2`` keeps an integer dtype, ``x ** 2.0`` does
    not)."""
    if isinstance(x, tuple | list):
        return tuple(_typed(v) for v in x)
    return (type(x).__name__, x)


def signature_key(operands, static, leaves) -> tuple:
    """What a primitive's output structure and avals depend on: the attrs (static values with
    their types) and the input shapes, dtypes and weakness (``x * 2.0`` keeps a float32 ``x``'s
    dtype, ``x * np.float64(2.0)`` does not)."""
    return (_frozen(operands), _typed(static),
            tuple((a.shape, a.dtype, a.weak) for a in map(_aval, leaves)))


def _aval(x) -> Aval:
    return x if isinstance(x, Aval) else aval_of(x)  # aval_of(an Aval) would drop its weakness


def check_outputs(name: str, outs, avals) -> None:
    """Refuse implementation outputs that are not what the abstract rule declared."""
    if len(outs) != len(avals):
        raise ValueError(f"primitive {name!r} returned {len(outs)} output leaves where its "
                         f"abstract rule declared {len(avals)}")
    for k, (o, aval) in enumerate(zip(outs, avals)):
        got = aval_of(o)
        if tuple(got.shape) != aval.shape or got.dtype != aval.dtype:
            raise ValueError(f"primitive {name!r} returned {got.dtype}{list(got.shape)} as "
                             f"output leaf {k} where its abstract rule declared "
                             f"{aval.dtype}{list(aval.shape)}; the abstract rule must describe "
                             "what the implementation returns")


def fitting(name: str, rule: str, what: str, slot: str, k: int, value, like, hint: str = ""):
    """``value`` when its shape broadcasts to ``like``'s (a rule may return a smaller tangent or
    cotangent, as NumPy broadcasting would give it); else a ValueError naming the primitive,
    the rule and the leaf."""
    got, want = tuple(aval_of(value).shape), tuple(aval_of(like).shape)
    try:
        fits = got == want or np.broadcast_shapes(got, want) == want
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"primitive {name!r}: the {rule} rule returned a {what} of shape {got} "
                         f"for {slot} leaf {k}, whose shape is {want}; return one of that "
                         f"shape{hint}")
    return value


def leaves_like(treedef: TreeDef, tree) -> list | None:
    """``tree``'s leaves at the leaf positions of ``treedef`` (a rule's result in the output's
    structure), with a ``None`` subtree standing for zeros; ``None`` when the structures
    differ. A ``None`` node of the output (a ``None`` it returns) takes a ``None`` and no leaf."""
    if treedef.kind is None:
        return [tree] if tree is None or tree_flatten(tree)[1].kind is None else None
    if tree is None:
        return [None] * treedef.num_leaves
    children, node = tree_flatten(tree, is_leaf=lambda n: n is not tree)
    if (node.kind is not treedef.kind or node.aux != treedef.aux
            or len(children) != len(treedef.children)):
        return None
    out: list = []
    for child, sub in zip(children, treedef.children):
        leaves = leaves_like(sub, child)
        if leaves is None:
            return None
        out += leaves
    return out


_RULE_FORMS = {"abstract": "abstract(*dynamic_args, **static), the dynamic arguments "
                           "positionally in parameter order (keyword-only ones too)",
               "jvp": "jvp(output, primals, tangents, **static)",
               "transpose": "transpose(cotangent, primals, output, **static)"}


def call_rule(name: str, rule: str, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``; a TypeError because the rule's parameters do not take that call
    (not one raised inside the rule) names the primitive, the rule and the call form."""
    try:
        return fn(*args, **kwargs)
    except TypeError:
        try:
            inspect.signature(fn).bind(*args, **kwargs)
        except TypeError as exc:
            static = ", ".join(kwargs) or "none"
            raise TypeError(f"primitive {name!r}: its {rule} rule does not take the call "
                            f"{_RULE_FORMS[rule]} (keywords here: {static}): {exc}") from None
        except ValueError:  # no signature to compare with
            pass
        raise

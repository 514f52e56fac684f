"""Pytrees: nested containers whose leaves are arrays.

Built-in nodes are tuple, list, dict (keys sorted), None and namedtuples. Other classes become
nodes with :func:`register_pytree_node` (optionally for their subclasses too), by defining
``__advect_tree_flatten__`` / ``__advect_tree_unflatten__`` (inherited by subclasses), or, for
dataclasses, with the :func:`register_dataclass` decorator. :func:`static` wraps metadata so
that it is held in the tree's structure instead of being a leaf.

Example:
    >>> from advect.pytree import tree_flatten, tree_unflatten
    >>> leaves, treedef = tree_flatten({"b": (1, 2), "a": [3]})
    >>> leaves
    [3, 1, 2]
    >>> tree_unflatten(treedef, [30, 10, 20])
    {'a': [30], 'b': (10, 20)}
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import keyword
import operator
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, TypeVar

import numpy as np

__all__ = ["TreeDef", "Static", "static", "tree_flatten", "tree_unflatten", "tree_leaves",
           "tree_map", "tree_flatten_with_paths", "register_pytree_node", "register_dataclass",
           "register_saved_node", "SavedNode", "format_path", "tree_structure_in_order"]

T = TypeVar("T")


class _NodeType(NamedTuple):
    flatten: Callable[[Any], tuple[Iterable[Any], Any]]
    unflatten: Callable[[Any, list[Any]], Any]
    include_subclasses: bool


_REGISTRY: dict[type, _NodeType] = {}
_RESOLVED: dict[type, _NodeType | None] = {}  # per concrete type: its node, None for a leaf
_BUILTIN = (tuple, list, dict, type(None))


def register_pytree_node(cls: type, *, flatten_fn: Callable, unflatten_fn: Callable,
                         include_subclasses: bool = False) -> None:
    """Make ``cls`` a pytree node.

    ``flatten_fn(obj) -> (children, aux)`` and ``unflatten_fn(aux, children) -> obj``; ``aux``
    must be comparable with ``==`` (it becomes part of the tree definition, so two trees
    whose ``aux`` differ have different structures). With ``include_subclasses=True``
    subclasses of ``cls`` use the same functions (store ``type(obj)`` in ``aux`` to rebuild
    the subclass); the nearest registered base class in a type's MRO wins.

    Raises:
        ValueError: ``cls`` is already registered, or is a built-in node.

    Example:
        >>> import dataclasses
        >>> @dataclasses.dataclass
        ... class Pair:
        ...     a: float
        ...     b: float
        >>> register_pytree_node(Pair, flatten_fn=lambda p: ((p.a, p.b), None),
        ...                      unflatten_fn=lambda aux, ch: Pair(*ch))
        >>> tree_leaves(Pair(1.0, 2.0))
        [1.0, 2.0]
    """
    if cls in _REGISTRY or cls in _BUILTIN or cls is Static:
        raise ValueError(f"{cls.__name__} is already a pytree node")
    _REGISTRY[cls] = _NodeType(flatten_fn, unflatten_fn, bool(include_subclasses))
    _RESOLVED.clear()


def _protocol_unflatten(cls):
    return lambda aux, children: cls.__advect_tree_unflatten__(aux, children)


def _resolve(cls: type) -> _NodeType | None:
    """The node rules of ``cls``: the nearest class in its MRO that is registered (exactly, or
    with ``include_subclasses``) or defines ``__advect_tree_flatten__``."""
    try:
        return _RESOLVED[cls]
    except KeyError:
        pass
    node = None
    for base in cls.__mro__:
        entry = _REGISTRY.get(base)
        if entry is not None and (base is cls or entry.include_subclasses):
            node = entry
            break
        if "__advect_tree_flatten__" in vars(base):
            node = _NodeType(cls.__advect_tree_flatten__, _protocol_unflatten(cls), True)
            break
    _RESOLVED[cls] = node
    return node


def register_dataclass(cls: type[T]) -> type[T]:
    """Class decorator: a dataclass whose fields are children, except fields declared with
    ``dataclasses.field(metadata={"static": True})``, which are held in the structure.

    Raises:
        TypeError: ``cls`` is not a dataclass.

    Example:
        >>> import dataclasses
        >>> @register_dataclass
        ... @dataclasses.dataclass
        ... class Layer:
        ...     weight: float
        ...     name: str = dataclasses.field(default="dense", metadata={"static": True})
        >>> tree_leaves(Layer(2.0)), tree_map(lambda w: w * 10, Layer(2.0, "out"))
        ([2.0], Layer(weight=20.0, name='out'))
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"register_dataclass: {cls!r} is not a dataclass; decorate it with "
                        "@dataclasses.dataclass first (below this decorator)")
    fields = [f for f in dataclasses.fields(cls) if f.init]
    data = tuple(f.name for f in fields if not f.metadata.get("static", False))
    meta = tuple(f.name for f in fields if f.metadata.get("static", False))

    def flatten(obj):
        return [getattr(obj, n) for n in data], tuple(getattr(obj, n) for n in meta)

    def unflatten(aux, children):
        return cls(**dict(zip(data, children)), **dict(zip(meta, aux)))

    register_pytree_node(cls, flatten_fn=flatten, unflatten_fn=unflatten)
    return cls


class SavedNode(NamedTuple):
    """How a saved program writes a registered node: a stable ``name`` and the node's ``aux``
    to and from plain JSON values (see :func:`register_saved_node`, which makes one).

    Example:
        >>> from advect.pytree import SavedNode
        >>> node = SavedNode("example.Pair", tuple, encode=list, decode=tuple)
        >>> node.name, node.decode(node.encode((1, 2)))
        ('example.Pair', (1, 2))
    """

    name: str
    cls: type
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


SAVED_NODES: dict[type, SavedNode] = {}
SAVED_NODES_BY_NAME: dict[str, SavedNode] = {}


def register_saved_node(cls: type, *, name: str, encode_aux: Callable[[Any], Any],
                        decode_aux: Callable[[Any], Any]) -> None:
    """Let staged programs whose signatures hold ``cls`` nodes save and load.

    ``encode_aux(aux)`` returns plain values (None, bool, int, float, complex, str, and lists,
    tuples and str-keyed dicts of them) and ``decode_aux(value)`` rebuilds an equal ``aux``.
    A payload names the node by ``name``; loading finds it only in this registry (nothing is
    imported), so the module that registers it must be imported first.

    Raises:
        ValueError: ``cls`` is not a registered node, or ``name`` is already taken.

    Example:
        >>> class Unit:
        ...     def __init__(self, value, unit):
        ...         self.value, self.unit = value, unit
        >>> register_pytree_node(Unit, flatten_fn=lambda u: ((u.value,), u.unit),
        ...                      unflatten_fn=lambda unit, ch: Unit(ch[0], unit))
        >>> register_saved_node(Unit, name="example.Unit", encode_aux=str, decode_aux=str)
    """
    if cls not in _REGISTRY:
        raise ValueError(f"register_saved_node: register {cls.__name__} with "
                         "register_pytree_node first")
    if name in SAVED_NODES_BY_NAME or cls in SAVED_NODES:
        raise ValueError(f"register_saved_node: {name!r} or {cls.__name__} is already saved")
    SAVED_NODES[cls] = SAVED_NODES_BY_NAME[name] = SavedNode(name, cls, encode_aux, decode_aux)


class Static:
    """Metadata held in a tree's structure: never a leaf, so never traced or differentiated.

    The value is snapshotted (deep-copied) when the node is made. Two ``Static`` nodes are the
    same structure when their values are equal and of the same type (``1``, ``1.0`` and
    ``True`` differ), so ``tree_map`` and flatten/unflatten keep it, and a staged program
    compares it on each call. Make one with :func:`static`.

    Example:
        >>> s = static({"activation": "tanh"})
        >>> s.value, tree_leaves((s, 1.0))
        ({'activation': 'tanh'}, [1.0])
    """

    __slots__ = ("value",)

    def __init__(self, value: Any):
        if isinstance(value, Static):
            value = value.value
        _refuse_tracers(value)
        try:
            snapshot = copy.deepcopy(value)
        except Exception as exc:
            raise TypeError(f"static: cannot snapshot a {type(value).__name__} ({exc}); "
                            "static values must be copyable Python values") from None
        object.__setattr__(self, "value", snapshot)

    def __setattr__(self, name, value):
        raise AttributeError("Static is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Static) and same_value(self.value, other.value)

    def __hash__(self) -> int:
        return value_hash(self.value)

    def __repr__(self) -> str:
        return f"static({self.value!r})"

    def __reduce__(self):
        return Static, (self.value,)


def static(value: Any) -> Static:
    """Hold ``value`` (any copyable Python value) in the tree's structure, not as a leaf.

    Raises:
        TypeError: ``value`` is or contains an Advect tracer (a traced value is data, never
            metadata), or cannot be copied.

    Example:
        >>> leaves, treedef = tree_flatten({"x": 1.0, "mode": static("reflect")})
        >>> leaves, tree_unflatten(treedef, [2.0])["mode"].value
        ([1.0], 'reflect')
    """
    return Static(value)


def _refuse_tracers(value) -> None:
    from .core import Tracer  # core imports nothing from here; lazily, for import order

    for leaf in tree_leaves(value):
        if isinstance(leaf, Tracer):
            raise TypeError("static: the value holds a traced array, which is data and cannot "
                            "be metadata; pass it as a leaf of the tree instead")


def value_hash(value) -> int:
    """A hash consistent with :func:`same_value` (floats hash by type only: NaN equals NaN)."""
    if isinstance(value, float | complex | np.inexact):
        return hash(type(value))
    if isinstance(value, tuple):
        return hash((type(value), tuple(value_hash(v) for v in value)))
    try:
        return hash((type(value), value))
    except TypeError:
        return hash(type(value))


def same_value(a, b) -> bool:
    """Equality that tells 1, 1.0 and True apart and never raises: arrays compare whole (shape,
    dtype and entries), and floats by value and sign, NaN equal to NaN (a static ``-0.0`` or
    NaN changes what a staged program computes, so it must match exactly)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    try:
        if isinstance(a, float | complex | np.ndarray | np.generic):
            return _same_numbers(np.asarray(a), np.asarray(b))
        return bool(a == b)
    except Exception:
        return False


def _same_numbers(a: np.ndarray, b: np.ndarray) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "c":
        a, b = np.stack([a.real, a.imag]), np.stack([b.real, b.imag])
    if a.dtype.kind == "f":
        return bool(np.array_equal(a, b, equal_nan=True)
                    and np.array_equal(np.signbit(a), np.signbit(b)))
    return bool(np.all(a == b))


class TreeDef:
    """The structure of a pytree without its leaves; hashable and comparable.

    Example:
        >>> from advect.pytree import tree_flatten
        >>> leaves, treedef = tree_flatten({"a": (1.0, 2.0), "b": None})
        >>> treedef, treedef.num_leaves
        ({'a': (*, *), 'b': None}, 2)
    """

    __slots__ = ("kind", "aux", "children", "num_leaves")

    def __init__(self, kind: Any, aux: Any, children: tuple[TreeDef, ...]):
        self.kind = kind          # None for a leaf, else the node's type
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in children)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, TreeDef) and self.kind is other.kind and self.aux == other.aux
                and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.kind, self.children))

    def __repr__(self) -> str:
        if self.kind is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        if self.kind is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.children)) + "}"
        if self.kind is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.kind is list:
            return f"[{inner}]"
        if self.kind is type(None):
            return "None"
        if self.kind is Static:
            return repr(self.aux)
        return f"{self.kind.__name__}({inner})"


LEAF = TreeDef(None, None, ())
_NONE = TreeDef(type(None), None, ())


def _children(tree: Any) -> tuple[Any, Any, list[Any] | None]:
    """(kind, aux, children) of a node, children None for a leaf."""
    cls = type(tree)
    if cls is tuple or cls is list:
        return cls, None, list(tree)
    if cls is dict:
        try:
            keys = sorted(tree)
        except TypeError:
            raise TypeError(f"a dict in a pytree needs sortable keys (its leaves are ordered by "
                            f"key), got keys {list(tree)!r}; use keys of one type") from None
        return dict, tuple(keys), [tree[k] for k in keys]
    if tree is None:
        return cls, None, []
    if cls is Static:
        return cls, tree, []
    node = _resolve(cls)
    if node is not None:
        children, aux = node.flatten(tree)
        return cls, aux, list(children)
    if isinstance(tree, tuple) and hasattr(cls, "_fields"):  # namedtuple
        return cls, None, list(tree)
    return None, None, None


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Any], TreeDef]:
    """Leaves in a fixed order (dict keys sorted) and the tree's structure.

    ``is_leaf(node) -> bool`` stops the descent at the nodes it accepts.

    Example:
        >>> tree_flatten([1, {"b": 2, "a": None}])
        ([1, 2], [*, {'a': None, 'b': *}])
    """
    leaves: list[Any] = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree, leaves, is_leaf) -> TreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return LEAF
    kind, aux, children = _children(tree)
    if children is None:
        leaves.append(tree)
        return LEAF
    if kind is type(None):
        return _NONE
    return TreeDef(kind, aux, tuple(_flatten(c, leaves, is_leaf) for c in children))


def tree_structure_in_order(tree: Any) -> tuple[TreeDef, list[int]]:
    """The structure of ``tree`` with each dict keyed in its own (insertion) order, and for
    each leaf of that structure its position among :func:`tree_flatten`'s leaves (which
    follow sorted keys). A staged program returns dicts as its function built them.

    Example:
        >>> treedef, order = tree_structure_in_order({"b": 1, "a": (2, 3)})
        >>> treedef, order
        ({'b': *, 'a': (*, *)}, [2, 0, 1])
    """
    treedef = tree_flatten(tree)[1]
    order: list[int] = []
    return _in_order(tree, treedef, 0, order), order


def _in_order(tree, treedef: TreeDef, start: int, order: list[int]) -> TreeDef:
    if treedef.kind is None:
        order.append(start)
        return treedef
    if not treedef.children:
        return treedef
    subtrees = _children(tree)[2]
    starts, n = [], start
    for child in treedef.children:
        starts.append(n)
        n += child.num_leaves
    if treedef.kind is dict:
        where = {key: i for i, key in enumerate(treedef.aux)}
        visit, aux = [where[key] for key in tree], tuple(tree)
    else:
        visit, aux = range(len(subtrees)), treedef.aux
    return TreeDef(treedef.kind, aux, tuple(
        _in_order(subtrees[i], treedef.children[i], starts[i], order) for i in visit))


def tree_unflatten(treedef: TreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a tree of ``treedef``'s structure from ``leaves``.

    Raises:
        ValueError: there are too few or too many leaves.

    Example:
        >>> leaves, treedef = tree_flatten((1, [2, 3]))
        >>> tree_unflatten(treedef, ["a", "b", "c"])
        ('a', ['b', 'c'])
    """
    it = iter(leaves)
    out = _unflatten(treedef, it)
    if next(it, _SENTINEL) is not _SENTINEL:
        raise ValueError(f"too many leaves for tree structure {treedef!r}")
    return out


_SENTINEL = object()


def _unflatten(treedef: TreeDef, it) -> Any:
    kind = treedef.kind
    if kind is None:
        leaf = next(it, _SENTINEL)
        if leaf is _SENTINEL:
            raise ValueError("too few leaves for the tree structure")
        return leaf
    children = [_unflatten(c, it) for c in treedef.children]
    if kind is tuple or kind is list:
        return kind(children)
    if kind is dict:
        return dict(zip(treedef.aux, children))
    if kind is type(None):
        return None
    if kind is Static:  # a fresh snapshot: a tree rebuilt from a treedef never shares one
        return Static(treedef.aux.value)
    node = _resolve(kind)
    if node is not None:
        return node.unflatten(treedef.aux, children)
    return kind(*children)  # namedtuple


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in flattening order.

    Example:
        >>> tree_leaves({"w": [1, 2], "b": 3})
        [3, 1, 2]
    """
    return tree_flatten(tree, is_leaf)[0]


def tree_map(fn: Callable, tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """Apply ``fn`` leaf by leaf to one or more trees of the same structure.

    Example:
        >>> tree_map(lambda a, b: a + b, (1, [2]), (10, [20]))
        (11, [22])
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = [tree_flatten(r, is_leaf) for r in rest]
    for _, other_def in others:
        if other_def != treedef:
            raise TypeError(f"tree structures differ: {treedef!r} and {other_def!r}")
    return tree_unflatten(treedef, [fn(*xs) for xs in zip(leaves, *(o[0] for o in others))])


def tree_flatten_with_paths(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                            ) -> tuple[list[tuple[tuple[Any, ...], Any]], TreeDef]:
    """Like :func:`tree_flatten`, each leaf paired with its path (JAX's layout:
    ``([(path, leaf), ...], treedef)``); a path holds dict keys, and indices for the
    children of every other node.

    Example:
        >>> pairs, _ = tree_flatten_with_paths({"w": [1, 2]})
        >>> pairs, format_path(pairs[1][0])
        ([(('w', 0), 1), (('w', 1), 2)], "['w'][1]")
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    return list(zip(_paths(treedef, ()), leaves)), treedef


def _paths(treedef: TreeDef, prefix: tuple) -> list[tuple]:
    if treedef.kind is None:
        return [prefix]
    keys = treedef.aux if treedef.kind is dict else range(len(treedef.children))
    out = []
    for key, child in zip(keys, treedef.children):
        out.extend(_paths(child, (*prefix, key)))
    return out


def format_path(path: tuple[Any, ...]) -> str:
    """A leaf path as an indexing suffix: ``('p', 0)`` -> ``"['p'][0]"``.

    Example:
        >>> format_path(("p", 0))
        "['p'][0]"
    """
    return "".join(f"[{k!r}]" for k in path)


# --- namedtuple classes of saved programs --------------------------------------------------------

def is_namedtuple_class(kind: Any) -> bool:
    """A class made by ``collections.namedtuple`` or ``typing.NamedTuple``."""
    return (isinstance(kind, type) and issubclass(kind, tuple) and kind is not tuple
            and isinstance(getattr(kind, "_fields", None), tuple)
            and all(type(f) is str for f in kind._fields))


def is_identifier(name: Any) -> bool:
    """An ASCII Python identifier that is not a keyword (Unicode identifiers that differ as
    strings can be equal after NFKC normalization, "\ufb01" and "fi", which Python applies to
    attribute names)."""
    return (type(name) is str and 0 < len(name) <= 200 and name.isascii()
            and name.isidentifier() and not keyword.iskeyword(name))


def is_dotted(name: Any) -> bool:
    """A module name, or the qualified name of a module-level or nested class."""
    return (type(name) is str and 0 < len(name) <= 400
            and all(is_identifier(part) for part in name.split(".")))


@functools.lru_cache(maxsize=1024)
def namedtuple_class(name: str, fields: tuple[str, ...]) -> type:
    """A namedtuple class built from its type name and field names alone (one class per pair,
    so restored trees compare equal). It behaves as ``collections.namedtuple(name, fields)``
    but is assembled without generating or evaluating code."""
    n = len(fields)

    def __new__(cls, *args, **kwargs):
        rest = fields[len(args):]
        if len(args) > n or set(kwargs) != set(rest):
            raise TypeError(f"{name}() takes the arguments {', '.join(fields)}")
        return tuple.__new__(cls, args + tuple(kwargs[f] for f in rest))

    def _make(cls, iterable):
        return cls(*iterable)

    def __repr__(self):
        return f"{name}(" + ", ".join(f"{f}={v!r}" for f, v in zip(fields, self)) + ")"

    def _asdict(self):
        return dict(zip(fields, self))

    def _replace(self, **changes):
        return type(self)(**{**self._asdict(), **changes})

    body = {f: property(operator.itemgetter(i), doc=f"Alias for field number {i}")
            for i, f in enumerate(fields)}
    body.update(__slots__=(), _fields=fields, _field_defaults={}, __match_args__=fields,
                __new__=__new__, _make=classmethod(_make), __repr__=__repr__,
                _asdict=_asdict, _replace=_replace,
                __getnewargs__=lambda self: tuple(self), __module__=__name__,
                _advect_rebuilt=True)
    return type(name, (tuple,), body)


def defined_namedtuple(name: str, fields: tuple[str, ...], module: str,
                       qualname: str) -> type | None:
    """The namedtuple class ``module.qualname`` with this name and these fields if its module
    is already imported and defines it as a plain node, else None. It is looked up in
    namespaces only: nothing is imported, and no attribute hook runs."""
    found = sys.modules.get(module)
    for part in qualname.split("."):
        if not isinstance(found, types.ModuleType | type):
            return None
        found = vars(found).get(part)
    if (is_namedtuple_class(found) and _resolve(found) is None and found.__name__ == name
            and found._fields == fields and found.__module__ == module
            and found.__qualname__ == qualname):
        return found
    return None

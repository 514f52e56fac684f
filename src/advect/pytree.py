"""Pytrees: nested containers whose leaves are arrays.

Built-in nodes are tuple, list, dict (keys sorted), None and namedtuples; other classes opt in
with :func:`register_pytree_node` (dataclasses included).

Example:
    >>> from advect.pytree import tree_flatten, tree_unflatten
    >>> leaves, treedef = tree_flatten({"b": (1, 2), "a": [3]})
    >>> leaves
    [3, 1, 2]
    >>> tree_unflatten(treedef, [30, 10, 20])
    {'a': [30], 'b': (10, 20)}
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

__all__ = ["TreeDef", "tree_flatten", "tree_unflatten", "tree_leaves", "tree_map",
           "tree_flatten_with_paths", "register_pytree_node", "keystr"]


class _NodeType(NamedTuple):
    flatten: Callable[[Any], tuple[Iterable[Any], Any]]
    unflatten: Callable[[Any, list[Any]], Any]


_REGISTRY: dict[type, _NodeType] = {}


def register_pytree_node(cls: type, *, flatten_fn: Callable, unflatten_fn: Callable) -> None:
    """Make ``cls`` a pytree node.

    ``flatten_fn(obj) -> (children, aux)`` and ``unflatten_fn(aux, children) -> obj``; ``aux``
    must be hashable and comparable, it becomes part of the tree definition.

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
    if cls in _REGISTRY or cls in (tuple, list, dict, type(None)):
        raise ValueError(f"{cls.__name__} is already a pytree node")
    _REGISTRY[cls] = _NodeType(flatten_fn, unflatten_fn)


class TreeDef:
    """The structure of a pytree without its leaves; hashable and comparable."""

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
    node = _REGISTRY.get(cls)
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
    node = _REGISTRY.get(kind)
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
    """Like :func:`tree_flatten`, each leaf paired with its path of keys and indices.

    Example:
        >>> tree_flatten_with_paths({"w": [1, 2]})[0]
        [(('w', 0), 1), (('w', 1), 2)]
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


def keystr(path: tuple[Any, ...]) -> str:
    """A readable leaf path: ``x['w'][0]``-style suffix.

    Example:
        >>> keystr(("w", 0))
        "['w'][0]"
    """
    return "".join(f"[{k!r}]" for k in path)

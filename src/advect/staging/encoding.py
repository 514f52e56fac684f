"""The JSON forms inside a saved program: static values and attrs, literals, pytree definitions
(with the optional ``namedtuples`` table) and the specs of a call signature, each with its strict
decoder. serialize.py assembles them into the payload; docs/staging.md documents the format.
"""

from __future__ import annotations

import math

import numpy as np

from ..dtypes import STAGED_DTYPES
from ..errors import PayloadError
from ..pytree import (
    LEAF,
    SAVED_NODES,
    SAVED_NODES_BY_NAME,
    Static,
    TreeDef,
    defined_namedtuple,
    is_dotted,
    is_identifier,
    is_namedtuple_class,
    namedtuple_class,
    tree_flatten,
    tree_unflatten,
)
from .attrs import INT64, check_aval, show
from .specs import ArraySpec, StaticSpec, is_spec

__all__ = ["encode", "decode", "encode_tree", "decode_tree", "spec_tree", "decode_spec",
           "saved_order", "leaf_marker", "namedtuple_table", "namedtuple_classes",
           "saved_node_modules", "expect", "decode_shape", "decode_dtype"]

_DTYPE_NAMES = {d.name for d in STAGED_DTYPES}
_CATEGORY = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}
_WEAK_DTYPE = {"bool": "bool", "int": "int64", "float": "float64", "complex": "complex128"}


# --- values: static values, attrs, literals ------------------------------------------------------

def _too_deep(where: str) -> TypeError:  # what decode and decode_tree would refuse
    return TypeError(f"to_dict: {where} is nested more than 64 levels deep, which a saved "
                     "program cannot hold")


def encode(value, where: str, tag_tuples: bool = True, depth: int = 0):
    if depth > 64:
        raise _too_deep(where)
    if value is None or type(value) in (bool, str, int):
        return value
    if type(value) is float:
        if math.isfinite(value):
            return value
        return {"float": "-nan" if math.isnan(value) and math.copysign(1.0, value) < 0
                else repr(value)}  # repr drops a NaN's sign bit, which copysign reads
    if type(value) is complex:
        return {"complex": [encode(value.real, where, depth=depth + 1),
                            encode(value.imag, where, depth=depth + 1)]}
    if type(value) is tuple:
        items = [encode(v, where, tag_tuples, depth + 1) for v in value]
        return {"tuple": items} if tag_tuples else items
    if type(value) is list:
        return [encode(v, where, tag_tuples, depth + 1) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {"dict": [[k, encode(v, where, tag_tuples, depth + 1)]
                         for k, v in value.items()]}
    raise TypeError(f"to_dict: {where} holds a {type(value).__name__} ({value!r}), which the "
                    "saved format cannot represent; use None, bool, int, float, complex, str, "
                    "or tuples, lists and str-keyed dicts of them")


def decode(data, where: str, lists_are_tuples: bool = False, depth: int = 0):
    if depth > 64:
        raise PayloadError(f"{where}: nested too deeply")
    if data is None or type(data) in (bool, str, int, float):
        return data
    if type(data) is list:
        items = [decode(v, where, lists_are_tuples, depth + 1) for v in data]
        return tuple(items) if lists_are_tuples else items
    if type(data) is dict and len(data) == 1:
        (tag, body), = data.items()
        if tag == "float" and body in ("nan", "-nan", "inf", "-inf"):
            return float(body)
        if tag == "complex" and type(body) is list and len(body) == 2:
            re, im = (decode(v, where, depth=depth + 1) for v in body)
            if type(re) in (int, float) and type(im) in (int, float) and all(
                    type(p) is float or INT64[0] <= p <= INT64[1] for p in (re, im)):
                return complex(re, im)
        if tag == "tuple" and type(body) is list:
            return tuple(decode(v, where, lists_are_tuples, depth + 1) for v in body)
        if tag == "dict" and type(body) is list and all(
                type(p) is list and len(p) == 2 and type(p[0]) is str for p in body):
            return {k: decode(v, where, lists_are_tuples, depth + 1) for k, v in body}
    raise PayloadError(f"{where}: {show(data)} is not a valid encoded value")


# --- trees of specs -------------------------------------------------------------------------------

def encode_tree(treedef: TreeDef, leaves: list, encode_leaf, where: str, depth: int = 0):
    if depth > 64:
        raise _too_deep(where)
    kind = treedef.kind
    if kind is None:
        return encode_leaf(leaves.pop(0))
    children = [encode_tree(c, leaves, encode_leaf, where, depth + 1)
                for c in treedef.children]
    if kind is tuple or kind is list:
        return {kind.__name__: children}
    if kind is dict:
        keys = list(treedef.aux)
        if not all(type(k) in (str, int) for k in keys):
            raise TypeError(f"to_dict: {where} has dict keys {keys}; only str and int keys "
                            "can be saved")
        return {"dict": [[k, c] for k, c in zip(keys, children)]}
    if kind is type(None):
        return {"none": None}
    if is_namedtuple_class(kind):
        if not (is_identifier(kind.__name__) and all(is_identifier(f) for f in kind._fields)):
            raise TypeError(f"to_dict: {where} holds the namedtuple {kind.__name__!r} with "
                            f"fields {kind._fields}; saved programs hold namedtuples whose type "
                            "and field names are ASCII identifiers")
        return {"namedtuple": {"name": kind.__name__, "fields": list(kind._fields),
                               "items": children}}
    if kind is Static:
        return {"static_node": encode(treedef.aux.value, f"{where}: a static(...) value",
                                       depth=depth + 1)}
    saved = SAVED_NODES.get(kind)
    if saved is not None:
        return {"node": {"name": saved.name, "items": children,
                         "aux": encode(saved.encode(treedef.aux), f"{where}: {saved.name}",
                                        depth=depth + 1)}}
    raise TypeError(f"to_dict: {where} contains a {kind.__name__} container; saved programs "
                    "hold only tuples, lists, dicts, namedtuples, None, static(...) values and "
                    "nodes registered with advect.pytree.register_saved_node")


def _saved_node(body, decode_leaf, where: str, depth: int, classes: dict):
    """A registered node, found by name in the registry only (nothing is imported)."""
    if type(body) is not dict or set(body) != {"name", "items", "aux"}:
        raise PayloadError(f"{where}: a registered node is {{'name': str, 'items': [tree, ...], "
                           "'aux': value}")
    saved = SAVED_NODES_BY_NAME.get(body["name"]) if type(body["name"]) is str else None
    if saved is None:
        raise PayloadError(f"{where}: the payload holds a {str(body['name'])[:80]!r} node, which "
                           "no imported module registers; import the module that does (such "
                           "as advect.xarray) before loading")
    items = [decode_tree(c, decode_leaf, f"{where}[{i}]", depth + 1, classes)
             for i, c in enumerate(expect(body["items"], list, f"{where}.items"))]
    try:
        aux = saved.decode(decode(body["aux"], f"{where}.aux", depth=depth + 1))
        return tree_unflatten(TreeDef(saved.cls, aux, (LEAF,) * len(items)), items)
    except PayloadError:
        raise
    except Exception as exc:
        raise PayloadError(f"{where}: invalid {saved.name} node ({exc})") from None


def _namedtuple_node(body, decode_leaf, where: str, depth: int, classes: dict):
    if type(body) is not dict or set(body) != {"name", "fields", "items"}:
        raise PayloadError(f"{where}: a namedtuple node is {{'name': str, 'fields': [str, ...], "
                           "'items': [tree, ...]}")
    name, fields, items = body["name"], body["fields"], body["items"]
    if not is_identifier(name):
        raise PayloadError(f"{where}.name: {show(name)} is not a Python identifier")
    expect(fields, list, f"{where}.fields")
    expect(items, list, f"{where}.items")
    if len(fields) > 256 or not all(is_identifier(f) and not f.startswith("_") for f in fields):
        raise PayloadError(f"{where}.fields: expected up to 256 identifiers not starting with "
                           f"'_', got {show(fields)}")
    if len(set(fields)) != len(fields) or len(items) != len(fields):
        raise PayloadError(f"{where}: a namedtuple needs distinct field names, one per item")
    children = [decode_tree(c, decode_leaf, f"{where}.{f}", depth + 1, classes)
                for f, c in zip(fields, items)]
    cls = classes.get((name, tuple(fields))) or namedtuple_class(name, tuple(fields))
    return cls(*children)


# --- namedtuple classes: the optional "namedtuples" table ----------------------------------------
# [[name, [field, ...], module, qualname], ...] for the namedtuple classes a program's trees hold
# whose module and qualified name are dotted identifiers. Loading gives back the class itself
# where its module is already imported and defines it there with the same name and fields
# (looked up in namespaces only: nothing is imported, no attribute hook runs); otherwise, and
# for payloads without the table, a class rebuilt from the name and fields.

def namedtuple_table(treedefs: list[TreeDef]) -> list:
    found: dict[tuple, set] = {}
    stack = list(treedefs)
    while stack:
        treedef = stack.pop()
        stack.extend(treedef.children)
        kind = treedef.kind
        if is_namedtuple_class(kind) and not getattr(kind, "_advect_rebuilt", False):
            found.setdefault((kind.__name__, kind._fields), set()).add(
                (kind.__module__, kind.__qualname__))
    return [[name, list(fields), module, qualname]
            for (name, fields), places in sorted(found.items())
            for module, qualname in places
            if len(places) == 1 and is_dotted(module) and is_dotted(qualname)]


def saved_node_modules(treedefs: list[TreeDef]) -> set[str]:
    """The modules that registered the saved nodes the trees hold (``advect.xarray``), for
    unpickling to import before loading (as pickle would import the classes themselves)."""
    found, stack = set(), list(treedefs)
    while stack:
        treedef = stack.pop()
        stack.extend(treedef.children)
        saved = SAVED_NODES.get(treedef.kind)
        module = getattr(saved.encode, "__module__", None) if saved is not None else None
        if is_dotted(module):
            found.add(module)
    return found


def namedtuple_classes(table) -> dict:
    """``(name, fields) -> class`` for the table's classes that are defined in this process."""
    expect(table, list, "namedtuples")
    classes = {}
    for k, entry in enumerate(table):
        if not (type(entry) is list and len(entry) == 4 and is_identifier(entry[0])
                and type(entry[1]) is list and len(entry[1]) <= 256
                and all(is_identifier(f) for f in entry[1])
                and is_dotted(entry[2]) and is_dotted(entry[3])):
            raise PayloadError(f"namedtuples[{k}]: expected [name, [field, ...], module, "
                               f"qualname] of identifiers, got {show(entry)}")
        cls = defined_namedtuple(entry[0], tuple(entry[1]), entry[2], entry[3])
        if cls is not None:
            classes[entry[0], tuple(entry[1])] = cls
    return classes


def _encode_spec(spec):
    if isinstance(spec, StaticSpec):
        return {"static": encode(spec.value, "a static value")}
    out = {"shape": list(spec.shape), "dtype": spec.dtype.name}
    if spec.weak:
        out = {"weak": _CATEGORY[spec.dtype.kind]}
    if spec.numpy_scalar:  # a NumPy scalar's slot: the results get its eager types
        out["numpy_scalar"] = True
    if spec.device is not None:  # a provider's device object is saved as its name
        device = spec.device
        out["device"] = device if type(device) in (str, int) else str(device)
    return out


def spec_tree(tree) -> dict:
    leaves, treedef = tree_flatten(tree, is_leaf=is_spec)
    return encode_tree(treedef, list(leaves), _encode_spec, "the signature")


def decode_tree(data, decode_leaf, where: str, depth: int = 0, classes: dict | None = None):
    classes = {} if classes is None else classes
    if depth > 64:
        raise PayloadError(f"{where}: nested too deeply")
    if type(data) is not dict or not data:
        raise PayloadError(f"{where}: expected an object, got {show(data)}")
    if len(data) == 1:
        (tag, body), = data.items()
        if tag in ("tuple", "list"):
            expect(body, list, where)
            items = [decode_tree(c, decode_leaf, f"{where}[{i}]", depth + 1, classes)
                     for i, c in enumerate(body)]
            return tuple(items) if tag == "tuple" else items
        if tag == "dict":
            expect(body, list, where)
            out = {}
            for pair in body:
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) not in (str, int):
                    raise PayloadError(f"{where}: dict entries must be [key, tree] pairs")
                if pair[0] in out or (out and type(pair[0]) is not type(next(iter(out)))):
                    raise PayloadError(f"{where}: dict keys must be distinct and all str or "
                                       f"all int (a pytree sorts them); {show(pair[0])} is not")
                out[pair[0]] = decode_tree(pair[1], decode_leaf, f"{where}[{pair[0]!r}]",
                                            depth + 1, classes)
            return out
        if tag == "none" and body is None:
            return None
        if tag == "namedtuple":
            return _namedtuple_node(body, decode_leaf, where, depth, classes)
        if tag == "static_node":
            return Static(decode(body, where, depth=depth + 1))
        if tag == "node":
            return _saved_node(body, decode_leaf, where, depth, classes)
    return decode_leaf(data, where)


def saved_order(tree) -> TreeDef:
    """The structure of a decoded output tree with each dict keyed in its saved order (a
    derived program returns named gradients in ``argnames`` order, not sorted)."""
    if type(tree) is dict:
        return TreeDef(dict, tuple(tree), tuple(saved_order(v) for v in tree.values()))
    children, node = tree_flatten(tree, is_leaf=lambda v: v is not tree)
    if node.kind is None:
        return LEAF
    return TreeDef(node.kind, node.aux, tuple(saved_order(c) for c in children))


def decode_spec(data: dict, where: str):
    if set(data) == {"static"}:
        return StaticSpec(decode(data["static"], where))
    if "weak" in data:
        if set(data) - {"weak", "device"} or type(data["weak"]) is not str or (
                data["weak"] not in _WEAK_DTYPE):
            raise PayloadError(f"{where}: a weak scalar spec is {{'weak': 'bool'|'int'|'float'|"
                               "'complex'}")
        return ArraySpec((), _WEAK_DTYPE[data["weak"]], weak=True,
                         device=_device(data.get("device"), where))
    if set(data) - {"shape", "dtype", "device", "numpy_scalar"} or not {"shape", "dtype"} <= set(
            data):
        raise PayloadError(f"{where}: an array spec has exactly 'shape', 'dtype' and optionally "
                           f"'device' and 'numpy_scalar', got keys {sorted(data)}")
    scalar = data.get("numpy_scalar", False)
    shape = decode_shape(data["shape"], where)
    if type(scalar) is not bool or scalar and shape != ():
        raise PayloadError(f"{where}.numpy_scalar: expected true (for shape []) or false, got "
                           f"{show(scalar)}")
    spec = ArraySpec(shape, decode_dtype(data["dtype"], where),
                     device=_device(data.get("device"), where), numpy_scalar=scalar)
    check_aval(spec.aval, where)
    return spec


def _device(data, where: str):
    if data is None or (type(data) is str and len(data) <= 200) or type(data) is int:
        return data
    raise PayloadError(f"{where}.device: expected a device name (a string), got "
                       f"{show(data)}")


def leaf_marker(data, where):
    if data != {"leaf": None}:
        raise PayloadError(f"{where}: expected an output leaf {{'leaf': null}}")
    return 0


def expect(value, kind, where: str):
    if type(value) is not kind:
        raise PayloadError(f"{where}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def decode_shape(data, where: str) -> tuple[int, ...]:
    expect(data, list, f"{where}.shape")
    if len(data) > 64 or not all(type(n) is int and 0 <= n < 1 << 62 for n in data):
        raise PayloadError(f"{where}.shape: expected up to 64 non-negative ints, got "
                           f"{show(data)}")
    return tuple(data)


def decode_dtype(name, where: str) -> np.dtype:
    if type(name) is not str or name not in _DTYPE_NAMES:
        raise PayloadError(f"{where}.dtype: {show(name)} is not a staged dtype")
    return np.dtype(name)

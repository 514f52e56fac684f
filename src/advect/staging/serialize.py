"""Saving and loading staged programs as plain JSON types (schema version 3).

The payload is a call envelope (signature spec trees with weak-scalar categories, static values,
output structure, Array API revision) around a flat graph (op names, attrs, constants as dtype,
shape and base64 little-endian bytes, outputs). Value ids are implicit: the signature's array
leaves are 0..n-1, then the constants in order, then each node's outputs in order, so a node
can only refer to values defined before it. An optional ``namedtuples`` table names the module
and qualified name of each namedtuple class in the trees, so that loading gives back the class
itself where an imported module defines it. Output dicts keep the order the function built them.
Loading validates every field, resolves op names only through ``advect.core.REGISTRY``, checks
constant sizes before allocating, and never imports, evaluates or unpickles anything.
docs/staging.md documents the format.
"""

from __future__ import annotations

import base64
import math
import time

import numpy as np

from ..core import REGISTRY
from ..dtypes import STAGED_DTYPES, Aval, aval_of
from ..errors import PayloadError, SchemaVersionError, UnregisteredOpError
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
from .attrs import INT64, MAX_BYTES, check_aval, check_node, show
from .graph import Graph, Literal, Node, validate
from .passes import OptimizationReport, PassReport
from .specs import PYTHON_SCALAR, SUPPORTED_API_VERSIONS, ArraySpec, StaticSpec, is_spec

__all__ = ["FORMAT", "SCHEMA_VERSION", "to_dict", "from_dict", "SchemaVersionError",
           "UnregisteredOpError"]

FORMAT = "advect.staged_program"
SCHEMA_VERSION = 3
MAX_CONSTANT_BYTES = MAX_BYTES
_TOP_KEYS = {"format", "schema_version", "advect_version", "array_api_version", "name",
             "signature", "outputs", "graph", "optimization"}
_OPTIONAL_KEYS = {"namedtuples"}  # additive: a payload without them loads as before
_DTYPE_NAMES = {d.name for d in STAGED_DTYPES}
_CATEGORY = {"b": "bool", "i": "int", "u": "int", "f": "float", "c": "complex"}
_WEAK_DTYPE = {"bool": "bool", "int": "int64", "float": "float64", "complex": "complex128"}


def _version() -> str:
    from .. import __version__
    return __version__


# --- values: static values, attrs, literals ------------------------------------------------------

def _too_deep(where: str) -> TypeError:  # what _decode and _decode_tree would refuse
    return TypeError(f"to_dict: {where} is nested more than 64 levels deep, which a saved "
                     "program cannot hold")


def _encode(value, where: str, tag_tuples: bool = True, depth: int = 0):
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
        return {"complex": [_encode(value.real, where, depth=depth + 1),
                            _encode(value.imag, where, depth=depth + 1)]}
    if type(value) is tuple:
        items = [_encode(v, where, tag_tuples, depth + 1) for v in value]
        return {"tuple": items} if tag_tuples else items
    if type(value) is list:
        return [_encode(v, where, tag_tuples, depth + 1) for v in value]
    if type(value) is dict and all(type(k) is str for k in value):
        return {"dict": [[k, _encode(v, where, tag_tuples, depth + 1)]
                         for k, v in value.items()]}
    raise TypeError(f"to_dict: {where} holds a {type(value).__name__} ({value!r}), which the "
                    "saved format cannot represent; use None, bool, int, float, complex, str, "
                    "or tuples, lists and str-keyed dicts of them")


def _decode(data, where: str, lists_are_tuples: bool = False, depth: int = 0):
    if depth > 64:
        raise PayloadError(f"{where}: nested too deeply")
    if data is None or type(data) in (bool, str, int, float):
        return data
    if type(data) is list:
        items = [_decode(v, where, lists_are_tuples, depth + 1) for v in data]
        return tuple(items) if lists_are_tuples else items
    if type(data) is dict and len(data) == 1:
        (tag, body), = data.items()
        if tag == "float" and body in ("nan", "-nan", "inf", "-inf"):
            return float(body)
        if tag == "complex" and type(body) is list and len(body) == 2:
            re, im = (_decode(v, where, depth=depth + 1) for v in body)
            if type(re) in (int, float) and type(im) in (int, float) and all(
                    type(p) is float or INT64[0] <= p <= INT64[1] for p in (re, im)):
                return complex(re, im)
        if tag == "tuple" and type(body) is list:
            return tuple(_decode(v, where, lists_are_tuples, depth + 1) for v in body)
        if tag == "dict" and type(body) is list and all(
                type(p) is list and len(p) == 2 and type(p[0]) is str for p in body):
            return {k: _decode(v, where, lists_are_tuples, depth + 1) for k, v in body}
    raise PayloadError(f"{where}: {show(data)} is not a valid encoded value")


# --- trees of specs -------------------------------------------------------------------------------

def _encode_tree(treedef: TreeDef, leaves: list, encode_leaf, where: str, depth: int = 0):
    if depth > 64:
        raise _too_deep(where)
    kind = treedef.kind
    if kind is None:
        return encode_leaf(leaves.pop(0))
    children = [_encode_tree(c, leaves, encode_leaf, where, depth + 1)
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
        return {"static_node": _encode(treedef.aux.value, f"{where}: a static(...) value",
                                       depth=depth + 1)}
    saved = SAVED_NODES.get(kind)
    if saved is not None:
        return {"node": {"name": saved.name, "items": children,
                         "aux": _encode(saved.encode(treedef.aux), f"{where}: {saved.name}",
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
    items = [_decode_tree(c, decode_leaf, f"{where}[{i}]", depth + 1, classes)
             for i, c in enumerate(_expect(body["items"], list, f"{where}.items"))]
    try:
        aux = saved.decode(_decode(body["aux"], f"{where}.aux", depth=depth + 1))
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
    _expect(fields, list, f"{where}.fields")
    _expect(items, list, f"{where}.items")
    if len(fields) > 256 or not all(is_identifier(f) and not f.startswith("_") for f in fields):
        raise PayloadError(f"{where}.fields: expected up to 256 identifiers not starting with "
                           f"'_', got {show(fields)}")
    if len(set(fields)) != len(fields) or len(items) != len(fields):
        raise PayloadError(f"{where}: a namedtuple needs distinct field names, one per item")
    children = [_decode_tree(c, decode_leaf, f"{where}.{f}", depth + 1, classes)
                for f, c in zip(fields, items)]
    cls = classes.get((name, tuple(fields))) or namedtuple_class(name, tuple(fields))
    return cls(*children)


# --- namedtuple classes: the optional "namedtuples" table ----------------------------------------
# [[name, [field, ...], module, qualname], ...] for the namedtuple classes a program's trees hold
# whose module and qualified name are dotted identifiers. Loading gives back the class itself
# where its module is already imported and defines it there with the same name and fields
# (looked up in namespaces only: nothing is imported, no attribute hook runs); otherwise, and
# for payloads without the table, a class rebuilt from the name and fields.

def _namedtuple_table(treedefs: list[TreeDef]) -> list:
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


def _namedtuple_classes(table) -> dict:
    """``(name, fields) -> class`` for the table's classes that are defined in this process."""
    _expect(table, list, "namedtuples")
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
        return {"static": _encode(spec.value, "a static value")}
    out = {"shape": list(spec.shape), "dtype": spec.dtype.name}
    if spec.weak:
        out = {"weak": _CATEGORY[spec.dtype.kind]}
    if spec.numpy_scalar:  # a NumPy scalar's slot: the results get its eager types
        out["numpy_scalar"] = True
    if spec.device is not None:  # a provider's device object is saved as its name
        device = spec.device
        out["device"] = device if type(device) in (str, int) else str(device)
    return out


def _spec_tree(tree) -> dict:
    leaves, treedef = tree_flatten(tree, is_leaf=is_spec)
    return _encode_tree(treedef, list(leaves), _encode_spec, "the signature")


def _decode_tree(data, decode_leaf, where: str, depth: int = 0, classes: dict | None = None):
    classes = {} if classes is None else classes
    if depth > 64:
        raise PayloadError(f"{where}: nested too deeply")
    if type(data) is not dict or not data:
        raise PayloadError(f"{where}: expected an object, got {show(data)}")
    if len(data) == 1:
        (tag, body), = data.items()
        if tag in ("tuple", "list"):
            _expect(body, list, where)
            items = [_decode_tree(c, decode_leaf, f"{where}[{i}]", depth + 1, classes)
                     for i, c in enumerate(body)]
            return tuple(items) if tag == "tuple" else items
        if tag == "dict":
            _expect(body, list, where)
            out = {}
            for pair in body:
                if type(pair) is not list or len(pair) != 2 or type(pair[0]) not in (str, int):
                    raise PayloadError(f"{where}: dict entries must be [key, tree] pairs")
                if pair[0] in out or (out and type(pair[0]) is not type(next(iter(out)))):
                    raise PayloadError(f"{where}: dict keys must be distinct and all str or "
                                       f"all int (a pytree sorts them); {show(pair[0])} is not")
                out[pair[0]] = _decode_tree(pair[1], decode_leaf, f"{where}[{pair[0]!r}]",
                                            depth + 1, classes)
            return out
        if tag == "none" and body is None:
            return None
        if tag == "namedtuple":
            return _namedtuple_node(body, decode_leaf, where, depth, classes)
        if tag == "static_node":
            return Static(_decode(body, where, depth=depth + 1))
        if tag == "node":
            return _saved_node(body, decode_leaf, where, depth, classes)
    return decode_leaf(data, where)


def _saved_order(tree) -> TreeDef:
    """The structure of a decoded output tree with each dict keyed in its saved order (a
    derived program returns named gradients in ``argnames`` order, not sorted)."""
    if type(tree) is dict:
        return TreeDef(dict, tuple(tree), tuple(_saved_order(v) for v in tree.values()))
    children, node = tree_flatten(tree, is_leaf=lambda v: v is not tree)
    if node.kind is None:
        return LEAF
    return TreeDef(node.kind, node.aux, tuple(_saved_order(c) for c in children))


def _decode_spec(data: dict, where: str):
    if set(data) == {"static"}:
        return StaticSpec(_decode(data["static"], where))
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
    shape = _shape(data["shape"], where)
    if type(scalar) is not bool or scalar and shape != ():
        raise PayloadError(f"{where}.numpy_scalar: expected true (for shape []) or false, got "
                           f"{show(scalar)}")
    spec = ArraySpec(shape, _dtype(data["dtype"], where),
                     device=_device(data.get("device"), where), numpy_scalar=scalar)
    check_aval(spec.aval, where)
    return spec


def _device(data, where: str):
    if data is None or (type(data) is str and len(data) <= 200) or type(data) is int:
        return data
    raise PayloadError(f"{where}.device: expected a device name (a string), got "
                       f"{show(data)}")


def _leaf_marker(data, where):
    if data != {"leaf": None}:
        raise PayloadError(f"{where}: expected an output leaf {{'leaf': null}}")
    return 0


def _expect(value, kind, where: str):
    if type(value) is not kind:
        raise PayloadError(f"{where}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _shape(data, where: str) -> tuple[int, ...]:
    _expect(data, list, f"{where}.shape")
    if len(data) > 64 or not all(type(n) is int and 0 <= n < 1 << 62 for n in data):
        raise PayloadError(f"{where}.shape: expected up to 64 non-negative ints, got "
                           f"{show(data)}")
    return tuple(data)


def _dtype(name, where: str) -> np.dtype:
    if type(name) is not str or name not in _DTYPE_NAMES:
        raise PayloadError(f"{where}.dtype: {show(name)} is not a staged dtype")
    return np.dtype(name)


# --- saving ---------------------------------------------------------------------------------------

def _operand(x, ids: dict):
    if type(x) is Literal:
        return {type(x.value).__name__: _encode(x.value, "a literal")}
    return ids[x]


def to_dict(program) -> dict:
    """The program as plain JSON types: deterministic, so equal programs give equal bytes."""
    graph: Graph = program._graph
    ids: dict[int, int] = {v: i for i, v in enumerate(graph.inputs)}
    constants = []
    for vid in sorted(graph.constants):
        const = graph.constants[vid]
        ids[vid] = len(ids)
        data = np.ascontiguousarray(const, dtype=const.dtype.newbyteorder("<")).tobytes()
        constants.append({"dtype": const.dtype.name, "shape": list(const.shape),
                          "data": base64.b64encode(data).decode("ascii"),
                          "origin": graph.origins.get(vid, "captured")})
    nodes = []
    for node in graph.nodes:
        entry = [node.op.name, [_operand(x, ids) for x in node.inputs]]
        if node.attrs:
            entry.append({k: _encode(v, f"attr {k!r} of {node.op.name}", tag_tuples=False)
                          for k, v in node.attrs.items()})
        nodes.append(entry)
        for v in node.outputs:
            ids[v] = len(ids)
    pos, kw = program._pos_specs, program._kw_specs
    report = program._report
    payload = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "advect_version": _version(),
        "array_api_version": program._version,
        "name": program._name,
        "signature": {"positional": [_spec_tree(t) for t in pos],
                      "keyword": {k: _spec_tree(t) for k, t in kw.items()}},
        "outputs": {"tree": _encode_tree(program._out_def, [None] * program._out_def.num_leaves,
                                         lambda _: {"leaf": None}, "the outputs"),
                    "python": list(program._out_python)},
        "graph": {"constants": constants, "nodes": nodes,
                  "outputs": [_operand(x, ids) for x in graph.outputs]},
        "optimization": [report.nodes_before, report.nodes_after,
                         [list(p) for p in report.passes]],
    }
    if any(k is not None for k in program._out_scalars):  # additive: absent when all null
        payload["outputs"]["numpy_scalar"] = list(program._out_scalars)
    table = _namedtuple_table([program._in_def, program._out_def])
    if table:
        payload["namedtuples"] = table
    return payload


# --- loading --------------------------------------------------------------------------------------

def from_dict(payload) -> object:
    """Validate ``payload`` field by field and rebuild the program (see :func:`to_dict`)."""
    from .program import StagedProgram

    start = time.perf_counter()
    _check_envelope(payload)
    sig = _expect(payload["signature"], dict, "signature")
    if set(sig) != {"positional", "keyword"}:
        raise PayloadError("signature: expected keys 'positional' and 'keyword'")
    classes = _namedtuple_classes(payload.get("namedtuples", []))
    pos = tuple(_decode_tree(t, _decode_spec, f"signature.positional[{i}]", 0, classes)
                for i, t in enumerate(_expect(sig["positional"], list, "signature.positional")))
    kw = {}
    for name, tree in _expect(sig["keyword"], dict, "signature.keyword").items():
        kw[name] = _decode_tree(tree, _decode_spec, f"signature.keyword[{name!r}]", 0, classes)
    specs, in_def = tree_flatten((pos, kw), is_leaf=is_spec)
    outputs = _expect(payload["outputs"], dict, "outputs")
    if set(outputs) - {"numpy_scalar"} != {"tree", "python"}:
        raise PayloadError("outputs: expected keys 'tree' and 'python' (and optionally "
                           "'numpy_scalar')")
    out_tree = _decode_tree(outputs["tree"], _leaf_marker, "outputs.tree", 0, classes)
    out_def = _saved_order(out_tree)
    python = _expect(outputs["python"], list, "outputs.python")
    if len(python) != out_def.num_leaves or not all(type(p) is bool for p in python):
        raise PayloadError(f"outputs.python: expected {out_def.num_leaves} booleans")
    graph = _graph([s.aval for s in specs if isinstance(s, ArraySpec)],
                   _expect(payload["graph"], dict, "graph"))
    if len(graph.outputs) != out_def.num_leaves:
        raise PayloadError(f"graph.outputs: {len(graph.outputs)} outputs for an output tree "
                           f"of {out_def.num_leaves} leaves")
    for k, (x, p) in enumerate(zip(graph.outputs, python)):
        aval = aval_of(x.value) if type(x) is Literal else graph.avals[x]
        if p and (aval.shape != () or aval.dtype.kind not in PYTHON_SCALAR):
            raise PayloadError(f"outputs.python[{k}]: a Python-scalar output must be rank 0")
        if aval.weak and not p:
            raise PayloadError(f"outputs.python[{k}]: output {k} is a Python scalar (a weak "
                               "value), so its flag must be true")
    scalars = _numpy_scalars(outputs, graph, python)
    report = _report(payload["optimization"])
    name = _expect(payload["name"], str, "name")
    return StagedProgram(graph=graph, in_def=in_def, specs=specs, out_def=out_def,
                         out_python=python, version=payload["array_api_version"],
                         report=report, seconds=time.perf_counter() - start, name=name[:200],
                         xp=None, out_scalars=scalars)


def _numpy_scalars(outputs: dict, graph, python: list) -> list | None:
    """``outputs.numpy_scalar``: per output true (a NumPy scalar), false (a 0-d ndarray) or
    null (as computed); only rank-0 outputs that are not Python scalars may be true or false.
    Absent (payloads saved before it, or without such outputs): None, every output as
    computed."""
    if "numpy_scalar" not in outputs:
        return None
    scalars = _expect(outputs["numpy_scalar"], list, "outputs.numpy_scalar")
    if len(scalars) != len(python) or not all(k is None or type(k) is bool for k in scalars):
        raise PayloadError(f"outputs.numpy_scalar: expected {len(python)} entries, each "
                           "true, false or null")
    for k, (x, p, scalar) in enumerate(zip(graph.outputs, python, scalars)):
        aval = aval_of(x.value) if type(x) is Literal else graph.avals[x]
        if scalar is not None and (p or aval.shape != ()):
            raise PayloadError(f"outputs.numpy_scalar[{k}]: only a rank-0 output that is not "
                               "a Python scalar is a NumPy scalar or a 0-d array; expected null")
    return scalars


def _check_envelope(payload) -> None:
    if type(payload) is not dict:
        raise PayloadError(f"payload: expected a dict from to_dict(), got "
                           f"{type(payload).__name__}")
    if payload.get("format") != FORMAT:
        raise PayloadError(f"format: expected {FORMAT!r}, got {show(payload.get('format'))}")
    version = payload.get("schema_version")
    if version != SCHEMA_VERSION or type(version) is not int:
        raise SchemaVersionError(
            f"schema_version: this Advect reads saved-program schema version {SCHEMA_VERSION}, "
            f"the payload has {show(version)}. Stage the program again from its original "
            "callable and signature and save it with this release; editing the version number "
            "is not enough (version 3 changed the meaning of weak-scalar metadata)")
    if set(payload) - _OPTIONAL_KEYS != _TOP_KEYS:
        raise PayloadError(f"payload: unexpected or missing fields "
                           f"{sorted((set(payload) - _OPTIONAL_KEYS) ^ _TOP_KEYS)}")
    if payload["advect_version"] != _version():
        raise PayloadError(f"advect_version: the payload was saved by Advect "
                           f"{show(payload['advect_version'])}, this is {_version()}; save "
                           "and load with the same version (stage again to migrate)")
    if payload["array_api_version"] not in SUPPORTED_API_VERSIONS:
        raise PayloadError(f"array_api_version: {show(payload['array_api_version'])} is "
                           f"not one of {', '.join(SUPPORTED_API_VERSIONS)}")


def _graph(in_avals: list, data: dict) -> Graph:
    if set(data) != {"constants", "nodes", "outputs"}:
        raise PayloadError("graph: expected keys 'constants', 'nodes' and 'outputs'")
    graph = Graph()
    for aval in in_avals:
        graph.inputs.append(graph.new_value(aval))
    for i, const in enumerate(_expect(data["constants"], list, "graph.constants")):
        graph.add_constant(*_constant(const, f"graph.constants[{i}]"))
    for k, entry in enumerate(_expect(data["nodes"], list, "graph.nodes")):
        graph.nodes.append(_node(graph, entry, f"graph.nodes[{k}]"))
    graph.outputs = [_load_operand(graph, x, f"graph.outputs[{i}]", wide=True)  # 2**70 too
                     for i, x in enumerate(_expect(data["outputs"], list, "graph.outputs"))]
    validate(graph, PayloadError)
    return graph


def _constant(data, where: str):
    _expect(data, dict, where)
    if set(data) != {"dtype", "shape", "data", "origin"}:
        raise PayloadError(f"{where}: expected keys dtype, shape, data, origin")
    dtype = _dtype(data["dtype"], where)
    shape = _shape(data["shape"], where)
    count = 1
    for n in shape:
        count *= n
        if count * dtype.itemsize > MAX_CONSTANT_BYTES:
            raise PayloadError(f"{where}: shape {shape} is too large for a saved constant")
    nbytes = count * dtype.itemsize
    text = _expect(data["data"], str, f"{where}.data")
    if len(text) != 4 * ((nbytes + 2) // 3):  # checked before anything is allocated
        raise PayloadError(f"{where}.data: {len(text)} base64 characters cannot hold the "
                           f"{nbytes} bytes of a {dtype.name}{list(shape)} constant")
    try:
        raw = base64.b64decode(text, validate=True)
    except ValueError:
        raise PayloadError(f"{where}.data: not valid base64") from None
    if len(raw) != nbytes:
        raise PayloadError(f"{where}.data: {len(raw)} bytes, expected {nbytes}")
    array = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).reshape(shape)
    array = array.astype(dtype)  # a copy in native order: '<f4' equals float32 but shows as '<f4'
    array.setflags(write=False)
    origin = data["origin"]
    if origin not in ("captured", "folded"):
        raise PayloadError(f"{where}.origin: expected 'captured' or 'folded'")
    return array, origin


def _load_operand(graph: Graph, x, where: str, wide: bool = False):
    # wide: an int literal may lie beyond int64: a node's operand (``x * 2**70``, with x a
    # float array; see _wide_literals) or an output (a Python int returned as it is)
    if type(x) is int:
        if not 0 <= x < len(graph.avals):
            raise PayloadError(f"{where}: value {x} is not defined before its use")
        return x
    if type(x) is dict and len(x) == 1:
        (kind, body), = x.items()
        value = _decode(body, where)
        if kind in ("bool", "int", "float", "complex") and type(value).__name__ == kind and (
                kind != "int" or INT64[0] <= value <= INT64[1]
                or (wide and value.bit_length() <= 1024)):
            return Literal(value)
    raise PayloadError(f"{where}: expected a value id or a literal like {{'float': 2.0}}, got "
                       f"{show(x)}")


def _node(graph: Graph, entry, where: str) -> Node:
    if type(entry) is not list or len(entry) not in (2, 3):
        raise PayloadError(f"{where}: expected [op, inputs] or [op, inputs, attrs]")
    name = entry[0]
    if type(name) is not str:
        raise PayloadError(f"{where}: the op name must be a string")
    op = REGISTRY.get(name)
    if op is None:
        raise UnregisteredOpError(
            f"{where}: operation {name[:80]!r} is not registered; import or register the "
            "custom primitive of that name (with a matching implementation) before loading")
    inputs = tuple(_load_operand(graph, x, f"{where}.inputs[{i}]", wide=True)
                   for i, x in enumerate(_expect(entry[1], list, f"{where}.inputs")))
    attrs = entry[2] if len(entry) == 3 else {}
    _expect(attrs, dict, f"{where}.attrs")
    unknown = set(attrs) - set(op.attrs)
    if unknown:
        raise PayloadError(f"{where}: {name} takes no attrs {show(list(unknown))}")
    attrs = {k: _decode(v, f"{where}.attrs.{k}", lists_are_tuples=True)
             for k, v in attrs.items()}
    avals = [aval_of(x.value) if type(x) is Literal else graph.avals[x] for x in inputs]
    check_node(op, avals, [type(x) is Literal for x in inputs], attrs, where)
    try:
        out = op.abstract(*avals, **attrs)
    except Exception as exc:  # a rule's own error, whatever its kind, means a bad payload
        raise PayloadError(f"{where}: {name} rejects its operands: {str(exc)[:200]}") from None
    outs = out if op.multiple_results else (out,)
    if type(outs) is not tuple or not all(isinstance(a, Aval) for a in outs):
        raise PayloadError(f"{where}: {name} has no valid abstract value for these operands")
    _wide_literals(inputs, avals, outs, where)
    for i, aval in enumerate(outs):
        check_aval(aval, f"{where}: output {i} of {name}")
    return Node(op, inputs, attrs, tuple(graph.new_value(a) for a in outs))


def _wide_literals(inputs: tuple, avals: list, outs: tuple, where: str) -> None:
    """An int literal beyond int64 is one NumPy converts to a float: only in a node whose
    outputs, or whose array operands, are all floating-point or complex."""
    if not any(type(x) is Literal and type(x.value) is int and not INT64[0] <= x.value <= INT64[1]
               for x in inputs):
        return
    arrays = [a.dtype.kind for x, a in zip(inputs, avals) if type(x) is not Literal]
    if not (all(a.dtype.kind in "fc" for a in outs) or all(k in "fc" for k in arrays)):
        raise PayloadError(f"{where}: an int literal beyond int64 fits only an operation on "
                           "floating-point or complex arrays")


def _report(data) -> OptimizationReport:
    if (type(data) is not list or len(data) != 3 or type(data[0]) is not int
            or type(data[1]) is not int or type(data[2]) is not list):
        raise PayloadError("optimization: expected [nodes_before, nodes_after, passes]")
    passes = []
    for p in data[2]:
        if type(p) is not list or len(p) != 3 or type(p[0]) is not str or not all(
                type(n) is int for n in p[1:]):
            raise PayloadError("optimization: each pass is [name, nodes_before, nodes_after]")
        passes.append(PassReport(*p))
    return OptimizationReport(data[0], data[1], tuple(passes))


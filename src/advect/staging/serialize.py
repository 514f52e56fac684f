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
import time

import numpy as np

from ..core import REGISTRY
from ..dtypes import Aval, aval_of
from ..errors import PayloadError, SchemaVersionError, UnregisteredOpError
from ..pytree import (
    tree_flatten,
)
from .attrs import INT64, MAX_BYTES, check_aval, check_node, show
from .encoding import (
    decode,
    decode_dtype,
    decode_shape,
    decode_spec,
    decode_tree,
    encode,
    encode_tree,
    expect,
    leaf_marker,
    namedtuple_classes,
    namedtuple_table,
    saved_order,
    spec_tree,
)
from .graph import Graph, Literal, Node, validate
from .passes import OptimizationReport, PassReport
from .specs import PYTHON_SCALAR, SUPPORTED_API_VERSIONS, ArraySpec, is_spec

__all__ = ["FORMAT", "SCHEMA_VERSION", "to_dict", "from_dict", "SchemaVersionError",
           "UnregisteredOpError"]

FORMAT = "advect.staged_program"
SCHEMA_VERSION = 3
MAX_CONSTANT_BYTES = MAX_BYTES
_TOP_KEYS = {"format", "schema_version", "advect_version", "array_api_version", "name",
             "signature", "outputs", "graph", "optimization"}
_OPTIONAL_KEYS = {"namedtuples"}  # additive: a payload without them loads as before


def _version() -> str:
    from .. import __version__
    return __version__


# --- saving ---------------------------------------------------------------------------------------

def _operand(x, ids: dict):
    if type(x) is Literal:
        return {type(x.value).__name__: encode(x.value, "a literal")}
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
            entry.append({k: encode(v, f"attr {k!r} of {node.op.name}", tag_tuples=False)
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
        "signature": {"positional": [spec_tree(t) for t in pos],
                      "keyword": {k: spec_tree(t) for k, t in kw.items()}},
        "outputs": {"tree": encode_tree(program._out_def, [None] * program._out_def.num_leaves,
                                         lambda _: {"leaf": None}, "the outputs"),
                    "python": list(program._out_python)},
        "graph": {"constants": constants, "nodes": nodes,
                  "outputs": [_operand(x, ids) for x in graph.outputs]},
        "optimization": [report.nodes_before, report.nodes_after,
                         [list(p) for p in report.passes]],
    }
    if any(k is not None for k in program._out_scalars):  # additive: absent when all null
        payload["outputs"]["numpy_scalar"] = list(program._out_scalars)
    table = namedtuple_table([program._in_def, program._out_def])
    if table:
        payload["namedtuples"] = table
    return payload


# --- loading --------------------------------------------------------------------------------------

def from_dict(payload) -> object:
    """Validate ``payload`` field by field and rebuild the program (see :func:`to_dict`)."""
    from .program import StagedProgram

    start = time.perf_counter()
    _check_envelope(payload)
    sig = expect(payload["signature"], dict, "signature")
    if set(sig) != {"positional", "keyword"}:
        raise PayloadError("signature: expected keys 'positional' and 'keyword'")
    classes = namedtuple_classes(payload.get("namedtuples", []))
    pos = tuple(decode_tree(t, decode_spec, f"signature.positional[{i}]", 0, classes)
                for i, t in enumerate(expect(sig["positional"], list, "signature.positional")))
    kw = {}
    for name, tree in expect(sig["keyword"], dict, "signature.keyword").items():
        kw[name] = decode_tree(tree, decode_spec, f"signature.keyword[{name!r}]", 0, classes)
    specs, in_def = tree_flatten((pos, kw), is_leaf=is_spec)
    outputs = expect(payload["outputs"], dict, "outputs")
    if set(outputs) - {"numpy_scalar"} != {"tree", "python"}:
        raise PayloadError("outputs: expected keys 'tree' and 'python' (and optionally "
                           "'numpy_scalar')")
    out_tree = decode_tree(outputs["tree"], leaf_marker, "outputs.tree", 0, classes)
    out_def = saved_order(out_tree)
    python = expect(outputs["python"], list, "outputs.python")
    if len(python) != out_def.num_leaves or not all(type(p) is bool for p in python):
        raise PayloadError(f"outputs.python: expected {out_def.num_leaves} booleans")
    graph = _graph([s.aval for s in specs if isinstance(s, ArraySpec)],
                   expect(payload["graph"], dict, "graph"))
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
    name = expect(payload["name"], str, "name")
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
    scalars = expect(outputs["numpy_scalar"], list, "outputs.numpy_scalar")
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
    for i, const in enumerate(expect(data["constants"], list, "graph.constants")):
        graph.add_constant(*_constant(const, f"graph.constants[{i}]"))
    for k, entry in enumerate(expect(data["nodes"], list, "graph.nodes")):
        graph.nodes.append(_node(graph, entry, f"graph.nodes[{k}]"))
    graph.outputs = [_load_operand(graph, x, f"graph.outputs[{i}]", wide=True)  # 2**70 too
                     for i, x in enumerate(expect(data["outputs"], list, "graph.outputs"))]
    validate(graph, PayloadError)
    return graph


def _constant(data, where: str):
    expect(data, dict, where)
    if set(data) != {"dtype", "shape", "data", "origin"}:
        raise PayloadError(f"{where}: expected keys dtype, shape, data, origin")
    dtype = decode_dtype(data["dtype"], where)
    shape = decode_shape(data["shape"], where)
    count = 1
    for n in shape:
        count *= n
        if count * dtype.itemsize > MAX_CONSTANT_BYTES:
            raise PayloadError(f"{where}: shape {shape} is too large for a saved constant")
    nbytes = count * dtype.itemsize
    text = expect(data["data"], str, f"{where}.data")
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
        value = decode(body, where)
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
                   for i, x in enumerate(expect(entry[1], list, f"{where}.inputs")))
    attrs = entry[2] if len(entry) == 3 else {}
    expect(attrs, dict, f"{where}.attrs")
    unknown = set(attrs) - set(op.attrs)
    if unknown:
        raise PayloadError(f"{where}: {name} takes no attrs {show(list(unknown))}")
    attrs = {k: decode(v, f"{where}.attrs.{k}", lists_are_tuples=True)
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


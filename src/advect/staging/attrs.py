"""What a loaded program's nodes may hold: each op's attrs, checked before its abstract rule runs.

Abstract rules trust their attrs, because the frontends normalize them (``axis=-1`` becomes
``axes=(1,)``, dtypes become staged dtype names). A saved payload was written by anyone, so
:func:`check_node` checks every attr of a node against what its op accepts: types, ranges, dtype
names of the staged set, axes within rank, index structures, bounded non-negative shapes, fill
values the dtype can hold. Once these hold, the abstract rule's result is what the provider
returns. Each op record names its attrs' kinds (``Op.attrs``); ``KINDS`` says how each kind is
checked, and a few ops check their attrs against each other (``_NODE_CHECKS``). Custom
primitives are checked against their handle's parameters.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ..dtypes import STAGED_DTYPES, Aval
from ..errors import PayloadError
from ..ops.casts import PYTHON_DTYPES

__all__ = ["check_node", "check_aval", "show", "KINDS", "OTHER_KINDS", "MAX_BYTES", "INT64"]

MAX_BYTES = 1 << 34  # any value of a loaded program (inputs, constants, node outputs)
INT64 = (-(1 << 63), (1 << 63) - 1)
_DTYPE_NAMES = frozenset(d.name for d in STAGED_DTYPES)
_NORMS = ("backward", "ortho", "forward")


def show(value, depth: int = 0) -> str:
    """A short description of a payload value that never recurses deeply nor converts a huge
    int to text."""
    kind = type(value)
    if kind is int and abs(value) > 10 ** 30:
        return f"an int of {value.bit_length()} bits"
    if kind is str:
        return repr(value[:40] + ("..." if len(value) > 40 else ""))
    if kind in (list, tuple, dict):
        if depth > 2:
            return "..."
        if kind is dict:
            parts = [f"{show(k, depth + 1)}: {show(v, depth + 1)}"
                     for k, v in itertools.islice(value.items(), 4)]
        else:
            parts = [show(v, depth + 1) for v in value[:4]]
        left, right = {list: "[]", tuple: "()", dict: "{}"}[kind]
        return left + ", ".join(parts) + (", ..." if len(value) > 4 else "") + right
    if value is None or kind in (bool, int, float, complex):
        return repr(value)
    return f"a {kind.__name__}"


def check_aval(aval: Aval, where: str) -> None:
    """Refuse a value larger than MAX_BYTES (checked before anything is allocated)."""
    count = 1
    for n in aval.shape:
        if type(n) is not int or n < 0:
            raise PayloadError(f"{where}: shape {aval.shape} has a negative or non-integer "
                               "dimension")
        count *= n
    if count * aval.dtype.itemsize > MAX_BYTES:
        raise PayloadError(f"{where}: a value of shape {aval.shape} and dtype {aval.dtype.name} "
                           f"is larger than the {MAX_BYTES >> 30} GiB a loaded program may hold")


# --- attr kinds: each returns a complaint, or None when the value is acceptable -----------------

def _int(v) -> bool:
    return type(v) is int and INT64[0] <= v <= INT64[1]


def _ints(v) -> bool:
    return type(v) is tuple and all(_int(n) for n in v)


def _boolean(v, avals, attrs):
    return None if type(v) is bool else "must be true or false"


def _rank(avals) -> int:
    return avals[0].ndim if avals else 0


def _axis(v, avals, attrs):
    if _int(v) and 0 <= v < _rank(avals):
        return None
    return f"must be an axis of the operand, an int in [0, {_rank(avals)})"


def _axis_or_none(v, avals, attrs):
    return None if v is None else _axis(v, avals, attrs)


def _axes_within(v, ndim: int):
    if _ints(v) and len(set(v)) == len(v) and all(0 <= a < ndim for a in v):
        return None
    return f"must be distinct axes, ints in [0, {ndim})"


def _axes(v, avals, attrs):
    return _axes_within(v, _rank(avals))


def _fft_axes(v, avals, attrs):  # NumPy transforms nothing (and keeps the dtype) for ()
    return "must name at least one axis" if v == () else _axes(v, avals, attrs)


def _new_axes(v, avals, attrs):  # expand_dims: positions in the result
    return _axes_within(v, _rank(avals) + (len(v) if type(v) is tuple else 0))


def _new_axis(v, avals, attrs):  # stack: a position in the result
    if _int(v) and 0 <= v <= _rank(avals):
        return None
    return f"must be an axis of the result, an int in [0, {_rank(avals) + 1})"


def _shape(v, avals, attrs):
    if _ints(v) and len(v) <= 64 and all(0 <= n < 1 << 62 for n in v):
        return None
    return "must be a shape: up to 64 non-negative ints"


def _shape_or_none(v, avals, attrs):
    return None if v is None else _shape(v, avals, attrs)


def _dtype(v, avals, attrs):
    if type(v) is str and v in _DTYPE_NAMES:
        return None
    return "must be the name of a staged dtype (bool, int8..uint64, float16..complex128)"


def _dtype_or_none(v, avals, attrs):
    return None if v is None else _dtype(v, avals, attrs)


def _one_of(*names):
    def check(v, avals, attrs):
        return None if type(v) is str and v in names else f"must be one of {', '.join(names)}"
    return check


def _int64(v, avals, attrs):
    return None if _int(v) else "must be an int within int64"


def _c_int(v, avals, attrs):
    return None if type(v) is int and -(1 << 31) < v < 1 << 31 else "must be a small int"


def _int64s(v, avals, attrs):
    return None if _ints(v) and len(v) <= 64 else "must be a tuple of ints within int64"


def _sizes(v, avals, attrs):
    if _ints(v) and len(v) <= 64 and all(0 < n < 1 << 62 for n in v):
        return None
    return "must be a tuple of positive ints"


def _rcond(v, avals, attrs):
    if v is None or (type(v) in (int, float) and math.isfinite(v) and v >= 0):
        return None
    return "must be null or a non-negative number"


def _scalar(v, avals, attrs):
    if type(v) in (bool, float, complex) or _int(v):
        return None
    return "must be a bool, an int within int64, a float or a complex number"


def _subscripts(v, avals, attrs):
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ,.->")
    if type(v) is not str or len(v) > 1000 or not set(v) <= allowed or v.count("->") != 1:
        return "must be normalized einsum subscripts (letters, ',', '...', one '->')"
    for term in v.replace("->", ",").split(","):
        if term.replace("...", "", 1).count(".") or term.count("...") > 1:
            return "must use '.' only as one '...' per operand"
    out = v.split("->")[1].replace("...", "")
    if len(set(out)) != len(out):
        return "must name each output letter once"
    return None


def _einsum_optimize(v, avals, attrs):
    if v is None or v is False or v in ("greedy", "optimal"):
        return None
    if type(v) is tuple and len(v) == 2 and v[0] in ("greedy", "optimal") and _int(v[1]):
        return None
    left = len(avals)
    if type(v) is tuple and v and v[0] == "einsum_path" and len(v) <= 1000:
        for step in v[1:]:
            if not (_ints(step) and step and len(set(step)) == len(step)
                    and all(0 <= i < left for i in step)):
                break
            left -= len(step) - 1
        else:
            if left == 1:
                return None
    return ("must be false, null, 'greedy', 'optimal', [name, memory limit] or a contraction "
            f"path ['einsum_path', [i, j], ...] of {len(avals)} operands")


def _index(v, avals, attrs):
    if type(v) is not tuple or len(v) > 64:
        return "must be a tuple of index entries"
    for e in v:
        if e is None or e == "array" or _int(e):
            continue
        if type(e) is tuple and len(e) == 3 and all(p is None or _int(p) for p in e) \
                and e[2] != 0:
            continue
        return ("entries must be ints, null (a new axis), 'array' or [start, stop, step] with "
                f"a non-zero step; got {show(e)}")
    consumed = sum(1 for e in v if e is not None)
    if consumed > _rank(avals):
        return f"indexes {consumed} axes of an operand with {_rank(avals)}"
    return None


def _pairs(v, avals, attrs):  # dot_general's (lhs axes, rhs axes)
    if not (type(v) is tuple and len(v) == 2 and all(_ints(p) for p in v)
            and len(v[0]) == len(v[1])):
        return "must be a pair of equally long tuples of axes"
    if len(avals) == 2:
        for axes, aval in zip(v, avals):
            if any(not 0 <= a < aval.ndim for a in axes):
                return f"holds an axis outside an operand of {aval.ndim} dimensions"
    return None


# what each attr kind an op record names (``Op.attrs``) accepts
KINDS: dict = {
    "bool": _boolean, "axis": _axis, "axis_or_none": _axis_or_none, "axes": _axes,
    "fft_axes": _fft_axes, "new_axes": _new_axes, "new_axis": _new_axis, "shape": _shape,
    "shape_or_none": _shape_or_none, "sizes": _sizes, "dtype": _dtype,
    "dtype_or_none": _dtype_or_none, "python_dtype": _one_of(*sorted(set(PYTHON_DTYPES.values()))),
    "int64": _int64, "int64s": _int64s, "c_int": _c_int, "scalar": _scalar, "rcond": _rcond,
    "side": _one_of("left", "right"), "norm": _one_of(*_NORMS), "log_base": _one_of("e", "2"),
    "index": _index,
    "pairs": _pairs, "subscripts": _subscripts, "einsum_optimize": _einsum_optimize,
}
# "process": a Python object of one process (a checkpointed block, an implicit problem), which
# never appears in a saved program; "primitive": checked against a custom primitive's handle
OTHER_KINDS = frozenset({"process", "primitive"})


# --- whole-node checks beyond single attrs ------------------------------------------------------

def _slice_axis_node(avals, attrs):
    n = avals[0].shape[attrs["axis"]]
    start, stop, step = attrs["start"], attrs["stop"], attrs.get("step", 1)
    if step == 0 or len(range(start, stop, step)) != len(range(n)[start:stop:step]):
        return (f"start={start}, stop={stop}, step={step} is not a normalized slice of an axis "
                f"of size {n}")
    return None


def _full_like_node(avals, attrs):
    dtype = np.dtype(attrs["dtype"]) if attrs.get("dtype") is not None else avals[0].dtype
    v = attrs["fill_value"]
    if type(v) is complex and dtype.kind != "c":
        return f"fill_value {v!r} is complex but the dtype is {dtype.name}"
    if type(v) is float and dtype.kind in "biu" and not math.isfinite(v):
        return f"fill_value {v!r} cannot be held by {dtype.name}"
    if type(v) in (int, float) and dtype.kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= v <= info.max:
            return f"fill_value {v!r} is out of range for {dtype.name}"
    return None


def _iota_like_node(avals, attrs):
    if not 0 <= attrs["axis"] < len(attrs["shape"]):
        return f"axis {attrs['axis']} is not an axis of shape {attrs['shape']}"
    return None


def _roll_node(avals, attrs):
    if len(attrs["shift"]) != len(attrs["axes"]):
        return "shift and axes must have the same length"
    return None


def _dot_general_node(avals, attrs):
    (xc, yc), (xb, yb) = attrs["contract"], attrs["batch"]
    for axes in ((*xc, *xb), (*yc, *yb)):
        if len(set(axes)) != len(axes):
            return "an axis is both contracted and batched, or named twice"
    return None


def _index_node(avals, attrs, skip: int):
    arrays = avals[skip:]
    if sum(1 for e in attrs["index"] if e == "array") != len(arrays):
        return f"the index names {len(arrays)} index arrays, not as many as it has operands"
    return None


_NODE_CHECKS = {
    "slice_axis": _slice_axis_node,
    "full_like": _full_like_node,
    "iota_like": _iota_like_node,
    "roll": _roll_node,
    "dot_general": _dot_general_node,
    "gather": lambda avals, attrs: _index_node(avals, attrs, 1),
    "scatter": lambda avals, attrs: _index_node(avals, attrs, 2),
    "scatter_add": lambda avals, attrs: _index_node(avals, attrs, 2),
}


def check_node(op, avals: list, literal: list[bool], attrs: dict, where: str) -> None:
    """Raise ``PayloadError`` (naming ``where``) unless ``attrs`` are what ``op`` accepts for
    operands of ``avals`` (``literal[i]``: operand i is a Python-scalar literal)."""
    name = op.name
    if not avals or all(literal):
        raise PayloadError(f"{where}: {name} needs at least one array operand (a node with only "
                           "literal operands is never staged)")
    handle = getattr(op, "handle", None)
    if handle is not None:
        problem = _primitive_attrs(handle, op, avals, attrs)
        if problem:
            raise PayloadError(f"{where}: {name}: {problem}")
        return
    kinds = op.attrs
    if "process" in kinds.values():
        raise PayloadError(f"{where}: {name} holds Python objects of the process that ran it and "
                           "cannot be loaded")
    missing = {key for key, kind in kinds.items() if not kind.endswith("?")} - set(attrs)
    if missing or set(attrs) - set(kinds):
        raise PayloadError(f"{where}: {name} takes the attrs {sorted(kinds)}, got "
                           f"{sorted(attrs)}")
    for key, value in attrs.items():
        problem = KINDS[kinds[key].rstrip("?")](value, avals, attrs)
        if problem:
            raise PayloadError(f"{where}: attr {key!r} of {name} ({show(value)}) {problem}")
    if name in ("gather", "scatter", "scatter_add"):
        skip = 1 if name == "gather" else 2
        if any(literal[skip:]):
            raise PayloadError(f"{where}: {name} takes index arrays as arrays, not literals")
    node_check = _NODE_CHECKS.get(name)
    problem = node_check(avals, attrs) if node_check else None
    if problem:
        raise PayloadError(f"{where}: {name}: {problem}")


# --- custom primitives ---------------------------------------------------------------------------

def _code_leaves(code, depth: int = 0) -> int | None:
    """The leaf count of a primitive operand's structure code, or None if it is malformed."""
    if code == "*":
        return 1
    if code is None:
        return 0
    if depth > 32 or type(code) is not tuple:
        return None
    if len(code) == 2 and code[0] in ("tuple", "list") and type(code[1]) is tuple:
        children = code[1]
    elif (len(code) == 3 and code[0] == "dict" and type(code[1]) is tuple
          and type(code[2]) is tuple and len(code[1]) == len(code[2])
          and all(type(k) is str for k in code[1]) and len(set(code[1])) == len(code[1])):
        children = code[2]
    else:
        return None
    counts = [_code_leaves(c, depth + 1) for c in children]
    return None if None in counts else sum(counts)


def _static_ok(v, depth: int = 0) -> bool:
    # ints beyond int64 too: staging takes Python ints for the primitive's own Python rules
    # (bounded, so that a listing or an error message can write one as text)
    if v is None or type(v) in (bool, float, str) or (type(v) is int and v.bit_length() <= 8192):
        return True
    return type(v) is tuple and depth < 64 and all(_static_ok(x, depth + 1) for x in v)


def _primitive_attrs(handle, op, avals, attrs):
    linear = op is not handle.op
    expected = ("operands", "static", "tangents") if linear else ("operands", "static")
    if set(attrs) != set(expected):
        return f"takes the attrs {list(expected)}, got {sorted(attrs)}"
    operands, static = attrs["operands"], attrs["static"]
    if (type(operands) is not tuple or not all(type(p) is tuple and len(p) == 2 for p in operands)
            or tuple(p[0] for p in operands) != tuple(handle._dynamic)):
        return (f"'operands' must name the primitive's dynamic parameters "
                f"{list(handle._dynamic)} in order, each with its structure")
    counts = [_code_leaves(code) for _, code in operands]
    if None in counts:
        return "'operands' holds a malformed structure code"
    if (type(static) is not tuple or not all(type(p) is tuple and len(p) == 2 for p in static)
            or tuple(p[0] for p in static) != tuple(handle._static)
            or not all(_static_ok(p[1]) for p in static)):
        return (f"'static' must give the primitive's static parameters {list(handle._static)} "
                "in order, each a None, bool, int, float, str or tuple of them")
    n = sum(counts)
    if not linear:
        return None if n == len(avals) else (f"its operands hold {n} arrays but the node has "
                                             f"{len(avals)} inputs")
    tangents = attrs["tangents"]
    if not (_ints(tangents) and list(tangents) == sorted(set(tangents))
            and all(0 <= t < n for t in tangents) and tangents):
        return "'tangents' must be increasing positions of the primal leaves"
    n_out = len(avals) - n - len(tangents)
    if n_out < 1:
        return "the node has too few inputs for its primals, outputs and tangents"
    out_avals = avals[n:n + n_out]
    try:
        derived = handle.op.abstract(*avals[:n], operands=operands, static=static)
    except Exception as exc:  # the user's rule: whatever it raises means a bad payload
        return f"the primitive's abstract rule rejects its primals: {exc}"
    if list(derived) != list(out_avals):
        return "its outputs are not what the primitive's abstract rule gives for its primals"
    for t, aval in zip(tangents, avals[n + n_out:]):
        if aval.shape != avals[t].shape:
            return f"the tangent of primal {t} does not match that primal's shape"
    return None

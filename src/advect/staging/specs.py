"""Signatures of staged programs: ArraySpec, StaticSpec, AbstractValue, and the call contract.

A signature is a pytree of specs: an :class:`ArraySpec` stands for an array (or, with
``weak=True``, a Python scalar of one category), a :class:`StaticSpec` for a compile-time value.
``check_call`` matches a call against it leaf by leaf and names the leaf that differs.
"""

from __future__ import annotations

import copy
import operator
from typing import Any

import numpy as np

from .. import ops
from ..array_api._revisions import REVISIONS
from ..core import Tracer
from ..dtypes import Aval, aval_of, check_dtype
from ..errors import RevisionError
from ..numpy._mutation import input_marker
from ..providers import (
    default_device,
    device_of,
    is_array,
    namespace_of,
    numpy_dtype,
    provider_name,
    provider_of,
    refuse_subclass,
    same_device,
)
from ..pytree import Static, TreeDef, format_path, same_value, tree_flatten, value_hash
from .trace import StageTracer

__all__ = ["ArraySpec", "StaticSpec", "AbstractValue", "SUPPORTED_API_VERSIONS",
           "LATEST_API_VERSION", "is_spec", "spec_of_example", "check_call", "leaves_up_to",
           "fits_int64", "flat_checks", "flat_operands"]

# Array API revisions a staged program can record: the ones the Array API frontend serves
SUPPORTED_API_VERSIONS = REVISIONS
# the revision chosen when only specs are given (spec 001: Advect's newest)
LATEST_API_VERSION = REVISIONS[-1]

# the Python type of each weak-scalar category (NEP 50), by dtype kind
PYTHON_SCALAR = {"b": bool, "i": int, "u": int, "f": float, "c": complex}
# Python scalars that a weak slot of another kind takes, as NumPy's promotion would (a bool is
# not a number here, and a complex never fits a real slot)
_WEAK_WIDENING = {"f": (int,), "c": (int, float)}
_WEAK_DTYPE = {bool: "bool", int: "int64", float: "float64", complex: "complex128"}


def fits_int64(value: int) -> bool:
    """Whether a Python int fits the weak int64 scalar a staged program computes with."""
    return -(2 ** 63) <= value < 2 ** 63


class ArraySpec:
    """Shape, dtype, device and Python-scalar category of one array input, without data.

    ``weak=True`` (rank 0 only) declares a Python scalar: ``ArraySpec((), "float64",
    weak=True)`` accepts a Python ``float``, which promotes as NumPy 2 promotes Python scalars.
    ``numpy_scalar=True`` (rank 0 only) declares a NumPy scalar (``np.float32(2)``, what
    ``stage`` records for one): the slot takes it or a 0-d array alike, and the program gives
    the result types eager NumPy gives for a scalar (``x.copy()`` a scalar, ``x[...]`` a 0-d
    array).
    ``dtype`` is a NumPy dtype, which compares equal to its name. ``device=None`` means the
    default device of the call's provider; another device must match the argument's
    (``stage`` records an example's device when it is not its provider's default).

    Raises:
        TypeError: an unsupported dtype (object, bytes, float128, ...), named.
        ValueError: a negative dimension, ``weak`` or ``numpy_scalar`` with a shape other
            than ``()``, or both.

    Example:
        >>> spec = ArraySpec((4,), "float64")
        >>> spec.dtype == "float64", spec.shape
        (True, (4,))
    """

    __slots__ = ("shape", "dtype", "device", "weak", "numpy_scalar")

    def __init__(self, shape: tuple[int, ...], dtype: Any, device: Any = None,
                 weak: bool = False, numpy_scalar: bool = False):
        try:
            shape = tuple(operator.index(n) for n in shape)
        except TypeError:
            raise TypeError(f"ArraySpec: shape must be a tuple of ints, got {shape!r}") from None
        if any(n < 0 for n in shape):
            raise ValueError(f"ArraySpec: shape {shape} has a negative dimension")
        try:
            dtype = numpy_dtype(dtype)
        except TypeError:
            raise TypeError(f"ArraySpec: {dtype!r} is not a dtype") from None
        dtype = check_dtype(dtype, f"ArraySpec{shape}")
        if weak and shape != ():
            raise ValueError(f"ArraySpec: weak=True declares a Python scalar, so the shape must "
                             f"be (), got {shape}")
        if numpy_scalar and (shape != () or weak):
            raise ValueError(f"ArraySpec: numpy_scalar=True declares a NumPy scalar, so the "
                             f"shape must be () and weak False, got {shape}"
                             f"{' and weak=True' if weak else ''}")
        if weak:  # a Python scalar's category: float32 and float64 both declare a float
            dtype = np.dtype(_WEAK_DTYPE[PYTHON_SCALAR[dtype.kind]])
        set_ = object.__setattr__
        set_(self, "shape", shape)
        set_(self, "dtype", dtype)
        set_(self, "device", device)
        set_(self, "weak", bool(weak))
        set_(self, "numpy_scalar", bool(numpy_scalar))

    def __setattr__(self, name, value):
        raise AttributeError("ArraySpec is immutable")

    def __reduce__(self):  # pickle and copy through __init__ (__setattr__ refuses the slots)
        return ArraySpec, (self.shape, self.dtype, self.device, self.weak, self.numpy_scalar)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def aval(self) -> Aval:
        return Aval(self.shape, self.dtype, self.weak, self.device)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ArraySpec) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak == other.weak
                and self.device == other.device and self.numpy_scalar == other.numpy_scalar)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name, self.weak))

    def __repr__(self) -> str:
        extra = (f", device={self.device!r}" if self.device is not None else "") + (
            ", weak=True" if self.weak else "") + (
            ", numpy_scalar=True" if self.numpy_scalar else "")
        return f"ArraySpec({self.shape!r}, {self.dtype.name!r}{extra})"

    def describe(self) -> str:
        if self.weak:
            return f"a Python {PYTHON_SCALAR[self.dtype.kind].__name__}"
        dims = ",".join(map(str, self.shape))
        return f"an array of {self.dtype.name}[{dims}]"


class StaticSpec:
    """A compile-time Python value, snapshotted (deep-copied) when the spec is made.

    Static values are part of the signature: a call must pass an equal value.

    Example:
        >>> options = {"center": True}
        >>> spec = StaticSpec(options)
        >>> options["center"] = False
        >>> spec.value
        {'center': True}
    """

    __slots__ = ("value",)

    def __init__(self, value: Any):
        if isinstance(value, Tracer):
            raise TypeError("StaticSpec: a traced value has no compile-time value")
        try:
            snapshot = copy.deepcopy(value)
        except Exception as exc:
            raise TypeError(f"StaticSpec: cannot snapshot a {type(value).__name__} ({exc}); "
                            "static values must be copyable Python values") from None
        object.__setattr__(self, "value", snapshot)

    def __setattr__(self, name, value):
        raise AttributeError("StaticSpec is immutable")

    def __reduce__(self):
        return StaticSpec, (self.value,)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StaticSpec) and same_value(self.value, other.value)

    def __hash__(self) -> int:
        return value_hash(self.value)

    def __repr__(self) -> str:
        return f"StaticSpec({self.value!r})"


class AbstractValue:
    """An array without data, as a custom primitive's abstract rule receives it.

    Example:
        >>> AbstractValue(ArraySpec((2, 3), "float32")).shape
        (2, 3)
    """

    __slots__ = ("spec",)

    def __init__(self, spec: ArraySpec):
        object.__setattr__(self, "spec", spec)

    def __setattr__(self, name, value):
        raise AttributeError("AbstractValue is immutable")

    def __reduce__(self):
        return AbstractValue, (self.spec,)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.spec.shape

    @property
    def dtype(self) -> np.dtype:
        return self.spec.dtype

    @property
    def ndim(self) -> int:
        return self.spec.ndim

    @property
    def weak(self) -> bool:
        return self.spec.weak

    def __repr__(self) -> str:
        return f"AbstractValue({self.spec!r})"


def is_spec(x) -> bool:
    return isinstance(x, ArraySpec | StaticSpec)


def spec_of_example(leaf, where: str):
    """The spec a concrete example leaf defines."""
    if isinstance(leaf, StaticSpec):
        return leaf
    if type(leaf) is int and not fits_int64(leaf):
        raise TypeError(f"{where} is the Python int {leaf}, outside the int64 range that "
                        "staging computes Python ints with; pass it as a StaticSpec or an "
                        "array of a wider dtype")
    if type(leaf) in _WEAK_DTYPE:
        return ArraySpec((), _WEAK_DTYPE[type(leaf)], weak=True)
    if isinstance(leaf, Tracer):
        aval = aval_of(leaf)
        if aval.weak:  # a traced Python scalar: a weak slot, as for the Python scalar
            return ArraySpec((), aval.dtype, weak=True)
        device = aval.device
        if device is not None:  # recorded only off the provider's default device
            default = default_device(provider_of(leaf))
            device = None if default is None or same_device(device, default) else device
        return ArraySpec(aval.shape, aval.dtype, device=device,
                         numpy_scalar=input_marker(leaf) is None)
    if isinstance(leaf, np.ndarray | np.generic):
        refuse_subclass(leaf, where)
        return ArraySpec(leaf.shape, check_dtype(leaf.dtype, where),
                         numpy_scalar=isinstance(leaf, np.generic))
    if is_array(leaf) and (hasattr(leaf, "__array_namespace__") or namespace_of((leaf,)) is not np):
        # another provider's array (PyTorch through array-api-compat): its device is recorded
        # unless it is the provider's default device
        try:
            dtype = numpy_dtype(leaf.dtype)
        except TypeError:
            raise TypeError(f"{where} has dtype {leaf.dtype}, which staging does not "
                            "support") from None
        return ArraySpec(tuple(leaf.shape), check_dtype(dtype, where), device=device_of(leaf))
    raise TypeError(f"{where} is a {type(leaf).__name__}, which is neither an array nor a "
                    "Python scalar; wrap compile-time values in ad.StaticSpec(...)")


# --- the call contract ---------------------------------------------------------------------------

def leaves_up_to(treedef: TreeDef, value, path: tuple, out: list) -> None:
    """Append ``(path, subtree)`` for each leaf position of ``treedef`` in ``value``."""
    if treedef.kind is None:
        out.append((path, value))
        return
    children, node = tree_flatten(value, is_leaf=lambda v: v is not value)
    if not _same_kind(node.kind, treedef.kind) or node.aux != treedef.aux or len(
            children) != len(treedef.children):
        where = f"argument{format_path(path)}"
        if treedef.kind is Static and isinstance(value, Static):
            _refuse_identity(treedef.aux.value, where)
            raise TypeError(f"{where}: the static value {value.value!r} differs from the staged "
                            f"{treedef.aux.value!r}; stage the function again for another value")
        if treedef.kind is Static:
            raise TypeError(f"{where}: expected the static value {treedef.aux.value!r} wrapped "
                            f"in advect.pytree.static(...), got {_describe(value)}")
        expected = treedef.kind.__name__ if treedef.kind is not type(None) else "None"
        keys = f" with keys {list(treedef.aux)}" if treedef.kind is dict else (
            f" of length {len(treedef.children)}" if treedef.kind in (tuple, list) else
            f" with metadata {treedef.aux!r}" if node.kind is treedef.kind else "")
        got = _describe(value)
        if node.kind is treedef.kind and node.kind not in (dict, tuple, list):
            differ = getattr(treedef.aux, "describe_mismatch", None)  # advect.xarray labels
            got = f"one with metadata {node.aux!r}" + (
                f" ({differ(node.aux)})" if differ else " (their values differ)"
                if repr(node.aux) == repr(treedef.aux) else "")
        raise TypeError(f"{where} does not match the staged signature: expected a "
                        f"{expected}{keys}, got {got}")
    keys = treedef.aux if treedef.kind is dict else range(len(children))
    for key, child_def, child in zip(keys, treedef.children, children):
        leaves_up_to(child_def, child, (*path, key), out)


def _same_kind(a, b) -> bool:
    """Node types match; namedtuples match by type name and field names, so a restored
    program (whose namedtuple classes are rebuilt from those names) takes the original's."""
    if a is b:
        return True
    fields = getattr(a, "_fields", None)
    return (isinstance(a, type) and isinstance(b, type) and issubclass(a, tuple)
            and issubclass(b, tuple) and fields is not None
            and fields == getattr(b, "_fields", None) and a.__name__ == b.__name__)


def _describe(value) -> str:
    if isinstance(value, dict):
        hint = "" if type(value) is dict else (
            f" (a {type(value).__name__} is not a dict node of a pytree: pass dict(value))")
        return f"a {type(value).__name__} with keys {sorted(value, key=repr)}{hint}"
    if isinstance(value, list | tuple):
        return f"a {type(value).__name__} of length {len(value)}"
    if type(value) in _WEAK_DTYPE:
        return f"a Python {type(value).__name__}"
    if isinstance(value, np.generic):
        return f"a NumPy {value.dtype.name} scalar"
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        aval = aval_of(value)
        return f"an array of {aval.dtype.name}[{','.join(map(str, aval.shape))}]"
    return f"a {type(value).__name__}"


def _traced_leaf(spec: ArraySpec, value: Tracer, where: str) -> Tracer:
    """A traced leaf: its aval must be the slot's, except that a weak slot takes what a Python
    scalar call would: a traced Python int in a weak float (or complex) slot, converted as the
    concrete int is; and, inside a dynamic transform, a traced Python float in a weak int slot,
    since ``ad.grad`` lifts a Python int input to a float (the graph then computes with it)."""
    aval = aval_of(value)
    if aval.shape == spec.shape and aval.dtype == spec.dtype:
        if aval.weak == spec.weak:
            return value
        # a Python scalar for an array slot, or a NumPy scalar for a Python-scalar slot: the
        # graph would promote it as the other kind (as a concrete call, refused)
        got = f"a traced Python {PYTHON_SCALAR[aval.dtype.kind].__name__}" if aval.weak \
            else f"a traced array of {aval!r}"
        raise ValueError(f"{where}: expected {spec.describe()}, got {got}; "
                         + ("pass np.asarray(value, like=value) with the staged dtype"
                            if aval.weak else "pass a Python scalar (.item())"))
    slot, kind = spec.dtype.kind, aval.dtype.kind
    if spec.weak and aval.weak and aval.shape == ():
        if PYTHON_SCALAR[kind] in _WEAK_WIDENING.get(slot, ()):
            return ops.python_scalar(value, dtype=spec.dtype.name)
        if slot == "i" and kind == "f":
            if not isinstance(value, StageTracer):
                return value
            raise ValueError(f"{where}: expected {spec.describe()}, got a traced Python float "
                             "while staging; stage the program with a float example (2.0, not "
                             "2) to call it with floats")
    raise ValueError(f"{where}: expected {spec.describe()}, got a traced array of {aval!r}")


def check_leaf(spec, value, path: tuple, xp) -> Any:
    """Check one leaf of a call; returns the runtime operand (None for a static leaf)."""
    where = f"argument{format_path(path)}"
    if isinstance(spec, StaticSpec):
        if isinstance(value, StaticSpec):
            value = value.value
        if not same_value(value, spec.value):
            _refuse_identity(spec.value, where)
            raise TypeError(f"{where}: the static value {value!r} differs from the staged "
                            f"{spec.value!r}; stage the function again for another value")
        return None
    if isinstance(value, Tracer):
        return _traced_leaf(spec, value, where)
    if spec.weak:
        kind = spec.dtype.kind
        if type(value) is PYTHON_SCALAR[kind]:
            if type(value) is int and not fits_int64(value):
                raise ValueError(f"{where}: the Python int {value} does not fit the weak int64 "
                                 "scalar a staged program computes with")
            return value
        if type(value) in _WEAK_WIDENING.get(kind, ()):  # NumPy promotion: int -> float, ...
            return PYTHON_SCALAR[kind](value)
        raise ValueError(f"{where}: expected {spec.describe()} (a weak scalar), got "
                         f"{_describe(value)}; pass a Python {PYTHON_SCALAR[kind].__name__}, "
                         "or stage with an example of this argument's type")
    if type(value) in _WEAK_DTYPE:
        raise ValueError(f"{where}: expected {spec.describe()}, got {_describe(value)}; pass "
                         "np.asarray(value) with the staged dtype")
    if not (hasattr(value, "shape") and hasattr(value, "dtype")):
        raise TypeError(f"{where}: expected {spec.describe()}, got {_describe(value)}")
    refuse_subclass(value, where)
    shape = tuple(value.shape)
    if shape != spec.shape:
        raise ValueError(f"{where}: expected {spec.describe()}, got shape {shape} (of "
                         f"{_describe(value)}); a staged program runs only the shapes it was "
                         "staged for")
    if type(value) is np.ndarray and not value.dtype.isnative \
            and value.dtype.newbyteorder("=") == spec.dtype:
        value = value.astype(spec.dtype)  # the other byte order (FITS, netCDF): a native copy
    if numpy_dtype(value.dtype) != spec.dtype:
        raise ValueError(f"{where}: expected {spec.describe()}, got dtype "
                         f"{numpy_dtype(value.dtype)}")
    provider = namespace_of((value,))
    if xp is not None and xp is not np and provider is not xp:
        raise TypeError(f"{where}: the program was staged for {provider_name(xp)} arrays, got "
                        f"a {type(value).__name__}")
    if provider is not np:
        device = getattr(value, "device", None)
        if spec.device is None:
            default = default_device(provider)
            if default is not None and not same_device(device, default):
                raise ValueError(f"{where}: expected {spec.describe()} on the default device "
                                 f"{default!r}, got one on device {device!r}")
        elif not same_device(device, spec.device):
            raise ValueError(f"{where}: expected {spec.describe()} on device "
                             f"{spec.device!r}, got one on device {device!r}")
    elif spec.device is not None and not same_device("cpu", spec.device):
        raise ValueError(f"{where}: expected {spec.describe()} on device {spec.device!r}, got "
                         "a NumPy array (device 'cpu')")
    return value


def check_call(in_def: TreeDef, specs: list, args: tuple, kwargs: dict, xp,
               revision: str | None = None) -> list:
    """Match a call against the signature; returns the array operands in graph-input order.

    ``xp`` is the provider the program was staged for: another provider's arrays are refused,
    except for NumPy and None (specs alone, NumPy examples, derived and restored programs),
    whose graph replays on any one provider that serves ``revision``."""
    expected_kw = in_def.children[1].aux
    if set(kwargs) != set(expected_kw):
        missing = sorted(set(expected_kw) - set(kwargs))
        extra = sorted(set(kwargs) - set(expected_kw))
        raise TypeError("keyword arguments do not match the staged signature"
                        + (f"; missing {missing}" if missing else "")
                        + (f"; unexpected {extra}" if extra else ""))
    n_pos = len(in_def.children[0].children)
    if len(args) != n_pos:
        raise TypeError(f"the program takes {n_pos} positional argument"
                        f"{'' if n_pos == 1 else 's'}, got {len(args)}")
    leaves: list = []
    for k, (child, value) in enumerate(zip(in_def.children[0].children, args)):
        leaves_up_to(child, value, (k,), leaves)
    for name, child in zip(expected_kw, in_def.children[1].children):
        leaves_up_to(child, kwargs[name], (name,), leaves)
    operands = []
    for spec, (path, value) in zip(specs, leaves):
        operand = check_leaf(spec, value, path, xp)
        if operand is not None:
            operands.append(operand)
    if xp is None or xp is np:  # any one provider that serves the program's revision
        providers = {id(p): p for p in (namespace_of((a,)) for a in operands
                                        if not isinstance(a, Tracer | bool | int | float
                                                          | complex))}
        if len(providers) > 1:
            names = sorted(provider_name(p) for p in providers.values())
            raise TypeError(f"the arguments come from several array providers ({names}); "
                            "convert them to one provider")
        for p in providers.values():
            if p is not np and revision is not None and revision > getattr(
                    p, "__array_api_version__", revision):
                raise RevisionError(
                    f"the program was staged against Array API {revision}, which "
                    f"{provider_name(p)} (serving up to {p.__array_api_version__}) does not "
                    "serve; stage it against a revision both providers serve")
    return operands


def flat_checks(in_def: TreeDef, specs: list, pos: tuple, kw: dict) -> tuple | None:
    """Per-leaf checks for a signature whose arguments are all leaves, in graph-input order:
    ``(key, kind, a, b)`` with kind 0 an array (shape, dtype), 1 a weak scalar (its Python
    type), 2 a static value."""
    if any(c.kind is not None for part in in_def.children for c in part.children):
        return None  # an argument is a container
    keys = list(range(len(pos))) + sorted(kw)
    checks = []
    for key, spec in zip(keys, specs):
        if isinstance(spec, StaticSpec):
            checks.append((key, 2, spec.value, None))
        elif spec.weak:
            checks.append((key, 1, PYTHON_SCALAR[spec.dtype.kind], None))
        elif spec.device is None:
            checks.append((key, 0, spec.shape, spec.dtype))
        else:
            return None
    return tuple(checks)


def flat_operands(checks: tuple, args: tuple, kwargs: dict) -> list | None:
    """The plan's operands if every leaf passes its check, else None (the full check runs)."""
    operands = []
    for key, kind, a, b in checks:
        value = args[key] if type(key) is int else kwargs.get(key, checks)
        if kind == 0:
            if type(value) is not np.ndarray or value.dtype is not b or value.shape != a:
                return None
            operands.append(value)
        elif kind == 1:
            if type(value) is not a or a is int and not fits_int64(value):
                return None  # the full check names the mismatch
            operands.append(value)
        elif not (value is a or same_value(value, a)):
            return None
    return operands


def _refuse_identity(staged, where: str) -> None:
    """Explain a static mismatch where the staged value is a snapshot that no call can match:
    one whose class compares by identity (the snapshot is a deep copy of what was passed)."""
    try:
        copied = copy.deepcopy(staged)
    except Exception:  # a value that cannot be copied again: it matches only itself
        copied = object()
    if not same_value(staged, copied):
        raise TypeError(
            f"{where}: the staged static value {staged!r} is a snapshot (a deep copy) that no "
            f"value compares equal to: {type(staged).__name__} compares by identity. Give its "
            "class an __eq__ (a frozen dataclass), or pass the fields the function reads as "
            "static values or arrays instead")

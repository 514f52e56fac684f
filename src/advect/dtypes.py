"""Abstract values and the dtype rules both lifetimes share.

An :class:`Aval` is what a staged value knows without data: shape, dtype, whether it came from a
Python scalar (``weak``, so NEP 50 promotion holds), and device. Dtypes are NumPy dtype objects
internally; frontends translate a provider's dtype objects at the boundary.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .errors import UnsupportedDtypeError

__all__ = ["Aval", "aval_of", "result_type", "STAGED_DTYPES", "check_dtype", "is_float",
           "is_complex", "is_inexact", "real_dtype", "float_dtype"]

STAGED_DTYPES = frozenset(
    np.dtype(name)
    for name in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128",
    )
)

# the Python scalar type that stands for each weak category in np.result_type (NEP 50)
_WEAK_PROXY = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


class Aval:
    """Shape, dtype, weakness and device of a value, without its data."""

    __slots__ = ("shape", "dtype", "weak", "device")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, weak: bool = False,
                 device: object = None):
        self.shape = shape
        self.dtype = dtype
        self.weak = weak and not shape  # only a 0-d value can be a Python scalar (NEP 50)
        self.device = device

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        size = 1
        for n in self.shape:
            size *= n
        return size

    def update(self, shape=None, dtype=None, weak=None) -> Aval:
        return Aval(self.shape if shape is None else shape, self.dtype if dtype is None else dtype,
                    self.weak if weak is None else weak, self.device)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Aval) and self.shape == other.shape
                and self.dtype == other.dtype and self.weak == other.weak
                and self.device == other.device)

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak))

    def __repr__(self) -> str:
        dims = ",".join(map(str, self.shape))
        return f"{'weak ' if self.weak else ''}{self.dtype.name}[{dims}]"


_SCALAR_AVALS = {
    bool: Aval((), np.dtype(bool), True),
    int: Aval((), np.dtype(np.int64), True),
    float: Aval((), np.dtype(np.float64), True),
    complex: Aval((), np.dtype(np.complex128), True),
}


def aval_of(x) -> Aval:
    """The aval of a concrete value or tracer (Python scalars are weak)."""
    if type(x) is np.ndarray:  # the hot case first
        return Aval(x.shape, x.dtype)
    aval = _SCALAR_AVALS.get(type(x))
    if aval is not None:
        return aval
    if isinstance(x, np.generic):  # a NumPy scalar (np.sum's result, an element)
        return Aval((), x.dtype)
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval
    if isinstance(x, np.ndarray | np.generic):
        if isinstance(x, np.ndarray):
            from .providers import refuse_subclass

            refuse_subclass(x)  # a masked array or np.matrix: its meaning would be dropped
        return Aval(x.shape, x.dtype)
    return _foreign_aval(x)


def _foreign_aval(x) -> Aval:
    from .providers import numpy_dtype

    if isinstance(x, bool | int | float | complex):  # subclasses such as np.float64 handled above
        return _SCALAR_AVALS[next(t for t in (bool, int, float, complex) if isinstance(x, t))]
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return Aval(tuple(x.shape), numpy_dtype(x.dtype), False, getattr(x, "device", None))
    raise TypeError(f"expected an array or a Python scalar, got {type(x).__name__}")


def result_type(*avals: Aval) -> np.dtype:
    """NumPy 2 promotion (NEP 50): weak Python scalars do not widen arrays."""
    return _result_type(tuple((a.dtype, a.weak) for a in avals))


@lru_cache(maxsize=4096)
def _result_type(keys) -> np.dtype:
    strong = [dtype for dtype, weak in keys if not weak]
    weak = [_WEAK_PROXY[dtype.kind] for dtype, weak in keys if weak]
    if not strong:  # only Python scalars: the widest category wins, at default precision
        return np.result_type(*[np.asarray(w).dtype for w in weak])
    return np.result_type(*strong, *weak)


def check_dtype(dtype, where: str) -> np.dtype:
    """Return ``dtype``, in native byte order, if traced and staged values support it, else a
    named TypeError. (Data in the other byte order, as FITS and netCDF files load, is
    converted where it enters a staged program.)"""
    dtype = np.dtype(dtype)
    if not dtype.isnative:
        dtype = dtype.newbyteorder("=")
    if dtype not in STAGED_DTYPES:
        raise UnsupportedDtypeError(
            f"{where} has dtype {dtype}, which Advect does not support; supported are bool, "
            "int8..int64, uint8..uint64, float16..float64, complex64 and complex128: convert it "
            "with .astype(np.float64) first")
    return dtype


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f"


def is_complex(dtype: np.dtype) -> bool:
    return dtype.kind == "c"


def is_inexact(dtype: np.dtype) -> bool:
    return dtype.kind in "fc"


@lru_cache(maxsize=64)
def real_dtype(dtype: np.dtype) -> np.dtype:
    """float32 for complex64, float64 for complex128, the dtype itself otherwise."""
    return np.empty(0, dtype).real.dtype


@lru_cache(maxsize=64)
def float_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype NumPy's inexact ufuncs (sin, exp, ...) produce for an input of ``dtype``."""
    return dtype if dtype.kind in "fc" else np.sin(np.zeros((), dtype)).dtype

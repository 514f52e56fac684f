"""Which array library (provider) owns a value, and its Array API namespace.

NumPy is always present and is the namespace of plain Python scalars. Other providers are found
through ``__array_namespace__`` (PyTorch through array-api-compat), imported lazily.
"""

from __future__ import annotations

import numpy as np

__all__ = ["namespace_of", "numpy_dtype", "is_array", "provider_name"]

_NAMESPACES: dict[type, object] = {np.ndarray: np}
_SCALARS = (bool, int, float, complex, np.generic)


def namespace_of(args) -> object:
    """The namespace of the first array among ``args`` (NumPy when there is none)."""
    for a in args:
        t = type(a)
        xp = _NAMESPACES.get(t)
        if xp is not None:
            return xp
        if isinstance(a, _SCALARS) or a is None:
            continue
        return _foreign_namespace(a)
    return np


def _foreign_namespace(x) -> object:
    t = type(x)
    if isinstance(x, np.ndarray):
        return np
    if hasattr(x, "__array_namespace__") and t.__module__.split(".")[0] != "torch":
        xp = x.__array_namespace__()
    elif t.__module__.split(".")[0] == "torch":
        from array_api_compat import torch as xp  # torch tensors speak the standard through it
    else:
        return np
    _NAMESPACES[t] = xp
    return xp


def is_array(x) -> bool:
    """Whether ``x`` is a concrete array of some provider (not a Python scalar)."""
    return isinstance(x, np.ndarray) or (hasattr(x, "shape") and hasattr(x, "dtype")
                                         and not isinstance(x, np.generic))


def provider_name(xp) -> str:
    return getattr(xp, "__name__", type(xp).__name__)


_TORCH_NAMES = {"bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32",
                "int64": "int64", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
                "uint64": "uint64", "float16": "float16", "float32": "float32",
                "float64": "float64", "complex64": "complex64", "complex128": "complex128"}


def numpy_dtype(dtype) -> np.dtype:
    """The NumPy dtype that stands for a provider's dtype object."""
    if isinstance(dtype, np.dtype):
        return dtype
    try:
        return np.dtype(dtype)
    except TypeError:
        name = str(dtype).rsplit(".", 1)[-1].lower()  # torch.float32, array_api_strict float32
        if name in _TORCH_NAMES:
            return np.dtype(name)
        raise TypeError(f"unsupported dtype {dtype!r}") from None

"""Which array library (provider) owns a value, and its Array API namespace.

NumPy is always present and is the namespace of plain Python scalars. Other providers are found
through ``__array_namespace__`` (PyTorch through array-api-compat), imported lazily.
"""

from __future__ import annotations

import numpy as np

__all__ = ["namespace_of", "provider_of", "on_provider_of", "numpy_dtype", "is_array",
           "provider_name"]

_NAMESPACES: dict[type, object] = {np.ndarray: np}
_SCALARS = (bool, int, float, complex, np.generic)


def namespace_of(args) -> object:
    """The namespace of the arrays among ``args`` (NumPy when there is none).

    Raises:
        TypeError: if the arrays belong to different providers; one computation uses one.

    Example:
        >>> import numpy as np
        >>> namespace_of((np.ones(2), 3.0)) is np
        True
    """
    found = None
    for a in args:
        t = type(a)
        xp = _NAMESPACES.get(t)
        if xp is None:
            if isinstance(a, _SCALARS) or a is None:
                continue
            xp = _foreign_namespace(a)
        if found is None:
            found = xp
        elif xp is not found:
            raise TypeError(
                f"arrays of two providers meet in one operation ({provider_name(found)} and "
                f"{provider_name(xp)}); convert them to one provider before the transform")
    return np if found is None else found


def provider_of(x) -> object:
    """The provider namespace of an array or a tracer (NumPy for Python scalars).

    A tracer's provider is its trace's ``xp`` attribute when the trace records one (a staging
    trace does), else the provider of the value it wraps.

    Example:
        >>> import numpy as np
        >>> provider_of(np.zeros(3)) is np
        True
    """
    while hasattr(x, "_trace"):
        provider = getattr(x._trace, "xp", None)
        if provider is not None:
            return provider
        inner = getattr(x, "primal", None)
        if inner is None:
            return np
        x = inner
    return namespace_of((x,))


# Libraries whose arrays speak the standard through array-api-compat's wrapper namespace
_COMPAT = frozenset({"torch", "cupy"})


def _foreign_namespace(x) -> object:
    t = type(x)
    if isinstance(x, np.ndarray):
        return np
    root = t.__module__.split(".")[0]
    if root in _COMPAT:
        import array_api_compat  # an optional dependency: only these providers need it

        xp = array_api_compat.array_namespace(x)
    elif hasattr(x, "__array_namespace__"):
        xp = x.__array_namespace__()
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


def on_provider_of(like, value):
    """The NumPy array ``value`` as an array of ``like``'s provider and device, so that index
    maps and constants a frontend builds with NumPy do not mix providers (a no-op for NumPy).

    Example:
        >>> import numpy as np
        >>> on_provider_of(np.ones(2), np.arange(3)).tolist()
        [0, 1, 2]
    """
    if type(value) is not np.ndarray:
        return value
    xp = provider_of(like)
    if xp is np:
        return value
    from .dtypes import aval_of

    return xp.asarray(value, device=aval_of(like).device)

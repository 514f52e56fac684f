"""Which array library (provider) owns a value, and its Array API namespace.

NumPy is always present and is the namespace of plain Python scalars. Other providers are found
through ``__array_namespace__`` (PyTorch through array-api-compat), imported lazily.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

__all__ = ["NUMPY_TYPES", "namespace_of", "provider_of", "on_provider_of", "numpy_dtype",
           "is_array", "provider_name", "default_device", "device_of", "same_device", "to_numpy",
           "refuse_subclass"]

_NAMESPACES: dict[type, object] = {np.ndarray: np}
_SCALARS = (bool, int, float, complex, np.generic)
# scalars of no provider in particular, by exact type (the loop's fast check)
_SCALAR_TYPES = frozenset((bool, int, float, complex, type(None), *(
    np.dtype(c).type for c in "?bhilqBHILQefdgFDG")))
NUMPY_TYPES = _SCALAR_TYPES | {np.ndarray}  # exact types whose namespace is NumPy


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
        if t in _SCALAR_TYPES:
            continue
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
    if found is None or found is np:
        return np
    if getattr(found, "__array_api_version__", _SCALARS_FROM) < _SCALARS_FROM:
        return _scalar_lifting(found)
    return found


# Element-wise functions take a Python scalar for one operand from this revision on; op
# implementations rely on it (weak scalars keep float32 float32), so older providers get them
# as 0-d arrays of the dtype the scalar would take.
_SCALARS_FROM = "2024.12"
_TAKE_SCALARS = frozenset({
    "add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
    "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal",
    "hypot", "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor",
    "maximum", "minimum", "multiply", "nextafter", "not_equal", "pow", "remainder", "subtract",
    "where"})
_KINDS = "biufc"  # bool < int < float < complex
_LIFTING: dict[int, object] = {}


class _ScalarLifting:
    """A provider namespace of a revision before 2024.12: its element-wise functions receive
    Python scalars as 0-d arrays; everything else is the provider's own."""

    def __init__(self, xp):
        self._xp = xp
        self.__name__ = provider_name(xp)

    def __getattr__(self, name):
        fallback = _FALLBACKS.get(name)
        if fallback is not None and self._xp.__array_api_version__ < fallback[0]:
            return functools.partial(fallback[1], self)  # op rules use it; the provider lacks it
        value = getattr(self._xp, name)
        return _lift_scalars(self._xp, value) if name in _TAKE_SCALARS else value


# Functions op implementations call that a provider gains only with a later revision, written
# with older ones: name -> (the revision that adds it, fallback(xp, ...)).
_FALLBACKS = {
    "reciprocal": ("2024.12", lambda xp, x: xp.divide(1.0, x)),
    "maximum": ("2023.12", lambda xp, x, y: xp.where(xp.greater_equal(x, y), x, y)),
    "minimum": ("2023.12", lambda xp, x, y: xp.where(xp.less_equal(x, y), x, y)),
    "clip": ("2023.12", lambda xp, x, min=None, max=None: _clip(xp, x, min, max)),
}


def _clip(xp, x, lo, hi):
    if lo is not None:
        x = xp.where(xp.less(x, lo), lo, x)
    if hi is not None:
        x = xp.where(xp.greater(x, hi), hi, x)
    return x


def _scalar_lifting(xp):
    proxy = _LIFTING.get(id(xp))
    if proxy is None:
        proxy = _LIFTING[id(xp)] = _ScalarLifting(xp)
    return proxy


def _lift_scalars(xp, fn):
    def lifted(*args, **kwargs):
        arrays = [a for a in args if hasattr(a, "shape")]
        if not arrays or len(arrays) == len(args):
            return fn(*args, **kwargs)
        kinds = [_KINDS.index(numpy_dtype(a.dtype).kind) for a in arrays]
        ref = arrays[kinds.index(max(kinds))]
        out = []
        for a in args:
            if isinstance(a, bool | int | float | complex):
                scalar = np.asarray(a).dtype  # NEP 50: a weak scalar adopts a wider kind
                dtype = (ref.dtype if _KINDS.index(scalar.kind) <= max(kinds)
                         else getattr(xp, scalar.name))
                a = xp.asarray(a, dtype=dtype, device=ref.device)
            out.append(a)
        return fn(*out, **kwargs)
    return lifted


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
        refuse_subclass(x)
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


# ndarray subclasses that only change where the data lives, not what operations mean
_PLAIN_SUBCLASSES = (np.memmap,)


def refuse_subclass(x, where: str = "") -> None:
    """Raise ``TypeError`` for an ndarray subclass whose meaning Advect would silently drop
    (a masked array's mask, ``np.matrix``'s products and 2-d reductions); NumPy's ``memmap``
    passes. ``where`` names the argument.

    Example:
        >>> refuse_subclass(np.ones(2))  # a plain array passes
        >>> refuse_subclass(np.matrix([[1.0]]))
        Traceback (most recent call last):
        ...
        TypeError: np.matrix is not supported: ...
    """
    if type(x) is np.ndarray or not isinstance(x, np.ndarray) or isinstance(x, _PLAIN_SUBCLASSES):
        return
    where = f"{where}: " if where else ""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(
            f"{where}np.ma.MaskedArray is not supported: Advect computes with plain arrays and "
            "would silently ignore the mask. Pass m.filled(value) (masked entries replaced) or "
            "m.data / np.asarray(m) (the mask dropped), and apply the mask inside the function "
            "with np.where(mask, x, value)")
    if isinstance(x, np.matrix):
        raise TypeError(
            f"{where}np.matrix is not supported: Advect follows ndarray semantics (* is "
            "element-wise, reductions drop axes), not np.matrix's; pass np.asarray(m) and use "
            "@ for matrix products")
    raise TypeError(
        f"{where}the ndarray subclass {type(x).__module__}.{type(x).__qualname__} is not "
        "supported: Advect computes with plain arrays and would silently drop what the "
        "subclass changes; pass np.asarray(x)")


def is_array(x) -> bool:
    """Whether ``x`` is a concrete array of some provider (not a Python scalar)."""
    return isinstance(x, np.ndarray) or (hasattr(x, "shape") and hasattr(x, "dtype")
                                         and not isinstance(x, np.generic))


_DEFAULT_DEVICES: dict[int, object] = {id(np): "cpu"}


def default_device(xp) -> object:
    """The device a provider puts arrays on when none is named (None if it cannot say).

    Example:
        >>> import numpy as np
        >>> default_device(np)
        'cpu'
    """
    key = id(getattr(xp, "_xp", xp))  # through the scalar-lifting proxy
    if key not in _DEFAULT_DEVICES:
        try:
            device = xp.__array_namespace_info__().default_device()
        except Exception:  # a provider before 2023.12, or one without the inspection API
            device = None
        _DEFAULT_DEVICES[key] = device
    return _DEFAULT_DEVICES[key]


def same_device(a, b) -> bool:
    """Whether two device objects (or a device and its saved name) are the same device."""
    if a is b:
        return True
    try:
        if a == b:
            return True
    except Exception:
        pass
    return str(a) == str(b)


def device_of(x) -> object:
    """``x``'s device if it is not its provider's default device, else None (also for NumPy,
    Python scalars and providers without devices). This is what an ArraySpec records.

    Example:
        >>> import numpy as np
        >>> device_of(np.ones(2)) is None
        True
    """
    if type(x) is np.ndarray or isinstance(x, _SCALARS) or not hasattr(x, "device"):
        return None
    device = x.device
    default = default_device(namespace_of((x,)))
    return None if default is None or same_device(device, default) else device


def to_numpy(x) -> np.ndarray:
    """A NumPy copy of a provider's array in C order, moved to the provider's default device
    first when its own device cannot export to NumPy (array-api-strict's extra devices, say)."""
    refuse_subclass(x)  # np.array would drop a mask or a matrix's meaning
    if type(x) is np.ndarray:
        return np.array(x, copy=True, order="C")
    try:
        return _copied(x)
    except (TypeError, ValueError, RuntimeError):
        if not hasattr(x, "to_device"):
            raise
        default = default_device(namespace_of((x,)))
        if default is None:
            raise
        return _copied(x.to_device(default))


def _copied(x) -> np.ndarray:
    with warnings.catch_warnings():  # torch's __array__ takes no copy keyword: NumPy copies
        warnings.filterwarnings("ignore", "__array__ implementation doesn't accept a copy",
                                DeprecationWarning)
        return np.array(x, copy=True, order="C")


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

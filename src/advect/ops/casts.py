"""Casts: ``astype`` between dtypes, and ``python_scalar``, a 0-d value as a weak Python
scalar."""

from __future__ import annotations

import numpy as np

from .._compat import provider_function
from ..core import Op
from ..dtypes import Aval, aval_of
from ._rules import fit


def _astype_abstract(x, *, dtype):
    return Aval(x.shape, np.dtype(dtype), False, x.device)


def _astype_jvp(primals, tangents, out, *, dtype):
    (dx,) = tangents
    if np.dtype(dtype).kind not in "fc":
        return None
    if aval_of(dx).weak:  # a Python scalar input's tangent: strong, as the primal now is
        return astype(dx, dtype=np.dtype(dtype).name)
    return fit(dx, out)


def _astype_transpose(ct, x, *, dtype):
    return (fit(ct, Aval(x.shape, x.dtype)),)


def _astype_impl(xp, x, *, dtype):
    if type(x) in (bool, int, float, complex):  # a Python scalar: a weak input's value
        # cast as NumPy casts the scalar's array (nan to int, 1j to float, 300 to int8 do not
        # raise): no longer weak
        out = provider_function(xp, "astype")(xp.asarray(x), _provider_dtype(xp, dtype))
        return out[()] if xp is np else out  # a NumPy scalar, as NumPy's functions give
    return provider_function(xp, "astype")(x, _provider_dtype(xp, dtype))


astype = Op("astype", allocates=False, attrs={"dtype": "dtype"}, abstract=_astype_abstract,
            impl=_astype_impl, jvp=_astype_jvp, transpose=_astype_transpose, elementwise=True,
            strong=True)


# ``python_scalar``: a 0-d value as the Python scalar ``x.item()`` gives, weak, so it promotes
# as a Python number does (``int8_array.item() * 3`` is 300). ``dtype`` names the weak dtype:
# 'bool', 'int64', 'float64' or 'complex128'.
_PYTHON_TYPES = {"bool": bool, "int64": int, "float64": float, "complex128": complex}
# the weak dtype of the Python scalar each kind of NumPy value converts to (``x.item()``)
PYTHON_DTYPES = {"b": "bool", "i": "int64", "u": "int64", "f": "float64", "c": "complex128"}


def _python_scalar_abstract(x, *, dtype):
    if x.shape:
        raise ValueError(f"python_scalar takes a 0-d value, not one of shape {x.shape}")
    return Aval((), np.dtype(dtype), True, x.device)


def _python_scalar_transpose(ct, x, *, dtype):
    return (astype(ct, dtype=aval_of(x).dtype.name),)


python_scalar = Op("python_scalar", attrs={"dtype": "python_dtype"},
                   abstract=_python_scalar_abstract,
                   impl=lambda xp, x, *, dtype: _PYTHON_TYPES[dtype](x), linear=True,
                   transpose=_python_scalar_transpose, elementwise=True)


def _provider_dtype(xp, name):
    return np.dtype(name) if xp is np else getattr(xp, name)


__all__ = [name for name, value in globals().items() if isinstance(value, Op)]  # ops only

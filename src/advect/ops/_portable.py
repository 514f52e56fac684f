"""Indexing kernels for providers whose namespace lacks what NumPy's indexing offers.

The standard leaves out integer-array ``__setitem__``, integer arrays mixed with slices, and an
accumulating scatter (``np.add.at``). NumPy and CuPy do all of these natively. Other CPU
providers (array-api-strict, PyTorch CPU) run such an index through NumPy on a zero-copy DLPack
view and hand the result back on the array's own device.
"""

from __future__ import annotations

import numpy as np

__all__ = ["complete", "getitem", "add_basic", "scatter_add", "scatter", "numeric", "where",
           "einsum"]



def complete(key: tuple) -> tuple:
    """A basic index that names every axis (the standard requires it): add a trailing ``...``."""
    if any(e is Ellipsis or hasattr(e, "shape") for e in key):
        return key
    return (*key, Ellipsis)


def _has_arrays(key) -> bool:
    return any(hasattr(e, "shape") for e in key)


def _host(x):
    if not hasattr(x, "__dlpack__"):
        return x
    try:
        return np.from_dlpack(x)
    # a provider before 2023.12 refuses DLPack's max_version; NumPy 2.0 cannot export a
    # read-only array through DLPack (BufferError)
    except (TypeError, ValueError, BufferError):
        return np.asarray(x)


def _host_key(key):
    return tuple(_host(e) if hasattr(e, "shape") else e for e in key)


def _native(attempt):
    """``attempt()``, or None where the provider refuses that index (array-api-strict refuses
    integer arrays mixed with slices, and integer-array writes)."""
    try:
        return attempt()
    except (IndexError, TypeError, NotImplementedError):
        return None


def getitem(xp, x, key):
    """``x[key]`` for any provider, array indices mixed with slices included."""
    if xp is np or not _has_arrays(key):
        return x[complete(key) if xp is not np else key]
    out = _native(lambda: x[key])
    if out is None:
        out = xp.asarray(np.asarray(_host(x)[_host_key(key)]), device=x.device)
    return out


def add_basic(x, key, v):
    """A copy of the NumPy array ``x`` with ``v`` added at the basic index ``key``."""
    out = np.array(x)  # a copy, and an array for a NumPy scalar x (0-d results are those)
    out[key] += v
    return out


def scatter_add(xp, x, key, v):
    """A copy of ``x`` with ``v`` added at ``key``; repeated indices accumulate."""
    if xp is np:
        if not _has_arrays(key):
            return add_basic(x, key, v)
        out = np.array(x)  # a copy, and an array for a NumPy scalar x (0-d results are those)
        np.add.at(out, key, v)
        return out
    if not _has_arrays(key):
        out = xp.asarray(x, copy=True)
        key, v = _without_new_axes(xp, out, complete(key), v)
        out[key] = out[key] + v
        return out
    add_at = _add_at(xp)
    if add_at is not None:
        out = xp.asarray(x, copy=True)
        add_at(out, key, v)
        return out
    out = np.array(_host(x))
    np.add.at(out, _host_key(key), _host(v))
    return xp.asarray(out, device=x.device)


def _without_new_axes(xp, out, key, v):
    """``(key, v)`` with the new axes (``None``) dropped from a basic ``key`` and from ``v`` to
    match: the standard allows ``None`` when reading an index only (array-api-strict refuses
    it in ``__setitem__``)."""
    if not any(e is None for e in key):
        return key, v
    kept = tuple(e for e in key if e is not None)
    if not hasattr(v, "shape"):  # a Python scalar fills any shape
        return kept, v
    return kept, xp.reshape(xp.broadcast_to(v, out[key].shape), out[kept].shape)


def _add_at(xp):
    """The provider's unbuffered ``add.at`` (NumPy-style ufuncs: CuPy, also when reached
    through array-api-compat's wrapper namespace), or None."""
    add_at = getattr(getattr(xp, "add", None), "at", None)
    if add_at is None and getattr(xp, "__name__", "").endswith("cupy"):
        import cupy

        add_at = cupy.add.at
    return add_at


def scatter(xp, x, key, v):
    """A copy of ``x`` with ``v`` written at ``key``."""
    out = xp.asarray(x, copy=True)
    if xp is np:
        out[key] = v
        return out
    if not _has_arrays(key):
        key, v = _without_new_axes(xp, out, complete(key), v)
        out[key] = v
        return out

    def write():
        out[key] = v
        return out

    result = _native(write)
    if result is None:
        host = np.array(_host(x))
        host[_host_key(key)] = _host(v)
        result = xp.asarray(host, device=x.device)
    return result


def numeric(xp, x):
    """``x`` with bool turned into int64 for providers whose sums and arg-reductions refuse
    bool (the standard defines them for numeric dtypes only)."""
    if xp is np or x.dtype != xp.bool:
        return x
    return xp.astype(x, xp.int64)


def where(xp, c, x, y):
    """``xp.where`` that also takes two Python scalars (the standard allows at most one)."""
    if xp is not np and not hasattr(x, "shape") and not hasattr(y, "shape"):
        x = xp.asarray(x, dtype=getattr(xp, np.result_type(x, y).name), device=c.device)
    return xp.where(c, x, y)


def einsum(xp, subscripts, *xs):
    """``einsum`` for a CPU provider whose namespace has none: NumPy on DLPack views."""
    out = np.einsum(subscripts, *(_host(x) for x in xs))
    return xp.asarray(out, device=xs[0].device)

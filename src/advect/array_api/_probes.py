"""What the provider refuses, and how it reads its inputs, asked of the provider itself.

Translations record canonical ops, whose kernels accept more than a strict provider does
(bool sums, ``imag`` of real arrays, arg-reductions of bool). So that a traced call refuses
what the eager call refuses, in dynamic transforms and while staging alike, the namespace runs
the provider's own function once on small arrays of the same dtypes and ranks, and raises the
error it raised. Verdicts are cached per namespace, keyed by dtypes, ranks and keywords.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..core import Tracer
from ..dtypes import aval_of
from ..providers import numpy_dtype, provider_of

__all__ = ["PROBED", "refuse_as_provider", "refuse_inplace_as_provider",
           "refuse_nested_as_provider", "provider_index", "cholesky_reads_upper"]

# Functions (with the element-wise ones of _tables.ELEMENTWISE) whose refusals depend on
# dtypes, ranks and keywords only, so that a call on arrays of ones answers for the real call.
PROBED = frozenset({
    "conj", "real", "imag", "round", "clip", "sum", "prod", "max", "min", "mean", "std", "var",
    "cumulative_sum", "cumulative_prod", "argmax", "argmin", "argsort", "sort", "all", "any",
    "count_nonzero", "matmul", "linalg.matmul", "vecdot", "linalg.vecdot", "tensordot",
    "linalg.tensordot", "linalg.outer", "linalg.trace", "linalg.vector_norm", "astype",
    "isin", "meshgrid", "tile", "full_like",
    # the complex transforms take complex input, the real ones real input (the standard's rule)
    "fft.fft", "fft.ifft", "fft.fftn", "fft.ifftn", "fft.rfft", "fft.rfftn", "fft.ihfft",
    # a 1 x 1 matrix of ones is symmetric positive definite: only dtypes decide
    "linalg.cholesky", "linalg.det", "linalg.eigh", "linalg.eigvalsh", "linalg.inv",
    "linalg.matrix_norm", "linalg.matrix_power", "linalg.matrix_rank", "linalg.pinv",
    "linalg.qr", "linalg.slogdet", "linalg.solve", "linalg.svd", "linalg.svdvals",
})
_SCALAR_ONE = {"b": True, "i": 1, "u": 1, "f": 1.0, "c": 1.0 + 0.0j}
_UNPROBED = object()


def _is_array(v) -> bool:
    return isinstance(v, Tracer) or (hasattr(v, "shape") and hasattr(v, "dtype")
                                     and not isinstance(v, type))  # NumPy's scalar types


# Keywords that carry data (clip's bounds, var's correction, the tolerances): a Python scalar
# there counts like a positional operand; other scalar keywords (orders, axes) by their value
_DATA_KEYWORDS = frozenset({"min", "max", "correction", "rtol"})


def _scalar_class(v):
    """The Python scalars the provider treats as it treats ``v``: those of its type, and for an
    int those of its sign and size, which decide whether it fits an integer dtype (int8 + 1000
    overflows) and whether it is a negative power."""
    if isinstance(v, int) and not isinstance(v, bool):
        return int, v < 0, (v if v >= 0 else ~v).bit_length()
    return type(v)


def _representative(cls):
    """The member of a ``_scalar_class`` that stands in for all of them, so that a verdict
    never depends on the value of the first one probed (clip(x, 2.0, 1.0) refuses min > max;
    clip(x, 0.0, 1.0) must not inherit that)."""
    if type(cls) is tuple:
        _, negative, bits = cls
        return ~((1 << bits) - 1) if negative else (1 << bits) - 1
    return cls(1)


def _key_of(v, data: bool):
    if isinstance(v, Tracer):  # the common case first
        aval = v.aval
        return aval.dtype.kind if aval.weak else (aval.dtype, len(aval.shape))
    if isinstance(v, bool | int | float | complex):
        return _scalar_class(v) if data else (type(v), v)
    if _is_array(v):
        return numpy_dtype(v.dtype), len(v.shape)
    if type(v) is tuple:  # (2,) == (2.0,), but tile refuses the float
        return tuple(_key_of(e, False) for e in v)
    return v


def _stand_in(ctx, v, data: bool):
    if isinstance(v, bool | int | float | complex):
        return _representative(_scalar_class(v)) if data else v
    if not _is_array(v):
        return v
    if isinstance(v, Tracer) and aval_of(v).weak:
        return _SCALAR_ONE[aval_of(v).dtype.kind]
    return ctx.xp.ones((1,) * len(v.shape), dtype=ctx.dtype_of(v), device=v.device)


def refuse_as_provider(ctx, qualname: str, provider_fn, args: tuple, kwargs: dict) -> None:
    """Raise the error the provider raises for ``provider_fn(*args, **kwargs)``, if any."""
    try:
        key = (qualname, *[_key_of(a, True) for a in args],
               *[(k, _key_of(v, k in _DATA_KEYWORDS)) for k, v in kwargs.items()])
        verdict = ctx.probes.get(key, _UNPROBED)
    except TypeError:  # an unhashable argument: nothing to cache, nothing to check
        return
    if verdict is _UNPROBED:
        verdict = ctx.probes[key] = _probe(ctx, provider_fn, args, kwargs)
    if verdict is not None:
        raise verdict[0](verdict[1])


def _probe(ctx, provider_fn, args, kwargs):
    stand_ins = [_stand_in(ctx, a, True) for a in args]
    kw = {k: _stand_in(ctx, v, k in _DATA_KEYWORDS) for k, v in kwargs.items()}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            provider_fn(*stand_ins, **kw)
        except Exception as e:  # noqa: BLE001 (the provider's refusal, whatever its class)
            return type(e), str(e)
    return None


def refuse_nested_as_provider(ctx, obj) -> None:
    """Raise the error the provider's ``asarray`` raises for the nested list ``obj`` of
    tracers, arrays and scalars (array-api-strict refuses arrays inside a list)."""
    def stand_in(v):
        return [stand_in(e) for e in v] if isinstance(v, list | tuple) else \
            _stand_in(ctx, v, False) if isinstance(v, Tracer) else v

    verdict = _probe(ctx, ctx.xp.asarray, (stand_in(obj),), {})
    if verdict is not None:
        raise verdict[0](verdict[1])


def refuse_inplace_as_provider(x, name: str, other) -> None:
    """Raise the error the provider of tracer ``x`` raises for ``x <name> other`` (``name``
    an in-place operator, ``"__iadd__"``) on arrays of the same dtypes, if any. The standard
    keeps x's dtype: array-api-strict refuses a promotion that would change it, where NumPy
    and PyTorch cast back."""
    from . import namespace_for, provider_revisions  # the package imports this module

    if not provider_revisions(provider_of(x)):  # outside the standard: NumPy's casting rule
        return
    ctx = namespace_for(x)._context
    refuse_as_provider(ctx, name, lambda a, b: getattr(a, name)(b), (x, other), {})


_NO_VALUE = object()


def _index_entry_key(k):
    """The cache key of one index entry: what the provider's verdict depends on (an int's
    value only through its bounds, which the gather checks; a slice's bounds and step
    themselves, as array-api-strict refuses a stop past the axis)."""
    if isinstance(k, Tracer):
        aval = k.aval
        return "traced", aval.dtype, aval.shape, aval.weak
    if type(k) is slice:
        return "slice", k.start, k.stop, k.step
    if isinstance(k, int) and not isinstance(k, bool):
        return int
    if isinstance(k, np.generic):
        return type(k)
    if _is_array(k):
        return type(k), numpy_dtype(k.dtype), tuple(k.shape)
    hash(k)  # None, Ellipsis, bool; a list raises TypeError: probed, not cached
    return k


def _value_key(v):
    return _scalar_class(v) if isinstance(v, bool | int | float | complex) else \
        _index_entry_key(v)


def _index_stand_in(ctx, k):
    if isinstance(k, Tracer):
        aval = k.aval
        if aval.weak:
            return _SCALAR_ONE[aval.dtype.kind] if aval.dtype.kind == "b" else 0
        return ctx.xp.zeros(aval.shape, dtype=ctx.dtype(aval.dtype), device=k.device)
    if isinstance(k, int | np.integer) and not isinstance(k, bool):
        return 0  # every in-bounds integer reads alike; the gather checks the bounds
    return k


def _probe_index(ctx, x, aval, entries, value):
    stand_ins = tuple(_index_stand_in(ctx, k) for k in entries)
    dtype = ctx.dtype(aval.dtype)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if value is _NO_VALUE:
                base = ctx.xp.broadcast_to(ctx.xp.zeros((), dtype=dtype, device=x.device),
                                           aval.shape)
                base[stand_ins]
            else:
                base = ctx.xp.zeros(aval.shape, dtype=dtype, device=x.device)
                if isinstance(value, Tracer):
                    value = (_SCALAR_ONE[value.aval.dtype.kind] if value.aval.weak else
                             ctx.xp.zeros(value.aval.shape, dtype=ctx.dtype_of(value),
                                          device=value.device))
                elif isinstance(value, bool | int | float | complex):
                    value = _representative(_scalar_class(value))
                base[stand_ins] = value
        except Exception as e:  # noqa: BLE001 (the provider's refusal, whatever its class)
            return type(e), str(e)
    return None


def provider_index(x, key, value=_NO_VALUE):
    """``key`` for ``x[key]`` (or ``x[key] = value``) on a tracer ``x`` of a provider other
    than NumPy: raise the error the provider raises for that index (array-api-strict refuses
    a partial multi-axis index, a slice past the axis, index arrays mixed with slices, list
    and NumPy index arrays, integer arrays in a write), and otherwise return the key with its
    list and NumPy index arrays as the provider's own (PyTorch takes them eagerly)."""
    from . import namespace_for, provider_revisions  # the package imports this module

    xp = provider_of(x)
    if xp is np or not provider_revisions(xp):  # NumPy tracers keep NumPy's leniency
        return key
    entries = key if type(key) is tuple else (key,)
    if any(type(k) is slice and not all(p is None or type(p) is int
                                        for p in (k.start, k.stop, k.step)) for k in entries):
        return key  # a traced or NumPy slice bound: the gather decides
    ctx = namespace_for(x)._context
    aval = x.aval
    try:
        cache_key = ("__getitem__" if value is _NO_VALUE else "__setitem__", aval.dtype,
                     aval.shape, *map(_index_entry_key, entries),
                     *(() if value is _NO_VALUE else (_value_key(value),)))
        verdict = ctx.probes.get(cache_key, _UNPROBED)
    except TypeError:  # a list: probed, not cached
        cache_key, verdict = None, _UNPROBED
    if verdict is _UNPROBED:
        verdict = _probe_index(ctx, x, aval, entries, value)
        if cache_key is not None:
            ctx.probes[cache_key] = verdict
    if verdict is not None:
        raise verdict[0](verdict[1])
    if not any(isinstance(k, list | np.ndarray) for k in entries):
        return key
    from ..numpy._indexing import _as_index_array

    entries = tuple(ctx.xp.asarray(_as_index_array(k), device=x.device, copy=True)
                    if isinstance(k, list | np.ndarray) else k for k in entries)
    return entries if type(key) is tuple else entries[0]


def cholesky_reads_upper(ctx) -> bool:
    """Whether the provider's ``linalg.cholesky(upper=True)`` factors the upper triangle of its
    input (NumPy and PyTorch) rather than the lower one (array-api-strict); the standard
    leaves it open."""
    verdict = ctx.probes.get("cholesky upper")
    if verdict is None:
        probe = ctx.xp.asarray([[1.0, 0.0], [1.0, 2.0]])  # lower read: U[0, 1] = 1; upper: 0
        upper = ctx.xp.linalg.cholesky(probe, upper=True)
        verdict = ctx.probes["cholesky upper"] = bool(upper[0, 1] == 0)
    return verdict

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
           "cholesky_reads_upper"]

# Functions (with the element-wise ones of _tables.ELEMENTWISE) whose refusals depend on
# dtypes, ranks and keywords only, so that a call on arrays of ones answers for the real call.
PROBED = frozenset({
    "conj", "real", "imag", "round", "clip", "sum", "prod", "max", "min", "mean", "std", "var",
    "cumulative_sum", "cumulative_prod", "argmax", "argmin", "argsort", "sort", "all", "any",
    "count_nonzero", "matmul", "linalg.matmul", "vecdot", "linalg.vecdot", "tensordot",
    "linalg.tensordot", "linalg.outer", "linalg.trace", "linalg.vector_norm", "astype",
    "isin", "meshgrid",
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

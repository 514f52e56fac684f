"""Name -> translation tables: how each Array API function on tracers becomes canonical ops.

``TRANSLATIONS`` maps a qualified name (``"sin"``, ``"linalg.solve"``) to
``translation(ctx, *args, **kwargs)``, where ``ctx`` is the namespace's Context (provider and
revision). Element-wise functions are one table line each; the rest live in the topic modules
imported at the bottom, registered with ``@translates``.
"""

from __future__ import annotations

from .. import ops
from ..dtypes import aval_of
from ..errors import TracingError

__all__ = ["TRANSLATIONS", "NEEDS", "translates", "op_named", "ELEMENTWISE"]

TRANSLATIONS: dict = {}
NEEDS: dict[str, tuple[str, ...]] = {}  # name -> canonical ops beyond the core set it binds


def translates(*names, needs=()):
    """Register the decorated function as the translation of each qualified name; ``needs``
    names the canonical ops it looks up with ``op_named``."""
    def register(fn):
        for name in names:
            TRANSLATIONS[name] = fn
            NEEDS[name] = tuple(needs)
        return fn
    return register


def op_named(name: str):
    """The canonical op ``name``, or a TracingError when this build of Advect lacks it."""
    op = ops.REGISTRY.get(name)
    if op is None:
        raise TracingError(f"the canonical operation {name!r} is not available, so this Array "
                           "API function cannot be traced")
    return op


# Element-wise functions whose canonical op has the Array API name (STYLE: ops take the
# Array API spelling where one exists).
ELEMENTWISE = (
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "cos", "cosh", "divide", "equal", "exp", "expm1", "floor", "floor_divide",
    "greater", "greater_equal", "isfinite", "isinf", "isnan", "less", "less_equal", "log",
    "log1p", "log2", "log10", "logaddexp", "logical_and", "logical_not", "logical_or",
    "logical_xor", "multiply", "negative", "not_equal", "positive", "pow", "remainder", "sign",
    "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc", "copysign", "hypot",
    "maximum", "minimum", "signbit", "nextafter", "reciprocal",
)


def _elementwise(op_name: str):
    def translation(ctx, *args):
        return op_named(op_name)(*args)
    translation.__name__ = op_name
    return translation


for _name in ELEMENTWISE:
    translates(_name, needs=(_name,))(_elementwise(_name))


@translates("conj")
def _conj(ctx, x, /):
    return ops.conj(x) if aval_of(x).dtype.kind == "c" else x


@translates("real")
def _real(ctx, x, /):
    return ops.real(x) if aval_of(x).dtype.kind == "c" else x


@translates("imag")
def _imag(ctx, x, /):
    return ops.imag(x) if aval_of(x).dtype.kind == "c" else ops.zeros_like(x)


@translates("round")
def _round(ctx, x, /):
    return ops.round(x, decimals=0)


@translates("clip")
def _clip(ctx, x, /, min=None, max=None):
    if min is None and max is None:
        return x
    if min is None:
        out = ops.minimum(x, max)
    elif max is None:
        out = ops.maximum(x, min)
    else:
        out = ops.clip(x, min, max)
    dtype = aval_of(x).dtype
    return out if aval_of(out).dtype == dtype else ops.astype(out, dtype=dtype.name)


from . import _fft, _functions, _linalg, _padding, _statistics  # noqa: E402,F401  (they register translations)

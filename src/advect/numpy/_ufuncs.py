"""NumPy ufuncs on traced arrays: one table line per ufunc, plus the ufunc methods."""

from __future__ import annotations

import numpy as np

from .. import ops
from ..errors import TracingError
from ._methods import _operand

__all__ = ["UFUNCS", "array_ufunc"]

UFUNCS = {
    np.add: ops.add, np.subtract: ops.subtract, np.multiply: ops.multiply,
    np.divide: ops.divide, np.negative: ops.negative, np.positive: ops.positive,
    np.power: ops.pow, np.square: ops.square, np.sqrt: ops.sqrt, np.cbrt: ops.cbrt,
    np.reciprocal: ops.reciprocal, np.absolute: ops.abs, np.sign: ops.sign,
    np.exp: ops.exp, np.exp2: ops.exp2, np.expm1: ops.expm1, np.log: ops.log,
    np.log2: ops.log2, np.log10: ops.log10, np.log1p: ops.log1p, np.logaddexp: ops.logaddexp,
    np.logaddexp2: ops.logaddexp2,
    np.sin: ops.sin, np.cos: ops.cos, np.tan: ops.tan, np.arcsin: ops.asin, np.arccos: ops.acos,
    np.arctan: ops.atan, np.arctan2: ops.atan2, np.sinh: ops.sinh, np.cosh: ops.cosh,
    np.tanh: ops.tanh, np.arcsinh: ops.asinh, np.arccosh: ops.acosh, np.arctanh: ops.atanh,
    np.hypot: ops.hypot, np.deg2rad: ops.deg2rad, np.rad2deg: ops.rad2deg,
    np.radians: ops.deg2rad, np.degrees: ops.rad2deg,
    np.maximum: ops.maximum, np.minimum: ops.minimum, np.copysign: ops.copysign,
    np.remainder: ops.remainder, np.fmod: ops.fmod, np.floor_divide: ops.floor_divide,
    np.floor: ops.floor, np.ceil: ops.ceil, np.trunc: ops.trunc,
    np.equal: ops.equal, np.not_equal: ops.not_equal, np.less: ops.less,
    np.less_equal: ops.less_equal, np.greater: ops.greater, np.greater_equal: ops.greater_equal,
    np.logical_and: ops.logical_and, np.logical_or: ops.logical_or,
    np.logical_xor: ops.logical_xor, np.logical_not: ops.logical_not,
    np.isnan: ops.isnan, np.isinf: ops.isinf, np.isfinite: ops.isfinite,
    np.signbit: ops.signbit, np.conjugate: ops.conj, np.matmul: ops.matmul,
}

# ufunc methods: the reduction op each ufunc's .reduce means
REDUCERS = {np.add: ops.reduce_sum, np.multiply: ops.reduce_prod,
            np.maximum: ops.reduce_max, np.minimum: ops.reduce_min}


def array_ufunc(ufunc, method, inputs, kwargs):
    if method == "__call__":
        op = UFUNCS.get(ufunc)
        if op is None:
            raise TracingError(f"numpy.{ufunc.__name__} is not supported on traced arrays")
        out = kwargs.pop("out", None)
        dtype = kwargs.pop("dtype", None)
        kwargs.pop("casting", None)
        where = kwargs.pop("where", True)
        if kwargs:
            raise TypeError(f"numpy.{ufunc.__name__}: unsupported keywords {sorted(kwargs)} "
                            "on traced arrays")
        args = [_operand(a) for a in inputs]
        if dtype is not None:
            args = [ops.astype(a, dtype=np.dtype(dtype).name) if hasattr(a, "dtype") else a
                    for a in args]
        result = op(*args)
        if where is not True:
            if out is None:
                raise TypeError(f"numpy.{ufunc.__name__}: where= without out= leaves entries "
                                "uninitialized; pass out= or use np.where")
            result = ops.where(where, result, out[0])
        if out is not None:
            from ._mutation import assign_inplace
            return assign_inplace(out[0], result, f"numpy.{ufunc.__name__}(out=...)")
        return result
    if method == "reduce" and ufunc in REDUCERS:
        from ._functions import reduction
        (a,) = inputs
        axis = kwargs.pop("axis", 0)
        keepdims = kwargs.pop("keepdims", False)
        return reduction(REDUCERS[ufunc], a, axis, keepdims)
    raise TracingError(f"numpy.{ufunc.__name__}.{method} is not supported on traced arrays")

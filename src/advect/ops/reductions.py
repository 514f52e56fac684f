"""Reductions and scans. Axes arrive normalized (a sorted tuple of non-negative ints)."""

from __future__ import annotations

import numpy as np

from .. import ops
from .._compat import provider_function
from ..core import Op, Tracer, apply_linear
from ..dtypes import Aval, aval_of
from . import _portable
from ._rules import add_tangents, broadcast_shapes, fit, reduced_shape


def _reduce_abstract(x, *, axes, keepdims):
    # a Python scalar in gives a Python scalar out (weak), as a dynamic call does
    return Aval(reduced_shape(x.shape, axes, keepdims), x.dtype, x.weak, x.device)


def _sum_abstract(x, *, axes, keepdims):
    # NumPy sums bool and small integers in the default integer type
    dtype = x.dtype
    if dtype.kind == "b" or (dtype.kind in "iu" and dtype.itemsize < 8):
        dtype = np.dtype(np.uint64 if dtype.kind == "u" else np.int64)
    return Aval(reduced_shape(x.shape, axes, keepdims), dtype, x.weak, x.device)


def _reduce_sum_transpose(ct, x, *, axes, keepdims):
    # x is a linear input here: only its .shape and .dtype are known. The cotangent is returned
    # unexpanded: it broadcasts to x.shape, and the reverse pass expands it only if a
    # transpose needs the exact shape (the sum of a broadcast is never materialized).
    if not keepdims and axes != tuple(range(len(axes))):
        ct = ops.expand_dims(ct, axes=axes)
    return (ct,)


def _whole(xp, x, axes):
    """``axes``, or None where they are all of x's on a provider other than NumPy: PyTorch's
    product over every axis rounds differently when the axes are named one by one."""
    return None if xp is not np and len(axes) == len(x.shape) else axes


def _reduce_sum_impl(xp, x, *, axes, keepdims):
    if xp is np:  # np.add.reduce is np.sum without its Python layer
        return np.add.reduce(x, axis=axes, keepdims=keepdims)
    return xp.sum(_portable.numeric(xp, x), axis=_whole(xp, x, axes), keepdims=keepdims)


def _reduce_sum_jvp(primals, tangents, out, *, axes, keepdims):
    # a sum of nothing is the constant 0: a zero tangent, not a computed 0.0, which a sqrt or
    # a division after it would turn into NaN (np.linalg.norm of an empty slice) where reverse
    # mode and central differences give 0
    x = primals[0]
    if (x.size if type(x) is np.ndarray else aval_of(x).size) == 0:
        return None
    return apply_linear(reduce_sum, tangents, primals, out, {"axes": axes, "keepdims": keepdims})


reduce_sum = Op(
    "reduce_sum", allocates=True, attrs={"axes": "axes", "keepdims": "bool"},
    abstract=_sum_abstract, impl=_reduce_sum_impl, jvp=_reduce_sum_jvp, linear=True,
    transpose=_reduce_sum_transpose,
)


def _sum_where_abstract(x, where, *, axes, keepdims):
    if where.dtype != np.bool_:
        raise TypeError(f"reduce_sum_where: the mask must be bool, got {where.dtype}")
    if broadcast_shapes(where.shape, x.shape) != tuple(x.shape):
        raise ValueError(f"reduce_sum_where: a mask of shape {where.shape} does not broadcast "
                         f"to the summed shape {x.shape}")
    return _sum_abstract(x, axes=axes, keepdims=keepdims)


def _sum_where_impl(xp, x, where, *, axes, keepdims):
    if xp is np:  # NumPy's masked loop: np.sum(x, where=m) adds in another order than a sum
        return np.add.reduce(x, axis=axes, keepdims=keepdims, where=where)  # of where(m, x, 0)
    x = _portable.numeric(xp, x)
    return xp.sum(_portable.where(xp, where, x, xp.zeros((), dtype=x.dtype, device=x.device)),
                  axis=axes, keepdims=keepdims)


def _sum_where_jvp(primals, tangents, out, *, axes, keepdims):
    x, where = primals
    if tangents[0] is None or aval_of(x).size == 0:
        return None
    return apply_linear(reduce_sum_where, (tangents[0], where), primals, out,
                        {"axes": axes, "keepdims": keepdims})


def _sum_where_transpose(ct, x, where, *, axes, keepdims):
    if not keepdims and axes != tuple(range(len(axes))):
        ct = ops.expand_dims(ct, axes=axes)
    return (ops.where(where, ops.broadcast_to(ct, shape=tuple(x.shape)), 0.0), None)


# the sum of the entries a boolean mask selects (NumPy's ``where=``), linear in x
reduce_sum_where = Op(
    "reduce_sum_where", allocates=True, attrs={"axes": "axes", "keepdims": "bool"},
    abstract=_sum_where_abstract, impl=_sum_where_impl, jvp=_sum_where_jvp,
    transpose=_sum_where_transpose,
)


def _sum_initial_abstract(x, initial, *, axes, keepdims):
    if initial.shape:
        raise ValueError(f"reduce_sum_initial: initial must be a scalar, not of shape "
                         f"{initial.shape}")
    return _sum_abstract(x, axes=axes, keepdims=keepdims)


def _sum_initial_impl(xp, x, initial, *, axes, keepdims):
    if xp is np:  # NumPy's loop starts at initial: another order than a sum plus initial
        return np.add.reduce(x, axis=axes, keepdims=keepdims, initial=_scalar(initial))
    out = xp.sum(_portable.numeric(xp, x), axis=axes, keepdims=keepdims)
    return out + _like(xp, initial, out)


def _scalar(initial):
    """``initial=`` as NumPy's reduce takes it: a scalar, not a 0-d array."""
    return initial[()] if type(initial) is np.ndarray else initial


def _like(xp, initial, out):
    """The initial value as an array of the provider's result ``out`` (its dtype and device)."""
    return xp.astype(xp.asarray(initial, device=out.device), out.dtype)


def _sum_initial_jvp(primals, tangents, out, *, axes, keepdims):
    (x, _), (dx, dinitial) = primals, tangents
    t = None if dx is None or aval_of(x).size == 0 else reduce_sum(dx, axes=axes,
                                                                    keepdims=keepdims)
    return _plus_initial(t, dinitial, out)


def _plus_initial(t, dinitial, out):
    """The tangent ``t`` of a sum (None: zero) plus that of the initial value it starts at."""
    if dinitial is not None:
        aval = aval_of(out)
        dinitial = ops.broadcast_to(ops.astype(dinitial, dtype=aval.dtype.name),
                                    shape=aval.shape)
        t = dinitial if t is None else ops.add(t, dinitial)
    return fit(t, out) if t is not None else None


# np.sum(x, initial=v): NumPy's sum starting at v (affine in x and v, so no transpose)
reduce_sum_initial = Op(
    "reduce_sum_initial", allocates=True, attrs={"axes": "axes", "keepdims": "bool"},
    abstract=_sum_initial_abstract, impl=_sum_initial_impl, jvp=_sum_initial_jvp)


def _sum_where_initial_abstract(x, where, initial, *, axes, keepdims):
    _sum_initial_abstract(x, initial, axes=axes, keepdims=keepdims)
    return _sum_where_abstract(x, where, axes=axes, keepdims=keepdims)


def _sum_where_initial_impl(xp, x, where, initial, *, axes, keepdims):
    if xp is np:  # NumPy's masked loop from initial: each run of selected entries is summed
        return np.add.reduce(x, axis=axes, keepdims=keepdims, where=where,  # and added on
                             initial=_scalar(initial))  # (another order than either op's)
    out = _sum_where_impl(xp, x, where, axes=axes, keepdims=keepdims)
    return out + _like(xp, initial, out)


def _sum_where_initial_jvp(primals, tangents, out, *, axes, keepdims):
    (x, where, _), (dx, _, dinitial) = primals, tangents
    t = None if dx is None or aval_of(x).size == 0 else reduce_sum_where(
        dx, where, axes=axes, keepdims=keepdims)
    return _plus_initial(t, dinitial, out)


# np.sum(x, where=m, initial=v): NumPy's masked sum starting at v (affine: no transpose)
reduce_sum_where_initial = Op(
    "reduce_sum_where_initial", allocates=True, attrs={"axes": "axes", "keepdims": "bool"},
    abstract=_sum_where_initial_abstract, impl=_sum_where_initial_impl,
    jvp=_sum_where_initial_jvp)


_LOGADDEXP = {"e": np.logaddexp, "2": np.logaddexp2}


def _logaddexp_reduce_abstract(x, *, base, axes, keepdims):
    # the dtype of NumPy's loop: integers and bools fold in float16 or float64
    dtype = _LOGADDEXP[base].resolve_dtypes((x.dtype, x.dtype, None))[-1]
    return Aval(reduced_shape(x.shape, axes, keepdims), dtype, x.weak, x.device)


def _logaddexp_reduce_impl(xp, x, *, base, axes, keepdims):
    if xp is np:  # NumPy's fold, element after element
        return _LOGADDEXP[base].reduce(x, axis=axes, keepdims=keepdims)
    dtype = _logaddexp_reduce_abstract(aval_of(x), base=base, axes=axes, keepdims=keepdims).dtype
    x = xp.astype(x, getattr(xp, dtype.name))
    shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape)) if keepdims else \
        tuple(n for d, n in enumerate(x.shape) if d not in axes)
    if not all(x.shape[d] for d in axes):  # a fold of nothing is the identity, -inf
        return xp.full(shape, -np.inf, dtype=x.dtype, device=x.device)
    top = xp.max(x, axis=axes, keepdims=True)
    top = xp.where(xp.isfinite(top), top, xp.zeros_like(top))  # all -inf keeps its limit
    two = xp.asarray(2.0, dtype=x.dtype, device=x.device)
    shifted = xp.exp(x - top) if base == "e" else xp.pow(two, x - top)
    total = xp.sum(shifted, axis=axes, keepdims=True)
    out = (xp.log(total) if base == "e" else xp.log2(total)) + top
    return xp.reshape(out, shape)


def _logaddexp_reduce_jvp(primals, tangents, out, *, base, axes, keepdims):
    (x,), (dx,) = primals, tangents
    if aval_of(x).size == 0:
        return None
    full = out if keepdims else ops.expand_dims(out, axes=axes)
    weights = (ops.exp if base == "e" else ops.exp2)(ops.subtract(x, full))  # the softmax
    return fit(reduce_sum(ops.multiply(dx, weights), axes=axes, keepdims=keepdims), out)


# np.logaddexp.reduce (base "e") and np.logaddexp2.reduce (base "2"): NumPy's fold
reduce_logaddexp = Op(
    "reduce_logaddexp", allocates=True,
    attrs={"base": "log_base", "axes": "axes", "keepdims": "bool"},
    abstract=_logaddexp_reduce_abstract, impl=_logaddexp_reduce_impl, jvp=_logaddexp_reduce_jvp)


def _first_extreme_mask(x, out, axes, keepdims):
    """1.0 at the first position (in C order over ``axes``) where ``x`` equals the reduced
    ``out``, 0.0 elsewhere: max/min ties send the derivative to the first extreme. A NaN
    extreme equals no element: its slice is all NaN, so is its derivative (as JAX's and
    autograd's), not a one-hot or all-ones guess."""
    full = out if keepdims else ops.expand_dims(out, axes=axes)
    hit = ops.equal(x, full)
    # rank the hits in C order over the reduced axes; keep the first
    shape = aval_of(x).shape
    rank = ops.iota_like(x, shape=shape, axis=axes[-1])
    stride = shape[axes[-1]]
    for a in reversed(axes[:-1]):
        rank = ops.add(rank, ops.multiply(ops.iota_like(x, shape=shape, axis=a), stride))
        stride *= shape[a]
    first = reduce_min(ops.where(hit, rank, stride), axes=axes, keepdims=True)
    mask = ops.astype(ops.equal(rank, first), dtype=aval_of(x).dtype.name)
    return ops.where(ops.less(first, stride), mask, np.nan)


def _extreme_jvp(primals, tangents, out, *, axes, keepdims):
    (x,), (dx,) = primals, tangents
    if not axes:  # nothing is reduced (a 0-d array, or axis=()): the identity
        return fit(dx, out)
    mask = _first_extreme_mask(x, out, axes, keepdims)
    return fit(reduce_sum(ops.multiply(dx, mask), axes=axes, keepdims=keepdims), out)


reduce_max = Op("reduce_max", allocates=True, attrs={"axes": "axes", "keepdims": "bool"},
                abstract=_reduce_abstract,
                impl=lambda xp, x, *, axes, keepdims: xp.max(x, axis=axes, keepdims=keepdims),
                jvp=_extreme_jvp)
reduce_min = Op("reduce_min", allocates=True, attrs={"axes": "axes", "keepdims": "bool"},
                abstract=_reduce_abstract,
                impl=lambda xp, x, *, axes, keepdims: xp.min(x, axis=axes, keepdims=keepdims),
                jvp=_extreme_jvp)


def _reduce_prod_jvp(primals, tangents, out, *, axes, keepdims):
    # d prod = sum_i dx_i * prod_{j != i} x_j, exact also where some x_j are zero
    (x,), (dx,) = primals, tangents
    if isinstance(x, Tracer) and aval_of(x).size:  # differentiated again (or staged)
        others = _products_of_others(x, axes)
        return fit(reduce_sum(ops.multiply(dx, others), axes=axes, keepdims=keepdims), out)
    zero = ops.equal(x, 0)
    n_zero = reduce_sum(zero, axes=axes, keepdims=True)
    nonzero_prod = reduce_prod(ops.where(zero, 1, x), axes=axes, keepdims=True)
    out_k = out if keepdims else ops.expand_dims(out, axes=axes)
    others = ops.where(ops.equal(n_zero, 0), ops.divide(out_k, ops.where(zero, 1, x)),
                       ops.where(ops.logical_and(zero, ops.equal(n_zero, 1)), nonzero_prod, 0))
    return fit(reduce_sum(ops.multiply(dx, others), axes=axes, keepdims=keepdims), out)


def _products_of_others(x, axes):
    """``prod_{j != i} x_j`` over ``axes`` for each entry ``i``: the exclusive prefix product
    times the exclusive suffix product along the reduced entries (flattened into one axis).
    Only products, no branches on ``x == 0``, so its own derivatives stay exact at zeros, to
    every order; the concrete rule above is exact at first order only (its branches are
    constants)."""
    from .scans import _shifted  # scans builds on this module's ops

    aval = aval_of(x)
    keep = tuple(a for a in range(aval.ndim) if a not in axes)
    perm = (*keep, *axes)
    inverse = tuple(perm.index(a) for a in range(aval.ndim))
    permuted = tuple(aval.shape[a] for a in perm)
    last = len(keep)
    flat = ops.reshape(ops.permute_dims(x, axes=perm),
                       shape=(*permuted[:last], int(np.prod(permuted[last:], dtype=np.int64))))
    before = _shifted(ops.cumulative_prod(flat, axis=last), 1, last, 1, flat)
    backward = ops.flip(flat, axes=(last,))
    after = ops.flip(_shifted(ops.cumulative_prod(backward, axis=last), 1, last, 1, flat),
                     axes=(last,))
    others = ops.reshape(ops.multiply(before, after), shape=permuted)
    return ops.permute_dims(others, axes=inverse)


reduce_prod = Op("reduce_prod", allocates=True, attrs={"axes": "axes", "keepdims": "bool"},
                 abstract=_sum_abstract,
                 impl=lambda xp, x, *, axes, keepdims: xp.prod(x, axis=_whole(xp, x, axes),
                                                               keepdims=keepdims),
                 jvp=_reduce_prod_jvp)


def _prod_initial_impl(xp, x, initial, *, axes, keepdims):
    if xp is np:  # NumPy's loop starts at initial: another order than a product times it
        return np.multiply.reduce(x, axis=axes, keepdims=keepdims, initial=_scalar(initial))
    out = reduce_prod.impl(xp, x, axes=axes, keepdims=keepdims)
    return out * _like(xp, initial, out)


def _prod_initial_jvp(primals, tangents, out, *, axes, keepdims):
    # out = initial * P with P = prod(x): d out = initial * dP + dinitial * P
    (x, initial), (dx, dinitial) = primals, tangents
    product = reduce_prod(x, axes=axes, keepdims=keepdims)
    t = None
    if dx is not None and aval_of(x).size:
        t = ops.multiply(_reduce_prod_jvp((x,), (dx,), product, axes=axes, keepdims=keepdims),
                         initial)
    if dinitial is not None:
        t = add_tangents(t, ops.multiply(product, ops.astype(dinitial,
                                                             dtype=aval_of(out).dtype.name)))
    return None if t is None else fit(t, out)


# np.prod(x, initial=v): NumPy's product starting at v
reduce_prod_initial = Op(
    "reduce_prod_initial", allocates=True, attrs={"axes": "axes", "keepdims": "bool"},
    abstract=_sum_initial_abstract, impl=_prod_initial_impl, jvp=_prod_initial_jvp)


def _arg_abstract(x, *, axis, keepdims):
    axes = tuple(range(x.ndim)) if axis is None else (axis,)
    return Aval(reduced_shape(x.shape, axes, keepdims), np.dtype(np.int64), False, x.device)


def _arg_impl(name):
    def impl(xp, x, *, axis, keepdims):
        out = getattr(xp, name)(_portable.numeric(xp, x), axis=axis, keepdims=keepdims)
        if xp is not np or out.dtype == np.int64:  # a 0-d result stays NumPy's scalar
            return out
        return out.astype(np.int64)
    return impl


argmax = Op("argmax", allocates=True, attrs={"axis": "axis_or_none", "keepdims": "bool"},
            abstract=_arg_abstract, impl=_arg_impl("argmax"), nondiff=True)
argmin = Op("argmin", allocates=True, attrs={"axis": "axis_or_none", "keepdims": "bool"},
            abstract=_arg_abstract, impl=_arg_impl("argmin"), nondiff=True)


def _nan_arg_impl(name, fill):
    """NumPy's nanargmax/nanargmin, which refuse an all-NaN slice with a ValueError when the
    program runs (staged too); other providers ignore NaNs as a fill and check the same."""
    def impl(xp, x, *, axis, keepdims):
        if xp is np:
            out = getattr(np, name)(x, axis=axis, keepdims=keepdims)
            return out if out.dtype == np.int64 else out.astype(np.int64)
        x = _portable.numeric(xp, x)
        if xp.isdtype(x.dtype, "real floating"):
            nan = xp.isnan(x)
            if bool(xp.any(xp.all(nan, axis=axis))):
                raise ValueError("All-NaN slice encountered")
            x = xp.where(nan, fill, x)
        return getattr(xp, name[3:])(x, axis=axis, keepdims=keepdims)
    return impl


nanargmax = Op("nanargmax", allocates=True, attrs={"axis": "axis_or_none", "keepdims": "bool"},
               abstract=_arg_abstract, impl=_nan_arg_impl("nanargmax", -np.inf), nondiff=True)
nanargmin = Op("nanargmin", allocates=True, attrs={"axis": "axis_or_none", "keepdims": "bool"},
               abstract=_arg_abstract, impl=_nan_arg_impl("nanargmin", np.inf), nondiff=True)


def _cumulative_sum_abstract(x, *, axis):
    return _sum_abstract(x, axes=(), keepdims=True).update(shape=x.shape)


def _cumulative_sum_transpose(ct, x, *, axis):
    return (ops.flip(cumulative_sum(ops.flip(ct, axes=(axis,)), axis=axis), axes=(axis,)),)


cumulative_sum = Op("cumulative_sum", allocates=True, attrs={"axis": "axis"},
                    abstract=_cumulative_sum_abstract,
                    impl=lambda xp, x, *, axis: provider_function(xp, "cumulative_sum")(
                        x if xp is np else _portable.numeric(xp, x), axis=axis), linear=True,
                    transpose=_cumulative_sum_transpose)

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]

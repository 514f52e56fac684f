"""NumPy's mathematical functions on traced arrays: convolution, interpolation, products,
polynomials, special functions and the ``numpy.emath`` wrappers, written with ops."""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np

from .. import ops
from .._compat import cross_of_2_vectors
from ..dtypes import aval_of
from ..ops._rules import one_axis
from ._functions import (
    _moveaxis,
    _ndim,
    _ravel,
    _reshape,
    _shape,
    astype,
    concrete,
    implements,
    known_value,
    numpy_scalar,
    operand,
    slice_along,
    take_axis,
)
from ._mutation import array_result, mark_array
from ._reductions import reduction
from ._shaping import _atleast_1d


def _kind(x):
    return aval_of(x).dtype.kind


# --- convolution -----------------------------------------------------------------------------

def _mode_range(n, m, mode, inverted=False):
    """The entries of the full correlation (length n + m - 1) that ``mode`` keeps. NumPy
    centres 'same' on the shorter operand; when that one comes first (``inverted``: np.correlate
    of a shorter ``a``) NumPy correlates the swapped pair and reverses it, which moves the
    centre by one for an even length."""
    short = min(n, m)
    if mode == "full":
        return 0, n + m - 1
    if mode == "same":
        start = short // 2 if inverted else short - 1 - short // 2
        return start, start + max(n, m)
    if mode == "valid":
        return short - 1, max(n, m)
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full', got {mode!r}")


def _vectors(a, v, name):
    a, v = operand(a), operand(v)
    if max(len(_shape(a)), len(_shape(v))) > 1:  # NumPy's ValueError, never a flattened input
        raise ValueError(f"numpy.{name}: object too deep for desired array: the inputs must be "
                         "1-d (or scalars); use scipy.signal-style loops or np.apply_along_axis")
    a, v = _ravel(a), _ravel(v)
    if _shape(a)[0] == 0 or _shape(v)[0] == 0:
        raise ValueError(f"numpy.{name}: inputs cannot be empty")
    return a, v


def _conj(x):
    return ops.conj(x) if _kind(x) == "c" else x


@implements(np.convolve)
def _convolve(a, v, mode="full"):
    a, v = _vectors(a, v, "convolve")
    if _shape(v)[0] > _shape(a)[0]:  # convolution commutes: NumPy slides the shorter one
        a, v = v, a
    start, stop = _mode_range(_shape(a)[0], _shape(v)[0], mode)
    return ops.correlate(a, ops.flip(v, axes=(0,)), start=start, stop=stop)


@implements(np.correlate)
def _correlate(a, v, mode="valid"):
    a, v = _vectors(a, v, "correlate")
    n, m = _shape(a)[0], _shape(v)[0]
    start, stop = _mode_range(n, m, mode, inverted=m > n)
    return ops.correlate(a, _conj(v), start=start, stop=stop)


# --- interpolation ---------------------------------------------------------------------------

@implements(np.interp)
def _interp(x, xp, fp, left=None, right=None, period=None):
    x, xp, fp = operand(x), operand(xp), operand(fp)
    for a in (x, xp):  # NumPy casts the abscissae to float64 safely (fp may be complex)
        if aval_of(a).dtype.kind == "c":
            raise TypeError(f"numpy.interp: cannot cast {aval_of(a).dtype} abscissae to float64 "
                            "safely; pass real values (np.real(x)) instead")
    if _ndim(xp) != 1 or _ndim(fp) != 1 or _shape(xp) != _shape(fp):
        raise ValueError("fp and xp are not of the same length")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        x, xp = ops.remainder(x, period), ops.remainder(xp, period)
        order = ops.argsort(xp, axis=0, stable=False)  # NumPy's default sort: ties as its
        xp, fp = take_axis(xp, order, 0), take_axis(fp, order, 0)
        n = _shape(xp)[0]
        xp = ops.concat(ops.subtract(slice_along(xp, n - 1, n, 0), period), xp,
                        ops.add(slice_along(xp, 0, 1, 0), period), axis=0)
        fp = ops.concat(slice_along(fp, n - 1, n, 0), fp, slice_along(fp, 0, 1, 0), axis=0)
        left = right = None
    n = _shape(xp)[0]
    fp = astype(fp, np.complex128 if _kind(fp) == "c" else np.float64)  # as NumPy's interp
    x, xp = astype(x, np.float64), astype(xp, np.float64)
    if n == 1:
        lo_i = hi_i = np.zeros((), np.int64)
    else:
        lo_i = ops.clip(ops.subtract(ops.searchsorted(xp, x, side="right"), 1), 0, n - 2)
        hi_i = ops.add(lo_i, 1)
    x0, x1 = take_axis(xp, lo_i, 0), take_axis(xp, hi_i, 0)
    f0, f1 = take_axis(fp, lo_i, 0), take_axis(fp, hi_i, 0)
    if n == 1:
        out = ops.add(f0, ops.zeros_like(x, dtype=aval_of(f0).dtype.name))
    else:
        slope = ops.divide(ops.subtract(f1, f0), ops.subtract(x1, x0))
        out = ops.add(f0, ops.multiply(slope, ops.subtract(x, x0)))
        out = ops.where(ops.equal(x, x1), f1, out)  # exact at the knots
    first, last = slice_along(xp, 0, 1, 0), slice_along(xp, n - 1, n, 0)
    first, last = ops.reshape(first, shape=()), ops.reshape(last, shape=())
    below = slice_along(fp, 0, 1, 0) if left is None else left
    above = slice_along(fp, n - 1, n, 0) if right is None else right
    below = ops.reshape(below, shape=()) if _ndim(below) else below
    above = ops.reshape(above, shape=()) if _ndim(above) else above
    out = ops.where(ops.less(x, first), below, out)
    return numpy_scalar(ops.where(ops.greater(x, last), above, out))


# --- products --------------------------------------------------------------------------------

@implements(np.kron)
def _kron(a, b):
    a, b = operand(a), operand(b)
    nd = max(_ndim(a), _ndim(b))
    sa = (1,) * (nd - _ndim(a)) + _shape(a)
    sb = (1,) * (nd - _ndim(b)) + _shape(b)
    a = _reshape(a, tuple(x for n in sa for x in (n, 1)))
    b = _reshape(b, tuple(x for n in sb for x in (1, n)))
    return _reshape(ops.multiply(a, b), tuple(p * q for p, q in zip(sa, sb)))


def _component(v, i):
    """``v[..., i]``."""
    return ops.gather(v, index=tuple((0, n, 1) for n in _shape(v)[:-1]) + (i,))


@implements(np.cross)
def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a = _moveaxis(operand(a), axisa, -1)
    b = _moveaxis(operand(b), axisb, -1)
    na, nb = _shape(a)[-1], _shape(b)[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product (dimension must be 2 or 3)")
    if na == 2 or nb == 2:
        cross_of_2_vectors()
    a0, a1 = _component(a, 0), _component(a, 1)
    b0, b1 = _component(b, 0), _component(b, 1)
    c2 = ops.subtract(ops.multiply(a0, b1), ops.multiply(a1, b0))
    if na == 2 and nb == 2:
        return c2
    a2 = _component(a, 2) if na == 3 else 0.0  # a 2-vector has a zero third component
    b2 = _component(b, 2) if nb == 3 else 0.0
    c0 = ops.subtract(ops.multiply(a1, b2), ops.multiply(a2, b1))
    c1 = ops.subtract(ops.multiply(a2, b0), ops.multiply(a0, b2))
    shape = np.broadcast_shapes(_shape(c0), _shape(c1), _shape(c2))
    out = ops.concat(*(ops.expand_dims(ops.broadcast_to(c, shape=shape), axes=(len(shape),))
                       for c in (c0, c1, c2)), axis=len(shape))
    return _moveaxis(out, -1, axisc)


# --- polynomials (coefficients highest power first) ------------------------------------------

def _coefficients(p):
    p = _atleast_1d(operand(p))
    if _ndim(p) != 1:
        raise ValueError("polynomial coefficients must be a 1-d array")
    return p


@implements(np.polyval)
def _polyval(p, x):
    """NumPy's Horner loop ``y = y * x + pv`` over the leading axis of ``p``: an N-d ``p``
    evaluates several polynomials at once (its trailing axes broadcast against ``x``), a 0-d
    one cannot be iterated (TypeError), and no coefficients give ``np.zeros_like(x)``."""
    p, x = operand(p), operand(x)
    if _ndim(p) == 0:
        raise TypeError("iteration over a 0-d array")
    if not _shape(p)[0]:
        return mark_array(ops.zeros_like(x))
    y = ops.zeros_like(x, dtype=np.result_type(aval_of(x).dtype, aval_of(p).dtype).name)
    for i in range(_shape(p)[0]):
        y = ops.add(ops.multiply(y, x), ops.gather(p, index=(i,)))
    return y


def _pad_front(p, n):
    k = _shape(p)[0]
    return p if k == n else ops.concat(ops.zeros_like(p, shape=(n - k,)), p, axis=0)


@implements(np.polyadd)
def _polyadd(a1, a2):
    a1, a2 = _coefficients(a1), _coefficients(a2)
    n = max(_shape(a1)[0], _shape(a2)[0])
    return ops.add(_pad_front(a1, n), _pad_front(a2, n))


@implements(np.polysub)
def _polysub(a1, a2):
    a1, a2 = _coefficients(a1), _coefficients(a2)
    n = max(_shape(a1)[0], _shape(a2)[0])
    return ops.subtract(_pad_front(a1, n), _pad_front(a2, n))


def _without_leading_zeros(p, what):
    """NumPy's poly1d(p): leading zero coefficients dropped (all zeros leave one), a shape
    that depends on the data."""
    values = concrete(p, f"{what} (it drops leading zero coefficients, a data-dependent shape)")
    nonzero = np.flatnonzero(values)
    start = nonzero[0] if nonzero.size else max(len(values) - 1, 0)
    return slice_along(p, int(start), len(values), 0) if start else p


@implements(np.polymul, dynamic_only=True)
def _polymul(a1, a2):
    return _convolve(*(_without_leading_zeros(_coefficients(a), "numpy.polymul")
                       for a in (a1, a2)))


@implements(np.polyder)
def _polyder(p, m=1):
    p = _coefficients(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    for _ in range(m):  # as NumPy: a constant's derivative is the empty polynomial
        n = _shape(p)[0] - 1
        p = ops.multiply(slice_along(p, 0, max(n, 0), 0), np.arange(n, 0, -1))
    return p


def _constants(k):
    """np.polyint's ``k`` as a list of scalars (Python numbers or 0-d values, traced or not)."""
    if isinstance(k, list | tuple):
        return list(k)
    k = operand(k)
    return [k] if _ndim(k) == 0 else [ops.gather(k, index=(i,)) for i in range(_shape(k)[0])]


@implements(np.polyint)
def _polyint(p, m=1, k=None):
    p = _coefficients(p)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = [0.0] * m if k is None else _constants(k)
    if len(k) == 1:  # NumPy repeats one constant for every integration
        k = k * m
    if len(k) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    if _kind(p) not in "fc":
        p = astype(p, np.float64)
    for i in range(m):
        n = _shape(p)[0]
        const = ops.reshape(ops.add(ops.zeros_like(p, shape=()), k[i]), shape=(1,))
        p = ops.concat(ops.divide(p, np.arange(n, 0, -1, dtype=np.float64)), const, axis=0)
    return p


@implements(np.polydiv, dynamic_only=True)
def _polydiv(u, v):
    """NumPy's long division, operation for operation (a multiply by 1 / v[0], all of u kept as
    the remainder), so the remainder's leading entries round, and are trimmed, as NumPy's do."""
    u, v = (astype(p, np.float64) if _kind(p) not in "fc" else p
            for p in (_coefficients(u), _coefficients(v)))
    dtype = np.result_type(aval_of(u).dtype, aval_of(v).dtype)
    m, n = _shape(u)[0] - 1, _shape(v)[0] - 1
    scale = ops.divide(1.0, ops.gather(v, index=(0,)))
    r = [astype(ops.gather(u, index=(i,)), dtype) for i in range(m + 1)]
    q = []
    for k in range(max(m - n + 1, 0)):
        d = ops.multiply(scale, r[k])
        q.append(d)
        for j in range(n + 1):
            r[k + j] = ops.subtract(r[k + j], ops.multiply(d, ops.gather(v, index=(j,))))
    q = ops.concat(*(ops.expand_dims(c, axes=(0,)) for c in q), axis=0) if q else \
        ops.zeros_like(u, shape=(1,), dtype=dtype.name)
    while len(r) > 1 and np.allclose(concrete(r[0], "np.polydiv (it trims the remainder's "
                                                    "leading zeros, so its size depends on "
                                                    "data)"), 0, rtol=1e-14):
        r = r[1:]
    return q, ops.concat(*(ops.expand_dims(c, axes=(0,)) for c in r), axis=0)


@implements(np.poly)
def _poly(seq_of_zeros):
    zeros = operand(seq_of_zeros)
    if _ndim(zeros) == 2 and _shape(zeros)[0] == _shape(zeros)[1] and _shape(zeros)[0]:
        zeros = np.linalg.eigvals(zeros)
    elif _ndim(zeros) == 1:  # NumPy computes in the smallest inexact type that holds them
        zeros = astype(zeros, np.mintypecode(aval_of(zeros).dtype.char))
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    coeffs = np.ones(1, dtype=aval_of(zeros).dtype)
    for i in range(_shape(zeros)[0]):
        z = ops.reshape(ops.gather(zeros, index=(i,)), shape=(1,))
        coeffs = _convolve(coeffs, ops.concat(ops.full_like(z, fill_value=1), ops.negative(z),
                                              axis=0))
    return coeffs


@implements(np.roots, dynamic_only=True)
def _roots(p):
    p = _coefficients(p)
    value = concrete(p, "np.roots (it trims zero coefficients, so its size depends on data)")
    nz = np.flatnonzero(value)
    if nz.size == 0:
        return np.array([])
    trailing = value.size - nz[-1] - 1
    p = slice_along(p, int(nz[0]), int(nz[-1]) + 1, 0)
    n = _shape(p)[0]
    if n > 1:
        row = ops.negative(ops.divide(slice_along(p, 1, n, 0), slice_along(p, 0, 1, 0)))
        companion = ops.concat(ops.expand_dims(row, axes=(0,)),
                               np.eye(n - 2, n - 1, dtype=aval_of(row).dtype), axis=0)
        found = np.linalg.eigvals(companion)
        if aval_of(found).dtype.kind == "c" and not np.any(concrete(ops.imag(found), "np.roots")):
            found = ops.real(found)  # NumPy's eigvals is real when every root is
    else:
        found = ops.zeros_like(p, shape=(0,))
    if trailing:
        found = ops.concat(found, ops.zeros_like(found, shape=(trailing,)), axis=0)
    return found


@implements(np.polyfit)
def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """NumPy's polyfit: a least-squares fit of the column-scaled Vandermonde matrix, by QR when
    the default ``rcond`` leaves it full rank, else through the pseudo-inverse with ``rcond``;
    ``full=True`` adds the residuals, the rank (read from the data: dynamic only), the
    singular values and ``rcond``; ``cov=True`` adds the (scaled) covariance of the fit."""
    if int(deg) < 0:
        raise ValueError("expected deg >= 0")
    x, y = operand(x), operand(y)
    for bad, message in ((len(_shape(x)) != 1, "expected 1D vector for x"),
                         (_shape(x) == (0,), "expected non-empty vector for x"),
                         (len(_shape(y)) not in (1, 2), "expected 1D or 2D array for y"),
                         (_shape(x)[:1] != _shape(y)[:1], "expected x and y to have same length")):
        if bad:  # NumPy's TypeErrors, in its order
            raise TypeError(f"numpy.polyfit: {message}")
    if np.float16 in (aval_of(x).dtype, aval_of(y).dtype):  # NumPy's lstsq refuses them
        raise TypeError("numpy.polyfit: array type float16 is unsupported in linalg; convert "
                        "it with .astype(np.float32) first")
    order = int(deg) + 1
    lhs = _vander(x, order)
    rhs = y
    if w is not None:
        w = operand(w)
        if len(_shape(w)) != 1:
            raise TypeError("numpy.polyfit: expected a 1-d array for weights")
        if _shape(w) != _shape(y)[:1]:
            raise TypeError("numpy.polyfit: expected w and y to have the same length")
        lhs = ops.multiply(lhs, ops.expand_dims(w, axes=(1,)))
        rhs = ops.multiply(rhs, w if _ndim(y) == 1 else ops.expand_dims(w, axes=(1,)))
    n = _shape(x)[0]
    if rcond is None:  # NumPy's n * eps of x + 0.0 (float32 for float32 x)
        rcond = n * np.finfo(np.result_type(aval_of(x).dtype, 0.0)).eps
    scale = ops.sqrt(reduction(ops.reduce_sum, ops.square(lhs), 0, False))
    lhs = ops.divide(lhs, scale)
    known = known_value(lhs)
    rank = None if known is None else _rank(np.linalg.svd(known, compute_uv=False), rcond)
    if rank == min(_shape(lhs)):
        q, r = np.linalg.qr(lhs)  # QR instead of lstsq at full rank: the same solution
        coef = np.linalg.solve(r, ops.matmul(ops.matrix_transpose(q), rhs))
    else:  # lstsq's truncated solution where rcond drops singular values (or may)
        coef = ops.matmul(np.linalg.pinv(lhs, rcond=rcond), rhs)
    if rank is not None and rank != order and not full:
        warnings.warn("Polyfit may be poorly conditioned", np.exceptions.RankWarning,
                      stacklevel=3)
    column = scale if _ndim(coef) == 1 else ops.expand_dims(scale, axes=(1,))
    c = ops.divide(coef, column)
    if not (full or cov):
        return c
    residual = ops.subtract(rhs, ops.matmul(lhs, coef))
    resids = reduction(ops.reduce_sum, ops.square(residual), 0, False)
    resids = ops.reshape(resids, shape=(1,)) if _ndim(resids) == 0 else resids
    if full:
        singular = np.linalg.svd(lhs, compute_uv=False)
        rank = _rank(concrete(singular, "numpy.polyfit(full=True) (the rank of the fit)"),
                     rcond)
        if rank < order or n <= order:  # lstsq returns no residuals then
            resids = ops.zeros_like(resids, shape=(0,))
        return c, resids, rank, singular, rcond
    base = np.linalg.inv(ops.matmul(ops.matrix_transpose(lhs), lhs))
    base = ops.divide(base, ops.multiply(ops.expand_dims(scale, axes=(1,)),
                                         ops.expand_dims(scale, axes=(0,))))
    if cov == "unscaled":
        fac = 1.0
    else:
        if n <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = ops.divide(resids, n - order)
    if _ndim(y) == 1:
        return c, ops.multiply(base, fac)
    return c, ops.multiply(ops.expand_dims(base, axes=(2,)), fac)


def _rank(singular, rcond):
    """lstsq's rank: the singular values above ``rcond`` times the largest."""
    return np.int32(np.count_nonzero(singular > rcond * singular.max()) if singular.size else 0)


@implements(np.vander)
def _vander(x, N=None, increasing=False):
    x = operand(x)
    if _ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    x = astype(x, np.promote_types(aval_of(x).dtype, np.int64))  # NumPy's vander dtype
    n = _shape(x)[0] if N is None else operator.index(N)  # NumPy's TypeError for 2.5
    if n == 0:
        return ops.zeros_like(x, shape=(_shape(x)[0], 0))
    powers = ops.full_like(x, fill_value=1, shape=(_shape(x)[0], 1))
    if n > 1:  # NumPy's multiply.accumulate of the copies of x (complex ones round unlike 1 * x)
        cols = ops.broadcast_to(ops.expand_dims(x, axes=(1,)), shape=(_shape(x)[0], n - 1))
        powers = ops.concat(powers, ops.cumulative_prod(cols, axis=1), axis=1)
    return powers if increasing else ops.flip(powers, axes=(1,))


# --- special functions and cleanup -----------------------------------------------------------

@implements(np.sinc)
def _sinc(x):
    return numpy_scalar(ops.sinc(operand(x)))


def _chebyshev(x, coefficients):
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = ops.add(ops.subtract(ops.multiply(x, b1), b2), c)
    return ops.multiply(ops.subtract(b0, b2), 0.5)


@implements(np.i0)
def _i0(x):
    """NumPy's i0: Chebyshev series in the input's precision, exp(x) * series / sqrt(x)
    beyond 8."""
    from numpy.lib import _function_base_impl as impl  # NumPy's Chebyshev coefficients

    x = operand(x)
    if _kind(x) == "c":
        raise TypeError("i0 not supported for complex values")
    x = ops.abs(astype(x, np.float64) if _kind(x) not in "f" else x)
    small = ops.less_equal(x, 8.0)
    near = ops.where(small, x, 8.0)
    far = ops.where(small, 9.0, x)
    inner = _chebyshev(ops.subtract(ops.divide(near, 2.0), 2), [float(c) for c in impl._i0A])
    outer = _chebyshev(ops.subtract(ops.divide(32.0, far), 2.0), [float(c) for c in impl._i0B])
    exp = ops.exp(x)
    inner = ops.multiply(exp, inner)
    outer = ops.divide(ops.multiply(exp, outer), ops.sqrt(far))
    return ops.where(small, inner, outer)


def _nan_to_num_real(x, nan, posinf, neginf):
    info = np.finfo(aval_of(x).dtype)
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    # one where per replacement: a where of two Python scalars would compute in float64
    x = ops.where(ops.isnan(x), nan, x)
    x = ops.where(ops.logical_and(ops.isinf(x), ops.signbit(x)), neginf, x)
    return ops.where(ops.isinf(x), posinf, x)


@implements(np.nan_to_num)
def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = operand(x)
    if _kind(x) not in "fc":
        return numpy_scalar(x)  # NumPy returns x[()]: a 0-d array gives a NumPy scalar
    if _kind(x) == "f":
        result = _nan_to_num_real(x, nan, posinf, neginf)
    else:
        re = _nan_to_num_real(ops.real(x), nan, posinf, neginf)
        im = _nan_to_num_real(ops.imag(x), nan, posinf, neginf)
        result = ops.add(astype(re, aval_of(x).dtype), ops.multiply(im, 1j))
    if copy:
        return numpy_scalar(result)
    from ._mutation import assign_inplace  # copy=False writes into x, as NumPy does
    return assign_inplace(x, astype(result, aval_of(x).dtype), "numpy.nan_to_num(copy=False)")


@implements(np.unwrap)
def _unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """np.unwrap in NumPy's dtypes and arithmetic: the steps in the input's dtype (unsigned ones
    wrap around, as NumPy's), an integer result for integer input and period."""
    from ._statistics import _diff

    p = operand(p)
    axis = one_axis(axis, _ndim(p))
    n = _shape(p)[axis]
    dd = _diff(p, axis=axis)
    discont = period / 2 if discont is None else discont
    dtype = np.result_type(aval_of(dd).dtype, period)
    if dtype.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddmod = ops.add(ops.remainder(ops.subtract(dd, low), period), low)
    if ambiguous:  # a step of exactly half a period keeps its sign
        ddmod = ops.where(ops.logical_and(ops.equal(ddmod, low), ops.greater(dd, 0)),
                          astype(high, aval_of(ddmod).dtype), ddmod)
    correct = ops.subtract(ddmod, dd)
    correct = ops.where(ops.less(ops.abs(dd), discont), ops.zeros_like(correct), correct)
    rest = ops.add(slice_along(p, 1, n, axis), ops.cumulative_sum(correct, axis=axis))
    return ops.concat(astype(slice_along(p, 0, 1, axis), dtype), astype(rest, dtype), axis=axis)


@implements(np.real_if_close, dynamic_only=True)
def _real_if_close(a, tol=100):
    a = operand(a)
    if not a.shape:  # NumPy's asanyarray: a NumPy scalar's result is a 0-d array
        a = array_result(a, (a,))
    if _kind(a) != "c":
        return a
    if tol > 1:
        tol = np.finfo(aval_of(a).dtype).eps * tol
    imag = concrete(ops.imag(a), "np.real_if_close (its dtype depends on data)")
    return ops.real(a) if np.all(np.abs(imag) < tol) else a


@implements(np.fix)
def _fix(x, out=None):
    from ._ufuncs import UFUNCS  # the running NumPy's dtype for integer input, as np.trunc's
    return UFUNCS[np.trunc](operand(x))


# --- numpy.emath: complex results where the real function is undefined -----------------------

def _to_complex_where(x, bad):
    """``x`` as complex when ``bad`` holds anywhere (read from data), else unchanged (the real
    function then gives NumPy's dtype: float16 for int8). NumPy's complex type: complex64 for
    float32 and integers of at most 16 bits, else complex128 (float16 and bool included)."""
    if _kind(x) == "c":
        return x
    if np.any(concrete(bad(x), "numpy.emath (its result dtype depends on data)")):
        small = aval_of(x).dtype in (np.float32, np.int8, np.int16, np.uint8, np.uint16)
        return astype(x, np.complex64 if small else np.complex128)
    return x


implements(np.emath.sqrt, dynamic_only=True)(
    lambda x: ops.sqrt(_to_complex_where(operand(x), lambda v: ops.less(v, 0))))
implements(np.emath.log, dynamic_only=True)(
    lambda x: ops.log(_to_complex_where(operand(x), lambda v: ops.less(v, 0))))
implements(np.emath.log2, dynamic_only=True)(
    lambda x: ops.log2(_to_complex_where(operand(x), lambda v: ops.less(v, 0))))
implements(np.emath.log10, dynamic_only=True)(
    lambda x: ops.log10(_to_complex_where(operand(x), lambda v: ops.less(v, 0))))
implements(np.emath.arccos, dynamic_only=True)(
    lambda x: ops.acos(_to_complex_where(operand(x), lambda v: ops.greater(ops.abs(v), 1))))
implements(np.emath.arcsin, dynamic_only=True)(
    lambda x: ops.asin(_to_complex_where(operand(x), lambda v: ops.greater(ops.abs(v), 1))))
implements(np.emath.arctanh, dynamic_only=True)(
    lambda x: ops.atanh(_to_complex_where(operand(x), lambda v: ops.greater(ops.abs(v), 1))))


@implements(np.emath.logn, dynamic_only=True)
def _emath_logn(n, x):
    def log(v):
        return ops.log(_to_complex_where(operand(v), lambda u: ops.less(u, 0)))
    return ops.divide(log(x), log(n))


@implements(np.emath.power, dynamic_only=True)
def _emath_power(x, p):
    return ops.pow(_to_complex_where(operand(x), lambda v: ops.less(v, 0)), operand(p))

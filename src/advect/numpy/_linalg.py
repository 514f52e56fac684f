"""``numpy.linalg`` on traced arrays (``numpy.einsum`` is in ``_einsum.py``).

Each function translates to the canonical ops of ``ops/linalg.py`` and ``ops/einsum.py``; the
rest (norms, condition numbers, powers, tensor solves, ...) are composites of them. Results that
NumPy returns as named tuples (``EighResult``, ``SVDResult``, ...) come back as instances of
NumPy's own classes. ``eig`` and ``eigvals`` of a real matrix return real arrays exactly when
NumPy does (every eigenvalue real), which makes them dynamic only for real input, and
``lstsq`` is dynamic only (the shape of its residuals depends on the rank of the data).

Example:
    >>> import numpy as np
    >>> import advect as ad
    >>> a = np.array([[2.0, 1.0], [1.0, 3.0]])
    >>> grad = ad.grad(lambda a: np.linalg.slogdet(a).logabsdet)(a)
    >>> np.allclose(grad, np.linalg.inv(a).T)
    True
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.linalg import _linalg as _numpy_linalg

from .. import ops
from .._compat import EIG_ALWAYS_COMPLEX
from ..dtypes import aval_of, real_dtype
from ..errors import TracingError
from ..ops._rules import each_axis, normalize_axes, one_axis
from ..ops.linalg import hermitian_part
from ._einsum import einsum_subscripts
from ._functions import astype, concrete, implements, operand, reduction_axis
from ._mutation import mark_array
from ._products import _tensordot

__all__ = ["einsum_subscripts"]

# NumPy's own result classes, so traced results are instances of what user code expects
EigResult, EighResult, QRResult, SlogdetResult, SVDResult = (
    _numpy_linalg.EigResult, _numpy_linalg.EighResult, _numpy_linalg.QRResult,
    _numpy_linalg.SlogdetResult, _numpy_linalg.SVDResult)

def _shape(x):
    return aval_of(x).shape


def _ndim(x):
    return len(aval_of(x).shape)


def _inexact(x):
    """``x`` as a float array (integers and bools become float64, as numpy.linalg does)."""
    return x if aval_of(x).dtype.kind in "fc" else ops.astype(x, dtype="float64")


def _mH(x):
    t = ops.matrix_transpose(x)
    return ops.conj(t) if aval_of(x).dtype.kind == "c" else t


# --- products ----------------------------------------------------------------------------------

@implements(np.linalg.matmul)
def _matmul(x1, x2, /):
    return ops.matmul(operand(x1), operand(x2))


@implements(np.linalg.tensordot)
def _linalg_tensordot(x1, x2, /, *, axes=2):
    return mark_array(_tensordot(x1, x2, axes))  # a 0-d result is a 0-d array, as np.tensordot's


@implements(np.linalg.vecdot)
def _vecdot(x1, x2, /, *, axis=-1):
    return np.vecdot(x1, x2, axis=axis)  # NumPy's is the gufunc: core dimensions must match


@implements(np.linalg.outer)
def _outer(x1, x2, /):
    x1, x2 = operand(x1), operand(x2)
    if _ndim(x1) != 1 or _ndim(x2) != 1:
        raise ValueError("numpy.linalg.outer: input arrays must be one-dimensional, got shapes "
                         f"{_shape(x1)} and {_shape(x2)}")
    return ops.multiply(ops.expand_dims(x1, axes=(1,)), x2)


@implements(np.linalg.cross)
def _cross(x1, x2, /, *, axis=-1):
    x1, x2 = operand(x1), operand(x2)
    shape = np.broadcast_shapes(_shape(x1), _shape(x2))
    axis = one_axis(axis, len(shape))
    if shape[axis] != 3:
        raise ValueError("numpy.linalg.cross: both input arrays must be (arrays of) "
                         f"3-dimensional vectors, got size {shape[axis]} along axis {axis}")
    x1, x2 = (a if _shape(a) == shape else ops.broadcast_to(a, shape=shape) for a in (x1, x2))

    def rolled(x, k):  # x[(i + k) % 3] along the vector axis
        return ops.roll(x, shift=(-k,), axes=(axis,))
    return ops.subtract(ops.multiply(rolled(x1, 1), rolled(x2, 2)),
                        ops.multiply(rolled(x1, 2), rolled(x2, 1)))


@implements(np.linalg.matrix_transpose)
def _matrix_transpose(x, /):
    if _ndim(x) < 2:
        raise ValueError("numpy.linalg.matrix_transpose: input array must be at least "
                         f"2-dimensional, got shape {_shape(x)}")
    return ops.matrix_transpose(x)


@implements(np.linalg.diagonal)
def _diagonal(x, /, *, offset=0):
    m, n = _shape(x)[-2:]
    nd = _ndim(x)
    row, col = max(-offset, 0), max(offset, 0)
    size = max(0, min(m - row, n - col))
    block = ops.slice_axis(x, start=row, stop=row + size, axis=nd - 2, step=1)
    block = ops.slice_axis(block, start=col, stop=col + size, axis=nd - 1, step=1)
    return ops.einsum(block, subscripts="...ii->...i")


@implements(np.linalg.trace)
def _trace(x, /, *, offset=0, dtype=None):
    d = _diagonal(x, offset=offset)
    if dtype is not None:
        d = ops.astype(d, dtype=np.dtype(dtype).name)
    total = ops.reduce_sum(d, axes=(_ndim(d) - 1,), keepdims=False)
    if dtype is None or aval_of(total).dtype == np.dtype(dtype):
        return total
    return ops.astype(total, dtype=np.dtype(dtype).name)  # int16 stays int16, as np.trace's


@implements(np.linalg.multi_dot)
def _multi_dot(arrays, *, out=None):
    arrays = [operand(a) for a in arrays]
    if len(arrays) < 2:
        raise ValueError("numpy.linalg.multi_dot: expecting at least two arrays")
    first, last = _ndim(arrays[0]) == 1, _ndim(arrays[-1]) == 1
    if first:
        arrays[0] = ops.expand_dims(arrays[0], axes=(0,))
    if last:
        arrays[-1] = ops.expand_dims(arrays[-1], axes=(1,))
    for a in arrays:  # only the first and the last may be vectors
        if _ndim(a) != 2:
            raise np.linalg.LinAlgError(f"numpy.linalg.multi_dot: {_ndim(a)}-dimensional array "
                                        "given. Array must be two-dimensional")
    result = _chain(arrays, _chain_order([_shape(a) for a in arrays]), 0, len(arrays) - 1)
    if first and last:  # a 1 x 1 product: NumPy's multi_dot returns a NumPy scalar here
        result = ops.reduce_sum(result, axes=(0, 1), keepdims=False)
    elif first:
        result = ops.squeeze(result, axes=(0,))
    elif last:
        result = ops.squeeze(result, axes=(_ndim(result) - 1,))
    return result  # out= is written by _out.call_with_out, before this sees it


def _chain_order(shapes):
    """The cheapest parenthesization of a matrix chain (dynamic programming over splits)."""
    dims = [s[0] for s in shapes] + [shapes[-1][1]]
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def _chain(arrays, split, i, j):
    if i == j:
        return arrays[i]
    k = split[i][j]
    return ops.matmul(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


@implements(np.linalg.matrix_power)
def _matrix_power(a, n):
    if not isinstance(n, int | np.integer):
        raise TypeError("numpy.linalg.matrix_power: exponent must be an integer")
    shape = _shape(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise np.linalg.LinAlgError("numpy.linalg.matrix_power: the last 2 dimensions of the "
                                    f"array must be square, got shape {shape}")
    if n == 0:
        eye = ops.equal(ops.iota_like(a, shape=shape, axis=len(shape) - 2),
                        ops.iota_like(a, shape=shape, axis=len(shape) - 1))
        return ops.astype(eye, dtype=aval_of(a).dtype.name)
    base = ops.inv(a) if n < 0 else a
    result = None
    for bit in bin(abs(int(n)))[2:]:  # square and multiply, most significant bit first
        result = None if result is None else ops.matmul(result, result)
        if bit == "1":
            result = base if result is None else ops.matmul(result, base)
    return result


# --- solves and inverses -----------------------------------------------------------------------

@implements(np.linalg.inv)
def _inv(a):
    return ops.inv(a)


@implements(np.linalg.solve)
def _solve(a, b):
    a, b = operand(a), operand(b)
    if _ndim(b) == 1:  # NumPy 2: a 1-D right-hand side is a vector, anything else a matrix stack
        return ops.squeeze(ops.solve(a, ops.expand_dims(b, axes=(1,))), axes=(_ndim(a) - 1,))
    return ops.solve(a, b)


@implements(np.linalg.det)
def _det(a):
    return ops.det(a)


@implements(np.linalg.slogdet)
def _slogdet(a):
    return SlogdetResult(*ops.slogdet(a))


def _cutoff(rcond, rtol, default):
    value = rtol if rtol is not None else (rcond if rcond is not None else default)
    if value is not None and np.ndim(value) != 0:
        raise TypeError("numpy.linalg: an array-valued rcond/rtol is not supported on traced "
                        "arrays; pass a float")
    return None if value is None else float(value)


@implements(np.linalg.pinv)
def _pinv(a, rcond=None, hermitian=False, *, rtol=np._NoValue):
    if rcond is not None and rtol is not np._NoValue:
        raise ValueError("`rtol` and `rcond` can't be both set.")
    a = _inexact(a)
    default = None  # NumPy's 1e-15, unless rtol=None asks for the Array API's max(m, n) * eps
    if rtol is None:
        default = max(_shape(a)[-2:]) * float(np.finfo(aval_of(a).dtype).eps)
    rtol = None if rtol is np._NoValue else rtol
    return ops.pinv(a, rcond=_cutoff(rcond, rtol, default), hermitian=bool(hermitian))


@implements(np.linalg.tensorinv)
def _tensorinv(a, ind=2):
    shape = _shape(a)
    if ind <= 0:
        raise ValueError("numpy.linalg.tensorinv: invalid ind argument, it must be positive")
    rows = math.prod(shape[ind:])
    inverse = ops.inv(ops.reshape(a, shape=(rows, math.prod(shape) // max(rows, 1))))
    return ops.reshape(inverse, shape=(*shape[ind:], *shape[:ind]))


@implements(np.linalg.tensorsolve)
def _tensorsolve(a, b, axes=None):
    nd = _ndim(a)
    if axes is not None:
        moved = each_axis(axes, nd)
        order = [k for k in range(nd) if k not in moved] + list(moved)
        a = ops.permute_dims(a, axes=tuple(order))
    old = _shape(a)[_ndim(b):]
    size = math.prod(old)
    if math.prod(_shape(a)) != size * size:
        raise np.linalg.LinAlgError("numpy.linalg.tensorsolve: input arrays must satisfy the "
                                    "requirement prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = ops.solve(ops.reshape(a, shape=(size, size)), ops.reshape(b, shape=(size, 1)))
    return ops.reshape(x, shape=old)


@implements(np.linalg.lstsq, dynamic_only=True)
def _lstsq(a, b, rcond=None):
    """x = pinv(a) b; the residuals' shape depends on the rank, so this is dynamic only."""
    a, b = operand(a), operand(b)
    for arg, ndims in ((a, (2,)), (b, (1, 2))):  # NumPy's LinAlgError, not an unpacking error
        if _ndim(arg) not in ndims:
            raise np.linalg.LinAlgError(f"numpy.linalg.lstsq: {_ndim(arg)}-dimensional array "
                                        "given; a must be 2-d and b 1-d or 2-d")
    m, n = _shape(a)
    if _shape(b)[0] != m:
        raise np.linalg.LinAlgError(f"numpy.linalg.lstsq: incompatible dimensions: a has {m} "
                                    f"rows, b {_shape(b)[0]}")
    cutoff = _cutoff(rcond, None, np.finfo(aval_of(_inexact(a)).dtype).eps * max(m, n))
    x = ops.matmul(ops.pinv(_inexact(a), rcond=cutoff, hermitian=False), b)
    s = ops.svdvals(_inexact(a))
    rank = int(concrete(ops.reduce_sum(ops.greater(s, ops.multiply(ops.reduce_max(
        s, axes=(0,), keepdims=False), cutoff)), axes=(0,), keepdims=False), "numpy.linalg.lstsq"))
    if rank == n and m > n:
        r = ops.subtract(b, ops.matmul(a, x))
        sq = ops.real(ops.multiply(r, ops.conj(r))) if aval_of(r).dtype.kind == "c" \
            else ops.square(r)
        residuals = ops.reduce_sum(sq, axes=(0,), keepdims=_ndim(b) == 1)
    else:
        residuals = ops.zeros_like(s, shape=(0,))
    return x, residuals, np.int32(rank), s


# --- decompositions ----------------------------------------------------------------------------

@implements(np.linalg.cholesky)
def _cholesky(a, /, *, upper=False):
    if upper:  # A = U^H U with U read from the upper triangle
        return _mH(ops.cholesky(_mH(a)))
    return ops.cholesky(a)


@implements(np.linalg.qr)
def _qr(a, mode="reduced"):
    if mode not in ("reduced", "complete", "r", "raw"):
        raise ValueError(f"numpy.linalg.qr: unrecognized mode {mode!r}")
    if mode == "raw":
        raise TracingError("numpy.linalg.qr(mode='raw') returns LAPACK's Householder "
                           "reflectors, which have no derivative here; use mode='reduced'")
    q, r = ops.qr(a, complete=mode == "complete")
    return r if mode == "r" else QRResult(q, r)


@implements(np.linalg.svd)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """``hermitian=True`` reads the lower triangle, as NumPy does, and factors it with the general
    SVD: the same singular values, and singular vectors equal to NumPy's up to their gauge."""
    if hermitian:  # NumPy reads the lower triangle of a Hermitian input
        if _ndim(a) < 2 or _shape(a)[-1] != _shape(a)[-2]:
            raise np.linalg.LinAlgError("numpy.linalg.svd(hermitian=True): last 2 dimensions "
                                        "of the array must be square")
        a = _inexact(a)  # (the mask halving the diagonal must not round to an integer 0)
        a = hermitian_part(a, a, lower=True)
    if not compute_uv:
        return ops.svdvals(a)
    return SVDResult(*ops.svd(a, full_matrices=bool(full_matrices)))


@implements(np.linalg.svdvals)
def _svdvals(x, /):
    return ops.svdvals(x)


def _lower(uplo):
    if uplo not in ("L", "U", "l", "u"):
        raise ValueError(f"numpy.linalg: UPLO argument must be 'L' or 'U', got {uplo!r}")
    return uplo.upper() == "L"


@implements(np.linalg.eigh)
def _eigh(a, UPLO="L"):  # noqa: N803 (NumPy's keyword)
    return EighResult(*ops.eigh(a, lower=_lower(UPLO)))


@implements(np.linalg.eigvalsh)
def _eigvalsh(a, UPLO="L"):  # noqa: N803
    return ops.eigvalsh(a, lower=_lower(UPLO))


def _real_when_numpy_is(a, w, what):
    """For a real matrix NumPy returns real eigenvalues (and vectors) exactly when every
    eigenvalue is real: a dtype that depends on the data, so it is read in dynamic transforms
    and cannot be staged (stage ``a.astype(complex)``, whose results are always complex).
    From NumPy 2.5 on, eig and eigvals are complex for every matrix."""
    if EIG_ALWAYS_COMPLEX or aval_of(a).dtype.kind == "c":
        return False
    values = concrete(w, f"numpy.linalg.{what} of a real matrix (NumPy's result dtype depends "
                         "on whether every eigenvalue is real; pass a.astype(complex) to stage "
                         "it)")
    return not np.any(np.imag(values))


@implements(np.linalg.eig, dynamic_only=True)  # staged for complex input only
def _eig(a):
    """Eigenvalues and unit eigenvectors; real arrays for a real matrix whose eigenvalues are
    all real, as NumPy returns."""
    w, v = ops.eig(a)
    if _real_when_numpy_is(a, w, "eig"):
        return EigResult(ops.real(w), ops.real(v))
    return EigResult(w, v)


@implements(np.linalg.eigvals, dynamic_only=True)
def _eigvals(a):
    w = ops.eig(a)[0]
    return ops.real(w) if _real_when_numpy_is(a, w, "eigvals") else w


# --- norms, condition number, rank -------------------------------------------------------------

def _abs_squared(x):
    if aval_of(x).dtype.kind == "c":
        return ops.real(ops.multiply(x, ops.conj(x)))
    return ops.square(x)


def _norm_of_vectors(x, axes, ord, keepdims):
    x = _inexact(x)
    if ord is None or ord == 2:
        return ops.sqrt(ops.reduce_sum(_abs_squared(x), axes=axes, keepdims=keepdims))
    if ord == 0:  # the count of nonzero entries
        nonzero = ops.astype(ops.not_equal(x, 0), dtype=aval_of(ops.abs(x)).dtype.name)
        return ops.reduce_sum(nonzero, axes=axes, keepdims=keepdims)
    if not isinstance(ord, int | float | np.integer | np.floating):
        raise ValueError(f"numpy.linalg: invalid norm order {ord!r} for vectors")
    magnitude = ops.abs(x)
    if ord == math.inf:
        return ops.reduce_max(magnitude, axes=axes, keepdims=keepdims)
    if ord == -math.inf:
        return ops.reduce_min(magnitude, axes=axes, keepdims=keepdims)
    if ord == 1:
        return ops.reduce_sum(magnitude, axes=axes, keepdims=keepdims)
    total = ops.reduce_sum(ops.pow(magnitude, float(ord)), axes=axes, keepdims=keepdims)
    return ops.pow(total, 1.0 / float(ord))


def _norm_of_matrices(x, axes, ord, keepdims):
    x = _inexact(x)
    row, col = axes
    if row == col:
        raise ValueError("numpy.linalg: duplicate axes given for a matrix norm")
    both = tuple(sorted(axes))
    if ord in (None, "fro", "f"):
        return ops.sqrt(ops.reduce_sum(_abs_squared(x), axes=both, keepdims=keepdims))
    if ord in ("nuc", 2, -2):
        nd = _ndim(x)
        rest = [k for k in range(nd) if k not in axes]
        s = ops.svdvals(ops.permute_dims(x, axes=(*rest, row, col)))
        last = (len(rest),)
        s = {"nuc": ops.reduce_sum, 2: ops.reduce_max, -2: ops.reduce_min}[ord](
            s, axes=last, keepdims=False)
        return ops.expand_dims(s, axes=both) if keepdims else s
    sums = {1: (row, col, ops.reduce_max), -1: (row, col, ops.reduce_min),
            math.inf: (col, row, ops.reduce_max), -math.inf: (col, row, ops.reduce_min)}
    if ord not in sums:
        raise ValueError(f"numpy.linalg: invalid norm order {ord!r} for matrices")
    summed, picked, pick = sums[ord]
    total = ops.reduce_sum(ops.abs(x), axes=(summed,), keepdims=keepdims)
    if not keepdims and picked > summed:  # the summed axis is gone
        picked -= 1
    return pick(total, axes=(picked,), keepdims=keepdims)  # a NumPy scalar for one matrix


def _flat_norm(x, keepdims):
    """The 2-norm of all of ``x``'s entries as NumPy computes it: the square root of the dot
    product of the flat values with themselves (real and imaginary parts apart). NumPy ravels
    in memory order, which is this row-major order for every C-contiguous array."""
    flat = ops.reshape(_inexact(x), shape=(math.prod(_shape(x)),))
    if aval_of(flat).dtype.kind == "c":
        re, im = ops.real(flat), ops.imag(flat)
        squares = ops.add(ops.vecdot(re, re), ops.vecdot(im, im))
    else:
        squares = ops.vecdot(flat, flat)
    out = ops.sqrt(squares)
    return ops.reshape(out, shape=(1,) * _ndim(x)) if keepdims else out


@implements(np.linalg.norm)
def _norm(x, ord=None, axis=None, keepdims=False):
    nd = _ndim(x)
    if axis is None:
        if ord is None or ord in ("f", "fro") and nd == 2 or ord == 2 and nd == 1:
            return _flat_norm(x, keepdims)
        if nd not in (1, 2):
            raise ValueError("numpy.linalg.norm: improper number of dimensions to norm")
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):  # NumPy's int(axis): 1.0 works, a list does not
        try:
            axis = int(axis)
        except Exception as error:
            raise TypeError("numpy.linalg.norm: 'axis' must be None, an integer or a tuple of "
                            f"integers, not {type(axis).__name__}") from error
    axes = each_axis(axis, nd)  # in the given order: it says which axis is rows
    if len(axes) == 1:
        if isinstance(ord, str):
            raise ValueError(f"numpy.linalg.norm: invalid norm order {ord!r} for vectors")
        return _norm_of_vectors(x, axes, ord, keepdims)
    if len(axes) == 2:
        return _norm_of_matrices(x, axes, ord, keepdims)
    raise ValueError("numpy.linalg.norm: improper number of dimensions to norm")


@implements(np.linalg.vector_norm)
def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    nd = _ndim(x)
    if axis is None and keepdims is False:
        return _norm_of_vectors(ops.reshape(x, shape=(math.prod(_shape(x)),)), (0,), ord, False)
    return _norm_of_vectors(x, normalize_axes(reduction_axis(axis), nd), ord, keepdims)


@implements(np.linalg.matrix_norm)
def _matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return _norm_of_matrices(x, each_axis((-2, -1), _ndim(x)), ord, keepdims)  # AxisError < 2-d


@implements(np.linalg.cond)
def _cond(x, p=None):
    """As NumPy: inf for a singular matrix, the inverse taken in double precision for the norms
    other than 2 and -2. At a singular matrix the derivative is NaN (or inf), never 0."""
    shape, nd = _shape(x), _ndim(x)
    if nd >= 2 and 0 in shape[-2:]:
        raise np.linalg.LinAlgError("cond is not defined on empty arrays")
    axes = (nd - 2, nd - 1)
    with np.errstate(all="ignore"):  # singular matrices divide by zero
        clean = ops.logical_not(ops.reduce_max(ops.isnan(x), axes=axes, keepdims=False))
        if p in (None, 2, -2):
            x = _inexact(x)
            finite = None
            if not _svd_refuses_nonfinite():  # NumPy 2.5: NaN singular values, no LinAlgError
                finite = ops.reduce_min(ops.isfinite(x), axes=axes, keepdims=True)
                x = ops.where(finite, x, _matrix_power(x, 0))
            s = ops.svdvals(x)
            big = ops.reduce_max(s, axes=(nd - 2,), keepdims=False)
            small = ops.reduce_min(s, axes=(nd - 2,), keepdims=False)
            r = ops.divide(small, big) if p == -2 else ops.divide(big, small)
            if finite is not None:
                r = ops.where(ops.squeeze(finite, axes=axes), r, math.nan)
            singular = ops.isnan(r)  # a zero matrix, 0 / 0
        else:
            if nd < 2 or shape[-1] != shape[-2]:
                raise np.linalg.LinAlgError("numpy.linalg.cond: the last 2 dimensions of the "
                                            f"array must be square, got shape {shape}")
            r, singular = _cond_by_inverse(x, p, axes)
        # inf where no entry is NaN, as NumPy's, times inf again, so the derivative there is
        # NaN (0 * inf) where the where alone would give a silent 0; NaN where an entry is NaN
        singular = ops.logical_and(singular, clean)
        scale = ops.where(singular, math.inf, ops.where(clean, 1.0, math.nan))
        return ops.multiply(ops.where(singular, math.inf, r),
                            ops.astype(scale, dtype=aval_of(r).dtype.name))


@functools.cache
def _svd_refuses_nonfinite() -> bool:
    """Whether this NumPy's cond (its SVD) raises LinAlgError for a NaN entry, as NumPy 2.4
    does; 2.5 gives NaN singular values, which cond reports as NaN (inf without a NaN entry)."""
    try:
        with np.errstate(all="ignore"):
            np.linalg.cond(np.array([[np.nan, 1.0], [1.0, 1.0]]))
    except np.linalg.LinAlgError:
        return True
    return False


def _cond_by_inverse(x, p, axes):
    """``norm(x, p) * norm(inv(x), p)``, the inverse in double precision, and where LAPACK's LU
    finds x singular or the inverse is NaN. A singular matrix is replaced by the identity, after
    a product with NaN, so that its cotangent is NaN rather than 0."""
    wide = np.complex128 if aval_of(x).dtype.kind == "c" else np.float64
    singular = ops.equal(ops.slogdet(astype(x, wide))[0], 0)
    blocks = ops.expand_dims(singular, axes=axes)
    x = _inexact(x)
    real = real_dtype(aval_of(x).dtype).name
    nan = ops.astype(ops.where(blocks, math.nan, 1.0), dtype=real)
    x = ops.where(blocks, _matrix_power(x, 0), ops.multiply(x, nan))
    r = ops.multiply(_norm_of_matrices(x, axes, p, False),
                     _norm_of_matrices(ops.inv(astype(x, wide)), axes, p, False))
    return astype(r, real), ops.logical_or(singular, ops.isnan(r))  # inf entries: a NaN inverse


@implements(np.linalg.matrix_rank, nondiff=True)
def _matrix_rank(A, tol=None, hermitian=False, *, rtol=None):  # noqa: N803 (NumPy's name)
    if rtol is not None and tol is not None:
        raise ValueError("`tol` and `rtol` can't be both set.")
    nd = _ndim(A)
    if nd < 2:
        return ops.astype(ops.reduce_max(ops.not_equal(A, 0), axes=tuple(range(nd)),
                                         keepdims=False), dtype="int64")
    a = _inexact(A)
    s = ops.abs(ops.eigvalsh(a, lower=True)) if hermitian else ops.svdvals(a)
    if tol is None:
        m, n = _shape(A)[-2:]
        rtol = max(m, n) * np.finfo(aval_of(s).dtype).eps if rtol is None else rtol
        if np.ndim(rtol):  # one per matrix of the stack, as NumPy's rtol[..., newaxis]
            rtol = ops.expand_dims(np.asarray(rtol), axes=(np.ndim(rtol),))
        tol = ops.multiply(ops.reduce_max(s, axes=(nd - 2,), keepdims=True), rtol)
    elif np.ndim(tol):
        tol = ops.expand_dims(np.asarray(tol), axes=(np.ndim(tol),))
    above = ops.greater(s, tol)  # tol may add leading axes: count along the last one
    return ops.reduce_sum(above, axes=(_ndim(above) - 1,), keepdims=False)

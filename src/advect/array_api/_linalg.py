"""Linear algebra on tracers: the main-namespace products and the ``linalg`` extension.

Decompositions bind the canonical ops of ``ops/linalg.py``; norms, traces, diagonals, cross
products and powers are composites. Results that the standard returns as named tuples are
named tuples here too.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .. import ops
from ..dtypes import aval_of, real_dtype, result_type
from ..ops._rules import axis_last, each_axis, normalize_axes
from ..providers import numpy_dtype
from ._functions import axis_of, cast, shape_of
from ._probes import cholesky_reads_upper
from ._tables import op_named, translates

__all__ = ["EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult"]

EigResult = namedtuple("EigResult", "eigenvalues eigenvectors")
EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
QRResult = namedtuple("QRResult", "Q R")
SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
SVDResult = namedtuple("SVDResult", "U S Vh")


def _conj(x):
    return ops.conj(x) if aval_of(x).dtype.kind == "c" else x


def _abs2(x):
    return ops.real(ops.multiply(x, ops.conj(x))) if aval_of(x).dtype.kind == "c" \
        else ops.square(x)


# --- products --------------------------------------------------------------------------------

@translates("matmul", "linalg.matmul")
def _matmul(ctx, x1, x2, /):
    return ops.matmul(x1, x2)


@translates("matrix_transpose", "linalg.matrix_transpose")
def _matrix_transpose(ctx, x, /):
    if len(shape_of(x)) < 2:
        raise ValueError("matrix_transpose: x must have at least 2 dimensions")
    return ops.matrix_transpose(x)


@translates("tensordot", "linalg.tensordot")
def _tensordot(ctx, x1, x2, /, *, axes=2):
    n1, n2 = len(shape_of(x1)), len(shape_of(x2))
    if isinstance(axes, int):
        a1, a2 = tuple(range(n1 - axes, n1)), tuple(range(axes))
    else:
        a1, a2 = (each_axis(ax, n) for ax, n in zip(axes, (n1, n2)))
    return ops.dot_general(x1, x2, contract=(a1, a2), batch=((), ()))


def _vector_axis(ctx, where: str, axis: int, ndim: int) -> int:
    """The axis of the vectors; revisions 2023.12 and later require a negative one."""
    if ctx.revision != "2022.12" and axis >= 0:
        raise ValueError(f"{where}: axis must be a negative integer in Array API revision "
                         f"{ctx.revision}, got {axis}")
    return axis_of(axis, ndim)


@translates("vecdot", "linalg.vecdot")
def _vecdot(ctx, x1, x2, /, *, axis=-1):
    dtype = result_type(aval_of(x1), aval_of(x2))  # the operands' kinds may differ, as in matmul
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    s1, s2 = tuple(shape_of(x1)), tuple(shape_of(x2))
    if bool(s1) != bool(s2):  # a 0-d operand the provider took (its refusals are probed
        x1, x2 = (ops.broadcast_to(x1, shape=s2), x2) if s2 else (  # first) broadcasts to
            x1, ops.broadcast_to(x2, shape=s1))                    # the other's shape
    ndim = max(len(shape_of(x1)), len(shape_of(x2)))
    axis = _vector_axis(ctx, "vecdot", axis, ndim) - ndim  # counted from the end
    # the provider's own vecdot, so values round as its eager vecdot does
    return ops.vecdot(axis_last(x1, axis), axis_last(x2, axis))


@translates("linalg.outer")
def _outer(ctx, x1, x2, /):
    return ops.multiply(ops.expand_dims(x1, axes=(1,)), x2)


@translates("linalg.cross")
def _cross(ctx, x1, x2, /, *, axis=-1):
    ndim = max(len(shape_of(x1)), len(shape_of(x2)))
    axis = _vector_axis(ctx, "cross", axis, ndim)
    for x in (x1, x2):
        shape = shape_of(x)
        if len(shape) < ndim - axis or shape[axis - ndim] != 3:
            raise ValueError(f"cross: the vectors must have 3 elements along axis {axis - ndim}, "
                             f"got shape {shape}")

    def part(x, i):
        lead = ((None, None, None),) * (axis - ndim + len(shape_of(x)))
        return ops.gather(x, index=lead + (i,))

    a, b = [part(x1, i) for i in range(3)], [part(x2, i) for i in range(3)]
    parts = [ops.subtract(ops.multiply(a[(i + 1) % 3], b[(i + 2) % 3]),
                          ops.multiply(a[(i + 2) % 3], b[(i + 1) % 3])) for i in range(3)]
    return ops.concat(*[ops.expand_dims(p, axes=(axis,)) for p in parts], axis=axis)


# --- diagonals and traces ----------------------------------------------------------------------

def diagonal(ctx, x, offset):
    shape = shape_of(x)
    if len(shape) < 2:
        raise ValueError("diagonal: x must have at least 2 dimensions")
    m, n = shape[-2], shape[-1]
    length = max(0, min(m, n - offset) if offset >= 0 else min(m + offset, n))
    device = aval_of(x).device
    rows = ctx.xp.arange(max(-offset, 0), max(-offset, 0) + length, device=device)
    cols = ctx.xp.arange(max(offset, 0), max(offset, 0) + length, device=device)
    return ops.gather(x, rows, cols, index=((None, None, None),) * (len(shape) - 2)
                      + ("array", "array"))


@translates("linalg.diagonal")
def _diagonal(ctx, x, /, *, offset=0):
    return diagonal(ctx, x, int(offset))


@translates("linalg.trace")
def _trace(ctx, x, /, *, offset=0, dtype=None):
    d = diagonal(ctx, x, int(offset))
    if dtype is None:
        return ops.reduce_sum(d, axes=(len(shape_of(d)) - 1,), keepdims=False)
    d = cast(d, numpy_dtype(dtype))  # and the sum in it: small integers accumulate in 64 bits
    total = ops.reduce_sum(d, axes=(len(shape_of(d)) - 1,), keepdims=False)
    return cast(total, aval_of(d).dtype)


# --- norms -----------------------------------------------------------------------------------

@translates("linalg.vector_norm")
def _vector_norm(ctx, x, /, *, axis=None, keepdims=False, ord=2):
    axes = normalize_axes(axis, len(shape_of(x)))
    keepdims = bool(keepdims)
    if ord == 2:
        return ops.sqrt(ops.reduce_sum(_abs2(x), axes=axes, keepdims=keepdims))
    a = ops.abs(x)
    if ord == float("inf"):
        return ops.reduce_max(a, axes=axes, keepdims=keepdims)
    if ord == float("-inf"):
        return ops.reduce_min(a, axes=axes, keepdims=keepdims)
    if ord == 0:
        hits = cast(ops.not_equal(a, 0), aval_of(a).dtype)
        return ops.reduce_sum(hits, axes=axes, keepdims=keepdims)
    total = ops.reduce_sum(ops.pow(a, float(ord)), axes=axes, keepdims=keepdims)
    return ops.pow(total, 1.0 / float(ord))


@translates("linalg.matrix_norm", needs=("svdvals",))
def _matrix_norm(ctx, x, /, *, keepdims=False, ord="fro"):
    ndim = len(shape_of(x))
    axes = (ndim - 2, ndim - 1)
    if ord == "fro":
        out = ops.sqrt(ops.reduce_sum(_abs2(x), axes=axes, keepdims=True))
    elif ord in ("nuc", 2, -2):
        s = ops.expand_dims(op_named("svdvals")(x), axes=(ndim - 1,))
        reduce = {"nuc": ops.reduce_sum, 2: ops.reduce_max, -2: ops.reduce_min}[ord]
        out = reduce(s, axes=(ndim - 2,), keepdims=True)
    elif ord in (1, -1, float("inf"), float("-inf")):
        summed_axis = ndim - 2 if ord in (1, -1) else ndim - 1
        sums = ops.reduce_sum(ops.abs(x), axes=(summed_axis,), keepdims=True)
        reduce = ops.reduce_max if ord in (1, float("inf")) else ops.reduce_min
        out = reduce(sums, axes=(2 * ndim - 3 - summed_axis,), keepdims=True)
    else:
        raise ValueError(f"matrix_norm: unsupported ord {ord!r}")
    return out if keepdims else ops.squeeze(out, axes=axes)


# --- decompositions and solves ---------------------------------------------------------------

@translates("linalg.cholesky", needs=("cholesky",))
def _cholesky(ctx, x, /, *, upper=False):
    if not upper:
        return op_named("cholesky")(x)
    # U = L^H, and L factors the triangle the provider reads: its lower one, or the upper one
    # (the conjugate transpose's lower one) where the provider reads that (NumPy, PyTorch)
    if cholesky_reads_upper(ctx):
        x = _conj(ops.matrix_transpose(x))
    return _conj(ops.matrix_transpose(op_named("cholesky")(x)))


@translates("linalg.det", needs=("det",))
def _det(ctx, x, /):
    return op_named("det")(x)


@translates("linalg.slogdet", needs=("slogdet",))
def _slogdet(ctx, x, /):
    return SlogdetResult(*op_named("slogdet")(x))


@translates("linalg.inv", needs=("inv",))
def _inv(ctx, x, /):
    return op_named("inv")(x)


@translates("linalg.solve", needs=("solve",))
def _solve(ctx, x1, x2, /):
    if len(shape_of(x2)) == 1:  # the standard's rule: a 1-D x2 is one vector, for every matrix
        column = op_named("solve")(x1, ops.expand_dims(x2, axes=(1,)))
        return ops.squeeze(column, axes=(len(shape_of(column)) - 1,))
    return op_named("solve")(x1, x2)


@translates("linalg.eigh", needs=("eigh",))
def _eigh(ctx, x, /):
    return EighResult(*op_named("eigh")(x, lower=True))


@translates("linalg.eigvalsh", needs=("eigvalsh",))
def _eigvalsh(ctx, x, /):
    return op_named("eigvalsh")(x, lower=True)


@translates("linalg.eig", needs=("eig",))
def _eig(ctx, x, /):
    return EigResult(*op_named("eig")(x))


@translates("linalg.eigvals", needs=("eig",))
def _eigvals(ctx, x, /):
    return op_named("eig")(x)[0]


@translates("linalg.svd", needs=("svd",))
def _svd(ctx, x, /, *, full_matrices=True):
    return SVDResult(*op_named("svd")(x, full_matrices=bool(full_matrices)))


@translates("linalg.svdvals", needs=("svdvals",))
def _svdvals(ctx, x, /):
    return op_named("svdvals")(x)


@translates("linalg.qr", needs=("qr",))
def _qr(ctx, x, /, *, mode="reduced"):
    if mode not in ("reduced", "complete"):
        raise ValueError(f"qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*op_named("qr")(x, complete=mode == "complete"))


def _default_rtol(x, rtol):
    if rtol is not None:
        return rtol
    shape = shape_of(x)
    return max(shape[-2:]) * float(np.finfo(real_dtype(aval_of(x).dtype)).eps)


@translates("linalg.pinv", needs=("pinv",))
def _pinv(ctx, x, /, *, rtol=None):
    return op_named("pinv")(x, rcond=_default_rtol(x, rtol), hermitian=False)


@translates("linalg.matrix_rank", needs=("svdvals",))
def _matrix_rank(ctx, x, /, *, rtol=None):
    if aval_of(x).dtype.kind not in "fc":  # integer matrices have a rank too
        x = cast(x, numpy_dtype(ctx.xp.asarray(0.0).dtype))
    s = op_named("svdvals")(x)
    last = len(shape_of(s)) - 1
    rtol = _default_rtol(x, rtol)
    if hasattr(rtol, "shape"):  # one tolerance per matrix: shape(x)[:-2]
        rtol = ops.expand_dims(rtol, axes=(len(shape_of(rtol)),))
    tol = ops.multiply(ops.reduce_max(s, axes=(last,), keepdims=True), rtol)
    hits = ops.astype(ops.greater(s, tol), dtype="int64")
    return ops.reduce_sum(hits, axes=(last,), keepdims=False)


def _identity_like(x):
    shape = shape_of(x)
    rows = ops.iota_like(x, shape=shape, axis=len(shape) - 2)
    cols = ops.iota_like(x, shape=shape, axis=len(shape) - 1)
    return cast(ops.equal(rows, cols), aval_of(x).dtype)


@translates("linalg.matrix_power", needs=("inv",))
def _matrix_power(ctx, x, n, /):
    n = int(n)
    if n < 0:
        x, n = op_named("inv")(x), -n
    result, base = None, x
    while n:  # binary powering: log2(n) products
        if n & 1:
            result = base if result is None else ops.matmul(result, base)
        n >>= 1
        if n:
            base = ops.matmul(base, base)
    return _identity_like(x) if result is None else result

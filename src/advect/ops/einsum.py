"""``einsum``: contractions written in Einstein notation, the one op behind np.einsum.

The attr ``subscripts`` is normalized by the frontend: no spaces and an explicit ``->`` output.
The optional attr ``optimize`` is NumPy's (see :func:`einsum_optimize`); it picks NumPy's
contraction path and with it the result type: NumPy returns a 0-d array for some optimized
contractions to a scalar and a NumPy scalar otherwise. ``...`` is allowed and broadcasts as
NumPy's does, and so do letters labelling axes of size 1. The op is linear in each operand
separately: its JVP sums one einsum per operand with a tangent, and the transpose for an operand
is one more einsum (against ones for letters only that operand carries, and identity matrices
for letters it repeats, as in ``ii->i``).

Example:
    >>> import numpy as np
    >>> from advect import ops
    >>> ops.einsum(np.eye(2), np.ones(2), subscripts="ij,j->i").tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

import string

import numpy as np

from .. import ops
from ..core import Op
from ..dtypes import Aval, aval_of, real_dtype, result_type
from ..errors import bounded
from . import _portable
from ._rules import add_tangents, conj, fit, is_linear, unbroadcast


def einsum_letters(subscripts: str, ndims) -> tuple[list[str], str]:
    """The letters of each operand and of the output of a normalized ``subscripts`` (explicit
    ``->``); each ``...`` becomes fresh letters, right-aligned as NumPy broadcasts it.

    Example:
        >>> einsum_letters("...ij,j->...i", (3, 1))
        (['aij', 'j'], 'ai')
    """
    lhs, out = subscripts.split("->")
    ins = lhs.split(",")
    if len(ins) != len(ndims):
        raise ValueError(f"einsum: {len(ins)} operand subscripts for {len(ndims)} operands")
    fresh = [c for c in string.ascii_letters if c not in subscripts]
    ell = "".join(fresh[:max((nd - len(s) + 3 for s, nd in zip(ins, ndims) if "..." in s),
                             default=0)])
    letters = []
    for s, nd in zip(ins, ndims):
        width = nd - len(s) + 3
        if "..." in s and width >= 0:
            s = s.replace("...", ell[len(ell) - width:])
        if len(s) != nd:
            raise ValueError(f"einsum: subscripts {bounded(s)} do not match an operand with {nd} "
                             "dimensions")
        letters.append(s)
    if ell and "..." not in out:
        raise ValueError(f"einsum: {bounded(subscripts)} broadcasts over '...' but its output "
                         "has no '...' to hold those dimensions")
    return letters, out.replace("...", ell)


def _letter_sizes(ins, shapes) -> dict:
    sizes: dict = {}
    for s, shape in zip(ins, shapes):
        for c, n in zip(s, shape):
            old = sizes.get(c, 1)
            if n != old and 1 not in (n, old):
                raise ValueError(f"einsum: subscript {c!r} labels axes of sizes {old} and {n}")
            sizes[c] = n if old == 1 else old
    return sizes


def _einsum_abstract(*xs, subscripts, optimize=False):
    ins, out = einsum_letters(subscripts, [x.ndim for x in xs])
    sizes = _letter_sizes(ins, [x.shape for x in xs])
    missing = [c for c in out if c not in sizes]
    if missing or len(set(out)) != len(out):
        raise ValueError(f"einsum: output subscripts {bounded(out)} must be distinct letters that "
                         "appear in the inputs")
    return Aval(tuple(sizes[c] for c in out), result_type(*xs), False, xs[0].device)


def einsum_optimize(optimize, count: int):
    """NumPy's ``optimize`` argument of an einsum of ``count`` operands as an attr value: False,
    None, ``"greedy"`` (for True), ``"optimal"``, a ``(name, memory_limit)`` pair, or an explicit
    path ``("einsum_path", (i, j), ...)`` of tuples; an invalid one raises as NumPy does.

    Example:
        >>> einsum_optimize(["einsum_path", [0, 1], (0, 1)], 3)
        ('einsum_path', (0, 1), (0, 1))
    """
    if optimize is False or optimize is None:
        return optimize
    if optimize is True:
        return "greedy"
    if isinstance(optimize, str):
        if optimize not in ("greedy", "optimal"):
            raise KeyError("Path name %s not found", optimize)
        return optimize
    steps = list(optimize) if isinstance(optimize, list | tuple) else []
    if steps and isinstance(steps[0], str) and steps[0] == "einsum_path":
        path = tuple(tuple(int(i) for i in step) for step in steps[1:])
        left = count
        for step in path:  # each step contracts distinct operands of those left
            if not step or len(set(step)) != len(step) or not all(0 <= i < left for i in step):
                break
            left -= len(step) - 1
        else:
            if left == 1:
                return ("einsum_path", *path)
        raise ValueError(f"einsum: {bounded(optimize)} is not a contraction path of {count} "
                         "operands")
    if len(steps) == 2 and steps[0] in ("greedy", "optimal") \
            and isinstance(steps[1], int | float | np.integer | np.floating):
        return (steps[0], int(steps[1]))
    raise TypeError(f"Did not understand the path: {bounded(optimize)}")


def _einsum_impl(xp, *xs, subscripts, optimize=False):
    if xp is np:
        if optimize is False:  # NumPy's plain einsum (a scalar for a 0-d result) by a fast path
            out = np.einsum(subscripts, *xs, optimize=len(xs) > 2)
            return out[()] if type(out) is np.ndarray and out.ndim == 0 else out
        return np.einsum(subscripts, *xs, optimize=optimize)
    if not hasattr(xp, "einsum"):  # not in the standard: NumPy on a DLPack view (CPU)
        return _portable.einsum(xp, subscripts, *xs)
    return xp.einsum(subscripts, *xs)


def _einsum_jvp(primals, tangents, out, *, subscripts, optimize=False):
    t = None
    for k, dx in enumerate(tangents):  # multilinear: one term per operand with a tangent
        if dx is not None:  # the same path for each term: the tangent's type is the primal's
            t = add_tangents(t, einsum(*primals[:k], dx, *primals[k + 1:], subscripts=subscripts,
                                       optimize=optimize))
    return fit(t, aval_of(out))


def _einsum_transpose(ct, *xs, subscripts, optimize=False):
    # the cotangent of operand k contracts ct with the other operands; letters only in operand k
    # broadcast (a ones vector) and repeated letters go onto a diagonal (an identity matrix)
    k = next(i for i, x in enumerate(xs) if is_linear(x))
    ins, out = einsum_letters(subscripts, [aval_of(x).ndim for x in xs])
    sizes = _letter_sizes(ins, [aval_of(x).shape for x in xs])
    dtype = real_dtype(aval_of(ct).dtype).name
    fresh = iter(c for c in string.ascii_letters if c not in sizes)
    operands = [ct, *(conj(x) for i, x in enumerate(xs) if i != k)]
    terms = [out, *(s for i, s in enumerate(ins) if i != k)]
    seen = set("".join(terms))
    for c in dict.fromkeys(ins[k]):
        if c not in seen:
            operands.append(ops.full_like(ct, fill_value=1, shape=(sizes[c],), dtype=dtype))
            terms.append(c)
    layout, placed = [], set()
    for c in ins[k]:
        if c in placed:
            f = next(fresh)
            operands.append(_identity(ct, sizes[c], dtype))
            terms.append(c + f)
            c = f
        placed.add(c)
        layout.append(c)
    g = einsum(*operands, subscripts=",".join(terms) + "->" + "".join(layout))
    return tuple(unbroadcast(g, aval_of(x).shape) if i == k else None for i, x in enumerate(xs))


einsum = Op("einsum", attrs={"subscripts": "subscripts", "optimize": "einsum_optimize?"},
            abstract=_einsum_abstract, impl=_einsum_impl, jvp=_einsum_jvp,
            transpose=_einsum_transpose)


def _identity(ref, n, dtype):
    rows = ops.iota_like(ref, shape=(n, n), axis=0)
    return ops.astype(ops.equal(rows, ops.iota_like(ref, shape=(n, n), axis=1)), dtype=dtype)


__all__ = ["einsum", "einsum_letters", "einsum_optimize"]

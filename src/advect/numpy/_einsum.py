"""``numpy.einsum`` and ``numpy.einsum_path`` on traced arrays: the string and the interleaved
(sublist) forms, normalized to the subscripts of the one ``einsum`` op of ``ops/einsum.py``.

NumPy's result type follows its ``optimize`` argument, which the op keeps as an attr: with
``optimize=False`` a 0-d result is a NumPy scalar; with a contraction path it is a 0-d array
where NumPy's last pairwise contraction gives one (``np.einsum('ij,j,i', m, a, a,
optimize=True)``).

Example:
    >>> import numpy as np
    >>> import advect as ad
    >>> m = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> ad.grad(lambda a: np.einsum("ij,j,i", m, a, a))(np.ones(2)).tolist()
    [7.0, 13.0]
"""

from __future__ import annotations

import functools
import string

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of
from ..errors import bounded
from ..ops.einsum import einsum_optimize
from ._functions import implements
from ._mutation import mark_array

__all__ = ["einsum_subscripts"]

_LABELS = string.ascii_uppercase + string.ascii_lowercase  # NumPy's sublist integers 0..51


def _sublist(labels) -> str:
    if not isinstance(labels, list | tuple):
        raise TypeError("numpy.einsum: the subscripts for each operand must be a list or a "
                        f"tuple, not {type(labels).__name__}")
    out = []
    for label in labels:
        if label is Ellipsis:
            out.append("...")
        elif isinstance(label, int | np.integer) and 0 <= label < len(_LABELS):
            out.append(_LABELS[label])
        else:
            raise ValueError(f"einsum: subscript {bounded(label)} in a sublist must be an "
                             "integer in [0, 52) or Ellipsis")
    return "".join(out)


def einsum_subscripts(subscripts: str, count: int) -> str:
    """Normalize einsum ``subscripts`` for ``count`` operands: no spaces and an explicit
    ``->`` output (implicit mode: the labels used once, sorted, after ``...`` if any).

    Example:
        >>> einsum_subscripts("ij, jk", 2)
        'ij,jk->ik'
    """
    s = subscripts.replace(" ", "")
    bad = set(s) - set(_LABELS) - set(",.->")
    if bad or s.count("->") > 1:
        raise ValueError(f"einsum: invalid subscripts {bounded(subscripts)}; use letters, ',', "
                         "'...' and one '->'")
    lhs, arrow, out = s.partition("->")
    if len(lhs.split(",")) != count:
        raise ValueError(f"einsum: {len(lhs.split(','))} operand subscripts in "
                         f"{bounded(subscripts)} for {count} operands")
    if not arrow:
        letters = lhs.replace(",", "").replace(".", "")
        out = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return f"{lhs}->{out}"


def _check_einsum_casting(arrays, dtype, casting):
    """NumPy casts every operand to ``dtype`` (or their common dtype) under ``casting``, 'safe'
    by default: einsum(..., dtype=np.float32) of float64 operands is a TypeError there."""
    if casting not in ("no", "equiv", "safe", "same_kind", "unsafe"):
        raise ValueError("casting must be one of 'no', 'equiv', 'safe', 'same_kind', or 'unsafe'")
    dtypes = [aval_of(a).dtype if isinstance(a, Tracer) else np.asarray(a).dtype for a in arrays]
    target = np.result_type(*dtypes) if dtype is None else np.dtype(dtype)
    for d in dtypes:
        if not np.can_cast(d, target, casting):
            raise TypeError(f"numpy.einsum: cannot cast an operand from {d} to {target} "
                            f"according to the rule {casting!r}; pass casting='same_kind' or "
                            "'unsafe'")


@implements(np.einsum)
def _einsum(*operands, out=None, optimize=False, dtype=None, order="K", casting="safe"):
    """np.einsum in the string form or the interleaved (operand, sublist, ...) form."""
    if isinstance(operands[0], str):
        subscripts, arrays = operands[0], list(operands[1:])
    else:
        arrays = list(operands[0::2])
        inputs = ",".join(_sublist(s) for s in operands[1::2])
        if len(operands) % 2:  # a trailing output sublist
            arrays = arrays[:-1]
            inputs += "->" + _sublist(operands[-1])
        subscripts = inputs
    # einsum makes arrays of its operands: a Python scalar, traced or not, is not weak there
    arrays = [np.asarray(a) if isinstance(a, list | tuple | int | float | complex)
              else ops.astype(a, dtype=a.aval.dtype.name) if isinstance(a, Tracer) and a.aval.weak
              else a for a in arrays]
    _check_einsum_casting(arrays, dtype, casting)
    if dtype is not None:
        arrays = [ops.astype(a, dtype=np.dtype(dtype).name) for a in arrays]
    path = einsum_optimize(optimize, len(arrays))  # NumPy's result type depends on the path
    subscripts = einsum_subscripts(subscripts, len(arrays))
    result = ops.einsum(*arrays, subscripts=subscripts,
                        **({} if path is False else {"optimize": path}))
    if path is not False and not aval_of(result).shape and _gives_array(
            subscripts, tuple(aval_of(a).shape for a in arrays), aval_of(result).dtype, path):
        result = mark_array(result)
    return result  # out= is written by _out.call_with_out, before this sees it


@functools.lru_cache(maxsize=256)
def _gives_array(subscripts, shapes, dtype, path) -> bool:
    """Whether NumPy's einsum with ``optimize=path`` returns a 0-d ndarray rather than a NumPy
    scalar for operands of ``shapes``: the type of its last contraction step (NumPy 2.4: a
    pairwise contraction over some letter gives a 0-d array), read off NumPy on a small example
    of that step. NumPy's steps are followed on shapes whose axes of size 0 and 1 are kept and
    the others have size 2."""
    stand_ins = [np.broadcast_to(np.zeros((), dtype), s) for s in shapes]
    steps = np.einsum_path(subscripts, *stand_ins, optimize=path, einsum_call=True)[1]
    left = [tuple(min(n, 2) for n in s) for s in shapes]
    for entry in steps[:-1]:  # as NumPy's loop: pop the operands, append the result
        inds, step = entry[0], _step_subscripts(entry)
        taken = [left.pop(i) for i in inds]
        terms, out = step.split("->")
        sizes: dict = {}
        for term, shape in zip(terms.split(","), taken):
            for c, n in zip(term, shape):
                sizes[c] = n if sizes.get(c, 1) == 1 else sizes[c]
        left.append(tuple(sizes[c] for c in out))
    inds, step = steps[-1][0], _step_subscripts(steps[-1])
    small = [np.ones(left[i], dtype) for i in inds]
    return type(np.einsum(step, *small, optimize=["einsum_path", tuple(range(len(small)))])) \
        is np.ndarray


def _step_subscripts(entry: tuple) -> str:
    """The subscripts of one contraction of ``einsum_path(..., einsum_call=True)`` (NumPy 2.0
    puts the removed letters before them, later releases do not)."""
    return next(e for e in entry[1:] if isinstance(e, str))


@implements(np.einsum_path, nondiff=True)
def _einsum_path(*operands, optimize="greedy", einsum_call=False):
    """NumPy's contraction path: it depends on shapes only, so zero-stride stand-ins of the
    traced operands' shapes and dtypes answer it."""
    stand_ins = [np.broadcast_to(np.zeros((), aval_of(x).dtype), aval_of(x).shape)
                 if isinstance(x, Tracer) else x for x in operands]
    return np.einsum_path(*stand_ins, optimize=optimize, einsum_call=einsum_call)

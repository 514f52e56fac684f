"""``__getitem__``: NumPy index expressions normalized to the static ``index`` attr of gather.

Normalization happens once, here, so the ops see only canonical entries: slices as concrete
``(start, stop, step)``, non-negative ints, ``None`` for new axes and ``"array"`` for integer-array
operands. A boolean mask becomes integer arrays through its concrete value, so it is dynamic-only.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of
from ..providers import namespace_of, on_provider_of
from ._mutation import INPUT, mark_array, mark_view, marks_array

__all__ = ["normalize_index", "getitem", "check_broadcast"]

_FULL = (None, None, None)


def _mask_to_arrays(mask):
    if isinstance(mask, Tracer):
        mask = mask._concrete_for("boolean mask indexing (its result shape depends on data)")
    xp = namespace_of((mask,))
    if xp is not np:  # the provider's own index arrays: a NumPy array would mix providers
        return list(xp.nonzero(mask))
    return list(np.nonzero(np.asarray(mask)))


def _as_index_array(k):
    """A sequence entry of a key (a list, a range, a tuple inside the key tuple) as NumPy reads
    it: an integer or boolean index array."""
    if isinstance(k, list | tuple | range):
        from ._construct import _contains_tracer, asarray
        if _contains_tracer(k):  # x[[i, p]] with a traced p (an argmax): a traced index array
            return asarray(k)
        k = np.asarray(k)
        if k.dtype.kind == "f" and k.size == 0:
            k = k.astype(np.intp)
    return k


def _basic_index(shape: tuple[int, ...], key) -> tuple | None:
    """The index of a key made of Python ints and slices only (the common case), else None."""
    if type(key) is not tuple:
        key = (key,)
    if len(key) > len(shape):
        return None
    index = []
    for n, k in zip(shape, key):
        if type(k) is int:
            if not -n <= k < n:
                return None  # the general path raises
            index.append(k % n)
        elif type(k) is slice:
            start, stop, step = k.indices(n)
            index.append((start, None if step < 0 and stop < 0 else stop, step))
        else:
            return None
    while index and type(index[-1]) is tuple and index[-1] == (0, shape[len(index) - 1], 1):
        index.pop()  # x[i, :] is x[i]
    return tuple(index)


def normalize_index(shape: tuple[int, ...], key) -> tuple[tuple, list]:
    """``(index, arrays)`` for ``x[key]`` on an array of ``shape``."""
    index = _basic_index(shape, key)
    if index is not None:
        return index, []
    return _advanced_index(shape, key)


def _is_mask(k) -> bool:
    return hasattr(k, "dtype") and not isinstance(k, type) and aval_of(k).dtype.kind == "b"


def _is_scalar_mask(k) -> bool:
    return isinstance(k, bool | np.bool_) or (_is_mask(k) and not aval_of(k).shape)


def _scalar_masks(x, key):
    """NumPy reads a 0-d boolean index (``True``, ``np.array(False)``) as a new length-1 axis
    indexed by ``[0]`` or ``[]``, an advanced index like any other: ``x`` with those axes and
    the key with those index arrays."""
    entries = key if type(key) is tuple else (key,)
    if not any(_is_scalar_mask(k) for k in entries):
        return x, key
    entries = [_as_index_array(k) for k in entries]
    ranks = [0 if k is None or k is Ellipsis or _is_scalar_mask(k)
             else len(aval_of(k).shape) if _is_mask(k) else 1 for k in entries]
    shape, out, dim = list(x.shape), [], 0
    for k, rank in zip(entries, ranks):
        if _is_scalar_mask(k):
            if isinstance(k, Tracer):
                k = k._concrete_for("boolean mask indexing (its result shape depends on data)")
            shape.insert(dim, 1)
            k = on_provider_of(x, np.zeros(int(bool(k)), np.intp))
            rank = 1
        elif k is Ellipsis:
            rank = max(len(x.shape) - sum(ranks), 0)
        out.append(k)
        dim += rank
    return ops.reshape(x, shape=tuple(shape)), tuple(out)


def _advanced_index(shape, key):
    if not isinstance(key, tuple):
        key = (key,)
    entries: list = []
    for k in key:
        k = _as_index_array(k)
        if _is_scalar_mask(k):  # getitem reshapes these away first
            raise IndexError("a 0-d boolean index (True, False, np.array(b)) is supported only "
                             "when reading a traced array; use x[None] or np.where")
        if hasattr(k, "dtype") and not isinstance(k, np.generic | int):
            kind = aval_of(k).dtype.kind
            if kind == "b":
                entries.append(("mask", k))
                continue
            if kind not in "iu":
                raise IndexError("arrays used as indices must be of integer (or boolean) type")
            if isinstance(k, np.ndarray) and k.ndim == 0:
                entries.append(int(k))
            else:
                entries.append(("array", k))
            continue
        if isinstance(k, int | np.integer):
            entries.append(int(k))
        elif k is None or k is Ellipsis or isinstance(k, slice):
            entries.append(k)
        else:
            raise IndexError(f"only integers, slices, ellipsis, None and integer or boolean "
                             f"arrays are valid indices, got {type(k).__name__}")
    consumed = sum(len(aval_of(e[1]).shape) if isinstance(e, tuple) and e[0] == "mask" else 1
                   for e in entries if e is not None and e is not Ellipsis)
    if consumed > len(shape):
        raise IndexError(f"too many indices for array: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")
    n_ellipsis = sum(1 for e in entries if e is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    index, arrays, dim = [], [], 0
    for e in entries:
        if e is Ellipsis:
            fill = len(shape) - consumed
            index.extend([_FULL] * fill)
            dim += fill
        elif e is None:
            index.append(None)
        elif isinstance(e, tuple) and e[0] == "mask":
            mask_shape = tuple(aval_of(e[1]).shape)
            for axis, (n, m) in enumerate(zip(shape[dim:], mask_shape)):
                if n != m:
                    raise IndexError(f"boolean index did not match indexed array along axis "
                                     f"{dim + axis}; size of axis is {n} but size of "
                                     f"corresponding boolean axis is {m}")
            for a in _mask_to_arrays(e[1]):
                index.append("array")
                arrays.append(a)
            dim += len(mask_shape)
        elif isinstance(e, tuple):
            index.append("array")
            arrays.append(e[1])
            dim += 1
        elif isinstance(e, slice):
            start, stop, step = e.indices(shape[dim])
            if step < 0 and stop < 0:
                stop = None
            index.append((start, stop, step))
            dim += 1
        else:
            n = shape[dim]
            if not -n <= e < n:
                raise IndexError(f"index {e} is out of bounds for axis {dim} with size {n}")
            index.append(e % n)
            dim += 1
    if len(arrays) > 1:
        check_broadcast([tuple(aval_of(a).shape) for a in arrays])
    dims = _dims(index)
    index = [(0, shape[d], 1) if e == _FULL else e for d, e in zip(dims, index)]
    while index and isinstance(index[-1], tuple) and index[-1] == (0, shape[dims[-1]], 1):
        index.pop()  # x[i, :] is x[i]
        dims.pop()
    return tuple(index), arrays


def check_broadcast(shapes: list[tuple[int, ...]]) -> None:
    """NumPy's IndexError when index arrays do not broadcast together."""
    try:
        np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         "shapes " + " ".join(str(s) for s in shapes)) from None


def _dims(index):
    """The array axis each index entry applies to (-1 for new axes)."""
    out, dim = [], 0
    for e in index:
        if e is None:
            out.append(-1)
        else:
            out.append(dim)
            dim += 1
    return out


def getitem(x, key):
    """``x[key]``: a gather; a basic index is a view of ``x`` (writes through it reach ``x``;
    writes to ``x`` make it stale) unless it picks one element by integers alone, which NumPy
    gives as a scalar copy."""
    index = _basic_index(x.shape, key)
    arrays, view = [], True
    if index is None:
        x, key = _scalar_masks(x, key)
        index, arrays = _advanced_index(x.shape, key)
        view = _numpy_basic(key, arrays)
    if not index:
        if x.shape or (x._mut is None) is not _has_ellipsis(key):
            return x  # y[:], a[...] of a 0-d array and s[()] of a scalar: x itself, as a view
        # a[()] of a 0-d array is a scalar copy; s[...] of a scalar, a new 0-d array
        return mark_array(x._clone()) if x._mut is None else x._clone()
    out = ops.gather(x, *arrays, index=index)
    if view and (out.shape or _has_ellipsis(key)):
        mark_view(x, out, index, arrays)  # y[0, ...] is a 0-d view in NumPy, y[0] a scalar copy
    return out


def _numpy_basic(key, arrays) -> bool:
    """Whether NumPy reads the normalized ``key`` as a basic index (its result a view): no
    index arrays but traced 0-d integers standing for NumPy integer scalars
    (``y[np.argmax(x)]``) or Python ones (an input), and no 0-d ndarray (``y[np.array(1)]``
    is an advanced index)."""
    for a in arrays:
        if not isinstance(a, Tracer) or a.shape or marks_array(a._mut) and not (
                a._mut is INPUT and a._weak()):
            return False
    return not any(isinstance(k, np.ndarray) for k in (key if type(key) is tuple else (key,)))


def _has_ellipsis(key) -> bool:
    return key is Ellipsis or (type(key) is tuple and any(k is Ellipsis for k in key))


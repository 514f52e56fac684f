"""Sorting and searching: the index-producing ops. All are nondifferentiable; sorted *values*
are a gather with these indices, so their derivative flows through ``gather``."""

from __future__ import annotations

import numpy as np

from ..core import Op
from ..dtypes import Aval


def _argsort_abstract(x, *, axis, stable):
    if x.ndim == 0:
        raise ValueError("argsort: cannot sort a 0-d array")
    return Aval(x.shape, np.dtype(np.int64), False, x.device)


def _argsort_impl(xp, x, *, axis, stable):
    if xp is np:
        return np.argsort(x, axis=axis, kind="stable" if stable else None).astype(np.int64)
    return xp.argsort(x, axis=axis, stable=stable)


argsort = Op("argsort", allocates=True, attrs={"axis": "axis", "stable": "bool"},
             abstract=_argsort_abstract, impl=_argsort_impl, nondiff=True)


def _argpartition_abstract(x, *, kth, axis):
    n = x.shape[axis]
    for k in kth:
        if not -n <= k < n:
            raise ValueError(f"argpartition: kth(={k}) out of bounds ({n})")
    return Aval(x.shape, np.dtype(np.int64), False, x.device)


def _argpartition_impl(xp, x, *, kth, axis):
    if xp is np:
        return np.argpartition(x, kth, axis=axis).astype(np.int64)
    return xp.argsort(x, axis=axis, stable=True)  # a full sort is a valid partition


argpartition = Op("argpartition", allocates=True, attrs={"kth": "int64s", "axis": "axis"},
                  abstract=_argpartition_abstract, impl=_argpartition_impl, nondiff=True)


def _searchsorted_abstract(a, v, *, side):
    if a.ndim != 1:
        raise ValueError(f"searchsorted: the sorted array must be 1-D, got shape {a.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    return Aval(v.shape, np.dtype(np.int64), False, a.device)


def _searchsorted_impl(xp, a, v, *, side):
    if xp is np:  # a scalar v gives NumPy's scalar
        out = np.searchsorted(a, v, side=side)
        return out if out.dtype == np.int64 else out.astype(np.int64)
    return xp.searchsorted(a, v, side=side)


searchsorted = Op("searchsorted", allocates=True, attrs={"side": "side"},
                  abstract=_searchsorted_abstract, impl=_searchsorted_impl, nondiff=True)

__all__ = ["argsort", "argpartition", "searchsorted"]

"""Window stacks for the ``advect.scipy.ndimage`` filters on traced arrays.

Along each filtered axis the input is extended by the boundary mode through a precomputed index
map (``np.take``: its transpose is a scatter-add, so every mode has its exact adjoint) and the
shifted copies are stacked on a trailing axis; ``constant`` positions are ``cval`` (no
derivative). Linear filters contract the stack with weights, rank filters select from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import Tracer
from ..providers import numpy_dtype

_MODES = {"reflect": "reflect", "grid-mirror": "reflect", "constant": "constant",
          "grid-constant": "constant", "nearest": "nearest", "mirror": "mirror", "wrap": "wrap",
          "grid-wrap": "wrap"}


def axes_given(axes: Any) -> dict:
    """``axes=`` for SciPy only when given (SciPy before 1.15 lacks it on some filters)."""
    return {} if axes is None else {"axes": axes}


def traced(*values: Any) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def _mode(mode: str) -> str:
    try:
        return _MODES[mode]
    except (KeyError, TypeError):
        raise ValueError(f"scipy.ndimage: boundary mode {mode!r} is not one of "
                         f"{sorted(_MODES)}") from None


def per_axis(value: Any, n: int, what: str) -> list:
    """A scalar (or string) repeated, or a sequence of length ``n``."""
    if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray):
        return [value] * n
    value = list(value)
    if len(value) != n:
        raise RuntimeError(f"scipy.ndimage: {what} has {len(value)} entries, expected {n} (one "
                           "per filtered axis)")
    return value


def normalize_axes(axes: Any, ndim: int) -> list[int]:
    if axes is None:
        return list(range(ndim))
    axes = [axes] if isinstance(axes, int | np.integer) else list(axes)
    out = [int(a) % ndim if -ndim <= a < ndim else None for a in axes]
    if None in out or len(set(out)) != len(out):
        raise ValueError(f"scipy.ndimage: axes {axes} are out of range or repeated for a "
                         f"{ndim}-dimensional input")
    return out


def _index_map(n: int, size: int, origin: int, mode: str):
    """Indices ``(n, size)`` into an axis of length ``n`` for window element ``k`` of output
    ``i`` (input position ``i + k - size // 2 - origin``), and the in-range mask for
    ``constant`` (None otherwise)."""
    if not -(size // 2) <= origin <= (size - 1) // 2:
        raise ValueError(f"scipy.ndimage: invalid origin {origin} for a filter of size {size}")
    j = np.arange(n)[:, None] + (np.arange(size) - size // 2 - origin)[None, :]
    if mode == "constant":
        return np.clip(j, 0, n - 1), (j >= 0) & (j < n)
    if mode == "nearest":
        return np.clip(j, 0, n - 1), None
    if mode == "wrap":
        return j % n, None
    if mode == "reflect":
        m = j % (2 * n)
        return np.where(m >= n, 2 * n - 1 - m, m), None
    if n == 1:  # mirror
        return np.zeros_like(j), None
    m = j % (2 * n - 2)
    return np.where(m >= n, 2 * n - 2 - m, m), None


def windows(x: Any, axes: list[int], sizes: list[int], origins: list[int], modes: list[str],
             cval: float) -> Any:
    """``x`` with one trailing window axis per filtered axis: ``(*x.shape, *sizes)``."""
    for axis, size, origin, mode in zip(axes, sizes, origins, modes):
        index, valid = _index_map(x.shape[axis], int(size), int(origin), _mode(mode))
        x = np.moveaxis(np.take(x, index, axis=axis), axis + 1, -1)
        if valid is not None:
            shape = [1] * x.ndim
            shape[axis], shape[-1] = valid.shape
            x = np.where(valid.reshape(shape), x, cval)
    return x


def asarray(x: Any) -> Any:
    return x if isinstance(x, Tracer) else np.asarray(x)


def _supported(like: Any) -> None:
    """SciPy's filters have no float16 loops: they refuse a float16 input (a 0-d one is
    returned unfiltered; a float16 ``output`` is refused by some filters only: not checked)."""
    if like.dtype == np.float16 and like.ndim:
        raise RuntimeError("scipy.ndimage: array type dtype('float16') is not supported "
                           "(as in SciPy); cast the input to float32")


def finish(result: Any, like: Any, output: Any) -> Any:
    """Cast to the output dtype (SciPy's: the input's, or ``output``'s); write an ``output``
    array (functionalized when traced) and return it."""
    _supported(like)
    if output is None or isinstance(output, type | np.dtype | str):
        dtype = like.dtype if output is None else np.dtype(output)
        return result if result.dtype == dtype else result.astype(dtype)
    output[...] = result
    return output


def correlate_along(x: Any, weights: Any, axis: int, mode: str, cval: float,
                     origin: int) -> Any:
    stack = windows(x, [axis], [len(weights)], [origin], [mode], cval)
    return stack @ weights


def gaussian_kernel(sigma: float, order: int, radius: int) -> np.ndarray:
    """The sampled Gaussian (normalized to sum 1) times the polynomial of its ``order``-th
    derivative: ``d^n/dx^n exp(-x^2 / 2 s^2) = q_n(x) exp(...)`` with ``q_{n+1} = q_n' - x q_n /
    s^2``; reversed for correlation, as SciPy applies it."""
    if order < 0:
        raise ValueError("scipy.ndimage: order must be non-negative")
    x = np.arange(-radius, radius + 1, dtype=float)
    phi = np.exp(-0.5 / (sigma * sigma) * x ** 2)
    phi /= phi.sum()
    q = np.zeros(order + 1)
    q[0] = 1.0
    step = np.diag(np.arange(1.0, order + 1), 1) + np.diag(np.full(order, -1.0 / sigma ** 2), -1)
    for _ in range(order):
        q = step @ q
    return ((x[:, None] ** np.arange(order + 1)) @ q * phi)[::-1]


def footprint_of(x, size, footprint, structure, axes):
    """(axes, boolean footprint over them, structure values or None)."""
    axes = normalize_axes(axes, x.ndim)
    if structure is not None:
        structure = np.asarray(structure, dtype=float)
        if footprint is None:
            footprint = np.ones(structure.shape, bool)
    if footprint is None:
        if size is None:
            raise RuntimeError("scipy.ndimage: no footprint or filter size provided")
        footprint = np.ones([int(s) for s in per_axis(size, len(axes), "size")], bool)
    footprint = np.asarray(footprint, dtype=bool)
    if footprint.ndim != len(axes):
        raise RuntimeError(f"scipy.ndimage: the footprint has {footprint.ndim} dimensions, "
                           f"expected {len(axes)} (one per filtered axis)")
    if not footprint.any():
        raise ValueError("scipy.ndimage: the footprint has no element set")
    return axes, footprint, structure


def selected(input, footprint, mode, cval, origin, axes, size=None, structure=None,
              sign=0.0):
    """The window stack restricted to the footprint (last axis), plus ``sign * structure``."""
    x = asarray(input)
    if numpy_dtype(x.dtype).kind == "c":
        raise TypeError("scipy.ndimage: rank filters and grey morphology do not take complex "
                        "input")
    axes, footprint, structure = footprint_of(x, size, footprint, structure, axes)
    n = len(axes)
    stack = windows(x, axes, list(footprint.shape), per_axis(origin, n, "origin"),
                     per_axis(mode, n, "mode"), cval)
    picked = np.take(np.reshape(stack, (*x.shape, -1)), np.flatnonzero(footprint), axis=-1)
    if structure is not None and sign:
        picked = picked + sign * structure[footprint]
    return x, picked


def rank_of(input, rank, size, footprint, output, mode, cval, origin, axes, what):
    x, picked = selected(input, footprint, mode, cval, origin, axes, size)
    count = picked.shape[-1]
    rank = int(rank)
    rank = rank + count if rank < 0 else rank
    if not 0 <= rank < count:
        raise ValueError(f"scipy.ndimage.{what}: rank {rank} is out of range for a footprint "
                         f"of {count} elements")
    if rank == 0:
        out = np.min(picked, axis=-1)
    elif rank == count - 1:
        out = np.max(picked, axis=-1)
    else:  # the cotangent goes to the element the sort selects
        order = np.argsort(picked, axis=-1, kind="stable")[..., rank:rank + 1]
        out = np.take_along_axis(picked, order, axis=-1)[..., 0]
    return finish(out, x, output)


def window_count(size, footprint, ndim, axes):
    if footprint is not None:
        return int(np.count_nonzero(footprint))
    return int(np.prod(per_axis(size, len(normalize_axes(axes, ndim)), "size")))



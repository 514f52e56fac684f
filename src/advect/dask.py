"""Staged programs and gradients on Dask: gradients over chunked data, and program maps.

Dask is the engine: this module builds task graphs of staged programs (which pickle through
their saved form, so they travel to worker processes) and lets Dask schedule them, with the
threaded scheduler or a ``dask.distributed`` client, whichever is active. Dask is imported only
when a function here is called.

* :func:`blockwise_value_and_grad` stages the per-block gradient of a loss once per block shape,
  maps it over the blocks of chunked ``dask.array`` data, and tree-reduces values and gradients.
* :func:`map_program` runs one staged program over many independent inputs (a sweep).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["blockwise_value_and_grad", "map_program"]

_REDUCTIONS = ("sum", "mean")


def _dask():
    try:
        import dask
        import dask.array as da
    except ImportError:
        raise ImportError("advect.dask needs Dask: pip install 'advect[dask]'") from None
    return dask, da


def blockwise_value_and_grad(loss: Callable, params: Any, *data: Any,
                             reduce: str = "sum") -> tuple[Any, Any]:
    """The value and gradient w.r.t. ``params`` of a loss summed (or averaged) over the blocks
    of chunked Dask arrays.

    ``loss(params, *blocks)`` returns a real scalar for one block of rows of each array in
    ``data`` (all chunked alike along their first axis; other axes are merged into one chunk).
    The gradient of ``loss`` is staged once per distinct block shape, each block is a Dask task,
    and the per-block values and gradients are summed in a tree. With ``reduce="sum"`` the
    result is the sum over blocks; with ``"mean"`` the average weighted by block size (so a
    loss that is a mean over its block's rows gives the mean over all rows). Blocks without
    rows are skipped. Returns the value as a Python float and the gradient in the structure of
    ``params``: (writable) NumPy arrays, and for Python and NumPy scalar leaves the type
    ``advect.grad`` gives them (a Python float, a NumPy scalar).

    Raises:
        ValueError: ``reduce`` is unknown, no data is given, the arrays' row chunks differ or
            are unknown (``compute_chunk_sizes()`` first), or there are no rows.
        TypeError: an entry of ``data`` is not a Dask array.

    Example:
        >>> import numpy as np, dask.array as da
        >>> from advect.dask import blockwise_value_and_grad
        >>> x = da.from_array(np.arange(8.0).reshape(4, 2), chunks=(2, 2))
        >>> value, g = blockwise_value_and_grad(lambda w, xb: np.sum((xb @ w) ** 2),
        ...                                     np.ones(2), x)
        >>> value, g.tolist()
        (276.0, [248.0, 304.0])
    """
    if reduce not in _REDUCTIONS:
        raise ValueError(f"blockwise_value_and_grad: reduce must be one of {_REDUCTIONS}, got "
                         f"{reduce!r}")
    dask, da = _dask()
    if not data:
        raise ValueError("blockwise_value_and_grad needs at least one chunked Dask array")
    for k, d in enumerate(data):
        if not isinstance(d, da.Array):
            raise TypeError(f"blockwise_value_and_grad: data[{k}] is a {type(d).__name__}, not "
                            "a dask.array.Array; wrap it with dask.array.from_array(x, "
                            "chunks=(rows, ...))")
        if d.ndim == 0:
            raise ValueError(f"blockwise_value_and_grad: data[{k}] is 0-d; data is split "
                             "along its first axis")
    for k, d in enumerate(data):
        if any(np.isnan(n) for n in d.shape):
            raise ValueError(f"blockwise_value_and_grad: data[{k}] has unknown chunk sizes "
                             f"{d.chunks}; call .compute_chunk_sizes() on it first")
    rows = data[0].chunks[0]
    for k, d in enumerate(data[1:], 1):
        if d.chunks[0] != rows:
            raise ValueError(f"blockwise_value_and_grad: data[{k}] has row chunks "
                             f"{d.chunks[0]}, data[0] has {rows}; rechunk them alike")
    total = sum(rows)
    if total == 0:
        raise ValueError("blockwise_value_and_grad: the data has no rows")
    data = [d.rechunk({i: -1 for i in range(1, d.ndim)}) if d.ndim > 1 else d for d in data]
    leaves, treedef = tree_flatten(params)
    dynamic = [i for i, leaf in enumerate(leaves) if _is_param_array(leaf)]
    static = [None if i in dynamic else leaf for i, leaf in enumerate(leaves)]

    def dynamic_loss(arrays, *blocks):
        full = list(static)
        for i, x in zip(dynamic, arrays):
            full[i] = x
        return loss(tree_unflatten(treedef, full), *blocks)

    params = [_param_array(leaves[i]) for i in dynamic]
    programs = _block_programs(dynamic_loss, params, data, rows)
    blocks = [d.to_delayed().ravel() for d in data]
    parts = []
    for i, n in enumerate(rows):
        if n == 0:  # no rows: nothing to add (a mean over them would be NaN)
            continue
        weight = n / total if reduce == "mean" else 1.0
        program = programs[tuple(_block_shape(d, i) for d in data)]
        parts.append(dask.delayed(_run_block)(program, params, weight,
                                              *(b[i] for b in blocks)))
    value, gradient = dask.compute(_tree_sum(dask, parts))[0]
    # a program may return a captured constant, read-only: the caller owns what it gets;
    # non-array leaves of params (held fixed while staging) get None, as in advect.grad
    full = [None] * len(leaves)
    for i, g in zip(dynamic, gradient):
        full[i] = _like_param(np.array(g), leaves[i])
    return float(value), tree_unflatten(treedef, full)


def _like_param(g: np.ndarray, leaf):
    """A parameter's gradient in the type ``advect.grad`` gives it: a Python float for a Python
    number, a NumPy scalar for a NumPy scalar, else an array."""
    if type(leaf) in (int, float):
        return float(g)
    if isinstance(leaf, np.generic):
        return g[()]
    return g


def _is_param_array(leaf) -> bool:
    """Array leaves of ``params`` (and Python numbers, lifted as ``advect.grad`` lifts them)
    are differentiated; other leaves (strings, ...) are held fixed."""
    return isinstance(leaf, bool | int | float | complex | np.ndarray | np.generic) or hasattr(
        leaf, "__array__")


def _param_array(leaf):
    # a Python int is lifted to float64 as advect.grad lifts it (else its gradient would be
    # an integer zero); Python bools stay bool
    if type(leaf) is int:
        return np.asarray(leaf, dtype=np.float64)
    return np.asarray(leaf)


def _block_shape(d, i: int) -> tuple:
    return (d.chunks[0][i], *d.shape[1:])


def _block_programs(loss, params, data, rows) -> dict:
    """One staged ``value_and_grad`` program per distinct tuple of block shapes."""
    import advect as ad

    programs = {}
    for i in range(len(rows)):
        if rows[i] == 0:
            continue
        shapes = tuple(_block_shape(d, i) for d in data)
        if shapes not in programs:
            specs = [ad.ArraySpec(s, d.dtype.name) for s, d in zip(shapes, data)]
            param_specs = tree_map(lambda p: ad.ArraySpec(p.shape, p.dtype.name), params)
            programs[shapes] = ad.value_and_grad(ad.stage(loss, specs=(param_specs, *specs)),
                                                 argnums=0)
    return programs


def _run_block(program, params, weight: float, *blocks):
    value, gradient = program(params, *(np.asarray(b) for b in blocks))
    if weight != 1.0:
        # integer and bool parameters' gradients are zeros of their dtype: not weighted
        value, gradient = value * weight, tree_map(
            lambda g: g * weight if np.asarray(g).dtype.kind in "fc" else g, gradient)
    return value, gradient


def _add(a, b):
    (va, ga), (vb, gb) = a, b
    leaves_a, treedef = tree_flatten(ga)
    leaves_b, _ = tree_flatten(gb)
    return va + vb, tree_unflatten(treedef, [x + y for x, y in zip(leaves_a, leaves_b)])


def _tree_sum(dask, parts: list):
    """Pairwise sums as Delayed tasks: depth log2(n), so no worker adds everything."""
    while len(parts) > 1:
        pairs = [dask.delayed(_add)(parts[i], parts[i + 1]) for i in range(0, len(parts) - 1, 2)]
        parts = pairs + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


def map_program(program: Any, *batched_inputs: Sequence[Any],
                **batched_keywords: Sequence[Any]) -> list:
    """Run one staged program over many independent inputs as Dask tasks (a sweep or ensemble).

    Each of ``batched_inputs`` (and of ``batched_keywords``' values) is a sequence with one entry
    per run: run ``i`` calls ``program(batched_inputs[0][i], ..., name=batched_keywords[name][i],
    ...)``, so a ``vjp_program`` gets one ``cotangent=`` per run. The results come back as a list
    in run order. Exceptions raised in a run reach the caller.

    Raises:
        TypeError: ``program`` is not a ``StagedProgram``, or a batched input is not a
            sequence.
        ValueError: the sequences differ in length.

    Example:
        >>> import numpy as np, advect as ad
        >>> from advect.dask import map_program
        >>> program = ad.stage(lambda a, x: np.sum(a * x), 1.0, np.ones(3))
        >>> [float(v) for v in map_program(program, [1.0, 2.0], [np.ones(3), np.arange(3.0)])]
        [3.0, 6.0]
        >>> pullback = ad.vjp_program(ad.stage(np.sin, np.zeros(2)))
        >>> [g.tolist() for g in map_program(pullback, [np.zeros(2)] * 2,
        ...                                  cotangent=[np.ones(2), np.full(2, 2.0)])]
        [[1.0, 1.0], [2.0, 2.0]]
    """
    from .staging.program import StagedProgram

    if not isinstance(program, StagedProgram):
        raise TypeError(f"map_program needs a StagedProgram (ad.stage(f, ...)), got a "
                        f"{type(program).__name__}")
    dask, _ = _dask()
    batches = [(f"batched input {k}", b) for k, b in enumerate(batched_inputs)]
    batches += [(f"batched keyword {name!r}", b) for name, b in batched_keywords.items()]
    for what, b in batches:
        if not hasattr(b, "__len__") or not hasattr(b, "__getitem__"):
            raise TypeError(f"map_program: {what} is a {type(b).__name__}; give a "
                            "sequence with one entry per run")
    lengths = {len(b) for _, b in batches}
    if len(lengths) > 1:
        raise ValueError(f"map_program: the batched inputs have different lengths "
                         f"{[len(b) for _, b in batches]}; give one entry per run in each")
    runs = lengths.pop() if lengths else 0
    tasks = [dask.delayed(_run_program)(program, [b[i] for b in batched_inputs],
                                        {name: b[i] for name, b in batched_keywords.items()})
             for i in range(runs)]
    return list(dask.compute(*tasks))


def _run_program(program, args, kwargs):
    return program(*args, **kwargs)

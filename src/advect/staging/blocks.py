"""Cache-blocked execution of elementwise regions in a NumPy plan.

A region is a run of consecutive steps, each a NumPy ufunc over operands of one large shape
(or 0-d values and Python scalars). Instead of one full-size temporary per step, the region
runs chunk by chunk over the flattened operands: each chunk's temporaries live in a few
scratch buffers sized so that a chunk's working set fits the L2 cache, and each input is read
once per chunk. Only values read after the region (or returned) are materialized in full.
Every element is computed by the same ufunc loop from the same operand values as without
chunks, so results are bit-identical; reductions and every other op stay outside regions.

At run time a region takes its blocked path only when each large operand is a C-contiguous
``numpy.ndarray`` of the expected shape and dtype; otherwise it runs its steps one by one as an
unblocked plan would.

Chunks are independent, so a region with enough of them splits its chunks into contiguous
spans run by ``THREADS`` threads at once (NumPy's ufunc loops release the GIL), each with its
own scratch buffers and a copy of the caller's context (so ``np.errstate`` holds there too).
Each element is still computed by the same loop from the same values: the results do not
depend on the thread count. ``ADVECT_NUM_THREADS=1`` keeps one thread.
"""

from __future__ import annotations

import contextvars
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .graph import Literal

__all__ = ["L2_BYTES", "MIN_ELEMENTS", "THREADS", "block_regions", "region_order"]


def _l2_bytes() -> int:
    """This machine's L2 cache size per core (1 MiB when the system does not say)."""
    try:
        text = Path("/sys/devices/system/cpu/cpu0/cache/index2/size").read_text().strip()
        scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
        return int(text.rstrip("KM")) * scale
    except (OSError, ValueError):
        return 1 << 20


L2_BYTES = _l2_bytes()
# regions over fewer elements keep the unblocked path (a chunk loop would only add overhead)
MIN_ELEMENTS = 1 << 17
# ... and regions of only cheap, memory-bound ufuncs below this many: their arrays stay in the
# last-level cache anyway, and chunking costs each ufunc one call per chunk
MIN_CHEAP_ELEMENTS = 1 << 20
_CHEAP = frozenset(getattr(np, name) for name in (
    "add", "subtract", "multiply", "negative", "positive", "absolute", "conjugate", "square",
    "maximum", "minimum", "fmax", "fmin", "copysign", "sign", "signbit", "equal", "not_equal",
    "less", "less_equal", "greater", "greater_equal", "logical_and", "logical_or",
    "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
    "left_shift", "right_shift", "isnan", "isinf", "isfinite"))
_ALIGN = 512  # chunk lengths are multiples of this many elements
# Each ufunc call on a chunk costs a few microseconds (dispatch, slicing, and the GIL passing
# between the region's threads); below this many elements that outweighs what keeping the
# chunk in L2 saves, the next cache being large (measured on W2's gradient, 16 ufuncs, a 1 MiB
# L2 and a 32 MiB L3: 0.75x the hand-written time at 16k elements per chunk, 0.4x at 64k)
_MIN_CHUNK = 1 << 16


def _threads() -> int:
    """Threads for a region's chunks: ``ADVECT_NUM_THREADS``, else the CPUs this process may
    use (at most 8)."""
    text = os.environ.get("ADVECT_NUM_THREADS", "").strip()
    if text:
        try:
            return max(1, int(text))
        except ValueError:
            raise ValueError(f"ADVECT_NUM_THREADS must be a positive integer, got {text!r}") \
                from None
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 8))


THREADS = _threads()
# a thread's share must be worth waking it (about 0.1-0.3 ms on a loaded machine): at least
# this many chunks and this many element-operations (elements times instructions)
_MIN_CHUNKS_PER_THREAD = 4
_MIN_WORK_PER_THREAD = 1 << 20
_pool: tuple[int, int, ThreadPoolExecutor] | None = None  # (pid, workers, pool)


def _workers() -> ThreadPoolExecutor:
    """The shared pool of ``THREADS - 1`` workers (made again in a forked child, whose copy
    of the pool has no threads, or when ``THREADS`` changed)."""
    global _pool
    if _pool is None or _pool[0] != os.getpid() or _pool[1] != THREADS - 1:
        if _pool is not None and _pool[0] == os.getpid():
            _pool[2].shutdown(wait=False)
        _pool = (os.getpid(), THREADS - 1,
                 ThreadPoolExecutor(THREADS - 1, thread_name_prefix="advect-region"))
    return _pool[2]


def block_regions(graph, node_args: list, slot: dict, steps: list, ufuncs: list,
                  last_use: dict, deads: list, aliases: tuple) -> list:
    """``steps`` with each blockable run of consecutive elementwise steps replaced by one.

    ``ufuncs[k]`` is the ufunc node ``k`` calls (None when it is not one); ``last_use`` maps a
    slot to the index of the last step that reads it (infinity for outputs); ``deads[k]`` are
    the slots step ``k`` drops; ``aliases`` is the plan's ``(fresh, roots, free_at)``: the
    slots holding buffers the plan allocated, the fresh buffers each slot may alias, and the
    step after which each fresh buffer is free (see ``Plan._schedule``).

    Example:
        >>> import numpy as np, advect as ad
        >>> from advect.staging.plan import Plan
        >>> x = np.linspace(-1.0, 1.0, MIN_ELEMENTS)
        >>> program = ad.stage(lambda x: np.sum(np.exp(-x * x) * 2.0 + x), x)
        >>> blocked, general = Plan(program.graph), Plan(program.graph, blocked=False)
        >>> len(blocked.steps), len(general.steps)  # one region, then the reduction
        (2, 6)
        >>> bool(blocked.run([x])[0] == general.run([x])[0])
        True
    """
    out, k, n = [], 0, len(steps)
    while k < n:
        shape = _blockable_shape(graph, graph.nodes[k], ufuncs[k])
        end = k + 1
        while (shape is not None and end < n
               and _blockable_shape(graph, graph.nodes[end], ufuncs[end]) == shape
               and all(_fits(graph, x, shape) for x in graph.nodes[end].inputs)):
            end += 1
        if shape is None or end - k < 2 or not all(
                _fits(graph, x, shape) for x in graph.nodes[k].inputs) or (
                graph.avals[graph.nodes[k].outputs[0]].size < MIN_CHEAP_ELEMENTS
                and all(ufuncs[j] in _CHEAP for j in range(k, end))):
            out.append(steps[k])
            k += 1
            continue
        out.append(_region(graph, range(k, end), node_args, slot, steps, ufuncs, last_use,
                           deads, shape, aliases))
        k = end
    return out


_MAX_DEFERRED = 8  # other nodes a region may step over (each keeps its operands alive longer)


def region_order(graph, ufuncs: list) -> list | None:
    """The nodes in an order that makes elementwise regions longer, or None for no change.

    A node outside regions (a reduction, say) that sits between two blockable nodes of one
    shape moves after the region when no blockable node depends on it, so that a staged
    ``value_and_grad`` runs its forward and backward chains as one region. The order stays a
    valid execution order; at most ``_MAX_DEFERRED`` nodes wait at a time."""
    order, deferred, waiting = [], [], set()
    shape, moved = None, False
    for node, ufunc in zip(graph.nodes, ufuncs):
        node_shape = _blockable_shape(graph, node, ufunc)
        fits = node_shape is not None and all(_fits(graph, x, node_shape) for x in node.inputs)
        depends = any(type(x) is not Literal and x in waiting for x in node.inputs)
        if fits and node_shape == shape and not depends:
            order.append(node)
            moved = moved or bool(deferred)
            continue
        if (shape is not None and not fits and not depends and len(deferred) < _MAX_DEFERRED
                and not node.op.multiple_results):
            deferred.append(node)
            waiting.update(node.outputs)
            continue
        order += deferred
        deferred, waiting = [], set()
        order.append(node)
        shape = node_shape if fits else None
    order += deferred
    return order if moved else None


def _blockable_shape(graph, node, ufunc):
    if ufunc is None or len(node.outputs) != 1:
        return None
    aval = graph.avals[node.outputs[0]]
    if not aval.ndim or aval.weak or aval.size < MIN_ELEMENTS:
        return None
    return aval.shape


def _fits(graph, x, shape) -> bool:
    if type(x) is Literal:
        return True
    aval = graph.avals[x]
    return aval.shape == shape or not aval.ndim


class _Region:
    """The compiled form of one region: instructions over a register file per chunk."""

    __slots__ = ("steps", "large", "large_dtypes", "small", "outputs", "scratch", "code",
                 "dead", "shape", "size", "chunk")


def _region(graph, ks: range, node_args, slot, steps, ufuncs, last_use, deads,
            shape, aliases) -> Callable:
    r = _Region()
    r.steps, r.shape = tuple(steps[k] for k in ks), shape
    r.size = graph.avals[graph.nodes[ks[0]].outputs[0]].size
    defined = {slot[graph.nodes[k].outputs[0]]: k for k in ks}
    last = ks[-1]
    # registers: large operands, small (0-d) operands, full outputs, scratch buffers
    large: dict[int, int] = {}
    small: dict[int, int] = {}
    for k in ks:
        for x, s in zip(graph.nodes[k].inputs, node_args[k]):
            if s in defined:
                continue
            if type(x) is not Literal and graph.avals[x].ndim:
                large.setdefault(s, len(large))
            else:
                small.setdefault(s, len(small))
    r.large = tuple(large)
    r.large_dtypes = tuple(graph.avals[_value_of(graph, ks, node_args, s)].dtype
                           for s in r.large)
    r.small = tuple(small)
    outputs = [s for s in defined if last_use.get(s, -1) > last]
    donors = _donors(graph, ks, node_args, defined, outputs, r.large, r.large_dtypes, r.small,
                     aliases)
    r.outputs = tuple((s, graph.avals[graph.nodes[defined[s]].outputs[0]].dtype,
                       donors.get(s)) for s in outputs)
    base_out = len(large) + len(small)
    reg = {s: i for i, s in enumerate(r.large)}
    reg.update({s: len(large) + i for i, s in enumerate(r.small)})
    reg.update({s: base_out + i for i, s in enumerate(outputs)})
    base_scratch = base_out + len(outputs)
    # scratch buffers by liveness inside the region, reused when their dtype matches
    local_last = {}
    for k in ks:
        for s in node_args[k]:
            if s in defined and s not in reg:
                local_last[s] = k
    free: dict[np.dtype, list[int]] = {}
    scratch: list = []
    code = []
    for k in ks:
        s_out = slot[graph.nodes[k].outputs[0]]
        ins = tuple(reg[s] for s in node_args[k])
        for s in dict.fromkeys(node_args[k]):  # locals dying here free their buffers first
            if s in defined and s not in outputs and local_last.get(s) == k:
                free.setdefault(scratch[reg[s] - base_scratch], []).append(reg[s])
        if s_out not in reg:
            dtype = graph.avals[graph.nodes[k].outputs[0]].dtype
            pool = free.get(dtype)
            if pool:
                reg[s_out] = pool.pop()
            else:
                reg[s_out] = base_scratch + len(scratch)
                scratch.append(dtype)
            if s_out not in local_last:  # nobody reads it: its buffer is free at once
                free.setdefault(dtype, []).append(reg[s_out])
        code.append((ufuncs[k], ins, reg[s_out]))
    r.scratch, r.code = tuple(scratch), tuple(code)
    # values that die in the region (its operands; its locals never reach the table)
    r.dead = tuple(s for s in dict.fromkeys(s for k in ks for s in deads[k])
                   if s not in defined)
    per_element = sum(d.itemsize for d in r.large_dtypes) + sum(
        d.itemsize for _, d, _ in r.outputs) + sum(d.itemsize for d in scratch)
    fits = L2_BYTES // max(per_element, 1) // _ALIGN * _ALIGN  # a chunk's set in L2
    # ... but no shorter than _MIN_CHUNK while every thread still gets its chunks
    floor = min(_MIN_CHUNK, r.size // (THREADS * _MIN_CHUNKS_PER_THREAD) // _ALIGN * _ALIGN)
    r.chunk = min(max(_ALIGN, fits, floor), r.size)
    return _region_step(r)


def _donors(graph, ks, node_args, defined, outputs, large, large_dtypes, small,
            aliases) -> dict:
    """For region results, a large operand whose buffer they may be written into: a buffer
    the plan allocated, free after the region, that no other operand of the region may alias
    (a 0-d view of it read by every chunk, say), of the result's dtype, and read in each chunk
    no later than the instruction computing the result (at that instruction the ufunc reads
    and writes the same elements: exact overlap, which NumPy's loops allow). Chunks touch
    disjoint elements, so a chunk's writes never reach what another chunk reads. Saves the
    result's allocation and its page faults, as ``Plan`` donation does for single steps."""
    fresh, roots, free_at = aliases
    candidates = [(d, dtype) for d, dtype in zip(large, large_dtypes)
                  if d in fresh and free_at.get(d, -1) <= ks[-1]]
    if not candidates:
        return {}
    last_read = {}
    for k in ks:
        for s in node_args[k]:
            last_read[s] = k
    operands = (*large, *small)
    donors: dict[int, int] = {}
    for out in outputs:
        dtype = graph.avals[graph.nodes[defined[out]].outputs[0]].dtype
        for d, d_dtype in candidates:
            if (d_dtype == dtype and last_read[d] <= defined[out] and d not in donors.values()
                    and not any(d in roots.get(s, ()) for s in operands if s != d)):
                donors[out] = d
                break
    return donors


def _value_of(graph, ks, node_args, s):
    for k in ks:
        for x, a in zip(graph.nodes[k].inputs, node_args[k]):
            if a == s:
                return x
    raise AssertionError(s)


def _region_step(r: _Region) -> Callable:
    steps, large, large_dtypes, small, shape = r.steps, r.large, r.large_dtypes, r.small, r.shape
    outputs, scratch, code, dead, size, chunk = (r.outputs, r.scratch, r.code, r.dead, r.size,
                                                 r.chunk)
    work = size * len(code)
    ndarray = np.ndarray

    def step(env):
        arrays = [env[s] for s in large]
        for a, dtype in zip(arrays, large_dtypes):
            if (type(a) is not ndarray or not a.flags.c_contiguous or a.shape != shape
                    or a.dtype != dtype):
                for unblocked in steps:  # the general path
                    unblocked(env)
                return
        flat = [a.reshape(-1) for a in arrays]
        scalars = [env[s] for s in small]
        fulls = [np.empty(size, dtype) if donor is None else env[donor].reshape(-1)
                 for _, dtype, donor in outputs]

        def span(start, stop):  # the chunks from element ``start`` to ``stop``
            buffers = [np.empty(chunk, dtype) for dtype in scratch]
            for lo in range(start, stop, chunk):
                hi = min(lo + chunk, stop)
                regs = [a[lo:hi] for a in flat]
                regs += scalars
                regs += [o[lo:hi] for o in fulls]
                regs += buffers if hi - lo == chunk else [b[:hi - lo] for b in buffers]
                for ufunc, ins, dst in code:
                    ufunc(*[regs[i] for i in ins], out=regs[dst])

        chunks = -(-size // chunk)
        n = min(THREADS, chunks // _MIN_CHUNKS_PER_THREAD, work // _MIN_WORK_PER_THREAD)
        if n < 2:
            span(0, size)
        else:  # contiguous spans of whole chunks: the pool runs all but the first
            bounds = [min(size, chunks * i // n * chunk) for i in range(n + 1)]
            mine, futures, pool = [(bounds[0], bounds[1])], [], _workers()
            for lo, hi in zip(bounds[1:-1], bounds[2:]):
                try:
                    futures.append(pool.submit(contextvars.copy_context().run, span, lo, hi))
                except RuntimeError:  # no new work after interpreter shutdown: run it here
                    mine.append((lo, hi))
            try:
                for lo, hi in mine:
                    span(lo, hi)
            finally:
                for f in futures:  # every span finishes before an error propagates
                    f.exception()
            for f in futures:
                f.result()
        for (s, _, _), full in zip(outputs, fulls):
            env[s] = full.reshape(shape)
        for s in dead:
            env[s] = None

    return step

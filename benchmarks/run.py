"""Time Advect against the hand-written NumPy gradient, side by side in one process.

Run: ``python benchmarks/run.py [--rounds N]``. Prints, per workload, the median over rounds of
the ratio (Advect time / hand-written time), interleaving the candidates round by round so that
machine noise hits all of them alike, plus peak memory (tracemalloc) where the workload asks.
Columns for HIPS autograd, JAX and PyTorch appear when those are installed.

Then the RK4 loop (100 steps, 2-element state: the small-array path), each gradient against the
plain NumPy forward. The compile scaling table comes first: staging and deriving the RK4 loop at
25, 50, 100 and 200 steps, in microseconds per node, with the growth exponent of a log-log fit
of time against steps (1.0 is linear).
"""

from __future__ import annotations

import os
import sys

# OpenBLAS settings some machines export slow NumPy's BLAS down: time without them.
# glibc returns freed blocks above its (dynamic) thresholds to the OS, so a loop that frees a
# 1e5-element temporary before allocating the next one page-faults on every allocation, and
# whether that happens depends on the order of frees (measured: 40x more page faults for the
# same NumPy code with its temporaries deleted one statement earlier). Fixed thresholds make the
# comparison about the work done, for every candidate alike; --default-malloc measures without.
_MALLOC = {"MALLOC_MMAP_THRESHOLD_": "33554432", "MALLOC_TRIM_THRESHOLD_": "134217728"}
_restart = [os.environ.pop(name, None) for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")]
if "--default-malloc" not in sys.argv and any(os.environ.get(k) != v for k, v in _MALLOC.items()):
    os.environ.update(_MALLOC)
    _restart.append("malloc")
if any(v is not None for v in _restart):
    os.execv(sys.executable, [sys.executable, *sys.argv])  # the settings are read at startup

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
from workloads import RK4_PARAMS, WORKLOADS, make_rk4  # noqa: E402

import advect as ad  # noqa: E402


def _timeit(fn, min_time=0.02):
    """Seconds per call: the best of a few repeats of enough calls to last ``min_time``."""
    fn()
    n, elapsed = 1, 0.0
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / n
        n *= 2 if elapsed == 0 else max(2, int(min_time / elapsed * 1.2))


def _peak_bytes(fn):
    fn()
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def _candidates(w):
    """name -> zero-argument callable computing (value, gradient)."""
    value_and_grad = ad.value_and_grad(w.loss, w.argnums)  # built once, called many times
    out = {"hand-written": lambda: w.manual(*w.params),
           "advect": lambda: value_and_grad(*w.params)}
    staged = _staged(w)
    if staged is not None:
        out.update(staged)
    reference = w.manual(*w.params)[0]
    out.update(_peers(w.make_loss, w.params, w.argnums, reference))
    return out


def _peers(make_loss, params, argnums, reference, jit: bool = True) -> dict:
    """HIPS autograd, JAX (eager, and jit unless ``jit=False``) and PyTorch (eager)
    value-and-gradient callables, for the peers installed whose value matches ``reference`` (a
    peer that cannot run the workload as written is left out)."""
    out = {}
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    try:
        from autograd import numpy as anp
        from autograd import value_and_grad as ag_value_and_grad

        ag = ag_value_and_grad(make_loss(anp), argnums)
        out["autograd"] = lambda: ag(*params)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        jvg = jax.value_and_grad(make_loss(jnp), argnums)
        jitted = jax.jit(jvg)
        out["jax"] = lambda: jax.block_until_ready(jvg(*params))
        if jit:
            out["jax jit"] = lambda: jax.block_until_ready(jitted(*params))
    except ImportError:
        pass
    try:
        import torch

        loss = make_loss(_TorchNumPy(torch))

        def torch_value_and_grad():
            ts = [torch.from_numpy(p) for p in params]
            for i in nums:
                ts[i].requires_grad_()
            value = loss(*ts)
            grads = torch.autograd.grad(value, [ts[i] for i in nums])
            return value.detach().numpy(), [g.numpy() for g in grads]

        out["torch"] = torch_value_and_grad
    except ImportError:
        pass
    for name in list(out):
        try:
            value = out[name]()[0]
            np.testing.assert_allclose(np.asarray(value), reference, rtol=1e-8)
        except Exception:  # noqa: BLE001 - this peer cannot run the workload as written
            del out[name]
    return out


class _TorchNumPy:
    """The few NumPy spellings the workloads use, on PyTorch."""

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        return getattr(self._torch, name)

    def logaddexp(self, a, b):
        torch = self._torch
        return torch.logaddexp(torch.as_tensor(a, dtype=b.dtype), b)


def _staged(w):
    if not hasattr(ad, "stage"):
        return None
    try:
        forward = ad.stage(w.loss, *w.params)
        start = time.perf_counter()
        ad.stage(w.loss, *w.params)
        w.stage_seconds = time.perf_counter() - start
        out = {"staged fwd": lambda: forward(*w.params),
               "plain fwd": lambda: w.loss(*w.params)}
        try:
            start = time.perf_counter()  # the whole first use: stage, derive, first call
            ad.value_and_grad(ad.stage(w.loss, *w.params), w.argnums)(*w.params)
            w.first_grad_seconds = time.perf_counter() - start
            vg = ad.value_and_grad(forward, w.argnums)
            out["staged grad"] = lambda: vg(*w.params)
        except Exception as e:  # noqa: BLE001 - report and go on
            print(f"  (staged gradient unavailable for {w.name}: {e})")
        return out
    except Exception as e:  # noqa: BLE001
        print(f"  (staging unavailable for {w.name}: {e})")
        return None


def _check(w):
    value, grad = ad.value_and_grad(w.loss, w.argnums)(*w.params)
    m_value, m_grad = w.manual(*w.params)
    np.testing.assert_allclose(value, m_value, rtol=1e-10)
    for a, b in zip(np.atleast_1d(grad) if not isinstance(grad, tuple) else grad,
                    np.atleast_1d(m_grad) if not isinstance(m_grad, tuple) else m_grad):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-12)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default=None, help="substring of a workload name")
    parser.add_argument("--compile-rounds", type=int, default=1,
                        help="best of this many runs in the compile scaling table")
    parser.add_argument("--no-scaling", action="store_true", help="skip the scaling table")
    parser.add_argument("--jax-compile", action="store_true",
                        help="also jax.jit the RK4 loop (XLA compiles an unrolled loop slowly: "
                             "minutes on a small machine)")
    parser.add_argument("--default-malloc", action="store_true",
                        help="keep glibc's dynamic allocation thresholds")
    args = parser.parse_args()
    print("allocator:", "glibc defaults" if args.default_malloc else
          " ".join(f"{k}={v}" for k, v in _MALLOC.items()), flush=True)
    # the compile table first, before the peer columns import JAX and PyTorch: with their
    # modules loaded the same staging runs about a third slower (measured: 9 -> 12-14 us per
    # node for the 200-step loop, back to 10 after a gc.collect()), which says more about the
    # heap the peers leave than about staging
    if not args.no_scaling and (not args.only or args.only in "scaling"):
        _scaling(args.compile_rounds, args.jax_compile)
    rows = []
    for w in WORKLOADS:
        if args.only and args.only not in w.name:
            continue
        _check(w)
        cands = _candidates(w)
        times = {name: [] for name in cands}
        for _ in range(args.rounds):
            for name, fn in cands.items():
                times[name].append(_timeit(fn))
        base = times["hand-written"]
        ratios = {name: statistics.median(t / b for t, b in zip(ts, base))
                  for name, ts in times.items() if name not in ("hand-written", "plain fwd")}
        if "staged fwd" in times:
            ratios["staged fwd"] = statistics.median(
                t / b for t, b in zip(times["staged fwd"], times["plain fwd"]))
        mem = {}
        if w.measure_memory:
            mem["advect/hand-written"] = _peak_bytes(cands["advect"]) / _peak_bytes(
                cands["hand-written"])
            if "staged fwd" in cands:
                mem["staged fwd/plain fwd"] = _peak_bytes(cands["staged fwd"]) / _peak_bytes(
                    cands["plain fwd"])
        rows.append((w, statistics.median(base), ratios, mem))
        print(_format_row(rows[-1]), flush=True)
    if not args.only or args.only in "rk4":
        print(_rk4_row(args.rounds, args.jax_compile), flush=True)


def _rk4_row(rounds: int, jit: bool) -> str:
    """Every gradient of the RK4 loop against its plain NumPy forward (no hand-written
    gradient: the forward is the floor)."""
    loss, params, argnums = make_rk4(np), RK4_PARAMS, (0, 1)
    dynamic = ad.value_and_grad(loss, argnums)
    staged = ad.value_and_grad(ad.stage(loss, *params), argnums)
    reference = loss(*params)
    cands = {"plain fwd": lambda: loss(*params), "advect": lambda: dynamic(*params),
             "staged grad": lambda: staged(*params)}
    cands.update(_peers(make_rk4, params, argnums, reference, jit))
    for fn in (dynamic, staged):
        np.testing.assert_allclose(fn(*params)[0], reference, rtol=1e-12)
    times = {name: [] for name in cands}
    for _ in range(rounds):
        for name, fn in cands.items():
            times[name].append(_timeit(fn))
    base = times["plain fwd"]
    parts = [f"{'RK4 100 steps, value_and_grad':32s} "
             f"plain fwd {statistics.median(base) * 1e6:10.1f} us"]
    parts += [f"{name} {statistics.median(t / b for t, b in zip(ts, base)):6.1f}x"
              for name, ts in times.items() if name != "plain fwd"]
    return " | ".join(parts)


def _scaling(rounds: int, with_jax: bool, steps=(25, 50, 100, 200)) -> None:
    """Staging and staged derivation of the RK4 loop: nodes, us per node, growth exponent."""
    jax = None
    if with_jax:
        try:
            import jax
            import jax.numpy as jnp

            jax.config.update("jax_enable_x64", True)
        except ImportError:
            pass
    print("compile scaling, RK4 loop (best of", rounds, "):")
    print(f"{'steps':>6} {'stage nodes':>11} {'stage us/node':>13} {'grad nodes':>10} "
          f"{'grad us/node':>12} {'stage s':>8} {'grad s':>8} {'1st call s':>10}"
          + (" jax jit grad s" if jax else ""))
    # the sizes interleaved round by round (best of the rounds for each), so that a slow spell
    # of the machine hits every size alike instead of bending the growth exponent
    best = {n: {"stage": float("inf"), "grad": float("inf"), "first call": float("inf"),
                "jax": float("inf")} for n in steps}
    nodes = {}
    losses = {n: make_rk4(np, n) for n in steps}
    for _ in range(rounds):
        for n in steps:
            b = best[n]
            start = time.perf_counter()
            program = ad.stage(losses[n], *RK4_PARAMS)
            mid = time.perf_counter()
            gradient = ad.grad(program, argnums=(0, 1))
            end = time.perf_counter()
            gradient(*RK4_PARAMS)  # the first call plans the program, then runs it
            b["first call"] = min(b["first call"], time.perf_counter() - end)
            b["stage"], b["grad"] = min(b["stage"], mid - start), min(b["grad"], end - mid)
            if jax is not None:
                start = time.perf_counter()
                jax.jit(jax.grad(make_rk4(jnp, n), (0, 1))).lower(*RK4_PARAMS).compile()
                b["jax"] = min(b["jax"], time.perf_counter() - start)
            nodes[n] = len(program.graph.nodes), len(gradient.graph.nodes)
            del program, gradient
    seconds = {name: [best[n][name] for n in steps] for name in ("stage", "grad", "first call",
                                                                  "jax")}
    for n in steps:
        (n_stage, n_grad), b = nodes[n], best[n]
        print(f"{n:6d} {n_stage:11d} {b['stage'] / n_stage * 1e6:13.1f} {n_grad:10d} "
              f"{b['grad'] / n_grad * 1e6:12.1f} {b['stage']:8.3f} {b['grad']:8.3f} "
              f"{b['first call']:10.3f}" + (f" {b['jax']:14.3f}" if jax else ""), flush=True)
    fits = [f"{name} {_exponent(steps, ts):.2f}" for name, ts in seconds.items()
            if name != "jax" or jax is not None]
    print("growth exponent (log-log fit of seconds against steps):", ", ".join(fits))


def _exponent(xs, ys) -> float:
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def _format_row(row):
    w, base, ratios, mem = row
    parts = [f"{w.name:32s} hand-written {base * 1e6:10.1f} us"]
    parts += [f"{name} {r:5.2f}x" for name, r in ratios.items()]
    for name, ratio in mem.items():
        parts.append(f"peak memory {name} {ratio:4.2f}x")
    if hasattr(w, "stage_seconds"):
        parts.append(f"staging {w.stage_seconds * 1e3:.1f} ms")
    if hasattr(w, "first_grad_seconds"):
        parts.append(f"staged grad build + first call {w.first_grad_seconds * 1e3:.1f} ms")
    return " | ".join(parts)


if __name__ == "__main__":
    main()

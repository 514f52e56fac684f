"""Time Advect against the hand-written NumPy gradient, side by side in one process.

Run: ``python benchmarks/run.py [--rounds N]``. Prints, per workload, the median over rounds of
the ratio (Advect time / hand-written time), interleaving the candidates round by round so that
machine noise hits all of them alike, plus peak memory (tracemalloc) where the workload asks.
Columns for autograd and JAX appear when those are installed.
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
from workloads import WORKLOADS  # noqa: E402

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
    try:
        from autograd import numpy as anp
        from autograd import value_and_grad as ag_value_and_grad

        ag = ag_value_and_grad(w.make_loss(anp), w.argnums)
        out["autograd"] = lambda: ag(*w.params)
    except ImportError:
        pass
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        jvg = jax.value_and_grad(w.make_loss(jnp), w.argnums)
        jitted = jax.jit(jvg)
        out["jax"] = lambda: jax.block_until_ready(jvg(*w.params))
        out["jax jit"] = lambda: jax.block_until_ready(jitted(*w.params))
    except ImportError:
        pass
    return out


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
    parser.add_argument("--default-malloc", action="store_true",
                        help="keep glibc's dynamic allocation thresholds")
    args = parser.parse_args()
    print("allocator:", "glibc defaults" if args.default_malloc else
          " ".join(f"{k}={v}" for k, v in _MALLOC.items()))
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


def _format_row(row):
    w, base, ratios, mem = row
    parts = [f"{w.name:32s} hand-written {base * 1e6:10.1f} us"]
    parts += [f"{name} {r:5.2f}x" for name, r in ratios.items()]
    for name, ratio in mem.items():
        parts.append(f"peak memory {name} {ratio:4.2f}x")
    if hasattr(w, "stage_seconds"):
        parts.append(f"staging {w.stage_seconds * 1e3:.1f} ms")
    return " | ".join(parts)


if __name__ == "__main__":
    main()

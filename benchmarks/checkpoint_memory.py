"""Peak memory of a gradient through a deep chain, with and without ``advect.checkpoint``.

The chain is 100 layers of a 1e5-element elementwise block ``x = sin(x)*1.01 + 0.1*tanh(x)``.
Peak memory is measured with ``tracemalloc`` (NumPy reports its buffers to it) around one
``grad`` call, after a warm-up call; each variant also checks its gradient against the plain one.

Run: ``python benchmarks/checkpoint_memory.py [--size N] [--layers L]``.
"""

from __future__ import annotations

import argparse
import tracemalloc

import numpy as np

import advect as ad


def block(x):
    return np.sin(x) * 1.01 + 0.1 * np.tanh(x)


def segment(k):
    """``k`` consecutive layers as one function (the unit that gets checkpointed)."""
    def run(x):
        for _ in range(k):
            x = block(x)
        return x
    return run


def chain_loss(layers: int, every: int | None):
    """The loss; ``every`` layers form one checkpointed segment (``None``: no checkpointing)."""
    if every is None:
        step, count = block, layers
    else:
        step, count = ad.checkpoint(segment(every)), layers // every

    def loss(x):
        for _ in range(count):
            x = step(x)
        return np.sum(x)
    return loss


def peak_bytes(fn, x) -> tuple[int, np.ndarray]:
    fn(x)  # warm-up: imports and caches are not part of the figure
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    result = fn(x)
    peak = tracemalloc.get_traced_memory()[1] - base
    tracemalloc.stop()
    return peak, result


def measure(size: int = 100_000, layers: int = 100, variants=(None, 1, 10)) -> dict:
    """Peak bytes of ``grad`` for each checkpointing variant; gradients are checked equal."""
    x = np.linspace(-1.0, 1.0, size)
    results, reference = {}, None
    for every in variants:
        peak, g = peak_bytes(ad.grad(chain_loss(layers, every)), x)
        if reference is None:
            reference = g
        np.testing.assert_allclose(g, reference, rtol=1e-12, atol=1e-14)
        results[every] = peak
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--layers", type=int, default=100)
    args = parser.parse_args()
    results = measure(args.size, args.layers)
    array_mb = args.size * 8 / 2**20
    plain = results[None]
    print(f"{args.layers} layers of {args.size} float64 ({array_mb:.2f} MiB per array)")
    for every, peak in results.items():
        label = "plain grad" if every is None else f"checkpoint every {every} layer(s)"
        print(f"  {label:<32} peak {peak / 2**20:8.1f} MiB   {peak / plain:6.1%} of plain")


if __name__ == "__main__":
    main()

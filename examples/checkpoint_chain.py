"""Trade compute for memory: checkpoint the layers of a deep chain.

A plain gradient keeps every layer's intermediates until the backward pass reaches them. With
``advect.checkpoint`` a block keeps only its input and recomputes the rest when its cotangent
arrives. Checkpointing segments of ``k`` layers keeps ``layers / k`` segment inputs plus one
segment's intermediates at a time (``k`` near the square root of the depth balances the two).
"""

import tracemalloc

import numpy as np

import advect as ad

LAYERS, SIZE = 60, 50_000


def layer(x):
    return np.sin(x) * 1.01 + 0.1 * np.tanh(x)


def segment(x, k):
    for _ in range(k):
        x = layer(x)
    return x


def loss(x, every=None):
    """sum(x_L) after LAYERS layers; ``every`` layers form one checkpointed segment."""
    if every is None:
        return np.sum(segment(x, LAYERS))
    block = ad.checkpoint(segment)
    for _ in range(LAYERS // every):
        x = block(x, every)  # the int ``every`` is a static argument, passed through
    return np.sum(x)


def peak_mib(fn, *args):
    tracemalloc.start()
    result = fn(*args)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20, result


x = np.linspace(-1.0, 1.0, SIZE)
grad = ad.grad(loss)
grad(x[:10])  # warm up imports before measuring
plain_mib, plain = peak_mib(grad, x)
print(f"{LAYERS} layers of {SIZE} float64: plain gradient peak {plain_mib:6.1f} MiB")
for every in (1, 6):
    mib, g = peak_mib(grad, x, every)
    np.testing.assert_allclose(g, plain, rtol=1e-12)  # same gradient, less memory
    print(f"  checkpoint every {every} layer(s):     peak {mib:6.1f} MiB "
          f"({mib / plain_mib:.0%} of plain)")

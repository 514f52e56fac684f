"""Differentiate plain NumPy code: a value and its gradient."""

import numpy as np

import advect as ad


def loss(x):
    return np.sum(np.tanh(x) * np.exp(-(x**2)) + np.log1p(x * x))


x = np.linspace(-1.0, 1.0, 5)
value, gradient = ad.value_and_grad(loss)(x)
print(f"loss: {value:.6f}")
print("gradient:", np.round(gradient, 6))

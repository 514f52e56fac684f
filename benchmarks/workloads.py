"""The benchmark workloads: each with its loss, a hand-written NumPy gradient, and inputs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Workload:
    name: str
    make_loss: Callable      # make_loss(xnp) -> loss(*params) written against a NumPy-like module
    manual: Callable         # manual(*params) -> (value, gradient w.r.t. argnums)
    params: tuple
    argnums: Any = 0
    measure_memory: bool = False

    @property
    def loss(self):
        return self.make_loss(np)


def _sin_sq():
    def make_loss(xnp):
        return lambda x: xnp.sum(xnp.sin(x) ** 2)

    def manual(x):
        s = np.sin(x)
        return np.sum(s * s), 2.0 * s * np.cos(x)

    x = np.linspace(-1.0, 1.0, 8)
    return Workload("sum(sin(x)**2), n=8", make_loss, manual, (x,))


def _elementwise():
    def make_loss(xnp):
        return lambda x: xnp.sum(xnp.tanh(x) * xnp.exp(-(x**2)) + xnp.log1p(x * x))

    def manual(x):
        t = np.tanh(x)
        x2 = x * x
        e = np.exp(-x2)
        value = np.sum(t * e + np.log1p(x2))
        g = (1.0 - t * t) * e
        g -= 2.0 * x * t * e
        g += 2.0 * x / (1.0 + x2)
        return value, g

    x = np.random.default_rng(0).uniform(-2, 2, 1_000_000)
    return Workload("elementwise, n=1e6", make_loss, manual, (x,), measure_memory=True)


def _mlp():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((256, 512)) / 10
    Y = rng.standard_normal((256, 10))

    def make_loss(xnp):
        def loss(W1, W2):
            h = xnp.tanh(X @ W1)
            return xnp.mean((h @ W2 - Y) ** 2)
        return loss

    def manual(W1, W2):
        h = np.tanh(X @ W1)
        r = h @ W2 - Y
        value = np.mean(r**2)
        dr = (2.0 / r.size) * r
        dW2 = h.T @ dr
        dh = dr @ W2.T
        dW1 = X.T @ (dh * (1.0 - h * h))
        return value, (dW1, dW2)

    W1 = rng.standard_normal((512, 512)) / 20
    W2 = rng.standard_normal((512, 10)) / 20
    return Workload("2-layer MLP 256x512", make_loss, manual, (W1, W2), argnums=(0, 1))


def _diffusion():
    def make_loss(xnp):
        def loss(u):
            for _ in range(50):
                u = u + 0.1 * (xnp.roll(u, 1) - 2 * u + xnp.roll(u, -1))
            return xnp.sum(u**2)
        return loss

    def manual(u):
        for _ in range(50):
            u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        value = np.sum(u**2)
        g = 2.0 * u
        for _ in range(50):  # the step is symmetric: its adjoint is itself
            g = g + 0.1 * (np.roll(g, 1) - 2 * g + np.roll(g, -1))
        return value, g

    u = np.random.default_rng(2).standard_normal(100_000)
    return Workload("diffusion 50 steps, n=1e5", make_loss, manual, (u,), measure_memory=True)


def _logistic():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((10_000, 100))
    y = (rng.uniform(size=10_000) < 0.5).astype(np.float64)

    def make_loss(xnp):
        def loss(w):
            z = X @ w
            return xnp.mean(xnp.logaddexp(0.0, z) - y * z)
        return loss

    def manual(w):
        z = X @ w
        value = np.mean(np.logaddexp(0.0, z) - y * z)
        p = 1.0 / (1.0 + np.exp(-z))
        return value, X.T @ ((p - y) / y.size)

    w = rng.standard_normal(100) / 10
    return Workload("logistic regression 10000x100", make_loss, manual, (w,))


WORKLOADS = [_sin_sq(), _elementwise(), _mlp(), _diffusion(), _logistic()]


def make_rk4(xnp, steps: int = 100):
    """RK4 for a pendulum, ``steps`` steps, 2-element state: many tiny ops (the small-array
    path). ``loss(y0, k)`` is the squared norm of the final state."""
    def f(y, k):
        return xnp.stack([y[1], -k * xnp.sin(y[0])])

    def loss(y0, k):
        y, h = y0, 0.01
        for _ in range(steps):
            k1 = f(y, k)
            k2 = f(y + h / 2 * k1, k)
            k3 = f(y + h / 2 * k2, k)
            k4 = f(y + h * k3, k)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return xnp.sum(y ** 2)
    return loss


RK4_PARAMS = (np.array([1.0, 0.0]), np.array(2.0))

"""Gaussian-process hyperparameters by maximizing the marginal likelihood.

A GP with a squared-exponential kernel models noisy samples of a smooth function. Its three
hyperparameters (length scale, signal and noise standard deviations, optimized as logarithms)
maximize the log marginal likelihood ``-1/2 y^T K^-1 y - 1/2 log det K - n/2 log 2 pi``, written
with ``np.linalg.cholesky`` and ``np.linalg.solve``. ``ad.value_and_grad`` gives the gradient
through the Cholesky factorization and the solve; the script checks it against the textbook
formula ``1/2 tr((alpha alpha^T - K^-1) dK/dtheta)`` (Rasmussen and Williams, eq. 5.9), fits with
SciPy's L-BFGS-B, and plots the posterior mean with its two-standard-deviation band.

Requires: scipy, matplotlib.
"""

import os
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import minimize  # noqa: E402

import advect as ad  # noqa: E402

rng = np.random.default_rng(1)
x = np.sort(rng.uniform(0.0, 6.0, 40))
y = np.sin(1.5 * x) + 0.1 * rng.standard_normal(x.size)
squared_distance = (x[:, None] - x[None, :]) ** 2


def kernel_matrix(log_params):
    length, signal, noise = np.exp(log_params[0]), np.exp(log_params[1]), np.exp(log_params[2])
    return signal**2 * np.exp(-0.5 * squared_distance / length**2) + noise**2 * np.eye(x.size)


def negative_log_likelihood(log_params):
    k = kernel_matrix(log_params)
    factor = np.linalg.cholesky(k)
    alpha = np.linalg.solve(k, y)
    return (0.5 * y @ alpha + np.sum(np.log(np.diagonal(factor)))
            + 0.5 * x.size * np.log(2 * np.pi))


def textbook_gradient(log_params):
    """d NLL / d log_params from the closed form, with derivatives of K written by hand."""
    length, signal, noise = np.exp(log_params)
    shape = np.exp(-0.5 * squared_distance / length**2)
    derivatives = [signal**2 * shape * squared_distance / length**2,  # d K / d log length
                   2 * signal**2 * shape,                             # d K / d log signal
                   2 * noise**2 * np.eye(x.size)]                     # d K / d log noise
    k_inverse = np.linalg.inv(kernel_matrix(log_params))
    alpha = k_inverse @ y
    return np.array([-0.5 * np.trace((np.outer(alpha, alpha) - k_inverse) @ d)
                     for d in derivatives])


start = np.log(np.array([1.0, 1.0, 0.5]))
value_and_gradient = ad.value_and_grad(negative_log_likelihood)
np.testing.assert_allclose(value_and_gradient(start)[1], textbook_gradient(start), rtol=1e-9)

result = minimize(lambda p: tuple(map(np.asarray, value_and_gradient(p))), start, jac=True,
                  method="L-BFGS-B")
length, signal, noise = np.exp(result.x)
print(f"L-BFGS-B: {result.nit} iterations, negative log likelihood {result.fun:.3f}")
print(f"length scale {length:.3f}, signal sd {signal:.3f}, noise sd {noise:.3f} (true 0.1)")
np.testing.assert_allclose(value_and_gradient(result.x)[1], 0.0, atol=1e-4)  # a stationary point
np.testing.assert_allclose(textbook_gradient(result.x), 0.0, atol=1e-4)       # by both formulas
assert 0.05 < noise < 0.2 and 0.3 < length < 2.5

grid = np.linspace(-0.5, 6.5, 200)
k = kernel_matrix(result.x)
cross = signal**2 * np.exp(-0.5 * (grid[:, None] - x[None, :]) ** 2 / length**2)
mean = cross @ np.linalg.solve(k, y)
variance = signal**2 - np.sum(cross * np.linalg.solve(k, cross.T).T, axis=1)
band = 2 * np.sqrt(np.maximum(variance, 0.0))

figure, axes = plt.subplots(figsize=(7, 3.5))
axes.fill_between(grid, mean - band, mean + band, color="tab:blue", alpha=0.2,
                  label="posterior mean +- 2 sd")
axes.plot(grid, mean, color="tab:blue")
axes.plot(grid, np.sin(1.5 * grid), "--", color="gray", label="true function")
axes.plot(x, y, "o", ms=3, color="black", label="data")
axes.set_title(f"GP fit: length {length:.2f}, signal {signal:.2f}, noise {noise:.3f}")
axes.legend(fontsize=8)
folder = os.environ.get("ADVECT_FIGURES") or tempfile.mkdtemp(prefix="advect-figures-")
path = os.path.join(folder, "gp_hyperparameters.png")
figure.savefig(path, dpi=120, bbox_inches="tight")
plt.close(figure)
print("figure:", path)

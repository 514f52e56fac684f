"""A Laplace approximation of a Bayesian logistic regression posterior, with ``ad.hessian``.

Two weights of a logistic regression get a Gaussian prior; their posterior has no closed
form. The Laplace approximation replaces it with a Gaussian centered at the posterior mode,
with covariance the inverse Hessian of the negative log posterior there. Newton's method finds
the mode with ``ad.grad`` and ``ad.hessian``; the script checks the Hessian against the closed
form ``X^T diag(p (1 - p)) X + I / prior_variance``, compares the approximation's mean and
covariance with moments of the exact posterior computed on a grid, and draws both.

Requires: matplotlib.
"""

import os
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import advect as ad  # noqa: E402

rng = np.random.default_rng(2)
features = rng.standard_normal((60, 2))
true_weights = np.array([1.5, -1.0])
labels = (rng.uniform(size=60) < 1 / (1 + np.exp(-features @ true_weights))).astype(float)
PRIOR_VARIANCE = 4.0


def negative_log_posterior(w):
    logits = features @ w
    log_likelihood = np.sum(labels * logits - np.logaddexp(0.0, logits))
    return -log_likelihood + 0.5 * np.sum(w**2) / PRIOR_VARIANCE


gradient, hessian = ad.grad(negative_log_posterior), ad.hessian(negative_log_posterior)
mode, steps = np.zeros(2), 0
while np.max(np.abs(gradient(mode))) > 1e-12 and steps < 20:
    mode = mode - np.linalg.solve(hessian(mode), gradient(mode))  # Newton's step
    steps += 1
print(f"mode {np.round(mode, 4)} after {steps} Newton steps")

precision = hessian(mode)
p = 1 / (1 + np.exp(-features @ mode))
closed_form = features.T @ (features * (p * (1 - p))[:, None]) + np.eye(2) / PRIOR_VARIANCE
np.testing.assert_allclose(precision, closed_form, rtol=1e-12)
covariance = np.linalg.inv(precision)
print("Laplace covariance:\n", np.round(covariance, 4))

# the exact posterior on a grid, normalized numerically, for comparison
axis0, axis1 = (np.linspace(m - 4 * np.sqrt(v), m + 4 * np.sqrt(v), 121)
                for m, v in zip(mode, covariance.diagonal()))
grid = np.stack(np.meshgrid(axis0, axis1, indexing="ij"), axis=-1)
grid_logits = grid @ features.T
log_density = (np.sum(labels * grid_logits - np.logaddexp(0.0, grid_logits), axis=-1)
               - 0.5 * np.sum(grid**2, axis=-1) / PRIOR_VARIANCE)
density = np.exp(log_density - log_density.max())
density /= density.sum()
exact_mean = np.einsum("ij,ijk->k", density, grid)
centered = grid - exact_mean
exact_covariance = np.einsum("ij,ijk,ijl->kl", density, centered, centered)
print("exact mean", np.round(exact_mean, 4), "exact covariance:\n", np.round(exact_covariance, 4))
# the posterior is skewed, so its mean is not its mode; the approximation is good to a fraction
# of a standard deviation here
shift = np.abs(mode - exact_mean) / np.sqrt(exact_covariance.diagonal())
print("mode - exact mean, in exact standard deviations:", np.round(shift, 3))
assert np.all(shift < 0.3)
np.testing.assert_allclose(covariance, exact_covariance, rtol=0.15, atol=0.01)

difference = grid - mode
laplace = np.exp(-0.5 * np.einsum("ijk,kl,ijl->ij", difference, precision, difference))
figure, axes = plt.subplots(figsize=(5, 4.2))
axes.contourf(axis0, axis1, density.T, levels=12, cmap="Blues")
axes.contour(axis0, axis1, laplace.T, levels=np.exp(-0.5 * np.array([9.0, 4.0, 1.0])),
             colors="tab:red", linewidths=1.2)
axes.plot(*mode, "x", color="tab:red", label="mode (Laplace mean)")
axes.plot(*true_weights, "k+", ms=10, label="true weights")
axes.set_xlabel("w0")
axes.set_ylabel("w1")
axes.set_title("exact posterior (blue), Laplace 1-2-3 sd (red)")
axes.legend(fontsize=8, loc="lower right")
folder = os.environ.get("ADVECT_FIGURES") or tempfile.mkdtemp(prefix="advect-figures-")
path = os.path.join(folder, "laplace_approximation.png")
figure.savefig(path, dpi=120, bbox_inches="tight")
plt.close(figure)
print("figure:", path)

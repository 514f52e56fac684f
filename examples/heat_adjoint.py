"""The adjoint of a 2-D heat equation: which initial temperatures a sensor is sensitive to.

A plate's temperature ``u`` diffuses by explicit finite differences,
``u <- u + r * laplacian(u)``, for 60 steps, with the edges held at zero. A sensor reads the mean
temperature of a small patch at the end. One reverse-mode gradient of that reading with
respect to the initial field is the *adjoint* solution: a map of how much each initial
temperature contributes to the reading. The step is written with NumPy slicing and an in-place
update of an owned array, and staged once. Because this diffusion operator is symmetric, the
adjoint equals the forward solve started from the sensor's weights, which the script checks
with plain NumPy; it also checks the derivative with respect to the diffusion number ``r``
against central differences, and draws the sensitivity map.

Requires: matplotlib.
"""

import os
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import advect as ad  # noqa: E402

N, STEPS = 48, 60
sensor = np.zeros((N, N))
sensor[30:34, 12:16] = 1.0 / 16.0  # the reading is the mean over a 4 x 4 patch


def step(u, r):
    padded = np.pad(u, 1)  # the edges are held at zero (Dirichlet)
    laplacian = (padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:]
                 - 4.0 * u)
    new = u.copy()
    new += r * laplacian   # an in-place update of an array the function owns
    return new


def reading(u0, r):
    u = u0
    for _ in range(STEPS):
        u = step(u, r)
    return np.sum(sensor * u)


yy, xx = np.mgrid[0:N, 0:N] / N
u0 = np.exp(-((xx - 0.45) ** 2 + (yy - 0.5) ** 2) / 0.02)
r = 0.2  # stable for r <= 0.25

gradients = ad.grad(ad.stage(reading, u0, r), argnums=(0, 1))  # a staged program
sensitivity, d_reading_dr = gradients(u0, r)
print(f"reading {reading(u0, r):.6f}; d reading / d r = {d_reading_dr:.6f}")

# the adjoint of a symmetric operator is the operator: run it forward from the sensor weights
expected = sensor
for _ in range(STEPS):
    padded = np.pad(expected, 1)
    expected = expected + r * (padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2]
                               + padded[1:-1, 2:] - 4.0 * expected)
np.testing.assert_allclose(sensitivity, expected, rtol=1e-10, atol=1e-15)
h = 1e-6
central = (reading(u0, r + h) - reading(u0, r - h)) / (2 * h)
np.testing.assert_allclose(d_reading_dr, central, rtol=1e-6)
print("adjoint matches the forward solve from the sensor; d/dr matches central differences")

figure, (left, right) = plt.subplots(1, 2, figsize=(8, 3.6))
image = left.imshow(u0, cmap="inferno", origin="lower")
left.contour(sensor > 0, levels=[0.5], colors="cyan", origin="lower")
left.set_title("initial temperature (sensor in cyan)")
figure.colorbar(image, ax=left, shrink=0.8)
image = right.imshow(sensitivity, cmap="viridis", origin="lower")
right.set_title("d reading / d initial temperature")
figure.colorbar(image, ax=right, shrink=0.8)
for axes in (left, right):
    axes.set_xticks([])
    axes.set_yticks([])
folder = os.environ.get("ADVECT_FIGURES") or tempfile.mkdtemp(prefix="advect-figures-")
path = os.path.join(folder, "heat_adjoint.png")
figure.savefig(path, dpi=120, bbox_inches="tight")
plt.close(figure)
print("figure:", path)

"""Implicit differentiation through a nonlinear solve done by SciPy.

The Bratu problem ``-u'' = lam * exp(u)`` on ``(0, 1)`` with ``u(0) = u(1) = 0`` models
thermal ignition: heat released by a reaction (rate ``lam``) against conduction. On a grid of 80
points its residual is ``K u - lam exp(u)`` with ``K`` the discrete Laplacian. SciPy's
``optimize.root`` finds the steady state and ``sparse.linalg.gmres`` solves the linear
systems: ``ad.implicit_root`` differentiates the solution by the implicit function theorem,
calling the solvers on plain arrays and never differentiating them. The script checks
``d u / d lam`` (forward mode) against the closed form ``(K - lam diag(exp u))^-1 exp(u)`` and
the reverse-mode gradient of the peak temperature against central differences of the whole
solve, then plots the temperature profiles and their sensitivity to ``lam``.

Requires: scipy, matplotlib.
"""

import os
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from scipy.optimize import root  # noqa: E402
from scipy.sparse.linalg import LinearOperator, gmres  # noqa: E402

import advect as ad  # noqa: E402

N = 80
H = 1.0 / (N + 1)
X = np.linspace(H, 1.0 - H, N)
K = (2.0 * np.eye(N) - np.eye(N, k=1) - np.eye(N, k=-1)) / H**2


def residual(u, lam):
    return K @ u - lam * np.exp(u)


def scipy_solve(f, initial):
    """Newton-like hybrid method; Advect supplies the Jacobian of ``f`` (plain arrays here)."""
    solution = root(f, initial, jac=ad.jacobian(f), method="hybr", tol=1e-12)
    if not solution.success:
        raise RuntimeError(solution.message)
    return solution.x


def scipy_linear_solve(matvec, b):
    operator = LinearOperator((N, N), matvec=matvec, dtype=float)
    x, info = gmres(operator, b, rtol=1e-12, atol=0.0, restart=N, maxiter=20)
    if info != 0:
        raise RuntimeError(f"gmres did not converge (info {info})")
    return x


steady_state = ad.implicit_root(residual, solve=scipy_solve, linear_solve=scipy_linear_solve)


def temperature(lam):
    return steady_state(lam, initial=np.zeros(N))


lam = 2.0
u = temperature(lam)
print(f"lam = {lam}: peak temperature {u.max():.6f}, max |residual| "
      f"{np.max(np.abs(residual(u, lam))):.1e}")

# forward mode: the whole sensitivity profile d u / d lam in one JVP
_, du_dlam = ad.jvp(temperature)(lam, tangents=1.0)
closed_form = np.linalg.solve(K - lam * np.diag(np.exp(u)), np.exp(u))
np.testing.assert_allclose(du_dlam, closed_form, rtol=1e-8)

# reverse mode: the gradient of a scalar summary, against central differences of the solve
peak = lambda lam: np.max(temperature(lam))
h = 1e-5
central = (np.max(temperature(lam + h)) - np.max(temperature(lam - h))) / (2 * h)
np.testing.assert_allclose(ad.grad(peak)(lam), central, rtol=1e-6)
print(f"d peak / d lam = {ad.grad(peak)(lam):.6f} (central differences {central:.6f})")

figure, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4))
for value in (0.5, 1.0, 2.0, 3.0):
    profile = temperature(value)
    _, sensitivity = ad.jvp(temperature)(value, tangents=1.0)
    left.plot(X, profile, label=f"lam = {value}")
    right.plot(X, sensitivity, label=f"lam = {value}")
left.set_title("steady temperature u(x)")
right.set_title("sensitivity d u / d lam")
for axes in (left, right):
    axes.set_xlabel("x")
    axes.legend(fontsize=8)
folder = os.environ.get("ADVECT_FIGURES") or tempfile.mkdtemp(prefix="advect-figures-")
path = os.path.join(folder, "implicit_bratu.png")
figure.savefig(path, dpi=120, bbox_inches="tight")
plt.close(figure)
print("figure:", path)

"""Differentiate through a nonlinear solve without differentiating the solver.

The steady state of a 1-D reaction-diffusion problem, ``K u + u**3 = p`` (``K`` a discrete
Laplacian plus identity, ``p`` a source), is found by Newton's method with a matrix-free
conjugate-gradient inner solve. ``implicit_root`` differentiates the solution w.r.t. ``p`` by
the implicit function theorem: one more linear solve with the operator ``d residual / du``, which
it hands to ``linear_solve`` as a JVP-based ``matvec``.
"""

import numpy as np

import advect as ad

N = 10
K = 3.0 * np.eye(N) - np.eye(N, k=1) - np.eye(N, k=-1)  # symmetric positive definite


def residual(u, p):
    return K @ u + u**3 - p


def conjugate_gradient(matvec, b, tol=1e-13):
    """Solve A x = b for a symmetric positive definite A known only through matvec."""
    x = np.zeros_like(b)
    r = b.copy()
    d = r.copy()
    for _ in range(10 * b.size):
        if np.sqrt(r @ r) <= tol * max(1.0, np.sqrt(b @ b)):
            break
        a_d = matvec(d)
        alpha = (r @ r) / (d @ a_d)
        x = x + alpha * d
        r_new = r - alpha * a_d
        d = r_new + ((r_new @ r_new) / (r @ r)) * d
        r = r_new
    return x


def newton(f, u):
    """Newton's method; each step solves J du = -f(u) by CG, J applied by linearizing f."""
    for _ in range(30):
        fu, jacobian_map = ad.linearize(f, u)  # a reusable J v, never a dense matrix
        with jacobian_map:
            if np.max(np.abs(fu)) < 1e-13:
                break
            u = u + conjugate_gradient(jacobian_map, -fu)
    return u


steady_state = ad.implicit_root(residual, solve=newton, linear_solve=conjugate_gradient)

p = np.linspace(0.5, 2.0, N)
u = steady_state(p, initial=np.zeros(N))
print("steady state:", np.round(u, 6))
print("max |residual|:", float(np.max(np.abs(residual(u, p)))))



def mean_state(p):
    """The mean of the steady state: its gradient is its sensitivity to the source."""
    return np.mean(steady_state(p, initial=np.zeros(N)))


g = ad.grad(mean_state)(p)
# closed form: du/dp = (K + 3 diag(u^2))^-1, so the gradient is that matrix's transpose times 1/N
expected = np.linalg.solve((K + np.diag(3 * u**2)).T, np.full(N, 1.0 / N))
np.testing.assert_allclose(g, expected, rtol=1e-10)
print("d mean(u) / dp:", np.round(g, 6))

# second order: the Hessian of the mean w.r.t. the source, still without unrolling Newton
h = ad.hessian(mean_state)(p)
np.testing.assert_allclose(h, h.T, atol=1e-12)
print("Hessian diagonal:", np.round(np.diag(h), 6))

"""Physics workloads: ODE integrators, implicit solves, PDE stencils, small SPD energies and
complex toy models, checked against central differences, the other AD mode and eager NumPy."""

import numpy as np
import pytest

import advect as ad


def central_diff(f, x, eps=1e-6):
    """d f / d x by central differences (float64), shaped like ``out + in``."""
    x = np.asarray(x, dtype=float)
    cols = []
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    out = np.stack(cols, axis=-1)
    return out.reshape(np.shape(cols[0]) + x.shape)


def newton(F, u):
    for _ in range(30):
        u = u - np.linalg.solve(ad.jacobian(F)(u), F(u))
    return u


def newton_in_place(F, u):
    """Newton's method updating its iterate in place, as much hand-written solver code does."""
    for _ in range(30):
        u -= np.linalg.solve(ad.jacobian(F)(u), F(u))
    return u


def dense_solve(matvec, b):
    a = np.stack([matvec(e) for e in np.eye(b.size)], axis=1)
    return np.linalg.solve(a, b)


def diagonal_solve_in_place(matvec, b):
    """A diagonal operator's solve that overwrites its right-hand side."""
    b /= matvec(np.ones_like(b))
    return b


# --- explicit RK4 with time-dependent forcing, plain and checkpointed ----------------------------

def pendulum(t, y, p):
    return np.stack([y[1], -p[0] * np.sin(y[0]) - p[1] * y[1] + p[2] * np.cos(1.3 * t)])


def rk4_step(y, p, t, dt=0.05):
    k1 = pendulum(t, y, p)
    k2 = pendulum(t + dt / 2, y + dt / 2 * k1, p)
    k3 = pendulum(t + dt / 2, y + dt / 2 * k2, p)
    k4 = pendulum(t + dt, y + dt * k3, p)
    return y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def trajectory_loss(p, y0, step=rk4_step, n=25, dt=0.05):
    y, t, states = y0, 0.0, []
    for _ in range(n):
        y = step(y, p, t)
        t += dt
        states.append(y)
    states = np.stack(states)
    return np.sum(states[:, 0] ** 2) + 0.5 * np.mean(states[:, 1] ** 2)


P = np.array([2.0, 0.3, 0.5])
Y0 = np.array([0.4, 0.0])


def test_rk4_gradient_matches_differences_and_forward_mode():
    g = ad.grad(trajectory_loss)(P, Y0)
    np.testing.assert_allclose(g, central_diff(lambda p: trajectory_loss(p, Y0), P), rtol=1e-7)
    t = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(ad.jvp(trajectory_loss)(P, Y0, tangents=t)[1], g @ t, rtol=1e-12)


@pytest.mark.parametrize("transform", [
    lambda f: ad.grad(f, argnums=(0, 1))(P, Y0),
    lambda f: ad.hessian(f)(P, Y0),
    lambda f: ad.hvp(f)(P, Y0, vectors=np.array([1.0, -1.0, 2.0]))[1],
    lambda f: ad.hessian_diag(f)(P, Y0),
    lambda f: ad.stage(ad.grad(f), P, Y0)(P, Y0),
    lambda f: ad.grad(ad.stage(f, P, Y0))(P, Y0),
    lambda f: ad.stage(lambda p, y: ad.hessian(f)(p, y), P, Y0)(P, Y0),
], ids=["grad", "hessian", "hvp", "hessian_diag", "stage-grad", "grad-staged", "stage-hessian"])
def test_checkpointed_steps_give_the_plain_derivatives(transform):
    plain = transform(trajectory_loss)
    checkpointed = transform(lambda p, y0: trajectory_loss(p, y0, ad.checkpoint(rk4_step)))
    for a, b in zip(ad.pytree.tree_leaves(plain), ad.pytree.tree_leaves(checkpointed)):
        np.testing.assert_allclose(b, a, rtol=1e-11, atol=1e-13)


def test_float32_trajectory_keeps_float32_staged_and_in_gradients():
    p32, y32 = P.astype(np.float32), Y0.astype(np.float32)
    eager = trajectory_loss(p32, y32)
    staged = ad.stage(trajectory_loss, p32, y32)(p32, y32)
    assert type(staged) is type(eager) and staged.dtype == eager.dtype
    g = ad.grad(trajectory_loss, argnums=(0, 1))(p32, y32)
    assert [x.dtype for x in g] == [np.float32, np.float32]


# --- implicit solves: Newton through implicit_root vs unrolled vs differences --------------------

N = 10
H = 1.0 / (N + 1)
W = np.sin(np.pi * np.linspace(H, 1 - H, N))


def bratu(u, params):
    up = np.pad(u, 1)
    return -(up[2:] - 2 * up[1:-1] + up[:-2]) / H ** 2 + params["lam"] * np.exp(u) - params["src"]


bratu_root = ad.implicit_root(bratu, solve=newton, linear_solve=dense_solve)


def bratu_loss(lam, src):
    return np.sum(W * bratu_root({"lam": lam, "src": src}, initial=np.zeros(N)) ** 2) * H


def bratu_loss_unrolled(lam, src):
    u = np.zeros(N)
    for _ in range(30):
        F = lambda u: bratu(u, {"lam": lam, "src": src})  # noqa: E731
        u = u - np.linalg.solve(ad.jacobian(F)(u), F(u))
    return np.sum(W * u ** 2) * H


SRC = 5 * np.cos(3 * np.linspace(H, 1 - H, N))


def test_implicit_newton_equals_unrolled_and_differences():
    g = ad.grad(bratu_loss, argnums=(0, 1))(1.0, SRC)
    gu = ad.grad(bratu_loss_unrolled, argnums=(0, 1))(1.0, SRC)
    assert type(g[0]) is float
    np.testing.assert_allclose(g[0], gu[0], rtol=1e-12)
    np.testing.assert_allclose(g[1], gu[1], rtol=1e-11, atol=1e-18)
    np.testing.assert_allclose(g[1], central_diff(lambda s: bratu_loss(1.0, s), SRC), rtol=1e-6,
                               atol=1e-12)
    np.testing.assert_allclose(ad.hessian(bratu_loss, argnums=1)(1.0, SRC),
                               ad.hessian(bratu_loss_unrolled, argnums=1)(1.0, SRC), atol=1e-16)


def test_linearized_root_reused_for_many_tangents_equals_jacobian():
    def solution(src):
        return bratu_root({"lam": 1.0, "src": src}, initial=np.zeros(N))
    jac = ad.jacobian(solution)(SRC)
    _, lm = ad.linearize(solution, SRC)
    with lm:
        np.testing.assert_allclose(np.stack(lm.apply_many(list(np.eye(N))), axis=1), jac,
                                   atol=1e-15)
        np.testing.assert_allclose(np.stack(lm.transpose_many(list(np.eye(N)))), jac, atol=1e-15)


# A solver that updates its iterate in place must not write into the caller's `initial` (or into
# a traced value's stored primal: value and derivative then disagreed), and an in-place linear
# solver must not overwrite the right-hand side the result is checked against.

def test_in_place_solver_leaves_initial_untouched():
    root = ad.implicit_root(lambda u, p: u - p, solve=lambda F, u: newton_in_place(F, u),
                            linear_solve=dense_solve)
    guess = np.array([5.0, 6.0])
    u = root(np.array([1.0, 3.0]), initial=guess)
    np.testing.assert_array_equal(guess, [5.0, 6.0])
    assert u is not guess

    def loss(p):
        y = 2 * p
        u = root(p, initial=y)  # y is used again after the solve
        return np.sum(y * y) + np.sum(u) + np.sum(y)
    p = np.array([1.0, 3.0])
    value, g = ad.value_and_grad(loss)(p)
    np.testing.assert_allclose(value, 4 * np.sum(p ** 2) + 3 * np.sum(p))
    np.testing.assert_allclose(value, loss(p))
    np.testing.assert_allclose(g, central_diff(loss, p), rtol=1e-8)


def test_backward_euler_with_in_place_newton_and_aliased_initial():
    def residual(y, params):
        y_prev, mu = params
        return y - y_prev - 0.1 * np.stack([y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]])

    def loss(mu, y0, solve):
        step = ad.implicit_root(residual, solve=solve, linear_solve=dense_solve)
        y, total = y0, 0.0
        for _ in range(4):
            y = step((y, mu), initial=y)  # the previous state is both a param and the guess
            total = total + y[0] ** 2
        return total
    y0 = np.array([2.0, 0.0])
    expected = ad.grad(loss, argnums=(0, 1))(1.5, y0, newton)
    got = ad.grad(loss, argnums=(0, 1))(1.5, y0, newton_in_place)
    np.testing.assert_array_equal(y0, [2.0, 0.0])
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-12)


def test_in_place_linear_solve_gives_the_implicit_derivatives():
    root = ad.implicit_root(lambda u, p: u ** 3 - p, solve=newton,
                            linear_solve=diagonal_solve_in_place)

    def loss(p):
        u = root(p, initial=np.ones_like(p))
        return np.sum(u * np.arange(1, 4)) + np.sum(u ** 2)
    p = np.array([2.0, 3.0, 5.0])
    u = np.cbrt(p)
    np.testing.assert_allclose(ad.grad(loss)(p), (np.arange(1, 4) + 2 * u) / (3 * u ** 2),
                               rtol=1e-12)
    np.testing.assert_allclose(np.diag(ad.hessian(loss)(p)),
                               np.diag(central_diff(ad.grad(loss), p)), rtol=1e-6)


# --- array_like operands (lists, also holding traced values) in products, solves and joins -------

Y = np.array([1.2, 2.3, 3.1])
L = [0.5, -1.0, 2.0]
A = np.array([[3.0, 1.0, 0.0], [1.0, 4.0, 1.0], [0.0, 1.0, 5.0]])

ARRAY_LIKE = {
    "dot": lambda y: np.dot(y, L),
    "dot-list-first": lambda y: np.dot(L, y),
    "dot-tuple": lambda y: np.dot(y, tuple(L)),
    "inner": lambda y: np.inner(L, y),
    "vdot": lambda y: np.vdot(y, L),
    "outer": lambda y: np.outer(y, L[:2]),
    "tensordot": lambda y: np.tensordot(L, y, axes=1),
    "solve-rhs": lambda y: np.linalg.solve(A + np.diag(y), L),
    "solve-matrix": lambda y: np.linalg.solve(A.tolist(), y),
    "multi_dot": lambda y: np.linalg.multi_dot([A.tolist(), A * y, L]),
    "linalg.outer": lambda y: np.linalg.outer(y, L),
    "linalg.cross": lambda y: np.linalg.cross(y, L),
    "linalg.matmul": lambda y: np.linalg.matmul(A.tolist(), y),
    "where-condition": lambda y: np.where([True, False, True], y, 0.0),
    "where-branch": lambda y: np.where(y > 2, y, [y[2], 1.0, y[0]]),
    "concatenate-nested": lambda y: np.concatenate([y[1:], [-2.0 * y[0], 1.0]]),
    "stack-nested": lambda y: np.stack([y, [y[2], y[1], 1.0]]),
    "hstack-nested": lambda y: np.hstack([y, [y[0], 1.0]]),
    "vstack-nested": lambda y: np.vstack([y, [y[0], 1.0, y[1]]]),
}


@pytest.mark.parametrize("f", ARRAY_LIKE.values(), ids=ARRAY_LIKE.keys())
def test_array_like_operands_are_arrays_as_numpy_reads_them(f):
    eager = f(Y)
    jac = ad.jacobian(f)(Y)
    np.testing.assert_allclose(jac, central_diff(f, Y), rtol=1e-7, atol=1e-9)
    forward = np.stack([ad.jvp(f)(Y, tangents=t)[1] for t in np.eye(3)], axis=-1)
    np.testing.assert_allclose(forward, jac, rtol=1e-12, atol=1e-15)
    staged = ad.stage(f, Y)(Y)
    assert type(staged) is type(eager) and staged.dtype == eager.dtype
    np.testing.assert_allclose(staged, eager, rtol=1e-14)


# --- PDE stencils and SPD energies ---------------------------------------------------------------

U0 = np.sin(np.linspace(0, 2 * np.pi, 12, endpoint=False)) + 0.1 * np.arange(12) / 12


@pytest.mark.parametrize("mode", ["edge", "reflect", "symmetric", "wrap", "constant", "mean"])
def test_explicit_heat_steps_with_padded_boundaries(mode):
    def heat(u):
        for _ in range(10):
            up = np.pad(u, 1, mode=mode)
            u = u + 0.2 * (up[2:] - 2 * up[1:-1] + up[:-2])
        return np.sum(u ** 3 * np.linspace(0, 1, u.size)) + np.sum(np.gradient(u, 0.1) ** 2)
    g = ad.grad(heat)(U0)
    np.testing.assert_allclose(g, central_diff(heat, U0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ad.grad(ad.stage(heat, U0))(U0), g, rtol=1e-13)


def test_spd_energy_hessian_matches_differences_of_the_gradient():
    rng = np.random.default_rng(3)
    m = rng.standard_normal((4, 4))
    k0, b = m @ m.T + 4 * np.eye(4), rng.standard_normal(4)

    def energy(p):
        k = k0 + np.diag(p ** 2) + 0.1 * np.outer(p, p)
        u = np.linalg.solve(k, b)
        chol = np.linalg.cholesky(k)
        return (0.5 * u @ k @ u - b @ u + np.linalg.slogdet(k)[1]
                + np.sum(np.log(np.diag(chol))) + np.linalg.eigh(k)[0][0])
    p = np.array([0.3, -0.5, 1.2, 0.7])
    hess = ad.hessian(energy)(p)
    np.testing.assert_allclose(hess, central_diff(ad.grad(energy), p), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(ad.hvp(energy)(p, vectors=np.ones(4))[1], hess @ np.ones(4),
                               rtol=1e-12)


def test_complex_state_gradient_convention():
    pytest.importorskip("scipy")
    import advect.scipy.linalg as asl

    rng = np.random.default_rng(5)
    h0 = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    h0 = (h0 + h0.conj().T) / 2
    target = np.array([0, 1, 1j]) / np.sqrt(2)

    def fidelity(z):
        psi = asl.expm(-0.3j * h0) @ (z / np.sqrt(np.vdot(z, z).real))
        return np.abs(np.vdot(target, psi)) ** 2
    z = np.array([0.3 + 0.2j, -0.1 + 0.5j, 0.7 - 0.4j])
    g = ad.grad(fidelity)(z)
    expected = central_diff(lambda x: fidelity(x + 1j * z.imag), z.real) \
        + 1j * central_diff(lambda y: fidelity(z.real + 1j * y), z.imag)
    np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-9)
    t = np.array([1 + 1j, 0.5, -1j])
    np.testing.assert_allclose(ad.jvp(fidelity)(z, tangents=t)[1], np.real(np.vdot(g, t)),
                               rtol=1e-12)

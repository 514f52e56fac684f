"""implicit_root: derivatives by the implicit function theorem, checked against closed forms."""

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads


def newton(f, u, steps=40):
    """Newton's method with the Jacobian from advect (the solver sees concrete values)."""
    for _ in range(steps):
        if np.ndim(u):
            u = u - np.linalg.solve(ad.jacobian(f)(u), f(u))
        else:
            u = u - f(u) / ad.grad(f)(u)
    return u


def dense_solve(matvec, b):
    """Solve A x = b with A assembled column by column from matvec."""
    basis = np.eye(b.size).reshape(b.size, *b.shape)
    a = np.stack([np.ravel(matvec(e)) for e in basis], axis=1)
    return np.linalg.solve(a, np.ravel(b)).reshape(b.shape)


def concrete_only(callback, seen):
    def wrapped(*args):
        seen.extend(ad.is_traced(a) for a in args if not callable(a))
        return callback(*args)
    return wrapped


# --- a scalar polynomial root: u^3 + p u - 1 = 0 -----------------------------------------------

def cubic(u, p):
    return u ** 3 + p * u - 1.0


def cubic_root_closed_forms(p):
    """u (Cardano, p > 0), du/dp and d2u/dp2 from differentiating u^3 + p u - 1 = 0 by hand."""
    s = np.sqrt(0.25 + p ** 3 / 27)
    u = np.cbrt(0.5 + s) + np.cbrt(0.5 - s)
    d = 3 * u ** 2 + p                      # d residual / du
    du = -u / d
    d2u = -(du * d - u * (6 * u * du + 1)) / d ** 2
    return u, du, d2u


cubic_root = ad.implicit_root(cubic, solve=newton, linear_solve=dense_solve)


def test_scalar_root_and_its_first_and_second_derivative():
    p = np.array(0.7)
    u, du, d2u = cubic_root_closed_forms(0.7)

    def root(p):
        return cubic_root(p, initial=np.array(1.0))
    np.testing.assert_allclose(root(p), u, rtol=1e-14)
    np.testing.assert_allclose(ad.grad(root)(p), du, rtol=1e-13)
    np.testing.assert_allclose(ad.grad(ad.grad(root))(p), d2u, rtol=1e-12)
    np.testing.assert_allclose(ad.jvp(root)(p, tangents=np.array(2.0))[1], 2 * du, rtol=1e-13)
    np.testing.assert_allclose(ad.hessian(root)(p), d2u, rtol=1e-12)


def test_scalar_root_passes_the_derivative_laws():
    check_grads(lambda p: cubic_root(p, initial=np.array(1.0)), (np.array(0.7),), order=2)


def test_python_float_parameter_gets_a_python_float_gradient():
    g = ad.grad(lambda p: cubic_root(p, initial=1.0))(0.7)
    assert isinstance(g, float)
    np.testing.assert_allclose(g, cubic_root_closed_forms(0.7)[1], rtol=1e-13)


# --- a linear system A(p) u = b ------------------------------------------------------------------

RNG = np.random.default_rng(7)
A0 = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
W = RNG.standard_normal(4)


def shifted_system(u, params):
    return (A0 + params["shift"] * np.eye(4)) @ u - params["rhs"]


def test_linear_system_gradients_with_an_explicit_transpose_solve():
    calls = {"linear": 0, "transpose": 0}

    def solve(f, u0):
        return u0 - np.linalg.solve(ad.jacobian(f)(u0), f(u0))  # exact for a linear residual

    def linear_solve(matvec, b):
        calls["linear"] += 1
        return dense_solve(matvec, b)

    def transpose_solve(rmatvec, b):
        calls["transpose"] += 1
        return dense_solve(rmatvec, b)

    root = ad.implicit_root(shifted_system, solve=solve, linear_solve=linear_solve,
                            transpose_solve=transpose_solve)
    params = {"shift": np.array(0.3), "rhs": RNG.standard_normal(4)}
    a = A0 + 0.3 * np.eye(4)
    u = np.linalg.solve(a, params["rhs"])
    lam = np.linalg.solve(a.T, W)  # adjoint of the loss w . u

    def loss(params):
        return W @ root(params, initial=np.zeros(4))
    np.testing.assert_allclose(root(params, initial=np.zeros(4)), u, rtol=1e-13)
    g = ad.grad(loss)(params)
    np.testing.assert_allclose(g["rhs"], lam, rtol=1e-12)
    np.testing.assert_allclose(g["shift"], -lam @ u, rtol=1e-12)
    assert calls == {"linear": 0, "transpose": 1}
    _, du = ad.jvp(lambda s: root({"shift": s, "rhs": params["rhs"]}, initial=np.zeros(4)))(
        params["shift"], tangents=np.array(1.0))
    np.testing.assert_allclose(du, -np.linalg.solve(a, u), rtol=1e-12)
    assert calls == {"linear": 1, "transpose": 1}


def test_linear_system_second_derivative_in_the_shift():
    root = ad.implicit_root(shifted_system, solve=newton, linear_solve=dense_solve)
    b = RNG.standard_normal(4)

    def loss(s):
        return W @ root({"shift": s, "rhs": b}, initial=np.zeros(4))
    a = A0 + 0.3 * np.eye(4)
    u = np.linalg.solve(a, b)
    # u(s) = (A0 + s I)^-1 b: u' = -A^-1 u, u'' = 2 A^-2 u
    np.testing.assert_allclose(ad.grad(ad.grad(loss))(np.array(0.3)),
                               2 * W @ np.linalg.solve(a, np.linalg.solve(a, u)), rtol=1e-11)


# --- a nonlinear 10-dimensional system by Newton's method ----------------------------------------

B0 = np.random.default_rng(3).standard_normal((10, 10)) + 10 * np.eye(10)


def coupled(u, p):
    return B0 @ u + 0.1 * u ** 3 - p


newton_root = ad.implicit_root(coupled, solve=newton, linear_solve=dense_solve)
P = np.random.default_rng(5).standard_normal(10)


def test_newton_solution_and_jacobian_match_the_closed_form():
    u = newton_root(P, initial=np.zeros(10))
    np.testing.assert_allclose(coupled(u, P), 0.0, atol=1e-13)
    expected = np.linalg.inv(B0 + np.diag(0.3 * u ** 2))  # du/dp = (d residual / du)^-1
    jac = ad.jacobian(lambda p: newton_root(p, initial=np.zeros(10)))(P)
    np.testing.assert_allclose(jac, expected, rtol=1e-11, atol=1e-14)


def test_forward_mode_jacobian_and_linear_map_reuse():
    u = newton_root(P, initial=np.zeros(10))
    expected = np.linalg.solve(B0 + np.diag(0.3 * u ** 2), P)  # du/ds for p = s P at s = 1

    def scaled(s):
        return newton_root(s * P, initial=np.zeros(10))
    np.testing.assert_allclose(ad.jacobian(scaled)(1.0), expected, rtol=1e-11)  # 1 in, 10 out
    value, lm = ad.linearize(scaled, np.array(1.0))
    with lm:
        np.testing.assert_allclose(lm(np.array(2.0)), 2 * expected, rtol=1e-11)
        np.testing.assert_allclose(lm.pullback(np.ones(10)), np.sum(expected), rtol=1e-11)
        np.testing.assert_allclose(lm.pullback(P), P @ expected, rtol=1e-11)


def test_newton_root_derivative_laws_to_second_order_with_concrete_callbacks():
    seen = []
    root = ad.implicit_root(coupled, solve=concrete_only(newton, seen),
                            linear_solve=concrete_only(dense_solve, seen))
    check_grads(lambda p: root(p, initial=np.zeros(10)), (P,), order=2)
    assert seen and not any(seen)  # the callbacks never saw a traced value


def test_no_derivative_flows_to_initial():
    def from_initial(u0):
        return np.sum(newton_root(P, initial=u0))
    np.testing.assert_array_equal(ad.grad(from_initial)(np.zeros(10)), np.zeros(10))


# --- failures --------------------------------------------------------------------------------

def test_a_solver_that_raises_gives_implicit_solve_error():
    def broken(f, u):
        raise np.linalg.LinAlgError("Singular matrix")
    root = ad.implicit_root(cubic, solve=broken, linear_solve=dense_solve)
    with pytest.raises(ad.ImplicitSolveError, match="solve failed: LinAlgError") as info:
        root(np.array(0.7), initial=np.array(1.0))
    assert isinstance(info.value.__cause__, np.linalg.LinAlgError)


def test_non_finite_solutions_give_implicit_solve_error():
    root = ad.implicit_root(cubic, solve=lambda f, u: u * np.nan, linear_solve=dense_solve)
    with pytest.raises(ad.ImplicitSolveError, match="solve returned non-finite"):
        root(np.array(0.7), initial=np.array(1.0))
    bad_linear = ad.implicit_root(cubic, solve=newton, linear_solve=lambda mv, b: b * np.inf)
    with pytest.raises(ad.ImplicitSolveError, match="linear_solve .* non-finite"):
        ad.grad(lambda p: bad_linear(p, initial=np.array(1.0)))(np.array(0.7))


def test_a_solution_of_the_wrong_shape_gives_implicit_solve_error():
    root = ad.implicit_root(coupled, solve=lambda f, u: u[:3], linear_solve=dense_solve)
    with pytest.raises(ad.ImplicitSolveError, match=r"shape \(3,\), expected \(10,\)"):
        root(P, initial=np.zeros(10))


def test_a_residual_not_shaped_like_u_raises_value_error():
    root = ad.implicit_root(lambda u, p: np.sum(u) - p, solve=lambda f, u: u,
                            linear_solve=dense_solve)
    with pytest.raises(ValueError, match="structure and shapes of u"):
        ad.grad(lambda p: np.sum(root(p, initial=np.zeros(3))))(np.array(1.0))


def test_staging_a_root_raises_tracing_error():
    with pytest.raises(ad.TracingError, match="cannot be staged"):
        ad.stage(lambda p: cubic_root(p, initial=np.array(1.0)), np.array(0.7))


def test_array_api_provider_root_and_gradient():
    xps = pytest.importorskip("array_api_strict")

    def solve(f, u):
        return xps.asarray(np.cbrt(8.0 + 0.0 * np.asarray(u)))  # the exact root of u^3 - 8

    root = ad.implicit_root(lambda u, p: u**3 - p, solve=solve,
                            linear_solve=lambda matvec, b: b / matvec(xps.ones_like(b)))
    p = xps.asarray(8.0)
    g = ad.grad(lambda p: root(p, initial=xps.asarray(1.0)))(p)
    assert isinstance(g, type(p))
    np.testing.assert_allclose(np.asarray(g), 1 / 12, rtol=1e-14)  # d p^(1/3) / dp at 8

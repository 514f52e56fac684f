"""root_solver and gmres_solver as implicit_root callbacks: roots against SciPy-independent
answers, derivatives against central differences in both modes to second order, failures."""

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

pytest.importorskip("scipy")
from advect.scipy.optimize import root_solver  # noqa: E402
from advect.scipy.sparse.linalg import gmres_solver  # noqa: E402

N = 5
LAPLACE = 2 * np.eye(N) - np.eye(N, k=1) - np.eye(N, k=-1)


def residual(u, p):
    """A reaction-diffusion system: L u + k * u^3 = f, with params {"k", "f"}."""
    return LAPLACE @ u + p["k"] * u**3 - p["f"]


PARAMS = {"k": np.array(0.8), "f": np.linspace(0.5, 1.5, N)}


def _root(method=None, options=None):
    options = {"xtol": 1e-14} if options is None and method in (None, "hybr") else options
    return ad.implicit_root(residual, solve=root_solver(method=method, options=options),
                            linear_solve=gmres_solver(rtol=1e-13))


@pytest.mark.parametrize("method", [None, "lm"])
def test_root_solves_the_system(method):
    u = _root(method)(PARAMS, initial=np.zeros(N))
    np.testing.assert_allclose(residual(u, PARAMS), 0.0, atol=1e-12)


def test_root_derivative_matches_the_implicit_function_theorem():
    root = _root()
    u = root(PARAMS, initial=np.zeros(N))
    a = LAPLACE + np.diag(3 * PARAMS["k"] * u**2)
    du_df = np.linalg.inv(a)  # d residual / d f = -I
    g = ad.grad(lambda p: np.sum(root(p, initial=np.zeros(N))))(PARAMS)
    np.testing.assert_allclose(g["f"], du_df.sum(axis=0), rtol=1e-9)
    np.testing.assert_allclose(g["k"], -np.sum(du_df @ u**3), rtol=1e-9)


def test_root_derivatives_to_second_order_in_both_modes():
    root = _root()
    check_grads(lambda k, f: root({"k": k, "f": f}, initial=np.zeros(N)),
                (PARAMS["k"], PARAMS["f"]), order=2, rtol=1e-5)


def test_pytree_unknowns():
    def pair(u, p):
        return {"a": u["a"] + 0.1 * u["b"] ** 2 - p, "b": u["b"] - 0.5 * u["a"]}
    root = ad.implicit_root(pair, solve=root_solver(options={"xtol": 1e-14}),
                            linear_solve=gmres_solver(rtol=1e-13))
    initial = {"a": np.zeros(2), "b": np.zeros(2)}
    u = root(np.array([1.0, 2.0]), initial=initial)
    np.testing.assert_allclose(pair(u, np.array([1.0, 2.0]))["a"], 0.0, atol=1e-12)
    check_grads(lambda p: root(p, initial=initial), (np.array([1.0, 2.0]),), order=2,
                rtol=1e-5)


def test_a_scipy_root_failure_raises_implicit_solve_error():
    root = ad.implicit_root(residual, solve=root_solver(options={"maxfev": 2}),
                            linear_solve=gmres_solver())
    with pytest.raises(ad.ImplicitSolveError, match="scipy.optimize.root"):
        root(PARAMS, initial=np.zeros(N))


def test_complex_unknowns_are_refused_by_root_solver():
    with pytest.raises(ad.ImplicitSolveError, match="real systems"):
        root_solver()(lambda u: u - 1j, np.zeros(2, complex))


def test_a_gmres_failure_raises_implicit_solve_error():
    hard = np.diag(np.logspace(0, 8, 40))
    with pytest.raises(ad.ImplicitSolveError, match="gmres did not converge"):
        gmres_solver(rtol=1e-14, maxiter=1)(lambda v: hard @ v, np.ones(40))


def test_gmres_with_a_complex_holomorphic_operator():
    a = np.array([[2.0 + 1j, 0.5], [0.0, 1.0 - 1j]])
    b = np.array([1.0 + 0j, 1j])
    x = gmres_solver(rtol=1e-13)(lambda v: a @ v, b)
    np.testing.assert_allclose(a @ x, b, atol=1e-12)

"""Regressions found by probing implicit_root with its SciPy callbacks, advect.xarray and
advect.dask against eager NumPy, xarray and SciPy results and central differences."""

import json

import numpy as np
import pytest

import advect as ad


def _cube_root(linear_solve, transpose_solve=None):
    pytest.importorskip("scipy")
    from advect.scipy.optimize import root_solver

    return ad.implicit_root(lambda u, p: u ** 3 - p, solve=root_solver(options={"xtol": 1e-12}),
                            linear_solve=linear_solve, transpose_solve=transpose_solve)


# --- implicit_root: a linear solver's wrong answer is refused, never a wrong derivative -------

def test_a_linear_solve_returning_a_wrong_solution_raises_in_both_modes():
    root = _cube_root(lambda matvec, b: b * 0 + 7.0)  # finite, right shape, wrong
    p, u0 = np.array([8.0]), np.array([1.0])
    with pytest.raises(ad.ImplicitSolveError, match=r"wrong solution: \|A\^T x - b\|"):
        ad.grad(lambda p: root(p, initial=u0).sum())(p)
    with pytest.raises(ad.ImplicitSolveError, match=r"linear_solve returned a wrong solution"):
        ad.jvp(lambda p: root(p, initial=u0))(p, tangents=np.ones(1))


def test_a_wrong_transpose_solve_is_refused_and_a_good_linear_solve_still_works():
    pytest.importorskip("scipy")
    from advect.scipy.sparse.linalg import gmres_solver

    root = _cube_root(gmres_solver(rtol=1e-12), transpose_solve=lambda rmatvec, b: 2 * b)
    p, u0 = np.array([8.0]), np.array([1.0])
    with pytest.raises(ad.ImplicitSolveError, match="transpose_solve returned a wrong"):
        ad.grad(lambda p: root(p, initial=u0).sum())(p)
    _, du = ad.jvp(lambda p: root(p, initial=u0))(p, tangents=np.ones(1))
    np.testing.assert_allclose(du, [1 / 12], rtol=1e-10)


def test_derivatives_with_gmres_at_its_default_tolerance_are_accepted():
    pytest.importorskip("scipy")
    from advect.scipy.sparse.linalg import gmres_solver

    n = 5
    lap = 2 * np.eye(n) - np.eye(n, k=1) - np.eye(n, k=-1)
    from advect.scipy.optimize import root_solver

    root = ad.implicit_root(lambda u, p: lap @ u + p["k"] * np.sin(u) - p["f"],
                            solve=root_solver(options={"xtol": 1e-13}),
                            linear_solve=gmres_solver())
    p = {"k": np.array(0.7), "f": np.linspace(0.2, 1.0, n)}
    g = ad.grad(lambda p: np.sum(root(p, initial=np.zeros(n)) ** 3))(p)
    u = root(p, initial=np.zeros(n))
    jac = lap + np.diag(0.7 * np.cos(u))
    np.testing.assert_allclose(g["f"], np.linalg.solve(jac.T, 3 * u ** 2), rtol=1e-4)


def test_a_residual_not_shaped_like_initial_is_a_value_error_before_the_solver_runs():
    pytest.importorskip("scipy")
    from advect.scipy.sparse.linalg import gmres_solver

    root = _cube_root(gmres_solver(rtol=1e-12))
    with pytest.raises(ValueError, match="structure and shapes of u"):
        root(np.array([8.0, 27.0]), initial=np.array([1.0]))  # was "solve failed: ..."


def test_a_residual_closing_over_a_traced_value_is_a_clear_tracing_error():
    pytest.importorskip("scipy")
    from advect.scipy.optimize import root_solver
    from advect.scipy.sparse.linalg import gmres_solver

    def loss(x):
        root = ad.implicit_root(lambda u, p: u ** 3 - x * p, solve=root_solver(),
                                linear_solve=gmres_solver(rtol=1e-12))
        return root(np.array([1.0]), initial=np.ones(1)).sum()

    with pytest.raises(ad.TracingError, match="not in params"):
        ad.grad(loss)(np.array([8.0]))


def test_staging_with_a_staged_initial_is_the_clear_refusal():
    pytest.importorskip("scipy")
    from advect.scipy.sparse.linalg import gmres_solver

    root = _cube_root(gmres_solver(rtol=1e-12))
    with pytest.raises(ad.TracingError, match="`initial` is a staged value"):
        ad.stage(lambda x: root(np.array([8.0]), initial=x), np.ones(1))


def test_scipy_callbacks_solve_an_empty_system():
    pytest.importorskip("scipy")
    from advect.scipy.sparse.linalg import gmres_solver

    root = _cube_root(gmres_solver(rtol=1e-12))
    assert root(np.zeros(0), initial=np.zeros(0)).shape == (0,)
    assert ad.grad(lambda p: root(p, initial=np.zeros(0)).sum())(np.zeros(0)).shape == (0,)


def test_pytree_params_with_static_and_unused_leaves_and_mixed_precision():
    pytest.importorskip("scipy")
    from advect.scipy.optimize import root_solver
    from advect.scipy.sparse.linalg import gmres_solver

    def residual(u, p):
        return {"a": u["a"] ** 3 - p["a"], "b": (2 * u["b"][0] - p["b"], None)}

    root = ad.implicit_root(residual, solve=root_solver(options={"xtol": 1e-12}),
                            linear_solve=gmres_solver(rtol=1e-12))
    p = {"a": np.array([8.0, 27.0], np.float32), "b": np.array(3.0), "unused": np.ones(2),
         "tag": "static", "none": None}
    init = {"a": np.ones(2, np.float32), "b": (np.array(0.0), None)}
    loss = lambda p: root(p, initial=init)["a"].sum() + root(p, initial=init)["b"][0]  # noqa: E731
    g = ad.grad(loss)(p)
    assert g["a"].dtype == np.float32 and g["tag"] is None and g["none"] is None
    np.testing.assert_allclose(g["a"], [1 / 12, 1 / 27], rtol=1e-5)
    np.testing.assert_allclose(g["b"], 0.5)
    np.testing.assert_array_equal(g["unused"], 0.0)


# --- advect.xarray ----------------------------------------------------------------------------

def _labeled():
    xr = pytest.importorskip("xarray")
    import advect.xarray  # noqa: F401

    return xr, xr.Dataset(
        {"t": (("x", "y"), np.arange(6, dtype=np.float32).reshape(2, 3), {"units": "K"}),
         "w": ("x", np.array([1.0, 2.0])), "n": ("y", np.array([1.0, 2.0, 3.0]))},
        coords={"x": [0, 1], "y": ["a", "b", "c"]}, attrs={"source": "demo"})


def test_dataset_gradients_and_staged_outputs_keep_the_variables_order():
    xr, ds = _labeled()
    g = ad.grad(lambda s: (s.t * s.w).sum().data + s.n.sum().data)(ds)
    assert list(g.data_vars) == ["t", "w", "n"] and list(g.sizes) == ["x", "y"]
    assert g.t.dtype == np.float32 and g.t.attrs == {"units": "K"}
    np.testing.assert_allclose(g.w.values, ds.t.values.sum(axis=1))
    program = ad.stage(lambda s: s * 2, ds)
    assert list(program(ds).data_vars) == ["t", "w", "n"]
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    assert list(restored(ds).data_vars) == ["t", "w", "n"]
    assert restored(ds).identical(program(ds))


@pytest.mark.parametrize("change, says", [
    (lambda ds: ds.assign_coords(y=["p", "q", "r"]), "coordinate 'y' differ"),
    (lambda ds: ds.assign_attrs(source="other"), "attrs {'source': 'demo'} vs"),
    (lambda ds: ds.assign(t=ds.t.assign_attrs(units="C")), "attrs of 't'"),
])
def test_a_staged_call_with_other_labels_says_what_differs(change, says):
    _, ds = _labeled()
    program = ad.stage(lambda s: (s.t * s.w).sum("x"), ds)
    with pytest.raises(TypeError, match=f"argument\\[0\\].*{says}"):
        program(change(ds))
    da = ds.t
    with pytest.raises(TypeError, match="coordinate 'x' differ"):
        ad.stage(lambda a: a * 2, da)(da.assign_coords(x=[5, 6]))


def test_a_tangent_with_other_coordinates_says_which():
    _, ds = _labeled()
    da = ds.t
    with pytest.raises(TypeError, match="coordinate 'y' differ"):
        ad.jvp(lambda a: a * 2)(da, tangents=(da * 0 + 1).assign_coords(y=["p", "q", "r"]))


@pytest.mark.parametrize("make, says", [
    (lambda xr: xr.Dataset({0: ("x", np.ones(2))}), "data variable 0 is not a string"),
    (lambda xr: xr.DataArray(np.ones(2), dims=(0,)), "dim 0 is not a string"),
    (lambda xr: xr.DataArray(np.ones(2), dims="x", attrs={1: "a"}), "attrs key 1"),
    (lambda xr: xr.DataArray(np.ones(2), dims="x", coords={"x": np.array(["a", 1], object)}),
     "coordinate 'x' holds Python objects"),
])
def test_saving_labels_that_would_not_round_trip_is_refused(make, says):
    xr, _ = _labeled()
    value = make(xr)
    program = ad.stage(lambda v: v * 2, value)
    program(value)  # the live program works
    with pytest.raises(TypeError, match=says):  # was saved, then refused value when loaded
        program.to_dict()


def test_labeled_operations_match_central_differences():
    xr, ds = _labeled()
    a = ds.t.astype(np.float64)
    b = xr.DataArray([0.5, -1.0, 2.0, 3.0], dims="y", coords={"y": ["b", "c", "d", "e"]})
    ops = [lambda a: (a * b).sum(),                                    # inner join
           lambda a: a.rolling(y=2, min_periods=1).mean().sum(),
           lambda a: (a.diff("y") ** 2).sum() + (a.shift(y=1) ** 2).sum(),
           lambda a: (a.pad(y=(1, 2), mode="reflect") ** 2 * np.arange(6)).sum(),
           lambda a: (a.stack(s=("x", "y")) * np.arange(6)).sum(),
           lambda a: (a.groupby("x").mean() ** 2).sum(),
           lambda a: a.where(a > 1.5, -a).sum()]
    for op in ops:
        g = ad.grad(lambda a, op=op: op(a).data)(a)
        fd = np.zeros(a.shape)
        for i in np.ndindex(a.shape):
            e = np.zeros(a.shape)
            e[i] = 1e-6
            fd[i] = (float(op(a + e)) - float(op(a - e))) / 2e-6
        np.testing.assert_allclose(g.values, fd, atol=1e-6)
        assert g.dims == a.dims and g.coords.identical(a.coords) and g.attrs == a.attrs


# --- advect.dask ------------------------------------------------------------------------------

def test_blockwise_python_int_params_are_lifted_like_grad():
    da = pytest.importorskip("dask.array")
    from advect.dask import blockwise_value_and_grad

    y = np.arange(10.0)
    loss = lambda b, yb: np.sum((yb - b) ** 2)  # noqa: E731
    value, g = blockwise_value_and_grad(loss, 1, da.from_array(y, chunks=(3, 0, 7)))
    whole_value, whole = ad.value_and_grad(loss)(1, y)
    assert value == pytest.approx(whole_value)
    np.testing.assert_allclose(g, whole)  # was an integer zero
    assert type(g) is type(whole) is float  # as grad gives a Python number's gradient


def test_blockwise_non_array_params_are_held_fixed_with_none_gradients():
    da = pytest.importorskip("dask.array")
    from advect.dask import blockwise_value_and_grad

    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(11, 2)).astype(np.float32), rng.normal(size=11).astype(np.float32)

    def loss(p, xb, yb):
        z = xb @ p["w"]
        return np.mean((np.tanh(z) if p["act"] == "tanh" else z) - yb) ** 2

    p = {"w": np.array([0.3, -0.2], np.float32), "act": "tanh", "skip": None}
    value, g = blockwise_value_and_grad(loss, p, da.from_array(x, chunks=(11, 2)),
                                        da.from_array(y, chunks=11), reduce="mean")
    whole = ad.grad(loss)(p, x, y)
    assert g["act"] is None and g["skip"] is None and g["w"].dtype == np.float32
    np.testing.assert_allclose(g["w"], whole["w"], rtol=1e-5)

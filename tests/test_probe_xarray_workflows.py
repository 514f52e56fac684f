"""Climate-analysis workflows on traced xarray data: derivatives against central differences and
the other AD mode, staged and dynamic results against eager xarray (values, labels, dtypes and
the types of ``.data``). Regressions: xarray's NumPy code paths (``xp.transpose``,
``xp.quantile``, ``xp.gradient``, ``out=None``, vectorized indexing) and ``bool(da)``,
``int(da)`` on traced NumPy data."""

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
pd = pytest.importorskip("pandas")

import advect as ad  # noqa: E402
import advect.xarray  # noqa: E402, F401
from advect.pytree import tree_leaves, tree_map  # noqa: E402

RNG = np.random.default_rng(7)
TEMPERATURE = xr.DataArray(
    280.0 + RNG.normal(size=(12, 3, 4)), dims=("time", "lat", "lon"),
    coords={"time": pd.date_range("2000-01-01", periods=12, freq="MS"),
            "lat": [0.0, 10.0, 25.0], "lon": [0.0, 90.0, 180.0, 270.0],
            "season": ("time", np.arange(12) // 3)},
    name="t", attrs={"units": "K"})
WEIGHTS = xr.DataArray(np.cos(np.deg2rad(TEMPERATURE.lat)), dims="lat")
POINTS = {"lat": xr.DataArray([0, 2, 1], dims="p"), "lon": xr.DataArray([1, 3, 3], dims="p")}

WORKFLOWS = {
    "anomaly": lambda t: t - t.mean("time"),
    "weighted_mean": lambda t: t.weighted(WEIGHTS).mean(("lat", "lon")),
    "seasonal_anomaly": lambda t: t.groupby("season") - t.groupby("season").mean(),
    "rolling_mean": lambda t: t.rolling(time=3, min_periods=1).mean(),
    "coarsen": lambda t: t.coarsen(time=3).mean(),
    "resample": lambda t: t.resample(time="QS").max(),
    "quantile_first_dim": lambda t: t.quantile(0.3, dim="time"),
    "quantiles_middle_dim": lambda t: t.quantile([0.25, 0.75], dim="lat"),
    "polyfit_trend": lambda t: t.polyfit("lat", 1).polyfit_coefficients,
    "polyfit_full": lambda t: t.polyfit("lat", 1, skipna=False, full=True).to_array(),
    "differentiate": lambda t: t.differentiate("lat", edge_order=2),
    "cumulative_integrate": lambda t: t.cumulative_integrate("lat"),
    "integrate": lambda t: t.integrate("lon"),
    "apply_ufunc_core_dim": lambda t: xr.apply_ufunc(
        np.std, t, input_core_dims=[["time"]], kwargs={"axis": -1}),
    "station_points": lambda t: t.isel(POINTS),
    "clip_diff_cumsum": lambda t: t.clip(279.0, 281.0).diff("time").cumsum("lon"),
    "dot_transpose_stack": lambda t: xr.dot(t, WEIGHTS, dim="lat").transpose("lon", "time")
    .expand_dims(run=2).stack(z=("run", "lon")),
}


def _direction(tree):
    return tree_map(lambda leaf: RNG.normal(size=np.shape(leaf)), tree)


def _shifted(tree, direction, eps):
    return tree_map(lambda leaf, d: leaf + eps * d, tree, direction)


def _inner(a, b):
    return sum(float(np.sum(x * y)) for x, y in zip(tree_leaves(a), tree_leaves(b)))


def _assert_same_labels(actual, expected):
    assert type(actual) is type(expected)
    assert actual.dims == expected.dims and actual.dtype == expected.dtype
    assert actual.coords.to_dataset().identical(expected.coords.to_dataset())
    assert actual.name == expected.name and actual.attrs == expected.attrs
    assert type(actual.data) is type(expected.data) is np.ndarray


@pytest.mark.parametrize("name", list(WORKFLOWS))
def test_workflow_derivatives_match_central_differences_and_the_other_mode(name):
    f = WORKFLOWS[name]
    cotangent = _direction(f(TEMPERATURE))
    loss = lambda t: (f(t) * cotangent).sum().data
    before = TEMPERATURE.copy(deep=True)
    g = ad.grad(loss)(TEMPERATURE)
    assert TEMPERATURE.identical(before)
    _assert_same_labels(g, TEMPERATURE)
    v = _direction(TEMPERATURE)
    eps = 1e-4
    fd = (loss(_shifted(TEMPERATURE, v, eps)) - loss(_shifted(TEMPERATURE, v, -eps))) / (2 * eps)
    np.testing.assert_allclose(_inner(g, v), fd, rtol=1e-6, atol=1e-6)
    _, tangent = ad.jvp(f)(TEMPERATURE, tangents=v)
    np.testing.assert_allclose(_inner(tangent, cotangent), _inner(g, v), rtol=1e-10)


@pytest.mark.parametrize("name", [name for name in WORKFLOWS if name != "polyfit_trend"])
def test_staged_and_dynamic_workflows_match_eager_xarray(name):
    f = WORKFLOWS[name]
    expected = f(TEMPERATURE)
    program = ad.stage(f, TEMPERATURE)
    staged = program(TEMPERATURE + 0.5)
    dynamic, _ = ad.jvp(f)(TEMPERATURE + 0.5, tangents=TEMPERATURE)
    shifted = f(TEMPERATURE + 0.5)
    for out in (staged, dynamic):
        _assert_same_labels(out, expected)
        np.testing.assert_allclose(out.values, shifted.values, rtol=1e-12, atol=1e-12)


def test_scalar_results_hold_0d_arrays_as_eager_xarray_does():
    def summaries(t):
        return xr.Dataset({"mean": t.mean(), "q": t.quantile(0.9), "n": t.count(),
                           "warm": (t > 280.0).any(), "spread": t.std(ddof=1)})

    eager = summaries(TEMPERATURE)
    staged = ad.stage(summaries, TEMPERATURE)(TEMPERATURE)
    value, _ = ad.vjp(summaries)(TEMPERATURE)
    for out in (staged, value):
        assert out.identical(eager)
        for name in eager.data_vars:
            assert type(out[name].data) is np.ndarray and out[name].shape == ()
            assert out[name].dtype == eager[name].dtype


def test_python_conversions_of_traced_dataarrays_follow_the_tracer_rules():
    def warmest_month(t):  # a label picked from non-differentiated data, as eagerly
        month = int(t.mean(("lat", "lon")).argmax("time"))
        return (t.isel(time=month) ** 2).sum().data

    month = int(TEMPERATURE.mean(("lat", "lon")).argmax("time"))
    expected = xr.zeros_like(TEMPERATURE)
    expected[month] = 2 * TEMPERATURE[month]
    np.testing.assert_allclose(ad.grad(warmest_month)(TEMPERATURE).values, expected.values)
    with pytest.raises(ad.errors.TracingError, match=r"float\(\) of a traced value"):
        ad.grad(lambda t: t.sum().data * float(t.sum()))(TEMPERATURE)
    with pytest.raises(ad.errors.TracingError, match=r"bool\(\) needs the data"):
        ad.stage(lambda t: t if (t > 280.0).all() else -t, TEMPERATURE)
    # polyfit's default skipna asks bool(any(isnull)): dynamic transforms answer, staging says
    with pytest.raises(ad.errors.TracingError, match=r"bool\(\) needs the data"):
        ad.stage(WORKFLOWS["polyfit_trend"], TEMPERATURE)


def test_fitting_a_seasonal_model_dataset_to_gridded_data():
    months = xr.DataArray(np.arange(12.0), dims="time")
    params = xr.Dataset({"amplitude": ("lat", np.array([1.0, 2.0, 0.5])),
                         "phase": ((), np.array(0.3)), "offset": ("lon", np.full(4, 280.0))},
                        coords={"lat": TEMPERATURE.lat, "lon": TEMPERATURE.lon})

    def loss(p, obs):
        model = p.offset + p.amplitude * np.sin(2 * np.pi * months / 12 + p.phase)
        misfit = (model - obs.drop_vars(["time", "season"])) ** 2
        return misfit.weighted(WEIGHTS).mean(("lat", "lon")).sum("time").data

    g = ad.grad(loss)(params, TEMPERATURE)
    assert isinstance(g, xr.Dataset) and list(g.data_vars) == list(params.data_vars)
    staged = ad.stage(ad.grad(loss), params, TEMPERATURE)(params, TEMPERATURE)
    v = _direction(params)
    eps = 1e-5
    fd = (loss(_shifted(params, v, eps), TEMPERATURE)
          - loss(_shifted(params, v, -eps), TEMPERATURE)) / (2 * eps)
    np.testing.assert_allclose(_inner(g, v), fd, rtol=1e-6)
    for name in params.data_vars:
        np.testing.assert_allclose(staged[name].values, g[name].values, rtol=1e-12)
        assert staged[name].dims == params[name].dims

"""advect.xarray: DataArray and Dataset as pytrees: labels restored on gradients, tangents and
outputs; values against central differences; staged signatures with labels, saved and loaded."""

import json

import numpy as np
import pytest

import advect as ad
from advect.pytree import static, tree_flatten, tree_map, tree_unflatten
from interop_cases import central_gradient

xr = pytest.importorskip("xarray")
import advect.xarray  # noqa: E402, F401  (registers the containers)
from advect.staging.program import StagedProgram  # noqa: E402


def _temperature():
    rng = np.random.default_rng(0)
    return xr.DataArray(rng.normal(size=(2, 3)), dims=("x", "y"), name="t",
                        coords={"x": [10, 20], "y": ["a", "b", "c"],
                                "lat": ("x", [1.5, 2.5], {"units": "deg"})},
                        attrs={"units": "K", "count": np.int64(3)})


def _dataset():
    t = _temperature()
    return xr.Dataset({"t": t, "w": ("y", np.array([0.5, 1.0, 2.0]), {"role": "weight"})},
                      attrs={"title": "demo"})


def _energy(t):
    return ((t ** 2).mean("y") * t.lat).sum().data


class Labeled(xr.DataArray):
    __slots__ = ()


def test_flatten_round_trips_keep_every_label():
    for tree in (_temperature(), _dataset(), Labeled(_temperature())):
        leaves, treedef = tree_flatten(tree)
        rebuilt = tree_unflatten(treedef, leaves)
        assert type(rebuilt) is type(tree) and rebuilt.identical(tree)
        assert tree_flatten(rebuilt)[1] == treedef
    assert len(tree_flatten(_dataset())[0]) == 2   # one leaf per data variable
    doubled = tree_map(lambda a: a * 2, _dataset())
    assert doubled.attrs == {"title": "demo"} and doubled.w.attrs == {"role": "weight"}


def test_structure_changes_with_any_label():
    t = _temperature()
    base = tree_flatten(t)[1]
    for other in (t.rename("u"), t.assign_coords(x=[1, 2]), t.rename(x="z"),
                  t.assign_attrs(units="C"), t.drop_vars("lat")):
        assert tree_flatten(other)[1] != base


def test_gradient_is_labeled_and_matches_central_differences():
    t = _temperature()
    g = ad.grad(_energy)(t)
    assert isinstance(g, xr.DataArray) and g.name == "t" and g.dims == ("x", "y")
    assert g.attrs == t.attrs and g.coords.identical(t.coords)
    expected = central_gradient(lambda v: _energy(t.copy(data=v)), t.values)
    np.testing.assert_allclose(g.values, expected, rtol=1e-6)


def test_dataset_gradient_tangent_and_vjp_keep_their_labels():
    ds = _dataset()

    def loss(ds):
        return ((ds.t * ds.w) ** 2).sum().data
    g = ad.grad(loss)(ds)
    assert isinstance(g, xr.Dataset) and g.attrs == ds.attrs
    np.testing.assert_allclose(g.t.values, 2 * ds.t.values * ds.w.values ** 2)
    np.testing.assert_allclose(g.w.values, (2 * ds.t.values ** 2 * ds.w.values).sum(0))
    _, tangent = ad.jvp(lambda ds: np.sin(ds.t) * ds.w)(ds, tangents=xr.ones_like(ds))
    assert isinstance(tangent, xr.DataArray) and tangent.coords.identical(ds.t.coords)
    np.testing.assert_allclose(tangent.values, np.cos(ds.t.values) * ds.w.values
                               + np.sin(ds.t.values))
    value, pullback = ad.vjp(lambda t: np.exp(t))(ds.t)
    ct = pullback(xr.ones_like(value))
    assert ct.identical(np.exp(ds.t).copy(data=np.exp(ds.t.values)))


def test_subclasses_come_back_as_themselves():
    t = Labeled(_temperature())
    g = ad.grad(_energy)(t)
    assert type(g) is Labeled


def test_a_traced_coordinate_is_refused():
    t = _temperature()
    with pytest.raises(TypeError, match="coordinate 'lat' holds a traced array"):
        ad.vjp(lambda t: t.assign_coords(lat=("x", t.data[:, 0])))(t)


def test_staged_signature_records_the_labels():
    t = _temperature()
    program = ad.stage(lambda t: (t * 2).sum("y"), t)
    out = program(t)
    assert isinstance(out, xr.DataArray) and out.dims == ("x",)
    np.testing.assert_allclose(out.values, 2 * t.values.sum(1))
    np.testing.assert_array_equal(out.x.values, [10, 20])
    for other in (t.assign_coords(x=[1, 2]), t.rename(x="z"), t.rename("u")):
        with pytest.raises(TypeError, match="does not match the staged signature"):
            program(other)
    np.testing.assert_allclose(ad.grad(lambda t: program(t).sum().data)(t).values, 2.0)


def test_staged_programs_with_labels_save_and_load():
    ds = _dataset()
    program = ad.stage(lambda ds, k: (ds.t * ds.w).sum("y") * k.value, ds, static(2.0))
    restored = StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    assert restored(ds, static(2.0)).identical(program(ds, static(2.0)))
    with pytest.raises(TypeError, match="does not match the staged signature"):
        restored(ds.assign_coords(x=[1, 2]), static(2.0))
    with pytest.raises(TypeError, match="static value"):
        restored(ds, static(3.0))
    with pytest.raises(TypeError, match="Labeled container"):  # subclasses are not saved
        ad.stage(lambda t: t * 2, Labeled(_temperature())).to_dict()


def test_multiindexes_and_datetime_coordinates_are_restored():
    stacked = _temperature().drop_vars("lat").stack(z=("x", "y"))
    g = ad.grad(lambda t: (t ** 2).sum().data)(stacked)
    assert g.identical(stacked * 2) and type(g.xindexes["z"]).__name__ == "PandasMultiIndex"
    with pytest.raises(TypeError, match="PandasMultiIndex"):
        ad.stage(lambda t: t * 2, stacked).to_dict()
    days = np.array(["2020-01-01", "2020-01-02", "2020-01-03"], dtype="datetime64[ns]")
    series = xr.DataArray(np.arange(3.0), dims="time", coords={"time": days})
    program = ad.stage(lambda t: t * 2, series)
    restored = StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    assert restored(series).identical(program(series))


def test_grad_of_a_zero_d_dataarray_output_says_to_return_its_data():
    t = _temperature()
    with pytest.raises(ValueError, match=r"a DataArray holding one scalar \(return the scalar "
                       r"itself: its \.data\)$"):
        ad.grad(lambda t: t.sum())(t)
    g = ad.grad(lambda t: t.sum().data)(t)
    assert g.dims == t.dims and np.all(g.values == 1.0)


@pytest.mark.parametrize("call,method", [
    (lambda d: d.dropna("x").sum().data, "DataArray.dropna"),
    (lambda d: d.interp(x=[0.5, 1.5]).sum().data, "DataArray.interp"),
], ids=["dropna", "interp"])
def test_xarray_methods_that_read_values_are_named_when_they_refuse(call, method):
    pytest.importorskip("scipy")  # interp's
    d = xr.DataArray(np.linspace(0, 1, 5), dims="x", coords={"x": np.arange(5.0)})
    with pytest.raises(ad.TracingError, match=f"xarray's {method} converts its data to a plain "
                       "NumPy array"):
        ad.grad(call)(d)

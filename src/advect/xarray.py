"""xarray containers as pytrees: importing this module registers ``DataArray`` and ``Dataset``.

A ``DataArray`` is one leaf (its data buffer); a ``Dataset`` has one leaf per data variable, in
sorted name order. Everything else (dims, coordinates and their indexes, names, attrs, and the
container's class, so subclasses work too) is the node's metadata: it is held in the tree's
structure, so gradients, tangents and outputs come back labeled, and a staged program records
the labels in its signature (a call with other dims or coordinates is a contract mismatch).
Coordinates are never differentiated; a traced coordinate is refused. xarray's operations work
on traced data: for traced NumPy data, xarray's namespace look-ups and indexing adapter get
NumPy's, as for the arrays the tracers stand for (``quantile``, ``polyfit``, ``differentiate``,
vectorized ``isel``), and ``bool(da)``, ``int(da)``, ... convert with the tracer's own rules;
other providers' data runs through Advect's Array API namespace.

Example:
    >>> import numpy as np, xarray as xr, advect as ad
    >>> import advect.xarray
    >>> t = xr.DataArray(np.array([1.0, 2.0]), dims="x", coords={"x": [10, 20]}, name="t")
    >>> g = ad.grad(lambda t: (t ** 2).sum().data)(t)
    >>> g.name, g.dims, g.x.values.tolist(), g.values.tolist()
    ('t', ('x',), [10, 20], [2.0, 4.0])
"""

from __future__ import annotations

import base64
import functools
import io
import sys
from typing import Any

import numpy as np
import xarray as xr

from .core import Tracer
from .providers import provider_of
from .pytree import register_pytree_node, register_saved_node, same_value

__all__ = ["DataArrayLabels", "DatasetLabels"]


def _coordinates(coords) -> xr.Coordinates:
    """A data-free copy of ``coords`` (variables and indexes), refusing traced coordinates."""
    for name, var in coords.variables.items():
        if isinstance(var._data, Tracer):
            raise TypeError(f"advect.xarray: coordinate {name!r} holds a traced array; "
                            "coordinates are labels, never differentiated: make it a data "
                            "variable of a Dataset, or compute it outside the transform")
    return xr.Coordinates(dict(coords.variables), indexes=dict(coords.xindexes))


def _same_attrs(a, b) -> bool:
    """Equal attrs (or names), NumPy scalars equal to the Python scalars a saved program
    restores them as."""
    return same_value(_python_scalars(a), _python_scalars(b))


def _python_scalars(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _python_scalars(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_python_scalars(v) for v in value)
    return value


def _same_coords(a: xr.Coordinates, b: xr.Coordinates) -> bool:
    return a is b or a.identical(b)


def _coords_difference(a: xr.Coordinates, b: xr.Coordinates) -> str | None:
    if set(a) != set(b):
        return f"coordinates {sorted(a, key=str)!r} vs {sorted(b, key=str)!r}"
    for name in a:
        if not a[name].variable.identical(b[name].variable):
            return f"the values or attrs of coordinate {name!r} differ"
    if not _same_coords(a, b):
        return "the coordinates' indexes differ"
    return None


class _Leaf:
    """A leaf that is not an array, held where a container's data goes (trees of specs or of
    output markers, ``tree_map`` to other values): structure only, flattening gives it back."""

    __slots__ = ("value", "shape", "ndim", "dtype")

    def __init__(self, value, shape: tuple[int, ...]):
        self.value, self.shape, self.ndim, self.dtype = value, shape, len(shape), np.dtype(object)

    def __repr__(self) -> str:
        return f"<leaf {self.value!r}>"


def _as_data(leaf, dims: tuple, sizes: dict):
    if isinstance(leaf, np.generic):  # a 0-d result as NumPy gives it: xarray holds arrays
        return np.asarray(leaf)
    if getattr(leaf, "ndim", None) is None or type(leaf) in (bool, int, float, complex):
        return _Leaf(leaf, tuple(sizes.get(d, 1) for d in dims))
    if leaf.ndim != len(dims):  # e.g. a jacobian or hessian block: out.shape + in.shape
        raise ValueError(f"advect.xarray: an array of shape {tuple(leaf.shape)} cannot be "
                         f"labeled with dims {tuple(dims)!r}; dense jacobian and hessian "
                         "blocks have out.shape + in.shape, so differentiate a function of "
                         "the underlying arrays (.data) for them")
    return leaf


def _leaf_of(data):
    return data.value if type(data) is _Leaf else data


class DataArrayLabels:
    """A DataArray without its data: class, dims, coordinates with indexes, name and attrs.

    Equal labels make equal tree structures; ``repr`` names what a staged signature checks.

    Example:
        >>> import numpy as np, xarray as xr
        >>> from advect.pytree import tree_flatten
        >>> _, treedef = tree_flatten(xr.DataArray(np.zeros(2), dims="x", name="u"))
        >>> treedef.aux
        DataArrayLabels(dims=('x',), coords=[], name='u')
    """

    __slots__ = ("cls", "dims", "coords", "name", "attrs")

    def __init__(self, da: xr.DataArray):
        self.cls, self.dims, self.name = type(da), da.dims, da.name
        self.coords = _coordinates(da.coords)
        self.attrs = dict(da.attrs)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DataArrayLabels) and self.cls is other.cls
                and self.dims == other.dims and _same_attrs(self.name, other.name)
                and _same_attrs(self.attrs, other.attrs)
                and _same_coords(self.coords, other.coords))

    def __hash__(self) -> int:
        return hash((self.cls, self.dims))

    def __repr__(self) -> str:
        kind = "" if self.cls is xr.DataArray else f"cls={self.cls.__name__}, "
        return (f"DataArrayLabels({kind}dims={self.dims!r}, coords={list(self.coords)!r}, "
                f"name={self.name!r})")

    def describe_mismatch(self, other: DataArrayLabels) -> str:
        """What differs from ``other``, in words (for error messages)."""
        if self.cls is not other.cls:
            return f"class {self.cls.__name__} vs {other.cls.__name__}"
        if self.dims != other.dims:
            return f"dims {self.dims!r} vs {other.dims!r}"
        if not _same_attrs(self.name, other.name):
            return f"name {self.name!r} vs {other.name!r}"
        if not _same_attrs(self.attrs, other.attrs):
            return f"attrs {self.attrs!r} vs {other.attrs!r}"
        return _coords_difference(self.coords, other.coords) or "equal labels"

    def build(self, data) -> xr.DataArray:
        data = _as_data(data, self.dims, self.coords.sizes)
        variable = xr.Variable(self.dims, data, dict(self.attrs), fastpath=True)
        return self.cls(variable, coords=dict(self.coords.variables), name=self.name,
                        indexes=dict(self.coords.xindexes), fastpath=True)


class DatasetLabels:
    """A Dataset without its data: class, each data variable's name, dims and attrs, the
    coordinates with indexes, and the dataset's attrs. The variables' own order is kept to
    rebuild the dataset (leaves are in sorted name order; the order does not change the
    structure, as ``Dataset.identical`` ignores it).

    Example:
        >>> import numpy as np, xarray as xr
        >>> from advect.pytree import tree_flatten
        >>> ds = xr.Dataset({"v": ("x", np.zeros(2)), "u": ("x", np.ones(2))})
        >>> leaves, treedef = tree_flatten(ds)
        >>> treedef.aux, [leaf.tolist() for leaf in leaves]
        (DatasetLabels(data_vars=['u', 'v'], coords=[]), [[1.0, 1.0], [0.0, 0.0]])
    """

    __slots__ = ("cls", "variables", "order", "coords", "attrs")

    def __init__(self, ds: xr.Dataset):
        self.cls = type(ds)
        self.variables = tuple((name, ds[name].dims, dict(ds[name].attrs))
                               for name in sorted(ds.data_vars, key=str))
        self.order = tuple(ds.data_vars)
        self.coords = _coordinates(ds.coords)
        self.attrs = dict(ds.attrs)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DatasetLabels) and self.cls is other.cls
                and _same_attrs(self.variables, other.variables)
                and _same_attrs(self.attrs, other.attrs)
                and _same_coords(self.coords, other.coords))

    def __hash__(self) -> int:
        return hash((self.cls, tuple(name for name, _, _ in self.variables)))

    def __repr__(self) -> str:
        kind = "" if self.cls is xr.Dataset else f"cls={self.cls.__name__}, "
        names = [name for name, _, _ in self.variables]
        return f"DatasetLabels({kind}data_vars={names!r}, coords={list(self.coords)!r})"

    def describe_mismatch(self, other: DatasetLabels) -> str:
        """What differs from ``other``, in words (for error messages)."""
        if self.cls is not other.cls:
            return f"class {self.cls.__name__} vs {other.cls.__name__}"
        for (name, dims, attrs), (o_name, o_dims, o_attrs) in zip(self.variables,
                                                                  other.variables):
            if name != o_name or dims != o_dims:
                return f"data variable {name!r} {dims!r} vs {o_name!r} {o_dims!r}"
            if not _same_attrs(attrs, o_attrs):
                return f"attrs of {name!r}: {attrs!r} vs {o_attrs!r}"
        if len(self.variables) != len(other.variables):
            return (f"data variables {[n for n, _, _ in self.variables]!r} vs "
                    f"{[n for n, _, _ in other.variables]!r}")
        if not _same_attrs(self.attrs, other.attrs):
            return f"attrs {self.attrs!r} vs {other.attrs!r}"
        return _coords_difference(self.coords, other.coords) or "equal labels"

    def build(self, children) -> xr.Dataset:
        data_vars = {}
        for (name, dims, attrs), data in zip(self.variables, children):
            data = _as_data(data, dims, self.coords.sizes)
            data_vars[name] = xr.Variable(dims, data, dict(attrs), fastpath=True)
        data_vars = {name: data_vars[name] for name in self.order}
        return self.cls(data_vars, coords=self.coords, attrs=dict(self.attrs))


def _flatten_dataarray(da: xr.DataArray) -> tuple[list[Any], DataArrayLabels]:
    return [_leaf_of(da.variable._data)], DataArrayLabels(da)


def _flatten_dataset(ds: xr.Dataset) -> tuple[list[Any], DatasetLabels]:
    labels = DatasetLabels(ds)
    return [_leaf_of(ds[name].variable._data) for name, _, _ in labels.variables], labels


register_pytree_node(xr.DataArray, flatten_fn=_flatten_dataarray,
                     unflatten_fn=lambda labels, children: labels.build(children[0]),
                     include_subclasses=True)
register_pytree_node(xr.Dataset, flatten_fn=_flatten_dataset,
                     unflatten_fn=lambda labels, children: labels.build(children),
                     include_subclasses=True)


# --- traced NumPy data: xarray's NumPy code paths ----------------------------------------------
# xarray takes the namespace of its data from ``__array_namespace__``; a plain ndarray answers
# ``numpy`` itself, so eager xarray calls NumPy's API (``xp.transpose``, ``xp.quantile``,
# ``xp.gradient``, reductions with ``out=None``) and indexes through NumPy's adapter. A traced
# NumPy array answers Advect's strict Array API namespace instead, which lacks those. So xarray
# is given NumPy for traced NumPy arrays, as for the arrays they stand for (NumPy's functions
# dispatch to Advect through ``__array_function__``); other providers keep their namespace.

def _traced_numpy(value) -> bool:
    return isinstance(value, Tracer) and provider_of(value) is np


def _numpy_namespace_for_traced_numpy(get_array_namespace):
    @functools.wraps(get_array_namespace)
    def adapted(*values):
        return get_array_namespace(*[v for v in values if not _traced_numpy(v)])
    return adapted


def _numpy_indexing_for_traced_numpy(as_indexable):
    @functools.wraps(as_indexable)
    def adapted(array):
        if _traced_numpy(array):
            return xr.core.indexing.NdArrayLikeIndexingAdapter(array)
        return as_indexable(array)
    return adapted


def _adapt(original, adapter) -> None:
    """Replace ``original`` by ``adapter(original)`` wherever an xarray module holds it (it is
    imported by name into several modules, which differ between xarray versions)."""
    adapted = adapter(original)
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] == "xarray":
            for attr, value in list(vars(module).items()):
                if value is original:
                    setattr(module, attr, adapted)


def _tracer_conversion(name: str, convert):
    """``bool(da)``, ``float(da)``, ...: xarray converts ``da.values`` (``np.asarray`` of the
    data, which a tracer refuses); a traced buffer converts itself instead, with the tracer's
    own rules (a value that is not differentiated converts in a dynamic transform). ``convert``
    spells the call, which the tracer's error message names."""
    method = getattr(xr.core.common.AbstractArray, name)

    @functools.wraps(method)
    def adapted(self):
        data = getattr(self, "variable", self)._data
        return convert(data) if isinstance(data, Tracer) else method(self)
    return adapted


_adapt(xr.core.duck_array_ops.get_array_namespace, _numpy_namespace_for_traced_numpy)
_adapt(xr.core.indexing.as_indexable, _numpy_indexing_for_traced_numpy)
for _name, _convert in (("__bool__", lambda x: bool(x)), ("__float__", lambda x: float(x)),
                        ("__int__", lambda x: int(x)), ("__complex__", lambda x: complex(x))):
    setattr(xr.core.common.AbstractArray, _name, _tracer_conversion(_name, _convert))


# --- saved programs: labels as plain JSON values ----------------------------------------------

def _plain(value, where: str):
    """Attrs and names as the saved format's plain values (NumPy scalars become Python's)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {_string(k, f"{where} key"): _plain(v, where) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_plain(v, where) for v in value)
    if isinstance(value, np.ndarray):
        raise TypeError(f"advect.xarray: {where} holds an array, which a saved program's "
                        "labels cannot hold; use lists")
    return value


def _string(name, what: str) -> str:
    """A name as the saved format holds it; other names would come back as strings, and the
    restored program would refuse the containers it was staged for."""
    if not isinstance(name, str):
        raise TypeError(f"advect.xarray: {what} {name!r} is not a string; saved programs hold "
                        "only string dims, variable, coordinate and attr names")
    return name


def _encode_array(values: np.ndarray, where: str) -> str:
    if values.dtype.kind == "O":
        raise TypeError(f"advect.xarray: {where} holds Python objects (dtype object, e.g. "
                        "mixed types or time zones), which a saved program cannot hold")
    buffer = io.BytesIO()
    np.save(buffer, values, allow_pickle=False)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _decode_array(text: str) -> np.ndarray:
    return np.load(io.BytesIO(base64.b64decode(text, validate=True)), allow_pickle=False)


def _encode_coords(coords: xr.Coordinates) -> list:
    for name, index in coords.xindexes.items():
        if type(index) is not xr.indexes.PandasIndex or index.index.name != name:
            raise TypeError(f"advect.xarray: coordinate {name!r} has a "
                            f"{type(index).__name__}; saved programs hold only default "
                            "(pandas) indexes of dimension coordinates")
    return [[_string(name, "coordinate"), {
        "dims": [_string(d, "dim") for d in var.dims],
        "values": _encode_array(np.asarray(var.values), f"coordinate {name!r}"),
        "attrs": _plain(dict(var.attrs), f"coordinate {name!r} attrs")}]
        for name, var in coords.variables.items()]


def _decode_coords(items) -> xr.Coordinates:
    return xr.Coordinates({name: xr.Variable(tuple(body["dims"]), _decode_array(body["values"]),
                                             body["attrs"]) for name, body in items})


def _encode_dataarray(labels: DataArrayLabels):
    return {"dims": [_string(d, "dim") for d in labels.dims],
            "name": _plain(labels.name, "the name"),
            "attrs": _plain(labels.attrs, "attrs"), "coords": _encode_coords(labels.coords)}


def _decode_dataarray(body) -> DataArrayLabels:
    da = xr.DataArray(np.empty((0,) * len(body["dims"])), dims=tuple(body["dims"]))
    labels = DataArrayLabels(da)
    labels.name, labels.attrs = body["name"], body["attrs"]
    labels.coords = _decode_coords(body["coords"])
    return labels


def _encode_dataset(labels: DatasetLabels):
    body = {"variables": [[_string(name, "data variable"), [_string(d, "dim") for d in dims],
                           _plain(attrs, f"{name!r} attrs")]
                          for name, dims, attrs in labels.variables],
            "attrs": _plain(labels.attrs, "attrs"), "coords": _encode_coords(labels.coords)}
    if list(labels.order) != [name for name, _, _ in labels.variables]:
        body["order"] = list(labels.order)  # only when not sorted (names checked above)
    return body


def _decode_dataset(body) -> DatasetLabels:
    labels = DatasetLabels(xr.Dataset())
    labels.variables = tuple((name, tuple(dims), attrs) for name, dims, attrs in
                             body["variables"])
    labels.order = tuple(body.get("order", [name for name, _, _ in labels.variables]))
    labels.attrs, labels.coords = body["attrs"], _decode_coords(body["coords"])
    return labels


register_saved_node(xr.DataArray, name="xarray.DataArray", encode_aux=_encode_dataarray,
                    decode_aux=_decode_dataarray)
register_saved_node(xr.Dataset, name="xarray.Dataset", encode_aux=_encode_dataset,
                    decode_aux=_decode_dataset)

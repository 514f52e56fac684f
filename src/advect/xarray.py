"""xarray containers as pytrees: importing this module registers ``DataArray`` and ``Dataset``.

A ``DataArray`` is one leaf (its data buffer); a ``Dataset`` has one leaf per data variable, in
sorted name order. Everything else (dims, coordinates and their indexes, names, attrs, and the
container's class, so subclasses work too) is the node's metadata: it is held in the tree's
structure, so gradients, tangents and outputs come back labeled, and a staged program records
the labels in its signature (a call with other dims or coordinates is a contract mismatch).
Coordinates are never differentiated; a traced coordinate is refused.

Example:
    >>> import numpy as np, xarray as xr, advect as ad
    >>> import advect.xarray
    >>> t = xr.DataArray(np.array([1.0, 2.0]), dims="x", coords={"x": [10, 20]}, name="t")
    >>> g = ad.grad(lambda t: (t ** 2).sum().data)(t)
    >>> g.name, g.dims, g.x.values.tolist(), g.values.tolist()
    ('t', ('x',), [10, 20], [2.0, 4.0])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import xarray as xr

from .core import Tracer
from .pytree import _same_value, register_pytree_node

__all__ = ["DataArrayLabels", "DatasetLabels"]


def _coordinates(coords) -> xr.Coordinates:
    """A data-free copy of ``coords`` (variables and indexes), refusing traced coordinates."""
    for name, var in coords.variables.items():
        if isinstance(var._data, Tracer):
            raise TypeError(f"advect.xarray: coordinate {name!r} holds a traced array; "
                            "coordinates are labels, never differentiated: make it a data "
                            "variable of a Dataset, or compute it outside the transform")
    return xr.Coordinates(dict(coords.variables), indexes=dict(coords.xindexes))


def _same_coords(a: xr.Coordinates, b: xr.Coordinates) -> bool:
    return a is b or (list(a.variables) == list(b.variables) and a.identical(b))


def _as_data(leaf, where: str):
    if type(leaf) in (bool, int, float, complex):
        return np.asarray(leaf)
    if getattr(leaf, "ndim", None) is None:
        raise TypeError(f"advect.xarray: {where} needs an array leaf, got a "
                        f"{type(leaf).__name__}; map array leaves to arrays (or use "
                        "tree_map with is_leaf to stop at the container)")
    return leaf


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
                and self.dims == other.dims and _same_value(self.name, other.name)
                and _same_value(self.attrs, other.attrs)
                and _same_coords(self.coords, other.coords))

    def __hash__(self) -> int:
        return hash((self.cls, self.dims))

    def __repr__(self) -> str:
        kind = "" if self.cls is xr.DataArray else f"cls={self.cls.__name__}, "
        return (f"DataArrayLabels({kind}dims={self.dims!r}, coords={list(self.coords)!r}, "
                f"name={self.name!r})")

    def build(self, data) -> xr.DataArray:
        data = _as_data(data, f"a DataArray of dims {self.dims}")
        variable = xr.Variable(self.dims, data, dict(self.attrs), fastpath=True)
        return self.cls(variable, coords=dict(self.coords.variables), name=self.name,
                        indexes=dict(self.coords.xindexes), fastpath=True)


class DatasetLabels:
    """A Dataset without its data: class, each data variable's name, dims and attrs, the
    coordinates with indexes, and the dataset's attrs.

    Example:
        >>> import numpy as np, xarray as xr
        >>> from advect.pytree import tree_flatten
        >>> ds = xr.Dataset({"v": ("x", np.zeros(2)), "u": ("x", np.ones(2))})
        >>> leaves, treedef = tree_flatten(ds)
        >>> treedef.aux, [leaf.tolist() for leaf in leaves]
        (DatasetLabels(data_vars=['u', 'v'], coords=[]), [[1.0, 1.0], [0.0, 0.0]])
    """

    __slots__ = ("cls", "variables", "coords", "attrs")

    def __init__(self, ds: xr.Dataset):
        self.cls = type(ds)
        self.variables = tuple((name, ds[name].dims, dict(ds[name].attrs))
                               for name in sorted(ds.data_vars, key=str))
        self.coords = _coordinates(ds.coords)
        self.attrs = dict(ds.attrs)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, DatasetLabels) and self.cls is other.cls
                and _same_value(self.variables, other.variables)
                and _same_value(self.attrs, other.attrs)
                and _same_coords(self.coords, other.coords))

    def __hash__(self) -> int:
        return hash((self.cls, tuple(name for name, _, _ in self.variables)))

    def __repr__(self) -> str:
        kind = "" if self.cls is xr.Dataset else f"cls={self.cls.__name__}, "
        names = [name for name, _, _ in self.variables]
        return f"DatasetLabels({kind}data_vars={names!r}, coords={list(self.coords)!r})"

    def build(self, children) -> xr.Dataset:
        data_vars = {}
        for (name, dims, attrs), data in zip(self.variables, children):
            data = _as_data(data, f"data variable {name!r} of dims {dims}")
            data_vars[name] = xr.Variable(dims, data, dict(attrs), fastpath=True)
        return self.cls(data_vars, coords=self.coords, attrs=dict(self.attrs))


def _flatten_dataarray(da: xr.DataArray) -> tuple[list[Any], DataArrayLabels]:
    return [da.variable._data], DataArrayLabels(da)


def _flatten_dataset(ds: xr.Dataset) -> tuple[list[Any], DatasetLabels]:
    labels = DatasetLabels(ds)
    return [ds[name].variable._data for name, _, _ in labels.variables], labels


register_pytree_node(xr.DataArray, flatten_fn=_flatten_dataarray,
                     unflatten_fn=lambda labels, children: labels.build(children[0]),
                     include_subclasses=True)
register_pytree_node(xr.Dataset, flatten_fn=_flatten_dataset,
                     unflatten_fn=lambda labels, children: labels.build(children),
                     include_subclasses=True)

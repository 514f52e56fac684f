"""Every example in Advect's docstrings runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import advect

MODULES = sorted(
    info.name for info in pkgutil.walk_packages(advect.__path__, prefix="advect.")
    if not info.name.split(".")[-1].startswith("__")
)


# integrations that import their framework only when called: their examples need it
LAZY_DEPENDENCIES = {"advect.dask": ("dask", "distributed")}


def _importable(name):
    for dependency in LAZY_DEPENDENCIES.get(name, ()):
        pytest.importorskip(dependency)
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # an optional integration whose dependency is missing
        pytest.skip(f"{name} needs an optional dependency: {exc}")


@pytest.mark.parametrize("name", ["advect", *MODULES])
def test_docstring_examples_run(name):
    module = _importable(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"

"""advect.support_catalog(): every row it claims is proven by a real invocation.

Differentiable rows pass check_grads (finite differences and the adjoint identity, second order,
forward and reverse); staged rows stage and agree with the dynamic result; dynamic-only rows
refuse to stage with TracingError. The committed page docs/compatibility/numpy.md must match
the catalog.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

import advect as ad
from advect._compat import NUMPY_VERSION
from advect.catalog import catalog_counts, catalog_markdown, support_catalog
from advect.pytree import tree_leaves
from advect.testing import check_grads
from catalog_samples import function_sample, method_sample, traced_call
from ufunc_samples import method_call, ufunc_args

ROWS = support_catalog()
PAGE = Path(__file__).parent.parent / "docs" / "compatibility" / "numpy.md"


def _rows(category, **flags):
    return [r for r in ROWS if r.category == category
            and all(getattr(r, k) == v for k, v in flags.items())]


def _sample(row):
    if row.category in ("ufunc", "scipy.special ufunc"):
        return row.target, ufunc_args(row.target)
    if row.category == "ufunc method":
        return method_call(*row.target)
    if row.category == "function":
        return function_sample(row)
    return method_sample(row)


def _inexact(x):
    return isinstance(x, np.ndarray) and x.dtype.kind in "fc"


def _check_derivatives(row, order=2):
    f, args = _sample(row)
    diff = [i for i, a in enumerate(args) if _inexact(a)]
    assert diff, f"{row.name}: the sample has no floating-point argument to differentiate"

    def partial(*xs):
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        return f(*full)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
        out = partial(*(args[i] for i in diff))
        assert any(np.asarray(o).dtype.kind in "fc" for o in tree_leaves(out)), (
            f"{row.name} is claimed differentiable but its sample returns no floating-point "
            "result; mark it nondiff=True or give it a sample")
        check_grads(partial, [args[i] for i in diff], order=order)


def test_catalog_rows_are_unique_and_cover_numpy():
    names = [r.name for r in ROWS]
    assert len(names) == len(set(names))
    counts = catalog_counts(ROWS)
    numpy_ufuncs = {v for v in vars(np).values() if isinstance(v, np.ufunc)}
    assert counts["ufunc"]["rows"] == counts["ufunc"]["dynamic"] == len(numpy_ufuncs) >= 88
    assert counts["ufunc method"]["rows"] == counts["ufunc method"]["dynamic"]
    assert counts["ufunc method"]["rows"] >= 230
    assert counts["function"]["dynamic"] >= 200
    assert counts["ndarray method"]["dynamic"] >= 40


def test_catalog_reads_the_tables_at_call_time():
    from advect.numpy import _functions

    fake = object()
    _functions.FUNCTIONS[np.busday_count] = fake
    try:
        row = next(r for r in support_catalog() if r.name == "numpy.busday_count")
        assert row.dynamic
    finally:
        if _functions.FUNCTIONS.get(np.busday_count) is fake:
            del _functions.FUNCTIONS[np.busday_count]
    row = next(r for r in support_catalog() if r.name == "numpy.busday_count")
    assert not row.dynamic


def _table_rows(page: str) -> dict:
    return {line.split(" | ")[0]: line for line in page.splitlines() if line.startswith("| `")}


def test_the_committed_page_is_up_to_date():
    pytest.importorskip("scipy")  # the page lists the scipy.special rows
    page, live = PAGE.read_text(), catalog_markdown()
    stale = ("docs/compatibility/numpy.md is stale: regenerate it with "
             "`python -m advect.catalog > docs/compatibility/numpy.md`")
    described = re.search(r"Describes NumPy (\d+\.\d+)", page).group(1)
    if described == ".".join(map(str, NUMPY_VERSION)):
        assert page == live, stale
        return
    # another NumPy release: the functions both releases have keep their rows
    page_rows, live_rows = _table_rows(page), _table_rows(live)
    differing = [name for name in page_rows.keys() & live_rows.keys()
                 if page_rows[name] != live_rows[name]]
    assert not differing, f"{stale} (rows that differ: {differing[:10]})"


# --- every claimed row, proven -----------------------------------------------------------------

@pytest.mark.parametrize("row", _rows("ufunc", differentiable=True), ids=lambda r: r.name)
def test_differentiable_ufunc(row):
    _check_derivatives(row)


@pytest.mark.parametrize("row", _rows("ufunc method", differentiable=True), ids=lambda r: r.name)
def test_differentiable_ufunc_method(row):
    _check_derivatives(row)


@pytest.mark.parametrize("row", _rows("scipy.special ufunc", differentiable=True),
                         ids=lambda r: r.name)
def test_differentiable_scipy_ufunc(row):
    _check_derivatives(row)


@pytest.mark.parametrize("row", _rows("function", differentiable=True), ids=lambda r: r.name)
def test_differentiable_function(row):
    _check_derivatives(row, order=2 if row.staged else 1)


@pytest.mark.parametrize("row", _rows("ndarray method", differentiable=True), ids=lambda r: r.name)
def test_differentiable_ndarray_method(row):
    _check_derivatives(row)


def _same(a, b):
    for x, y in zip(tree_leaves(a), tree_leaves(b), strict=True):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=1e-10, atol=1e-12,
                                   equal_nan=True)


# Array API rows are proven function by function, per revision, in tests/test_array_api.py
NUMPY_ROWS = [r for r in ROWS if r.category != "array api"]
STAGED = [r for r in NUMPY_ROWS if r.staged]


@pytest.mark.parametrize("row", STAGED, ids=lambda r: r.name)
def test_staged_row_matches_dynamic(row):
    f, args = _sample(row)
    if any(np.asarray(a).dtype.kind == "M" for a in args):
        pytest.skip("datetime inputs are not a staged dtype")
    with np.errstate(all="ignore"):
        if row.category == "ufunc method":
            try:
                f(*args)
            except (TypeError, ValueError):
                pytest.skip("NumPy itself refuses this sample's dtypes")
        _same(ad.stage(f, *args)(*args), traced_call(f, args))


@pytest.mark.parametrize("row", [r for r in NUMPY_ROWS if r.dynamic and not r.staged],
                         ids=lambda r: r.name)
def test_dynamic_only_row_stages_only_with_constant_data(row):
    # the sample's data-dependent argument may be a constant (a mask, indices): then staging
    # works and must agree; otherwise it must refuse with TracingError, never guess
    f, args = _sample(row)
    try:
        program = ad.stage(f, *args)
    except ad.TracingError:
        return
    _same(program(*args), f(*args))


def test_unsupported_rows_raise_a_named_error():
    missing = [r for r in _rows("function", dynamic=False) if r.target is np.busday_count]
    assert missing
    with pytest.raises(ad.TracingError, match="busday_count"):
        ad.grad(lambda x: np.sum(np.busday_count(x, x)))(np.ones(2))

"""Advect follows the installed NumPy release (2.0 to 2.5): what it lacks is not translated, and
where releases differ (removed aliases, 2-element np.cross, np.clip's bounds) Advect does what
this release does. CI runs these on NumPy 2.0 and on the newest NumPy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import advect as ad
from advect._compat import NUMPY_VERSION, present, provider_function
from advect.catalog import support_catalog
from advect.numpy._functions import FUNCTIONS, WITHOUT_TRANSLATION
from advect.numpy._ufuncs import UFUNCS

VERSIONED = ("unstack", "cumulative_sum", "cumulative_prod", "matvec", "vecmat", "row_stack",
             "in1d", "trapz")


def test_the_supported_range():
    assert (2, 0) <= NUMPY_VERSION < (3, 0)


@pytest.mark.parametrize("name", VERSIONED)
def test_a_function_is_translated_exactly_when_this_numpy_has_it(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        function = getattr(np, name, None)
    tables = set(FUNCTIONS) | set(UFUNCS) | set(WITHOUT_TRANSLATION)
    if function is None:
        assert present(np, name) == ()
        assert f"numpy.{name}" not in {row.name for row in support_catalog()}
    elif name not in ("in1d", "trapz"):  # deprecated in 2.0, removed in 2.4: never translated
        assert function in tables


def test_every_catalog_row_names_something_this_numpy_has():
    for row in support_catalog():
        if row.category in ("function", "ufunc") and row.name.startswith("numpy."):
            module, _, name = row.name.rpartition(".")
            owner = np
            for part in module.split(".")[1:]:
                owner = getattr(owner, part)
            assert present(owner, name), row.name


def test_scans_run_on_every_numpy():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(provider_function(np, "cumulative_sum")(x, axis=0), [1, 3, 6])
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(np.cumsum(x) * x))(x),
                               [1 + 2 + 3 + 1, 2 + 3 + 3, 3 + 3 + 3])


def test_cross_of_2_vectors_follows_numpy():
    a, b = np.array([1.0, 2.0]), np.array([3.0, 5.0])
    f = lambda a: np.cross(a, b)  # noqa: E731
    if NUMPY_VERSION >= (2, 5):
        for call in (lambda: f(a), lambda: ad.grad(f)(a), lambda: ad.stage(f, a)):
            with pytest.raises(ValueError):
                call()
    else:
        with pytest.warns(DeprecationWarning):
            expected = f(a)
        with pytest.warns(DeprecationWarning):
            assert ad.stage(f, a)(a) == expected
        with pytest.warns(DeprecationWarning):
            np.testing.assert_allclose(ad.grad(f)(a), [b[1], -b[0]])


def test_clip_bounds_follow_numpy():
    x = np.array([-1.0, 0.5, 2.0])
    if NUMPY_VERSION >= (2, 1):
        np.testing.assert_allclose(ad.grad(lambda x: np.sum(np.clip(x, min=0.0) ** 2))(x),
                                   [0.0, 1.0, 4.0])
        np.testing.assert_allclose(ad.grad(lambda x: np.sum(np.clip(x, None, None)))(x), 1.0)
    else:
        with pytest.raises(TypeError):
            ad.grad(lambda x: np.sum(np.clip(x, min=0.0)))(x)
        with pytest.raises(ValueError):
            ad.grad(lambda x: np.sum(np.clip(x, None, None)))(x)


def test_the_compatibility_page_names_the_numpy_it_describes():
    from advect.catalog import catalog_markdown

    assert f"Describes NumPy {NUMPY_VERSION[0]}.{NUMPY_VERSION[1]}" in catalog_markdown()

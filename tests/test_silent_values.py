"""Values that used to come out silently wrong, each checked against NumPy (issue 10, item 5).

Every test compares with an answer Advect did not compute: NumPy's own result, or central
differences of NumPy's function.
"""

import warnings

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

X = np.array([-1.0, 0.5, 2.0, 3.0])


def _central(f, x, h=1e-6):
    """Central differences of NumPy's ``f`` at ``x``, one coordinate at a time (elementwise)."""
    return (f(x + h) - f(x - h)) / (2 * h)


# --- np.piecewise --------------------------------------------------------------------------

def test_piecewise_calls_each_branch_with_its_elements_only():
    seen = []

    def centred(v):
        seen.append(v.copy() if isinstance(v, np.ndarray) else v.shape)
        return v - v.mean()  # not elementwise: the result depends on which elements come in

    f = lambda x: np.piecewise(x, [x < 1, x >= 1], [centred, lambda v: 3 * v])  # noqa: E731
    expected = f(X)
    assert seen[0].shape == (2,)
    seen.clear()
    value, gradient = ad.value_and_grad(lambda x: np.sum(f(x) ** 2))(X)
    assert seen == [(2,)]  # the traced branch saw the two selected elements, no more
    np.testing.assert_allclose(value, np.sum(expected ** 2))
    grad_fd = [(np.sum(f(X + h * e) ** 2) - np.sum(f(X - h * e) ** 2)) / (2 * h)
               for h in [1e-6] for e in np.eye(4)]
    np.testing.assert_allclose(gradient, grad_fd, rtol=1e-6)


def test_piecewise_never_evaluates_a_branch_outside_its_piece():
    f = lambda x: np.piecewise(x, [x > 0], [np.log, 0.0])  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log of a negative number would warn
        np.testing.assert_allclose(ad.grad(lambda x: np.sum(f(x)))(X), [0, 2, 0.5, 1 / 3])


def test_piecewise_keeps_numpy_dtype_and_otherwise_branch():
    b = np.array([True, False, True])
    assert np.piecewise(b, [b], [lambda v: v ** 2]).dtype == np.bool_
    f = lambda x: np.piecewise(x, [x < 0, x > 2], [-1, lambda v: v, lambda v: v / 2])  # noqa
    np.testing.assert_allclose(ad.jvp(f)(X, tangents=np.ones(4))[0], f(X))
    np.testing.assert_allclose(ad.jvp(f)(X, tangents=np.ones(4))[1], [0, 0.5, 0.5, 1])


def test_piecewise_stages_only_with_constant_conditions():
    mask = np.array([True, False, False, True])
    program = ad.stage(lambda x: np.piecewise(x, [mask], [np.sin, np.cos]), X)
    np.testing.assert_allclose(program(X), np.piecewise(X, [mask], [np.sin, np.cos]))
    with pytest.raises(ad.TracingError, match="piecewise"):
        ad.stage(lambda x: np.piecewise(x, [x > 0], [np.sin, np.cos]), X)


# --- np.clip(out=, where=) -----------------------------------------------------------------

def _clip_into_buffer(x, mask):
    buf = np.full_like(x, 7.0)
    np.clip(x * 1.5, 0.0, 2.0, out=buf, where=mask)
    return buf


def test_clip_with_where_keeps_the_masked_off_entries_of_out():
    x = np.array([-1.0, 0.5, 1.0, 3.0, 0.2])
    mask = np.array([True, False, True, False, True])
    expected = _clip_into_buffer(x, mask)
    np.testing.assert_allclose(expected, [0.0, 7.0, 1.5, 7.0, 0.3])
    f = lambda x: _clip_into_buffer(x, mask)  # noqa: E731
    np.testing.assert_allclose(ad.stage(f, x)(x), expected)
    np.testing.assert_allclose(ad.jvp(f)(x, tangents=np.ones(5))[0], expected)
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(f(x)))(x), [0, 0, 1.5, 0, 1.5])


def test_clip_honours_dtype():
    program = ad.stage(lambda x: np.clip(x, 0, 1, dtype=np.float32), X)
    assert program.output_specs.dtype == np.clip(X, 0, 1, dtype=np.float32).dtype


# --- np.nanvar / np.nanstd -------------------------------------------------------------------

A = np.array([[1.0, np.nan, 3.0, 4.5], [2.0, 2.5, np.nan, -1.0], [0.3, 0.1, 0.2, 0.9]])
WHERE = np.array([[True, True, False, True], [True, False, True, True],
                  [False, True, True, True]])
MEAN = np.nanmean(np.where(WHERE, A, np.nan), axis=1, keepdims=True)


@pytest.mark.parametrize("kwargs", [
    {"axis": 1, "where": WHERE}, {"axis": 1, "mean": MEAN}, {"axis": 1, "correction": 1},
    {"axis": 1, "where": WHERE, "mean": MEAN, "correction": 1},
    {"axis": 0, "ddof": 1, "keepdims": True}], ids=["where", "mean", "correction", "all",
                                                    "ddof"])
@pytest.mark.parametrize("function", [np.nanvar, np.nanstd], ids=lambda f: f.__name__)
def test_nanvar_and_nanstd_keywords_match_numpy(function, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = function(A, **kwargs)
        f = lambda a: function(a, **kwargs)  # noqa: E731
        np.testing.assert_allclose(ad.stage(f, A)(A), expected, equal_nan=True)
        np.testing.assert_allclose(ad.jvp(f)(A, tangents=np.ones_like(A))[0], expected,
                                   equal_nan=True)


def test_var_refuses_ddof_with_correction_as_numpy_does():
    with pytest.raises(ValueError):
        np.var(X, ddof=1, correction=1)
    with pytest.raises(ValueError, match="correction"):
        ad.grad(lambda x: np.var(x, ddof=1, correction=1))(X)


# --- np.full_like --------------------------------------------------------------------------

@pytest.mark.parametrize("f", [
    lambda a: np.full_like(a, 2.5, dtype=np.int32, order="C", subok=False, shape=(3, 2),
                           device="cpu"),
    lambda a: np.full_like(a, a[0, 1] * 1.5, dtype=np.float32, order="C", subok=True,
                           shape=(3,), device="cpu"),
    lambda a: np.full_like(a, a[0, 1] * 1.5, np.int16),
    lambda a: np.full_like(a.astype(np.int32), a[0, 1] * 1.5),
], ids=["constant", "traced-float32", "traced-int16", "traced-like-int32"])
def test_full_like_honours_dtype_with_every_keyword(f):
    a = np.arange(6.0).reshape(2, 3) + 0.25
    expected = f(a)
    got = ad.stage(f, a)(a)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
    assert ad.jvp(f)(a, tangents=np.ones_like(a))[0].dtype == expected.dtype


# --- np.nan_to_num(copy=False) -------------------------------------------------------------

def _clean_in_place(x):
    y = x * 2.0
    np.nan_to_num(y, copy=False, posinf=5.0, neginf=-5.0)
    return y


def test_nan_to_num_without_copy_updates_an_owned_array():
    x = np.array([1.0, np.inf, 2.0, -np.inf, np.nan])
    expected = _clean_in_place(x)
    np.testing.assert_array_equal(expected, [2.0, 5.0, 4.0, -5.0, 0.0])
    np.testing.assert_array_equal(ad.stage(_clean_in_place, x)(x), expected)
    np.testing.assert_array_equal(ad.grad(lambda x: np.sum(_clean_in_place(x)))(x),
                                  [2, 0, 2, 0, 0])


def test_nan_to_num_without_copy_refuses_to_write_an_input():
    with pytest.raises(ad.MutationError, match="nan_to_num"):
        ad.grad(lambda x: np.sum(np.nan_to_num(x, copy=False)))(X)


# --- np.polyder ----------------------------------------------------------------------------

@pytest.mark.parametrize("p, m", [([3.0], 1), ([3.0], 2), ([1.0, 3.0], 2), ([2.0, 1.0, 3.0], 1),
                                  ([2.0, 1.0, 3.0, 0.5], 2)])
def test_polyder_matches_numpy_including_empty_results(p, m):
    p = np.array(p)
    expected = np.polyder(p, m)
    got = ad.stage(lambda p: np.polyder(p, m), p)(p)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    assert ad.jvp(lambda p: np.polyder(p, m))(p, tangents=np.ones_like(p))[1].shape == \
        expected.shape


# --- numpy.emath on the branch cut ---------------------------------------------------------

CUT = np.array([2.0, -2.0, 1.5, -1.5, 3.0, 0.5])


@pytest.mark.parametrize("function", [np.emath.arccos, np.emath.arcsin],
                         ids=lambda f: f.__name__)
def test_emath_inverse_trig_derivatives_follow_numpy_side_of_the_cut(function):
    expected = _central(function, CUT)  # NumPy's values at x +- h, on the side it chose
    _, tangent = ad.jvp(function)(CUT, tangents=np.ones_like(CUT))
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)
    for part in (np.real, np.imag):
        np.testing.assert_allclose(ad.grad(lambda x, part=part: np.sum(part(function(x))))(CUT),
                                   part(expected), rtol=1e-6, atol=1e-9)


def test_complex_inverse_trig_derivatives_stay_holomorphic():
    z = np.array([0.3 + 0.2j, -1.7 + 0.4j, 2.0 - 0.5j])
    check_grads(np.arcsin, [z], order=2)
    check_grads(np.arccos, [z], order=2)
    check_grads(np.arccos, [np.array([0.3, -0.5, 0.95])], order=2)


# --- zero tangents where NumPy's value is a constant NaN -----------------------------------

@pytest.mark.parametrize("num, endpoint", [(0, True), (0, False), (1, True)])
def test_linspace_without_a_step_has_zero_tangents(num, endpoint):
    f = lambda a: np.linspace(a, 2.0, num, endpoint=endpoint, retstep=True)  # noqa: E731
    (y, step), (dy, dstep) = ad.jvp(f)(np.array(1.0), tangents=np.array(1.0))
    expected_y, expected_step = f(1.0)
    np.testing.assert_array_equal(y, expected_y)
    np.testing.assert_array_equal(step, expected_step)
    assert np.all(np.isfinite(dstep)) and np.all(dstep == 0)
    np.testing.assert_array_equal(dy, np.ones(num))  # each sample moves with the start
    assert ad.grad(lambda a: np.sum(np.linspace(a, 2.0, 0)))(1.0) == 0.0


@pytest.mark.parametrize("function", [np.nanquantile, np.nanpercentile, np.nanmedian],
                         ids=lambda f: f.__name__)
def test_nanquantile_of_an_all_nan_row_has_zero_tangent(function):
    x = np.array([[np.nan, np.nan, np.nan], [1.0, 2.0, 3.0]])
    q = {np.nanquantile: (0.3,), np.nanpercentile: (30,), np.nanmedian: ()}[function]
    f = lambda a: function(a, *q, axis=1)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = f(x)
        value, tangent = ad.jvp(f)(x, tangents=np.ones_like(x))
        staged = ad.stage(f, x)(x)
    np.testing.assert_allclose(value, expected, equal_nan=True)
    np.testing.assert_allclose(staged, expected, equal_nan=True)
    np.testing.assert_array_equal(tangent, [0.0, 1.0])


# --- found by the dtype sweep --------------------------------------------------------------

@pytest.mark.parametrize("start, stop", [(1.0, -10.0), (-2.0, -50.0), (1 + 1j, 10 + 10j),
                                         (-1 + 0.5j, 3 - 2j)])
def test_geomspace_follows_numpy_for_negative_and_complex_endpoints(start, stop):
    a, b = np.array(start), np.array(stop)
    f = lambda a, b: np.geomspace(a, b, 4)  # noqa: E731
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = f(a, b)
        got = ad.stage(f, a, b)(a, b)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)


def test_geomspace_refuses_a_zero_endpoint_in_dynamic_transforms():
    with pytest.raises(ValueError, match="zero"):
        ad.grad(lambda a: np.sum(np.geomspace(a, 2.0, 3)))(0.0)


def test_polymul_drops_leading_zeros_as_numpy_does():
    a, b = np.array([0.0, 0.0, 1.5, 2.0]), np.array([0.0, 3.0])
    value, tangent = ad.jvp(np.polymul, (0, 1))(a, b, tangents=(np.ones(4), np.ones(2)))
    np.testing.assert_allclose(value, np.polymul(a, b))
    np.testing.assert_allclose(tangent, np.polymul([1.0, 1.0], [3.0]) + np.polymul([1.5, 2.0],
                                                                                    [1.0]))
    with pytest.raises(ad.TracingError, match="polymul"):
        ad.stage(np.polymul, a, b)

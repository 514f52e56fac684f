"""Rows for NumPy's indexing, sorting, searching, set and statistics functions on traced
arrays (see test_numpy_functions.py for the harness)."""

from __future__ import annotations

import numpy as np
import pytest

from test_numpy_functions import CHOICES, X3, XN, C, V, W, X, _copy_then, run_grads, run_value

IDX = np.argsort(-X, axis=1)
ROUNDED = np.array([[1.0, 2.0, 2.0, 0.0], [3.0, 1.0, 0.0, 2.0], [2.0, 5.0, 1.0, 1.0]])
SAMPLE = np.random.default_rng(3).normal(size=(20, 3)) * 0.8 + 0.013

CASES = [
    # --- take, choose, compress, select ---------------------------------------------------
    C("take", lambda x: np.take(x, [0, 2, -1], axis=1), X),
    C("take_flat", lambda x: np.take(x, [[5, 0], [11, 3]]), X),
    C("take_wrap", lambda x: np.take(x, [7, 20], axis=1, mode="wrap"), X),
    C("take_clip", lambda x: np.take(x, [-3, 1, 9]), X, mode="clip"),
    C("take_along_axis", lambda x: np.take_along_axis(x, IDX, 1), X),
    C("take_along_axis_flat", lambda x: np.take_along_axis(x, np.array([3, 0, 7]), None), X),
    C("put_along_axis", _copy_then(lambda y, v: np.put_along_axis(y, IDX[:, :1], v[:3, None],
                                                                   1)), X, V),
    C("choose", lambda x: np.choose(np.array([[0, 1, 1, 0]]), [x[0], x[1] * 2]), X),
    C("choose_clip", lambda x: np.choose(CHOICES, [x[0], x[1], x[2]], mode="clip"), X),
    C("compress", lambda x: np.compress([True, False, True], x, axis=0), X),
    C("compress_traced", lambda x: np.compress(x[0] > 1.5, x, axis=1), X),
    C("extract", lambda x: np.extract(x > 1.6, x), X),
    C("select", lambda x: np.select([x < 1.2, x > 2.6], [x, x ** 2], 0.5), X),
    C("piecewise", lambda x: np.piecewise(x, [x < 1.2, x > 2.6], [np.sin, lambda v: v ** 2, 7.0]),
      X),
    C("where", lambda x: np.where(x > 1.6, x, -x), X),
    C("where_nonzero", lambda x: np.where(x > 2.6), X, grad=False),
    # --- diagonals and triangles -------------------------------------------------------------
    C("diagonal", lambda x: np.diagonal(x, 1), X),
    C("diagonal_axes", lambda x3: np.diagonal(x3, -1, 2, 1), X3),
    C("trace", lambda x: np.trace(x, -1), X),
    C("diag_vector", lambda v: np.diag(v, 1), V),
    C("diag_matrix", lambda x: np.diag(x, -1), X),
    C("diagflat", lambda x: np.diagflat(x[:2, :2], -2), X),
    C("tril", lambda x: np.tril(x, 1), X),
    C("triu", lambda x3: np.triu(x3, -1), X3),
    C("fill_diagonal", _copy_then(lambda y, w: np.fill_diagonal(y, w[:2])), X, W),
    C("fill_diagonal_wrap", _copy_then(lambda y: np.fill_diagonal(y, 9.0, wrap=True)),
      np.concatenate([X, X, X], 0)),
    C("diag_indices_from", lambda x: np.diag_indices_from(x[:, :3]), X, grad=False),
    C("tril_indices_from", lambda x: np.tril_indices_from(x, 1), X, grad=False),
    C("triu_indices_from", lambda x: np.triu_indices_from(x, -1), X, grad=False),
    # --- writing functions -------------------------------------------------------------------
    C("put", _copy_then(lambda y, w: np.put(y, [0, 5, 7], w)), X, W),
    C("put_wrap", _copy_then(lambda y, w: np.put(y, [13, -1], w[:2], mode="wrap")), X, W),
    C("putmask", _copy_then(lambda y, w: np.putmask(y, y > 2.0, w)), X, W),
    C("place", _copy_then(lambda y, w: np.place(y, y < 1.2, w[:2])), X, W),
    C("copyto", _copy_then(lambda y, v: np.copyto(y, v[:4], where=y > 1.7)), X, V),
    # --- index queries and conversions ---------------------------------------------------------
    C("nonzero", lambda x: np.nonzero(x > 2.0), X, grad=False),
    C("flatnonzero", lambda x: np.flatnonzero(x > 2.0), X, grad=False),
    C("argwhere", lambda x: np.argwhere(x < 1.0), X, grad=False),
    C("ravel_multi_index", lambda x: np.ravel_multi_index(
        (np.argmax(x, 0), np.array([3, 0, 1, 2])), (3, 4)), X, grad=False),
    C("unravel_index", lambda x: np.unravel_index(np.argmax(x, 1), (2, 2)), X, grad=False),
    C("ix", lambda x: x[np.ix_([0, 2], x[0] > 1.5)], X),
    C("apply_along_axis", lambda x: np.apply_along_axis(lambda v: v[:2] * v[1], 1, x), X),
    C("apply_along_axis_scalar", lambda x: np.apply_along_axis(np.sum, 0, x), X),
    C("apply_over_axes", lambda x3: np.apply_over_axes(np.sum, x3, [0, 2]), X3),
    # --- sorting and searching ------------------------------------------------------------------
    C("sort", lambda x: np.sort(x), X),
    C("sort_axis0_stable", lambda x: np.sort(x, axis=0, kind="stable"), X),
    C("sort_flat", lambda x: np.sort(x, axis=None), X),
    C("argsort", lambda x: np.argsort(x, axis=0), X, grad=False),
    C("sort_complex", lambda v: np.sort_complex(v), V),
    C("partition", lambda x: np.partition(x, 2, axis=1), X),
    C("argpartition", lambda x: np.argpartition(x, (0, 2), axis=1), X, grad=False),
    C("lexsort", lambda x: np.lexsort((x[0], np.array([1, 0, 1, 0]))), X, grad=False),
    C("argmax", lambda x: np.argmax(x, 1, keepdims=True), X, grad=False),
    C("argmin", lambda x: np.argmin(x), X, grad=False),
    C("searchsorted", lambda v, x: np.searchsorted(np.sort(v), x), V, X, grad=False),
    C("searchsorted_sorter", lambda v, x: np.searchsorted(v, x[0], "right", np.argsort(v)), V, X,
      grad=False),
    C("digitize", lambda x: np.digitize(x, [0.5, 1.0, 2.0]), X, grad=False),
    C("digitize_decreasing", lambda x: np.digitize(x, [3.0, 1.0, 0.5], right=True), X,
      grad=False),
    C("isin", lambda x, r: np.isin(r, x[0].round()), X, ROUNDED, grad=False),
    C("isin_invert", lambda r: np.isin(r, [1.0, 2.0], invert=True), ROUNDED, grad=False),
    # --- unique and sets (dynamic only; values stay differentiable) ---------------------------
    C("unique", lambda r: np.unique(r, return_index=True, return_inverse=True,
                                    return_counts=True), ROUNDED, grad=False),
    C("unique_distinct", lambda x: np.unique(x, return_counts=True), X),
    C("unique_axis", lambda r: np.unique(r[:, :2], axis=0), ROUNDED, grad=False),
    C("unique_values", lambda r: np.unique_values(r), ROUNDED, grad=False),
    C("unique_counts", lambda r: np.unique_counts(r), ROUNDED, grad=False),
    C("unique_inverse", lambda r: np.unique_inverse(r), ROUNDED, grad=False),
    C("unique_all", lambda r: np.unique_all(r), ROUNDED, grad=False),
    C("unique_values_distinct", lambda x: np.unique_values(x[1:]), X),
    C("union1d", lambda r: np.union1d(r[0], r[1]), ROUNDED, grad=False),
    C("union1d_distinct", lambda x: np.union1d(x[0], x[1]), X),
    C("intersect1d", lambda r: np.intersect1d(r[0], r[2], return_indices=True), ROUNDED,
      grad=False),
    C("intersect1d_traced", lambda x: np.intersect1d(x[0], np.concatenate([x[0, 1:3], x[1]])), X),
    C("setdiff1d", lambda r: np.setdiff1d(r[0], r[1]), ROUNDED, grad=False),
    C("setdiff1d_traced", lambda x: np.setdiff1d(x[0], x[0, 1:3]), X),
    C("setxor1d", lambda r: np.setxor1d(r[0], r[1]), ROUNDED, grad=False),
    C("setxor1d_traced", lambda x: np.setxor1d(x[0], np.concatenate([x[0, :2], x[1]])), X),
    # --- reductions --------------------------------------------------------------------------
    C("sum_where", lambda x: np.sum(x, axis=1, where=x > 1.2), X),
    C("sum_initial", lambda x: np.sum(x, initial=2.0, keepdims=True), X),
    C("prod", lambda x: np.prod(x, axis=0, where=x < 2.6), X),
    C("max_where", lambda x: np.max(x, axis=1, where=x < 2.6, initial=-1.0), X),
    C("amax", lambda x: np.amax(x, axis=0), X),
    C("min", lambda x: np.min(x, axis=(0, 1)), X),
    C("amin", lambda x: np.amin(x, axis=1, keepdims=True), X),
    C("mean_where", lambda x: np.mean(x, axis=1, where=x > 1.2), X),
    C("var_where", lambda x: np.var(x, axis=0, ddof=1, where=x > 0.5), X),
    C("std", lambda x: np.std(x, axis=1, keepdims=True), X),
    C("average", lambda x: np.average(x), X),
    C("average_weights", lambda x: np.average(x, 1, np.array([1.0, 2.0, 3.0, 4.0]),
                                              returned=True), X),
    C("average_traced_weights", lambda x: np.average(x, 0, x ** 2, keepdims=True), X),
    C("ptp", lambda x: np.ptp(x, axis=1), X),
    C("all", lambda x: np.all(x > 0.5, axis=0), X, grad=False),
    C("any", lambda x: np.any(x > 3.0, where=x < 3.2), X, grad=False),
    C("count_nonzero", lambda x: np.count_nonzero(x > 1.6, axis=1), X, grad=False),
    C("cumsum", lambda x: np.cumsum(x, axis=1), X),
    C("cumprod", lambda x: np.cumprod(x, axis=1), X),
    C("cumprod_flat_zero", lambda x: np.cumprod(x * np.array([1.0, 0.0, 1.0, 1.0])), X),
    *([C("cumulative_sum", lambda x: np.cumulative_sum(x, axis=1, include_initial=True), X),
       C("cumulative_prod", lambda v: np.cumulative_prod(v, include_initial=True), V)]
      if hasattr(np, "cumulative_sum") else []),  # NumPy 2.1+
    C("diff", lambda x: np.diff(x, 2, axis=1), X),
    C("diff_pre_append", lambda x: np.diff(x, axis=0, prepend=0.5, append=x[:1]), X),
    C("ediff1d", lambda x: np.ediff1d(x, to_begin=[1.0, 2.0], to_end=9.0), X),
    C("gradient", lambda x: np.gradient(x), X),
    C("gradient_spacing", lambda x: np.gradient(x, 0.5, axis=1, edge_order=2), X),
    C("gradient_coordinates", lambda x: np.gradient(
        x, np.array([0.0, 1.0, 3.0]), np.array([0.0, 0.5, 1.5, 2.0]), edge_order=2), X),
    C("gradient_traced_coordinates", lambda x, v: np.gradient(x[0], np.sort(v)[:4]), X, V),
    C("trapezoid", lambda x: np.trapezoid(x), X),
    C("trapezoid_x", lambda x: np.trapezoid(x, np.array([0.0, 1.0, 3.0]), axis=0), X),
    C("cov", lambda x: np.cov(x), X),
    C("cov_columns", lambda x: np.cov(x, rowvar=False, ddof=0), X),
    C("cov_weights", lambda x: np.cov(x[0], x[1], aweights=np.array([1.0, 2.0, 3.0, 4.0]),
                                      fweights=np.array([1, 2, 1, 1])), X),
    C("corrcoef", lambda x: np.corrcoef(x), X),
    C("corrcoef_pair", lambda x: np.corrcoef(x[0], x[2]), X),
    # --- NaN-ignoring ----------------------------------------------------------------------------
    C("nansum", lambda x: np.nansum(x, 1), XN),
    C("nanprod", lambda x: np.nanprod(x, 0), XN),
    C("nanmax", lambda x: np.nanmax(x, 1), XN),
    C("nanmin", lambda x: np.nanmin(x), XN),
    C("nanargmax", lambda x: np.nanargmax(x, 1), XN, grad=False),
    C("nanargmin", lambda x: np.nanargmin(x, 0), XN, grad=False),
    C("nanmean", lambda x: np.nanmean(x, 1), XN),
    C("nanvar", lambda x: np.nanvar(x, 0, ddof=1), XN),
    C("nanstd", lambda x: np.nanstd(x), XN),
    C("nancumsum", lambda x: np.nancumsum(x, 1), XN),
    C("nancumprod", lambda x: np.nancumprod(x), XN),
    C("nanmedian", lambda x: np.nanmedian(x, 1), XN),
    C("nanquantile", lambda x: np.nanquantile(x, [0.1, 0.7], 0), XN),
    C("nanpercentile", lambda x: np.nanpercentile(x, 50, keepdims=True), XN),
    # --- order statistics ------------------------------------------------------------------------
    C("median", lambda x: np.median(x), X),
    C("median_axis", lambda x: np.median(x, 0, keepdims=True), X),
    C("median_nan", lambda x: np.median(x, 1), XN, grad=False),  # NaN rows: no derivative
    C("median_empty", lambda x: np.median(x[:, :0], axis=1, keepdims=True), X, grad=False),
    C("quantile", lambda x: np.quantile(x, [0.2, 0.9], axis=1), X),
    C("quantile_traced_q", lambda x, w: np.quantile(x[0], np.abs(w) / 2), X, W),
    C("percentile", lambda x: np.percentile(x, 30, axis=(0, 1), keepdims=True), X),
    *[C(f"quantile_{m}", lambda x, m=m: np.quantile(x, [0.0, 0.25, 0.5, 0.63, 1.0], axis=0,
                                                     method=m), X)
      for m in ("linear", "lower", "higher", "nearest", "midpoint", "hazen", "weibull",
                "median_unbiased", "normal_unbiased", "interpolated_inverted_cdf")],
    # --- histograms ------------------------------------------------------------------------------
    C("histogram", lambda x: np.histogram(x), X, grad=False),
    C("histogram_weights", lambda x: np.histogram(x, 4, range=(0.0, 4.0), weights=x ** 2), X),
    C("histogram_density", lambda x: np.histogram(x, np.array([0.0, 0.5, 1.1, 3.6]),
                                                  density=True), X),
    C("histogram_bin_edges", lambda x: np.histogram_bin_edges(x, 5), X),
    C("histogram2d", lambda s: np.histogram2d(s[:, 0], s[:, 1], bins=[3, 4],
                                              range=[[-2, 2], [-1.5, 1.5]], weights=s[:, 2] ** 2,
                                              density=True), SAMPLE),
    C("histogramdd", lambda s: np.histogramdd(s, bins=(2, 3, 2)), SAMPLE, grad=False),
    C("bincount", lambda w: np.bincount(np.array([0, 1, 1, 4]), weights=np.tile(w, 2)[:4]), W),
    C("bincount_counts", lambda x: np.bincount(np.argmax(x, 1), minlength=5), X, grad=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_matches_numpy(case):
    run_value(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=lambda c: c.name)
def test_derivatives(case):
    run_grads(case)


def test_grad_of_median_picks_the_middle_element():
    import advect as ad
    x = np.array([3.0, -1.0, 7.0, 0.5, 2.0])
    np.testing.assert_array_equal(ad.grad(np.median)(x), [0.0, 0.0, 0.0, 0.0, 1.0])


def test_quantile_derivative_in_q_is_the_gap_between_order_statistics():
    import advect as ad
    x = np.array([4.0, 1.0, 3.0, 0.0])
    # q = 0.5 sits between the 2nd and 3rd smallest values (1 and 3): slope (3 - 1) * (n - 1)
    assert ad.grad(lambda q: np.quantile(x, q), 0)(0.5) == pytest.approx(6.0)


def test_cumprod_gradient_is_exact_with_a_zero():
    import advect as ad
    x = np.array([2.0, 0.0, 3.0])
    # sum(cumprod) = x0 + x0 x1 + x0 x1 x2, at x1 = 0: (1, x0 + x0 x2, 0)
    np.testing.assert_allclose(ad.grad(lambda x: np.cumprod(x).sum())(x), [1.0, 8.0, 0.0])

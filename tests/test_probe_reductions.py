"""Regressions found by probing reductions, statistics, sorting and histograms against NumPy
(values, dtypes and result types, in both lifetimes) and against central differences."""

import warnings

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient

X = np.array([0.3, -1.2, 0.7, 2.0, -0.4, 1.1, 0.05])
XN = np.array([0.3, np.nan, 0.7, 2.0, -0.4, np.nan, 0.05])


def _dynamic(f, *args):
    return ad.vjp(f)(*args)[0]


def _staged(f, *args):
    return ad.stage(f, *args)(*args)


def _same(expected, got):
    assert type(got) is type(expected), (type(got), type(expected))
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(got, expected, rtol=1e-12, equal_nan=True)


SCALAR_RESULTS = {
    "median": lambda a: np.median(a),
    "median_axis": lambda a: np.median(a, axis=0),
    "quantile": lambda a: np.quantile(a, 0.3),
    "quantile_method": lambda a: np.quantile(a, 0.3, method="averaged_inverted_cdf"),
    "percentile": lambda a: np.percentile(a, 30),
    "nanquantile": lambda a: np.nanquantile(a, 0.3),
    "nanpercentile": lambda a: np.nanpercentile(a, 30, method="hazen"),
    "nanmedian": lambda a: np.nanmedian(a),
    "nanmax": lambda a: np.nanmax(a),
    "nanmin": lambda a: np.nanmin(a),
    "interp": lambda a: np.interp(0.5, np.arange(7.0), a),
    "average_returned": lambda a: np.average(a, returned=True)[1] * 1.0 + np.average(a),
    "average_weights_returned": lambda a: np.average(a, weights=a ** 2, returned=True)[1],
    "searchsorted": lambda a: np.searchsorted(np.sort(a), 0.5),
    "sinc": lambda a: np.sinc(a[0]),
    "nan_to_num": lambda a: np.nan_to_num(a[0] * np.inf),
    # NumPy's weighted quantile of a scalar q is a 0-d array
    "weighted_quantile": lambda a: np.quantile(a, 0.3, method="inverted_cdf",
                                               weights=np.abs(a) + 1),
}


@pytest.mark.parametrize("name", sorted(SCALAR_RESULTS))
@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
def test_0d_results_have_numpy_result_types(name, lifetime):
    f = SCALAR_RESULTS[name]
    for x in (X, XN) if name.startswith("nan") else (X,):
        _same(f(x), lifetime(f, x))


def test_average_returned_scale_is_a_numpy_scalar():
    # (staged, the constant scale comes back as a 0-d array: staged constant outputs are)
    def f(a):
        return np.average(a, returned=True)
    expected, got = f(X), _dynamic(f, X)
    for e, g in zip(expected, got):
        _same(e, g)


@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="NumPy 2.0's quantile and mean results differ; Advect follows 2.1+")
def test_quantile_numpy_scalar_q_is_strong(lifetime):
    # a NumPy float64 q widens float32 data, as NumPy's (only Python scalars are weak)
    def f(a):
        return np.quantile(a.astype(np.float32), np.float64(0.3))
    _same(f(X), lifetime(f, X))


@pytest.mark.parametrize("q", [[0.3, 0.61], np.float32(0.37), 0.77])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
@pytest.mark.parametrize("method", ["linear", "hazen", "averaged_inverted_cdf", "weibull"])
@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="NumPy 2.0's quantile and mean results differ; Advect follows 2.1+")
def test_quantile_positions_and_lerp_follow_numpy(q, dtype, method):
    # positions in q's precision (float64 for a Python scalar), not the data's, and NumPy's
    # two-sided interpolation: float16 data with a float64 q was off by 1e-3 in a float64 result
    data = np.random.default_rng(0).normal(size=8) * 10

    def f(a):
        return np.quantile(a.astype(dtype), q, method=method)
    expected = f(data)
    for got in (_dynamic(f, data), _staged(f, data)):
        assert type(got) is type(expected)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("method", ["lower", "higher", "nearest", "inverted_cdf",
                                    "closest_observation"])
@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
def test_quantile_picks_keep_integer_and_bool_dtypes(method, lifetime):
    for f in (lambda a: np.quantile(np.round(a * 3).astype(np.int32), 0.4, method=method),
              lambda a: np.quantile(a > 0, [0.2, 0.7], method=method)):
        _same(f(X), lifetime(f, X))


@pytest.mark.parametrize("method", ["weibull", "linear", "hazen"])
def test_quantile_derivative_in_q_at_a_sample_point_is_the_slope(method):
    # weibull at q = 0.75 of 7 values and linear at q = 0.5 land exactly on a sample: the
    # derivative in q was 0 there (the value was picked by a where); it is the right slope
    data = np.sort(X)
    q = {"weibull": 0.75, "linear": 0.5, "hazen": 0.5}[method]

    def f(t):
        return np.quantile(data, t, method=method)
    right = (f(q + 1e-7) - f(q)) / 1e-7
    for g in (ad.grad(f)(q), ad.grad(ad.stage(f, np.float64(q)))(np.float64(q))):
        assert right != 0
        np.testing.assert_allclose(g, right, rtol=1e-5)


def test_quantile_derivative_in_q_matches_central_differences():
    q = np.array([0.15, 0.55, 0.8])

    def f(t):
        return np.sum(np.nanquantile(XN, t, method="median_unbiased") * np.arange(1.0, 4.0))
    np.testing.assert_allclose(ad.grad(f)(q), central_gradient(f, q), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("lifetime", ["dynamic", "staged"])
def test_max_derivative_of_a_nan_slice_is_nan(lifetime):
    # a NaN maximum matches no element: the derivative was all ones over several axes and a
    # one-hot at position 0 over one axis (silently plausible); it is NaN, as JAX's
    x = np.array([[1.0, np.nan, 0.5], [3.0, 2.0, 3.0]])
    for f, expected in (
            (lambda a: np.max(a), np.full((2, 3), np.nan)),
            (lambda a: np.max(a.ravel()), np.full((2, 3), np.nan)),
            (lambda a: np.sum(np.max(a, axis=1)), [[np.nan] * 3, [1.0, 0.0, 0.0]]),
            (lambda a: np.sum(np.min(a, axis=0)), [[1.0, np.nan, 1.0], [0.0, np.nan, 0.0]])):
        g = ad.grad(f if lifetime == "dynamic" else ad.stage(f, x))(x)
        np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="NumPy 2.0's quantile and mean results differ; Advect follows 2.1+")
def test_mean_with_an_integer_dtype_is_cast_back(lifetime):
    # NumPy sums in the integer dtype and casts the quotient back: it was a float64 mean
    def f(a):
        return np.mean(a * 10, dtype=np.int64), np.mean(a * 10, axis=0, dtype=np.int32)
    for e, g in zip(f(X), lifetime(f, X)):
        _same(e, g)


def test_bincount_of_nothing_counts_in_integers_even_with_weights():
    empty = np.zeros(0, np.int64)

    def f(w):
        return np.bincount(empty, weights=w, minlength=3)
    _same(f(np.zeros(0)), _dynamic(f, np.zeros(0)))


@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
def test_polyfit_rcond_follows_x_precision_and_truncates_like_lstsq(lifetime):
    # float32 x: NumPy's default rcond is n * float32 eps, and lstsq drops the singular values
    # below it; the fit solved the full system (off by 0.4 at degree 9) and reported rcond
    # from float64's eps
    x = np.linspace(0, 10, 30).astype(np.float32)
    y = np.sin(np.linspace(0, 10, 30))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", np.exceptions.RankWarning)
        for deg in (3, 9):
            np.testing.assert_allclose(lifetime(lambda v, d=deg: np.polyfit(x, v, d), y),
                                       np.polyfit(x, y, deg), rtol=1e-9, atol=1e-11)
    with pytest.warns(np.exceptions.RankWarning):
        _dynamic(lambda v: np.polyfit(x, v, 9), y)
    expected = np.polyfit(x, y, 3, full=True)
    got = _dynamic(lambda v: np.polyfit(x, v, 3, full=True), y)
    for i in (2, 4):  # the rank and rcond
        _same(expected[i], got[i])


@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
def test_periodic_interp_orders_repeated_abscissae_as_numpy(lifetime):
    # xp wraps onto itself (0 and 5 are the same phase): NumPy's own sort decides which of
    # the repeated knots comes first; a stable sort chose differently
    x = np.array([0.5, 1.5, 4.5, 5.5, -0.5])
    xp = np.arange(7.0)

    def f(fp):
        return np.interp(x, xp, fp, period=5.0)
    fp = np.arange(7.0) * 10
    np.testing.assert_array_equal(lifetime(f, fp), f(fp))


def test_polyint_takes_traced_integration_constants():
    p = np.array([1.0, 2.0, 3.0])

    def f(a):
        return np.sum(np.polyint(a, m=2, k=[a[0], 2.0]) * np.arange(5.0))
    np.testing.assert_allclose(ad.grad(f)(p), central_gradient(f, p), rtol=1e-6)
    np.testing.assert_allclose(_dynamic(lambda a: np.polyint(a, m=2, k=a[:2]), p),
                               np.polyint(p, m=2, k=p[:2]))


@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
def test_average_weights_along_a_tuple_of_axes(lifetime):
    # NumPy 2 lays weights of shape a.shape[axis] along a tuple axis (in the order given)
    t = np.random.default_rng(1).normal(size=(2, 3, 4))
    w = np.arange(8.0).reshape(4, 2) + 1

    def f(a):
        return np.average(a, axis=(2, 0), weights=w, returned=True)
    for e, g in zip(f(t), lifetime(f, t)):
        np.testing.assert_allclose(g, e, rtol=1e-12)
    with pytest.raises(ValueError, match="consistent with shape"):
        _dynamic(lambda a: np.average(a, axis=1, weights=np.ones(4)), t)


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
def test_digitize_decreasing_bins_with_ties(right, lifetime):
    # values equal to a decreasing bin edge went to the wrong bin (the side was flipped)
    bins = np.array([2.0, 1.0, 0.0, -1.0])

    def f(a):
        return np.digitize(np.round(a * 2) / 2, bins, right=right)
    _same(f(X), lifetime(f, X))


def test_digitize_refuses_non_monotonic_bins():
    with pytest.raises(ValueError, match="monotonically"):
        _dynamic(lambda a: np.digitize(a, np.array([0.0, 2.0, 1.0])), X)


def test_unique_equal_nan_false_keeps_every_nan():
    x = np.array([1.0, np.nan, 2.0, np.nan, 1.0])

    def f(a):
        return np.unique(a, equal_nan=False, return_counts=True)
    for e, g in zip(f(x), _dynamic(f, x)):
        np.testing.assert_array_equal(g, e)


def test_bincount_of_bools():
    x = np.array([True, False, True, True])

    def f(w):
        return np.bincount(x, weights=w)
    np.testing.assert_array_equal(_dynamic(f, np.arange(4.0)), f(np.arange(4.0)))
    np.testing.assert_allclose(ad.grad(lambda w: f(w)[1])(np.arange(4.0)), [1.0, 0, 1, 1])


@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
def test_all_any_of_nothing(lifetime):
    e = np.zeros((0, 3))
    for f in (lambda a: np.all(a, axis=0), lambda a: np.any(a, axis=0),
              lambda a: np.all(a, axis=1, keepdims=True)):
        np.testing.assert_array_equal(lifetime(f, e), f(e))
    for f in (np.all, np.any):
        assert _dynamic(f, e) == f(e)


def test_ediff1d_refuses_a_float_edge_for_integer_data():
    with pytest.raises(TypeError, match="same_kind"):
        _dynamic(lambda a: np.ediff1d(np.round(a).astype(np.int64), to_begin=1.5) * a[0], X)


@pytest.mark.parametrize("lifetime", [_dynamic, _staged])
def test_histogram_edges_from_a_range_are_spaced_in_float64(lifetime):
    # NumPy spaces range= edges in float64 and rounds them to float16; they were spaced in
    # float16, so edges (and the counts next to them) differed
    def f(a):
        return np.histogram(a.astype(np.float16), bins=9, range=(-2, 3))
    for e, g in zip(f(X), lifetime(f, X)):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)


def test_histogram_refuses_too_many_bins_for_the_data_range():
    x = np.array([-1146.0])
    with pytest.raises(ValueError, match="Too many bins"):
        _dynamic(lambda a: np.histogram(a.astype(np.float16), bins=6)[1], x)


def test_histogram_refuses_decreasing_bin_edges():
    with pytest.raises(ValueError, match="increase monotonically"):
        _dynamic(lambda a: np.histogram(a, bins=np.array([0.0, 2.0, 1.0]))[0], X)


@pytest.mark.parametrize("name", ["nanargmax", "nanargmin"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_staged_nanarg_of_an_all_nan_slice_raises(name, axis):
    f = getattr(np, name)
    a = np.full((2, 2), np.nan)
    if axis is not None:
        a[0, 1] = 1.0  # column 0 and row 1 are all NaN
    program = ad.stage(lambda x: f(x, axis=axis), np.ones((2, 2)))
    with pytest.raises(ValueError, match="All-NaN slice"):
        program(a)
    np.testing.assert_array_equal(program(np.eye(2)), f(np.eye(2), axis=axis))


def test_clip_derivative_where_the_bounds_cross():
    # NumPy's clip is minimum(maximum(x, lo), hi): where lo > hi the output is hi, a constant
    x = np.array([0.5, 2.0, -1.0, 3.0])

    def f(a):
        return np.clip(a, a[0] + 1.0, 1.0)  # lo = 1.5 > hi = 1.0

    t = np.array([1.0, -2.0, 0.5, 3.0])
    _, tangent = ad.jvp(f)(x, tangents=t)
    eps = 1e-6
    np.testing.assert_allclose(tangent, (f(x + eps * t) - f(x - eps * t)) / (2 * eps), atol=1e-8)


_RNG = np.random.default_rng(11)
_BIG = _RNG.normal(size=(120, 70))
_MASK = _RNG.uniform(size=(120, 70)) > 0.3
_NANS = np.where(_BIG > 1.5, np.nan, _BIG)
MASKED = {
    "sum_where": lambda x: np.sum(x, where=_MASK),
    "sum_where_axis": lambda x: np.sum(x, axis=0, where=_MASK[0]),
    "mean_where": lambda x: np.mean(x, axis=1, where=_MASK),
    "var_where": lambda x: np.var(x, where=_MASK),
    "add_reduce_where": lambda x: np.add.reduce(x, axis=1, where=_MASK),
    "nanmean": lambda x: np.nanmean(x + _NANS),
    "nanvar_axis": lambda x: np.nanvar(x + _NANS, axis=0),
    "nanmean_where": lambda x: np.nanmean(x + _NANS, where=_MASK),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(MASKED))
def test_masked_sums_equal_numpy_bit_for_bit_in_both_lifetimes(name, dtype):
    """NumPy's where= sums run its masked loop, which adds in another order than a pairwise sum
    of where(mask, x, 0) (differences of several ulps in float32); the nan-functions sum the
    NaN-zeroed array with the caller's where=. Advect does the same, dynamic and staged, and
    the derivative is the mask."""
    f = MASKED[name]
    x = (_BIG * 0.5).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = f(x)
        for got in (_dynamic(f, x), _staged(f, x)):
            assert np.asarray(got).dtype == np.asarray(expected).dtype
            np.testing.assert_array_equal(got, expected)
    if name == "sum_where":
        np.testing.assert_array_equal(ad.grad(f)(x), _MASK.astype(dtype))
        np.testing.assert_array_equal(ad.grad(ad.stage(f, x))(x), _MASK.astype(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_vdot_and_vecdot_are_numpy_s_blas_dot_bit_for_bit(dtype):
    x = (_BIG[:30] + (1j * _BIG[30:60] if dtype is np.complex128 else 0)).astype(dtype)
    for f in (lambda x: np.vdot(x, x[::-1]), lambda x: np.vecdot(x, x[::-1]),
              lambda x: np.linalg.vecdot(x[0], x[1:]), lambda x: np.vecdot(x, x, axis=0)):
        expected = f(x)
        for got in (_dynamic(f, x), _staged(f, x)):
            assert type(got) is type(expected)
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("kw", [{}, {"dtype": np.float32}, {"aweights": np.arange(1, 10.0)},
                                {"fweights": np.arange(1, 10), "ddof": 2}, {"bias": True}],
                         ids=["plain", "float32", "aweights", "fweights", "bias"])
def test_cov_and_corrcoef_equal_numpy_bit_for_bit(kw):
    """NumPy computes X @ (X * w).T and multiplies by a float64 reciprocal of the divisor in
    place; Advect follows (it divided, and multiplied the weighted factor first)."""
    x = _BIG[:4, :9]
    for f in (lambda x: np.cov(x, **kw), lambda x: np.corrcoef(x, dtype=kw.get("dtype"))):
        expected = f(x)
        for got in (_dynamic(f, x), _staged(f, x)):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


_Z = _BIG[:6, :5] + 1j * _BIG[6:12, :5]
_ZW = np.abs(_BIG[12:18, :5]) + 0.5
COMPLEX_STATISTICS = {
    "mean": lambda z: np.mean(z),
    "mean_axis": lambda z: np.mean(z, axis=0),
    "mean_where": lambda z: np.mean(z, axis=1, where=_MASK[:6, :5]),
    "var": lambda z: np.var(z),
    "var_axis": lambda z: np.var(z, axis=1, ddof=1),
    "std": lambda z: np.std(z, axis=0),
    "nanmean": lambda z: np.nanmean(z),
    "nanvar": lambda z: np.nanvar(z),
    "nanstd_axis": lambda z: np.nanstd(z, axis=0),
    "average_weights": lambda z: np.average(z, weights=_ZW),
    "average_weights_returned": lambda z: np.average(z, axis=0, weights=_ZW[:, 0],
                                                     returned=True)[1],
    "norm": lambda z: np.linalg.norm(z),
    "norm_keepdims": lambda z: np.linalg.norm(z, "fro", keepdims=True),
    "norm_vector": lambda z: np.linalg.norm(z[0], 2),
    "dot_scalar": lambda z: np.dot(z[0, 0], z),
    "inner_scalar": lambda z: np.inner(z, z[1, 1]),
    "dot_scalars": lambda z: np.dot(z[0, 0], z[1, 1]),
    "vander": lambda z: np.vander(z[0]),  # NumPy accumulates products of x, not of 1 and x
    "vander_increasing": lambda z: np.vander(z[1], 4, increasing=True),
}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(COMPLEX_STATISTICS))
def test_complex_statistics_norms_and_scalar_dots_equal_numpy_bit_for_bit(name, dtype):
    """NumPy divides a complex64 mean by its intp count in complex128, sums re**2 + im**2 in
    np.var (dev * conj(dev) in np.nanvar), divides a weighted complex average by the complex sum
    of its weights, takes a full norm as the dot product of the flat values with themselves, and
    multiplies by a 0-d operand of np.dot / np.inner with its dot kernel (complex products round
    unlike np.multiply's). Advect follows each, in both lifetimes."""
    f = COMPLEX_STATISTICS[name]
    z = (_Z if np.dtype(dtype).kind == "c" else _Z.real).astype(dtype)
    expected = f(z)
    for got in (_dynamic(f, z), _staged(f, z)):
        assert type(got) is type(expected)
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


_SAMPLES = _RNG.uniform(-2, 2, 70_000)  # two of np.histogram's blocks of 65536 samples
HISTOGRAMS = {
    "equal_bins": lambda w: np.histogram(_SAMPLES, bins=7, weights=w)[0],
    "range": lambda w: np.histogram(_SAMPLES, bins=5, range=(-1, 1.5), weights=w)[0],
    "edges": lambda w: np.histogram(_SAMPLES, bins=[-2, -0.5, 0, 0.3, 2], weights=w)[0],
    "density": lambda w: np.histogram(_SAMPLES, bins=6, weights=w, density=True)[0],
    "density_edges": lambda w: np.histogram(_SAMPLES, bins=[-1.5, 0, 1, 2], weights=w,
                                            density=True)[0],
    "histogram2d_density": lambda w: np.histogram2d(_SAMPLES[:500], _SAMPLES[500:1000],
                                                    bins=[3, 5], weights=w[:500],
                                                    density=True)[0],
    "histogramdd_ragged_edges": lambda w: np.histogramdd(
        np.stack([_SAMPLES[:500], _SAMPLES[500:1000]], 1), bins=[[-2, 0, 2], [-1, 1]],
        weights=w[:500], density=True)[0],
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int64])
@pytest.mark.parametrize("name", sorted(HISTOGRAMS))
def test_weighted_histograms_equal_numpy_bit_for_bit(name, dtype):
    """np.histogram sums each block's weights per bin in float64 (bincount) and adds the blocks
    in the weights' dtype for equal bins; for given edges it takes differences of cumulative
    sums in sorted order; densities divide by the widths, then by the total. Advect follows."""
    f = HISTOGRAMS[name]
    if np.dtype(dtype).kind == "c" and name.startswith("histogram"):
        pytest.skip("histogramdd casts weights to float64 safely: complex weights are refused")
    w = (np.abs(_SAMPLES[::-1]) * (1 + 0.5j if np.dtype(dtype).kind == "c" else 1)).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = f(w)
        for got in (_dynamic(f, w), _staged(f, w)):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int8])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_sums_with_initial_equal_numpy_bit_for_bit(dtype, axis):
    """NumPy's loop starts at initial (for a strided axis that adds it first, not last)."""
    x = (_BIG[:50, :40] * (5 if dtype is np.int8 else 0.5)).astype(dtype)
    initial = 3 if dtype is np.int8 else 0.3
    for f in (lambda x: np.sum(x, axis=axis, initial=initial),
              lambda x: np.add.reduce(x, axis=axis, initial=initial),
              lambda x: x.sum(axis=axis, keepdims=True, initial=initial)):
        expected = f(x)
        for got in (_dynamic(f, x), _staged(f, x)):
            assert type(got) is type(expected) and got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("ufunc", [np.logaddexp, np.logaddexp2])
@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": (0, 1), "keepdims": True},
                                {"axis": 0, "initial": 0.5}],
                         ids=["plain", "axis", "axes", "initial"])
def test_logaddexp_reductions_are_numpy_s_fold_bit_for_bit(ufunc, kw):
    x = _BIG[:20, :7]
    f = lambda x: ufunc.reduce(x, **kw)
    expected = f(x)
    for got in (_dynamic(f, x), _staged(f, x)):
        assert type(got) is type(expected) and got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)

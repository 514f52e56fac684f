"""Data-science workloads (weighted and robust regression, likelihoods, masked statistics,
order statistics, binning, labeled arrays) checked against central differences, the other AD
mode, eager NumPy (values, dtypes and result types) and the saved form of staged programs."""

import warnings

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient

RNG = np.random.default_rng(1)
N, P = 24, 3
X = RNG.standard_normal((N, P))
Y = X @ np.array([0.5, -1.0, 0.3]) + 0.3 * RNG.standard_normal(N)
W = RNG.uniform(0.5, 2.0, N)
M = RNG.standard_normal((6, 5))
MN = M.copy()
MN[1, 2] = MN[4, 0] = np.nan


def _check_workload(f, x, *, stage=True):
    """grad against central differences, jvp against grad, the dynamic and staged values
    against eager NumPy (type and dtype too), the staged gradient and the reloaded program."""
    value = f(x)
    g = ad.grad(f)(x)
    np.testing.assert_allclose(g, central_gradient(f, x), rtol=1e-6, atol=1e-7)
    t = np.random.default_rng(0).standard_normal(x.shape)
    _, tangent = ad.jvp(f)(x, tangents=t)
    np.testing.assert_allclose(tangent, np.sum(g * t), rtol=1e-8, atol=1e-10)
    dynamic = ad.vjp(f)(x)[0]
    assert type(dynamic) is type(value) and dynamic.dtype == value.dtype
    if not stage:
        return
    program = ad.stage(f, x)
    staged = program(x)
    assert type(staged) is type(value) and staged.dtype == value.dtype
    np.testing.assert_allclose(staged, value, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(program)(x), g, rtol=1e-10, atol=1e-12)
    reloaded = ad.StagedProgram.from_dict(program.to_dict())
    np.testing.assert_allclose(reloaded(x), value, rtol=1e-12)


def _ridge(a, lam=0.7):
    b = np.linalg.solve(a.T @ a + lam * np.eye(a.shape[1]), a.T @ Y)
    r = Y - a @ b
    return r @ r + lam * b @ b


def _wls_weights(logw):
    w = np.exp(logw)
    xtw = X.T * w
    return np.linalg.solve(xtw @ X, xtw @ Y)[1]


def _huber(b, delta=0.5):
    r = Y - X @ b
    a = np.abs(r)
    return np.sum(np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


def _huber_clip(b, delta=0.5):
    r = Y - X @ b
    c = np.clip(r, -delta, delta)
    return np.sum(c * (r - 0.5 * c))


def _irls(b):
    for _ in range(3):
        r = Y - X @ b
        w = np.where(np.abs(r) < 0.1, 1.0, 0.1 / np.maximum(np.abs(r), 1e-12))
        b = np.linalg.solve((X.T * w) @ X, (X.T * w) @ Y)
    return np.sum(b)


TAUS = np.array([0.1, 0.5, 0.9])


def _pinball(b, taus=TAUS):
    r = Y[:, None] - b[None, :]
    return np.sum(np.maximum(taus * r, (taus - 1) * r))


def _mahalanobis(a):
    c = np.cov(a, rowvar=False)  # of a fixed point (of the sample itself it is constant)
    d = np.linspace(-1.0, 1.0, a.shape[1]) - a.mean(0)
    return d @ np.linalg.solve(c, d) + np.linalg.slogdet(c)[1]


def _kde_bandwidth(h):
    z = (np.linspace(-2, 2, 11)[:, None] - Y[None, :]) / h
    dens = np.exp(-0.5 * z ** 2).sum(axis=1) / (N * h * np.sqrt(2 * np.pi))
    return -np.sum(np.log(dens))


REGRESSION = {
    "ridge_design": (_ridge, X),
    "wls_weights": (_wls_weights, np.zeros(N)),
    "huber_where": (_huber, np.array([0.9, -0.5, 0.8])),
    "huber_clip": (_huber_clip, np.array([0.9, -0.5, 0.8])),
    "irls_huber": (_irls, np.array([0.4, -0.9, 0.2])),
    "pinball": (_pinball, np.array([-1.1, 0.13, 1.2])),
    "mahalanobis": (_mahalanobis, M),
    "corrcoef_offdiag": (lambda a: np.sum(np.triu(np.corrcoef(a), 1) ** 2), M),
    "cov_traced_aweights": (lambda lw: np.cov(X[:, 1], Y, aweights=np.exp(lw))[0, 1], np.zeros(N)),
    "kde_bandwidth": (_kde_bandwidth, np.array(0.4)),
    "pca_explained": (lambda a: (lambda w: w[-1] / w.sum())(np.linalg.eigvalsh(np.cov(a.T))), M),
}


@pytest.mark.parametrize("name", sorted(REGRESSION))
def test_regression_workloads_match_differences_and_stage(name):
    f, x = REGRESSION[name]
    _check_workload(f, x)


def test_weighted_least_squares_through_lstsq_dynamic():
    def wls(logw):
        sw = np.sqrt(np.exp(logw))
        b, *_ = np.linalg.lstsq(X * sw[:, None], Y * sw, rcond=None)
        return b @ b

    _check_workload(wls, np.zeros(N), stage=False)


# --- likelihoods with scipy.special ufuncs -----------------------------------------------------

def _likelihoods():
    sc = pytest.importorskip("scipy.special")
    k = np.round(np.abs(Y) * 3)
    labels = Y > 0

    def negbin(theta):
        r, mu = np.exp(theta[0]), np.exp(theta[1])
        return -np.sum(sc.gammaln(k + r) - sc.gammaln(r) - sc.gammaln(k + 1)
                       + sc.xlogy(r, r / (r + mu)) + sc.xlogy(k, mu / (r + mu)))

    def logistic(b):
        p = sc.expit(X @ b)
        return -np.sum(sc.xlogy(labels, p) + sc.xlog1py(1 - labels, -p))

    def probit(b):
        eta = X @ b
        return -np.sum(np.where(labels, sc.log_ndtr(eta), sc.log_ndtr(-eta)))

    def beta(ab):
        u = sc.expit(Y)
        a, b = np.exp(ab[0]), np.exp(ab[1])
        return -np.sum((a - 1) * np.log(u) + (b - 1) * np.log1p(-u) - sc.betaln(a, b))

    def student_t(params):
        nu, s = np.exp(params[0]), np.exp(params[2])
        z = (Y - params[1]) / s
        return -np.sum(sc.gammaln((nu + 1) / 2) - sc.gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)
                       - np.log(s) - (nu + 1) / 2 * np.log1p(z ** 2 / nu))

    def zero_inflated_poisson(theta):
        pi, lam = sc.expit(theta[0]), np.exp(theta[1])
        zero = np.log(pi + (1 - pi) * np.exp(-lam))
        rest = np.log1p(-pi) + sc.xlogy(k, lam) - lam - sc.gammaln(k + 1)
        return -np.sum(np.where(k == 0, zero, rest))

    def tobit(theta):
        mu, s = X @ theta[:3], np.exp(theta[3])
        return -np.sum(np.where(Y <= 0, sc.log_ndtr(-mu / s),
                                -0.5 * ((Y - mu) / s) ** 2 - np.log(s)))

    def dirichlet(alpha):
        return np.sum(sc.digamma(alpha) * alpha) - sc.digamma(alpha.sum()) + sc.logit(
            alpha / alpha.sum()).sum()

    return {
        "negbin": (negbin, np.array([0.4, 0.2])),
        "logistic_xlog1py": (logistic, np.array([0.5, -1.0, 0.3])),
        "probit_log_ndtr": (probit, np.array([0.5, -1.0, 0.3])),
        "beta_betaln": (beta, np.array([0.3, -0.2])),
        "student_t": (student_t, np.array([1.0, 0.1, 0.2])),
        "zero_inflated_poisson": (zero_inflated_poisson, np.array([-0.5, 0.2])),
        "tobit": (tobit, np.array([0.5, -1.0, 0.3, -1.0])),
        "dirichlet_digamma": (dirichlet, np.array([0.5, 1.3, 2.0])),
    }


@pytest.mark.parametrize("name", ["negbin", "logistic_xlog1py", "probit_log_ndtr", "beta_betaln",
                                  "student_t", "zero_inflated_poisson", "tobit",
                                  "dirichlet_digamma"])
def test_likelihoods_match_differences_and_stage(name):
    f, x = _likelihoods()[name]
    _check_workload(f, x)


# --- masked, order and binned statistics -------------------------------------------------------

X1 = RNG.standard_normal(15)
XN1 = X1.copy()
XN1[[2, 7]] = np.nan


def _ecdf_interp(a):
    return np.sum(np.interp(np.linspace(-1, 1, 7), np.sort(a), np.arange(1, a.size + 1) / a.size))


def _group_means(a):
    g = np.digitize(X1, [-1.0, 0.0, 1.0])
    s = np.zeros(4, like=a)
    np.add.at(s, g, a)
    return np.sum((s / np.bincount(g, minlength=4)) ** 2)


def _masked_standardize(a):
    mask = np.isnan(a)
    mean = np.nanmean(a, axis=0, keepdims=True)
    z = (np.where(mask, mean, a) - mean) / np.nanstd(a, axis=0, keepdims=True)
    return np.sum(np.where(mask, 0.0, z) ** 3)


STATISTICS = {
    "nanmean_nanvar": (lambda a: np.nanmean(a) * np.nanvar(a, ddof=1), XN1),
    "nanquantile_axis": (lambda a: np.sum(np.nanquantile(a, [0.1, 0.5, 0.9], axis=1)), MN),
    "nanmedian_masked_product": (
        lambda a: np.sum(np.nanmedian(a, axis=0) * np.where(np.isnan(a), 0.0, a)), MN),
    "masked_standardize": (_masked_standardize, MN),
    "robust_z": (lambda a: np.sum(((a - np.median(a)) / np.median(np.abs(a - np.median(a))))
                                  ** 3), X1),
    "iqr_over_std": (lambda a: np.diff(np.percentile(a, [25, 75]))[0] / np.std(a), X1),
    "winsorized_mean": (lambda a: np.mean(np.clip(a, np.quantile(a, 0.1), np.quantile(a, 0.9))),
                        X1),
    "trimmed_mean": (lambda a: np.mean(np.sort(a)[3:-3]), X1),
    "argsort_take": (lambda a: np.sum(np.take(a, np.argsort(a))[:5] * np.arange(5)), X1),
    "rank_weighted": (lambda a: np.sum(a * np.argsort(np.argsort(a))), X1),
    "ecdf_interp": (_ecdf_interp, X1),
    "interp_traced_fp": (lambda a: np.sum(np.interp(np.linspace(-1, 1, 7), np.sort(X1),
                                                    np.cumsum(np.exp(a)) / np.exp(a).sum())), X1),
    "cumsum_diff": (lambda a: np.sum(np.diff(np.cumsum(a ** 2), n=2) ** 2)
                    + np.sum(np.diff(a, prepend=0.0, append=a[-1]) ** 2), X1),
    "group_means_add_at": (_group_means, X1),
    "weighted_histogram": (lambda a: np.sum(np.histogram(X1, bins=5, weights=a)[0] ** 2), X1),
    "traced_histogram_edges": (
        lambda e: np.sum(np.histogram(Y, bins=np.sort(e), weights=Y ** 2)[0]),
        np.array([-2.0, -0.3, 0.4, 2.5])),
    "quantile_in_q": (lambda q: np.sum(np.quantile(X1, q, method="hazen") ** 2),
                      np.array([0.12, 0.43, 0.81])),
    "nanquantile_in_q": (lambda q: np.sum(np.nanquantile(MN, q, axis=0) ** 2),
                         np.array([0.12, 0.43, 0.81])),
    "weighted_quantile": (lambda a: np.quantile(a, 0.3, method="inverted_cdf",
                                                weights=np.arange(1.0, 16.0)), X1),
    "weighted_quantile_axis": (
        lambda a: np.sum(np.quantile(a, [0.2, 0.7], axis=1, method="inverted_cdf",
                                     weights=np.arange(1.0, 6.0)) ** 2), M),
    "weighted_percentile_full": (
        lambda a: np.sum(np.percentile(a, [20, 70], axis=0, method="inverted_cdf",
                                       weights=np.abs(M) + 0.1, keepdims=True) ** 2), M),
}


@pytest.mark.parametrize("name", sorted(STATISTICS))
def test_statistics_match_differences_and_stage(name):
    f, x = STATISTICS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _check_workload(f, x)


def test_bincount_of_traced_bins_keeps_the_weights_gradient():
    def f(a):
        idx = np.digitize(a, [-1.0, 0.0, 1.0], right=True)  # integer, no derivative
        return np.sum(np.bincount(idx, weights=np.exp(a), minlength=4) * np.arange(1.0, 5.0))

    _check_workload(f, X1, stage=False)
    with pytest.raises(ad.TracingError, match="np.bincount"):
        ad.stage(f, X1)


def test_integer_outputs_get_zero_tangents_and_accept_missing_cotangents():
    def f(a):
        return np.digitize(a, [-1.0, 0.0, 1.0]), np.argsort(a), np.digitize(a, [0.0]) * a

    program = ad.stage(f, X1)
    for got, want in zip(program(X1), f(X1)):
        assert type(got) is type(want) and got.dtype == want.dtype
    _, tangents = ad.jvp(program)(X1, tangents=np.ones(15))
    np.testing.assert_array_equal(tangents[0], 0.0)
    np.testing.assert_array_equal(tangents[1], 0.0)
    _, pullback = ad.vjp(f)(X1)
    np.testing.assert_array_equal(pullback((None, None, np.ones(15))), (X1 > 0) * 1.0)


# --- saved weighted quantiles: the staged axes are non-negative --------------------------------

@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_staged_weighted_quantiles_save_and_load(axis):
    weights = np.arange(1.0, 7.0) if axis in (0,) else np.arange(1.0, 6.0)
    weights = weights if axis is not None else np.abs(M) + 0.5

    def f(a):
        return np.quantile(a, [0.25, 0.5], axis=axis, method="inverted_cdf", weights=weights)

    program = ad.stage(f, M)
    reloaded = ad.StagedProgram.from_dict(program.to_dict())
    np.testing.assert_array_equal(reloaded(M), f(M))


# --- NumPy's integer q: its virtual index is an integer for these methods ----------------------

X32 = RNG.standard_normal(11).astype(np.float32)
INTEGER_Q = [np.array([0, 1]), np.int64(1), np.array([0, 1], np.int8), np.array([True, False]),
             [0, 1], np.array([[0], [1]])]
METHODS = ["linear", "weibull", "interpolated_inverted_cdf", "averaged_inverted_cdf", "hazen",
           "midpoint", "lower", "inverted_cdf"]


# NumPy 2.0 types some integer-q quantiles otherwise (float64 for a Python int q of integer
# data, float32 for an int8 q's midpoint); Advect follows NumPy 2.1+
OLD_QUANTILE_TYPES = pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                                        reason="NumPy 2.0's integer-q result types differ")


@OLD_QUANTILE_TYPES
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("qi", range(len(INTEGER_Q)))
@pytest.mark.parametrize("data", ["float32", "int64"])
@pytest.mark.parametrize("name", ["quantile", "nanquantile"])
def test_integer_q_gives_numpy_result_types(method, qi, data, name):
    q = INTEGER_Q[qi]
    a = X32 if data == "float32" else np.arange(11)
    f = lambda a: getattr(np, name)(a, q, method=method)  # noqa: E731
    want = f(a)
    got = [ad.stage(f, a)(a)] + ([ad.vjp(f)(a)[0]] if data == "float32" else [])
    for value in got:
        assert type(value) is type(want) and value.dtype == want.dtype, (value, want)
        np.testing.assert_array_equal(value, want)


@OLD_QUANTILE_TYPES
def test_a_python_int_q_of_integer_data_is_numpys_integer_index():
    a = np.arange(11)
    for method, dtype in [("linear", np.int64), ("weibull", np.float64)]:
        want = np.quantile(a, 1, method=method)
        got = ad.stage(lambda a, m=method: np.quantile(a, 1, method=m), a)(a)
        assert want.dtype == dtype and type(got) is type(want) and got.dtype == want.dtype


@pytest.mark.parametrize("method", ["linear", "weibull", "averaged_inverted_cdf"])
def test_integer_q_gradients_pick_the_extremes(method):
    f = lambda a: np.sum(np.quantile(a, [0, 1], method=method) * np.array([1.0, 3.0]))  # noqa: E731
    _check_workload(f, X1)
    g = ad.grad(f)(X32)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, np.where(X32 == X32.min(), 1.0, 0.0)
                                  + np.where(X32 == X32.max(), 3.0, 0.0))


# --- float32 data with Python floats -----------------------------------------------------------

FLOAT32 = {
    "standardize": lambda a: (a - a.mean()) / (a.std() + 1e-3),
    "median_scaled": lambda a: np.median(a) * 2.0,
    "quantiles_hazen": lambda a: np.quantile(a, [0.3, 0.6], method="hazen") * 0.5,
    "nanvar": lambda a: np.nanvar(np.where(a > 1.0, np.nan, a), ddof=1),
    "nanpercentile_nearest": lambda a: np.nanpercentile(a, 40.0, method="nearest"),
    "huber": lambda a: np.where(np.abs(a) < 1.0, 0.5 * a ** 2, np.abs(a) - 0.5),
    "cumsum_half": lambda a: np.cumsum(a) / 2.0,
    "interp": lambda a: np.interp(a, [-1.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
    "average_weights": lambda a: np.average(a, weights=np.arange(1.0, 12.0)),
    "histogram_weights": lambda a: np.histogram(np.arange(11.0), bins=4, weights=a)[0],
    "ecdf_weighted": lambda a: np.searchsorted(np.sort(a), a, side="right") / a.size * a,
    "trapezoid": lambda a: np.trapezoid(a, dx=0.5),
}


@pytest.mark.parametrize("name", sorted(FLOAT32))
def test_float32_statistics_keep_numpys_types(name):
    f = FLOAT32[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = f(X32)
        for got in (ad.vjp(f)(X32)[0], ad.stage(f, X32)(X32)):
            assert type(got) is type(want) and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, equal_nan=True)
        loss = lambda a: np.sum(f(a))  # noqa: E731
        assert ad.grad(loss)(X32).dtype == np.float32
        assert ad.grad(ad.stage(loss, X32))(X32).dtype == np.float32


# --- xarray: named reductions and broadcasting by name -----------------------------------------

def _labeled():
    xr = pytest.importorskip("xarray")
    import advect.xarray  # noqa: F401

    t = xr.DataArray(RNG.standard_normal((3, 5, 4)), dims=("site", "time", "band"),
                     coords={"site": ["a", "b", "c"], "time": np.arange(5),
                             "band": [1.0, 2.0, 3.0, 4.0]}, name="obs", attrs={"units": "K"})
    w = xr.DataArray(RNG.uniform(0.5, 1.5, 4), dims="band", coords={"band": t.band})
    s = xr.DataArray(RNG.uniform(0.5, 1.5, 3), dims="site")
    return xr, t, w, s


XARRAY = {
    "anomaly_weighted": lambda xr, w, s: lambda t: ((t - t.mean("time")) ** 2 * w).sum().data,
    "standardize_by_name": lambda xr, w, s: lambda t: (
        ((t - t.mean(("time", "band"))) / t.std("time", ddof=1)) ** 3 * s).sum().data,
    "weighted_mean": lambda xr, w, s: lambda t: (t.weighted(w).mean("band") ** 2).sum().data,
    "median": lambda xr, w, s: lambda t: (t.median("time") * s).sum().data,
    "rolling": lambda xr, w, s: lambda t: (t.rolling(time=3).mean() ** 2).sum(skipna=True).data,
    "coarsen": lambda xr, w, s: lambda t: (t.coarsen(band=2).mean() ** 2).sum().data,
    "corr": lambda xr, w, s: lambda t: xr.corr(t, t ** 2, dim="time").sum().data,
    "dot": lambda xr, w, s: lambda t: xr.dot(t, w, dim="band").sum().data,
    "cumprod": lambda xr, w, s: lambda t: (1 + 0.1 * t).cumprod("time").sum().data,
    "dataset_std": lambda xr, w, s: lambda t: xr.Dataset({"a": t, "b": t * w}).std(
        "time").to_array().sum().data,
}


@pytest.mark.parametrize("name", sorted(XARRAY))
def test_xarray_workloads_match_differences_and_stage(name):
    xr, t, w, s = _labeled()
    f = XARRAY[name](xr, w, s)
    g = ad.grad(f)(t)
    assert isinstance(g, xr.DataArray) and g.dims == t.dims and g.name == "obs"
    fd = central_gradient(lambda v: f(t.copy(data=v)), t.values.copy())
    np.testing.assert_allclose(g.values, fd, rtol=1e-6, atol=1e-8)
    tangent = t.copy(data=np.random.default_rng(0).standard_normal(t.shape))
    _, jt = ad.jvp(f)(t, tangents=tangent)
    np.testing.assert_allclose(jt, np.sum(g.values * tangent.values), rtol=1e-8)
    program = ad.stage(f, t)
    np.testing.assert_allclose(program(t), f(t), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(program)(t).values, g.values, rtol=1e-10)
    np.testing.assert_allclose(ad.StagedProgram.from_dict(program.to_dict())(t), f(t),
                               rtol=1e-12)


def test_xarray_float32_labeled_outputs_keep_dtype_and_labels():
    xr, t, w, _ = _labeled()
    t32, w32 = t.astype(np.float32), w.astype(np.float32)
    for f in (lambda t: (t - t.mean("time")) / (t.std("time") + 1e-3),
              lambda t: t.weighted(w32).mean("band"), lambda t: t * w32 - w32.mean(),
              lambda t: t.where(t > 0, -0.5), lambda t: t.cumsum("time") / 3):
        want = f(t32)
        for got in (ad.vjp(f)(t32)[0], ad.stage(f, t32)(t32)):
            assert type(got) is type(want) and got.dtype == want.dtype
            assert got.dims == want.dims and got.name == want.name
            xr.testing.assert_allclose(got, want, rtol=1e-6)
        assert ad.grad(lambda t, f=f: f(t).sum().data)(t32).dtype == np.float32


# --- np.cov of one variable is NumPy's 0-d array; corrcoef's a NumPy scalar -------------------

@pytest.mark.parametrize("f", [lambda a: np.cov(a), lambda a: np.cov(a, aweights=np.ones(15)),
                               lambda a: np.cov(a[None], ddof=0), lambda a: np.corrcoef(a),
                               lambda a: np.cov(a) * 2.0])
def test_covariance_of_one_variable_has_numpys_result_type(f):
    want = f(X1)
    for got in (ad.vjp(f)(X1)[0], ad.stage(f, X1)(X1)):
        assert type(got) is type(want) and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda a: f(a) * 1.0)(X1),
                               central_gradient(lambda a: f(a) * 1.0, X1), atol=1e-7)

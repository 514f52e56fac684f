"""NumPy options that used to be refused on traced arrays: memory orders, ufunc where= without
out=, real eig results, polyfit's full/cov/rcond and weighted quantiles, against NumPy."""

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

X = np.arange(6.0).reshape(2, 3) + 0.5


@pytest.mark.parametrize("f", [
    lambda x: x.reshape(3, 2, order="F"),
    lambda x: np.reshape(x, (3, 2), order="F"),
    lambda x: x.ravel(order="F"),
    lambda x: x.flatten(order="F"),
    lambda x: x.reshape(1, 3, 2, order="F") * 2.0,
    lambda x: np.copy(x, order="F") + x.astype(np.float64, order="F"),
    lambda x: np.full_like(x, 2.0, order="F") * x,
])
def test_orders_match_numpy_and_differentiate(f):
    value, _ = ad.jvp(f)(X, tangents=np.ones_like(X))
    np.testing.assert_array_equal(value, f(X))
    np.testing.assert_array_equal(ad.stage(f, X)(X), f(X))
    check_grads(f, (X,), order=1)


@pytest.mark.parametrize("f", [
    lambda x: np.reshape(x, (6,), order="A"),
    lambda x: np.ravel(x, order="K"),
    lambda x: np.ravel(x.T, order="A"),
    lambda x: np.ravel(x.T, order="K"),
    lambda x: (x.T * 2.0).ravel("K"),  # a ufunc keeps its operand's (F) layout
    lambda x: x.T.reshape(2, 3, order="A"),
    lambda x: x[:, ::-1].T.flatten("K"),
])
def test_layout_orders_follow_the_memory_layout_and_are_refused_while_staging(f):
    # "A" and "K" read the layout: a dynamic transform has NumPy's arrays and reads theirs;
    # a staged value has none (the C order it assumed gave transposes' elements wrongly)
    value, pullback = ad.vjp(f)(X)
    np.testing.assert_array_equal(value, f(X))
    check_grads(f, (X,), order=1)
    with pytest.raises(ad.errors.TracingError, match="memory layout"):
        ad.stage(f, X)


@pytest.mark.parametrize("f", [
    lambda x: x.reshape(3, 2, order="Z"),
    lambda x: np.ravel(x, order="Q"),
    lambda x: np.copy(x, order="Z"),
    lambda x: x.astype(np.float32, order="Z"),
    lambda x: np.full_like(x, 1.0, order="Z"),
    lambda x: np.reshape(x, (6,), order="K"),
])
def test_bad_orders_raise_what_numpy_raises(f):
    with pytest.raises(ValueError):
        f(X)
    with pytest.raises(ValueError):
        ad.grad(lambda x: np.sum(f(x)))(X)


def test_a_non_string_order_is_a_type_error():
    with pytest.raises(TypeError):
        np.ones(2).copy(order=3)
    with pytest.raises(TypeError, match="order must be str"):
        ad.grad(lambda x: np.sum(x.copy(order=3)))(X)


def test_ufunc_where_without_out():
    f = lambda x: np.sin(x, where=x > 2.0)
    value, tangent = ad.jvp(f)(X, tangents=np.ones_like(X))
    mask = X > 2.0
    np.testing.assert_allclose(value[mask], np.sin(X)[mask])
    np.testing.assert_allclose(tangent[mask], np.cos(X)[mask])
    assert not np.any(tangent[~mask])
    np.testing.assert_allclose(ad.stage(f, X)(X)[mask], np.sin(X)[mask])


PX = np.linspace(0.0, 1.0, 7)
PY = np.sin(3 * PX)


@pytest.mark.parametrize("kw", [{}, {"rcond": 1e-3}, {"full": True}, {"cov": True},
                                {"cov": "unscaled"}, {"w": np.linspace(1, 2, 7), "cov": True},
                                {"full": True, "rcond": 0.5}])
@pytest.mark.parametrize("y", [PY, np.stack([PY, PY ** 2], axis=1)], ids=["1d", "2d"])
def test_polyfit_options_match_numpy(kw, y):
    want = np.polyfit(PX, y, 2, **kw)
    got = ad.jvp(lambda y: np.polyfit(PX, y, 2, **kw))(y, tangents=np.ones_like(y))[0]
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-9, atol=1e-12)
    if not kw.get("full"):  # full= reads the rank from the data
        pieces = lambda y: tuple(np.atleast_1d(p) * 1.0 for p in
                                 (np.polyfit(PX, y, 2, **kw) if kw else
                                  (np.polyfit(PX, y, 2),)))
        check_grads(pieces, (y,), order=1)
        staged = ad.stage(lambda y: np.polyfit(PX, y, 2, **kw), y)(y)
        for g, e in zip(staged if isinstance(staged, tuple) else (staged,),
                        want if isinstance(want, tuple) else (want,)):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12)


def test_polyfit_cov_needs_enough_points():
    with pytest.raises(ValueError, match="exceed order"):
        np.polyfit(PX[:3], PY[:3], 2, cov=True)
    with pytest.raises(ValueError, match="exceed order"):
        ad.grad(lambda y: np.sum(np.polyfit(PX[:3], y, 2, cov=True)[1]))(PY[:3])


QUANTILE_METHODS = ["inverted_cdf", "averaged_inverted_cdf", "closest_observation",
                    "interpolated_inverted_cdf", "hazen", "weibull", "linear", "median_unbiased",
                    "normal_unbiased", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("method", QUANTILE_METHODS)
@pytest.mark.parametrize("f", [np.quantile, np.nanquantile])
def test_every_quantile_method_matches_numpy(method, f):
    rng = np.random.default_rng(7)
    for n in range(1, 7):
        x = rng.standard_normal((2, n))
        x[1] = np.round(x[1])  # ties
        q = np.array([0.0, 1.0, 0.5, 1 / n, rng.random()])
        want = f(x, q, axis=1, method=method)
        got = ad.jvp(lambda x, q=q: f(x, q, axis=1, method=method))(
            x, tangents=np.ones_like(x))[0]
        np.testing.assert_allclose(got, want)
    staged = ad.stage(lambda x: f(x, q, axis=1, method=method), x)
    np.testing.assert_allclose(staged(x), want)


@pytest.mark.parametrize("shape_of_weights", ["full", "1d"])
def test_weighted_quantiles_match_numpy_and_route_the_gradient(shape_of_weights):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5))
    w = rng.integers(0, 3, (3, 5)).astype(float) + 0.25 if shape_of_weights == "full" \
        else np.array([0.0, 1.0, 2.0, 0.5, 1.0])
    q = np.array([0.0, 0.3, 0.5, 1.0])
    functions = [(np.quantile, 1), (np.percentile, 100)]
    if shape_of_weights == "full":  # NumPy 2.4's nan-quantiles fail on 1-D weights (IndexError)
        functions += [(np.nanquantile, 1), (np.nanpercentile, 100)]
    for f, scale in functions:
        want = f(x, q * scale, axis=1, weights=w, method="inverted_cdf")
        g = lambda x, f=f, scale=scale: f(x, q * scale, axis=1, weights=w,
                                          method="inverted_cdf")
        np.testing.assert_allclose(ad.jvp(g)(x, tangents=np.ones_like(x))[0], want)
        np.testing.assert_allclose(ad.stage(g, x)(x), want)
    grad = ad.grad(lambda x: np.sum(np.quantile(x, 0.5, axis=1, weights=w,
                                                method="inverted_cdf")))(x)
    assert grad.sum() == 3.0 and set(np.unique(grad)) <= {0.0, 1.0}  # one pick per row


def test_weights_need_inverted_cdf_and_non_negative_values():
    x = np.arange(4.0)
    for bad in (dict(weights=np.ones(4)), dict(weights=np.ones(4), method="linear")):
        with pytest.raises(ValueError, match="inverted_cdf"):
            np.quantile(x, 0.5, **bad)
        with pytest.raises(ValueError, match="inverted_cdf"):
            ad.grad(lambda x, bad=bad: np.quantile(x, 0.5, **bad))(x)
    with pytest.raises(ValueError, match="non-negative"):
        ad.grad(lambda x: np.quantile(x, 0.5, weights=-np.ones(4), method="inverted_cdf"))(x)

"""Probes of advect.scipy.special's reductions against SciPy 1.17: dtypes, result types, weights."""

import numpy as np
import pytest

import advect as ad

sc = pytest.importorskip("scipy.special")
from advect.scipy import special  # noqa: E402


def _same(eager, staged):
    assert type(staged) is type(eager)
    assert np.shape(staged) == np.shape(eager)
    assert np.asarray(staged).dtype == np.asarray(eager).dtype
    np.testing.assert_allclose(staged, eager, rtol=1e-14)


@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": (0, 1)}, {"b": np.array([1.0, -0.5, 2.0]),
                                                                 "return_sign": True}])
def test_logsumexp_of_a_full_reduction_is_a_numpy_scalar_as_in_scipy(kw):
    a = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 5.0]])
    if "axis" not in kw:
        a = a[0]
    f = lambda a: special.logsumexp(a, **kw)
    eager, staged = sc.logsumexp(a, **kw), ad.stage(f, a)(a)
    for e, s in zip(eager if isinstance(eager, tuple) else (eager,),
                    staged if isinstance(staged, tuple) else (staged,)):
        _same(e, s)
    if not kw.get("return_sign"):
        value, _ = ad.value_and_grad(lambda a: special.logsumexp(a, **kw).sum())(a)
        assert type(value) is np.float64


@pytest.mark.parametrize("kw", [{}, {"keepdims": True}, {"axis": 0, "keepdims": True},
                                {"b": 2.0, "keepdims": True},
                                {"return_sign": True, "keepdims": True}])
def test_logsumexp_of_a_0d_input_is_read_as_1d_as_in_scipy(kw):
    x = np.float64(3.0)
    eager, staged = sc.logsumexp(x, **kw), ad.stage(lambda a: special.logsumexp(a, **kw), x)(x)
    for e, s in zip(eager if isinstance(eager, tuple) else (eager,),
                    staged if isinstance(staged, tuple) else (staged,)):
        _same(e, s)


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.bool_])
def test_logsumexp_of_integers_is_float64_as_in_scipy(dtype):
    x = np.array([0, 1, 2]).astype(dtype)
    _same(sc.logsumexp(x), ad.stage(special.logsumexp, x)(x))  # was an OverflowError
    _same(sc.logsumexp(x, axis=0, keepdims=True),
          ad.stage(lambda a: special.logsumexp(a, axis=0, keepdims=True), x)(x))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [np.int8, np.int64])
def test_softmax_of_integers_matches_scipy(name, dtype):
    x = np.array([0, 1, 2], dtype=dtype)
    _same(getattr(sc, name)(x), ad.stage(getattr(special, name), x)(x))  # log_softmax overflowed


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_of_booleans_is_refused_as_in_scipy(name):
    x = np.array([True, False])
    with pytest.raises(TypeError):
        getattr(sc, name)(x)
    with pytest.raises(TypeError):
        ad.stage(getattr(special, name), x)


@pytest.mark.parametrize("bad", [np.inf, np.nan, 1000.0])
def test_logsumexp_drops_a_zero_weight_term_whatever_its_a_as_scipy_does(bad):
    a = np.array([bad, 1.0, 1.0])
    b = np.array([0.0, 1.0, 1.0])
    expected = sc.logsumexp(a, b=b)
    assert np.isfinite(expected)
    f = lambda a: special.logsumexp(a, b=b)
    _same(expected, ad.stage(f, a)(a))
    np.testing.assert_allclose(ad.grad(f)(a), [0.0, 0.5, 0.5])  # was all NaN


def test_logsumexp_keeps_the_weight_derivative_of_a_zero_weight_term():
    a = np.array([2.0, 1.0, 0.5])
    b = np.array([0.0, 1.0, 1.0])
    g = ad.grad(lambda b: special.logsumexp(a, b=b))(b)
    np.testing.assert_allclose(g, np.exp(a - sc.logsumexp(a, b=b)), rtol=1e-13)
    h = 1e-6
    e0 = np.array([1.0, 0.0, 0.0])
    fd = (sc.logsumexp(a, b=b + h * e0) - sc.logsumexp(a, b=b - h * e0)) / (2 * h)
    np.testing.assert_allclose(g[0], fd, rtol=1e-7)
    _, t = ad.jvp(lambda b: special.logsumexp(a, b=b))(b, tangents=e0)
    np.testing.assert_allclose(t, g[0], rtol=1e-13)


# --- scipy.linalg: a non-square matrix is refused with SciPy's ValueError -----------------------

def _linalg_calls():
    sl = pytest.importorskip("scipy.linalg")
    from advect.scipy import linalg

    return [(lambda a: sl.solve(a, np.ones(2)), lambda a: linalg.solve(a, np.ones(2))),
            (lambda a: sl.solve_triangular(a, np.ones(2)),
             lambda a: linalg.solve_triangular(a, np.ones(2))),
            (sl.cholesky, linalg.cholesky), (lambda a: sl.cho_factor(a)[0],
                                             lambda a: linalg.cho_factor(a)[0]),
            (sl.inv, linalg.inv), (sl.det, linalg.det),
            (lambda a: sl.eigh(a)[0], lambda a: linalg.eigh(a)[0])]


@pytest.mark.parametrize("index", range(7))
@pytest.mark.parametrize("shape", [(2, 3), (3,)])
def test_scipy_linalg_of_a_non_square_matrix_is_a_value_error(index, shape):
    scipy_f, advect_f = _linalg_calls()[index]
    m = np.ones(shape)
    with pytest.raises(ValueError):
        scipy_f(m)
    with pytest.raises(ValueError, match="square"):  # cholesky, eigh: a broadcasting error
        ad.stage(advect_f, m)
    with pytest.raises(ValueError, match="square"):
        ad.grad(lambda a: np.sum(advect_f(a)))(m)


# --- scipy.ndimage: float16 arrays are refused as SciPy refuses them -----------------------------

_FILTERS = [("gaussian_filter", {"sigma": 1.0}), ("gaussian_filter1d", {"sigma": 1.0}),
            ("gaussian_laplace", {"sigma": 1.0}), ("uniform_filter", {"size": 3}),
            ("uniform_filter1d", {"size": 3}), ("correlate", {"weights": np.ones((2, 2))}),
            ("convolve1d", {"weights": [1.0, 2.0]}), ("laplace", {}), ("sobel", {}),
            ("prewitt", {}), ("median_filter", {"size": 3}),
            ("rank_filter", {"rank": 1, "size": 3}),
            ("percentile_filter", {"percentile": 20, "size": 3}), ("minimum_filter", {"size": 3}),
            ("maximum_filter1d", {"size": 3}), ("grey_erosion", {"size": 3}),
            ("grey_opening", {"size": 3}), ("morphological_gradient", {"size": 3}),
            ("white_tophat", {"size": 3})]


@pytest.mark.parametrize("name,kw", _FILTERS, ids=[n for n, _ in _FILTERS])
@pytest.mark.parametrize("dtypes", [(np.float16, None), (np.float16, np.float32)])
def test_ndimage_refuses_float16_as_scipy_does(name, kw, dtypes):
    snd = pytest.importorskip("scipy.ndimage")
    from advect.scipy import ndimage

    x = np.linspace(0.0, 1.0, 20).reshape(4, 5).astype(dtypes[0])
    out = {} if dtypes[1] is None else {"output": dtypes[1]}
    with pytest.raises(RuntimeError):
        getattr(snd, name)(x, **kw, **out)
    with pytest.raises(RuntimeError, match="float16"):  # was a float16 result
        ad.stage(lambda v: getattr(ndimage, name)(v, **kw, **out), x)
    # float32 still works and matches
    x32 = x.astype(np.float32)
    staged = ad.stage(lambda v: getattr(ndimage, name)(v, **kw), x32)
    _same(getattr(snd, name)(x32, **kw), staged(x32))

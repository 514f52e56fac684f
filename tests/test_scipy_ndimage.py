"""advect.scipy.ndimage against scipy.ndimage: traced values in every boundary mode, derivatives
(central differences, both modes), exact transposes, staged programs that save and load."""

import json

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

nd = pytest.importorskip("scipy.ndimage")
from advect.scipy import ndimage  # noqa: E402

MODES = ["reflect", "constant", "nearest", "mirror", "wrap", "grid-constant", "grid-mirror",
         "grid-wrap"]
rng = np.random.default_rng(5)
X = rng.permutation(30).reshape(5, 6) * 0.37 + 0.1  # distinct values: no ties in rank filters
X1 = rng.uniform(-1, 1, 7)
W2 = rng.uniform(-1, 1, (3, 2))
FOOT = np.array([[1, 0, 1], [0, 1, 1]], bool)
STRUCT = np.array([[0.05, 0.0, 0.11], [0.0, 0.02, 0.07]])


def _traced(f, x):
    return ad.jvp(f)(x, tangents=np.zeros_like(x))[0]


def _reload(program):
    return ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))


# name, arguments after the input, keywords; every row runs in every mode
LINEAR = [
    ("correlate1d", (np.array([0.2, -1.0, 0.5]),), {"origin": 1}),
    ("convolve1d", (np.array([0.2, -1.0, 0.5, 0.3]),), {"axis": 0}),
    ("correlate", (W2,), {"cval": 0.7}),
    ("convolve", (W2,), {"origin": (0, -1)}),
    ("correlate", (np.array([1.0, -2.0, 0.5]),), {"axes": 1}),
    ("gaussian_filter1d", (0.8,), {"order": 1, "truncate": 3.0}),
    ("gaussian_filter", (1.1,), {}),
    ("gaussian_filter", ((0.7, 1.3),), {"order": (0, 2), "radius": (2, 3)}),
    ("gaussian_laplace", (0.9,), {}),
    ("uniform_filter1d", (4,), {"axis": 0, "origin": -1}),
    ("uniform_filter", ((2, 3),), {}),
    ("laplace", (), {}),
    ("sobel", (), {"axis": 0}),
    ("prewitt", (), {}),
]
RANK = [
    ("minimum_filter1d", (3,), {}),
    ("maximum_filter1d", (4,), {"axis": 0, "origin": 1}),
    ("minimum_filter", (), {"size": (2, 3)}),
    ("maximum_filter", (), {"footprint": FOOT}),
    ("median_filter", (), {"size": 3}),
    ("rank_filter", (2,), {"footprint": FOOT}),
    ("rank_filter", (-2,), {"size": (3, 2), "origin": (1, 0)}),
    ("percentile_filter", (70,), {"size": 3}),
    ("percentile_filter", (-20,), {"size": 2, "axes": (1,)}),
    ("grey_erosion", (), {"size": (2, 2)}),
    ("grey_erosion", (), {"structure": STRUCT}),
    ("grey_dilation", (), {"footprint": FOOT, "origin": (0, -1)}),
    ("grey_dilation", (), {"structure": STRUCT}),
    ("grey_opening", (), {"size": 3}),
    ("grey_closing", (), {"structure": STRUCT}),
    ("morphological_gradient", (), {"size": 2}),
    ("morphological_laplace", (), {"footprint": FOOT}),
    ("white_tophat", (), {"size": (2, 3)}),
    ("black_tophat", (), {"size": 2}),
]
ROWS = LINEAR + RANK


def _ids(rows):
    return [f"{name}{i}" for i, (name, _, _) in enumerate(rows)]


def _filter(name, args, kw, mode):
    kw = dict(kw, mode=mode)
    return lambda x: getattr(ndimage, name)(x, *args, **kw), \
        lambda x: getattr(nd, name)(x, *args, **kw)


@pytest.mark.parametrize("name, args, kw", ROWS, ids=_ids(ROWS))
def test_values_match_scipy_in_every_mode(name, args, kw):
    x = X1 if name.endswith("1d") and kw.get("axis") is None else X
    for mode in MODES:
        ours, theirs = _filter(name, args, kw, mode)
        np.testing.assert_allclose(_traced(ours, x), theirs(x), rtol=1e-13, atol=1e-13,
                                   err_msg=f"mode={mode}")


def _check_derivatives(name, args, kw, mode):
    ours, _ = _filter(name, args, kw, mode)
    check_grads(ours, (X,), order=2 if name in {row[0] for row in LINEAR} else 1)


@pytest.mark.parametrize("row", range(len(ROWS)), ids=_ids(ROWS))
def test_derivatives_in_both_modes(row):
    _check_derivatives(*ROWS[row], MODES[row % len(MODES)])  # every mode across the rows


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name, args, kw", ROWS, ids=_ids(ROWS))
def test_derivatives_in_every_mode(name, args, kw, mode):
    _check_derivatives(name, args, kw, mode)


@pytest.mark.parametrize("name, args, kw", ROWS, ids=_ids(ROWS))
def test_staged_programs_save_and_load(name, args, kw):
    ours, theirs = _filter(name, args, kw, "mirror")
    program = _reload(ad.stage(ours, X))
    np.testing.assert_allclose(program(X), theirs(X), rtol=1e-13, atol=1e-13)
    loss = lambda x: np.sum(ours(x) ** 2)  # noqa: E731
    np.testing.assert_allclose(ad.grad(_reload(ad.stage(loss, X)))(X), ad.grad(loss)(X),
                               rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", MODES)
def test_linear_filter_transpose_is_the_exact_adjoint_matrix(mode):
    f = lambda x: ndimage.gaussian_filter1d(x, 1.2, mode=mode, cval=0.0)  # noqa: E731
    x = rng.uniform(size=9)
    matrix = np.stack([nd.gaussian_filter1d(e, 1.2, mode=mode) for e in np.eye(9)], axis=1)
    _, pullback = ad.vjp(f)(x)
    ct = rng.uniform(size=9)
    np.testing.assert_allclose(pullback(ct), matrix.T @ ct, rtol=1e-13, atol=1e-15)


def test_weights_are_differentiable_too():
    check_grads(lambda x, w: ndimage.correlate(x, w, mode="wrap"), (X, W2), order=2)
    check_grads(lambda w: ndimage.convolve1d(X1, w, mode="nearest"), (np.array([0.1, 0.5]),))


def test_rank_filter_cotangent_reaches_the_selected_element():
    x = np.array([3.0, 1.0, 2.0, 5.0, 4.0])
    g = ad.grad(lambda x: ndimage.median_filter(x, size=3)[3])(x)  # median of (2, 5, 4) is 4
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0, 0.0, 1.0])


def test_complex_input_to_linear_filters():
    z = X + 1j * X[::-1]
    np.testing.assert_allclose(_traced(lambda z: ndimage.uniform_filter(z, 3), z),
                               nd.uniform_filter(z.real, 3) + 1j * nd.uniform_filter(z.imag, 3),
                               rtol=1e-13)
    check_grads(lambda z: ndimage.gaussian_filter(z, 0.8), (z,), order=1)


def test_float32_stays_float32_and_output_dtype():
    x = X.astype(np.float32)
    assert ad.grad(lambda x: ndimage.gaussian_filter(x, 1.0).sum())(x).dtype == np.float32
    assert _traced(lambda x: ndimage.sobel(x, output=np.float64), x).dtype == np.float64


def test_bad_arguments_raise_like_scipy():
    with pytest.raises(ValueError, match="boundary mode"):
        ad.grad(lambda x: ndimage.uniform_filter(x, 3, mode="bogus").sum())(X)
    with pytest.raises(ValueError, match="invalid origin"):
        ad.grad(lambda x: ndimage.uniform_filter1d(x, 3, origin=2).sum())(X1)
    with pytest.raises(TypeError, match="complex"):
        ad.grad(lambda x: ndimage.median_filter(x + 0j, 3).real.sum())(X)


def test_output_array_is_written_and_returned():
    def f(x):
        out = np.zeros_like(x)
        returned = ndimage.uniform_filter(x, 3, output=out)
        return np.sum(returned * out)
    np.testing.assert_allclose(_traced(f, X), np.sum(nd.uniform_filter(X, 3) ** 2), rtol=1e-13)
    check_grads(f, (X,), order=1)


@pytest.mark.parametrize("call", [
    lambda x: ndimage.correlate1d(x, np.array([1.0, 2.0]), axis=2),
    lambda x: ndimage.gaussian_filter1d(x, 1.0, axis=-3),
    lambda x: ndimage.uniform_filter1d(x, 2, axis=2),
    lambda x: ndimage.sobel(x, axis=2),
    lambda x: ndimage.prewitt(x, axis=-3),
])
def test_an_axis_out_of_range_is_an_axis_error_as_in_scipy(call):
    # it used to wrap around to another axis: a silent wrong answer
    x = np.arange(6.0).reshape(2, 3)
    with pytest.raises(np.exceptions.AxisError):
        call(x)  # SciPy itself
    with pytest.raises(np.exceptions.AxisError):
        ad.grad(lambda v: np.sum(call(v)))(x)

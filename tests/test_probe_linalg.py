"""Silent wrong answers found by probing linear algebra, products and complex code.

Each test holds one fixed bug against its oracle: NumPy's (or SciPy's) own value, shape, dtype
and type (NumPy scalar or 0-d array), or central differences for derivatives.
"""

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient

LA = np.linalg


def _same(got, want):
    assert type(got) is type(want)
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12)


def _both_lifetimes(f, *args):
    """f's value in a dynamic transform and in a staged program, against NumPy's."""
    want = f(*args)
    _same(ad.vjp(f, argnums=tuple(range(len(args))))(*args)[0], want)
    _same(ad.stage(f, *args)(*args), want)


def test_hermitian_svd_of_an_integer_matrix_keeps_its_diagonal():
    # the mask that halves the diagonal was cast to the integer dtype: 0.5 -> 0
    a = np.array([[2, 1, 0], [1, 3, 1], [0, 1, -4]])

    def f(a):
        return LA.svd(a, hermitian=True, compute_uv=False)
    _same(ad.stage(f, a)(a), f(a))


def test_hermitian_pinv_gradient_reads_the_lower_triangle():
    # the JVP differentiated pinv(a) instead of pinv of the Hermitian matrix NumPy inverts
    a = np.random.default_rng(0).standard_normal((3, 3))
    w = np.random.default_rng(1).standard_normal((3, 3))

    def loss(a):
        return np.sum(LA.pinv(a, hermitian=True) * w)
    want = central_gradient(loss, a)
    np.testing.assert_allclose(ad.grad(loss)(a), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ad.grad(ad.stage(loss, a))(a), want, rtol=1e-5, atol=1e-6)


def test_pinv_with_rtol_none_uses_the_array_api_cutoff():
    # rtol=None means max(m, n) * eps in NumPy 2, not the 1e-15 of a missing rtol
    a = np.diag([5.0, 1.0, 4e-15])

    def f(a):
        return LA.pinv(a, rtol=None)
    np.testing.assert_allclose(ad.vjp(f)(a)[0], f(a))
    np.testing.assert_allclose(ad.stage(f, a)(a), f(a))


@pytest.mark.parametrize("ord", [1, -1, np.inf, -np.inf])
def test_matrix_norm_of_one_matrix_is_a_numpy_scalar(ord):
    a = np.arange(6.0).reshape(2, 3) - 2
    _both_lifetimes(lambda a: LA.norm(a, ord), a)
    _both_lifetimes(lambda a: LA.norm(a, ord, axis=(1, 0), keepdims=True), a)
    stack = np.arange(24.0).reshape(2, 3, 4)
    _both_lifetimes(lambda x: LA.norm(x, ord, axis=(2, 0)), stack)


def test_multi_dot_between_two_vectors_is_a_numpy_scalar():
    a, v = np.arange(9.0).reshape(3, 3), np.arange(3.0)
    _both_lifetimes(lambda a, v: LA.multi_dot([v, a, a, v]), a, v)


def test_inner_of_two_vectors_is_a_numpy_scalar():
    v, w = np.arange(3.0), np.array([1.0, -2.0, 0.5])
    _both_lifetimes(np.inner, v, w)
    _both_lifetimes(np.inner, v.astype(np.complex64), w.astype(np.complex64))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.float64])
def test_scipy_det_has_scipys_dtype(dtype):
    sl = pytest.importorskip("scipy.linalg")
    from advect.scipy import linalg as al

    a = (np.eye(3) * 2 + np.arange(9.0).reshape(3, 3) / 10).astype(dtype)
    _both_lifetimes(al.det, a)
    assert type(al.det(a)) is type(sl.det(a))
    assert ad.grad(lambda a: np.real(al.det(a)))(a).dtype == dtype  # precision is kept


@pytest.mark.parametrize("f", [
    lambda x: np.fft.fftn(x, s=(3, 5), axes=(1, 1)),  # resized 5 then 3, as NumPy steps
    lambda x: np.fft.ifftn(x, s=(3, 5, 2), axes=(1, 2, 1), norm="ortho"),
    lambda x: np.fft.rfftn(x.real, axes=(1, 1)),
    lambda x: np.fft.rfftn(x.real, axes=(2, 0, 2, 1), s=(3, 2, 5, 4)),
    lambda x: np.fft.irfftn(x, axes=(2, 2)),
    lambda x: np.fft.irfftn(x, axes=(1, 2, 1), s=(5, 4, 3)),
], ids=["fftn", "ifftn", "rfftn", "rfftn-s", "irfftn", "irfftn-s"])
@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="NumPy 2.0 resizes repeated FFT axes differently; Advect follows 2.1+")
def test_fft_over_a_repeated_axis_follows_numpys_steps(f):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    _both_lifetimes(f, x)
    w = rng.standard_normal(np.shape(f(x)))

    def loss(x):
        return np.sum(np.real(f(x)) * w)
    want = central_gradient(lambda x: loss(x), x.real) + 1j * central_gradient(
        lambda y: loss(x.real + 1j * y), x.imag)
    np.testing.assert_allclose(ad.grad(loss)(x), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ad.grad(ad.stage(loss, x))(x), want, rtol=1e-5, atol=1e-6)


def test_fft_length_must_be_an_integer():
    x = np.ones(4)
    with pytest.raises(TypeError):
        np.fft.fft(x, n=4.0)
    with pytest.raises(TypeError):
        ad.vjp(lambda x: np.fft.fft(x, n=4.0))(x)
    with pytest.raises(TypeError):
        ad.stage(lambda x: np.fft.fftn(x, s=(4.0,)), x)


@pytest.mark.parametrize("kw", [{"rtol": np.array([0.1, 1e-6, 0.9])},
                                {"rtol": np.array([[0.1, 1e-6, 0.9]])},
                                {"tol": np.array([[0.1], [1e-6]])}],
                         ids=["rtol-per-matrix", "rtol-leading-axis", "tol-leading-axis"])
def test_matrix_rank_with_an_array_tolerance(kw):
    # rtol was not given its trailing axis, and the count ran along the wrong axis when the
    # tolerance added leading ones: a (3, 3) stack of singular values silently broadcast
    a = np.random.default_rng(0).standard_normal((3, 3, 3))
    a[0, 2] = a[0, 1] + 1e-3 * a[0, 0]

    def f(a):
        return LA.matrix_rank(a, **kw)
    np.testing.assert_array_equal(ad.stage(f, a)(a), f(a))
    np.testing.assert_array_equal(ad.vjp(f)(a)[0], f(a))

"""Regressions for silent wrong answers in mutation and view semantics."""

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient

RNG = np.random.default_rng(0)
X1 = RNG.standard_normal(6)
X2 = RNG.standard_normal((3, 4))


def _matches_numpy(f, x):
    """Value against eager NumPy, gradient against central differences, jvp against the
    gradient, and the staged program (and staged gradient) against eager at a new input."""
    before = x.copy()
    value, grad = ad.value_and_grad(f)(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(f, x), rtol=1e-5, atol=1e-7)
    tangent = RNG.standard_normal(x.shape)
    _, jv = ad.jvp(f)(x, tangents=tangent)
    np.testing.assert_allclose(jv, np.sum(grad * tangent), rtol=1e-9, atol=1e-12)
    other = RNG.standard_normal(x.shape)
    np.testing.assert_allclose(ad.stage(f, x)(other), f(other.copy()), rtol=1e-12)
    np.testing.assert_allclose(ad.stage(ad.grad(f), x)(other), ad.grad(f)(other), rtol=1e-12)


# --- y[i, ...] is a 0-d view in NumPy (y[i] is a scalar copy) -------------------------------

def _zero_d_view_iadd(x):
    y = x.copy()
    v = y[0, ...]
    v += x[5] ** 2
    return np.sum(y**2 * x)


def _zero_d_view_setitem(x):
    y = x.copy()
    v = y[2, ...]
    v[...] = np.sin(x[0])
    return np.sum(y**2 * x)


def _zero_d_view_2d(x):
    y = x.copy()
    v = y[1, 2, ...]
    v *= x[0, 0]
    return np.sum(y**2 * x)


def _zero_d_view_of_view(x):
    y = x.copy()
    row = y[1]
    v = row[..., 3]
    v -= x[2, 1] ** 3
    return np.sum(y * x)


@pytest.mark.parametrize("f, x", [
    (_zero_d_view_iadd, X1), (_zero_d_view_setitem, X1), (_zero_d_view_2d, X2),
    (_zero_d_view_of_view, X2),
], ids=["iadd", "setitem", "2d", "view-of-view"])
def test_zero_d_ellipsis_view_writes_through(f, x):
    _matches_numpy(f, x)


def test_zero_d_ellipsis_view_goes_stale_after_a_write():
    def f(x):
        y = x.copy()
        v = y[0, ...]
        y[0] = 5.0  # NumPy's v now reads 5.0: the old value would be a silent wrong answer
        return v * 1.0

    with pytest.raises(ad.StaleViewError):
        ad.grad(f)(X1)


def test_zero_d_ellipsis_view_of_an_input_is_not_writable():
    def f(x):
        v = x[0, ...]
        v += 1.0
        return np.sum(x)

    x = X1.copy()
    with pytest.raises(ad.MutationError, match="input"):
        ad.grad(f)(x)
    np.testing.assert_array_equal(x, X1)


def test_integer_scalar_reads_stay_copies():
    def f(x):
        y = x.copy()
        a = y[0]
        a += 1.0  # a NumPy scalar: y is unchanged
        y[0] = 3.0
        return a * np.sum(y * x)

    _matches_numpy(f, X1)


# --- np.diag of a 2-d array is NumPy's (read-only) diagonal view ------------------------------

def test_diag_of_matrix_goes_stale_after_a_write():
    def f(x):
        y = x.copy()
        d = np.diag(y)
        y[0, 0] = 5.0  # NumPy's d[0] now reads 5.0
        return np.sum(d)

    with pytest.raises(ad.StaleViewError):
        ad.grad(f)(X2)


def test_diag_of_matrix_refuses_writes():
    def owned(x):
        y = x.copy()
        np.diag(y)[0] = 1.0
        return np.sum(y)

    def of_input(x):
        d = np.diag(x)
        d += 1.0
        return np.sum(d)

    for f in (owned, of_input):
        with pytest.raises(ad.MutationError):
            ad.grad(f)(X2)


def test_diag_reads_and_constructions_still_differentiate():
    def read_before_write(x):
        y = x.copy()
        total = np.sum(np.diag(y, 1) ** 2)
        y[0, 1] = 0.0
        return total + np.sum(y * x)

    def build(v):
        m = np.diag(v)  # 1-d input: a new owned array, writable
        m[0, 1] = v[0] ** 2
        return np.sum(m * m)

    _matches_numpy(read_before_write, X2)
    _matches_numpy(build, X1[:3])


# --- split pieces and unstacked slices are views, as NumPy's --------------------------------

def _write_through_pieces(x):
    y = x.copy()
    first = np.split(y, 2, axis=0)[0]
    first *= 3.0  # reaches y, as in NumPy
    column = np.unstack(y, axis=1)[1] if hasattr(np, "unstack") else y[:, 1]
    column += 1.0
    return np.sum(y ** 2 * x)


def test_writes_through_split_pieces_reach_the_array():
    import advect as ad

    x = np.arange(1.0, 7.0).reshape(2, 3)
    expected = _write_through_pieces(x)
    assert ad.stage(_write_through_pieces, x)(x) == expected
    eps = 1e-6
    basis = np.eye(6).reshape(6, 2, 3)
    fd = np.array([(_write_through_pieces(x + eps * e) - _write_through_pieces(x - eps * e))
                   / (2 * eps) for e in basis]).reshape(2, 3)
    for g in (ad.grad(_write_through_pieces)(x),
              ad.grad(ad.stage(_write_through_pieces, x))(x)):
        np.testing.assert_allclose(g, fd, rtol=1e-6)


def test_a_split_piece_of_an_input_is_read_only():
    import advect as ad
    from advect.errors import MutationError

    def f(x):
        piece = np.array_split(x, 2)[0]
        piece *= 2.0  # NumPy would change the caller's array
        return np.sum(x)

    with pytest.raises(MutationError):
        ad.grad(f)(np.ones(4))

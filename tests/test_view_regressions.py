"""Regressions for silent wrong answers about views and 0-d arrays in traced code, compared
against NumPy in both lifetimes (dynamic transforms and ``ad.stage``)."""

import inspect
import warnings

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient

RNG = np.random.default_rng(3)
X1 = RNG.standard_normal(3)
X2 = RNG.standard_normal((2, 3))


def _matches_numpy(f, x):
    """Value against eager NumPy and the gradient against central differences, dynamic and
    staged; the caller's input is never written."""
    before = x.copy()
    expected = f(x.copy())
    value, grad = ad.value_and_grad(f)(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(f, x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ad.stage(f, x)(x), expected, rtol=1e-12)
    np.testing.assert_allclose(ad.grad(ad.stage(f, x))(x), grad, rtol=1e-12)
    np.testing.assert_array_equal(x, before)


def _both_raise(f, x, error, match=None):
    with pytest.raises(error, match=match):
        ad.grad(f)(x)
    with pytest.raises(error, match=match):
        ad.stage(f, x)


def _numpy_raises(f, x, error=ValueError, match="read-only"):
    with warnings.catch_warnings(), pytest.raises(error, match=match):
        warnings.simplefilter("error")  # NumPy's deprecated writable broadcast views
        f(x.copy())


# --- np.broadcast_arrays pieces are read-only views, not detached copies ---------------------

def _broadcast_piece(y):
    return np.broadcast_arrays(y, np.zeros((2, 1)))[0]


def test_broadcast_arrays_pieces_are_views():
    def read_after_write(x):  # NumPy's piece reads 5.0: Advect's copy read the old values
        y = x * 1.0
        b = _broadcast_piece(y)
        y[0] = 5.0
        return np.sum(b * x)

    def read_before_write(x):
        y = x * 1.0
        total = np.sum(_broadcast_piece(y) ** 2)
        y[0] = 5.0
        return total + np.sum(y * x)

    def write(x):
        b = _broadcast_piece(x * 1.0)
        b[0, 0] = 1.0
        return np.sum(b)

    _both_raise(read_after_write, X1, ad.StaleViewError)
    _matches_numpy(read_before_write, X1)
    _numpy_raises(write, X1, (ValueError, DeprecationWarning), "read-only|writing to an array")
    _both_raise(write, X1, ValueError, "read-only")
    _both_raise(write, X1, ad.MutationError)
    _both_raise(lambda x: np.sum(write(x) + x), X1, ValueError, "read-only")


# --- np.meshgrid(copy=False) pieces are views; copy=True pieces are new arrays ---------------

def test_meshgrid_views_and_copies():
    def no_copy_read_after_write(x):
        y = x * 1.0
        grid, _ = np.meshgrid(y, y[:2], copy=False)
        y[1] = 9.0
        return np.sum(grid * x)

    def no_copy_write(x):
        y = x * 1.0
        grid, _ = np.meshgrid(y, y, copy=False)
        grid[0, 0] = 1.0
        return np.sum(y)

    def copy_write(x):  # one operand: the grid was x * 1.0 itself, so writes reached y
        y = x * 1.0
        (grid,) = np.meshgrid(y)
        grid[0] = 5.0
        return np.sum(y * x) + np.sum(grid * x)

    _both_raise(no_copy_read_after_write, X1, ad.StaleViewError)
    _numpy_raises(no_copy_write, X1, (ValueError, DeprecationWarning),
                  "read-only|writing to an array")
    _both_raise(no_copy_write, X1, ValueError, "read-only")
    _matches_numpy(copy_write, X1)


# --- sliding_window_view windows are NumPy's read-only views --------------------------------

def test_sliding_window_view_is_a_read_only_view():
    windows = np.lib.stride_tricks.sliding_window_view

    def read_after_write(x):
        y = x * 1.0
        w = windows(y, 2)
        y[0] = 5.0
        return np.sum(w * x[:2])

    def write(x):
        w = windows(x * 1.0, 2)
        w[0, 0] = 5.0
        return np.sum(w)

    def write_input(x):
        windows(x, 2)[0, 0] = 5.0
        return np.sum(x)

    _both_raise(read_after_write, X1, ad.StaleViewError)
    for f in (write, write_input):
        _numpy_raises(f, X1)
        _both_raise(f, X1, ValueError, "assignment destination is read-only")
    _matches_numpy(lambda x: np.sum(windows(x * x, 2) * x[:2]), X1)


# --- a 0-d ndarray is written in place by an in-place operator (a NumPy scalar rebinds) -----

def test_in_place_operators_write_a_0d_array():
    def alias(x):  # NumPy: w is v, so it sees the update; Advect rebound v and w stayed 0
        v = np.zeros((), like=x)
        w = v
        v += np.sum(x * x)
        v *= x[0]
        return w * 1.0

    def like(x):
        v = np.zeros_like(x[0])
        w = v
        v += x[1] ** 2
        return w * x[2]

    def running(x):
        acc = np.full((), 0.5, like=x)
        seen = []
        for i in range(3):
            seen.append(acc)
            acc += np.sin(x[i]) * acc
        return seen[0] * 2.0 + acc

    def copies(x):  # a copy of a 0-d array is an array; of a scalar, a scalar
        a = np.ones((), like=x).copy()
        w = a
        a += x[0]
        s = (x[1] * 1.0).copy()
        t = s
        s += 1.0
        return w * t

    def scalar(x):  # np.sum(x) is a NumPy scalar: v += rebinds, w keeps the old value
        v = np.sum(x)
        w = v
        v += x[0]
        return w * v

    for f in (alias, like, running, copies, scalar):
        _matches_numpy(f, X1)
        _, tangent = ad.jvp(f)(X1, tangents=np.ones(3))
        np.testing.assert_allclose(tangent, np.sum(central_gradient(f, X1)), rtol=1e-5)


@pytest.mark.parametrize("make", [
    lambda x: np.where(x[0] > 0, x[1], 0.0),
    lambda x: np.select([x[0] > 0], [x[1]]),
    lambda x: np.copy(np.sum(x)),
    lambda x: np.asarray(np.sum(x), like=x),
    lambda x: np.astype(np.zeros((), like=x), np.float64),
], ids=["where", "select", "copy", "asarray", "astype"])
def test_0d_array_results_of_functions_are_written_in_place(make):
    def f(x):  # NumPy gives these 0-d results as arrays: the alias w sees the update
        v = make(x)
        w = v
        v += x[2]
        return np.sum(w * x)

    _matches_numpy(f, np.abs(X1) + 0.5)


def test_0d_indexing_distinguishes_arrays_and_scalars():
    def item_of_array(x):  # a[()] of a 0-d array is a scalar copy: a is not written
        a = np.zeros((), like=x)
        s = a[()]
        s += x[0]
        return a + s * x[1]

    def array_of_scalar(x):  # s[...] of a NumPy scalar is a new 0-d array: s is not written
        s = np.sum(x)
        r = s[...]
        r += 1.0
        return s * r

    for f in (item_of_array, array_of_scalar):
        _matches_numpy(f, X1)


def test_in_place_operator_on_a_python_scalar_input_rebinds():
    def f(x):  # x is a Python float: x += 1.0 rebinds it (it raised MutationError)
        x += 1.0
        return x * x

    assert ad.grad(f)(2.0) == pytest.approx(6.0)
    assert ad.stage(f, 2.0)(2.0) == pytest.approx(9.0)
    with pytest.raises(ad.MutationError):  # a 0-d ndarray input is still never written
        ad.grad(f)(np.array(2.0))


# --- tuple and linalg results of NumPy's view functions are views ---------------------------

@pytest.mark.parametrize("make, view", [
    (lambda x: x * 1.0, lambda y: np.atleast_2d(y, y[1:])[0]),
    (lambda x: x * 1.0, lambda y: np.atleast_3d(y[1:], y)[1]),
    (lambda x: np.outer(x, x)[None] * 1.0, np.linalg.diagonal),
    (lambda x: np.outer(x, x) * 1.0, np.linalg.matrix_transpose),
], ids=["atleast_2d", "atleast_3d", "linalg.diagonal", "linalg.matrix_transpose"])
def test_more_view_functions_give_views(make, view):
    def read_after_write(x):  # NumPy's view reads the new value; Advect's copy the old one
        y = make(x)
        v = view(y)
        y[0] = 5.0
        return np.sum(np.real(v) * x[-1])

    def read_before_write(x):
        y = make(x)
        total = np.sum(np.real(view(y)) * x[-1])
        y[0] = 5.0
        return total + np.sum(np.real(y))

    read_after_write(X1.copy())  # NumPy runs it
    _both_raise(read_after_write, X1, ad.StaleViewError)
    _matches_numpy(read_before_write, X1)


def test_real_if_close_gives_the_real_view():  # dynamic only: its dtype depends on the data
    def read_after_write(x):
        y = x * (1.0 + 0j)
        r = np.real_if_close(y)
        y[0] = 5.0
        return np.sum(r * x)

    def read_before_write(x):
        y = x * (1.0 + 0j)
        total = np.sum(np.real_if_close(y) * x)
        y[0] = 5.0
        return total + np.sum(np.real(y))

    with pytest.raises(ad.StaleViewError):
        ad.grad(read_after_write)(X1)
    value, grad = ad.value_and_grad(read_before_write)(X1)
    np.testing.assert_allclose(value, read_before_write(X1), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(read_before_write, X1), rtol=1e-5)


def test_diagonal_and_broadcast_to_writes_raise_numpys_value_error():
    def diagonal(x):
        y = np.outer(x, x)
        np.diagonal(y)[0] = 1.0
        return np.sum(y)

    def broadcast_to(x):
        b = np.broadcast_to(x * 1.0, (2, 3))
        b[0, 0] = 1.0
        return np.sum(b)

    for f in (diagonal, broadcast_to):
        _numpy_raises(f, X1)
        _both_raise(f, X1, ValueError, "assignment destination is read-only")


# --- copy=True gives a new array, also where no reshape or cast is needed --------------------

_RESHAPE_COPY = pytest.mark.skipif("copy" not in inspect.signature(np.reshape).parameters,
                                   reason="np.reshape(copy=) needs NumPy 2.1")


@pytest.mark.parametrize("copy", [
    pytest.param(lambda y: np.reshape(y, (3,), copy=True), marks=_RESHAPE_COPY),
    pytest.param(lambda y: np.reshape(y, (3, 1), copy=True), marks=_RESHAPE_COPY),
    lambda y: np.astype(y, np.float64, copy=True),
], ids=["reshape-same-shape", "reshape", "astype"])
def test_copy_true_results_are_new_arrays(copy):
    def f(x):  # the result was y itself (or a read-only view of it)
        y = x * 1.0
        c = copy(y)
        c[0] = 5.0
        y[1] = 2.0
        return np.sum(y * x) + np.sum(c * x)

    _matches_numpy(f, X1)

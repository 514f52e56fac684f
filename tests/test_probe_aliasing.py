"""Regressions that probing NumPy's aliasing semantics found.

Each row is a program that writes into memory it also reads (views, views of views, overlapping
``out=``, traced indices, NumPy scalars). Advect either gives eager NumPy's value, with the
central-difference derivative of the same NumPy code, in the dynamic lifetime and staged, or
raises where NumPy's answer depends on the order in which it writes memory.
"""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad

X = np.array([1.3, -1.2, 0.7, 2.1, 0.5, -0.4])
A = np.array([[0.3, -1.2, 0.7], [2.1, 0.5, -0.4], [1.1, 0.9, -2.0]])


def _dynamic(f, x):
    out, pullback = ad.vjp(f)(x)
    pullback.close()
    return out


def _staged(f, x):
    program = ad.stage(f, x)
    program(x)
    return program(x)  # a second call: no state left over from the first


LIFETIMES = [pytest.param(_dynamic, id="dynamic"), pytest.param(_staged, id="stage")]


def _central(f, x, w, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = np.sum((f(up) - f(down)) * w) / (2 * eps)
    return grad


def _matches_numpy(run, f, x):
    x0, ref = x.copy(), f(x.copy())
    np.testing.assert_allclose(run(f, x), ref, rtol=1e-12)
    w = np.linspace(-1.0, 1.5, ref.size).reshape(ref.shape)
    grad = ad.grad(lambda x: np.sum(f(x) * w))(x)
    np.testing.assert_allclose(grad, _central(f, x, w), rtol=1e-6, atol=1e-7)
    program = ad.stage(f, x)
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(program(x) * w))(x), grad, rtol=1e-12)
    np.testing.assert_array_equal(x, x0)  # the caller's input never changes


# --- a traced 0-d integer index is an integer to NumPy: y[i] is a view ---------------------------

def _row_at_argmax(a):
    y = a * 1.0
    r = y[np.argmax(a[:, 0])]  # a NumPy integer scalar: a basic index, a view of y
    r *= a[0] ** 2
    return y


def _zero_d_view_at_argmax(a):
    y = a * 1.0
    r = y[np.argmax(a[:, 0]), ...]
    r[...] = r[::-1] * a[0]
    return y


def _view_of_view_at_argmax(a):
    y = a * 1.0
    y[np.argmax(a[:, 0])][1:] = a[2, :2] ** 2
    return y


def _column_at_count(a):
    y = a * 1.0
    c = y[:, np.sum(a > 0) - 5]
    c += a[1]
    return y


def _augmented_at_argmin(x):
    y = x * 1.0
    y[np.argmin(x)] += x[0]
    return y


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("f", [_row_at_argmax, _zero_d_view_at_argmax, _view_of_view_at_argmax,
                               _column_at_count], ids=lambda f: f.__name__)
def test_a_traced_integer_index_gives_a_view(run, f):
    _matches_numpy(run, f, A)


def test_a_traced_integer_index_still_writes_and_goes_stale():
    _matches_numpy(_dynamic, _augmented_at_argmin, X)

    def stale(a):
        y = a * 1.0
        r = y[np.argmax(a[:, 0])]
        y[0, 0] = 1.0
        return r

    with pytest.raises(ad.StaleViewError):
        _dynamic(stale, A)


def test_a_python_integer_argument_of_a_staged_function_indexes_a_view():
    def f(a, i):
        y = a * 1.0
        r = y[i]
        r *= a[0]
        return y

    program = ad.stage(f, A, 1)
    for i in (1, 2):
        np.testing.assert_allclose(program(A, i), f(A.copy(), i), rtol=1e-12)


def test_a_view_keeps_the_index_it_was_taken_at():
    def moved(a):
        y = a * 1.0
        i = np.zeros((), dtype=np.int64, like=a)  # a 0-d ndarray: an advanced index, a copy
        i += 2
        j = np.argmax(a[:, 0])
        r, s = y[i], y[j]
        j = j - 1  # rebinds j; the view s stays at row 1
        s *= a[0]
        r *= 2.0  # a copy: y is unchanged
        return y

    _matches_numpy(_dynamic, moved, A)


# --- a 0-d ndarray index is an advanced index to NumPy: y[np.array(1)] is a copy -----------------

@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("key", [np.array(1), (np.array(1), slice(1, None))], ids=repr)
def test_a_zero_d_array_index_gives_a_copy(run, key):
    def f(a):
        y = a * 1.0
        r = y[key]
        r += a[0, 1:] if r.shape == (2,) else a[0]
        y[key] *= 2.0  # item assignment still writes
        return y

    _matches_numpy(run, f, A)


def test_a_numpy_integer_index_still_gives_a_view():
    def f(a):
        y = a * 1.0
        r = y[np.int64(1), 1:]
        r *= a[0, 1:]
        return y

    _matches_numpy(_dynamic, f, A)


# --- ndarray.conj() of a real array is the array itself -------------------------------------------

@pytest.mark.parametrize("run", LIFETIMES)
def test_conj_method_of_a_real_array_is_the_array(run):
    def f(x):
        y = x * 1.0
        c = y.conj()
        c[0] = x[1] ** 2  # NumPy writes y
        d = y.conjugate()
        d *= x
        return y

    _matches_numpy(run, f, X)
    z = X + 1j * X[::-1]
    np.testing.assert_allclose(run(lambda z: z.conj() * 1.0, z), z.conj())


# --- out= of concatenate and stack: NumPy writes the inputs one after another --------------------

@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("write", [
    lambda y, x: np.concatenate([y[3:], y[:3]], out=y),
    lambda y, x: np.concatenate([y[1:], y[:1]], out=y),
    lambda y, x: np.concatenate([y[::2], y[1::2]], out=y),
    lambda y, x: np.concatenate([2 * x[:1], y[:-1]], out=y),
    lambda y, x: np.concatenate([y[4:], y[:4]], axis=None, out=y),
], ids=["swap-halves", "rotate", "even-odd", "shift", "axis-none"])
def test_concatenate_out_reading_what_it_overwrote_raises(run, write):
    def f(x):
        y = x * 1.0
        write(y, x)
        return y

    with pytest.raises(ad.StaleViewError, match="writes its destination in order"):
        run(f, X)


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("write", [
    lambda y: np.stack([y[1], y[0], y[2]], out=y),
    lambda y: np.stack([y[2], y[1], y[0]], out=y),
    lambda y: np.concatenate([y[:, 1:], y[:, :1]], axis=1, out=y),
], ids=["stack-swap", "stack-reverse", "columns"])
def test_stack_out_reading_what_it_overwrote_raises(run, write):
    def f(a):
        y = a * 1.0
        write(y)
        return y

    with pytest.raises(ad.StaleViewError, match="writes its destination in order"):
        run(f, A)


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("write", [
    lambda y, x: np.concatenate([y[1:], x[:1] ** 2], out=y),  # the first input: copied first
    lambda y, x: np.concatenate([x[:3] * 2, y[3:]], out=y),  # reads what is not written
    lambda y, x: np.concatenate([y[:3], y[:3]], out=y),  # rewrites y[:3] with itself
    lambda y, x: np.concatenate([y[3:], y[3:]], out=np.zeros(6, like=x)),  # another array
], ids=["first", "disjoint", "itself", "other"])
def test_concatenate_out_without_a_hazard_matches_numpy(run, write):
    def f(x):
        y = x * 1.0
        write(y, x)
        return y

    _matches_numpy(run, f, X)


# --- x.flat[...] = v and np.fill_diagonal: NumPy writes element by element -----------------------

def _flat(key, value):
    def write(y):
        y.flat[key] = value(y)
    return write


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("write", [
    _flat([1, 1, 2], lambda y: y[:3]),
    _flat(slice(1, 4), lambda y: y[0:3]),
    _flat([1, 2], lambda y: y),
    _flat(slice(None, None, -1), lambda y: y),
], ids=["repeated", "shift", "whole", "reversed"])
def test_flat_write_reading_what_it_overwrote_raises(run, write):
    def f(x):
        y = x * 1.0
        write(y)
        return y

    with pytest.raises(ad.StaleViewError, match="writes its destination in order"):
        run(f, X)


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("write", [
    _flat([1, 1, 2], lambda y: y[3:]),
    _flat(slice(0, 3), lambda y: y[3:]),
    _flat(slice(1, 3), lambda y: y[0, ...]),
    _flat(slice(0, 3), lambda y: y[1, ...]),  # y[1] is written with itself
    _flat(slice(None), lambda y: y),
], ids=["repeated", "disjoint", "zero-d", "itself", "whole"])
def test_flat_write_without_a_hazard_matches_numpy(run, write):
    def f(x):
        y = x * 1.0
        write(y)
        return y

    _matches_numpy(run, f, X)


@pytest.mark.parametrize("run", LIFETIMES)
def test_fill_diagonal_with_a_view_of_the_array(run):
    def hazard(a):
        y = a * 1.0
        np.fill_diagonal(y, y[::-1, 0])  # NumPy reads y[0, 0] after writing it
        return y

    def fine(a):
        y = a * 1.0
        np.fill_diagonal(y, y[0])
        return y

    with pytest.raises(ad.StaleViewError, match="numpy.fill_diagonal"):
        run(hazard, A)
    _matches_numpy(run, fine, A)


# --- NumPy scalars are immutable: writes into them raise, as NumPy's -----------------------------

def _setitem(s, key, value):
    s[key] = value


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("write", [
    lambda s, x: _setitem(s, Ellipsis, 1.0),
    lambda s, x: _setitem(s, (), x[0]),
    lambda s, x: np.copyto(s, 1.0),
    lambda s, x: np.add(x[0], 1.0, out=s),
    lambda s, x: np.sum(x, out=s),
    lambda s, x: np.add.at(s, (), 1.0),
], ids=["setitem", "setitem-empty", "copyto", "ufunc-out", "sum-out", "add.at"])
@pytest.mark.parametrize("scalar", [lambda x: np.sum(x), lambda x: (x * 1.0)[0]],
                         ids=["sum", "item"])
def test_writing_a_numpy_scalar_raises_type_error(run, write, scalar):
    with pytest.raises(TypeError):
        write(scalar(X), X)  # NumPy's own refusal

    def f(x):
        s = scalar(x)
        alias = s
        write(s, x)
        return alias

    with pytest.raises(TypeError, match="NumPy scalar"):
        run(f, X)


@pytest.mark.parametrize("run", LIFETIMES)
def test_zero_d_arrays_and_scalar_updates_still_work(run):
    def f(x):
        s = np.sum(x)
        alias = s
        s += x[0]  # rebinds s: alias keeps the sum
        z = np.zeros((), like=x)
        np.sum(x ** 2, out=z)
        z[...] += x[1]
        y = x * 1.0
        v = y[0, ...]
        v.fill(x[2])
        return np.stack([alias, s, z, y[0]])

    _matches_numpy(run, f, X)

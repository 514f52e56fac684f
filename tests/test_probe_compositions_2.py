"""Regression rows for silent wrong derivatives on compositions found by hand-written and random
adversarial programs (mutation, broadcasting, indexing, reductions, checkpoints): each row
compares NumPy's value, the dynamic gradient, the staged gradient and central differences."""

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient

X = np.array([[0.5, -1.25, 0.75, 2.0], [-0.3, 0.9, 1.1, -0.6], [1.4, -0.2, 0.35, -1.7]])


def _check(f, x, stage=True):
    expected = f(x.copy())
    value, g = ad.value_and_grad(f)(x)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(g, central_gradient(f, x), rtol=1e-6, atol=1e-8)
    if stage:
        program = ad.stage(f, x)
        np.testing.assert_allclose(program(x), expected, rtol=1e-12)
        np.testing.assert_allclose(ad.grad(program)(x), g, rtol=1e-12, atol=1e-15)


# NumPy's ``scalar.fill(v)``, ``np.put(scalar, ...)`` and ``scalar.flat[i] = v`` write into a
# temporary 0-d array: a NumPy scalar (a 0-d result such as np.sum(x)) keeps its value. Advect
# wrote the traced scalar, which changed the value and cut the gradient.
def _fill(v):
    v.fill(5.0)


def _put(v):
    np.put(v, [0], 5.0)


def _put_method(v):
    v.put([0], 5.0)


def _flat(v):
    v.flat[0] = 5.0


SCALARS = {
    "sum": lambda x: np.sum(x), "index": lambda x: (x * 1.0)[0, 1], "mean": lambda x: x.mean(),
    "copy": lambda x: np.sum(x).copy(), "astype": lambda x: np.sum(x).astype(np.float64),
    "reshape": lambda x: np.sum(x).reshape(()), "dot": lambda x: np.dot(x[0], x[1]),
    "einsum": lambda x: np.einsum("i,i", x[0], x[1]),
}


@pytest.mark.parametrize("write", [_fill, _put, _put_method, _flat],
                         ids=["fill", "put", "put-method", "flat"])
@pytest.mark.parametrize("make", list(SCALARS.values()), ids=list(SCALARS))
def test_writing_a_numpy_scalar_changes_nothing(make, write):
    def f(x):
        v = make(x)
        write(v)
        return v * x[0, 0]

    _check(f, X)


@pytest.mark.parametrize("make", [
    lambda x: np.zeros((), like=x), lambda x: np.zeros_like(x[0, 0]),
    lambda x: np.full_like(np.sum(x), 2.0), lambda x: np.copy(np.sum(x)),
    lambda x: np.where(True, np.sum(x), 0.0),
], ids=["zeros", "zeros_like", "full_like", "np.copy", "where"])
def test_filling_a_0d_array_still_writes_it(make):
    def f(x):
        v = make(x)
        v.fill(5.0)
        return v * x[0, 0]

    _check(f, X)


def test_filling_a_0d_view_writes_through():
    def f(x):
        y = x * 1.0
        y[0, ...].fill(5.0)  # a row
        y[1, 2, ...].fill(-3.0)  # a 0-d view: written through to y
        return np.sum(y * x)

    _check(f, X)


def test_filling_a_stale_0d_view_raises():
    def f(x):
        y = x * 1.0
        v = y[0, 0, ...]
        y[0] = 3.0
        v.fill(2.0)
        return np.sum(y)

    with pytest.raises(ad.StaleViewError):
        ad.grad(f)(X)


# A checkpointed block that returns its argument, or a view of it: NumPy (and the block run
# without a checkpoint) shares memory between the two, so a write into one shows in the other.
# The checkpointed block returned a fresh array, and the write was silently lost.
def test_checkpointed_identity_output_is_the_argument():
    def f(x):
        y = x * 1.0
        v = ad.checkpoint(lambda a: a)(y)
        v[0] = 3.0 * x[2]
        v *= 2.0
        return np.sum(y * x)

    x = np.array([0.5, -1.0, 2.0])
    _check(f, x)
    np.testing.assert_allclose(ad.hvp(f)(x, vectors=np.ones(3))[1], [6.0, 4.0, 10.0])


@pytest.mark.parametrize("block", [lambda a: a[1:], lambda a: a.T, lambda a: (a[:2], a * 2)],
                         ids=["slice", "T", "tuple"])
def test_checkpointed_view_outputs_refuse_writes(block):
    def f(x):
        y = x * 1.0
        out = ad.checkpoint(block)(y)
        v = out[0] if isinstance(out, tuple) else out
        v += 1.0  # NumPy writes y too
        return np.sum(y * x)

    with pytest.raises(ad.MutationError):
        ad.grad(f)(np.array([0.5, -1.0, 2.0]))


def test_checkpointed_view_output_goes_stale_when_the_argument_is_written():
    def f(x):
        y = x * 1.0
        v = ad.checkpoint(lambda a: a[1:])(y)
        y[1] = 7.0  # NumPy's v sees it
        return np.sum(v * x[1:])

    with pytest.raises(ad.StaleViewError):
        ad.grad(f)(np.array([0.5, -1.0, 2.0]))


def test_checkpointed_view_outputs_read_as_before():
    def f(x):
        y = x * 1.0
        v, w = ad.checkpoint(lambda a, b: (a[::-1], b.reshape(3, 1)))(y, x)
        u = ad.checkpoint(lambda a, b: b[1:])(y[:2], y[1:])
        return np.sum(v * w.T * np.sin(y)) + np.sum(u ** 3)

    _check(f, np.array([0.5, -1.0, 2.0]))

"""``y[mask] = v`` with a boolean mask over y's leading axes and one value is NumPy's
``where(mask, v, y)``: it stages (the mask's data is not needed), and its values, dtypes and
gradients match eager NumPy and central differences in both lifetimes."""

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient


def _relu_like(x):
    y = x.copy()
    y[y < 0] = 0.0
    return y


def _rows(x):
    y = x * 2.0
    y[x[:, 0] > 0] = np.max(x)  # a mask over the leading axis, a traced 0-d value
    return y


def _constant_mask(x):
    y = x.copy()
    y[:, np.arange(x.shape[1]) % 2 == 0] = 3  # not leading: the general path
    y[(np.arange(x.shape[0]) < 2,)] = -1.5  # a one-entry tuple
    return y


def _int_value_for_float(x):
    y = np.sin(x)
    y[x > 0.5] = True
    return y


CASES = [_relu_like, _rows, _constant_mask, _int_value_for_float]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_mask_assignment_matches_eager(f, dtype):
    x = np.random.default_rng(0).standard_normal((4, 6)).astype(dtype)
    want = f(x)
    got = ad.stage(f, x)(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)

    def loss(x):
        return np.sum(f(x) * np.cos(x))

    g = ad.grad(loss)(x)
    assert g.dtype == dtype
    np.testing.assert_allclose(ad.grad(ad.stage(loss, x))(x), g, rtol=1e-6)
    if dtype is np.float64:
        np.testing.assert_allclose(g, central_gradient(loss, x), rtol=1e-5, atol=1e-6)


def test_values_numpy_would_not_keep_take_the_general_path():
    ints = np.arange(-3, 3)

    def f(a):
        y = a.copy()
        y[a > 0] = 1.5  # NumPy truncates a float into an int array
        return y

    np.testing.assert_array_equal(ad.jvp(f)(ints, tangents=np.zeros(6, ints.dtype))[0], f(ints))
    with pytest.raises(ad.errors.TracingError, match="boolean mask"):
        ad.stage(f, ints)

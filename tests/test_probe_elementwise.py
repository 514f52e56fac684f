"""Silent wrong answers found by probing elementwise ufuncs and creation functions: one test per
fixed bug, each comparing against NumPy or central differences."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads


def _lifetimes(f, *args):
    """f's result in NumPy, while staged, and in a dynamic (reverse-mode) trace."""
    value, pullback = ad.vjp(f)(*args)
    pullback.close()
    return f(*args), ad.stage(f, *args)(*args), value


def _same(got, want):
    assert type(got) is type(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("make", [lambda x: x * 1.0, lambda x: x * 1j, lambda x: x > 1.0],
                         ids=["float", "complex", "bool"])
@pytest.mark.parametrize("like", [np.zeros_like, np.ones_like, np.empty_like,
                                  lambda a: np.full_like(a, 2), lambda a: np.full_like(a, 2.5),
                                  lambda a: np.zeros_like(a, shape=(2,))])
def test_like_family_of_python_scalar_values_keeps_their_dtype(make, like):
    # a Python float input (and the Python scalars computed from it) is a Python scalar inside
    # a dynamic trace; zeros_like(3.0) is float64 in NumPy, it was int64 here
    want = like(make(3.0))
    seen = {}

    def f(x):
        seen["dtype"] = like(make(x)).dtype
        return x * 1.0

    ad.grad(f)(3.0)
    assert seen.pop("dtype") == want.dtype
    ad.jvp(f)(3.0, tangents=1.0)
    assert seen.pop("dtype") == want.dtype
    staged = ad.stage(lambda x: like(make(x)), 3.0)(3.0)
    assert np.asarray(staged).dtype == want.dtype


def test_zeros_like_filled_by_a_python_float_input():
    def f(x):
        z = np.zeros_like(x)
        z[...] = x * 0.5
        return z

    value, grad = ad.value_and_grad(f)(3.0)
    assert value == 1.5 and grad == 0.5


@pytest.mark.parametrize("call", [
    lambda x: np.sin(x, dtype=np.int64),
    lambda x: np.sin(x, dtype=np.int64, casting="unsafe"),
    lambda x: np.absolute(x, dtype=np.complex128),
    lambda x: np.less(x, 1.0, dtype=np.float64),
    lambda x: np.ldexp(x, 2, dtype=np.float32),
    lambda x: np.float_power(x, x, dtype=np.float32),
    lambda x: np.modf(x, signature="dd->d"),
])
def test_ufunc_dtype_without_a_loop_raises_as_numpy(call):
    x = np.array([0.5, -1.5, 2.0])
    with pytest.raises((TypeError, ValueError)):
        call(x)
    with pytest.raises((TypeError, ValueError)):
        ad.stage(call, x)(x)
    with pytest.raises((TypeError, ValueError)):
        ad.jvp(call)(x, tangents=np.ones(3))


@pytest.mark.parametrize("call", [
    lambda x: np.add(x, 1, dtype=np.float32),
    lambda x: np.absolute(x.astype(np.complex64), dtype=np.float64),
    lambda x: np.less(x, 1.0, dtype=bool),
    lambda x: np.add(x, 1, signature=(np.float32, None, None)),
    lambda x: np.add(x, 1, signature="ff->f"),
    lambda x: np.divmod(x, 2.0, dtype=np.float32)[1],
])
def test_ufunc_dtype_and_signature_pick_numpys_loop(call):
    x = np.array([0.5, -1.5, 2.0])
    want, staged, dynamic = _lifetimes(call, x)
    _same(staged, want)
    _same(dynamic, want)


def test_ufunc_dtype_gradient_is_through_the_loop():
    x = np.array([0.5, -1.5, 2.0])
    grad = ad.grad(lambda v: np.sum(np.absolute(v.astype(np.complex64), dtype=np.float64)))(x)
    np.testing.assert_allclose(grad, np.sign(x))


@pytest.mark.parametrize("call", [
    lambda x: np.logical_and.reduce(x, dtype=np.float64),
    lambda x: np.hypot.reduce(x, dtype=np.int64),
    lambda x: np.logaddexp.accumulate(x, dtype=np.int64),
    lambda x: np.logical_xor.reduceat(x, [0, 2], dtype=np.float64),
])
def test_method_dtype_without_a_loop_raises_as_numpy(call):
    x = np.array([0.5, -1.5, 2.0])
    with pytest.raises(TypeError):
        call(x)
    with pytest.raises(TypeError):
        ad.stage(call, x)(x)


@pytest.mark.parametrize("call", [
    lambda x: np.add.reduce(x.astype(np.int8), initial=-0.5),
    lambda x: np.maximum.reduce(x.astype(np.int8), initial=2.5),
    lambda x: np.maximum.reduce(x > 0, initial=-0.5),
    lambda x: np.add.reduce(x > 0, initial=2),
    lambda x: np.add.reduce(x[:0], initial=3.0),
    lambda x: np.logaddexp.reduce(x[:0], initial=3.0),
    lambda x: np.add.reduce(np.reshape(x, (1, 3))[:, :0], axis=1, initial=3.0),
])
def test_reduce_initial_in_the_loop_dtype_and_counted_once(call):
    x = np.array([0.5, -1.5, 2.0])
    want, *got = _lifetimes(call, x)
    for value in got:  # (a staged constant result comes back as a 0-d array: not checked here)
        np.testing.assert_array_equal(value, want)
        assert np.asarray(value).dtype == np.asarray(want).dtype


def test_reduce_initial_out_of_bounds_raises_as_numpy():
    x = np.array([1, 2], dtype=np.int8)
    with pytest.raises(OverflowError):
        np.maximum.reduce(x, initial=1000)
    with pytest.raises(OverflowError):
        ad.stage(lambda v: np.maximum.reduce(v, initial=1000), x)(x)


@pytest.mark.parametrize("call", [
    lambda x: np.maximum.outer(x.astype(np.float32), 2),
    lambda x: np.add.outer(x.astype(np.complex64), 2.5),
    lambda x: np.lcm.outer(np.array([0, 254, 2], np.uint8) + (x > 9), 2),
    lambda x: np.multiply.outer(3, x.astype(np.float16)),
])
def test_outer_makes_arrays_of_python_scalars(call):
    x = np.array([0.5, -1.5, 2.0])
    want, staged, dynamic = _lifetimes(call, x)
    _same(staged, want)
    _same(dynamic, want)


@pytest.mark.parametrize("ufunc", [np.add, np.subtract])
@pytest.mark.parametrize("b", [np.float32(0.7), np.array(-1.5), 300, np.int64(1000)])
@pytest.mark.parametrize("index", [(0, [1, 1]), slice(0, 2), ([1, 0, 1], [2, 2, 2])])
def test_add_at_adds_in_the_promoted_dtype_then_casts(ufunc, b, index):
    a = np.array([[0, -1, 2], [0, 3, 0]], dtype=np.int8)

    def f(x):
        y = x.copy()
        ufunc.at(y, index, b)
        return y

    _same(ad.stage(f, a)(a), f(a))


@pytest.mark.parametrize("call", [
    lambda x: np.logaddexp.reduce(x, axis=None),
    lambda x: np.fmax.reduce(x, axis=(0, 1), dtype=np.float32),
    lambda x: np.logical_xor.reduce(x, axis=None, where=np.array([[True, False, True]] * 2)),
    lambda x: np.add(x[0, 0], 2.0, where=np.array(True), out=None),
    lambda x: np.frexp(x[0, 0], where=np.array(True), out=(None, None))[0],
])
def test_zero_d_results_are_numpy_scalars_when_staged(call):
    x = np.array([[0.5, -1.5, 2.0], [0.0, 3.0, -0.25]])
    want = call(x)
    assert isinstance(want, np.generic)
    _same(ad.stage(call, x)(x), want)


def test_complex_sign_derivative():
    # np.sign(z) is z/|z| for complex z: its derivative is not zero
    z = np.array([0.6 + 0.3j, -0.4 + 0.8j, 1.2 - 0.5j])
    w = np.array([0.3, -1.2, 0.7])

    def loss(v):
        return np.sum(np.real(np.sign(v)) * w) + np.sum(np.imag(np.sign(v)) * w[::-1])

    eps = 1e-6
    numeric = np.zeros_like(z)
    for i in range(3):
        for unit in (1, 1j):
            e = np.zeros_like(z)
            e[i] = eps * unit
            numeric[i] += unit * (loss(z + e) - loss(z - e)) / (2 * eps)
    np.testing.assert_allclose(ad.grad(loss)(z), numeric, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ad.grad(ad.stage(loss, z))(z), numeric, rtol=1e-6, atol=1e-8)
    t = np.array([0.2 - 0.1j, 0.5j, 1.0])
    want = (np.sign(z + eps * t) - np.sign(z - eps * t)) / (2 * eps)
    np.testing.assert_allclose(ad.jvp(np.sign)(z, tangents=t)[1], want, rtol=1e-6, atol=1e-8)


def test_sign_derivative_is_zero_for_reals_and_at_complex_zero():
    assert np.all(ad.grad(lambda x: np.sum(np.sign(x)))(np.array([1.0, 0.0, -2.0])) == 0)
    grad = ad.grad(lambda z: np.sum(np.real(np.sign(z))))(np.array([0j, 1 + 1j]))
    assert grad[0] == 0


@pytest.mark.parametrize("call", [
    lambda x: np.add(x, -0.5, dtype=np.int8, casting="unsafe"),
    lambda x: np.add(True, x, dtype=np.float32),
    lambda x: np.multiply(x, 3, signature=(np.float16, np.float16, np.float16)),
    lambda x: np.ldexp(x, 3, signature="di->d"),
])
def test_ufunc_loop_converts_python_scalars_as_numpy(call):
    # NumPy converts a Python scalar to the loop's dtype first: int8(-0.5) is 0, so 1 + -0.5
    # computed in int8 is 1 (it was 1.0 - 0.5 = 0.5 cast to 0)
    x = np.array([1.0, 2.0, 3.0])
    want, staged, dynamic = _lifetimes(call, x)
    _same(staged, want)
    _same(dynamic, want)


@pytest.mark.parametrize("call, error", [
    (lambda x: np.add(x.astype(np.int16), 300, dtype=np.int8, casting="unsafe"), OverflowError),
    (lambda x: np.multiply(x, 1 + 2j, signature=(np.float64,) * 3), TypeError),
])
def test_ufunc_loop_refuses_python_scalars_as_numpy(call, error):
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(error):
        call(x)
    with pytest.raises(error):
        ad.stage(call, x)(x)


@pytest.mark.parametrize("call", [
    lambda x: x + 300, lambda x: x * -1, lambda x: np.maximum(x, -1), lambda x: 256 - x,
    lambda x: x.astype(np.int64) * 2**63,
])
def test_python_int_out_of_the_dtype_raises_while_staging_as_eager(call):
    # the eager call raises NumPy's OverflowError; staging raises it too, not the first run
    x = np.arange(3, dtype=np.uint8)
    with pytest.raises(OverflowError) as eager:
        call(x)
    with pytest.raises(OverflowError) as staged:
        ad.stage(call, x)
    assert str(staged.value) == str(eager.value)


@pytest.mark.parametrize("call", [
    lambda x: x == 300, lambda x: x < -1, lambda x: x + 255, lambda x: x // 0,
    lambda x: np.where(x > 0, x, 300), lambda x: x.astype(np.float32) + 10**6,
])
def test_python_ints_numpy_accepts_stage_as_eager(call):
    # (NumPy 2.5 refuses np.where(x, uint8 array, 300), which NumPy 2.4 takes: as eager)
    x = np.arange(3, dtype=np.uint8)
    with np.errstate(all="ignore"):
        try:
            want = call(x)
        except OverflowError:
            with pytest.raises(OverflowError):
                ad.stage(call, x)
            return
        got = ad.stage(call, x)(x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int16, np.complex128])
@pytest.mark.parametrize("axis", [0, 1, None, (0, 1)])
@pytest.mark.parametrize("call", [
    lambda x, m, axis: np.sum(x, axis=axis, where=m, initial=1.5),
    lambda x, m, axis: np.prod(x, axis=axis, initial=1.5),
    lambda x, m, axis: np.prod(x, axis=axis, where=m, initial=1.5),
    lambda x, m, axis: np.add.reduce(x, axis=axis, where=m, initial=2),
    lambda x, m, axis: np.multiply.reduce(x, axis=axis, initial=2),
], ids=["sum_where_initial", "prod_initial", "prod_where_initial", "add_reduce",
        "multiply_reduce"])
def test_reductions_from_initial_add_in_numpys_order(call, axis, dtype):
    # NumPy's loops start at initial (a masked sum adds each run of selected entries on):
    # bit for bit, not a sum or product combined with initial afterwards
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((50, 40)) * 3).astype(dtype)
    m = rng.random((50, 40)) < 0.6
    f = lambda v: call(v, m, axis)  # noqa: E731
    with np.errstate(all="ignore"):
        want, staged, dynamic = f(x), ad.stage(f, x)(x), ad.vjp(f)(x)[0]
    for got in (staged, dynamic):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("call", [
    lambda x: np.sum(np.prod(x, axis=1, initial=1.5) ** 2),
    lambda x: np.sum(np.prod(x, axis=0, where=x > 0.9, initial=-2.0)),
    lambda x: np.sum(np.sum(x, axis=0, where=x > 0.9, initial=0.5) ** 2),
    lambda x: np.multiply.reduce(x, axis=(0, 1), initial=3.0),
])
def test_reductions_from_initial_differentiate_to_second_order(call):
    x = np.random.default_rng(1).uniform(0.5, 1.5, (4, 3))
    x[1, 2] = x[2, 0] = 0.0  # zeros: the product's derivative without dividing by them
    check_grads(call, (x,), order=2)

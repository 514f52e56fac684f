"""Regressions for silent wrong answers and crashes that probing ordinary user code found.

Each row is a NumPy call that Advect once answered differently from eager NumPy (a dtype, a
value, an accepted call NumPy refuses); each is checked in the dynamic lifetime (``jvp``) and the
staged one (``stage``), against eager NumPy.
"""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad

RNG = np.random.default_rng(20240611)
X3 = RNG.standard_normal((2, 3, 4))


def _jvp_value(f, x):
    return ad.jvp(f)(x, tangents=np.ones_like(x))[0]


def _staged_value(f, x):
    return ad.stage(f, x)(x)


LIFETIMES = [pytest.param(_jvp_value, id="jvp"), pytest.param(_staged_value, id="stage")]


# --- dtypes and values against eager NumPy ---------------------------------------------------

def _select_mixed(x):  # one dtype for all choices and the weak default, not pairwise promotion
    return np.select([x > 0, x < -0.5], [x, x > 1], 0)


def _select_int8_default(x):
    return np.select([x > 0], [(x > 1).astype(np.int8)], 3)


def _vecdot_own_axis(x):  # axis=0 names each operand's own core axis before broadcasting
    return np.vecdot(x[:, 0, 0], x[:, :, 1], axis=0)


def _linalg_vecdot(x):
    return np.linalg.vecdot(x[0], x[1] + 1j, axis=-1)


def _int8(x):
    return (x * 40).astype(np.int8)


SAME_AS_NUMPY = [
    # an integer dtype= was widened to int64 (the provider's accumulator), not the result's dtype
    pytest.param(lambda x: np.sum(x, dtype=np.int16), np.float32, id="sum-dtype-int16"),
    pytest.param(lambda x: np.sum(_int8(x), axis=1, dtype=np.int8), np.float64,
                 id="sum-int8-dtype-int8"),
    pytest.param(lambda x: np.prod(x + 2, dtype=np.uint16), np.float32, id="prod-dtype-uint16"),
    pytest.param(lambda x: np.nansum(x, dtype=np.int16), np.float64, id="nansum-dtype-int16"),
    pytest.param(lambda x: np.cumsum(_int8(x), axis=2, dtype=np.int16), np.float64,
                 id="cumsum-dtype-int16"),
    pytest.param(lambda x: np.cumprod(x + 2, axis=-1, dtype=np.int16), np.float64,
                 id="cumprod-dtype-int16"),
    pytest.param(lambda x: np.trace(_int8(x[0]), dtype=np.int16), np.float64,
                 id="trace-dtype-int16"),
    pytest.param(lambda x: np.linalg.trace(_int8(x), dtype=np.int16), np.float64,
                 id="linalg-trace-dtype-int16"),
    pytest.param(lambda x: np.add.reduce(_int8(x), axis=1, dtype=np.int16), np.float64,
                 id="add-reduce-dtype-int16"),
    pytest.param(lambda x: np.add.accumulate(_int8(x), axis=2, dtype=np.int16), np.float64,
                 id="add-accumulate-dtype-int16"),
    pytest.param(lambda x: np.add.reduceat(_int8(x), [0, 2], axis=2, dtype=np.int16), np.float64,
                 id="add-reduceat-dtype-int16"),
    pytest.param(lambda x: np.multiply.reduceat(_int8(x), [0, 2], axis=2, dtype=np.int16),
                 np.float64, id="multiply-reduceat-dtype-int16"),
    # np.dot and np.inner make arrays of Python scalars: no NEP 50 weak promotion
    pytest.param(lambda x: np.dot(x, 2), np.float32, id="dot-python-int"),
    pytest.param(lambda x: np.dot(0.5, x), np.float32, id="dot-python-float"),
    pytest.param(lambda x: x.dot(2.0), np.float32, id="dot-method-python-float"),
    pytest.param(lambda x: np.inner(x, 2.0), np.float32, id="inner-python-float"),
    pytest.param(lambda x: np.dot(_int8(x), 3), np.float64, id="dot-int8-python-int"),
    pytest.param(_select_mixed, np.float32, id="select-float32-with-bool-choice"),
    pytest.param(_select_int8_default, np.float64, id="select-int8-with-python-int-default"),
    pytest.param(_vecdot_own_axis, np.float64, id="vecdot-axis-0-different-ndims"),
    pytest.param(_linalg_vecdot, np.float64, id="linalg-vecdot"),
]


@pytest.mark.parametrize("lifetime", LIFETIMES)
@pytest.mark.parametrize("f", [
    pytest.param(np.mean, id="mean"),
    pytest.param(lambda a: np.mean(a.reshape(40, 50), axis=1), id="mean-axis"),
    pytest.param(np.average, id="average"),
])
def test_float16_mean_sums_in_float32_like_numpy(f, lifetime):
    a = np.full(2000, 100.5, np.float16)  # the float16 sum overflows to inf
    expected = f(a)
    actual = lifetime(f, a)
    assert np.asarray(actual).dtype == np.float16
    np.testing.assert_array_equal(actual, expected)


@pytest.mark.parametrize("lifetime", LIFETIMES)
@pytest.mark.parametrize(("f", "dtype"), SAME_AS_NUMPY)
def test_value_shape_and_dtype_match_numpy(f, dtype, lifetime):
    x = X3.astype(dtype)
    expected = f(x)
    actual = np.asarray(lifetime(f, x))
    assert actual.shape == expected.shape
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-6)


# --- calls NumPy refuses are refused, never answered ----------------------------------------

_SINCE_2_1 = pytest.mark.skipif(not hasattr(np, "unstack"), reason="NumPy 2.1 and newer")

REFUSED = [
    # a tuple where NumPy takes one axis once silently used its first entry
    pytest.param(lambda a: np.cumsum(a, axis=(0, 1)), id="cumsum-axis-tuple"),
    pytest.param(lambda a: np.cumprod(a, axis=(0, 1)), id="cumprod-axis-tuple"),
    pytest.param(lambda a: np.cumulative_sum(a, axis=(0, 1)), id="cumulative_sum-axis-tuple",
                 marks=_SINCE_2_1),
    pytest.param(lambda a: np.sort(a, axis=(0, 1)), id="sort-axis-tuple"),
    pytest.param(lambda a: np.argsort(a, axis=(0, 1)), id="argsort-axis-tuple"),
    pytest.param(lambda a: np.argmax(a, axis=(0, 1)), id="argmax-axis-tuple"),
    pytest.param(lambda a: np.take(a, [0], axis=(0, 1)), id="take-axis-tuple"),
    pytest.param(lambda a: np.diff(a, axis=(0, 1)), id="diff-axis-tuple"),
    pytest.param(lambda a: np.repeat(a, 2, axis=(0, 1)), id="repeat-axis-tuple"),
    pytest.param(lambda a: np.concatenate([a, a], axis=(0, 1)), id="concatenate-axis-tuple"),
    pytest.param(lambda a: np.stack([a, a], axis=(0, 1)), id="stack-axis-tuple"),
    pytest.param(lambda a: np.split(a, 1, axis=(0, 1)), id="split-axis-tuple"),
    pytest.param(lambda a: np.partition(a, 0, axis=(0, 1)), id="partition-axis-tuple"),
    pytest.param(lambda a: np.add.accumulate(a, axis=(0, 1)), id="accumulate-axis-tuple"),
    pytest.param(lambda a: np.add.reduceat(a, [0], axis=(0, 1)), id="reduceat-axis-tuple"),
    pytest.param(lambda a: np.trace(a, 0, (0, 1), 2), id="trace-axis-tuple"),
    pytest.param(lambda a: np.rollaxis(a, (0, 1)), id="rollaxis-axis-tuple"),
    pytest.param(lambda a: np.trapezoid(a, axis=(0, 1)), id="trapezoid-axis-tuple"),
    pytest.param(lambda a: np.delete(a, 0, axis=(0, 1)), id="delete-axis-tuple"),
    pytest.param(lambda a: np.unstack(a, axis=(0, 1)), id="unstack-axis-tuple",
                 marks=_SINCE_2_1),
    pytest.param(lambda a: np.linalg.vecdot(a, a, axis=(0, 1)), id="linalg-vecdot-axis-tuple"),
    pytest.param(lambda a: np.take_along_axis(a, np.zeros((1, 1, 1), int), axis=(0, 1)),
                 id="take_along_axis-axis-tuple"),
    # np.linalg.vecdot broadcast a size-1 core dimension instead of refusing it
    pytest.param(lambda a: np.linalg.vecdot(a[:, :, :1], a), id="linalg-vecdot-core-mismatch"),
    # a float where NumPy wants an integer once was truncated
    pytest.param(lambda a: np.pad(a, 1.5), id="pad-float-width"),
    pytest.param(lambda a: np.round(a, 1.5), id="round-float-decimals"),
]


@pytest.mark.parametrize("lifetime", LIFETIMES)
@pytest.mark.parametrize("f", REFUSED)
def test_refused_like_numpy(f, lifetime):
    with pytest.raises((TypeError, ValueError)):
        f(X3)
    with pytest.raises((TypeError, ValueError)):
        lifetime(f, X3)


def test_select_refuses_non_boolean_conditions_and_empty_lists():
    x = X3[0]
    with pytest.raises(TypeError, match="invalid entry 0"):
        _jvp_value(lambda a: np.select([a], [a]), x)
    with pytest.raises(ValueError, match="empty condition list"):
        _jvp_value(lambda a: np.select([], [], a), x)


def test_select_gradient():
    x = X3[0]
    grad = ad.grad(lambda a: np.sum(np.select([a > 0, a < -0.5], [a * 2.0, a ** 2], 0.5)))(x)
    expected = np.where(x > 0, 2.0, np.where(x < -0.5, 2 * x, 0.0))
    np.testing.assert_allclose(grad, expected, rtol=1e-12)


def test_dot_of_a_staged_python_scalar_input_is_not_weak():
    x = X3[0, 0].astype(np.float32)
    program = ad.stage(lambda a, s: np.dot(a, s), x, 2.0)
    assert program(x, 2.0).dtype == np.dot(x, 2.0).dtype == np.float64
    grad = ad.grad(lambda a, s: np.sum(np.dot(a, s)), argnums=(0, 1))(x, 2.0)
    assert grad[0].dtype == np.float32
    np.testing.assert_allclose(grad[1], np.sum(x), rtol=1e-6)


# --- writes ----------------------------------------------------------------------------------

def _int_local(a):
    return (a * 0).astype(np.int64)


def _put_float_into_int(a):
    c = _int_local(a)
    np.put(c, [0, 4], a.reshape(-1)[:2] * 1.5)
    return c


def _fill_diagonal_float_into_int(a):
    c = _int_local(a)
    np.fill_diagonal(c, a[0] * 1.5)
    return c


def _put_along_axis_float_into_int(a):
    c = _int_local(a)
    np.put_along_axis(c, np.zeros((a.shape[0], 1), int), a[:, :1] * 1.5, axis=1)
    return c


@pytest.mark.parametrize("write", [_put_float_into_int, _fill_diagonal_float_into_int,
                                   _put_along_axis_float_into_int])
def test_float_values_written_into_an_integer_array_carry_no_derivative(write):
    # the scatter's tangent was the float values' tangent, so grad(sum(c * a)) was not c
    a = np.linspace(-2.0, 2.0, 12).reshape(3, 4) + 0.1
    expected = write(a.copy()).astype(np.float64)
    _, tangent = ad.jvp(write)(a, tangents=np.ones_like(a))
    assert not np.any(tangent)
    loss = lambda a: np.sum(write(a) * a)  # noqa: E731
    np.testing.assert_array_equal(ad.grad(loss)(a), expected)
    np.testing.assert_array_equal(ad.grad(ad.stage(loss, a))(a), expected)


def _flatten_then_write(a):
    c = a.flatten()  # a copy: writing it leaves the input alone
    c[0] = 7.0 * c[1]
    return c


def _pad_zero_then_write(a):
    c = np.pad(a, 0)  # np.pad copies even with zero widths
    c[0] = 7.0
    return c


def _float_item_into_int(a):
    c = _int_local(a)
    c[0] = a[0] * 1.5  # item assignment casts unsafely (truncates), as NumPy's
    return c * a


@pytest.mark.parametrize("lifetime", LIFETIMES)
@pytest.mark.parametrize("f", [_flatten_then_write, _pad_zero_then_write, _float_item_into_int])
def test_writes_numpy_accepts(f, lifetime):
    a = X3[0]
    before = a.copy()
    expected = f(a.copy())
    actual = lifetime(f, a)
    np.testing.assert_array_equal(a, before)
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-12)


def test_complex_item_into_a_real_array_is_refused():
    def f(a):
        c = a.copy()
        c[0] = a[1] + 1j
        return c

    with pytest.raises(TypeError, match="complex128 to float64"):
        _jvp_value(f, X3[0])


@pytest.mark.parametrize(("dtype", "casting", "accepted"), [
    (np.int64, "unsafe", True),       # was refused: casting= was ignored
    (np.float32, "safe", False),      # was accepted: float64 into float32 is not safe
    (np.float32, "same_kind", True),
    (np.int64, "same_kind", False),
])
def test_copyto_follows_its_casting_rule(dtype, casting, accepted):
    a = X3[0]

    def f(a):
        c = (a * 0).astype(dtype)
        np.copyto(c, a * 2.0, casting=casting)
        return c

    if not accepted:
        with pytest.raises(TypeError):
            f(a.copy())
        with pytest.raises(TypeError):
            _jvp_value(f, a)
        return
    expected = f(a.copy())
    for lifetime in (_jvp_value, _staged_value):
        actual = lifetime(f, a)
        assert actual.dtype == expected.dtype
        np.testing.assert_array_equal(actual, expected)


# --- staged outputs never alias the caller's inputs ------------------------------------------

@pytest.mark.parametrize("f", [
    pytest.param(lambda a: a.copy(), id="copy"),
    pytest.param(lambda a: a * 1.0, id="times-one"),
    pytest.param(lambda a: (a + 0.0).reshape(-1), id="plus-zero-reshaped"),
    pytest.param(lambda a: a.astype(np.float64)[::-1], id="astype-same-dtype-reversed"),
    pytest.param(lambda a: a, id="identity"),
])
def test_writing_a_staged_output_leaves_the_input_alone(f):
    # the optimizer drops x.copy() and x * 1.0, so the output was the caller's array (or a view)
    a = X3[0].copy()
    out = ad.stage(f, a)(a)
    assert not np.shares_memory(out, a)
    out[...] = 7.0
    np.testing.assert_array_equal(a, X3[0])


def test_a_staged_scalar_output_of_an_input_keeps_its_type():
    x = X3[0, 0]
    assert type(ad.stage(lambda a: a[0], x)(x)) is np.float64
    assert type(ad.stage(lambda a, s: s, x, 2.0)(x, 2.0)) is float


# --- dynamic transforms' outputs never alias the caller's inputs -----------------------------

def _outputs_of_transforms(f, a):
    yield ad.jvp(f)(a, tangents=np.ones_like(a))[0]
    yield ad.vjp(f)(a)[0]
    value, linear_map = ad.linearize(f, a)
    linear_map.close()
    yield value
    yield ad.value_and_grad(lambda x: (np.sum(x), f(x)), has_aux=True)(a)[2]


@pytest.mark.parametrize("f", [
    pytest.param(lambda a: a.copy(), id="copy"),
    pytest.param(lambda a: a.astype(a.dtype), id="astype-same-dtype"),
    pytest.param(lambda a: ad.array(a), id="ad.array"),
    pytest.param(lambda a: a.reshape(-1)[::-1], id="view"),
])
def test_writing_a_transform_output_leaves_the_input_alone(f):
    # a traced value passes through a.copy() unchanged: the output was the caller's array
    a = X3[0].copy()
    for out in _outputs_of_transforms(f, a):
        assert not np.shares_memory(out, a)
        out[...] = 7.0
        np.testing.assert_array_equal(a, X3[0])


# --- data in the other byte order (as FITS and netCDF files load) is staged as native ------

def test_big_endian_arrays_stage_call_and_capture_as_native():
    x = np.arange(4.0).astype(">f8")  # the other byte order on every common machine
    c = np.linspace(0.0, 1.0, 4).astype(">f4")

    def f(a):
        return np.sum(a ** 2 * c)

    program = ad.stage(f, x)
    assert program.signature[0][0] == ad.ArraySpec((4,), np.float64)
    for arg in (x, x.astype("<f8")):
        assert program(arg) == f(x)
        np.testing.assert_array_equal(ad.grad(program)(arg), ad.grad(f)(x))
    assert ad.ArraySpec((4,), ">f8") == ad.ArraySpec((4,), np.float64)
    before = x.copy()
    ad.stage(lambda a: a * 2, x)(x)
    np.testing.assert_array_equal(x, before)
    assert x.dtype == np.dtype(">f8")

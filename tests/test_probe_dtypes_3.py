"""Dtypes, Python scalars and result types: eager NumPy, staged programs and dynamic transforms
agree in value, dtype, shape and type (Python scalar, NumPy scalar or 0-d ndarray).

Regression rows from a sweep of ufuncs, reductions, casts and scalar conversions over every
staged dtype, 0-d arrays, NumPy scalars and Python scalars: reductions' ``initial=`` (cast to
the result dtype; an empty sum or product counted it twice), gradients of NumPy scalar inputs,
NumPy's refusals of integer ``dtype=`` for NaN-ignoring statistics, and 0-d result types.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import advect as ad


def _kind(r):
    if isinstance(r, np.ndarray):
        return ("ndarray", r.dtype, r.shape)
    if isinstance(r, np.generic):
        return ("numpy scalar", r.dtype)
    return (type(r).__name__,)


def _lifetimes(f, x):
    """``f(x)`` eagerly, from a staged program, and as the value of a dynamic transform."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        results = {"eager": f(x), "staged": ad.stage(f, x)(x)}
        if x.dtype.kind == "f":
            value, pullback = ad.vjp(f)(x)
            pullback.close()
            results["vjp"] = value
            results["jvp"] = ad.jvp(f)(x, tangents=np.ones_like(x))[0]
    return results


def _assert_like_eager(results):
    eager = results.pop("eager")
    for name, r in results.items():
        assert _kind(r) == _kind(eager), (name, r, eager)
        np.testing.assert_array_equal(r, eager, err_msg=name)


F32, EMPTY32, I8 = np.array([1.0, 2.0, 4.0], np.float32), np.zeros(0, np.float32), \
    np.array([1, 2, 3], np.int8)
REDUCTIONS = {
    "sum": lambda x, i: np.sum(x, initial=i),
    "method_sum": lambda x, i: x.sum(initial=i),
    "prod": lambda x, i: np.prod(x, initial=i),
    "max": lambda x, i: np.max(x, initial=i),
    "min_axis": lambda x, i: np.min(x, axis=0, initial=i),
    "sum_where": lambda x, i: np.sum(x, initial=i, where=np.ones(x.shape, bool)),
    "max_where": lambda x, i: np.max(x, initial=i, where=np.ones(x.shape, bool)),
    "nansum": lambda x, i: np.nansum(x, initial=i),
    "nanmax": lambda x, i: np.nanmax(x, initial=i),
}


INITIALS = {
    "f32-np.float64": (F32, np.float64(2.5)),  # a float64 initial leaves float32 float32
    "f32-0d": (F32, np.array(2.5)),
    "f32-np.int64": (F32, np.int64(3)),
    "empty-py": (EMPTY32, 2.5),                # an empty sum or product is initial, not twice
    "empty-np.float64": (EMPTY32, np.float64(-1.5)),
    "int8-py": (I8, -1.5),                     # cast to the integer result: -1.5 adds -1
}


@pytest.mark.parametrize("name, row", [
    (name, row) for name in sorted(REDUCTIONS) for row in INITIALS
    if not (row.startswith("int8") and name.startswith("nan"))])
def test_reduction_initial_takes_the_result_dtype(name, row):
    x, initial = INITIALS[row]
    f = REDUCTIONS[name]
    _assert_like_eager(_lifetimes(lambda x: f(x, initial), x))


@pytest.mark.parametrize("name", ["sum", "prod", "max"])
def test_a_complex_initial_of_a_real_reduction_is_numpys_type_error(name):
    f = REDUCTIONS[name]
    with pytest.raises(TypeError):
        f(F32, 1j)
    with pytest.raises(TypeError):
        ad.stage(lambda x: f(x, 1j), F32)
    with pytest.raises(TypeError):
        ad.grad(lambda x: f(x, 1j).real)(F32)


def test_a_traced_initial_is_cast_and_still_differentiated():
    f = lambda x, i: np.sum(x, initial=i)  # noqa: E731
    value, (gx, gi) = ad.value_and_grad(f, argnums=(0, 1))(F32, np.float64(1.0))
    assert _kind(value) == _kind(np.float32(0)) and value == 8.0
    assert gx.dtype == np.float32 and _kind(gi) == _kind(np.float64(0)) and gi == 1.0


@pytest.mark.parametrize("f", [
    lambda x, s: np.sum(x) + s,            # the 0-d cotangent arrives as a 0-d array
    lambda x, s: np.sum(x * s),
    lambda x, s: np.sum(x) * s,
    lambda x, s: np.sum(x),                # no dependence: zeros of the input's type
], ids=["add", "broadcast", "scalar-product", "unused"])
@pytest.mark.parametrize("scalar", [np.float64(1.5), np.float32(1.5)], ids=["f64", "f32"])
def test_a_numpy_scalar_input_gets_a_numpy_scalar_gradient(f, scalar):
    want = _kind(scalar)
    assert _kind(ad.grad(f, argnums=1)(F32, scalar)) == want
    value, pullback = ad.vjp(f, argnums=1)(F32, scalar)
    assert _kind(pullback(np.ones_like(value))) == want
    value, linear = ad.linearize(f, F32, scalar, argnums=1)
    with linear:
        assert _kind(linear.pullback(np.ones_like(value))) == want
    assert _kind(ad.grad(f, argnums=1)(F32, np.array(scalar))) == _kind(np.array(scalar))


@pytest.mark.parametrize("f", [np.nanmean, np.nanvar, np.nanstd])
@pytest.mark.parametrize("dtype", [np.int64, bool])
def test_an_integer_dtype_of_a_nan_statistic_of_floats_is_refused(f, dtype):
    x = np.array([1.0, np.nan, 3.0])
    with pytest.raises(TypeError, match="inexact"):
        f(x, dtype=dtype)
    with pytest.raises(TypeError, match="inexact"):
        ad.stage(lambda x: f(x, dtype=dtype), x)
    with pytest.raises(TypeError, match="inexact"):
        ad.grad(lambda x: f(x, dtype=dtype) * 1.0)(x)


@pytest.mark.parametrize("f, x", [
    (np.flip, np.array(2.5)),                              # NumPy indexes it with (): a scalar
    (np.flip, np.array(2.5, np.float32)),
    (np.flip, np.array(3)),
    (np.nan_to_num, np.array(3)),                          # NumPy returns x[()]
    (np.nan_to_num, np.array(True)),
    (np.nan_to_num, np.array(2.5)),
    (lambda x: np.quantile(x, np.float32(0.3)), np.array([-2, 0, 3], np.int8)),  # float32
    (lambda x: np.percentile(x, np.float16(30)), np.array([0, 1, 3], np.uint8)),  # float16
    (lambda x: np.quantile(x, np.array([0.3, 0.5], np.float32)), np.array([-2, 0, 3], np.int8)),
    (lambda x: np.quantile(x, np.float32(0.3)), np.array([-2, 0, 3], np.int64)),  # float64
    (lambda x: x * 100 * 100, np.array([-2, 0, 3], np.int8)),   # wraps as NumPy's int8
    (lambda x: x // np.zeros_like(x), np.array([-2.0, 0.0, 3.0], np.float32)),  # inf/nan
], ids=["flip-f64", "flip-f32", "flip-int", "nan_to_num-int", "nan_to_num-bool",
        "nan_to_num-f64", "quantile-int8-f32q", "percentile-uint8-f16q", "quantile-f32-array-q",
        "quantile-int64-f32q", "int8-wraps", "floor_divide-by-zero"])
def test_rank0_and_integer_results_are_eagers(f, x):
    _assert_like_eager(_lifetimes(f, x))

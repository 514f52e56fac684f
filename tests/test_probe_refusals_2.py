"""What NumPy accepts and refuses, Advect accepts and refuses alike (a second parity probe, of
the indexing functions, ufunc keywords and methods, quantiles and histogramdd): each ``BAD``
row runs through plain NumPy, ``ad.grad`` and ``ad.stage``, and all three must raise the row's
exception class (or a subclass); each ``VALID`` row must match NumPy's value and dtype in a
dynamic transform and staged."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import advect as ad
from refusals import into, owned, raised

X = np.arange(1.0, 7.0).reshape(2, 3) + np.array([[0.1, 0.7, 0.3], [0.9, 0.2, 0.5]])
M = np.array([[True, False, True], [False, False, True]])


BAD = {
    # np.take casts its indices to integers 'same_kind': float arrays are refused
    "take_float_array": lambda x: np.take(x, np.array([0.0, 1.0])),
    "take_float32_array_axis": lambda x: np.take(x, np.array([1.0], np.float32), axis=1),
    "take_0d_float_array": lambda x: np.take(x, np.array(1.0)),
    "take_traced_float": lambda x: np.take(x, x[0, :1]),
    "method_take_float_array": lambda x: x.take(np.array([0.0, 1.0])),
    "take_complex": lambda x: np.take(x, 1j),
    # diagonal offsets are integers
    "trace_float_offset": lambda x: np.trace(x, 1.0),
    "method_trace_float_offset": lambda x: x.trace(1.0),
    "diagonal_float_offset": lambda x: np.diagonal(x, 1.0),
    "method_diagonal_float_offset": lambda x: x.diagonal(1.0),
    "diag_float_offset": lambda x: np.diag(x, 1.0),
    # writing functions: a where= array must be boolean; place needs values and a full mask
    "copyto_where_float": owned(lambda y, x: np.copyto(y, 2 * x, where=np.ones((2, 3)))),
    "copyto_where_int": owned(lambda y, x: np.copyto(y, 2 * x, where=np.ones(3, int))),
    "copyto_where_traced_float": owned(lambda y, x: np.copyto(y, 2 * x, where=x)),
    "place_no_values": owned(lambda y, x: np.place(y, M, [])),
    "place_mask_wrong_size": owned(lambda y, x: np.place(y, np.ones(3, bool), [1.0])),
    # ufunc keywords: NumPy's own checks
    "sin_where_float": lambda x: np.sin(x, where=np.ones((2, 3))),
    "add_where_int_array": into((2, 3), float, lambda x, o: np.add(
        x, x, out=o, where=np.ones(3, int))),
    "add_where_traced_float": into((2, 3), float, lambda x, o: np.add(x, x, out=o, where=x)),
    "add_casting_bogus": lambda x: np.add(x, x, casting="bogus"),
    "add_casting_none": lambda x: np.add(x, x, casting=None),
    "exp_order_x": lambda x: np.exp(x, order="X"),
    "add_order_int": lambda x: np.add(x, x, order=1),
    "add_subok_str": lambda x: np.add(x, x, subok="x"),
    "add_casting_no_float32": lambda x: np.add(x, np.float32(1.0), casting="no"),
    "add_out_casting_safe": into((2, 3), np.float32, lambda x, o: np.add(
        x, x, out=o, casting="safe")),
    "add_out_int_same_kind": into((2, 3), int, lambda x, o: np.add(x, x, out=o)),
    "matmul_axes_too_few": lambda x: np.matmul(x, x.T, axes=[(0, 1), (0, 1)]),
    "matmul_axes_out_of_bounds": lambda x: np.matmul(x, x.T, axes=[(0, 5), (0, 1), (0, 1)]),
    "matmul_axes_core_sizes_differ": lambda x: np.matmul(x, x, axes=[(0, 1), (0, 1), (0, 1)]),
    # accumulate and reduceat take one axis
    "accumulate_two_axes": lambda x: np.add.accumulate(x, axis=(0, 1)),
    "accumulate_no_axes": lambda x: np.add.accumulate(x, axis=()),
    "accumulate_axis_none_2d": lambda x: np.multiply.accumulate(x, axis=None),
    "reduceat_axis_none_2d": lambda x: np.add.reduceat(x, [0, 1], axis=None),
    "reduceat_2d_indices": lambda x: np.add.reduceat(x, [[0]]),
    # ufunc.reduce reads keepdims=, axis=, where= and initial= as NumPy's reductions do
    "reduce_where_float": lambda x: np.add.reduce(x, where=np.ones((2, 3))),
    "reduce_where_traced_float": lambda x: np.multiply.reduce(x, where=x),
    "reduce_keepdims_none": lambda x: np.add.reduce(x, keepdims=None),
    "reduce_keepdims_str": lambda x: np.maximum.reduce(x, keepdims="yes"),
    "reduce_initial_list": lambda x: np.add.reduce(x, initial=[1.0]),
    "reduce_axis_list": lambda x: np.add.reduce(x, axis=[0]),
    # other indexing functions: choose casts 'safe', put as take, compress's 1-d condition
    "choose_float_indices": lambda x: np.choose(np.array([0.0, 1.0, 0.0]), [x[0], x[1]]),
    "choose_python_float": lambda x: np.choose(1.0, [x[0], x[1]]),
    "put_float_indices": owned(lambda y, x: np.put(y, np.array([0.0]), 1.0)),
    "compress_2d_condition": lambda x: np.compress([[True]], x, axis=1),
    # quantiles: nan and complex q
    "quantile_nan": lambda x: np.quantile(x, np.nan),
    "quantile_nan_in_list": lambda x: np.quantile(x, [0.5, np.nan]),
    "percentile_nan": lambda x: np.percentile(x, np.nan),
    "nanquantile_nan": lambda x: np.nanquantile(x, np.nan),
    "quantile_complex": lambda x: np.quantile(x, 0.5j),
    # histogramdd: one bins and range entry per column
    "histogramdd_bins_wrong_count": lambda x: np.histogramdd(x.T, bins=[2, 2, 2])[0],
    "histogramdd_range_wrong_count": lambda x: np.histogramdd(x.T, bins=2, range=[(0, 9)])[0],
    "histogramdd_float_bins": lambda x: np.histogramdd(x.T, bins=2.5)[0],
}


@pytest.mark.parametrize("name", BAD)
def test_numpy_refusals_are_refused_with_numpy_class(name):
    f = BAD[name]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = raised(lambda: f(X.copy()))
        assert expected is not None, f"{name}: this NumPy accepts the row"
        cls = type(expected)
        for how, call in (("grad", lambda: ad.grad(lambda x: np.sum(np.real(f(x))))(X)),
                          ("stage", lambda: ad.stage(f, X)(X))):
            error = raised(call)
            assert isinstance(error, cls), (
                f"{name} ({how}): NumPy raises {cls.__name__}({expected}), Advect "
                f"{'returns a value' if error is None else repr(error)}")
            assert len(str(error)) > 20  # says what was wrong


VALID = {
    # np.take converts Python and NumPy float scalars, lists and booleans to integers
    "take_float_list": lambda x: np.take(x, [0.0, 1.7]),
    "take_python_float": lambda x: np.take(x, 1.7),
    "take_numpy_float_scalar": lambda x: np.take(x, np.float32(4.0)),
    "take_bool_array": lambda x: np.take(x, np.array([True, False]), axis=1),
    "take_bool_list": lambda x: np.take(x, [True, False]),
    "take_python_bool": lambda x: np.take(x, True),
    "take_traced_bool": lambda x: np.take(x, x[0] > 2.0),
    "take_mixed_list": lambda x: np.take(x, [1, 1.5]),
    "take_str": lambda x: np.take(x, "1"),
    "method_take_bool": lambda x: x.take(np.array([True, False])),
    "method_take_python_float": lambda x: x.take(1.0),
    "trace_numpy_int_offset": lambda x: np.trace(x, np.int64(1)),
    "diagonal_bool_offset": lambda x: np.diagonal(x, True),
    # copyto: Python and list masks are read as booleans, None as False
    "copyto_where_list_of_ints": owned(lambda y, x: np.copyto(y, 2 * x, where=[1, 0, 1])),
    "copyto_where_list_of_floats": owned(lambda y, x: np.copyto(y, 2 * x, where=[1.5, 0, 1])),
    "copyto_where_python_float": owned(lambda y, x: np.copyto(y, 2 * x, where=1.0)),
    "copyto_where_numpy_float": owned(lambda y, x: np.copyto(y, 2 * x, where=np.float64(0))),
    "copyto_where_none": owned(lambda y, x: np.copyto(y, 2 * x, where=None)),
    # place and putmask with no values and nothing to write, or a mask of the same size
    "place_no_values_empty_mask": owned(lambda y, x: np.place(y, M & False, [])),
    "place_mask_same_size": owned(lambda y, x: np.place(y, np.ones((3, 2), bool), x[0])),
    "putmask_no_values": owned(lambda y, x: np.putmask(y, M, [])),
    # ufunc keywords NumPy accepts
    "add_where_python_int": into((2, 3), float, lambda x, o: np.add(x, x, out=o, where=1)),
    "add_where_none": into((2, 3), float, lambda x, o: np.add(x, x, out=o, where=None)),
    "add_where_list_of_ints": into((2, 3), float, lambda x, o: np.add(
        x, x, out=o, where=[1, 0, 1])),
    "add_order_lower_k": lambda x: np.add(x, x, order="k"),
    "add_order_none": lambda x: np.add(x, x, order=None),
    "add_casting_no_python_scalar": lambda x: np.add(x, 1.0, casting="no"),
    "add_out_float32_same_kind": into((2, 3), np.float32, lambda x, o: np.add(x, x, out=o)),
    "matmul_axes": lambda x: np.matmul(x, x.T, axes=[(0, 1), (0, 1), (0, 1)]),
    "matmul_axes_moved_output": lambda x: np.matmul(
        x[None], x.T[None], axes=[(1, 2), (1, 2), (0, 1)]),
    "matmul_axes_vector": lambda x: np.matmul(x[0], x.T, axes=[0, (0, 1), 0]),
    "vecdot_axes": lambda x: np.vecdot(x, x, axes=[(0,), (0,), ()]),
    "vecdot_axes_inputs_only": lambda x: np.vecdot(x, x[::-1], axes=[0, 0]),
    # accumulate and reduceat: a 1-tuple axis, None for 1-d
    "accumulate_1_tuple_axis": lambda x: np.add.accumulate(x, axis=(0,)),
    "accumulate_1_tuple_negative": lambda x: np.multiply.accumulate(x, axis=(-1,)),
    "accumulate_axis_none_1d": lambda x: np.add.accumulate(x[0], axis=None),
    "reduceat_1_tuple_axis": lambda x: np.add.reduceat(x, [0, 2], axis=(1,)),
    "reduceat_axis_none_1d": lambda x: np.maximum.reduceat(x[0], [0, 2], axis=None),
    # ufunc methods write out= unsafely (float sums truncated into an int out=), as NumPy's
    "reduce_out_int": into((3,), int, lambda x, o: np.add.reduce(x, out=o)),
    "multiply_reduce_out_int": into((3,), int, lambda x, o: np.multiply.reduce(x, out=o)),
    "accumulate_out_int": into((2, 3), int, lambda x, o: np.add.accumulate(x, out=o)),
    "reduceat_out_int": into((2, 3), int, lambda x, o: np.add.reduceat(x, [0, 1], out=o)),
    "reduce_where_numpy_scalar": lambda x: np.add.reduce(x, where=np.float64(1.0)),
    "sum_where_numpy_scalar": lambda x: np.sum(x, axis=0, where=np.float64(1.0)),
    "choose_bool_indices": lambda x: np.choose(np.array([True, False, True]), [x[0], x[1]]),
    "put_bool_indices": owned(lambda y, x: np.put(y, np.array([True]), 1.0)),
    "put_python_float_index": owned(lambda y, x: np.put(y, 1.0, 1.0)),
    "histogramdd_bins_per_column": lambda x: np.histogramdd(x.T, bins=[2, 3])[0],
    "histogramdd_bins_numpy_int": lambda x: np.histogramdd(x.T, bins=np.int64(2))[0],
}


@pytest.mark.parametrize("name", VALID)
def test_numpy_acceptances_are_accepted(name):
    f = VALID[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = f(X.copy())
        got, _ = ad.jvp(f)(X, tangents=np.ones_like(X))
        staged = ad.stage(f, X)(X)
    np.testing.assert_allclose(got, expected, rtol=1e-12)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(staged, expected, rtol=1e-12)


def test_matmul_axes_differentiates_as_transposes():
    from advect.testing import check_grads

    check_grads(lambda x: np.matmul(x, x.T, axes=[(0, 1), (0, 1), (1, 0)]), (X,), order=1)
    check_grads(lambda x: np.vecdot(x, x * 2.0, axes=[0, 0]), (X,), order=1)


def test_take_with_bool_and_float_list_indices_keeps_derivatives():
    g = ad.grad(lambda x: np.sum(np.take(x, [True, False, True]) * np.take(x, [2.0])))(X)
    expected = np.zeros_like(X)
    expected.flat[1] = 2 * X.flat[2]
    expected.flat[0] = X.flat[2]
    expected.flat[2] = X.flat[1] + X.flat[0] + X.flat[1]
    np.testing.assert_allclose(g, expected)

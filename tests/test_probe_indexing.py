"""Regressions that probing indexing, sorting, set and shape functions found.

Each test is one bug: a call Advect answered differently from eager NumPy (a value, a shape, an
accepted call NumPy refuses, or a refusal of a call NumPy accepts), checked in the dynamic
lifetime (``vjp``) and the staged one (``stage``) where both apply.
"""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad

X = (np.arange(24.0).reshape(2, 3, 4) * 0.37 + 0.1) % 2.3


def _dynamic(f, *args):
    out, pullback = ad.vjp(f)(*args)
    pullback.close()
    return out


def _staged(f, *args):
    return ad.stage(f, *args)(*args)


LIFETIMES = [pytest.param(_dynamic, id="dynamic"), pytest.param(_staged, id="stage")]


def _same(out, ref):
    assert type(out) is type(ref) or isinstance(ref, np.ndarray)
    out, ref = np.asarray(out), np.asarray(ref)
    assert out.shape == ref.shape and out.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, equal_nan=True)


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("key", [
    True, False, np.array(True), (np.array(False),), (True, [0, 1]), (0, True, [1, 2]),
    ([0, 1], slice(None), True), (Ellipsis, np.array(True), slice(None, None, -1)),
    (None, True, X[:, :, 0] > 1), (0, 0, 0, True)], ids=repr)
def test_zero_d_boolean_index_adds_an_axis(run, key):
    _same(run(lambda x: x[key], X), X[key])
    grad = ad.grad(lambda x: np.sum(x[key] ** 2))(X)
    expected = np.zeros_like(X)
    np.add.at(expected, key, 2 * X[key]) if np.size(X[key]) else None
    np.testing.assert_allclose(grad, expected)


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("f", [
    lambda x: x[[0, 1], [0, 1, 2]],
    lambda x: x[False, [0, 1]],
    lambda x: np.take_along_axis(x, np.array([[[0, 0]], [[1, 1]]]), axis=1),
], ids=["getitem", "false-mask", "take_along_axis"])
def test_index_arrays_that_do_not_broadcast_raise_index_error(run, f):
    with pytest.raises(IndexError, match="shape mismatch"):
        run(f, X)


@pytest.mark.parametrize("run", LIFETIMES)
def test_choose_out_of_range_raises_value_error_as_numpy(run):
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        run(lambda x: np.choose(np.array([0, 3, 0, 1]), [x[0, 0], x[1, 1]]), X)


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("mode", ["maximum", "minimum"])
def test_pad_stat_length_zero_is_refused_for_extrema(run, mode):
    with pytest.raises(ValueError, match="stat_length of 0"):
        run(lambda x: np.pad(x, 1, mode=mode, stat_length=0), X)
    with pytest.raises(ValueError, match="stat_length of 0"):  # on an axis with no padding too
        run(lambda x: np.pad(x, ((1, 1), (0, 0), (0, 0)), mode=mode,
                             stat_length=((1, 1), (0, 0), (1, 1))), X)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the mean of an empty slice, as NumPy
@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("stat_length", [0, 1.6, ((1, 0), (2, 2), (0, 9))])
def test_pad_stat_length_is_rounded_and_zero_means_empty(run, stat_length):
    def f(x):
        return np.pad(x, ((1, 2), (2, 1), (0, 3)), mode="mean", stat_length=stat_length)
    _same(run(f, X), f(X))


@pytest.mark.parametrize("run", LIFETIMES)
def test_pad_refuses_negative_stat_length_and_other_modes_keywords(run):
    with pytest.raises(ValueError, match="negative"):
        run(lambda x: np.pad(x, 1, mode="mean", stat_length=-1), X)
    with pytest.raises(ValueError, match="unsupported keyword arguments"):
        run(lambda x: np.pad(x, 1, mode="edge", constant_values=3.0), X)


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("mode", ["linear_ramp", "mean", "edge", "reflect"])
def test_pad_of_an_empty_array(run, mode):
    empty = np.ones((2, 0, 3))
    with pytest.raises(ValueError, match="can't extend empty axis"):
        run(lambda x: np.pad(x, ((0, 0), (1, 1), (0, 0)), mode=mode), empty)
    out = run(lambda x: np.pad(x, ((1, 1), (0, 0), (2, 0)), mode=mode), empty)
    assert np.shape(out) == (4, 0, 5)


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("axis", [-1, 0, None])
def test_argsort_and_argpartition_of_a_0d_array(run, axis):
    _same(run(lambda x: np.argsort(x[0, 0, 0] + 0.0, axis=axis), X), np.argsort(X[0, 0, 0], axis))
    _same(run(lambda x: np.argpartition(x[0, 0, 0] + 0.0, 0, axis=axis), X),
          np.argpartition(X[0, 0, 0], 0, axis))


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize("f", [
    lambda x: np.sort(x, kind="quicksort", stable=True),
    lambda x: np.argsort(x, kind="stable", stable=False),
    lambda x: np.partition(x, 1, kind="quick"),
    lambda x: np.lexsort((x[0, 0], x[0, :, 0])),
    lambda x: np.searchsorted(x[0, 0], 1.0, sorter=[0, 1]),
], ids=["sort-kind-stable", "argsort-kind-stable", "partition-kind", "lexsort-shapes",
        "searchsorted-sorter-size"])
def test_sorting_arguments_numpy_refuses(run, f):
    with pytest.raises(ValueError):
        f(X)
    with pytest.raises(ValueError):
        run(f, X)


@pytest.mark.parametrize("run", LIFETIMES)
def test_searchsorted_refuses_a_float_sorter(run):
    with pytest.raises(TypeError, match="sorter must only contain integers"):
        run(lambda x: np.searchsorted(x[0, 0], 1.0, sorter=np.array([0.0, 1.0, 2.0, 3.0])), X)


def test_unique_inverse_of_a_0d_array_is_0d():
    ref = np.unique(X[0, 0, 1], return_inverse=True)
    out = _dynamic(lambda x: np.unique(x[0, 0, 1], return_inverse=True), X)
    for o, r in zip(out, ref):
        _same(o, r)


@pytest.mark.parametrize("name", ["unique_values", "unique_counts", "unique_inverse",
                                  "unique_all"])
def test_array_api_unique_functions_keep_every_nan(name):
    v = np.array([3.0, np.nan, 1.0, np.nan, 1.0])
    ref = getattr(np, name)(v)
    out = _dynamic(getattr(np, name), v)
    for o, r in zip(*(((a,) if isinstance(a, np.ndarray) else a) for a in (out, ref))):
        _same(o, r)


@pytest.mark.parametrize("assume_unique", [False, True])
def test_setxor1d_keeps_nans_as_numpy(assume_unique):
    a = np.array([3.0, 1.0, np.nan, 2.0, -0.0])
    b = np.array([np.nan, 0.0, 5.0, 2.0, 7.0])
    f = lambda a, b: np.setxor1d(a, b, assume_unique=assume_unique)  # noqa: E731
    _same(_dynamic(f, a, b), f(a, b))
    grad = ad.grad(lambda a: np.nansum(f(a, b) * 2.0))(a)
    np.testing.assert_allclose(grad, [2.0, 2.0, 0.0, 0.0, 0.0])


@pytest.mark.parametrize("run", LIFETIMES)
@pytest.mark.parametrize(("obj", "values", "axis"), [
    ([1], lambda x: x[:, 0, :], 1), ([1], lambda x: x[0, 0, :3], None),
    (np.array([0]), lambda x: x[0, :, :1], 2), ([3], lambda x: x[0], 1)], ids=str)
def test_insert_at_a_single_position_sequence_inserts_the_values_whole(run, obj, values, axis):
    def f(x):
        return np.insert(x, obj, values(x), axis=axis)
    _same(run(f, X), f(X))

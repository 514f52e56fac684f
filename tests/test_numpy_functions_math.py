"""Rows for NumPy's mathematical functions, np.pad, metadata queries, comparisons, printing and
saving on traced arrays (see test_numpy_functions.py for the harness), and the coverage check
that every translated function is exercised by some row."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import numpy as np
import pytest

import advect as ad
import test_numpy_functions as base
import test_numpy_functions_data as data
from advect._compat import NUMPY_VERSION
from advect.numpy import _functions
from advect.testing import check_grads
from test_numpy_functions import X3, C, V, W, X, run_grads, run_value, traced_value

XI = np.array([[3, 0, 7, 1], [2, 8, 5, 4], [6, 1, 0, 9]])
PHASE = np.array([0.2, 2.9, 5.7, -0.4, 3.1, 6.6])
EXTREMES = np.array([np.nan, np.inf, -np.inf, 1.5, -2.5])


def _fromfile(x):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "values.bin"
        np.array([1.5, -2.0]).tofile(path)
        return np.fromfile(path, like=x) * x[0, :2]


def _saved(save):
    def run(x):
        buffer = io.BytesIO() if save is not np.savetxt else io.StringIO()
        save(buffer, x)
        return buffer.getvalue()[-40:]
    return run


PAD_MODES = [("constant", {}), ("constant", {"constant_values": ((1.5, 2.5), (3.5, 4.5))}),
             ("edge", {}), ("reflect", {}), ("reflect", {"reflect_type": "odd"}),
             ("symmetric", {}), ("symmetric", {"reflect_type": "odd"}), ("wrap", {}),
             ("linear_ramp", {}), ("linear_ramp", {"end_values": (5.0, -1.0)}),
             ("maximum", {}), ("minimum", {"stat_length": 2}), ("mean", {}),
             ("mean", {"stat_length": ((1, 2), (3, 1))}), ("median", {}),
             ("median", {"stat_length": 2})]

CASES = [
    # --- convolution and interpolation --------------------------------------------------------
    C("convolve", lambda x, w: np.convolve(x[0], w), X, W),
    C("convolve_same", lambda x, v: np.convolve(x[0, :2], v, "same"), X, V),
    C("convolve_valid", lambda x, w: np.convolve(x[0], w, "valid"), X, W),
    C("correlate", lambda x, w: np.correlate(x[0], w), X, W),
    C("correlate_same", lambda x, v: np.correlate(x[0, :2], v, "same"), X, V),
    C("correlate_full_complex", lambda x, v: np.correlate(x[0] * 1j + x[1], v, "full"), X, V),
    C("interp", lambda x, v: np.interp(x, np.sort(v), np.cos(v)), X, V),
    C("interp_left_right", lambda x, v: np.interp(np.array([-1.0, 0.5, 1.55, 9.0]), np.sort(v),
                                                  x[0, :4].repeat(2)[:5], left=-3.0, right=x[1, 1]),
      X, V),
    C("interp_period", lambda x: np.interp(x * 3, np.array([0.2, 1.1, 2.3]), x[1, :3],
                                           period=2.5), X),
    # --- products ---------------------------------------------------------------------------------
    C("dot", lambda x: np.dot(x, x.T), X),
    C("vdot", lambda x: np.vdot(x, x * 1j + 1), X),
    C("inner", lambda x: np.inner(x, x[:2]), X),
    C("outer", lambda x, w: np.outer(x[0], w), X, W),
    C("tensordot", lambda x3, x: np.tensordot(x3, x, axes=([1, 2], [0, 1])), X3, X),
    C("kron", lambda x: np.kron(x[:2, :2], x[1:]), X),
    C("kron_1d", lambda x: np.kron(x[0], x[1]), X),
    C("cross", lambda x: np.cross(x[:, :3], x[:, 1:]), X),
    *([C("cross_2_3", lambda x: np.cross(x[0, :2], x[1, :3]), X),
       C("cross_2d", lambda x: np.cross(x[:2, :2], x[1:, 2:]), X)]
      if NUMPY_VERSION < (2, 5) else []),  # 2-element vectors are an error from NumPy 2.5
    C("cross_axes", lambda x: np.cross(x[:3, :3].T, x[:3, 1:].T, axisa=0, axisb=0, axisc=0), X),
    # --- polynomials -----------------------------------------------------------------------------
    C("polyval", lambda x: np.polyval(x[0], x[1]), X),
    C("polyadd", lambda x: np.polyadd(x[0], x[1, :2]), X),
    C("polysub", lambda x: np.polysub(x[0, :2], x[1]), X),
    C("polymul", lambda x: np.polymul(x[0], x[1, :2]), X),
    C("polyder", lambda x: np.polyder(x[0], 2), X),
    C("polyint", lambda x: np.polyint(x[0], 2, [1.0, 2.0]), X),
    C("polydiv", lambda x: np.polydiv(x[0], x[1, :2]), X),
    C("poly", lambda x: np.poly(x[0]), X),
    C("polyfit", lambda x, v: np.polyfit(v, np.cos(2 * v) + x[0, 0], 3), X, V),
    C("polyfit_weighted", lambda x, v: np.polyfit(v, x[:, :1].repeat(2)[:5] * v, 2, w=v ** 2), X,
      V),
    C("roots", lambda x: np.roots(np.poly(x[0, :3])), X),
    C("roots_complex", lambda x: np.roots(np.array([1.0, 0.0, 2.0]) * x[0, 0]), X),
    C("vander", lambda x: np.vander(x[0]), X),
    C("vander_increasing", lambda x: np.vander(x[0], 3, increasing=True), X),
    # --- special functions and cleanup ----------------------------------------------------------
    C("sinc", lambda x: np.sinc(x - 1.0), X),
    C("i0", lambda x: np.i0(x * 3 - 4.5), X),
    C("nan_to_num", lambda x, e: np.nan_to_num(e * x[0, :1]), X, EXTREMES, grad=False),
    C("nan_to_num_values", lambda x, e: np.nan_to_num(x[0, 0] * e, nan=-1.0, posinf=9.0), X,
      EXTREMES, grad=False),
    C("nan_to_num_complex", lambda x, e: np.nan_to_num(e * (1 + 1j) * x[0, 0]), X, EXTREMES,
      grad=False),
    C("nan_to_num_smooth", lambda x: np.nan_to_num(x), X),
    C("unwrap", lambda p: np.unwrap(p), PHASE),
    C("unwrap_period", lambda x: np.unwrap(x * 5.3, axis=1, period=4.0), X),
    C("real_if_close", lambda x: np.real_if_close(x + 0j), X),
    C("real_if_close_complex", lambda x: np.real_if_close(x + 1j * x), X),
    C("fix", lambda x: np.fix(x - 1.0), X, grad=False),
    C("round", lambda x: np.round(x, 1), X, grad=False),
    C("around", lambda x: np.around(x), X, grad=False),
    C("clip", lambda x: np.clip(x, 0.5, 2.6), X),
    C("real", lambda x: np.real(x * 1j + x ** 2), X),
    C("imag", lambda x: np.imag(x * 1j + x ** 2), X),
    C("angle", lambda x: np.angle(x * 1j + 1, deg=True), X),
    C("emath_sqrt", lambda x: np.emath.sqrt(x - 1.0), X),
    C("emath_log", lambda x: np.emath.log(x - 1.0), X),
    C("emath_log2", lambda x: np.emath.log2(x), X),
    C("emath_log10", lambda x: np.emath.log10(1.0 - x), X),
    C("emath_logn", lambda x: np.emath.logn(3, x), X),
    C("emath_power", lambda x: np.emath.power(x - 1.0, 2), X),
    C("emath_arccos", lambda x: np.emath.arccos(x / 4), X),
    # on the branch cut the derivative depends on the sign of a zero imaginary part
    C("emath_arccos_cut", lambda x: np.emath.arccos(x - 1.6), X, grad=False),
    C("emath_arcsin", lambda x: np.emath.arcsin(x / 4), X),
    C("emath_arctanh", lambda x: np.emath.arctanh(x / 4), X),
    # --- pad --------------------------------------------------------------------------------------
    *[C(f"pad_{mode}_{i}", lambda x, mode=mode, kw=kw, w=w: np.pad(x, w, mode, **kw), X)
      for mode, kw in PAD_MODES for i, w in enumerate((((1, 2), (3, 5)), 2))],
    C("pad_empty", lambda x: np.pad(x, ((1, 2), (3, 5)), "empty")[1:4, 3:7], X),  # unset outside
    C("pad_int_ramp", lambda x: np.pad(np.round(x * 3).astype(np.int64), 3, "linear_ramp",
                                       end_values=(5, -1)), X, grad=False),
    C("pad_int_mean", lambda x: np.pad(np.round(x * 3).astype(np.int64), 2, "mean"), X,
      grad=False),
    C("pad_traced_constant", lambda x: np.pad(x, 1, constant_values=x[0, 0]), X),
    C("sliding_window_view", lambda x: np.lib.stride_tricks.sliding_window_view(x, (2, 3)), X),
    C("sliding_window_view_axis", lambda x: np.lib.stride_tricks.sliding_window_view(
        x, 2, axis=0), X),
    # --- metadata, comparisons, printing, saving ------------------------------------------------
    C("shape", lambda x: np.shape(x), X, grad=False),
    C("ndim", lambda x: np.ndim(x), X, grad=False),
    C("size", lambda x: np.size(x, 1), X, grad=False),
    C("result_type", lambda x: np.result_type(x.astype(np.float32), 1.0, np.int8), X,
      grad=False),
    C("can_cast", lambda x: np.can_cast(x, np.float32), X, grad=False),
    C("min_scalar_type", lambda x: np.min_scalar_type(x), X, grad=False),
    C("common_type", lambda x: np.common_type(x, np.arange(2)), X, grad=False),
    C("may_share_memory", lambda x: np.may_share_memory(x, x[0] * 2), X, grad=False),
    C("shares_memory", lambda x: np.shares_memory(x, x), X, grad=False),
    C("iscomplexobj", lambda x: np.iscomplexobj(x), X, grad=False),
    C("isrealobj", lambda x: np.isrealobj(x * 1j), X, grad=False),
    C("iscomplex", lambda x: np.iscomplex(x + 1j * (x > 1.6)), X, grad=False),
    C("isreal", lambda x: np.isreal(x), X, grad=False),
    C("isposinf", lambda x, e: np.isposinf(e * x[0, 0]), X, EXTREMES, grad=False),
    C("isneginf", lambda x, e: np.isneginf(e * x[0, 0]), X, EXTREMES, grad=False),
    C("isclose", lambda x: np.isclose(x, np.round(x), atol=0.2), X, grad=False),
    C("isclose_nan", lambda x, e: np.isclose(e * x[0, 0], e, equal_nan=True), X, EXTREMES,
      grad=False),
    C("allclose", lambda x: np.allclose(x, x + 1e-9), X, grad=False),
    C("array_equal", lambda x: np.array_equal(x, x * 1.0), X, grad=False),
    C("array_equal_shapes", lambda x: np.array_equal(x, x[0]), X, grad=False),
    C("array_equiv", lambda x: np.array_equiv(x[:1], np.broadcast_to(x[0], (2, 4))), X,
      grad=False),
    C("array2string", lambda x: np.array2string(x, precision=3), X, grad=False),
    C("array_repr", lambda x: np.array_repr(x), X, grad=False),
    C("array_str", lambda x: np.array_str(x), X, grad=False),
    C("packbits", lambda x: np.packbits(x > 1.6, axis=1), X, grad=False),
    C("packbits_little", lambda x: np.packbits((x > 1.6).astype(np.int32), axis=0,
                                               bitorder="little"), X, grad=False),
    C("unpackbits", lambda x: np.unpackbits((x * 50).astype(np.uint8), axis=1), X, grad=False),
    C("unpackbits_count", lambda x: np.unpackbits((x * 50).astype(np.uint8), count=-3,
                                                  bitorder="little"), X, grad=False),
    C("fromfile", _fromfile, X),
    C("save", _saved(np.save), X, grad=False),
    C("savetxt", _saved(np.savetxt), X, grad=False),
    C("savez", _saved(np.savez), X, grad=False),
    C("savez_compressed", lambda x: len(_saved(np.savez_compressed)(x)) > 0, X, grad=False),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_matches_numpy(case):
    run_value(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=lambda c: c.name)
def test_derivatives(case):
    run_grads(case)


def _covered_by_rows(monkeypatch):
    seen = set()
    dispatch = _functions.array_function

    def recording(func, types, args, kwargs, like=None):
        seen.add(func)
        return dispatch(func, types, args, kwargs, like)
    monkeypatch.setattr(_functions, "array_function", recording)
    with np.errstate(all="ignore"):
        for case in base.CASES + data.CASES + CASES:
            traced_value(case.func, case.args)
    return seen


def test_every_translated_function_has_a_row(monkeypatch):
    seen = _covered_by_rows(monkeypatch)
    others = ("numpy.linalg", "numpy.fft")
    mine = {f for f in _functions.FUNCTIONS
            if not getattr(f, "__module__", "").startswith(others)
            and not isinstance(f, np.ufunc) and f not in (np.einsum, np.einsum_path)}
    missing = sorted(f.__name__ for f in mine - seen)
    assert not missing, f"translated NumPy functions without a test row: {missing}"
    assert len(mine) >= 235


def test_sort_gradient_follows_the_permutation():
    x = np.array([3.0, 1.0, 2.0])
    cotangent = np.array([10.0, 20.0, 30.0])
    import advect as ad
    _, pullback = ad.vjp(np.sort)(x)
    np.testing.assert_allclose(pullback(cotangent), [30.0, 10.0, 20.0])


def test_interp_is_differentiable_in_data_and_query():
    xp = np.array([0.0, 1.0, 3.0])
    import advect as ad
    grad_fp = ad.grad(lambda fp: np.interp(2.0, xp, fp))(np.array([1.0, 2.0, 5.0]))
    np.testing.assert_allclose(grad_fp, [0.0, 0.5, 0.5])
    grad_x = ad.grad(lambda x: np.interp(x, xp, np.array([1.0, 2.0, 5.0])))(2.0)
    assert grad_x == pytest.approx(1.5)


def test_median_of_staged_like_values_uses_vector_q():
    got = traced_value(lambda x3: np.percentile(x3, [10.0, 90.0], axis=(0, 2)), (X3,))
    np.testing.assert_allclose(got, np.percentile(X3, [10.0, 90.0], axis=(0, 2)))


def test_v_and_w_rows_use_distinct_values():
    assert len(set(V)) == V.size and len(set(W)) == W.size


ALL_CASES = base.CASES + data.CASES + CASES
# rows whose output is metadata (a staged program returns arrays and scalars only), or whose
# traced bounds fix the output length
NOT_STAGED = {"result_type", "min_scalar_type", "common_type", "arange_traced_start"}


def _inputs(case):
    diff = [i for i, a in enumerate(case.args) if isinstance(a, np.ndarray)
            and a.dtype.kind in "fc"]

    def function(*xs):
        full = list(case.args)
        for i, x in zip(diff, xs):
            full[i] = x
        return case.func(*full)
    return function, [case.args[i] for i in diff]


def _stage_or_refuse(case, monkeypatch):
    """The row's staged program, or None when staging refused because the row calls a
    dynamic-only function (any other refusal fails the test)."""
    import advect as ad
    from advect.errors import TracingError

    seen = set()
    dispatch = _functions.array_function

    def recording(func, types, args, kwargs, like=None):
        seen.add(func)
        return dispatch(func, types, args, kwargs, like)
    monkeypatch.setattr(_functions, "array_function", recording)
    function, inputs = _inputs(case)
    try:
        return ad.stage(function, *inputs)
    except TracingError:
        assert seen & _functions.DYNAMIC_ONLY, f"{case.name} should have staged"
        return None


STAGED_CASES = [c for c in ALL_CASES if c.name not in NOT_STAGED]


@pytest.mark.parametrize("case", STAGED_CASES, ids=lambda c: c.name)
def test_staged_matches_numpy_or_refuses(case, monkeypatch):
    """Rows stage and replay NumPy's answer, unless they call a dynamic-only function, which
    then refuses with a TracingError while staging (dynamic-only functions do stage when their
    data-dependent argument is a constant)."""
    with np.errstate(all="ignore"):
        program = _stage_or_refuse(case, monkeypatch)
        if program is not None:
            base.assert_same(program(*_inputs(case)[1]), case.func(*case.args), case.rtol)


def _cotangent(out, rng):
    out = np.asarray(out)
    if out.dtype.kind == "c":
        return (rng.normal(size=out.shape) + 1j * rng.normal(size=out.shape)).astype(out.dtype)
    if out.dtype.kind == "f":
        return rng.normal(size=out.shape).astype(out.dtype)
    return np.zeros(out.shape, out.dtype)


@pytest.mark.parametrize("case", [c for c in STAGED_CASES if c.grad], ids=lambda c: c.name)
def test_staged_pullback_matches_dynamic(case, monkeypatch):
    """vjp_program of the staged row gives the dynamic pullback's cotangents."""
    import advect as ad
    from advect.pytree import tree_leaves, tree_map

    with np.errstate(all="ignore"):
        program = _stage_or_refuse(case, monkeypatch)
        if program is None:
            return
        function, inputs = _inputs(case)
        argnums = tuple(range(len(inputs)))
        rng = np.random.default_rng(1)
        cotangent = tree_map(lambda o: _cotangent(o, rng), program(*inputs))
        staged = ad.vjp_program(program, argnums=argnums)(*inputs, cotangent=cotangent)
        _, pullback = ad.vjp(function, argnums)(*inputs)
        dynamic = pullback(cotangent)
    for got, want in zip(tree_leaves(staged), tree_leaves(dynamic)):
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def _float32(args):
    return tuple(a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64
                 else a for a in args)


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda c: c.name)
def test_float32_rows_match_numpy_dtypes(case):
    """The same rows in float32: values and NumPy's result dtypes (float32 stays float32 where
    NumPy keeps it, and widens where NumPy widens)."""
    args = _float32(case.args)
    with np.errstate(all="ignore"):
        want = case.func(*args)
        got = traced_value(case.func, args)
    base.assert_same(got, want, 1e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.uint32, np.int8])
@pytest.mark.parametrize("kw", [{}, {"period": 6}, {"period": 5.0}, {"discont": 1.0, "axis": 0}],
                         ids=["plain", "int_period", "float_period", "discont_axis"])
def test_unwrap_follows_numpy_dtypes_and_arithmetic(dtype, kw):
    # integer input with an integer period stays integer; unsigned steps wrap around (or
    # overflow a negative bound) as NumPy's do
    x = (np.arange(20).reshape(4, 5) * 7 % 23).astype(dtype)
    f = lambda x: np.unwrap(x, **kw)
    with np.errstate(all="ignore"):
        try:
            expected = f(x)
        except OverflowError:
            with pytest.raises(OverflowError):  # NumPy's, when the program runs
                ad.stage(f, x)(x)
            with pytest.raises(OverflowError):
                ad.vjp(f)(x)
            return
        for got in (ad.stage(f, x)(x), ad.vjp(f)(x)[0]):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64])
def test_i0_equals_numpy_bit_for_bit(dtype):
    # exp(x) * series / sqrt(x) beyond 8, in that order, as NumPy's
    x = np.concatenate([np.linspace(-30, 30, 601), [7.99, 8.0, 8.01, 0.0]]).astype(dtype)
    with np.errstate(over="ignore"):  # float16's exp overflows beyond 11
        expected = np.i0(x)
        for got in (ad.stage(np.i0, x)(x), ad.vjp(np.i0)(x)[0]):
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128, np.complex64,
                                   np.float16, np.int64, np.bool_])
@pytest.mark.parametrize("sizes", [(10, 3), (100, 11), (100, 12), (30, 30), (3, 10), (1, 1)],
                         ids=lambda s: f"{s[0]}x{s[1]}")
def test_convolve_and_correlate_equal_numpy_bit_for_bit(dtype, sizes):
    # one op whose NumPy implementation is np.correlate: every mode, either operand longer
    rng = np.random.default_rng(sum(sizes))
    a, v = (rng.uniform(-1, 1, n) + (1j * rng.uniform(-1, 1, n) if np.dtype(dtype).kind == "c"
                                     else 0) for n in sizes)
    a, v = ((x > 0) if dtype is np.bool_ else x * 5 if dtype is np.int64 else x for x in (a, v))
    a, v = a.astype(dtype), v.astype(dtype)
    for mode in ("full", "same", "valid"):
        for fn in (np.convolve, np.correlate):
            f = lambda a, v, fn=fn, mode=mode: fn(a, v, mode)
            expected = f(a, v)
            for got in (ad.stage(f, a, v)(a, v), ad.vjp(f, argnums=(0, 1))(a, v)[0]):
                assert got.dtype == expected.dtype
                np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("sizes", [(9, 3), (6, 13), (4, 1)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_convolve_and_correlate_derivatives(sizes):
    rng = np.random.default_rng(3)
    a, v = (rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n) for n in sizes)
    for mode in ("full", "same", "valid"):
        check_grads(lambda a, v, mode=mode: np.convolve(a, v, mode), [a, v], order=2)
        check_grads(lambda a, v, mode=mode: np.correlate(a, v, mode), [a.real, v.real],
                    order=2)

"""NumPy ufuncs on traced arrays: every ufunc and method form against NumPy, and the keywords.

Derivatives of every differentiable row are checked in test_catalog.py; this file checks values,
dtypes, NumPy's keyword and method semantics, and the errors.
"""

import numpy as np
import pytest

import advect as ad
from advect.autodiff.forward import JVPTrace, JVPTracer
from advect.numpy._ufunc_methods import METHODS, method_defined
from advect.numpy._ufuncs import UFUNCS
from advect.pytree import tree_map
from advect.testing import check_grads
from ufunc_samples import AT_INDEX, method_call, ufunc_args

NUMPY_UFUNCS = sorted({v for v in vars(np).values() if isinstance(v, np.ufunc)},
                      key=lambda u: u.__name__)
METHOD_FORMS = [(u, m) for u in NUMPY_UFUNCS for m in METHODS if method_defined(u, m)]


def traced(f, *args):
    """``f(*args)`` with every argument a tracer of a live forward-mode trace (zero tangents)."""
    trace = JVPTrace()
    try:
        out = f(*(JVPTracer(trace, a, None) for a in args))
        return tree_map(lambda o: o._concrete() if isinstance(o, JVPTracer) else o, out)
    finally:
        trace.close()


def assert_same(got, want):
    got_leaves = got if isinstance(got, tuple) else (got,)
    want_leaves = want if isinstance(want, tuple) else (want,)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape
        if w.dtype.kind == "M":
            np.testing.assert_array_equal(g, w)
        else:
            tol = 1e-12 if w.dtype.itemsize >= 8 or w.dtype.kind != "f" else 1e-6
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True)


def test_every_numpy_ufunc_has_a_translation():
    assert len(NUMPY_UFUNCS) >= 88  # 90 from NumPy 2.2 (matvec, vecmat)
    missing = [u.__name__ for u in NUMPY_UFUNCS if u not in UFUNCS]
    assert missing == []


@pytest.mark.parametrize("ufunc", NUMPY_UFUNCS, ids=lambda u: u.__name__)
def test_ufunc_matches_numpy_dynamic_and_staged(ufunc):
    args = ufunc_args(ufunc)
    with np.errstate(all="ignore"):
        want = ufunc(*args)
        assert_same(traced(ufunc, *args), want)
        if all(np.asarray(a).dtype.kind != "M" for a in args):
            assert_same(ad.stage(ufunc, *args)(*args), want)


def _variants(ufunc):
    """The sample with float32 operands, with int64 operands, and with a Python-scalar last
    operand (weak under NEP 50)."""
    args = ufunc_args(ufunc)
    if any(a.dtype.kind == "M" for a in args):
        return []
    out = [[a.astype(np.float32) if a.dtype.kind == "f" else a for a in args],
           [np.round(a).astype(np.int64) if a.dtype.kind == "f" else a for a in args]]
    if ufunc.nin == 2 and ufunc.signature is None:
        out.append([args[0].astype(np.float32) if args[0].dtype.kind == "f" else args[0],
                    args[1].reshape(-1)[0].item()])
    return out


@pytest.mark.parametrize("ufunc", NUMPY_UFUNCS, ids=lambda u: u.__name__)
def test_ufunc_dtypes_follow_numpy_for_float32_ints_and_python_scalars(ufunc):
    for args in _variants(ufunc):
        traced_args = [a for a in args if isinstance(a, np.ndarray)]

        def f(*arrays, args=args):
            it = iter(arrays)
            return ufunc(*(next(it) if isinstance(a, np.ndarray) else a for a in args))
        with np.errstate(all="ignore"):
            try:
                want = f(*traced_args)
            except (TypeError, ValueError):
                with pytest.raises((TypeError, ValueError)):
                    traced(f, *traced_args)
                continue
            assert_same(traced(f, *traced_args), want)


DIFFERENTIABLE = [r.target for r in ad.support_catalog()
                  if r.category == "ufunc" and r.differentiable]


@pytest.mark.parametrize("ufunc", DIFFERENTIABLE, ids=lambda u: u.__name__)
def test_float32_gradients_stay_float32(ufunc):
    args = [a.astype(np.float32) if a.dtype.kind == "f" else a for a in ufunc_args(ufunc)]
    diff = tuple(i for i, a in enumerate(args) if a.dtype.kind == "f")

    def loss(*xs):
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        out = ufunc(*full)
        return np.sum(out[0] if isinstance(out, tuple) else out)
    grads = ad.grad(loss, argnums=tuple(range(len(diff))))(*(args[i] for i in diff))
    assert all(g.dtype == np.float32 for g in grads)
    assert all(np.all(np.isfinite(g)) for g in grads)


COMPLEX = [u for u in DIFFERENTIABLE if any("D" in t.split("->")[0] for t in u.types)]


@pytest.mark.parametrize("ufunc", COMPLEX, ids=lambda u: u.__name__)
def test_complex_derivatives_are_real_linear_maps(ufunc):
    rng = np.random.default_rng(1)
    shapes = {"matmul": [(3, 4), (4, 2)], "matvec": [(3, 4), (4,)], "vecmat": [(3,), (3, 4)]}
    args = [rng.uniform(0.3, 0.9, s) + 1j * rng.uniform(0.2, 0.8, s)
            for s in shapes.get(ufunc.__name__, [(3, 4)] * ufunc.nin)]
    check_grads(ufunc, args, order=2)


@pytest.mark.parametrize("form", METHOD_FORMS, ids=lambda f: f"{f[0].__name__}.{f[1]}")
def test_method_form_matches_numpy(form):
    ufunc, method = form
    f, args = method_call(ufunc, method)
    with np.errstate(all="ignore"):
        try:
            want = f(*args)
        except (TypeError, ValueError) as e:  # NumPy refuses these dtypes: so do we
            with pytest.raises(TypeError if isinstance(e, TypeError) else ValueError):
                traced(f, *args)
            return
        assert_same(traced(f, *args), want)


STAGED_METHOD_FORMS = [(np.add, "reduce"), (np.subtract, "reduce"), (np.maximum, "accumulate"),
                       (np.divide, "accumulate"), (np.multiply, "reduceat"), (np.hypot, "outer"),
                       (np.multiply, "at"), (np.negative, "at"), (np.logaddexp, "reduce")]


@pytest.mark.parametrize("form", STAGED_METHOD_FORMS, ids=lambda f: f"{f[0].__name__}.{f[1]}")
def test_method_forms_stage(form):
    f, args = method_call(*form)
    assert_same(ad.stage(f, *args)(*args), f(*args))


# --- reductions and scans -----------------------------------------------------------------------

def test_reduce_axes_keepdims_initial_and_where():
    x = np.arange(1.0, 25.0).reshape(2, 3, 4)
    mask = x % 3 != 0
    cases = [
        lambda a: np.add.reduce(a, axis=(0, 2), keepdims=True),
        lambda a: np.maximum.reduce(a, axis=None),
        lambda a: np.multiply.reduce(a, axis=1, initial=2.0),
        lambda a: np.add.reduce(a, axis=2, where=mask),
        lambda a: np.maximum.reduce(a, axis=0, where=mask, initial=-1.0),
        lambda a: np.subtract.reduce(a, axis=1),
        lambda a: np.hypot.reduce(a, axis=None, keepdims=True),
        lambda a: np.logaddexp.reduce(a, axis=-1),
        lambda a: np.logaddexp2.reduce(a, axis=1),
        lambda a: np.logical_and.reduce(a > 3, axis=0),
        lambda a: np.add.reduce(a, axis=1, dtype=np.float32),
    ]
    for f in cases:
        assert_same(traced(f, x), f(x))


def test_reduce_where_skips_masked_entries_with_or_without_identity():
    x = np.arange(1.0, 13.0).reshape(3, 4)
    mask = x % 3 != 0
    for f in (lambda a: np.add.reduce(a, axis=1, where=mask, initial=5.0),
              lambda a: np.subtract.reduce(a, axis=1, where=mask, initial=5.0),
              lambda a: np.hypot.reduce(a, axis=0, where=mask),
              lambda a: np.minimum.reduce(a, axis=None, where=mask, initial=100.0)):
        assert_same(traced(f, x), f(x))
    grad = ad.grad(lambda a: np.sum(np.subtract.reduce(a, axis=1, where=mask, initial=5.0)))(x)
    np.testing.assert_array_equal(grad, np.where(mask, -1.0, 0.0))


def test_reduce_and_accumulate_write_out():
    x = np.arange(1.0, 7.0).reshape(2, 3)

    def f(a):
        total = np.zeros_like(a, shape=(3,))
        running = np.zeros_like(a)
        np.add.reduce(a, axis=0, out=total)
        np.multiply.accumulate(a, axis=1, out=running)
        return total, running
    got = traced(f, x)
    assert_same(got[0], x.sum(axis=0))
    assert_same(got[1], np.cumprod(x, axis=1))


def test_fmax_and_fmin_reduce_ignore_nan_unless_all_nan():
    x = np.array([[np.nan, 1.0, np.nan], [2.0, np.nan, np.nan]])
    for f in (lambda a: np.fmax.reduce(a, axis=0), lambda a: np.fmin.reduce(a, axis=1)):
        assert_same(traced(f, x), f(x))


def test_reduce_of_empty_axis_gives_identity_or_named_error():
    x = np.zeros((0, 3))
    assert_same(traced(lambda a: np.hypot.reduce(a, axis=0), x), np.zeros(3))
    with pytest.raises(ValueError, match="identity"):
        traced(lambda a: np.subtract.reduce(a, axis=0), x)


def test_reduce_where_needs_initial_without_identity():
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match="initial"):
        traced(lambda a: np.maximum.reduce(a, axis=0, where=a > 0), x)


def test_gradient_of_running_max_goes_to_the_record_holder():
    x = np.array([1.0, 3.0, 2.0, 3.0, 5.0])
    got = ad.grad(lambda x: np.sum(np.maximum.accumulate(x)))(x)
    # the running max is x0, x1, x1, x1 (the later tie keeps the first record), x4
    np.testing.assert_allclose(got, [1.0, 3.0, 0.0, 0.0, 1.0])


def test_gradient_of_running_product_with_a_zero_is_exact():
    x = np.array([2.0, 0.0, 3.0, 4.0])
    got = ad.grad(lambda x: np.sum(np.multiply.accumulate(x)))(x)
    # sum = x0 + x0 x1 + x0 x1 x2 + x0 x1 x2 x3; at x1 = 0 only x1's partial survives
    np.testing.assert_allclose(got, [1.0, 2.0 + 6.0 + 24.0, 0.0, 0.0])


def test_logaddexp_reduce_is_stable_for_large_values():
    x = np.array([1000.0, 1000.0, -1000.0])
    value, grad = ad.value_and_grad(lambda x: np.logaddexp.reduce(x))(x)
    np.testing.assert_allclose(value, 1000.0 + np.log(2.0))
    np.testing.assert_allclose(grad, [0.5, 0.5, 0.0])


def test_add_reduceat_segment_sums_match_numpy():
    x = np.arange(1.0, 25.0).reshape(4, 6)
    for idx in ([0, 2, 5], [1, 1, 4, 0, 5], [3]):
        assert_same(traced(lambda a, i=idx: np.add.reduceat(a, i, axis=1), x),
                    np.add.reduceat(x, idx, axis=1))
    ints = np.arange(6, dtype=np.int8)
    assert_same(traced(lambda a: np.add.reduceat(a, [0, 3]), ints), np.add.reduceat(ints, [0, 3]))
    check_grads(lambda a: np.add.reduceat(a, [1, 1, 4, 0], axis=1), (x,), order=1)


def test_reduceat_with_traced_indices_is_dynamic_only():
    x = np.arange(1.0, 6.0)
    idx = np.array([0, 2])
    assert_same(traced(lambda a, i: np.add.reduceat(a, i), x, idx), np.add.reduceat(x, idx))
    with pytest.raises(ad.TracingError):
        ad.stage(lambda a, i: np.add.reduceat(a, i), x, idx)
    with pytest.raises(IndexError, match="out-of-bounds"):
        traced(lambda a: np.add.reduceat(a, [0, 7]), x)


def test_methods_numpy_does_not_define_raise():
    x = np.ones((2, 2))
    with pytest.raises((ValueError, RuntimeError)):  # NumPy itself refuses these first
        traced(lambda a: np.matmul.reduce(a), x)
    with pytest.raises(ValueError, match="binary"):
        traced(lambda a: np.sin.reduce(a), x)
    from advect.numpy._ufunc_methods import call_method
    with pytest.raises(ValueError, match="not defined"):
        call_method(np.divmod, "reduce", (x,), {})


# --- ufunc.at: functionalized, repeated indices applied one after another ---------------------

@pytest.mark.parametrize("ufunc", [np.add, np.subtract, np.multiply, np.maximum, np.minimum,
                                   np.divide, np.power, np.negative, np.square],
                         ids=lambda u: u.__name__)
def test_at_applies_repeated_indices_like_numpy(ufunc):
    f, args = method_call(ufunc, "at")
    assert AT_INDEX.tolist().count(2) == 2
    assert_same(traced(f, *args), f(*args))


@pytest.mark.parametrize("ufunc", [np.multiply, np.maximum, np.divide, np.power],
                         ids=lambda u: u.__name__)
def test_at_with_many_repeats_matches_numpy(ufunc):
    rng = np.random.default_rng(0)
    a, idx, b = rng.uniform(1, 2, 6), rng.integers(-6, 6, 40), rng.uniform(0.9, 1.1, 40)

    def f(a, b, idx=idx):
        y = a.copy()
        ufunc.at(y, idx, b)
        return y
    assert_same(traced(f, a, b), f(a, b))  # constant indices: one round per repeat count
    assert_same(traced(lambda a, b, i: f(a, b, i), a, b, idx), f(a, b))  # traced indices
    check_grads(f, (a, b), order=1)


def test_at_with_a_multidimensional_advanced_index_and_slices():
    def f(a, b):
        y = a.copy()
        np.multiply.at(y, (slice(None), np.array([[0, 2], [2, 2]])), b)
        return y
    a, b = np.arange(1.0, 13.0).reshape(3, 4), np.arange(2.0, 5.0).reshape(3, 1, 1)
    assert_same(traced(f, a, b), f(a, b))
    grad = ad.grad(lambda a, b: np.sum(f(a, b)), argnums=(0, 1))(a, b)
    assert grad[0].shape == a.shape and grad[1].shape == b.shape


def test_at_on_an_input_or_a_plain_array_raises():
    x = np.ones(3)
    with pytest.raises(ad.MutationError, match="copy"):
        ad.grad(lambda x: np.sum(np.add.at(x, [0], 1.0) or x))(x)

    def into_plain(x):
        y = np.zeros(3)
        np.add.at(y, [0], x[0])
        return np.sum(y)
    with pytest.raises(ad.TracingError, match="zeros_like"):
        ad.grad(into_plain)(x)


# --- keywords -------------------------------------------------------------------------------------

def test_out_writes_an_owned_local_and_returns_it():
    x = np.array([0.3, 0.7, 1.1])

    def f(x):
        y = np.zeros_like(x)
        r = np.sin(x, out=y)
        assert r is y
        m = np.zeros_like(x)
        np.frexp(x, out=(m, None))
        return np.sum(y * m)
    expected = np.cos(x) * np.frexp(x)[0] + np.sin(x) * np.frexp(x)[0] / x * 1.0
    np.testing.assert_allclose(ad.grad(f)(x), expected)


def test_out_broadcasts_into_a_larger_output():
    x = np.array([1.0, 2.0, 3.0])

    def f(x):
        y = np.zeros_like(x, shape=(2, 3))
        np.multiply(x, 2.0, out=y)
        return y
    assert_same(traced(f, x), np.broadcast_to(2 * x, (2, 3)))


def test_where_with_out_keeps_masked_entries():
    x = np.array([1.0, -2.0, 3.0])

    def f(x):
        y = np.full_like(x, 7.0)
        np.sqrt(x, out=y, where=x > 0)
        return y
    assert_same(traced(f, x), np.array([1.0, 7.0, np.sqrt(3.0)]))
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(f(x)))(x),
                               [0.5, 0.0, 0.5 / np.sqrt(3.0)])


def test_safe_log_with_where_has_finite_gradients_in_both_modes():
    # the masked entries are never evaluated at the singularity, so reverse mode does not
    # multiply a zero cotangent by an infinite partial derivative
    x = np.array([0.0, 1.0, 4.0])

    def safe_log(x):
        y = np.zeros_like(x)
        np.log(x, out=y, where=x > 0)
        return np.sum(y)
    expected = [0.0, 1.0, 0.25]
    np.testing.assert_array_equal(ad.grad(safe_log)(x), expected)
    np.testing.assert_array_equal(ad.jvp(safe_log)(x, tangents=np.ones(3))[1], sum(expected))
    np.testing.assert_array_equal(ad.grad(ad.stage(safe_log, x))(x), expected)
    # without out= the masked-off entries are NumPy's uninitialized memory: Advect gives zeros
    np.testing.assert_array_equal(traced(lambda a: np.sqrt(a, where=a > 1), np.full(2, 4.0)),
                                  [2.0, 2.0])


def test_where_with_integer_operands_and_partial_out_tuples():
    x = np.array([0.5, -1.0, 2.0])

    def f(x):
        y = np.zeros_like(x)
        np.ldexp(x, 2, out=y, where=x > 0)
        m = np.zeros_like(x)
        np.frexp(x, out=(m, None), where=x > 0)
        return np.sum(y + m)
    np.testing.assert_allclose(ad.grad(f)(x), [4.0 + 1.0, 0.0, 4.0 + 0.25])


def test_out_on_an_input_and_into_a_plain_array_raise():
    x = np.array([1.0, 2.0])
    with pytest.raises(ad.MutationError):
        ad.grad(lambda x: np.sum(np.sin(x, out=x)))(x)
    with pytest.raises(ad.TracingError, match="zeros_like"):
        ad.grad(lambda x: np.sum(np.sin(x, out=np.zeros(2))))(x)


def test_dtype_and_casting_follow_numpy():
    x = np.array([1.5, 2.5])
    assert_same(traced(lambda a: np.add(a, 1, dtype=np.float32), x),
                np.add(x, 1, dtype=np.float32))
    assert_same(traced(lambda a: np.less(a, 2.0, dtype=bool), x), np.less(x, 2.0))
    with pytest.raises(TypeError, match="same_kind"):
        traced(lambda a: np.add(a, 1, dtype=np.int64), x)
    assert_same(traced(lambda a: np.add(a, 1, dtype=np.int64, casting="unsafe"), x),
                np.add(x, 1, dtype=np.int64, casting="unsafe"))

    def int_out(a):
        y = np.zeros_like(a, dtype=np.int64)
        return np.multiply(a, 2, out=y, casting="unsafe")
    assert_same(traced(int_out, x), np.array([3, 5]))
    with pytest.raises(TypeError, match="same_kind"):
        traced(lambda a: np.multiply(a, 2, out=np.zeros_like(a, dtype=np.int64)), x)


def test_signature_selects_the_loop_dtype():
    x = np.array([1.5, 2.5])
    for sig in ("ff->f", (np.float32, None, None)):
        assert_same(traced(lambda a, sig=sig: np.add(a, 1.0, signature=sig, casting="unsafe"), x),
                    np.add(x, 1.0, signature=sig, casting="unsafe"))
    # a loop with mixed input dtypes casts each operand to its own one, as NumPy
    assert_same(traced(lambda a: np.ldexp(a, 2, signature="dl->d"), x),
                np.ldexp(x, 2, signature="dl->d"))
    with pytest.raises(TypeError, match="No loop"):  # ldexp has no float32 exponent
        traced(lambda a: np.ldexp(a, 2, signature="ff->f"), x)


def test_unknown_keywords_raise_a_named_error():
    with pytest.raises(TypeError, match="numpy.vecdot"):  # (axes= is supported)
        traced(lambda a: np.vecdot(a, a, keepdims=True), np.ones(2))


# --- composites and float32 -----------------------------------------------------------------------

def test_vecdot_matvec_vecmat_conjugate_like_numpy():
    rng = np.random.default_rng(0)
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    a = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    assert_same(traced(np.vecdot, z, z[::-1]), np.vecdot(z, z[::-1]))
    assert_same(traced(lambda u, v: np.vecdot(u, v, axis=0), z, z), np.vecdot(z, z, axis=0))
    if hasattr(np, "matvec"):  # NumPy 2.2+
        assert_same(traced(np.matvec, a, z[0]), np.matvec(a, z[0]))
        assert_same(traced(np.vecmat, z[0, :3], a), np.vecmat(z[0, :3], a))
    with pytest.raises(ValueError, match="core dimensions"):
        traced(np.vecdot, z, z[:, :2])


def test_float32_stays_float32():
    x = np.linspace(0.1, 0.9, 4, dtype=np.float32)
    for f in (lambda a: np.fmax(a, 0.5), lambda a: np.ldexp(a, 2), lambda a: np.heaviside(a, 0.5),
              lambda a: np.multiply.accumulate(a), lambda a: np.logaddexp.reduce(a)):
        assert traced(f, x).dtype == np.float32
        assert ad.grad(lambda a, f=f: np.sum(f(a)))(x).dtype == np.float32


def test_bitwise_ops_refuse_floats_with_a_named_error():
    with pytest.raises(TypeError, match="bitwise_and"):
        traced(lambda a: np.bitwise_and(a, 1), np.ones(2))


def test_integer_results_have_zero_gradient():
    x = np.array([1.5, -2.5, 3.5])
    np.testing.assert_array_equal(
        ad.grad(lambda x: np.sum(x * np.rint(x) + np.floor(x) + np.spacing(x)))(x), np.rint(x))

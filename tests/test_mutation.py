"""Functionalized mutation: item assignment, in-place operators, out=, views and their roots.

Every value is compared with the same code run by plain NumPy, and every gradient with a closed
form or with check_grads (finite differences and the adjoint identity).
"""

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

X = np.arange(1.0, 7.0)
W = np.array([1.0, 10.0, 100.0, 1000.0, 3.0, 7.0])


def _matches_numpy(f, x=X):
    traced = ad.jvp(f)(x, tangents=np.ones_like(x))[0]
    np.testing.assert_array_equal(traced, f(x.copy()))


# --- item assignment -----------------------------------------------------------------------

@pytest.mark.parametrize("write", [
    lambda y, x: y.__setitem__(0, x[1] * 2),
    lambda y, x: y.__setitem__(slice(1, 4), x[3:] ** 2),
    lambda y, x: y.__setitem__(slice(None, None, 2), 0.5),
    lambda y, x: y.__setitem__((Ellipsis,), x[::-1]),
    lambda y, x: y.__setitem__([0, 2, 4], x[:3]),
    lambda y, x: y.__setitem__(np.array([5, 1]), x[0]),
    lambda y, x: y.__setitem__(y > 3.5, 0.0),
    lambda y, x: y.__setitem__(x < 2.5, x[:2] * 5),
], ids=["int", "slice", "step-scalar", "ellipsis", "int-array", "int-array-broadcast",
        "mask-scalar", "mask-values"])
def test_item_assignment_matches_numpy_and_differentiates(write):
    def f(x):
        y = x.copy()
        write(y, x)
        return y * x

    _matches_numpy(f)
    check_grads(f, [X], order=2)


def test_item_assignment_on_two_dimensional_local():
    def f(x):
        y = np.zeros_like(x).reshape(2, 3).copy()
        y[0] = x[:3]
        y[1, 1:] = x[4:] * x[0]
        y[:, 0] += 1.0
        return y

    _matches_numpy(f)
    check_grads(f, [X], order=2)


def test_repeated_indices_last_write_wins():
    def f(x):
        y = np.zeros_like(x)
        y[[0, 0, 1]] = x[:3]
        return y

    np.testing.assert_array_equal(ad.jvp(f)(X, tangents=np.ones(6))[0],
                                  [X[1], X[2], 0, 0, 0, 0])
    g = ad.grad(lambda x: np.sum(f(x) * W))(X)
    np.testing.assert_array_equal(g, [0.0, W[0], W[1], 0, 0, 0])  # x[0]'s write is overwritten
    check_grads(f, [X], order=2)


def test_indexed_augmented_assignment_has_numpy_semantics_for_repeats():
    def f(x):
        y = x.copy()
        y[[0, 0, 1]] += x[3:]
        return y

    expected = X.copy()
    expected[[0, 0, 1]] += X[3:]  # NumPy: y[0] gets x[0] + x[4] once, not twice
    np.testing.assert_array_equal(ad.jvp(f)(X, tangents=np.ones(6))[0], expected)
    g = ad.grad(lambda x: np.sum(f(x) * W))(X)
    np.testing.assert_array_equal(g, [W[0], W[1], W[2], W[3], W[0] + W[4], W[1] + W[5]])
    check_grads(f, [X], order=2)


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/=", "**="])
def test_augmented_assignment_through_basic_and_mask_indices(op):
    def f(x):
        y = x.copy()
        exec(f"y[1:3] {op} x[3:5]\ny[x > 4.5] {op} 2.0", {}, {"y": y, "x": x})
        return y

    _matches_numpy(f)
    check_grads(f, [X], order=2)


# --- in-place operators and out= -------------------------------------------------------------

def test_inplace_operators_on_owned_local():
    def f(x):
        y = x * 1.0
        y += x
        y *= x
        y -= 1.0
        y /= x + 1
        y **= 2
        return y

    _matches_numpy(f)
    expected = lambda x: 2 * ((2 * x * x - 1) / (x + 1)) * ((4 * x) * (x + 1) - (2 * x * x - 1)) \
        / (x + 1) ** 2
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(f(x)))(X), expected(X), rtol=1e-12)


def test_inplace_operator_keeps_the_local_dtype():
    def f(x):
        y = np.zeros_like(x, dtype=np.float32)
        y += x  # float64 into float32: same-kind cast, like NumPy
        return y

    value, tangent = ad.jvp(f)(X, tangents=np.ones(6))
    assert value.dtype == np.float32 and tangent.dtype == np.float32


def test_inplace_into_integer_local_refuses_float_like_numpy():
    def f(x):
        y = np.zeros_like(x, dtype=np.int64)
        y += x
        return x

    with pytest.raises(TypeError, match="same_kind"):
        ad.grad(lambda x: np.sum(f(x)))(X)


def test_ufunc_out_on_owned_local():
    def f(x):
        y = np.zeros_like(x)
        np.sin(x, out=y)
        np.multiply(y, x, out=y)
        return y

    np.testing.assert_allclose(ad.jvp(f)(X, tangents=np.ones(6))[0], np.sin(X) * X)
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(f(x)))(X), np.cos(X) * X + np.sin(X))


def test_ufunc_out_into_a_view_and_with_where():
    def f(x):
        y = np.zeros_like(x)
        np.add(x[:2], 1.0, out=y[1:3])
        np.multiply(x, 2.0, out=y, where=x > 4.5)
        return y

    expected = np.zeros(6)
    np.add(X[:2], 1.0, out=expected[1:3])
    np.multiply(X, 2.0, out=expected, where=X > 4.5)
    np.testing.assert_array_equal(ad.jvp(f)(X, tangents=np.ones(6))[0], expected)
    g = ad.grad(lambda x: np.sum(f(x) * np.arange(6.0)))(X)
    np.testing.assert_array_equal(g, [1.0, 2.0, 0, 0, 8.0, 10.0])


def test_sort_method_sorts_an_owned_local_in_place():
    def f(x):
        y = x * np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
        assert y.sort() is None
        return y * np.arange(1.0, 7.0)

    y = X * np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    y.sort()
    np.testing.assert_array_equal(ad.jvp(f)(X, tangents=np.ones(6))[0], y * np.arange(1.0, 7.0))
    check_grads(f, [X], order=2)
    with pytest.raises(ad.MutationError, match=r"np\.sort"):
        ad.grad(lambda x: (x.sort(), np.sum(x))[1])(X)


def test_fill_writes_every_element():
    def f(x):
        y = x.copy()
        y.fill(x[0])
        return y

    np.testing.assert_array_equal(ad.grad(lambda x: np.sum(f(x)))(X), [6, 0, 0, 0, 0, 0])


# --- views -----------------------------------------------------------------------------------

def test_write_through_a_named_view_reaches_the_root():
    def f(x):
        y = x.copy()
        v = y[1:4]
        v[0] = 5 * x[0]
        v *= 2
        return y

    _matches_numpy(f)
    g = ad.grad(lambda x: np.sum(f(x) * W))(X)
    np.testing.assert_array_equal(g, [W[0] + 10 * W[1], 0, 2 * W[2], 2 * W[3], W[4], W[5]])


def test_view_stays_current_after_writing_through_it():
    def f(x):
        y = x.copy()
        v = y[2:]
        v[1] = 0.0
        return v + y[2:]

    _matches_numpy(f)


def test_view_of_a_view_writes_through_both():
    def f(x):
        y = x.reshape(2, 3).copy()
        row = y[1]
        tail = row[1:]
        tail[0] = 100.0 * x[0]
        return y.ravel() + row.sum() + tail.sum()

    _matches_numpy(f)
    check_grads(f, [X], order=2)


def test_view_of_a_row_in_two_dimensions():
    def f(x):
        y = x.reshape(3, 2).copy()
        col = y[:, 1]
        col += x[:3]
        return y

    _matches_numpy(f)
    check_grads(f, [X], order=1)


def test_stale_view_raises_naming_the_write_location():
    def f(x):
        y = x.copy()
        v = y[1:4]
        y[0] = 1.0  # THE WRITE
        return np.sum(v)

    with pytest.raises(ad.StaleViewError, match=r"view \[1:4\].*test_mutation.py:\d+"):
        ad.grad(f)(X)


def test_sibling_view_goes_stale_when_another_view_writes():
    def f(x):
        y = x.copy()
        a, b = y[:3], y[3:]
        a[0] = 0.0
        return np.sum(b)

    with pytest.raises(ad.StaleViewError):
        ad.grad(f)(X)


@pytest.mark.parametrize("use", [
    lambda v: float(v[0]),
    lambda v: v.__setitem__(0, 1.0),
    lambda v: v.copy(),
    lambda v: v + 1,
])
def test_every_use_of_a_stale_view_raises(use):
    def f(x):
        y = x.copy()
        v = y[1:3]
        y += 1.0
        use(v)
        return np.sum(x)

    with pytest.raises(ad.StaleViewError):
        ad.grad(f)(X)


def test_stale_view_returned_from_the_function_raises():
    def f(x):
        y = x.copy()
        v = y[1:3]
        y[0] = 0.0
        return v

    with pytest.raises(ad.StaleViewError):
        ad.jacobian(f)(X)


def test_scalar_reads_are_copies_not_views():
    def f(x):
        y = x.copy()
        s = y[0]
        y[0] = 10.0
        return s + y[0]  # NumPy scalars are copies: no StaleViewError

    assert ad.grad(f)(X)[0] == 1.0
    _matches_numpy(f)


def test_advanced_index_reads_are_copies():
    def f(x):
        y = x.copy()
        c = y[[0, 1]]
        y[0] = 10.0
        c[1] = 0.0
        return c + y[:2]

    _matches_numpy(f)


def test_writing_through_a_transformed_view_raises():
    def f(x):
        y = x.reshape(2, 3).copy()
        t = y.T
        t[0, 0] = 1.0
        return np.sum(y)

    with pytest.raises(ad.MutationError, match="transformed view"):
        ad.grad(f)(X)


def test_transformed_view_goes_stale_when_root_is_written():
    def f(x):
        y = x.reshape(2, 3).copy()
        t = y.T
        y[0, 0] = 1.0
        return np.sum(t)

    with pytest.raises(ad.StaleViewError):
        ad.grad(f)(X)


@pytest.mark.parametrize("view", [
    lambda y: np.transpose(y), lambda y: np.reshape(y, (3, 2)), lambda y: np.ravel(y),
    lambda y: np.flip(y), lambda y: np.swapaxes(y, 0, 1), lambda y: y.reshape(-1),
    lambda y: y.ravel(), lambda y: y.T,
], ids=["transpose", "reshape", "ravel", "flip", "swapaxes", "method-reshape", "method-ravel",
        "T"])
def test_numpy_view_functions_give_read_only_views_that_go_stale(view):
    def write_through(x):
        y = x.reshape(2, 3).copy()
        v = view(y)
        v[0] = 1.0
        return np.sum(y)

    def read_after_write(x):
        y = x.reshape(2, 3).copy()
        v = view(y)
        y[0, 0] = 1.0
        return np.sum(v)

    def use_before_write(x):
        y = x.reshape(2, 3).copy()
        total = np.sum(view(y) * 2)
        y[0, 0] = 1.0
        return total + np.sum(y)

    with pytest.raises(ad.MutationError, match="transformed view"):
        ad.grad(write_through)(X)
    with pytest.raises(ad.StaleViewError, match="transformed view"):
        ad.grad(read_after_write)(X)
    np.testing.assert_array_equal(ad.grad(use_before_write)(X), [2, 3, 3, 3, 3, 3])


# --- what cannot be written ----------------------------------------------------------------

@pytest.mark.parametrize("write", [
    lambda x: x.__setitem__(0, 1.0),
    lambda x: x.__iadd__(1.0),
    lambda x: np.sin(x, out=x),
    lambda x: x[1:3].__setitem__(0, 1.0),
    lambda x: x.fill(0.0),
], ids=["setitem", "iadd", "out", "view-of-input", "fill"])
def test_mutating_an_input_raises_and_suggests_copy(write):
    def f(x):
        write(x)
        return np.sum(x)

    with pytest.raises(ad.MutationError, match=r"\.copy\(\)"):
        ad.grad(f)(X)


def test_copy_of_input_is_writable_and_input_unchanged():
    x = X.copy()

    def f(x):
        y = x.copy()
        y[0] = 100.0
        return np.sum(y * x)

    assert ad.grad(f)(x)[0] == 100.0
    np.testing.assert_array_equal(x, X)


def _write_scalar(plain, x):
    plain[0] = x[1]


def _write_slice(plain, x):
    plain[:2] = x[:2]


def _write_out(plain, x):
    np.sin(x, out=plain)


def _write_iadd(plain, x):
    plain += x


@pytest.mark.parametrize("write", [_write_scalar, _write_slice, _write_out, _write_iadd])
def test_writing_a_tracer_into_a_plain_array_raises(write):
    def f(x):
        plain = np.zeros(6)
        write(plain, x)
        return np.sum(x)

    with pytest.raises((ad.TracingError, ValueError)) as info:
        ad.grad(f)(X)
    # NumPy wraps the scalar case in ValueError("setting an array element with a sequence")
    error = info.value if isinstance(info.value, ad.TracingError) else info.value.__cause__
    assert isinstance(error, ad.TracingError)
    assert "zeros_like" in str(error)


def test_zeros_like_of_a_tracer_is_an_owned_writable_local():
    def f(x):
        y = np.zeros_like(x)
        y[1:] = x[:-1]
        return y

    _matches_numpy(f)
    check_grads(f, [X], order=2)


def test_inner_transform_cannot_write_into_outer_local():
    def f(x):
        y = x.copy()

        def inner(z):
            y[0] = z
            return z

        ad.grad(inner)(2.0)
        return np.sum(y)

    with pytest.raises(ad.MutationError, match="inner transform"):
        ad.grad(f)(X)


def test_boolean_mask_shape_mismatch_raises_index_error():
    def f(x):
        return np.sum(x[np.array([True, False])])

    with pytest.raises(IndexError, match="boolean index did not match"):
        ad.grad(f)(X)


def test_mutation_in_forward_mode_and_nested_transforms():
    def f(x):
        y = x * 1.0
        y[1:3] = x[1:3] ** 3
        y[0] *= x[0]
        return np.sum(y)

    expected_grad = np.array([2 * X[0], 3 * X[1] ** 2, 3 * X[2] ** 2, 1, 1, 1])
    np.testing.assert_allclose(ad.grad(f)(X), expected_grad)
    np.testing.assert_allclose(ad.hessian_diag(f)(X), [2, 6 * X[1], 6 * X[2], 0, 0, 0])


# --- the same rules while staging ----------------------------------------------------------

def _mutating(x):
    y = x.copy()
    v = y[1:4]
    v[0] = 5 * x[0]
    v *= 2
    y[[0, 0, 1]] += x[3:]
    y[2:] -= y[:-2]
    return y


def test_staged_mutation_matches_numpy_and_dynamic_gradient():
    program = ad.stage(_mutating, X)
    np.testing.assert_array_equal(program(X + 1), _mutating(X + 1))
    loss = lambda x: np.sum(_mutating(x) ** 2)
    np.testing.assert_allclose(ad.grad(ad.stage(loss, X))(X), ad.grad(loss)(X))


def test_staging_refuses_stale_views_and_input_writes():
    def stale(x):
        y = x.copy()
        v = y[1:3]
        y[0] = 1.0
        return v * 2

    with pytest.raises(ad.StaleViewError):
        ad.stage(stale, X)
    with pytest.raises(ad.MutationError, match=r"\.copy\(\)"):
        ad.stage(lambda x: x.__setitem__(0, 1.0), X)


def test_assigning_and_combining_lists_of_tracers_stays_traced():
    def f(x):
        y = np.zeros_like(x)
        y[0:2] = [x[2], x[0] * 2]
        return np.sum(y[:3] + [x[1], 0.0, 1.0])

    np.testing.assert_array_equal(ad.grad(f)(X), [2.0, 1.0, 1.0, 0, 0, 0])


# --- reads: basic, advanced and boolean __getitem__ ------------------------------------------

M = np.arange(1.0, 25.0).reshape(2, 3, 4) / 7


@pytest.mark.parametrize("key", [
    1, -1, (0, 2), slice(1, None), (slice(None), 1), (Ellipsis, 2), (None, 0), (0, None, 1),
    (slice(None, None, -1), slice(0, 3, 2)), ([0, 1, 1],), ([1, 0], [2, 0]),
    (slice(None), [0, 2, 2], slice(1, 3)), ([1, 0], slice(None), [3, 3]), np.array([[1], [0]]),
    (Ellipsis, np.array([3, 0])), (1, [2, 0], [0, 3]), (M[:, :, 0] > 0.5,),
    (slice(None), M[0, :, 0] > 0.3),
], ids=repr)
def test_getitem_matches_numpy_and_differentiates(key):
    f = lambda m: m[key] * 2.0
    np.testing.assert_array_equal(ad.jvp(f)(M, tangents=np.ones_like(M))[0], f(M))
    check_grads(f, [M], order=2)


def test_repeated_advanced_reads_accumulate_gradients():
    g = ad.grad(lambda x: np.sum(x[[0, 0, 2, 0]] * np.array([1.0, 2.0, 3.0, 4.0])))(X)
    np.testing.assert_array_equal(g, [7.0, 0.0, 3.0, 0, 0, 0])


def test_boolean_mask_reads_are_dynamic_only():
    with pytest.raises(ad.TracingError, match="boolean mask"):
        ad.stage(lambda x: x[x > 2.0], X)


def test_getitem_out_of_bounds_raises_index_error():
    with pytest.raises(IndexError, match="out of bounds"):
        ad.grad(lambda x: x[6])(X)
    with pytest.raises(IndexError, match="too many indices"):
        ad.grad(lambda x: np.sum(x[0, 0]))(X)


# --- random write programs against NumPy ---------------------------------------------------

def _random_program(rng, steps=5):
    """A list of writes ``(kind, key, source)`` for a local of shape (4, 5)."""
    keys = [
        (1,), (slice(1, 3),), (slice(None), 2), (slice(None, None, -1), slice(0, 5, 2)),
        (Ellipsis, 4), (np.array([0, 2, 2]),), (np.array([3, 0]), np.array([1, 1])),
        (slice(None), np.array([4, 0, 4])),
    ]
    kinds = ["set", "iadd", "imul", "view-set", "view-iadd", "mask-set", "mask-imul"]
    return [(kinds[rng.integers(len(kinds))], keys[rng.integers(len(keys))],
             int(rng.integers(3))) for _ in range(steps)]


def _run_program(program, x):
    """Apply the writes to a copy of ``x``; works on NumPy arrays and on tracers alike."""
    y = x.copy()
    sources = [x[::-1], np.sin(x), x * x]
    for kind, key, s in program:
        src = sources[s]
        if kind == "set":
            y[key] = src[key]
        elif kind == "iadd":
            y[key] += src[key]
        elif kind == "imul":
            y[key] *= src[key]
        elif kind == "view-set":
            v = y[1:3]
            v[0] = src[0]
        elif kind == "view-iadd":
            v = y[:, 1:]
            v += src[:, 1:]
        elif kind == "mask-set":
            y[x > 0.5] = src[x > 0.5]
        else:
            y[x < 0.0] *= src[x < 0.0]
    return y


def _check_random_program(seed, order):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (4, 5))
    x[np.abs(x - 0.5) < 0.05] += 0.1  # keep the masks away from their edges
    x[np.abs(x) < 0.05] += 0.1
    program = _random_program(rng)
    f = lambda x: _run_program(program, x)
    np.testing.assert_allclose(ad.jvp(f)(x, tangents=np.ones_like(x))[0], f(x), rtol=1e-14)
    check_grads(f, [x], order=order)


@pytest.mark.parametrize("seed", range(12))
def test_random_write_programs_match_numpy_and_differentiate(seed):
    _check_random_program(seed, order=1)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12, 300))
def test_random_write_programs_sweep(seed):
    _check_random_program(seed, order=2)

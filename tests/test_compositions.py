"""Compositions against independent oracles: random NumPy programs (``tests/programs.py``).

Each program is checked, at a point away from its kinks, for

* ``grad`` against central differences (float64);
* ``jvp`` of its array-valued body against a directional central difference, and ``vjp``
  against ``jvp`` by the adjoint identity ``<u, J t> == <J^T u, t>``;
* ``hvp`` against central differences of ``grad``;
* ``stage``: the staged body and loss against eager NumPy in value, shape and dtype, and the
  staged gradient ``grad(stage(f, *x))`` against the dynamic one;
* float32 inputs: every transform keeps NumPy's dtypes (float32 gradients for float32 inputs,
  outputs in eager NumPy's dtype) and agrees with the float64 answer.

The fast profile runs in CI; ``-m slow`` runs the long one. Regression tests for the bugs these
checks found sit at the end.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import advect as ad
from programs import Program, programs

FAST = settings(max_examples=150, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large])
SLOW = settings(FAST, max_examples=3000, derandomize=False)
EPS = 1e-6


def _leaves(value) -> list:
    return list(value) if isinstance(value, tuple) else [value]


def _same_kind(actual, expected, what: str) -> None:
    """Shape and dtype of ``actual`` equal eager NumPy's ``expected``."""
    a, e = np.asarray(actual), np.asarray(expected)
    assert a.shape == e.shape, f"{what}: shape {a.shape}, eager NumPy {e.shape}"
    assert a.dtype == e.dtype, f"{what}: dtype {a.dtype}, eager NumPy {e.dtype}"


def _close(actual, expected, what: str, rtol: float, atol: float = 0.0) -> None:
    a = np.asarray(actual, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64)
    assert a.shape == e.shape, f"{what}: shape {a.shape}, expected {e.shape}"
    scale = 1.0 + (np.max(np.abs(e)) if e.size else 0.0)
    assert np.allclose(a, e, rtol=rtol, atol=atol * scale), \
        f"{what}:\n{np.round(a, 8).tolist()}\nexpected\n{np.round(e, 8).tolist()}"


def _shift(xs, ts, eps):
    return [x + eps * float(t) if isinstance(x, float) else np.asarray(x + eps * t)
            for x, t in zip(xs, ts)]  # a 0-d array stays an array, not a NumPy scalar


def _central(fun, xs, ts, eps=EPS) -> list:
    """Directional central difference of ``fun`` (one per output leaf)."""
    with np.errstate(all="ignore"):
        up = _leaves(fun(*_shift(xs, ts, eps)))
        dn = _leaves(fun(*_shift(xs, ts, -eps)))
    return [(np.asarray(u, dtype=np.float64) - np.asarray(d, dtype=np.float64)) / (2 * eps)
            for u, d in zip(up, dn)]


def _central_grad(f, xs) -> list:
    grads = []
    for i, x in enumerate(xs):
        g = np.zeros(np.shape(x))
        for k in range(g.size):
            e = [np.zeros(np.shape(y)) for y in xs]
            e[i].reshape(-1)[k] = 1.0
            g.reshape(-1)[k] = _central(f, xs, e)[0]
        grads.append(g)
    return grads


def _dot(a, b) -> float:
    return sum(float(np.sum(np.asarray(x, dtype=np.float64) * np.asarray(y, dtype=np.float64)))
               for x, y in zip(a, b))


def check_float64(program: Program) -> None:
    body, f, xs, out, loss = program.eager(np.float64)
    argnums = tuple(range(len(xs)))
    grads = ad.grad(f, argnums=argnums)(*xs)
    for i, (g, fd, x) in enumerate(zip(grads, _central_grad(f, xs), xs)):
        if isinstance(x, float):
            assert type(g) is float, f"grad wrt Python float x{i} is {type(g).__name__}"
        else:
            _same_kind(g, x, f"grad wrt x{i}")
        _close(g, fd, f"grad wrt x{i} vs central differences", 1e-4, 1e-5)

    ts = program.directions(salt=1)
    value, tangent = ad.jvp(body, argnums=argnums)(*xs, tangents=tuple(ts))
    for k, (v, t, o, fd) in enumerate(zip(_leaves(value), _leaves(tangent), _leaves(out),
                                          _central(body, xs, ts))):
        _same_kind(v, o, f"jvp value {k}")
        _close(v, o, f"jvp value {k}", 1e-12, 1e-12)
        _same_kind(t, o, f"jvp tangent {k}")
        _close(t, fd, f"jvp tangent {k} vs central differences", 1e-4, 1e-5)

    value, pullback = ad.vjp(body, argnums=argnums)(*xs)
    rng = np.random.default_rng([program.seed, 2])
    us = [rng.standard_normal(np.shape(o)) for o in _leaves(out)]
    cts = pullback(tuple(us) if isinstance(out, tuple) else us[0])
    for i, (c, x) in enumerate(zip(cts, xs)):
        assert np.shape(c) == np.shape(x), f"vjp wrt x{i}: shape {np.shape(c)}"
    lhs, rhs = _dot(us, _leaves(tangent)), _dot(cts, ts)
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1 + abs(lhs))), \
        f"adjoint identity: <u, J t> = {lhs!r}, <J^T u, t> = {rhs!r}"

    _, hv = ad.hvp(f, argnums=argnums)(*xs, vectors=tuple(ts))
    grad = ad.grad(f, argnums=argnums)
    fd = _central(lambda *x: tuple(grad(*x)), xs, ts, eps=1e-5)
    for i, (h, d) in enumerate(zip(hv, fd)):
        if np.max(np.abs(d), initial=0.0) < 1e4:  # beyond, the differences' error is too big
            _close(h, d, f"hvp wrt x{i} vs central differences of grad", 1e-4, 1e-5)

    staged = ad.stage(f, *xs)
    value = staged(*xs)
    _same_kind(value, loss, "staged loss")
    _close(value, loss, "staged loss vs eager", 1e-9, 1e-12)
    staged_body = ad.stage(body, *xs)
    for k, (v, o) in enumerate(zip(_leaves(staged_body(*xs)), _leaves(out))):
        _same_kind(v, o, f"staged body output {k}")
        _close(v, o, f"staged body output {k} vs eager", 1e-9, 1e-12)
    for i, (s, g) in enumerate(zip(ad.grad(staged, argnums=argnums)(*xs), grads)):
        _close(s, g, f"staged grad wrt x{i} vs dynamic grad", 1e-9, 1e-12)


def check_float32(program: Program) -> None:
    """float32 in: NumPy's dtypes out of every transform, answers near the float64 ones.

    With a Python float input the dtype reference is the dynamic transform, not eager NumPy:
    Advect's contract keeps a NumPy function of Python scalars weak (``np.sin(a) * x32`` is
    float32; eager NumPy makes ``np.sin(a)`` a strong float64), so both lifetimes must agree
    with each other there.
    """
    _, f64, xs64, _, _ = program.eager(np.float64)
    body, f, xs, out, loss = program.eager(np.float32)
    strict = not any(program.python_float)
    argnums = tuple(range(len(xs)))
    reference = ad.grad(f64, argnums=argnums)(*xs64)
    value, grads = ad.value_and_grad(f, argnums=argnums)(*xs)
    ref_loss = loss if strict else value
    _same_kind(value, ref_loss, "float32 value_and_grad value")
    for i, (g, r, x) in enumerate(zip(grads, reference, xs)):
        if not isinstance(x, float):
            _same_kind(g, x, f"float32 grad wrt x{i}")
        _close(g, r, f"float32 grad wrt x{i} vs float64", 2e-3, 2e-3)
    ts = program.directions(np.float32, salt=1)
    value, tangent = ad.jvp(body, argnums=argnums)(*xs, tangents=tuple(ts))
    ref_out = _leaves(out) if strict else _leaves(value)
    for k, (v, t, o) in enumerate(zip(_leaves(value), _leaves(tangent), ref_out)):
        _same_kind(v, o, f"float32 jvp value {k}")
        _same_kind(t, o, f"float32 jvp tangent {k}")
    value, pullback = ad.vjp(body, argnums=argnums)(*xs)
    for k, (v, o) in enumerate(zip(_leaves(value), ref_out)):
        _same_kind(v, o, f"float32 vjp value {k}")
    us = [np.ones(np.shape(o), np.asarray(o).dtype) for o in ref_out]
    cts = pullback(tuple(us) if isinstance(out, tuple) else us[0])
    for i, (c, x) in enumerate(zip(cts, xs)):
        if not isinstance(x, float):
            _same_kind(c, x, f"float32 vjp wrt x{i}")
    _, hv = ad.hvp(f, argnums=argnums)(*xs, vectors=tuple(ts))
    for i, (h, x) in enumerate(zip(hv, xs)):
        if not isinstance(x, float):
            _same_kind(h, x, f"float32 hvp wrt x{i}")
    rtol = 1e-5 if strict else 1e-4  # eager NumPy may compute part of it in float64
    staged = ad.stage(f, *xs)
    value = staged(*xs)
    _same_kind(value, ref_loss, "float32 staged loss")
    _close(value, loss, "float32 staged loss vs eager", rtol, 1e-6)
    for k, (v, r, o) in enumerate(zip(_leaves(ad.stage(body, *xs)(*xs)), ref_out,
                                      _leaves(out))):
        _same_kind(v, r, f"float32 staged body output {k}")
        _close(v, o, f"float32 staged body output {k} vs eager", rtol, 1e-6)
    for i, (s, x) in enumerate(zip(ad.grad(staged, argnums=argnums)(*xs), xs)):
        if not isinstance(x, float):
            _same_kind(s, x, f"float32 staged grad wrt x{i}")


@FAST
@given(programs())
def test_compositions_float64(program):
    check_float64(program)


@settings(FAST, max_examples=80)
@given(programs())
def test_compositions_float32(program):
    check_float32(program)


@pytest.mark.slow
@SLOW
@given(programs(max_steps=10))
def test_compositions_float64_long(program):
    check_float64(program)


@pytest.mark.slow
@SLOW
@given(programs(max_steps=10))
def test_compositions_float32_long(program):
    check_float32(program)


# --- regressions: each a bug the checks above found ----------------------------------------

def _all_modes(f, x, expected):
    """grad, jvp, hvp-free staged grad and staged value of ``f`` at ``x`` against ``expected``
    (the gradient) and eager NumPy."""
    np.testing.assert_allclose(ad.grad(f)(x), expected, rtol=1e-12)
    _, t = ad.jvp(f)(x, tangents=np.ones_like(x))
    np.testing.assert_allclose(t, np.sum(expected), rtol=1e-12)
    staged = ad.stage(f, x)
    _same_kind(staged(x), f(x), "staged value")
    np.testing.assert_allclose(staged(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(staged)(x), expected, rtol=1e-12)


@pytest.mark.parametrize("scan", [np.cumsum, np.cumprod, np.nancumsum, np.nancumprod])
@pytest.mark.parametrize("axis", [0, -1, None])
def test_scan_of_a_0d_array_is_a_1_element_scan(scan, axis):
    # NumPy scans a 0-d array as a 1-element 1-d one: shape (1,), axis 0 or -1
    x = np.array(0.7)
    _all_modes(lambda x: np.sum(scan(x, axis=axis) ** 2), x, 2 * x)
    assert ad.stage(lambda x: scan(x, axis=axis), x)(x).shape == (1,)


def test_scan_of_a_0d_array_refuses_axis_1_as_numpy_does():
    with pytest.raises(np.exceptions.AxisError):
        ad.grad(lambda x: np.sum(np.cumsum(x, axis=1)))(np.array(0.5))


@pytest.mark.parametrize("reduce", [np.max, np.min, np.amax])
@pytest.mark.parametrize("x, axis", [(np.array(0.7), None), (np.array([0.3, 0.7]), ())])
def test_max_min_reducing_no_axes_is_the_identity(reduce, x, axis):
    _all_modes(lambda x: np.sum(reduce(x, axis=axis) ** 2), x, 2 * x)
    _, hv = ad.hvp(lambda x: np.sum(reduce(x, axis=axis) ** 2))(x, vectors=np.ones_like(x))
    np.testing.assert_allclose(hv, 2 * np.ones_like(x))


def test_assignment_drops_a_values_leading_length_1_axes_as_numpy_does():
    def f(x):
        y = np.zeros_like(x)
        y[0] = np.sum(x, axis=0, keepdims=True) * 2  # (1, 3) into (3,)
        y[1:] = x[None, :1]  # (1, 1, 3) into (1, 3)
        return np.sum(y * x)

    x = np.arange(6.0).reshape(2, 3)
    expected = np.array([[9.0, 16.0, 23.0], [0.0, 3.0, 6.0]])  # 4 x0 + 3 x1 and 3 x0
    _close(ad.grad(f)(x), expected, "grad", 1e-12)
    _close(ad.grad(ad.stage(f, x))(x), expected, "staged grad", 1e-12)
    _close(ad.stage(f, x)(x), f(x), "staged value", 1e-12)


def test_assignment_of_a_1_element_array_into_a_0d_copy():
    def f(x):
        y = x.copy()
        y[...] = np.sin(x)[None]
        return np.sum(y)

    _all_modes(f, np.array(0.3), np.cos(0.3))


def test_where_of_python_scalars_is_a_strong_array():
    # np.where returns an array: with float32 operands its float64 result promotes (NEP 50);
    # the staged rule used to call it weak, so specs said float32 while the program returned
    # float64 (and the staged gradient of np.minimum(x32, 0.2) came back float64)
    x = np.array([[-0.9, -0.5, 0.1], [0.3, 0.7, 1.1]], dtype=np.float32)
    f = lambda x: np.where(x > 0, 1.0, 0.0) * x  # noqa: E731
    staged = ad.stage(f, x)
    _same_kind(staged(x), f(x), "staged where")
    assert staged.output_specs == ad.ArraySpec((2, 3), "float64")
    g = ad.grad(ad.stage(lambda x: np.sum(np.minimum(x, 0.2)), x))(x)
    _same_kind(g, x, "staged grad of minimum")
    np.testing.assert_array_equal(g, (x < 0.2).astype(np.float32))


@pytest.mark.parametrize("f, expected", [
    (lambda a: np.sum(np.stack([a, a])), 2.0),
    (lambda a: np.sum(np.expand_dims(a, 0) * 3.0), 3.0),
    (lambda a: np.prod(a) * 2.0, 2.0),
])
def test_shape_ops_take_a_python_float_input(f, expected):
    # a Python float input stays a Python float primal (weak); expand_dims assumed an array
    assert ad.grad(f)(0.5) == expected
    assert float(ad.jvp(f)(0.5, tangents=1.0)[1]) == expected
    assert float(ad.stage(f, 0.5)(0.5)) == f(0.5)
    assert ad.grad(ad.stage(f, 0.5))(0.5) == expected


def test_writing_a_python_float_input_into_a_float32_copy():
    def f(x, a):
        y = x.copy()
        y[0] = np.exp(a)  # a weak Python scalar: written in y's dtype, no cast op
        return np.sum(y * x)

    x = np.array([0.5, 2.0], dtype=np.float32)
    g = ad.grad(f, argnums=(0, 1))(x, 0.25)
    staged = ad.grad(ad.stage(f, x, 0.25), argnums=(0, 1))(x, 0.25)
    for x_grad, a_grad in (g, staged):
        _same_kind(x_grad, x, "grad wrt x")
        np.testing.assert_allclose(x_grad, [np.exp(0.25), 4.0], rtol=1e-6)
        np.testing.assert_allclose(a_grad, 0.5 * np.exp(0.25), rtol=1e-6)
    _same_kind(ad.stage(f, x, 0.25)(x, 0.25), f(x, 0.25), "staged value")


@pytest.mark.parametrize("reduce", [np.sum, np.mean, np.max, np.min, np.prod])
def test_a_numpy_function_of_a_python_float_input_is_strong_as_in_numpy(reduce):
    # NumPy's functions return NumPy values: np.sum(0.75) is np.float64, which promotes like
    # an array (reduce(a) * float32_x is float64); only Python operators keep Python scalars
    # weak. Both lifetimes once said weak (float32) here
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    f = lambda a, x: reduce(a) * x  # noqa: E731
    dynamic, _ = ad.jvp(f, argnums=(0, 1))(0.75, x, tangents=(1.0, x))
    staged = ad.stage(f, 0.75, x)
    assert f(0.75, x).dtype == np.float64
    assert dynamic.dtype == staged(0.75, x).dtype == staged.output_specs.dtype == np.float64
    for alone in (ad.stage(reduce, 0.75)(0.75), ad.value_and_grad(reduce)(0.75)[0],
                  ad.jvp(reduce)(0.75, tangents=1.0)[0]):
        assert type(alone) is type(reduce(0.75)) is np.float64 and alone == reduce(0.75)
    # the derivative of the weak input is still a Python float
    assert type(ad.grad(lambda a: reduce(a) * 2.0)(0.75)) is float
    weak = lambda a, x: (a * 2.0) * x  # noqa: E731
    assert ad.stage(weak, 0.75, x)(0.75, x).dtype == weak(0.75, x).dtype == np.float32


@pytest.mark.parametrize("g", [
    lambda a: np.reshape(a, (1,)), lambda a: np.expand_dims(a, 0), lambda a: np.stack([a, a, a]),
    np.cumsum, np.ravel, np.atleast_1d,  # an array of a Python float is strong: float64
    lambda a: (a > 0) * a, lambda a: np.isnan(a) + a,  # Python scalars in: a Python scalar
], ids=["reshape", "expand_dims", "stack", "cumsum", "ravel", "atleast_1d", "compare", "isnan"])
def test_python_float_input_dtypes_agree_between_lifetimes(g):
    # only a 0-d value can be weak: staged specs said float32 for reshape(a, (1,)) * x32 while
    # the program returned NumPy's float64; comparisons of Python scalars are weak bools
    x = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    f = lambda a, x: g(a) * x  # noqa: E731
    dynamic, _ = ad.jvp(f, argnums=(0, 1))(0.75, x, tangents=(1.0, x))
    staged = ad.stage(f, 0.75, x)
    assert dynamic.dtype == staged(0.75, x).dtype == staged.output_specs.dtype
    if not ad.is_traced(g(0.75)) and np.ndim(g(0.75)):  # NumPy made an array: as eager
        assert dynamic.dtype == f(0.75, x).dtype


# --- fast paths against the general path ---------------------------------------------------

def _reference_backward(tape, seeds, keep=False):
    """The reverse walk with no fast path: every cotangent is cast and broadcast to its
    variable's exact shape before it is added up or handed to a transpose."""
    from advect import ops
    from advect.autodiff.reverse import LinearTracer
    from advect.dtypes import aval_of
    from advect.ops import _rules

    cts: dict = {}

    def accumulate(var, ct):
        ct = _rules.fit(ct, var.aval.update(shape=tuple(aval_of(ct).shape)))  # dtype
        if tuple(aval_of(ct).shape) != var.aval.shape:
            ct = ops.broadcast_to(ct, shape=var.aval.shape)
        old = cts.get(var.index)
        cts[var.index] = ct if old is None else ops.add(old, ct)

    for var, ct in seeds:
        if var is not None and ct is not None:
            accumulate(var, ct)
    for op, args, attrs, out in reversed(list(tape)):
        if op.multiple_results:
            ct = tuple(cts.pop(o.index, None) for o in out)
            if all(c is None for c in ct):
                continue
        else:
            ct = cts.pop(out.index, None)
            if ct is None:
                continue
        for a, c in zip(args, op.transpose(ct, *args, **attrs)):
            if c is not None and type(a) is LinearTracer:
                accumulate(a, c)
    if not keep:
        tape.clear()
    return cts


def _use_reference_backward(patch: pytest.MonkeyPatch) -> None:
    """Every module that walks a tape uses :func:`_reference_backward` until ``patch`` undoes it."""
    from advect.autodiff import api, checkpoint, maps
    from advect.staging import derive

    for module in (api, maps, checkpoint, derive):
        patch.setattr(module, "backward", _reference_backward)


def _reverse_results(program: Program):
    body, f, xs, out, _ = program.eager(np.float64)
    argnums = tuple(range(len(xs)))
    grads = ad.grad(f, argnums=argnums)(*xs)
    _, pullback = ad.vjp(body, argnums=argnums)(*xs)
    rng = np.random.default_rng([program.seed, 2])
    us = [rng.standard_normal(np.shape(o)) for o in _leaves(out)]
    cts = pullback(tuple(us) if isinstance(out, tuple) else us[0])
    staged = ad.grad(ad.stage(f, *xs), argnums=argnums)(*xs)
    single = [ad.grad(f)(xs[0])] if len(xs) == 1 else []  # the one-argument selection
    return [*grads, *cts, *staged, *single]


@settings(FAST, max_examples=60)
@given(programs())
def test_reverse_fast_paths_agree_with_the_general_path(program):
    # the lazily broadcast cotangents (_accumulate, _expand), the inline store and the in-place
    # add in backward, unbroadcast leaving smaller axes alone, reduce_sum's unexpanded
    # transpose: all against a walk that materializes every cotangent at its exact shape
    fast = _reverse_results(program)
    with pytest.MonkeyPatch.context() as patch:
        _use_reference_backward(patch)
        general = _reverse_results(program)
    for k, (a, b) in enumerate(zip(fast, general)):
        _same_kind(a, b, f"result {k}")
        _close(a, b, f"result {k}: fast path vs general path", 1e-12, 1e-14)
    if len(program.shapes) == 1:  # the one-argument selection against the tuple selection
        _close(fast[-1], fast[0], "grad(f)(x) vs grad(f, argnums=(0,))(x)[0]", 0.0)


@pytest.mark.parametrize("reproduction", [
    lambda a, b, y: np.sum(a + a * b),
    lambda a, b, y: np.sum(np.where(a[0, 0] > 0.1, a[0, 0] * 2.0, y)),
    lambda a, b, y: np.sum(np.max(b[0], axis=0, keepdims=True) - b[0]),
    lambda a, b, y: np.mean(a * b + np.sum(a)) * np.sum(b),
])
def test_issue_10_reproductions_fast_and_general(reproduction):
    a = np.array([[0.5], [1.5]])
    b = np.array([[0.1, 0.7, 0.3], [0.9, 0.2, 0.4]])
    y = np.ones((2, 3, 1))
    with pytest.MonkeyPatch.context() as patch:
        _use_reference_backward(patch)
        general = ad.grad(reproduction, argnums=(0, 1))(a, b, y)
    fast = ad.grad(reproduction, argnums=(0, 1))(a, b, y)
    staged = ad.grad(ad.stage(reproduction, a, b, y), argnums=(0, 1))(a, b, y)
    expected = (_central_grad(lambda a_: reproduction(a_, b, y), [a])[0],
                _central_grad(lambda b_: reproduction(a, b_, y), [b])[0])
    for g, f, s, e in zip(general, fast, staged, expected):
        for got, what in ((g, "general"), (f, "fast"), (s, "staged")):
            _close(got, e, f"{what} gradient vs central differences", 1e-6, 1e-7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("read", [
    lambda y: y[0] * y[1] + y[0] ** 2 - y[1, ::2] @ y[0, :2],   # repeated reads of one array
    lambda y: np.stack([y[1], -2.0 * np.sin(y[0])]) * y,         # the RK4 pattern
    lambda y: y[..., 1] * y[:, None, 2] + y[-1, -1],             # ellipsis, new axes, negatives
    lambda y: (y + 1.0)[0] * y[0] + np.float32(2) * y[1],        # a temporary's cotangent
])
def test_basic_index_transposes_in_place_agree_with_the_general_path(read, dtype):
    # the gather fast path writes into zeros or adds into a temporary cotangent in place:
    # against the general walk (zeros, scatter_add, add), and the input left unchanged
    y = (np.arange(6.0).reshape(2, 3) / 5 - 0.3).astype(dtype)
    before = y.copy()
    weights = np.random.default_rng(4).standard_normal(np.shape(read(y)))
    loss = lambda y: np.sum(np.real(read(y) * weights))  # noqa: E731
    fast = ad.grad(loss)(y)
    with pytest.MonkeyPatch.context() as patch:
        _use_reference_backward(patch)
        general = ad.grad(loss)(y)
    _same_kind(fast, general, "gradient")
    np.testing.assert_array_equal(fast, general)  # the same sums in the same order
    assert fast.flags.writeable and fast.base is None
    np.testing.assert_array_equal(y, before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.bool_, np.complex128])
@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
@pytest.mark.parametrize("reduce", [np.sum, np.mean])
def test_sum_fast_path_agrees_with_the_general_reduction(dtype, shape, reduce):
    # np.sum(x) and np.mean(x) skip the general reduction path: same value, dtype and
    # derivatives as the reduction over every axis spelled out (the general path), dynamic
    # and staged
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 3 - 0.5).astype(dtype)
    fast = lambda x: reduce(x * 2)  # noqa: E731
    general = lambda x: reduce(x * 2, axis=tuple(range(np.ndim(x))), keepdims=False)  # noqa: E731
    for f in (fast, general):
        _same_kind(ad.stage(f, x)(x), general(x), "staged np.sum")
        tangent = np.ones_like(x) if np.dtype(dtype).kind in "fc" else np.zeros_like(x)
        _same_kind(ad.jvp(f)(x, tangents=tangent)[0], general(x), "jvp value")
    if np.dtype(dtype).kind == "f":
        np.testing.assert_array_equal(ad.grad(fast)(x), ad.grad(general)(x))
        np.testing.assert_array_equal(ad.grad(ad.stage(fast, x))(x), ad.grad(general)(x))
        _same_kind(ad.grad(fast)(x), x, "grad")


@settings(FAST, max_examples=60)
@given(programs())
def test_tape_avals_recorded_without_the_abstract_rule_agree_with_it(program):
    # apply_linear records a linear op's tangent with the primal result's aval instead of
    # deriving it: every equation's aval must be what the op's abstract rule gives
    from advect.autodiff.reverse import LinearTracer, linearize_flat
    from advect.dtypes import aval_of

    _, f, xs, _, _ = program.eager(np.float64)
    out, _, trace, tape = linearize_flat(f, [np.asarray(x) for x in xs])
    equations = list(tape.tape)
    trace.close()
    tape.close()
    for op, args, attrs, var in equations:
        avals = [a.aval if type(a) is LinearTracer else aval_of(a) for a in args]
        expected = op.abstract(*avals, **attrs)
        got = tuple(v.aval for v in var) if op.multiple_results else var.aval
        assert got == expected, f"{op.name}: recorded {got}, the abstract rule gives {expected}"


@pytest.mark.parametrize(("op_name", "var_dtype", "constant", "out", "swap"), [
    ("multiply", "float64", np.full(3, 2.0), np.zeros(3), False),  # the fast path
    ("multiply", "float64", np.full(3, 2.0), np.zeros(3), True),   # constant first
    ("divide", "float32", np.full(3, 2.0, np.float32), np.zeros(3, np.float32), False),
    ("multiply", "float32", np.full(3, 2.0), np.zeros(3), False),  # promotes: the general path
    ("multiply", "float64", np.full((2, 3), 2.0), np.zeros((2, 3)), False),  # broadcasts
    ("multiply", "float64", 2.0, np.zeros(3), False),              # a Python scalar constant
])
def test_fitted_records_what_the_general_path_records(op_name, var_dtype, constant, out, swap):
    # fitted(op, a, b, out) records a tangent times a constant without dispatch when the avals
    # agree; it must leave the tape exactly as fit(op(a, b), out) does
    from advect import ops
    from advect.autodiff.reverse import LinearTrace
    from advect.dtypes import Aval
    from advect.ops import _rules

    op = getattr(ops, op_name)
    tapes = []
    for rule in (_rules.fitted, lambda op, a, b, out: _rules.fit(op(a, b), out)):
        trace = LinearTrace()
        var = trace.new_var(Aval((3,), np.dtype(var_dtype)))
        a, b = (constant, var) if swap else (var, constant)
        result = rule(op, a, b, out)
        tapes.append([(o.name, tuple(type(x) for x in args), attrs, v.aval)
                      for o, args, attrs, v in trace.tape] + [result.aval])
        trace.close()
    assert tapes[0] == tapes[1]


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize(("shape", "shift", "axes"), [
    ((8,), (1,), (0,)), ((8,), (-11,), (0,)), ((3, 4), (2,), (1,)), ((3, 4), (5,), (-1,)),
    ((2, 3, 5), (1,), (1,)), ((0, 3), (1,), (0,)), ((4, 0), (2,), (1,)), ((3,), (0,), (0,)),
    ((3, 4), (1, -2), (0, 1)), ((3, 4), (1, 1), (0, 0)),  # several axes: np.roll itself
])
def test_roll_fast_path_agrees_with_np_roll(shape, shift, axes, order):
    from advect import ops

    x = np.array(np.arange(float(np.prod(shape))).reshape(shape), order=order)
    got, expected = ops.roll.impl(np, x, shift=shift, axes=axes), np.roll(x, shift, axis=axes)
    _same_kind(got, expected, "roll")
    np.testing.assert_array_equal(got, expected)
    assert got.flags.c_contiguous == expected.flags.c_contiguous and got.flags.writeable


def test_value_and_grad_scalar_lowering_agrees_with_the_pullback():
    # value_and_grad takes the output tracer's tangent directly (no flattening) and skips the
    # scalar check for NumPy float scalars; vjp lowers through the general path
    x = np.array([0.3, -1.2, 2.0], dtype=np.float32)
    for f in (lambda x: np.sum(np.sin(x) * x), lambda x: np.sin(x)[1] * 2.0,
              lambda x: (np.sin(x) ** 2).mean(), lambda x: np.float32(2.0) * 0.0 + x[0]):
        value, g = ad.value_and_grad(f)(x)
        v, pullback = ad.vjp(f)(x)
        _same_kind(value, f(x), "value")
        _same_kind(g, x, "gradient")
        np.testing.assert_array_equal(g, pullback(np.ones((), np.asarray(v).dtype)))
    with pytest.raises(ValueError, match="scalar output"):
        ad.grad(lambda x: x * 2)(x)


def test_gradients_own_their_memory():
    # add's transpose hands one array to both operands: grad(argnums=(0, 1)) returned the same
    # object twice, so an in-place update of one gradient changed the other; a transposed
    # broadcast came back as a read-only stride-0 view
    x, y, w = np.ones(3), np.ones(3), np.arange(3.0)
    for f in (lambda x, y: np.sum((x + y) * w), lambda x, y: np.sum((x.reshape(3) + y) * w),
              lambda x, y: np.sum(x.T + y)):
        gx, gy = ad.grad(f, argnums=(0, 1))(x, y)
        assert not np.shares_memory(gx, gy)
        assert gx.flags.writeable and gy.flags.writeable
    g = ad.grad(lambda x: np.sum(x.T))(np.ones((2, 3)))
    assert g.flags.writeable
    g *= 2.0
    np.testing.assert_array_equal(g, np.full((2, 3), 2.0))
    ct = np.ones(3)
    _, pullback = ad.vjp(lambda x: x)(x)
    assert not np.shares_memory(pullback(ct), ct)


@pytest.mark.parametrize("tri", [np.tril, np.triu])
@pytest.mark.parametrize("k", [-1, 0, 1])
def test_tril_triu_of_a_1d_array_broadcast_as_numpy_does(tri, k):
    x = np.array([0.5, -1.0, 2.0])
    f = lambda x: np.sum(np.sin(tri(x, k)))  # noqa: E731
    expected = np.sum(np.cos(x) * tri(np.ones((3, 3)), k), axis=0)
    _all_modes(f, x, expected)
    assert ad.stage(lambda x: tri(x, k), x)(x).shape == (3, 3)


def test_linear_trace_same_aval_shortcut_agrees_with_the_abstract_rule():
    # LinearTrace.process skips broadcast_binary for a tape variable and a constant of the
    # same aval, or a Python scalar; wherever it answers, it must be the rule's answer
    from advect.autodiff.reverse import LinearTrace, _same_aval
    from advect.dtypes import Aval, aval_of
    from advect.ops._rules import broadcast_binary

    trace = LinearTrace()
    try:
        for dtype in (np.float32, np.float64, np.complex64, np.complex128, np.int32, np.int64):
            # a weak variable stands for a Python scalar: float64, complex128 or int64
            for weak in (False, True) if dtype in (np.float64, np.complex128, np.int64) \
                    else (False,):
                var = trace.new_var(Aval((), np.dtype(dtype), weak))
                full = trace.new_var(Aval((2, 3), np.dtype(dtype)))
                for v in (var, full):
                    for other in (np.ones(v.shape, dtype), np.ones(v.shape, np.float64), 2.0, 3,
                                  np.float32(2.0), v, trace.new_var(v.aval.update(weak=False))):
                        got = _same_aval(v, other)
                        other_aval = other.aval if hasattr(other, "aval") else aval_of(other)
                        if got is not None:
                            assert got == broadcast_binary(v.aval, other_aval), (v, other)
    finally:
        trace.close()


def test_in_place_operators_on_a_0d_result_rebind_as_numpy_scalars_do():
    # np.sum(x) is an immutable NumPy scalar: ``v += 1`` rebinds v and an alias keeps the old
    # value; the 0-d tracer was updated in place, so every alias (a list of running losses)
    # silently changed: value 12 instead of 3, gradient 3 instead of 1
    x = np.array([1.0, 2.0])

    def alias(x):
        v = np.sum(x)
        w = v
        v += 1.0
        v *= 3.0
        return w * 1.0

    def history(x):
        seen, loss = [], np.sum(x ** 2)
        for i in range(3):
            seen.append(loss)
            loss += x[i % 2]
        return seen[0] + seen[2] + loss

    for f, expected in ((alias, [1.0, 1.0]), (history, [9.0, 14.0])):
        _close(ad.value_and_grad(f)(x)[0], f(x), "value", 1e-12)
        _close(ad.grad(f)(x), expected, "grad", 1e-12)
        _close(ad.stage(f, x)(x), f(x), "staged value", 1e-12)
        _close(ad.grad(ad.stage(f, x))(x), expected, "staged grad", 1e-12)


@pytest.mark.parametrize("axis", [0, -1, None])
def test_repeat_of_a_0d_array_is_a_1d_repeat(axis):
    x = np.array(0.7)
    _all_modes(lambda x: np.sum(np.repeat(x, 3, axis=axis) ** 2), x, 6 * x)
    assert ad.stage(lambda x: np.repeat(x, 3, axis=axis), x)(x).shape == (3,)
    with pytest.raises(np.exceptions.AxisError):
        ad.grad(lambda x: np.sum(np.repeat(x, 2, axis=1)))(x)


def test_astype_of_a_python_float_input():
    # a Python float input stays a float primal; astype called float.astype
    f = lambda a: np.sum(ad.asarray(a, dtype=np.float32) * np.ones(2, np.float32))  # noqa: E731
    assert ad.grad(f)(0.5) == 2.0
    assert ad.grad(ad.stage(f, 0.5))(0.5) == 2.0
    value = ad.stage(f, 0.5)(0.5)
    assert value == 1.0 and np.asarray(value).dtype == np.float32


@pytest.mark.parametrize("xs", [
    (np.float64(1.5), np.float64(-2.0)), (np.arange(3.0), np.ones(3)),
    (np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)), (np.arange(4),),
    (np.zeros((0, 2)), np.zeros((0, 2))), (np.array(1.0), np.array(2.0)),
    (np.asfortranarray(np.ones((2, 3))), np.ones((2, 3))),       # np.stack itself
    (np.float32(1.0), np.float64(2.0)), (1.0, np.float64(2.0)),  # mixed: np.stack itself
    (np.array([True, False]), np.array([False, False])),
])
@pytest.mark.parametrize("axis", [0, -1])
def test_stack_fast_path_agrees_with_np_stack(xs, axis):
    from advect import ops

    axis = axis % (np.ndim(xs[0]) + 1)
    got, expected = ops.stack.impl(np, *xs, axis=axis), np.stack(xs, axis=axis)
    _same_kind(got, expected, "stack")
    np.testing.assert_array_equal(got, expected)
    assert got.flags.c_contiguous == expected.flags.c_contiguous and got.flags.writeable


@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float32),
                                    (np.float32, np.float64), (np.complex128, np.float64)])
def test_matrix_vector_transpose_agrees_with_forward_mode(dtypes):
    # the matrix @ vector transpose is one product (no axes added and removed): against
    # forward mode (each basis direction), staged, and the input left unchanged
    rng = np.random.default_rng(7)
    X = rng.standard_normal((5, 3)).astype(dtypes[0])
    w = rng.standard_normal(3).astype(dtypes[1])
    u = rng.standard_normal(5)
    f = lambda w: np.sum(np.real((X @ w) * u) ** 2) + np.real(X @ w)[0]  # noqa: E731
    g = ad.grad(f)(w)
    forward = np.array([ad.jvp(f)(w, tangents=np.eye(3, dtype=w.dtype)[i])[1] for i in range(3)])
    _same_kind(g, w, "gradient")
    _close(g, forward, "reverse vs forward mode", 1e-5 if np.float32 in dtypes else 1e-12, 1e-6)
    _close(ad.grad(ad.stage(f, w))(w), g, "staged vs dynamic", 1e-6, 1e-6)


@pytest.fixture
def matmul_strides(monkeypatch):
    """``record()`` makes np.matmul note its operands' strides from then on, in the list it
    returns."""
    def record():
        seen, matmul = [], np.matmul

        def recording(x, y):
            seen.append((x.strides, y.strides))
            return matmul(x, y)

        monkeypatch.setattr(np, "matmul", recording)
        return seen
    return record


def test_a_lazily_broadcast_cotangent_reaches_matmul_dense(matmul_strides):
    # np.sum(X @ w): the sum's cotangent is a 0-d array standing for its broadcast; a stride-0
    # view of it would send X.T @ ct to NumPy's slow non-BLAS loop (30x here), so matmul's
    # NumPy implementation makes it dense: same values, contiguous
    seen = matmul_strides()
    X = np.arange(12.0).reshape(4, 3)
    g = ad.grad(lambda w: np.sum(X @ w))(np.ones(3))
    np.testing.assert_array_equal(g, X.T @ np.ones(4))
    assert all(0 not in s for strides in seen for s in strides)


def test_matmul_hands_numpy_dense_operands(matmul_strides):
    # a staged reverse pass feeds matmul a broadcast_to node (a stride-0 view): the NumPy
    # implementation makes such an operand dense first, so matmul stays on BLAS
    X = np.arange(300.0).reshape(100, 3)  # a cotangent too large to be folded
    gradient = ad.grad(ad.stage(lambda w: np.sum(X @ w), np.ones(3)))
    seen = matmul_strides()
    np.testing.assert_array_equal(gradient(np.ones(3)), X.T @ np.ones(100))
    assert seen and all(0 not in s for strides in seen for s in strides)


@pytest.mark.parametrize("read", [
    lambda x: np.var(np.sin(x[1:] @ x[1:].T), axis=0),   # found by the slow profile
    lambda x: np.mean(x[1:, 3:] * 2.0, axis=0),         # a mean of no elements, empty
    lambda x: np.std(x[1:, 3:], axis=0) + np.sum(x),
])
def test_an_empty_value_gets_its_cotangent_at_full_shape(read):
    # a cotangent that stands lazily for its broadcast must not be computed on when the value
    # it stands for is empty: the reverse pass of a mean over no elements divided 1 by 0
    # (a RuntimeWarning, an error under -W error) where NumPy computes nothing
    x = np.arange(3.0).reshape(1, 3) / 4
    f = lambda x: np.sum(read(x))  # noqa: E731
    with np.errstate(all="ignore"):
        expected = _central_grad(f, [x])[0]
    with np.errstate(all="raise"):
        for g in (ad.grad(f)(x), ad.grad(ad.stage(f, x))(x)):
            _close(g, expected, "gradient vs central differences", 1e-6, 1e-7)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("f", [lambda x: x ** 2, np.square, lambda x: x * x,
                               lambda x: np.sin(x) ** 2 * x])
def test_square_jvp_for_large_arrays_agrees_with_the_small_array_form(f, dtype, monkeypatch):
    # x**2's JVP is (dx * 2) * x from 4096 elements (only x kept for the reverse pass) and
    # dx * (2 * x) below: the same derivatives, every mode
    from advect.ops import elementwise

    rng = np.random.default_rng(3)
    x = rng.uniform(-1, 1, (3, 5)).astype(dtype)
    t = rng.standard_normal((3, 5)).astype(dtype)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.uniform(-1, 1, x.shape)
        t = t - 0.5j * rng.standard_normal(x.shape)

    def derivatives():
        loss = lambda x: np.sum(np.abs(f(x)) ** 2)  # noqa: E731 (real, for grad)
        return [ad.jvp(f)(x, tangents=t)[1], ad.grad(loss)(x), ad.grad(ad.stage(loss, x))(x),
                ad.hvp(loss)(x, vectors=t)[1]]

    small = derivatives()
    monkeypatch.setattr(elementwise, "_SMALL", 0)  # every array takes the large-array form
    large = derivatives()
    rtol = 1e-5 if np.dtype(dtype) == np.float32 else 1e-12
    for a, b in zip(large, small, strict=True):
        assert a.dtype == b.dtype == x.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol)


def test_a_sum_of_an_empty_slice_has_a_zero_tangent_in_every_mode():
    # the tangent of a sum of nothing was a computed 0.0, and the sqrt of a norm made it
    # 0 / 0 = NaN in forward mode, where reverse mode and central differences give 0
    x = np.ones((2, 1))
    f = lambda v: np.linalg.norm(v[:, 1:] + 2.0) + np.sum(v ** 2)  # noqa: E731
    for g in (f, ad.stage(f, x)):
        assert ad.jvp(g)(x, tangents=np.ones_like(x))[1] == 4.0
        np.testing.assert_array_equal(ad.grad(g)(x), 2 * x)
        np.testing.assert_array_equal(ad.hvp(g)(x, vectors=np.ones_like(x))[1], 2 * x)

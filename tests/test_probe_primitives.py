"""Regression tests for silent wrong answers and unclear errors found by probing custom
primitives, advect.dask and advect.testing (one test per fixed bug)."""

import gc

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads, check_primitive

A = np.array([[3.0, 1.0], [1.0, 2.0]])
B = np.array([1.0, -1.0])
X = np.array([0.3, -1.2, 2.0])


def _solver(name, releases, *, jvp):
    @ad.primitive(name=name, residual=True)
    def solve(a, b):
        inverse = np.linalg.inv(a)
        return ad.PrimitiveResult(inverse @ b, residual=inverse,
                                  release=lambda: releases.append(name))

    @solve.def_transpose
    def _(ct, primals, output, *, residual):
        return None, residual.T @ ct

    if jvp:
        @solve.def_jvp
        def _(output, primals, tangents):
            return None if tangents[1] is None else np.linalg.solve(primals[0], tangents[1])

    solve.def_abstract(lambda a, b: b.spec)
    return solve


def test_a_residual_primitive_with_a_jvp_rule_has_staged_derivatives():
    # was: TracingError telling the user to add the JVP rule the primitive already had
    releases = []
    solve = _solver("probe.solve_jvp", releases, jvp=True)
    gradient = ad.grad(ad.stage(lambda b: np.sum(solve(A, b) ** 2), B))(B)
    np.testing.assert_allclose(gradient, np.linalg.solve(A.T, 2 * np.linalg.solve(A, B)))
    program = ad.stage(lambda b: solve(A, b), B)
    np.testing.assert_allclose(ad.grad(lambda b: np.sum(program(b)))(B),
                               np.linalg.solve(A.T, np.ones(2)))
    gc.collect()
    assert releases == ["probe.solve_jvp"] * len(releases)
    only_transpose = _solver("probe.solve_transpose", [], jvp=False)
    with pytest.raises(ad.TracingError, match="residual"):
        ad.grad(ad.stage(lambda b: np.sum(only_transpose(A, b)), B))


def test_a_dynamic_transform_of_a_staged_program_checks_the_abstract_rule():
    # was: the dynamic gradient silently used the implementation's (4,) output
    liar = ad.primitive(lambda x: np.concatenate([x, x]), name="probe.liar")
    liar.def_abstract(lambda x: x.spec)  # wrong: the implementation doubles the length
    liar.def_jvp(lambda output, primals, tangents: np.concatenate([tangents[0]] * 2))
    program = ad.stage(lambda x: np.sum(liar(x)), B)
    with pytest.raises(ValueError, match="probe.liar"):
        ad.value_and_grad(lambda x: program(x))(B)
    cast = ad.primitive(lambda x: x.astype(np.float32), name="probe.cast")
    cast.def_abstract(lambda x: x.spec)
    cast.def_jvp(lambda output, primals, tangents: tangents[0])
    program = ad.stage(lambda x: cast(x) * 2, B)
    with pytest.raises(ValueError, match="float32"):
        ad.vjp(lambda x: program(x))(B)


def test_redefining_the_abstract_rule_drops_what_the_old_one_declared():
    double = ad.primitive(lambda x: np.concatenate([x, x]), name="probe.redefined")
    double.def_abstract(lambda x: x.spec)
    with pytest.raises(ValueError, match="probe.redefined"):
        ad.stage(lambda x: double(x), B)(B)
    double.def_abstract(lambda x: ad.ArraySpec((2 * x.shape[0],), x.dtype))
    np.testing.assert_array_equal(double(B), np.concatenate([B, B]))
    np.testing.assert_array_equal(ad.stage(lambda x: double(x), B)(B), np.concatenate([B, B]))


def test_static_values_of_different_types_are_different_signatures():
    # was: 2 == 2.0, so the abstract avals recorded for p=2 were applied to p=2.0
    power = ad.primitive(lambda x, p: x ** p, name="probe.power", static_argnames="p")
    power.def_abstract(lambda x, p: ad.ArraySpec(x.shape, (np.ones(1, x.dtype) ** p).dtype.name))
    ints = np.arange(3)
    assert ad.stage(lambda x: power(x, p=2), ints)(ints).dtype == np.int64
    assert power(ints, p=2.0).dtype == np.float64
    squares, floats = ad.stage(lambda x: (power(x, p=2), power(x, p=2.0)), ints)(ints)
    assert squares.dtype == np.int64 and floats.dtype == np.float64
    # the output structure too: True and 1 were one signature, so the second call was refused
    pair = ad.primitive(lambda x, both: (x, x) if both is True else x, name="probe.pair",
                        static_argnames="both")
    assert isinstance(pair(X, both=True), tuple)
    np.testing.assert_array_equal(pair(X, both=1), X)


def test_a_jvp_tangent_of_the_wrong_shape_names_the_primitive():
    # was: "input operand has more dimensions than allowed by the axis remapping"
    column = ad.primitive(lambda x: 2 * x, name="probe.column_jvp")
    column.def_jvp(lambda output, primals, tangents: (2 * tangents[0])[:, None])
    column.def_abstract(lambda x: x.spec)
    with pytest.raises(ValueError, match="probe.column_jvp.*JVP rule.*shape"):
        ad.jvp(column)(X, tangents=np.ones(3))
    with pytest.raises(ValueError, match="probe.column_jvp.*JVP rule"):
        ad.grad(ad.stage(lambda x: np.sum(column(x)), X))


def test_a_transpose_cotangent_of_the_wrong_shape_names_the_primitive():
    # was: "cannot broadcast a non-scalar to a scalar array" from deep inside reverse mode
    scaled = ad.primitive(lambda x, s: x * s, name="probe.unreduced")
    scaled.def_transpose(lambda ct, primals, output: (ct * primals[1], ct * primals[0]))
    scaled.def_abstract(lambda x, s: x.spec)
    s = np.array(2.0)
    with pytest.raises(ValueError, match="probe.unreduced.*cotangent of shape \\(3,\\).*leaf 1"):
        ad.grad(lambda s: np.sum(scaled(X, s)))(s)
    with pytest.raises(ValueError, match="probe.unreduced"):
        ad.grad(ad.stage(lambda s: np.sum(scaled(X, s)), s))
    # a smaller cotangent that broadcasts is still accepted (sum's transpose returns ct)
    total = ad.primitive(lambda x: np.sum(x), name="probe.total")
    total.def_transpose(lambda ct, primals, output: (ct,))
    np.testing.assert_array_equal(ad.grad(total)(X), np.ones(3))


def test_a_residual_primitive_inside_another_ones_implementation_keeps_its_own_residual():
    # was: the inner primitive (replayed by a staged program) took the outer call's residual
    # slot, so the outer transpose rule got the inner residual and its own was released early
    releases = []
    inner = _solver("probe.inner", releases, jvp=False)
    program = ad.stage(lambda b: inner(A, b), B)

    @ad.primitive(name="probe.outer", residual=True)
    def outer(b):
        return ad.PrimitiveResult(program(b) * 3.0, residual=3.0,
                                  release=lambda: releases.append("probe.outer"))

    @outer.def_transpose
    def _(ct, primals, output, *, residual):
        return (residual * np.linalg.solve(A.T, ct),)

    gradient = ad.grad(lambda b: np.sum(outer(b)))(B)
    np.testing.assert_allclose(gradient, 3.0 * np.linalg.solve(A.T, np.ones(2)))
    gc.collect()
    assert sorted(releases) == ["probe.inner", "probe.outer"]


def test_check_grads_in_reverse_mode_alone_checks_a_transpose_only_rule():
    # was: NoJVPError, since reverse mode was only compared with forward mode
    good = ad.primitive(lambda x: np.sin(x), name="probe.rev_good")
    good.def_transpose(lambda ct, primals, output: (ct * np.cos(primals[0]),))
    check_grads(lambda x: good(x) * x, (X,), modes=("rev",), order=2)
    wrong = ad.primitive(lambda x: np.sin(x), name="probe.rev_wrong")
    wrong.def_transpose(lambda ct, primals, output: (1.01 * ct * np.cos(primals[0]),))
    with pytest.raises(AssertionError, match="central differences"):
        check_grads(lambda x: wrong(x) * x, (X,), modes=("rev",))


def test_check_grads_with_integer_arguments():
    # was: TypeError "tree structures differ" (None tangents of integer inputs)
    check_grads(lambda x, n: x ** n, (np.abs(X), 2))
    check_grads(lambda x, n: (x * n, n), (X, np.arange(3)))
    wrong = ad.primitive(lambda x, n: x * n, name="probe.int_wrong")
    wrong.def_jvp(lambda output, primals, tangents: 2 * tangents[0] * primals[1])
    with pytest.raises(AssertionError, match="JVP"):
        check_grads(lambda x, n: wrong(x, n), (X, np.arange(3)))


def test_checks_keep_torch_cotangents_in_torch():
    # was: NumPy cotangents for torch outputs, refused as mixed providers
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    from array_api_compat import array_namespace

    @ad.primitive(name="probe.torch_sine")
    def sine(x):
        return array_namespace(x).sin(x)

    sine.def_jvp(lambda output, primals, tangents:
                 tangents[0] * array_namespace(primals[0]).cos(primals[0]))
    sine.def_abstract(lambda x: x.spec)
    for dtype in (torch.float32, torch.float64):
        x = torch.tensor([0.3, -1.2, 2.0], dtype=dtype)
        check_grads(lambda x: sine(x) * x, (x,))
        assert "stage" in check_primitive(sine, primals=(x,))


def test_dask_blockwise_gradients_with_empty_and_unknown_chunks():
    da = pytest.importorskip("dask.array")
    from advect.dask import blockwise_value_and_grad, map_program

    rng = np.random.default_rng(0)
    x, y, w = rng.standard_normal((10, 3)), rng.standard_normal(10), rng.standard_normal(3)

    def loss(w, xb, yb):
        return np.mean((xb @ w - yb) ** 2)

    want_value, want_gradient = ad.value_and_grad(loss)(w, x, y)
    # was NaN: the mean over an empty block poisoned the weighted sum
    value, gradient = blockwise_value_and_grad(
        loss, w, da.from_array(x, chunks=((0, 5, 5), (3,))),
        da.from_array(y, chunks=((0, 5, 5),)), reduce="mean")
    np.testing.assert_allclose(value, want_value)
    np.testing.assert_allclose(gradient, want_gradient)
    # was: TypeError "ArraySpec: shape must be a tuple of ints, got (nan, 3)"
    dx = da.from_array(x, chunks=(3, 3))
    with pytest.raises(ValueError, match="compute_chunk_sizes"):
        blockwise_value_and_grad(lambda w, xb: np.sum(xb @ w), w, dx[dx[:, 0] > 0])
    # was: a read-only captured constant came back as the gradient
    _, gradient = blockwise_value_and_grad(lambda w, xb: np.sum(w) + np.sum(xb), w,
                                           da.from_array(x, chunks=(10, 3)))
    gradient += 1.0
    np.testing.assert_array_equal(gradient, np.full(3, 2.0))
    # was: "object of type 'float' has no len()"
    program = ad.stage(lambda a: a * 2, 1.0)
    with pytest.raises(TypeError, match="batched input 0"):
        map_program(program, 1.0)

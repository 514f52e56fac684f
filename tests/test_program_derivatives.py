"""Staged derivatives (spec 000 "Differentiate the program once", spec 001 ``vjp_program``),
checked against closed forms and against the dynamic transforms."""

import numpy as np
import pytest

import advect as ad
from advect import core
from advect.errors import NoVJPError

SAMPLE = np.linspace(-0.5, 0.5, 8)


def loss(x):
    return np.sum(np.sin(x) ** 2)


def test_grad_and_value_and_grad_of_a_program_are_programs():
    program = ad.stage(loss, SAMPLE)
    gradient = ad.grad(program)
    value_and_gradient = ad.value_and_grad(program)
    assert isinstance(gradient, ad.StagedProgram)
    assert isinstance(value_and_gradient, ad.StagedProgram)
    np.testing.assert_allclose(gradient(SAMPLE), np.sin(2 * SAMPLE), rtol=1e-13)
    value, g = value_and_gradient(SAMPLE + 0.2)
    np.testing.assert_allclose(value, loss(SAMPLE + 0.2), rtol=1e-14)
    np.testing.assert_allclose(g, np.sin(2 * (SAMPLE + 0.2)), rtol=1e-13)


def test_vjp_program_is_a_reusable_pullback():
    field = ad.stage(np.sin, SAMPLE)
    pullback = ad.vjp_program(field)
    for scale in (1.0, 2.0):
        cotangent = np.linspace(1.0, 2.0, 8) * scale
        np.testing.assert_allclose(pullback(SAMPLE, cotangent=cotangent),
                                   cotangent * np.cos(SAMPLE), rtol=1e-14)


def test_cotangent_has_the_primal_outputs_pytree_and_specs():
    program = ad.stage(lambda x: {"a": x * 2, "b": (np.sum(x),)}, SAMPLE)
    pullback = ad.vjp_program(program)
    _, kw = pullback.signature
    assert kw["cotangent"] == {"a": ad.ArraySpec((8,), "float64"),
                               "b": (ad.ArraySpec((), "float64"),)}
    ct = {"a": np.ones(8), "b": (np.asarray(3.0),)}
    np.testing.assert_allclose(pullback(SAMPLE, cotangent=ct), np.full(8, 5.0))
    with pytest.raises(TypeError):
        pullback(SAMPLE, cotangent=np.ones(8))


def test_warm_derivative_calls_run_no_tape_and_no_trace(request):
    gradient = ad.grad(ad.stage(loss, SAMPLE))
    pullback = ad.vjp_program(ad.stage(np.sin, SAMPLE))
    created = request.getfixturevalue("created_traces")
    gradient(SAMPLE)
    pullback(SAMPLE, cotangent=np.ones(8))
    assert created == []


def test_staged_gradients_equal_dynamic_gradients_for_a_small_mlp():
    rng = np.random.default_rng(0)
    w1, w2, x = rng.normal(size=(5, 4)), rng.normal(size=(1, 5)), rng.normal(size=(4, 3))

    def mlp(w1, w2, x):
        return np.mean((w2 @ np.tanh(w1 @ x)) ** 2)

    staged = ad.grad(ad.stage(mlp, w1, w2, x), argnums=(0, 1))(w1, w2, x)
    dynamic = ad.grad(mlp, argnums=(0, 1))(w1, w2, x)
    for s, d in zip(staged, dynamic):
        np.testing.assert_allclose(s, d, rtol=1e-13)


def test_selection_rules_follow_grad():
    def f(a, b, *, c):
        return np.sum(a * b * c)

    program = ad.stage(f, np.ones(2), np.full(2, 2.0), kw_specs={"c": ad.ArraySpec((2,),
                                                                                   "float64")})
    a, b, c = np.ones(2), np.full(2, 2.0), np.full(2, 3.0)
    np.testing.assert_allclose(ad.grad(program, 1)(a, b, c=c), a * c)
    np.testing.assert_allclose(ad.grad(program, -1)(a, b, c=c), a * c)
    ga, gb = ad.grad(program, (0, 1))(a, b, c=c)
    np.testing.assert_allclose(ga, b * c)
    named = ad.grad(program, argnames="c")(a, b, c=c)
    np.testing.assert_allclose(named["c"], a * b)
    pos, named = ad.grad(program, 0, argnames=("c",))(a, b, c=c)
    np.testing.assert_allclose(pos, b * c)
    np.testing.assert_allclose(named["c"], a * b)


def test_has_aux():
    program = ad.stage(lambda x: (np.sum(x ** 2), x * 2), SAMPLE)
    g, aux = ad.grad(program, has_aux=True)(SAMPLE)
    np.testing.assert_allclose(g, 2 * SAMPLE)
    np.testing.assert_allclose(aux, 2 * SAMPLE)
    value, g, aux = ad.value_and_grad(program, has_aux=True)(SAMPLE)
    np.testing.assert_allclose(value, np.sum(SAMPLE ** 2))
    np.testing.assert_allclose(g, 2 * SAMPLE)
    np.testing.assert_allclose(aux, 2 * SAMPLE)


def test_has_aux_python_float_input_keeps_the_flat_layout():
    program = ad.stage(lambda s: (s ** 3, s * 2), 2.0)
    value, g, aux = ad.value_and_grad(program, has_aux=True)(2.0)
    assert (value, g) == (8.0, 12.0) and type(g) is float
    assert aux == 4.0


def test_python_float_inputs_get_python_float_gradients():
    program = ad.stage(lambda s: s ** 3, 2.0)
    g = ad.grad(program)(2.0)
    assert type(g) is float and g == 12.0


def test_derivatives_of_derivatives():
    cube = ad.stage(lambda s: s ** 3, np.asarray(2.0))
    second = ad.grad(ad.grad(cube))
    assert isinstance(second, ad.StagedProgram)
    np.testing.assert_allclose(second(np.asarray(1.5)), 6 * 1.5)


def test_derived_programs_keep_the_revision():
    program = ad.stage(loss, SAMPLE, array_api_version="2022.12")  # served by every NumPy 2
    assert ad.grad(program).array_api_version == "2022.12"
    assert ad.vjp_program(program).array_api_version == "2022.12"


def test_derived_programs_are_optimized():
    gradient = ad.grad(ad.stage(loss, SAMPLE))
    assert gradient.optimization.nodes_after < gradient.optimization.nodes_before


def test_float32_stays_float32():
    x = SAMPLE.astype(np.float32)
    g = ad.grad(ad.stage(loss, x))(x)
    assert g.dtype == np.float32


# --- spec 001: every Raises of vjp_program -------------------------------------------------------

def test_vjp_program_refuses_a_plain_callable():
    with pytest.raises(TypeError, match="StagedProgram"):
        ad.vjp_program(lambda x: x)


def test_vjp_program_refuses_out_of_range_and_duplicate_argnums():
    square = ad.stage(lambda x: x ** 2, np.array([1.0, 2.0]))
    with pytest.raises(IndexError):
        ad.vjp_program(square, argnums=3)
    with pytest.raises(ValueError):
        ad.vjp_program(square, argnums=(0, 0))


def test_vjp_program_refuses_weak_scalars_that_are_not_real_floating():
    program = ad.stage(lambda x, n: x * n, np.ones(2), 3)
    with pytest.raises(TypeError, match="int"):
        ad.vjp_program(program, argnums=1)
    program = ad.stage(lambda x, z: x * z, np.ones(2), 1j)
    with pytest.raises(TypeError, match="complex"):
        ad.vjp_program(program, argnums=1)


def test_vjp_program_refuses_absent_names_and_a_reserved_cotangent():
    program = ad.stage(lambda x, *, cotangent: x * cotangent, np.ones(2),
                       kw_specs={"cotangent": ad.ArraySpec((2,), "float64")})
    with pytest.raises(ValueError, match="cotangent"):
        ad.vjp_program(program)
    with pytest.raises(ValueError, match="missing"):
        ad.vjp_program(program, argnames="missing")


def test_vjp_program_raises_no_vjp_error_for_a_missing_transpose():
    from advect.core import Op, bind
    from advect.ops._rules import same_unary

    if "test_linear_no_transpose" not in core.REGISTRY:
        Op("test_linear_no_transpose", abstract=same_unary, impl=lambda xp, x: x * 2,
           linear=True)
    op = core.REGISTRY["test_linear_no_transpose"]
    program = ad.stage(lambda x: bind(op, x), np.ones(2))
    with pytest.raises(NoVJPError, match="test_linear_no_transpose"):
        ad.vjp_program(program)


def test_grad_of_a_program_with_a_non_scalar_output_is_a_value_error():
    with pytest.raises(ValueError, match="scalar"):
        ad.grad(ad.stage(np.sin, SAMPLE))


def test_derived_programs_do_not_copy_transposed_constants():
    rng = np.random.default_rng(3)
    design, w = rng.standard_normal((50, 4)), rng.standard_normal(4)

    def logistic(w):
        z = design @ w
        return np.mean(np.logaddexp(0.0, z) - 0.5 * z)

    gradient = ad.grad(ad.stage(logistic, w))
    assert [c.shape for c in gradient.constants if c.value.size > 64] == [(50, 4)]
    names = [node.op.name for node in gradient.graph.nodes]
    assert "permute_dims" in names and "expand_dims" not in names and "reshape" not in names
    z = design @ w
    expected = design.T @ ((1 / (1 + np.exp(-z)) - 0.5) / 50)
    np.testing.assert_allclose(gradient(w), expected, rtol=1e-12)


def test_dynamic_transforms_of_programs():
    x = np.linspace(0.1, 1.0, 3)
    cube = ad.stage(lambda v: np.sum(v ** 3), x)
    np.testing.assert_allclose(ad.hessian(cube)(x), np.diag(6 * x), rtol=1e-13)
    np.testing.assert_allclose(ad.jacobian(ad.stage(np.sin, x))(x), np.diag(np.cos(x)),
                               rtol=1e-14)
    _, hv = ad.hvp(cube)(x, vectors=np.ones(3))
    np.testing.assert_allclose(hv, 6 * x, rtol=1e-13)


def test_concurrent_calls_of_one_program_do_not_share_buffers():
    from concurrent.futures import ThreadPoolExecutor

    big = np.linspace(-1.0, 1.0, 50_000)
    gradient = ad.grad(ad.stage(lambda v: np.sum(np.sin(v) * np.cos(v) + v * v), big))
    inputs = [big + k for k in range(8)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(gradient, inputs))
    for x, g in zip(inputs, results):
        np.testing.assert_allclose(g, np.cos(2 * x) + 2 * x, rtol=1e-12, atol=1e-12)


def test_vjp_program_with_argnames_only_selects_no_positional_input():
    program = ad.stage(lambda a, *, b: a * b, np.ones(2),
                       kw_specs={"b": ad.ArraySpec((2,), "float64")})
    pullback = ad.vjp_program(program, argnames=("b",))
    out = pullback(np.full(2, 3.0), b=np.ones(2), cotangent=np.array([1.0, 2.0]))
    assert list(out) == ["b"]
    np.testing.assert_array_equal(out["b"], [3.0, 6.0])


def test_dynamic_transforms_inside_a_staged_function():
    x = np.linspace(0.1, 1.0, 4)

    def loss(v):
        return np.sum(np.sin(v) ** 2)

    gradient = ad.stage(lambda v: ad.grad(loss)(v), x)
    np.testing.assert_allclose(gradient(x), np.sin(2 * x), rtol=1e-13)
    hessian = ad.stage(lambda v: ad.hessian(loss)(v), x)
    np.testing.assert_allclose(hessian(x), np.diag(2 * np.cos(2 * x)), rtol=1e-13)
    block = ad.checkpoint(lambda v: np.sin(v) ** 2)
    checkpointed = ad.stage(lambda v: ad.grad(lambda u: np.sum(block(u)))(v), x)
    np.testing.assert_allclose(checkpointed(x), np.sin(2 * x), rtol=1e-13)

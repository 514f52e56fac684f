"""Custom primitives: the handle, its rules in every transform, names, and check_primitive."""

import json

import numpy as np
import pytest

import advect as ad
from advect.core import REGISTRY
from advect.errors import MissingPrimitiveRuleError, NoJVPError
from advect.testing import check_grads, check_primitive

X = np.array([0.3, -1.2, 2.0])


def _same_spec(x):
    return x.spec


def make_cube(name):
    """x**3 with a JVP rule and an abstract rule."""
    cube = ad.primitive(lambda x: x ** 3, name=name)

    @cube.def_jvp
    def _(output, primals, tangents):
        (x,), (dx,) = primals, tangents
        return 3 * x ** 2 * dx

    cube.def_abstract(_same_spec)
    return cube


def make_sine(name, calls=None):
    """sin(x) with a transpose rule only (a custom VJP)."""
    sine = ad.primitive(lambda x: np.sin(x), name=name)

    @sine.def_transpose
    def _(ct, primals, output):
        if calls is not None:
            calls.append("transpose")
        return (ct * np.cos(primals[0]),)

    sine.def_abstract(_same_spec)
    return sine


CUBE = make_cube("test_primitive.cube")
SINE = make_sine("test_primitive.sine")


# --- the handle and dynamic transforms -----------------------------------------------------------

def test_call_runs_the_function():
    np.testing.assert_allclose(CUBE(X), X ** 3)


def test_jvp_first_primitive_in_forward_and_reverse_mode():
    _, tangent = ad.jvp(CUBE)(X, tangents=np.ones(3))
    np.testing.assert_allclose(tangent, 3 * X ** 2)
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(CUBE(x)))(X), 3 * X ** 2)
    np.testing.assert_allclose(ad.hessian(lambda x: np.sum(CUBE(x)))(X), np.diag(6 * X))
    check_grads(lambda x: np.sin(CUBE(x)), (X,), order=2)


def test_transpose_only_primitive_works_in_reverse_mode():
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(SINE(x)))(X), np.cos(X))
    np.testing.assert_allclose(ad.hessian(lambda x: np.sum(SINE(x)))(X), np.diag(-np.sin(X)),
                               atol=1e-15)
    hessian = ad.hessian(lambda x: np.sum(SINE(x) * x))(X)
    np.testing.assert_allclose(hessian, np.diag(2 * np.cos(X) - X * np.sin(X)), atol=1e-15)


def test_transpose_only_primitive_raises_no_jvp_error_in_forward_mode():
    with pytest.raises(NoJVPError, match="test_primitive.sine"):
        ad.jvp(SINE)(X, tangents=np.ones(3))
    _, linear_map = ad.linearize(SINE, X)
    with linear_map, pytest.raises(NoJVPError, match="test_primitive.sine"):
        linear_map(np.ones(3))


def test_with_both_rules_reverse_mode_uses_the_transpose_rule():
    calls = []
    sine = make_sine("test_primitive.sine_both", calls)
    sine.def_jvp(lambda output, primals, tangents: np.cos(primals[0]) * tangents[0])
    np.testing.assert_allclose(ad.jvp(sine)(X, tangents=np.ones(3))[1], np.cos(X))
    assert calls == []
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(sine(x)))(X), np.cos(X))
    assert calls == ["transpose"]
    _, linear_map = ad.linearize(sine, X)  # applying it forward runs the JVP rule
    with linear_map:
        np.testing.assert_allclose(linear_map(np.ones(3)), np.cos(X))


def test_missing_derivative_rules_raise_naming_the_primitive_and_rule():
    bare = ad.primitive(lambda x: 2 * x, name="test_primitive.bare")
    np.testing.assert_allclose(bare(X), 2 * X)  # evaluation needs no rule
    with pytest.raises(MissingPrimitiveRuleError, match="'test_primitive.bare' has no jvp rule"):
        ad.grad(lambda x: np.sum(bare(x)))(X)
    with pytest.raises(MissingPrimitiveRuleError, match="'test_primitive.bare' has no abstract"):
        ad.stage(bare, X)


def test_linear_primitive_applied_to_tangents_by_its_own_jvp():
    cumsum = ad.primitive(lambda x: np.cumsum(x), name="test_primitive.cumsum")
    cumsum.def_jvp(lambda output, primals, tangents: cumsum(tangents[0]))
    cumsum.def_abstract(_same_spec)
    with pytest.raises(MissingPrimitiveRuleError, match="'test_primitive.cumsum' has no transpose"):
        ad.grad(lambda x: np.sum(cumsum(x) ** 2))(X)
    cumsum.def_transpose(lambda ct, primals, output: (np.cumsum(ct[::-1])[::-1],))
    expected = 2 * np.cumsum(np.cumsum(X)[::-1])[::-1]
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(cumsum(x) ** 2))(X), expected)


def test_float32_stays_float32():
    x = X.astype(np.float32)
    assert ad.grad(lambda x: np.sum(CUBE(x)))(x).dtype == np.float32
    assert ad.grad(lambda x: np.sum(SINE(x)))(x).dtype == np.float32


def test_multiple_outputs_get_none_cotangents_for_unused_outputs():
    seen = []
    sincos = ad.primitive(lambda x: (np.sin(x), np.cos(x)), name="test_primitive.sincos")

    @sincos.def_transpose
    def _(ct, primals, output):
        ct_sin, ct_cos = ct
        seen.append(ct_cos)
        return (ct_sin * np.cos(primals[0]),)

    np.testing.assert_allclose(ad.grad(lambda x: np.sum(sincos(x)[0]))(X), np.cos(X))
    assert seen == [None]


def test_python_scalar_and_integer_arguments():
    @ad.primitive(name="test_primitive.scaled")
    def scaled(x, a, n):
        return x * a * n

    @scaled.def_jvp
    def _(output, primals, tangents):
        (x, a, n), (dx, da, dn) = primals, tangents
        assert dn is None  # integers have no tangent
        return dx * a * n + x * da * n

    grads = ad.grad(lambda x, a: np.sum(scaled(x, a, 3)), argnums=(0, 1))(X, 2.0)
    np.testing.assert_allclose(grads[0], np.full(3, 6.0))
    assert grads[1] == pytest.approx(3 * np.sum(X))


def test_jvp_rule_reading_a_tangent_value_in_reverse_mode_raises():
    peeking = ad.primitive(lambda x: 2 * x, name="test_primitive.peeking")
    peeking.def_jvp(lambda output, primals, tangents: tangents[0] * float(tangents[0][0]))
    with pytest.raises(ad.TracingError, match="linear in the tangents"):
        ad.grad(lambda x: np.sum(peeking(x)))(X)


def test_constant_tangent_from_a_jvp_rule_is_zero_in_reverse_mode():
    ones = ad.primitive(lambda x: np.ones_like(x), name="test_primitive.ones")
    ones.def_jvp(lambda output, primals, tangents: np.zeros_like(primals[0]))
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(ones(x) * x))(X), np.ones(3))
    np.testing.assert_allclose(ad.jvp(ones)(X, tangents=X)[1], np.zeros(3))


def test_integer_outputs_need_no_derivative_rule():
    argmax = ad.primitive(lambda x: np.argmax(x), name="test_primitive.argmax")
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(x * argmax(x)))(X), np.full(3, 2.0))


def test_rules_written_with_the_array_api_keep_the_provider():
    xps = pytest.importorskip("array_api_strict")
    sine = ad.primitive(lambda x: x.__array_namespace__().sin(x), name="test_primitive.xp_sine")
    sine.def_jvp(lambda output, primals, tangents:
                 tangents[0] * tangents[0].__array_namespace__().cos(primals[0]))
    x = xps.asarray([0.1, 0.2])
    grad = ad.grad(lambda x: x.__array_namespace__().sum(sine(x)))(x)
    assert type(grad) is type(x)
    np.testing.assert_allclose(np.asarray(grad), np.cos([0.1, 0.2]))


# --- arguments: static, nondiff, pytrees ---------------------------------------------------------

def test_static_arguments_reach_rules_and_become_attrs():
    @ad.primitive(name="test_primitive.power", static_argnames="n")
    def power(x, n):
        return x ** n

    @power.def_jvp
    def _(output, primals, tangents, n):
        return n * primals[0] ** (n - 1) * tangents[0]

    power.def_abstract(lambda x, n: x.spec)
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(power(x, 4)))(X), 4 * X ** 3)
    program = ad.stage(lambda x: power(x, n=4), X)
    assert "static=(('n', 4),)" in str(program)
    with pytest.raises(TypeError, match="static argument 'n' is a ndarray"):
        power(X, np.array(2))


def test_nondiff_argument_gets_no_tangent():
    seen = []

    @ad.primitive(name="test_primitive.shift", nondiff_argnames="offset")
    def shift(x, offset):
        return x + offset

    @shift.def_jvp
    def _(output, primals, tangents):
        seen.append(tangents[1])
        return tangents[0]

    grads = ad.grad(lambda x, o: np.sum(shift(x, o) * o), argnums=(0, 1))(X, X)
    np.testing.assert_allclose(grads[0], X)
    np.testing.assert_allclose(grads[1], X + X)  # only through the product, not the primitive
    assert seen == [None]


def test_pytree_arguments_and_outputs_are_flattened_at_the_handle():
    @ad.primitive(name="test_primitive.affine")
    def affine(params, x):
        return {"y": params["w"] * x + params["b"], "parts": (x, params["w"])}

    @affine.def_jvp
    def _(output, primals, tangents):
        b, w, x = primals  # dict keys sorted: b, w; then x
        db, dw, dx = (0.0 if t is None else t for t in tangents)
        return {"y": dw * x + w * dx + db, "parts": (dx, dw)}

    params = {"w": np.array([2.0, 3.0]), "b": np.array([0.5, -0.5])}
    x = np.array([1.0, 4.0])
    out = affine(params, x)
    np.testing.assert_allclose(out["y"], params["w"] * x + params["b"])
    grad = ad.grad(lambda p, x: np.sum(affine(p, x)["y"]))(params, x)
    np.testing.assert_allclose(grad["w"], x)
    np.testing.assert_allclose(grad["b"], np.ones(2))
    affine.def_abstract(lambda params, x: {"y": x.spec, "parts": (x.spec, params["w"].spec)})
    assert check_primitive(affine, primals=(params, x)) == (
        "abstract", "jvp", "transpose", "nested", "stage")


def test_bad_arguments_raise_named_errors():
    with pytest.raises(ValueError, match="static_argnames names 'k'"):
        ad.primitive(lambda x: x, name="test_primitive.bad1", static_argnames="k")
    with pytest.raises(ValueError, match="both static_argnames and nondiff_argnames"):
        ad.primitive(lambda x, k: x, name="test_primitive.bad2", static_argnames="k",
                     nondiff_argnames="k")
    with pytest.raises(TypeError, match="variadic"):
        ad.primitive(lambda *xs: xs[0], name="test_primitive.bad3")
    with pytest.raises(TypeError, match="argument 'x' holds a str"):
        CUBE(("a",))
    with pytest.raises(TypeError, match="'test_primitive.cube'"):
        CUBE(X, X)


def test_rule_results_are_validated():
    wrong = ad.primitive(lambda x, y: x * y, name="test_primitive.wrong_transpose")
    wrong.def_transpose(lambda ct, primals, output: ct * primals[1])
    with pytest.raises(ValueError, match="one cotangent .* for each of its 2 dynamic leaves"):
        ad.grad(lambda x: np.sum(wrong(x, X)))(X)
    pair = ad.primitive(lambda x: (x, 2 * x), name="test_primitive.wrong_jvp")
    pair.def_jvp(lambda output, primals, tangents: tangents[0])
    with pytest.raises(ValueError, match="returned 1 tangents for 2 outputs"):
        ad.jvp(pair)(X, tangents=X)


# --- names ---------------------------------------------------------------------------------------

def test_registered_under_its_stable_name():
    assert REGISTRY["test_primitive.cube"] is CUBE.op
    assert REGISTRY["test_primitive.sine.linear_map"] is SINE.linear_map


def test_duplicate_names_raise_unless_the_same_definition_runs_again():
    with pytest.raises(ValueError, match="built-in operation"):
        ad.primitive(lambda x: x, name="sin")
    with pytest.raises(ValueError, match="taken by the primitive 'test_primitive.cube'"):
        ad.primitive(lambda x: -x, name="test_primitive.cube")
    with pytest.raises(ValueError, match="taken by the primitive 'test_primitive.sine'"):
        ad.primitive(lambda x: -x, name="test_primitive.sine.linear_map")
    first = make_cube("test_primitive.rerun")
    second = make_cube("test_primitive.rerun")  # the same definition again (a reloaded module)
    assert REGISTRY["test_primitive.rerun"] is second.op is not first.op


# --- staging -------------------------------------------------------------------------------------

def test_staged_program_and_its_gradient():
    program = ad.stage(lambda x: np.sum(CUBE(x) + SINE(x)), X)
    assert "test_primitive.cube(" in str(program) and "test_primitive.sine(" in str(program)
    np.testing.assert_allclose(program(X), np.sum(X ** 3 + np.sin(X)))
    np.testing.assert_allclose(ad.grad(program)(X), 3 * X ** 2 + np.cos(X))


def test_staged_derivatives_of_restored_programs_use_the_rules():
    for primitive, derivative in ((CUBE, 3 * X ** 2), (SINE, np.cos(X))):
        program = ad.stage(primitive, X)
        restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
        for p in (program, restored):
            np.testing.assert_allclose(ad.vjp_program(p)(X, cotangent=np.ones(3)), derivative)


def test_saved_program_round_trips_and_names_a_missing_primitive():
    program = ad.stage(lambda x: np.sum(CUBE(x)), X)
    payload = json.loads(json.dumps(program.to_dict()))
    np.testing.assert_array_equal(ad.StagedProgram.from_dict(payload)(X), program(X))
    text = json.dumps(payload).replace('"test_primitive.cube"', '"test_primitive.not_registered"')
    with pytest.raises(ValueError, match="'test_primitive.not_registered' is not registered"):
        ad.StagedProgram.from_dict(json.loads(text))


# --- check_primitive -----------------------------------------------------------------------------

def test_check_primitive_runs_the_checks_the_rules_allow():
    assert check_primitive(CUBE, primals=(X,)) == (
        "abstract", "jvp", "transpose", "nested", "stage")
    assert check_primitive(SINE, primals=(X,)) == ("abstract", "transpose", "nested", "stage")


def test_check_primitive_with_complex_inputs():
    norm2 = ad.primitive(lambda z: (z * np.conj(z)).real, name="test_primitive.norm2")

    @norm2.def_jvp
    def _(output, primals, tangents):
        (z,), (dz,) = primals, tangents
        return 2 * (np.conj(z) * dz).real

    norm2.def_transpose(lambda ct, primals, output: (2 * primals[0] * ct,))
    norm2.def_abstract(lambda z: ad.ArraySpec(z.shape, "float64"))
    z = np.array([1.0 + 2.0j, -0.5 + 0.1j])
    assert check_primitive(norm2, primals=(z,)) == (
        "abstract", "jvp", "transpose", "complex", "nested", "stage")
    np.testing.assert_allclose(ad.grad(lambda z: np.sum(norm2(z)))(z), 2 * z)


def test_check_primitive_names_a_wrong_rule():
    wrong_jvp = ad.primitive(lambda x: x ** 2, name="test_primitive.check_wrong_jvp")
    wrong_jvp.def_jvp(lambda output, primals, tangents: primals[0] * tangents[0])
    with pytest.raises(AssertionError, match="test_primitive.check_wrong_jvp.*jvp"):
        check_primitive(wrong_jvp, primals=(X,), check=("jvp",))

    wrong_transpose = make_cube("test_primitive.check_wrong_transpose")
    wrong_transpose.def_transpose(lambda ct, primals, output: (ct * primals[0],))
    with pytest.raises(AssertionError, match="test_primitive.check_wrong_transpose.*transpose"):
        check_primitive(wrong_transpose, primals=(X,), check=("transpose",))

    wrong_vjp = ad.primitive(lambda x: np.sin(x), name="test_primitive.check_wrong_vjp")
    wrong_vjp.def_transpose(lambda ct, primals, output: (ct * np.sin(primals[0]),))
    with pytest.raises(AssertionError, match="central differences"):
        check_primitive(wrong_vjp, primals=(X,), check=("transpose",))

    wrong_structure = ad.primitive(lambda x: (x, x), name="test_primitive.check_wrong_structure")
    wrong_structure.def_abstract(_same_spec)
    with pytest.raises(AssertionError, match="abstract: .*structure"):
        check_primitive(wrong_structure, primals=(X,), check=("abstract",))

    wrong_abstract = ad.primitive(lambda x: x[:2], name="test_primitive.check_wrong_abstract")
    wrong_abstract.def_abstract(_same_spec)
    with pytest.raises(AssertionError, match="abstract: output leaf 0 is float64\\[2\\]"):
        check_primitive(wrong_abstract, primals=(X,), check=("abstract",))


def test_check_primitive_rejects_unknown_checks():
    with pytest.raises(ValueError, match="unknown checks"):
        check_primitive(CUBE, primals=(X,), check=("speed",))


def test_check_primitive_with_static_and_nondiff_arguments():
    @ad.primitive(name="test_primitive.weighted", static_argnames="n", nondiff_argnames="weight")
    def weighted_power(x, weight, n):
        return weight * x ** n

    @weighted_power.def_jvp
    def _(output, primals, tangents, n):
        (x, weight), (dx, dweight) = primals, tangents
        assert dweight is None
        return weight * n * x ** (n - 1) * dx

    weighted_power.def_abstract(lambda x, weight, n: x.spec)
    weight = np.array([1.0, -2.0, 0.5])
    assert check_primitive(weighted_power, primals=(X, weight), static={"n": 3}) == (
        "abstract", "jvp", "transpose", "nested", "stage")

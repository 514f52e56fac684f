"""Regression tests for the custom primitive contract and advect.testing, found by a second
adversarial probe (one test per fixed bug)."""

import numpy as np
import pytest

import advect as ad
from advect.testing import check_gradient, check_grads, check_primitive

X = np.array([0.1, 0.7])
Y = np.array([1.0, 3.0])


def _sine(name, dtype_rule=None):
    sine = ad.primitive(lambda x: np.sin(x), name=name)
    sine.def_abstract(dtype_rule or (lambda x: x.spec))
    sine.def_jvp(lambda output, primals, tangents: np.cos(primals[0]) * tangents[0])
    return sine


def _with_none_output(name):
    @ad.primitive(name=name)
    def tree(d):
        return {"s": np.sin(d["x"]), "n": None, "t": (d["y"] * 2, d["x"] * d["y"])}

    tree.def_abstract(lambda d: {"s": d["x"].spec, "n": None, "t": (d["y"].spec, d["x"].spec)})

    @tree.def_jvp
    def _(output, primals, tangents):
        (x, y), (dx, dy) = primals, tangents
        dx = 0 if dx is None else dx
        dy = 0 if dy is None else dy
        return {"s": np.cos(x) * dx, "n": None, "t": (2 * dy, dx * y + x * dy)}

    return tree


def test_a_jvp_tangent_in_an_output_structure_holding_none():
    # was: "the JVP rule returned 4 tangents for 3 outputs" (the output's None counted as a leaf)
    tree = _with_none_output("probe2.none_out")
    d = {"x": X, "y": Y}
    gradient = ad.grad(lambda d: np.sum(tree(d)["t"][1]) + np.sum(tree(d)["s"]))(d)
    np.testing.assert_allclose(gradient["x"], Y + np.cos(X))
    np.testing.assert_allclose(gradient["y"], X)
    _, tangent = ad.jvp(tree)(d, tangents={"x": np.ones(2), "y": np.zeros(2)})
    assert tangent["n"] is None
    np.testing.assert_allclose(tangent["t"][1], Y)
    # and a rule returning a tuple for a single output still gets the count error
    pair = ad.primitive(lambda x: x * 2, name="probe2.pair_for_one")
    pair.def_jvp(lambda output, primals, tangents: (tangents[0], tangents[0]))
    with pytest.raises(ValueError, match="probe2.pair_for_one.*2 tangents for 1 outputs"):
        ad.jvp(pair)(X, tangents=X)


def test_python_scalar_and_numpy_scalar_calls_are_different_signatures():
    # was: the avals the abstract rule declared for x * 2.0 (weak: float32) were checked against
    # x * np.float64(2.0) (float64), a false ValueError for a correct primitive
    mul = ad.primitive(lambda x, s: x * s, name="probe2.weak_mul")

    @mul.def_abstract
    def _(x, s):
        return ad.ArraySpec(x.shape, np.result_type(x.dtype, 0.0 if s.spec.weak else s.dtype))

    x32 = X.astype(np.float32)
    assert mul.abstract_eval(x32, np.float64(2.0)).dtype == "float64"
    assert mul.abstract_eval(x32, 2.0).dtype == "float32"
    assert mul(x32, 2.0).dtype == np.float32
    assert ad.stage(lambda x: mul(x, 2.0), x32)(x32).dtype == np.float32
    assert mul(x32, np.float64(2.0)).dtype == np.float64


def test_check_primitive_with_a_python_scalar_primal_and_output():
    # was: central differences made the weak 2.0 a float64 scalar (false ValueError), and the
    # stage check gave a Python-float output a 0-d array cotangent (ValueError)
    @ad.primitive(name="probe2.scale", nondiff_argnames="w")
    def scale(x, w, s):
        return x * w * s

    scale.def_abstract(lambda x, w, s: x.spec)

    @scale.def_jvp
    def _(output, primals, tangents):
        (x, w, s), (dx, _, ds) = primals, tangents
        return (0 if dx is None else dx * w * s) + (0 if ds is None else x * w * ds)

    x32, w32 = X.astype(np.float32), Y.astype(np.float32)
    assert "stage" in check_primitive(scale, primals=(x32, w32, 2.0))
    total = ad.primitive(lambda a, b: a * b, name="probe2.py_product")
    total.def_abstract(lambda a, b: ad.ArraySpec((), "float64", weak=True))
    total.def_jvp(lambda output, primals, tangents: sum(
        t * p for t, p in zip(tangents, primals[::-1]) if t is not None))
    assert check_primitive(total, primals=(2.0, 3.0)) == (
        "abstract", "jvp", "transpose", "nested", "stage")


def test_an_abstract_rule_returning_none_is_refused():
    # was: ad.stage(p, x)(x) returned None (the rule forgot its return) silently
    forgot = ad.primitive(lambda x: np.sin(x), name="probe2.forgot_return")
    forgot.def_abstract(lambda x: None)
    with pytest.raises(TypeError, match="probe2.forgot_return.*abstract rule returned None"):
        ad.stage(forgot, X)


def test_check_primitive_reports_a_lying_abstract_rule_every_time():
    # was: AssertionError the first time, then a bare ValueError from the replay check
    liar = _sine("probe2.abstract_liar", lambda x: ad.ArraySpec(x.shape, "float32"))
    for _ in range(2):
        with pytest.raises(AssertionError, match="probe2.abstract_liar', abstract"):
            check_primitive(liar, primals=(X,))
    assert check_primitive(liar, primals=(X,), check=("jvp",)) == ("jvp",)


def test_check_primitive_with_none_leaves_in_the_given_cotangent():
    # was: ValueError "too few leaves for the tree structure"
    tree = _with_none_output("probe2.none_cotangent")
    ct = {"s": np.ones(2), "n": None, "t": (np.ones(2), None)}
    assert "transpose" in check_primitive(tree, primals=({"x": X, "y": Y},), cotangent=ct)
    frexp = ad.primitive(lambda x: np.frexp(x), name="probe2.frexp")
    frexp.def_abstract(lambda x: (x.spec, ad.ArraySpec(x.shape, "int32")))
    frexp.def_jvp(lambda output, primals, tangents: (tangents[0] / 2.0 ** output[1], None))
    assert "transpose" in check_primitive(frexp, primals=(np.array([1.5, 7.0]),),
                                          cotangent=(np.ones(2), None))


def test_rule_signature_mismatches_name_the_primitive_and_the_rule():
    # was: "<lambda>() got an unexpected keyword argument 'k'", naming neither
    p = ad.primitive(lambda x, k: x * k, name="probe2.static_rules", static_argnames="k")
    p.def_abstract(lambda x: x.spec)
    p.def_jvp(lambda output, primals, tangents: tangents[0])
    with pytest.raises(TypeError, match="probe2.static_rules.*abstract rule.*'k'"):
        ad.stage(lambda x: p(x, k=2), X)
    with pytest.raises(TypeError, match="probe2.static_rules.*jvp rule.*'k'"):
        ad.grad(lambda x: np.sum(p(x, k=2)))(X)
    q = ad.primitive(lambda x: x * 2, name="probe2.transpose_arity")
    q.def_transpose(lambda ct, primals: (2 * ct,))
    with pytest.raises(TypeError, match="probe2.transpose_arity.*transpose rule"):
        ad.grad(lambda x: np.sum(q(x)))(X)

    def broken(output, primals, tangents):
        raise TypeError("a bug inside the rule")

    r = ad.primitive(lambda x: x * 2, name="probe2.inner_type_error")
    r.def_jvp(broken)
    with pytest.raises(TypeError, match="^a bug inside the rule$"):
        ad.grad(lambda x: np.sum(r(x)))(X)


def test_a_refused_transpose_rule_is_not_installed():
    # was: def_transpose raised TypeError but installed the rule anyway
    p = ad.primitive(lambda x: ad.PrimitiveResult(x * 2, 2.0), name="probe2.refused_rule",
                     residual=True)
    with pytest.raises(TypeError, match="residual"):
        p.def_transpose(lambda ct, primals, output: (2 * ct,))
    with pytest.raises(ad.errors.MissingVJPRuleError, match="probe2.refused_rule"):
        ad.grad(lambda x: np.sum(p(x)))(X)


def test_check_primitive_without_dynamic_arguments():
    # was: TypeError from ad.stage, which needs examples or specs=()
    arange = ad.primitive(lambda n: np.arange(n) * 1.0, name="probe2.arange",
                          static_argnames="n")
    arange.def_abstract(lambda n: ad.ArraySpec((n,), "float64"))
    assert check_primitive(arange, primals=(), static={"n": 3}) == ("abstract", "stage")


def test_float16_checks_use_a_step_float16_can_resolve():
    # was: central differences with a 1e-3 step (one float16 ulp) failed correct derivatives
    x = np.array([0.3, 0.5, -1.2], np.float16)
    check_gradient(lambda x: np.sum(np.sin(x) * x), x)
    check_grads(lambda x: np.sin(x) * x, (x,))
    assert "nested" in check_primitive(_sine("probe2.sine16"), primals=(x,))


def test_a_jvp_rule_building_on_zeros_like_of_a_tangent_works_in_reverse_mode():
    # was: NoVJPError "operation 'full_like' has no transpose rule" in reverse mode only
    double = ad.primitive(lambda x: x * 2.0, name="probe2.zeros_like_rule")
    double.def_abstract(lambda x: x.spec)

    @double.def_jvp
    def _(output, primals, tangents):
        out = np.zeros_like(tangents[0])
        out[0] = 5.0  # a constant written into it (then overwritten): MutationError too
        out[...] = 2.0 * tangents[0]
        return out + np.full_like(tangents[0], 0.0)

    np.testing.assert_allclose(ad.grad(lambda x: np.sum(double(x) * Y))(X), 2 * Y)
    assert "nested" in check_primitive(double, primals=(X,))


def test_check_primitive_asks_a_transpose_rule_for_each_input_alone():
    # was: a rule wrong only when active_input_indices is a strict subset passed every check
    p = ad.primitive(lambda x, y: x * y, name="probe2.partial_transpose")
    p.def_abstract(lambda x, y: x.spec)
    p.def_jvp(lambda output, primals, tangents: sum(
        t * q for t, q in zip(tangents, primals[::-1]) if t is not None))

    @p.def_transpose
    def _(ct, primals, output, *, active_input_indices):
        x, y = primals if active_input_indices == (0, 1) else primals[::-1]  # the bug
        return ct * y, ct * x

    with pytest.raises(AssertionError, match="partial_transpose.*only differentiated leaf 0"):
        check_primitive(p, primals=(X, Y))


def test_check_primitive_with_a_static_argument_given_positionally():
    # was: the stage check staged the static 2 as an input: TypeError "static argument 'k' is a
    # StageTracer" (a positional-only static cannot be given in static= either)
    def scaled(x, k, /, y=1.0):
        return x * k * y

    p = ad.primitive(scaled, name="probe2.positional_static", static_argnames="k")
    p.def_abstract(lambda x, y, k: x.spec)
    p.def_jvp(lambda output, primals, tangents, k: sum(
        t * k * q for t, q in zip(tangents, primals[::-1]) if t is not None))
    assert "stage" in check_primitive(p, primals=(X, 2))
    assert "stage" in check_primitive(p, primals=(X, 2.5, 3.0))  # a float static: not varied

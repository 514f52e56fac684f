"""Advect's named errors: the hierarchy of API.md, and each raised where it should be, saying
what happened and what to do."""

import numpy as np
import pytest

import advect as ad
from advect import errors
from advect.core import REGISTRY, Op
from advect.dtypes import Aval

X = np.array([0.5, 1.5])

HIERARCHY = {
    "TracingError": "AdvectError",
    "EscapedTracerError": "TracingError",
    "MissingPrimitiveRuleError": "TracingError",
    "MutationError": "AdvectError",
    "StaleViewError": "MutationError",
    "NumericsError": "AdvectError",
    "NoJVPError": "AdvectError",
    "NoVJPError": "AdvectError",
    "ImplicitSolveError": "AdvectError",
}


@pytest.mark.parametrize("name, parent", sorted(HIERARCHY.items()))
def test_error_hierarchy_and_top_level_exports(name, parent):
    cls = getattr(errors, name)
    assert issubclass(cls, getattr(errors, parent))
    assert issubclass(cls, errors.AdvectError)
    assert getattr(ad, name) is cls


def test_unsupported_dtype_error_is_also_a_type_error():
    assert issubclass(errors.UnsupportedDtypeError, TypeError)
    assert issubclass(errors.UnsupportedDtypeError, errors.AdvectError)


# --- escaped tracers -----------------------------------------------------------------------

def _escaped():
    box = []
    ad.grad(lambda x: (box.append(x * 2), np.sum(x))[1])(X)
    return box[0]


@pytest.mark.parametrize("use", [
    lambda t: t + 1, lambda t: np.sin(t), lambda t: float(t[0]), lambda t: t.tolist(),
    lambda t: t.copy(), lambda t: t.__setitem__(0, 1.0), lambda t: ad.grad(lambda x: x[0])(t),
], ids=["add", "ufunc", "float", "tolist", "copy", "setitem", "differentiate"])
def test_escaped_tracer_raises(use):
    with pytest.raises(ad.EscapedTracerError, match="after the transform"):
        use(_escaped())


def test_escaped_tracer_returned_from_another_transform_raises():
    leaked = _escaped()
    with pytest.raises(ad.EscapedTracerError):
        ad.grad(lambda x: np.sum(x) + 0 * leaked[0])(X)
    with pytest.raises(ad.EscapedTracerError, match="output"):
        ad.jvp(lambda x: (x, leaked))(X, tangents=X)


def test_escaped_tracer_metadata_stays_readable():
    leaked = _escaped()
    assert leaked.shape == (2,) and leaked.dtype == np.float64 and len(leaked) == 2


# --- missing rules -------------------------------------------------------------------------

@pytest.fixture
def rule_less_ops():
    """Two temporary ops: one without a JVP rule, one linear op without a transpose."""
    abstract = lambda x: Aval(x.shape, x.dtype)
    no_jvp = Op("test_errors_no_jvp", abstract=abstract, impl=lambda xp, x: x * 2)
    no_transpose = Op("test_errors_no_transpose", abstract=abstract, impl=lambda xp, x: x * 2,
                      linear=True)
    yield no_jvp, no_transpose
    del REGISTRY["test_errors_no_jvp"], REGISTRY["test_errors_no_transpose"]


def test_missing_jvp_rule_names_the_op(rule_less_ops):
    no_jvp, _ = rule_less_ops
    np.testing.assert_array_equal(no_jvp(X), 2 * X)  # evaluation needs no rule
    with pytest.raises(ad.NoJVPError, match="test_errors_no_jvp.*JVP"):
        ad.jvp(no_jvp)(X, tangents=X)
    with pytest.raises(ad.NoJVPError, match="test_errors_no_jvp"):
        ad.grad(lambda x: np.sum(no_jvp(x)))(X)


def test_missing_transpose_rule_names_the_op(rule_less_ops):
    _, no_transpose = rule_less_ops
    _, tangent = ad.jvp(no_transpose)(X, tangents=X)  # forward mode works
    np.testing.assert_array_equal(tangent, 2 * X)
    with pytest.raises(ad.NoVJPError, match="test_errors_no_transpose.*transpose"):
        ad.grad(lambda x: np.sum(no_transpose(x)))(X)


# --- conversions and unsupported calls -----------------------------------------------------

def test_detaching_conversions_raise_tracing_error():
    def f(x):
        with pytest.raises(ad.TracingError, match="like=x"):
            np.asarray(x)
        with pytest.raises(ad.TracingError, match="DLPack"):
            x.__dlpack__()
        return np.sum(x)
    ad.grad(f)(X)


def test_api_misuse_uses_python_errors():
    with pytest.raises(IndexError):
        ad.grad(lambda x: np.sum(x), argnums=1)(X)
    with pytest.raises(ValueError):
        ad.grad(lambda x: np.sum(x), argnums=(0, 0))(X)
    with pytest.raises(TypeError):
        ad.grad(lambda x: np.sum(x), argnums="x")(X)
    with pytest.raises(ValueError):
        ad.jvp(np.sin)(X, tangents=np.ones(3))
    with pytest.raises(TypeError):
        ad.jvp(np.sin, (0,))(X, tangents=(X, X))


@pytest.mark.parametrize("use", [
    lambda x: ad.stop_gradient(x) * x, lambda x: x * float(x[0]),
    lambda x: x if bool(x[0] > 0) else -x, lambda x: x * int(x[0]),
], ids=["stop_gradient", "float", "bool", "int"])
def test_reading_values_while_staging_raises_tracing_error_naming_the_call(use):
    with pytest.raises(ad.TracingError, match=r"stop_gradient|float\(\)|bool\(\)|int\(\)"):
        ad.stage(use, X)


# --- rule errors carry their facts -------------------------------------------------------------

@pytest.mark.parametrize("cls", [errors.NoJVPError, errors.NoVJPError,
                                 errors.MissingPrimitiveRuleError])
def test_rule_errors_accept_and_expose_op_and_source_location(cls):
    e = cls("msg", op="custom.f", source_location="model.py:1")
    assert (str(e), e.op, e.source_location) == ("msg", "custom.f", "model.py:1")
    plain = cls("plain")
    assert (str(plain), plain.op, plain.source_location) == ("plain", None, None)
    import pickle
    back = pickle.loads(pickle.dumps(e))
    assert (type(back), str(back), back.op, back.source_location) == \
        (cls, "msg", "custom.f", "model.py:1")


def test_engine_rule_errors_name_the_op():
    from advect import ops
    from advect.ops._rules import same_unary

    nojvp = Op("test_errors.nojvp", abstract=same_unary, impl=lambda xp, x: xp.sin(x))
    untransposable = Op("test_errors.untransposable", abstract=same_unary,
                        impl=lambda xp, x: x, linear=True)
    twice = Op("test_errors.twice", abstract=same_unary, impl=lambda xp, x: xp.sin(x),
               jvp=lambda primals, tangents, out: untransposable(tangents[0]))
    try:
        with pytest.raises(errors.NoJVPError) as info:
            ad.jvp(lambda x: nojvp(x))(X, tangents=np.ones(2))
        assert info.value.op == "test_errors.nojvp"
        with pytest.raises(errors.NoVJPError) as info:
            ad.grad(lambda x: ops.reduce_sum(twice(x), axes=(0,), keepdims=False))(X)
        assert info.value.op == "test_errors.untransposable"
    finally:
        for name in ("test_errors.nojvp", "test_errors.untransposable", "test_errors.twice"):
            REGISTRY.pop(name, None)


def test_a_ruleless_primitive_is_both_missing_rule_and_mode_error():
    @ad.primitive(name="test_errors.ruleless")
    def ruleless(x):
        return np.sin(x)

    @ruleless.def_abstract
    def _(x):
        return x.spec

    with pytest.raises(errors.MissingPrimitiveRuleError) as info:
        ad.grad(lambda x: np.sum(ruleless(x)))(X)
    assert isinstance(info.value, errors.NoVJPError)
    assert info.value.op == "test_errors.ruleless"
    with pytest.raises(errors.MissingPrimitiveRuleError) as info:
        ad.jvp(ruleless)(X, tangents=np.ones(2))
    assert isinstance(info.value, errors.NoJVPError)
    assert not isinstance(info.value, errors.NoVJPError)


@pytest.mark.parametrize("result,kind", [("text", "a str"), (object(), "an object")])
def test_grad_of_a_non_numeric_output_names_it(result, kind):
    with pytest.raises(TypeError, match=f"grad needs a function returning one real scalar, "
                       f"got {kind}$"):
        ad.grad(lambda x: result)(X)

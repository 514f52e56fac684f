"""API contract probe (API.md, spec/): regression rows for the claims an audit found broken,
each in both lifetimes where the claim applies (dynamic transforms and staged programs)."""

import copy
import pickle

import numpy as np
import pytest

import advect as ad

X = np.array([0.5, 2.0])
S = ad.ArraySpec


# --- ArraySpec, StaticSpec and AbstractValue pickle and copy ----------------------------------
# (pickle.dumps worked but loads raised "ArraySpec is immutable"; copy.deepcopy too, so a
# StaticSpec holding a spec could not be made)

SPECS = [S((4,), "float64"), S((), "float64", weak=True), S((2, 3), "int8", device="cpu"),
         ad.StaticSpec({"center": True}), ad.StaticSpec(S((2,), "bool"))]


@pytest.mark.parametrize("spec", SPECS, ids=repr)
@pytest.mark.parametrize("how", ["pickle", "deepcopy", "copy"])
def test_specs_pickle_and_copy(spec, how):
    back = {"pickle": lambda v: pickle.loads(pickle.dumps(v)), "deepcopy": copy.deepcopy,
            "copy": copy.copy}[how](spec)
    assert type(back) is type(spec) and back == spec and hash(back) == hash(spec)


def test_abstract_value_pickles():
    value = ad.AbstractValue(S((2, 3), "float32"))
    back = pickle.loads(pickle.dumps(value))
    assert back.spec == value.spec and back.shape == (2, 3)


def test_a_programs_signature_pickles_and_stages_again():
    program = ad.stage(lambda a, *, s, center: (a - np.mean(a) if center else a) * s, X,
                       kw_specs={"s": S((), "float64"), "center": ad.StaticSpec(True)})
    signature = pickle.loads(pickle.dumps(program.signature))
    assert signature == copy.deepcopy(program.signature) == program.signature
    (specs,), kw_specs = signature
    again = ad.stage(lambda a, *, s, center: (a - np.mean(a) if center else a) * s,
                     specs=(specs,), kw_specs=kw_specs)
    np.testing.assert_allclose(again(X, s=np.asarray(2.0), center=True),
                               program(X, s=np.asarray(2.0), center=True))


# --- LinearMap: closed means closed, also for an empty batch ---------------------------------

@pytest.mark.parametrize("method", ["apply_many", "transpose_many"])
@pytest.mark.parametrize("transposed", [False, True])
def test_closed_linear_map_refuses_an_empty_batch(method, transposed):
    _, lm = ad.linearize(np.sin, X)
    lm = lm.transpose() if transposed else lm
    assert getattr(lm, method)([]) == []
    lm.close()
    with pytest.raises(RuntimeError, match="closed"):
        getattr(lm, method)([])


# --- keyword inputs whose names the transforms use themselves --------------------------------

def _scaled_cube(a, *, f):
    return np.sum(a ** 3) * f


def test_linearize_passes_a_keyword_named_f():
    value, lm = ad.linearize(lambda a, *, f: a * f, X, f=3.0)
    with lm:
        np.testing.assert_allclose(value, 3.0 * X)
        np.testing.assert_allclose(lm(np.ones(2)), [3.0, 3.0])
        np.testing.assert_allclose(lm.pullback(np.ones(2)), [3.0, 3.0])
    staged = ad.stage(lambda a: ad.linearize(lambda b, *, f: b * f, a, f=3.0)[1](np.ones(2)), X)
    np.testing.assert_allclose(staged(X), [3.0, 3.0])


@pytest.mark.parametrize("name", ["tangents", "f", "k"])
def test_hvp_passes_any_keyword(name):
    def f(a, **kw):
        return np.sum(a ** 3) * kw[name]

    value, hv = ad.hvp(f)(X, vectors=np.ones(2), **{name: 2.0})
    np.testing.assert_allclose(value, 2.0 * np.sum(X ** 3))
    np.testing.assert_allclose(hv, 12.0 * X)
    staged = ad.stage(lambda a, s: ad.hvp(f)(a, vectors=np.ones(2), **{name: s})[1], X, 2.0)
    np.testing.assert_allclose(staged(X, 2.0), 12.0 * X)
    # and the keyword's derivative flows (grad of H v with respect to the scale)
    g = ad.grad(lambda s: np.sum(ad.hvp(f)(X, vectors=np.ones(2), **{name: s})[1]))(2.0)
    assert type(g) is float and g == pytest.approx(6.0 * np.sum(X))


# --- debug(): a rule error exposes where it was raised as source_location --------------------

@ad.primitive(name="tests.probe_contract.transpose_only")
def _transpose_only(a):
    return 2.0 * a


@_transpose_only.def_abstract
def _(a):
    return a.spec


@_transpose_only.def_transpose
def _(ct, primals, output):
    return (2.0 * ct,)


@ad.primitive(name="tests.probe_contract.ruleless")
def _ruleless(a):
    return 2.0 * a


@_ruleless.def_abstract
def _(a):
    return a.spec


@pytest.mark.parametrize("call, error", [
    (lambda: ad.jvp(_transpose_only)(X, tangents=np.ones(2)), ad.NoJVPError),
    (lambda: ad.grad(lambda a: np.sum(_ruleless(a)))(X), ad.NoVJPError),
    (lambda: ad.vjp_program(ad.stage(_ruleless, X)), ad.NoVJPError),
    (lambda: ad.stage(lambda a: ad.jvp(_transpose_only)(a, tangents=np.ones(2)), X),
     ad.NoJVPError),
], ids=["jvp", "grad", "vjp_program", "staged jvp"])
def test_rule_errors_carry_their_source_location_under_debug(call, error):
    with pytest.raises(error) as plain:
        call()
    assert plain.value.source_location is None  # outside debug() it is not known
    with ad.debug(), pytest.raises(error) as located:
        call()
    assert located.value.op.startswith("tests.probe_contract.")
    assert "test_probe_contract.py:" in located.value.source_location
    back = pickle.loads(pickle.dumps(located.value))
    assert (back.op, back.source_location) == (located.value.op, located.value.source_location)


# --- a complex cotangent for a real output is refused (as a complex tangent for a real input):
# the real adjoint silently dropped its imaginary part ----------------------------------------

def test_complex_cotangent_for_a_real_output_is_refused():
    ct = np.ones(2) * 1j
    _, pullback = ad.vjp(np.sin)(X)
    with pytest.raises(TypeError, match="complex cotangent"):
        pullback(ct)
    np.testing.assert_allclose(pullback(np.ones(2)), np.cos(X))  # not used up by the refusal
    with pytest.raises(TypeError, match="complex cotangent"):
        ad.vjp(lambda a: np.sum(a))(X)[1](1j)
    with ad.linearize(np.sin, X)[1] as lm:
        for apply in (lm.pullback, lm.transpose()):
            with pytest.raises(TypeError, match="complex cotangent"):
                apply(ct)
    with pytest.raises(ValueError, match="complex128"):  # staged: the cotangent's spec is real
        ad.vjp_program(ad.stage(np.sin, X))(X, cotangent=ct)
    z = X + 1j  # a complex output takes one; a real output of a complex input takes a real one
    np.testing.assert_allclose(ad.vjp(lambda a: a * 1j)(X)[1](ct), np.ones(2))
    np.testing.assert_allclose(ad.vjp(np.abs)(z)[1](np.ones(2)), z / np.abs(z))

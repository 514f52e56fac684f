"""Regressions found probing the transforms and the program lifecycle: one test per bug."""

import collections
import json
import pickle

import numpy as np
import pytest

import advect as ad

X = np.array([0.3, -1.2, 2.0])
Pair = collections.namedtuple("Pair", ["w", "b"])


def _round_trips(program):
    payload = json.loads(json.dumps(program.to_dict(), sort_keys=True))
    return [ad.StagedProgram.from_dict(payload), pickle.loads(pickle.dumps(program))]


def _scaled(x, *, b, a):
    return np.sum(x * a * b**2)


KW = {"b": np.array(2.0), "a": np.array(3.0)}
KW_SPECS = {"b": ad.ArraySpec((), "float64"), "a": ad.ArraySpec((), "float64")}


def test_staged_derivatives_keep_the_argnames_order_as_dynamic_grad_does():
    # bug: the dict of named gradients of grad(program) came back with sorted keys
    program = ad.stage(_scaled, X, kw_specs=KW_SPECS)
    expected = ad.grad(_scaled, argnames=("b", "a"))(X, **KW)
    assert list(expected) == ["b", "a"]
    derived = {
        "grad": (ad.grad(program, argnames=("b", "a")), lambda r: r),
        "grad both": (ad.grad(program, 0, argnames=("b", "a")), lambda r: r[1]),
        "value_and_grad": (ad.value_and_grad(program, argnames=("b", "a")), lambda r: r[1]),
        "vjp_program": (ad.vjp_program(program, argnames=("b", "a")), lambda r: r),
        "stage(grad)": (ad.stage(ad.grad(_scaled, argnames=("b", "a")), X, kw_specs=KW_SPECS),
                        lambda r: r),
    }
    for name, (p, named) in derived.items():
        extra = {"cotangent": np.array(1.0)} if "cotangent" in p.signature[1] else {}
        for q in [p, *_round_trips(p)]:
            got = named(q(X, **KW, **extra))
            assert list(got) == ["b", "a"], name
            for key in got:
                np.testing.assert_allclose(got[key], expected[key])
        assert list(named(p.output_specs)) == ["b", "a"], name


def test_a_staged_dict_output_keeps_the_order_the_function_built():
    program = ad.stage(lambda x: {"z": x * 2, "a": (x, np.sum(x))}, X)
    for q in [program, *_round_trips(program)]:
        out = q(X)
        assert list(out) == ["z", "a"]
        np.testing.assert_allclose(out["z"], X * 2)
        np.testing.assert_allclose(out["a"][1], np.sum(X))
    # the DOT labels still name each output by its own path
    dot = program.to_dot()
    assert "output['z']" in dot and "output['a'][1]" in dot


def test_grad_of_a_program_lifts_a_python_int_input_as_dynamic_grad_does():
    # bug: grad(stage(f, x, 2)) refused the int slot with a TypeError
    def f(x, n):
        return np.sum(x) * n**3

    program = ad.stage(f, X, 2)
    expected = ad.grad(f, 1)(X, 2)
    for derived in (ad.grad(program, 1), ad.grad(program, (0, 1))):
        for q in [derived, *_round_trips(derived)]:
            got = q(X, 2)
            value = got[1] if isinstance(got, tuple) else got
            assert type(value) is float and value == pytest.approx(expected)
    value, gradient = ad.value_and_grad(program, 1)(X, 2)
    assert type(gradient) is float and gradient == pytest.approx(expected)
    second = ad.grad(ad.grad(program, 1), 1)(X, 2)
    assert second == pytest.approx(ad.grad(ad.grad(f, 1), 1)(X, 2))
    # integer semantics replay as the lifted float, as in dynamic grad
    floor = ad.stage(lambda x, n: np.sum(x * (n // 2)), X, 5)
    assert ad.grad(floor, 1)(X, 5) == ad.grad(lambda x, n: np.sum(x * (n // 2)), 1)(X, 5)
    np.testing.assert_allclose(ad.grad(floor)(X, 5), np.full(3, 2.0))  # unselected: int
    # spec 001: vjp_program refuses a selected weak scalar that is not real floating
    with pytest.raises(TypeError, match="Python int"):
        ad.vjp_program(program, 1)


def test_staging_grad_with_a_python_int_example_differentiates_it():
    # bug: stage(grad(f, 1), x, 2) silently returned array(0) (the int slot was not lifted)
    def f(x, n):
        return np.sum(x) * n**2

    program = ad.stage(ad.grad(f, 1), X, 2)
    got = program(X, 2)
    assert type(got) is float and got == pytest.approx(ad.grad(f, 1)(X, 2))
    # and a Python float example gives a Python float gradient (it gave np.float64)
    got = ad.stage(ad.grad(f, 1), X, 2.0)(X, 2.0)
    assert type(got) is float and got == pytest.approx(4 * np.sum(X))


def test_a_restored_namedtuple_is_the_importable_class():
    # bug: from_dict/pickle returned a rebuilt class, so type(out) is Pair was False
    program = ad.stage(lambda p, x: Pair(p.w * x, np.sum(p.b * x)),
                       Pair(X, np.array(0.5)), X)
    for q in _round_trips(program):
        out = q(Pair(X, np.array(0.5)), X)
        assert type(out) is Pair
        assert type(q.signature[0][0]) is Pair
        np.testing.assert_allclose(out.w, X * X)
    loss = ad.stage(lambda p, x: np.sum(p.w * x) + p.b, Pair(X, np.array(0.5)), X)
    for q in _round_trips(ad.grad(loss)):
        gradient = q(Pair(X, np.array(0.5)), X)
        assert type(gradient) is Pair
        np.testing.assert_allclose(gradient.w, X)


def test_a_namedtuple_that_cannot_be_found_still_loads_as_a_rebuilt_class():
    Local = collections.namedtuple("Local", ["u"])  # not defined by its module: not found
    program = ad.stage(lambda x: (Local(x * 2), Pair(x, x)), X)
    payload = program.to_dict()
    assert ["Pair", ["w", "b"], __name__, "Pair"] in payload["namedtuples"]
    local, pair = ad.StagedProgram.from_dict(payload)(X)
    assert type(local) is not Local and type(local).__name__ == "Local"
    assert type(pair) is Pair
    # a payload without the optional table (or naming another module) loads as before
    for table in (None, [["Pair", ["w", "b"], "no_such_module", "Pair"]]):
        edited = dict(payload)
        edited.pop("namedtuples")
        if table is not None:
            edited["namedtuples"] = table
        out = ad.StagedProgram.from_dict(edited)(X)[1]
        assert type(out) is not Pair and out._fields == ("w", "b")
        np.testing.assert_allclose(out.w, X)
    bad = dict(payload, namedtuples=[["Pair", ["w"], "os", "system()"]])
    with pytest.raises(ad.errors.PayloadError, match="namedtuples"):
        ad.StagedProgram.from_dict(bad)


def test_a_jvp_tangent_output_never_aliases_the_tangent_input():
    # bug: jvp of a pass-through returned the caller's tangent array itself
    tangent = np.ones(3)
    _, out = ad.jvp(lambda a: a)(X, tangents=tangent)
    assert not np.may_share_memory(out, tangent)
    out[0] = 5.0
    np.testing.assert_array_equal(tangent, np.ones(3))
    _, (t0, t1) = ad.jvp(lambda a, b: (a, b.reshape(3)), (0, 1))(X, X, tangents=(tangent,
                                                                                   tangent))
    assert not np.may_share_memory(t0, tangent) and not np.may_share_memory(t1, tangent)


def test_a_tangent_tree_may_hold_none_both_as_structure_and_as_a_zero_tangent():
    # bug: jvp/hvp refused tangents mirroring an input that holds a None node next to an
    # integer leaf (None as the zero tangent), although each form alone was accepted
    params = {"w": X, "k": np.arange(3), "n": None, "s": 2.0}

    def f(p):
        return np.sum(p["w"] ** 2 * p["s"] + p["k"])

    vectors = {"w": np.ones(3), "k": None, "n": None, "s": 1.0}
    _, tangent = ad.jvp(f)(params, tangents=vectors)
    assert tangent == pytest.approx(np.sum(4 * X) + np.sum(X**2))
    _, hv = ad.hvp(f)(params, vectors=vectors)
    np.testing.assert_allclose(hv["w"], 4 * np.ones(3) + 2 * X)
    assert hv["s"] == pytest.approx(2 * np.sum(X))
    with pytest.raises(TypeError, match="tangent structure"):
        ad.jvp(f)(params, tangents={"w": (np.ones(3),), "k": None, "n": None, "s": 1.0})


def test_value_and_grad_never_returns_the_callers_array_as_the_value():
    # bug: value_and_grad(lambda a: a)(a) returned the 0-d input itself as the value
    for f in (lambda a: a, lambda a: a.reshape(()), lambda p: p["a"]):
        a = np.array(2.0)
        arg = {"a": a} if f.__code__.co_varnames[0] == "p" else a
        value, _ = ad.value_and_grad(f)(arg)
        assert not np.may_share_memory(value, a)
        value[...] = 7.0
        assert a == 2.0

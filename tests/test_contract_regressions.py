"""Regressions found probing the staged-program and transform contract: one row per bug."""

import collections
import json

import numpy as np
import pytest

import advect as ad
from advect import cli

X = np.linspace(0.1, 1.0, 4)


# --- grad of a function whose output is not one scalar leaf ------------------------------------

@pytest.mark.parametrize("output", [
    lambda a: (np.sum(a),),            # was silently unwrapped
    lambda a: {"loss": np.sum(a)},     # was silently unwrapped
    lambda a: [np.sum(a)],
])
def test_grad_refuses_a_one_leaf_container(output):
    with pytest.raises(ValueError, match="one real scalar"):
        ad.grad(output)(X)
    with pytest.raises(ValueError, match="one real scalar"):
        ad.value_and_grad(output)(X)


def test_grad_of_a_pair_suggests_has_aux():
    # was "too many values to unpack (expected 1)", dynamic and staged
    with pytest.raises(ValueError, match="has_aux=True"):
        ad.grad(lambda a: (np.sum(a), a))(X)
    program = ad.stage(lambda a: (np.sum(a), a), X)
    with pytest.raises(ValueError, match="has_aux=True"):
        ad.grad(program)
    with pytest.raises(ValueError, match="has_aux=True"):
        ad.grad(ad.value_and_grad(ad.stage(lambda a: np.sum(a ** 2), X)))


def test_grad_of_none_output_is_named():
    with pytest.raises(ValueError, match="got None"):
        ad.grad(lambda a: None)(X)


# --- static values must match exactly -------------------------------------------------------------

@pytest.mark.parametrize("staged, other", [
    (-0.0, 0.0),                                     # sign of zero changes the result
    (np.array([1.0, 1.0]), np.array([1.0])),         # broadcast-equal, other shape
    (np.array([1.0, 1.0]), np.array([1, 1])),        # equal values, other dtype
    (np.array([-0.0]), np.array([0.0])),
    (1 + 0j, complex(1, -0.0)),
])
def test_static_mismatch_is_refused(staged, other):
    program = ad.stage(lambda a, k: a * np.sum(k), X, ad.StaticSpec(staged))
    with pytest.raises(TypeError, match="static value"):
        program(X, other)


@pytest.mark.parametrize("value", [float("nan"), np.array([np.nan, 1.0]), np.float64("nan"),
                                   {"k": (float("nan"),)}])
def test_static_nan_matches_itself(value):
    program = ad.stage(lambda a, k: a, X, ad.StaticSpec(value))
    np.testing.assert_array_equal(program(X, value), X)  # was "nan differs from the staged nan"


def test_static_zero_sign_matches_eager():
    program = ad.stage(lambda a, k: a * k, X, ad.StaticSpec(0.0))
    assert not np.signbit(program(X, 0.0)).any()
    with pytest.raises(TypeError, match="static value"):
        program(X, -0.0)


# --- call-contract errors -------------------------------------------------------------------------

def test_dict_subclass_for_a_dict_slot_names_its_type():
    program = ad.stage(lambda t: t["a"] + t["b"], {"a": X, "b": X})
    with pytest.raises(TypeError, match=r"OrderedDict.*dict\(value\)"):
        program(collections.OrderedDict([("a", X), ("b", X)]))


# --- advect run: weak scalar inputs convert exactly ----------------------------------------------

@pytest.mark.parametrize("example, given", [
    (2, np.float64(2.7)),      # was silently truncated to 2
    (2, np.True_),             # a bool is not an int slot's value (as in a Python call)
    (2.0, np.complex128(1j)),  # was a TypeError traceback
])
def test_cli_run_refuses_inexact_weak_inputs(tmp_path, capsys, example, given):
    program = ad.stage(lambda a, x: x * a, example, np.ones(2))
    path = tmp_path / "p.json"
    path.write_text(json.dumps(program.to_dict()))
    np.save(tmp_path / "a.npy", given)
    np.save(tmp_path / "x.npy", np.ones(2))
    code = cli.main(["run", str(path), "--input", f"arg0={tmp_path / 'a.npy'}",
                     "--input", f"arg1={tmp_path / 'x.npy'}"])
    assert code == 1
    assert "does not convert" in capsys.readouterr().err


def test_cli_run_widens_an_int_into_a_float_slot(tmp_path, capsys):
    program = ad.stage(lambda a, x: x * a, 2.0, np.ones(2))
    path = tmp_path / "p.json"
    path.write_text(json.dumps(program.to_dict()))
    np.save(tmp_path / "a.npy", np.int64(3))
    np.save(tmp_path / "x.npy", np.ones(2))
    assert cli.main(["run", str(path), "--input", f"arg0={tmp_path / 'a.npy'}",
                     "--input", f"arg1={tmp_path / 'x.npy'}"]) == 0
    assert "3." in capsys.readouterr().out


# --- argnums / argnames validation: the same in both lifetimes ------------------------------------

def _dot(a, b):
    return np.sum(a * b)


def _dot_kw(a, *, b):
    return np.sum(a * b)


def _transforms():
    program = ad.stage(_dot, X, X)
    yield lambda **sel: ad.grad(_dot, **sel)(X, X)
    yield lambda **sel: ad.grad(program, **sel)(X, X)
    yield lambda **sel: ad.vjp_program(program, **sel)(X, X, cotangent=np.float64(1.0))


@pytest.mark.parametrize("argnums, error, match", [
    (True, TypeError, "bool"),             # dynamic grad took True as 1
    ((0, True), TypeError, "bool"),
    (1.0, TypeError, "an int or a tuple"),  # was "'float' object is not iterable"
])
def test_bad_argnums_are_refused_alike(argnums, error, match):
    for transform in _transforms():
        with pytest.raises(error, match=match):
            transform(argnums=argnums)


@pytest.mark.parametrize("argnames, error, match", [
    (("b", "b"), ValueError, "twice"),     # dynamic grad accepted the duplicate
    (1, TypeError, "a str or a tuple"),     # was "'int' object is not iterable"
    ((1,), TypeError, "strs"),
])
def test_bad_argnames_are_refused_alike(argnames, error, match):
    program = ad.stage(_dot_kw, X, kw_specs={"b": ad.ArraySpec((4,), "float64")})
    for f in (_dot_kw, program):
        with pytest.raises(error, match=match):
            ad.grad(f, argnames=argnames)(X, b=X)


@pytest.mark.parametrize("make", [ad.StaticSpec, ad.pytree.static])
def test_equal_static_values_hash_alike(make):
    # NaN now equals NaN: the hash must follow (distinct NaN objects hashed apart)
    for value in [float("nan"), (1, float("nan")), complex(float("nan"), 0), np.float64("nan")]:
        again = float("nan") if type(value) is float else value  # another NaN object
        assert make(value) == make(again)
        assert {make(value): 1}[make(again)] == 1


# --- Python ints beyond int64 ---------------------------------------------------------------------

def test_oversized_python_int_call_is_a_value_error():
    program = ad.stage(lambda a: a * 4, 3)
    with pytest.raises(ValueError, match="does not fit"):  # was OverflowError from the plan
        program(2 ** 70)
    with pytest.raises(ValueError, match="does not fit"):
        program(-(2 ** 63) - 1)
    assert program(2 ** 60) == 2 ** 62  # in range: runs
    assert ad.stage(lambda a: a * 2.0, 2.0)(2 ** 70) == 2.0 ** 71  # an int widened to float


def test_oversized_python_int_example_is_refused():
    with pytest.raises(TypeError, match="int64 range"):
        ad.stage(lambda a: a, 2 ** 64)


# --- ad.debug(numerics=True) covers warm staged calls ---------------------------------------------

def test_debug_numerics_checks_warm_staged_calls():
    log_sum = ad.stage(lambda a: np.sum(np.log(a)), X)
    gradient = ad.grad(ad.stage(lambda a: np.sum(np.sqrt(a)), X))
    with np.errstate(all="ignore"):
        with ad.debug(numerics=True):
            with pytest.raises(ad.NumericsError, match="'log'") as info:
                log_sum(-X)  # was a silent NaN
            assert info.value.phase == "primal"
            with pytest.raises(ad.NumericsError, match="'divide'"):
                gradient(np.zeros(4))
            assert log_sum(X) == pytest.approx(np.sum(np.log(X)))
        with ad.debug():
            assert np.isnan(log_sum(-X))  # numerics off: the plan runs
        assert np.isnan(log_sum(-X))


# --- a weak spec declares a Python scalar category ------------------------------------------------

@pytest.mark.parametrize("dtype, canonical", [("float32", "float64"), ("int8", "int64"),
                                              ("uint8", "int64"), ("complex64", "complex128")])
def test_weak_spec_signature_survives_a_round_trip(dtype, canonical):
    # was float32 before saving and float64 after: another signature after restore
    program = ad.stage(lambda a: a, specs=(ad.ArraySpec((), dtype, weak=True),))
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    assert program.signature == restored.signature
    assert program.signature[0][0].dtype == canonical

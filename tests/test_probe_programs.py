"""Staged programs give rank-0 outputs the type eager NumPy gives (NumPy scalar or 0-d array),
through saving, pickling, nesting and derivatives; weak int slots inside dynamic transforms;
Python bool slots of staged gradients."""

import json
import pickle

import numpy as np
import pytest

import advect as ad
from advect.errors import PayloadError

V = np.array([1.0, 2.0, 3.0])
S = np.array(2.0)
C0 = np.array(5.0)


def _inc(o):
    o += 1
    return o


# (function, example): each returns rank-0 outputs whose eager type the program must give
CASES = {
    "sum": (lambda a: a.sum(), V),
    "constant_sum": (lambda a: (a.sum(), np.sum(np.ones(3))), V),
    "constant_0d_array": (lambda a: (a.sum(), C0), V),
    "constant_numpy_scalar": (lambda a: (a.sum(), np.float64(4.0)), V),
    "constant_median": (lambda a: (a.sum(), np.median(np.ones(3))), V),
    "constant_max": (lambda a: (a.sum(), np.max(np.ones(3))), V),
    "constant_all_empty": (lambda a: (a.sum(), np.all(np.ones(0))), V),
    "identity": (lambda a: a, S),
    "conj": (lambda a: np.conj(a), S),
    "real": (lambda a: np.real(a), S),
    "astype_same": (lambda a: a.astype(a.dtype), S),
    "positive": (lambda a: np.positive(a), S),
    "unary_plus": (lambda a: +a, S),
    "times_one": (lambda a: a * 1, S),
    "double_negation": (lambda a: np.negative(np.negative(a)), S),
    "copy": (lambda a: a.copy(), S),
    "np_copy": (lambda a: np.copy(a), S),
    "zeros": (lambda a: (np.zeros(()), a.sum()), V),
    "array": (lambda a: (np.array(2.0), a.sum()), V),
    "where": (lambda a: np.where(a > 1, a, 0.0), S),
    "where_of_sums": (lambda a: np.where(a.sum() > 1, a.sum(), 0.0), V),
    "integer_index": (lambda a: a[0], V),
    "index_with_ellipsis": (lambda a: a[0, ...], V),
    "ellipsis_of_0d": (lambda a: a[...], S),
    "empty_index_of_0d": (lambda a: a[()], S),
    "transpose_0d": (lambda a: a.T, S),
    "reshape_to_0d": (lambda a: a.reshape(()), np.array([2.0])),
    "sum_of_0d": (lambda a: np.sum(a), S),
    "mean_of_0d": (lambda a: np.mean(a), S),
    "conj_int": (lambda a: np.conj(a), np.array(3)),
    "zeros_like_0d": (lambda a: np.zeros_like(a), S),
    "in_place_on_copy": (lambda a: _inc(a.copy()), S),
}


def _types(out):
    return [type(o) for o in (out if isinstance(out, tuple) else (out,)) if np.ndim(o) == 0]


def _staged(case):
    function, example = CASES[case]
    program = ad.stage(function, example)
    return function, example, program


@pytest.mark.parametrize("case", sorted(CASES))
def test_rank0_output_types_match_eager(case):
    function, example, program = _staged(case)
    eager = _types(function(example.copy()))
    assert _types(program(example.copy())) == eager
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    assert _types(restored(example.copy())) == eager
    assert _types(pickle.loads(pickle.dumps(program))(example.copy())) == eager
    assert _types(ad.stage(lambda a: program(a), example)(example.copy())) == eager
    with ad.debug(numerics=True):
        assert _types(program(example.copy())) == eager


@pytest.mark.parametrize("case", ["where", "index_with_ellipsis", "reshape_to_0d", "conj",
                                  "sum_of_0d", "copy", "times_one"])
def test_value_of_a_derived_program_has_the_primal_type(case):
    function, example, program = _staged(case)
    primal_type = type(program(example.copy()))
    value, _ = ad.value_and_grad(program)(example.copy())
    assert type(value) is primal_type
    value, _ = ad.value_and_grad(lambda a: program(a))(example.copy())
    assert type(value) is primal_type


def test_gradients_have_their_input_type():
    program = ad.stage(lambda a, s: a * 2.0 + s, S, 1.0)
    gradient = ad.grad(program, (0, 1))(S, 1.0)
    assert type(gradient[0]) is np.ndarray and gradient[0].shape == ()
    assert type(gradient[1]) is float
    pullback = ad.vjp_program(program)(S, 1.0, cotangent=np.float64(1.0))
    assert type(pullback) is np.ndarray and pullback == 2.0


def test_writing_a_returned_copy_leaves_the_input_alone():
    program = ad.stage(lambda a: a.copy(), S)
    x = np.array(2.0)
    out = program(x)
    out[...] = 7.0
    assert x == 2.0
    nested = ad.stage(lambda a: _inc(program(a)), S)
    assert nested(x) == 3.0 and x == 2.0 and type(nested(x)) is np.ndarray


def test_saved_format_records_rank0_types_additively():
    plain = ad.stage(lambda a: np.sin(a), V).to_dict()
    assert "numpy_scalar" not in plain["outputs"]  # no rank-0 output: the payload as before
    payload = ad.stage(lambda a: (a.sum(), np.zeros(()), a), V).to_dict()
    assert payload["outputs"]["numpy_scalar"] == [True, False, None]


def test_payload_without_the_record_loads_as_before():
    program = ad.stage(lambda a: (a.sum(), np.sum(np.ones(3))), V)
    payload = json.loads(json.dumps(program.to_dict()))
    del payload["outputs"]["numpy_scalar"]
    out = ad.StagedProgram.from_dict(payload)(V)
    assert type(out[1]) is np.ndarray  # as computed: the folded constant
    assert out[0] == 6.0 and out[1] == 3.0


@pytest.mark.parametrize("entries", [[True], [True, True, True], ["yes", None], [1, None],
                                     [None, True]])
def test_malformed_record_is_refused(entries):
    payload = ad.stage(lambda a: (a.sum(), a), V).to_dict()
    payload["outputs"]["numpy_scalar"] = entries
    with pytest.raises(PayloadError, match="numpy_scalar"):
        ad.StagedProgram.from_dict(payload)


def test_python_scalar_output_cannot_be_a_numpy_scalar():
    payload = ad.stage(lambda a, s: (a.sum(), s * 2), V, 2.0).to_dict()
    payload["outputs"]["numpy_scalar"] = [True, True]
    with pytest.raises(PayloadError, match=r"numpy_scalar\[1\]"):
        ad.StagedProgram.from_dict(payload)


# --- weak int slots inside dynamic transforms -------------------------------------------------

def _scaled(x, n):
    return np.sum(x * n)


def test_grad_through_a_program_with_an_int_slot():
    program = ad.stage(_scaled, V, 2)
    assert ad.grad(lambda n: program(V, n))(2) == ad.grad(lambda n: _scaled(V, n))(2) == 6.0
    value, gradient = ad.value_and_grad(lambda n: program(V, n))(2)
    assert value == 12.0 and gradient == 6.0
    assert ad.stage(ad.grad(lambda n: program(V, n)), 2)(3) == 6.0
    assert ad.grad(program, 1)(V, 2) == 6.0


def test_staged_float_in_an_int_slot_says_what_to_do():
    program = ad.stage(_scaled, V, 2)
    with pytest.raises(ValueError, match=r"float example \(2\.0"):
        ad.stage(lambda n: program(V, n), 2.0)
    with pytest.raises(ValueError, match="Python int"):
        program(V, 2.5)


def test_traced_int_in_a_float_slot_is_converted_as_a_concrete_one():
    program = ad.stage(lambda x, s: x * s, np.ones(3, np.float32), 2.0)
    nested = ad.stage(lambda x, n: program(x, n), np.ones(3, np.float32), 2)
    out = nested(np.ones(3, np.float32), 3)
    assert out.dtype == np.float32 and out.tolist() == [3.0, 3.0, 3.0]
    assert program(np.ones(3, np.float32), 3).tolist() == out.tolist()


# --- Python bool slots of staged gradients ----------------------------------------------------

def test_bool_slot_gets_the_zero_gradient_of_dynamic_grad():
    program = ad.stage(_scaled, V, True)
    dynamic = ad.grad(_scaled, 1)(V, True)
    staged = ad.grad(program, 1)(V, True)
    assert type(staged) is type(dynamic) is np.ndarray
    assert staged.dtype == dynamic.dtype == bool and staged.shape == () and not staged
    both = ad.grad(program, (0, 1))(V, False)
    assert both[0].tolist() == [0.0, 0.0, 0.0] and both[1].dtype == bool
    value, gradient = ad.value_and_grad(program, 1)(V, True)
    assert value == 6.0 and gradient.dtype == bool
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(ad.grad(program, 1).to_dict())))
    assert restored(V, True).dtype == bool


def test_vjp_program_still_refuses_a_bool_slot():
    with pytest.raises(TypeError, match="Python bool"):
        ad.vjp_program(ad.stage(_scaled, V, True), 1)


def test_keyword_gradients_named_out_of_order_keep_their_types():
    def f(x, *, a, b):
        return np.sum(x * b) * a

    program = ad.stage(f, V, kw_specs={"a": ad.ArraySpec((), "float64", weak=True),
                                       "b": ad.ArraySpec((3,), "float64")})
    gradient = ad.grad(program, argnames=("b", "a"))(V, a=2.0, b=V)
    assert list(gradient) == ["b", "a"]
    assert type(gradient["a"]) is float and gradient["a"] == 14.0
    assert gradient["b"].tolist() == [2.0, 4.0, 6.0]

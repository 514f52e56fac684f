"""NumPy-scalar inputs (``np.float64(2)``) against 0-d arrays: every lifetime gives the result
types eager NumPy gives (``s.copy()`` a scalar, ``s[...]`` a 0-d array), and their gradients
are NumPy scalars, dynamic, staged, derived and restored alike."""

import json
import pickle

import numpy as np
import pytest

import advect as ad
from advect.errors import PayloadError


def _iadd(a):
    a += 1.0  # a NumPy scalar rebinds; a 0-d array is written in place
    return a


FUNCTIONS = {
    "copy": lambda a: a.copy(),
    "ellipsis": lambda a: a[...],
    "empty_index": lambda a: a[()],
    "astype": lambda a: a.astype(np.float32),
    "reshape": lambda a: a.reshape(()),
    "transpose": lambda a: a.T,
    "squeeze": lambda a: a.squeeze(),
    "np_copy": lambda a: np.copy(a),
    "asarray": lambda a: ad.asarray(a) * 1.0,
    "negative": lambda a: -a,
    "where": lambda a: np.where(True, a, 0.0),
    "identity": lambda a: a,
    "iadd": _iadd,
    "conj": lambda a: a.conj(),
    "real": lambda a: a.real,
}
INPUTS = {
    "float64_scalar": lambda: np.float64(2.0),
    "float32_scalar": lambda: np.float32(2.0),
    "float64_0d": lambda: np.array(2.0),
}


def _same_type(got, want):
    assert type(got) is type(want), (type(got), type(want))
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS)
@pytest.mark.parametrize("f", FUNCTIONS.values(), ids=FUNCTIONS)
def test_result_types_match_eager(f, make):
    if f is _iadd and not isinstance(make(), np.generic):
        pytest.skip("a transform's 0-d array input is not writable (MutationError)")
    want = f(make())
    _same_type(ad.stage(f, make())(make()), want)
    value, tangent = ad.jvp(f)(make(), tangents=np.ones_like(make()))
    _same_type(value, want)
    assert type(tangent) is type(want) and np.asarray(tangent).dtype == np.asarray(want).dtype
    assert abs(tangent) == 1.0
    value, _ = ad.value_and_grad(lambda a: np.sum(f(a)) * 1.0)(make())
    program = ad.stage(f, make())
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    _same_type(restored(make()), want)
    _same_type(pickle.loads(pickle.dumps(program))(make()), want)


@pytest.mark.parametrize("make", INPUTS.values(), ids=INPUTS)
@pytest.mark.parametrize("name", ["copy", "astype", "negative", "ellipsis"])
def test_gradients_take_the_input_type(name, make):
    def loss(a):
        return np.sum(FUNCTIONS[name](a) ** 2) * 1.0

    want = ad.grad(loss)(make())
    assert type(want) is type(make())
    np.testing.assert_allclose(want, 2 * make())
    for got in (ad.grad(ad.stage(loss, make()))(make()),
                ad.grad(lambda a: ad.stage(loss, a)(a))(make())):
        _same_type(got, want)


def test_a_numpy_scalar_slot_takes_a_zero_d_array_and_types_as_staged():
    program = ad.stage(lambda a: a.copy(), np.float64(2.0))
    assert program.signature[0] == (ad.ArraySpec((), "float64", numpy_scalar=True),)
    assert type(program(np.array(3.0))) is np.float64
    with pytest.raises(ValueError, match="float64"):
        program(np.float32(3.0))


def test_writes_into_a_numpy_scalar_input_behave_as_numpy():
    def fill(a):
        a.fill(5.0)  # NumPy fills a temporary copy: the scalar keeps its value
        return a * 1.0

    def store(a):
        a[...] = 5.0
        return a

    x = np.float64(2.0)
    assert fill(x) == 2.0 and ad.stage(fill, x)(x) == 2.0 and ad.grad(fill)(x) == 1.0
    for call in (lambda: store(x), lambda: ad.stage(store, x), lambda: ad.grad(store)(x)):
        with pytest.raises(TypeError):
            call()


def test_array_spec_numpy_scalar_is_checked_and_kept():
    spec = ad.ArraySpec((), "float32", numpy_scalar=True)
    assert spec.numpy_scalar and spec != ad.ArraySpec((), "float32")
    assert repr(spec) == "ArraySpec((), 'float32', numpy_scalar=True)"
    assert pickle.loads(pickle.dumps(spec)) == spec
    with pytest.raises(ValueError, match="shape must be"):
        ad.ArraySpec((2,), "float32", numpy_scalar=True)
    with pytest.raises(ValueError, match="weak"):
        ad.ArraySpec((), "float64", weak=True, numpy_scalar=True)
    program = ad.stage(lambda a: a.copy(), specs=(spec,))
    assert type(program(np.float32(1.0))) is np.float32


def test_saved_numpy_scalar_slots_are_checked():
    payload = ad.stage(lambda a: a * 2.0, np.float64(1.0)).to_dict()
    assert payload["signature"]["positional"] == [
        {"shape": [], "dtype": "float64", "numpy_scalar": True}]
    for bad in ({"shape": [2], "dtype": "float64", "numpy_scalar": True},
                {"shape": [], "dtype": "float64", "numpy_scalar": 1}):
        broken = json.loads(json.dumps(payload))
        broken["signature"]["positional"] = [bad]
        with pytest.raises(PayloadError, match="numpy_scalar"):
            ad.StagedProgram.from_dict(broken)

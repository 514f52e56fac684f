"""Staged programs and providers: the Array API revision a program is staged against (spec 001
``array_api_version``), replay by a compatible provider (spec 000), devices in the call contract
(issue 6 item 2, issue 3 item 4), PyTorch tensors as examples, and what each contract mismatch
raises. Expected values come from NumPy or the provider itself."""

from __future__ import annotations

import json

import numpy as np
import pytest

import advect as ad
from advect.array_api import REVISIONS
from advect.errors import AdvectError, RevisionError

strict = pytest.importorskip("array_api_strict")
DEVICE1 = strict.Device("device1")
X = np.array([0.1, 0.2, 0.3])


def _neutral(x):
    xp = x.__array_namespace__()
    return xp.sum(xp.exp(x) * xp.cos(x))


def _round_trip(program):
    return ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict(), sort_keys=True)))


# --- the revision a program is staged against -----------------------------------------------

def test_specs_alone_select_advects_newest_revision_and_it_serves_numpy_calls():
    program = ad.stage(_neutral, specs=(ad.ArraySpec((3,), "float64"),))
    assert program.array_api_version == REVISIONS[-1] == "2025.12"
    np.testing.assert_allclose(program(X), np.sum(np.exp(X) * np.cos(X)), rtol=1e-14)
    assert _round_trip(program).array_api_version == REVISIONS[-1]


def test_examples_select_the_newest_revision_their_provider_serves():
    assert ad.stage(_neutral, X).array_api_version == min(np.__array_api_version__,
                                                         REVISIONS[-1])
    with strict.ArrayAPIStrictFlags(api_version="2023.12"):
        assert ad.stage(_neutral, strict.asarray(X)).array_api_version == "2023.12"


@pytest.mark.skipif(np.__array_api_version__ >= REVISIONS[-1], reason="NumPy serves them all")
def test_an_explicit_revision_the_examples_provider_lacks_is_a_value_and_type_error():
    with pytest.raises(RevisionError, match="not served by numpy") as info:
        ad.stage(_neutral, X, array_api_version=REVISIONS[-1])
    assert isinstance(info.value, ValueError) and isinstance(info.value, TypeError)
    assert isinstance(info.value, AdvectError)
    # with specs alone any supported revision can be chosen
    program = ad.stage(_neutral, specs=(ad.ArraySpec((3,), "float64"),),
                       array_api_version=REVISIONS[-1])
    assert program.array_api_version == REVISIONS[-1]


def test_an_explicit_revision_every_provider_serves_is_stored():
    program = ad.stage(_neutral, strict.asarray(X), array_api_version="2022.12")
    assert program.array_api_version == "2022.12"
    with pytest.raises(ValueError, match="not supported"):
        ad.stage(_neutral, strict.asarray(X), array_api_version="2020.12")


# --- replay by a compatible provider (spec 000) ---------------------------------------------

def test_a_program_staged_from_numpy_replays_on_strict_arrays_of_its_revision():
    program = ad.stage(_neutral, X, array_api_version="2022.12")  # served by every NumPy 2
    out = program(strict.asarray(X))
    assert type(out) is type(strict.asarray(X))
    np.testing.assert_allclose(np.asarray(out), np.sum(np.exp(X) * np.cos(X)), rtol=1e-14)
    assert isinstance(program(X), np.float64 | np.ndarray)  # and still on NumPy
    gradient = ad.grad(program)(strict.asarray(X))
    assert type(gradient) is type(strict.asarray(X))
    np.testing.assert_allclose(np.asarray(gradient), np.exp(X) * (np.cos(X) - np.sin(X)),
                               rtol=1e-14)


def test_a_numpy_authored_program_with_a_constant_replays_on_strict_arrays():
    table = np.array([1.0, 2.0, 3.0])
    program = ad.stage(lambda x: np.sum(np.sin(x) * table), X)
    out = program(strict.asarray(X))
    assert type(out) is type(strict.asarray(X))
    np.testing.assert_allclose(np.asarray(out), np.sum(np.sin(X) * table), rtol=1e-14)


def test_replay_needs_a_provider_serving_the_programs_revision():
    program = ad.stage(_neutral, specs=(ad.ArraySpec((3,), "float64"),))  # 2025.12
    with strict.ArrayAPIStrictFlags(api_version="2023.12"):
        with pytest.raises(RevisionError, match="2025.12") as info:
            program(strict.asarray(X))
    assert isinstance(info.value, TypeError) and isinstance(info.value, ValueError)


def test_a_program_staged_from_strict_examples_takes_strict_arrays_only():
    program = ad.stage(_neutral, strict.asarray(X))
    with pytest.raises(TypeError, match="array_api_strict"):
        program(X)


def test_replay_takes_one_provider_at_a_time():
    program = ad.stage(lambda a, b: a * b, X, X)
    with pytest.raises(TypeError, match="several array providers"):
        program(X, strict.asarray(X))


# --- devices --------------------------------------------------------------------------------

def test_a_non_default_device_is_recorded_reported_while_staging_and_checked():
    seen = {}

    def f(v):
        xp = v.__array_namespace__()
        seen["input"] = v.device
        y = xp.sin(v) * 2
        seen["derived"] = y.device
        return y + xp.ones(3, device=v.device, dtype=v.dtype)

    x = strict.asarray(X, device=DEVICE1)
    program = ad.stage(f, x)
    assert seen == {"input": DEVICE1, "derived": DEVICE1}
    assert program.signature[0][0] == ad.ArraySpec((3,), "float64", device=DEVICE1)
    out = program(x)
    assert out.device == DEVICE1
    np.testing.assert_allclose(np.asarray(out.to_device(strict.Device("CPU_DEVICE"))),
                               np.sin(X) * 2 + 1, rtol=1e-14)
    with pytest.raises(ValueError) as info:
        program(strict.asarray(X))
    message = str(info.value)
    assert "argument[0]" in message and "device1" in message and "CPU_DEVICE" in message


def test_default_device_examples_record_no_device_and_other_devices_are_refused():
    program = ad.stage(_neutral, strict.asarray(X))
    assert program.signature[0][0].device is None
    with pytest.raises(ValueError, match=r"argument\[0\].*default device.*device1"):
        program(strict.asarray(X, device=DEVICE1))
    numpy_program = ad.stage(_neutral, X)
    with pytest.raises(ValueError, match=r"argument\[0\].*default device.*device1"):
        numpy_program(strict.asarray(X, device=DEVICE1))


def test_the_staging_device_of_default_examples_is_the_providers_default():
    seen = []
    ad.stage(lambda v: seen.append(v.device) or v, strict.asarray(X))
    ad.stage(lambda v: seen.append(v.device) or v, X)
    assert seen == [strict.Device("CPU_DEVICE"), "cpu"]


def test_captured_constants_on_another_device_work_and_follow_the_call():
    table = strict.asarray([1.0, 2.0, 3.0], device=DEVICE1)

    def f(v):
        xp = v.__array_namespace__()
        return xp.sum(xp.sin(v) * table)

    x = strict.asarray(X, device=DEVICE1)
    program = ad.stage(f, x)
    assert program.constants[0].value.tolist() == [1.0, 2.0, 3.0]
    out = program(x)
    assert out.device == DEVICE1
    expected = np.sum(np.sin(X) * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(float(out.to_device(strict.Device("CPU_DEVICE"))), expected,
                               rtol=1e-14)
    gradient = ad.grad(program)(x)
    assert gradient.device == DEVICE1
    np.testing.assert_allclose(np.asarray(gradient.to_device(strict.Device("CPU_DEVICE"))),
                               np.cos(X) * [1.0, 2.0, 3.0], rtol=1e-14)


def test_a_saved_device_is_restored_by_name_and_still_checked():
    x = strict.asarray(X, device=DEVICE1)
    program = ad.stage(_neutral, x)
    payload = program.to_dict()
    assert payload["signature"]["positional"][0]["device"] == str(DEVICE1)
    restored = _round_trip(program)
    out = restored(x)
    assert out.device == DEVICE1
    np.testing.assert_allclose(float(out.to_device(strict.Device("CPU_DEVICE"))),
                               np.sum(np.exp(X) * np.cos(X)), rtol=1e-14)
    with pytest.raises(ValueError, match=r"argument\[0\].*device1"):
        restored(strict.asarray(X))


# --- PyTorch tensors as examples ------------------------------------------------------------

def test_torch_tensors_stage_run_differentiate_and_save():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    t = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float32)
    seen = []

    def f(v):
        xp = v.__array_namespace__()
        seen.append(v.dtype)
        return xp.sum(xp.sin(v) * v)

    program = ad.stage(f, t)
    assert seen == [torch.float32]
    assert program.signature[0][0] == ad.ArraySpec((3,), "float32")
    out = program(t)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    expected = np.sum(np.sin(X.astype(np.float32)) * X.astype(np.float32))
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    gradient = ad.grad(program)(t)
    assert isinstance(gradient, torch.Tensor) and gradient.dtype == torch.float32
    np.testing.assert_allclose(gradient.numpy(), np.sin(X) + X * np.cos(X), rtol=1e-6)
    with pytest.raises(TypeError, match="torch"):
        program(X.astype(np.float32))
    restored = _round_trip(program)
    np.testing.assert_array_equal(restored(t).numpy(), out.numpy())


def test_a_numpy_authored_function_stages_from_torch_examples():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    t = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)

    def f(v):
        return np.sum(np.sin(v) * v)

    program = ad.stage(f, t)
    assert str(program.graph) == str(ad.stage(f, X).graph)
    out = program(t)
    assert isinstance(out, torch.Tensor)
    np.testing.assert_allclose(out.numpy(), np.sum(np.sin(X) * X), rtol=1e-14)


# --- what each contract mismatch raises (issue 3 item 4) -----------------------------------

def _contract_program():
    return ad.stage(lambda d, k, s: d["w"] * s["mode"] + k[0] * k[1],
                    {"w": np.zeros((2, 3))}, (np.zeros(3), 1.5), ad.StaticSpec({"mode": 1}))


_GOOD = ({"w": np.zeros((2, 3))}, (np.zeros(3), 1.5), {"mode": 1})


@pytest.mark.parametrize("position, bad, error, fragments", [
    (0, {"w": np.zeros((3, 2))}, ValueError, ["argument[0]['w']", "float64[2,3]", "(3, 2)"]),
    (0, {"w": np.zeros((2, 3), np.float32)}, ValueError,
     ["argument[0]['w']", "float64[2,3]", "float32"]),
    (1, (np.zeros(3), True), ValueError, ["argument[1][1]", "Python float", "Python bool"]),
    (1, (np.zeros(3), np.float64(1.5)), ValueError, ["argument[1][1]", "Python float"]),
    (1, [np.zeros(3), 1.5], TypeError, ["argument[1]", "tuple of length 2", "list of length 2"]),
    (0, {"v": np.zeros((2, 3))}, TypeError, ["argument[0]", "keys ['w']", "keys ['v']"]),
    (2, {"mode": 2}, TypeError, ["argument[2]", "{'mode': 2}", "{'mode': 1}"]),
    (2, {"mode": 1.0}, TypeError, ["argument[2]", "{'mode': 1.0}", "{'mode': 1}"]),
])
def test_each_contract_mismatch_names_the_leaf_and_both_specs(position, bad, error, fragments):
    program = _contract_program()
    np.testing.assert_array_equal(program(*_GOOD), np.zeros((2, 3)))
    args = list(_GOOD)
    args[position] = bad
    with pytest.raises(error) as info:
        program(*args)
    for fragment in fragments:
        assert fragment in str(info.value), (fragment, str(info.value))


def test_a_device_mismatch_is_a_value_error_naming_the_leaf_and_both_devices():
    program = ad.stage(lambda d: d["x"] * 2, {"x": strict.asarray(X, device=DEVICE1)})
    with pytest.raises(ValueError) as info:
        program({"x": strict.asarray(X)})
    message = str(info.value)
    assert "argument[0]['x']" in message and "device1" in message and "CPU_DEVICE" in message


def test_a_staged_pullback_takes_its_cotangent_on_the_programs_device():
    x = strict.asarray(X, device=DEVICE1)
    program = ad.stage(lambda v: v.__array_namespace__().sin(v), x)
    assert program.output_specs.device == DEVICE1
    pullback = ad.vjp_program(program)
    cotangent = strict.asarray([1.0, 2.0, 3.0], device=DEVICE1)
    out = pullback(x, cotangent=cotangent)
    assert out.device == DEVICE1
    np.testing.assert_allclose(np.asarray(out.to_device(strict.Device("CPU_DEVICE"))),
                               np.cos(X) * [1.0, 2.0, 3.0], rtol=1e-14)
    with pytest.raises(ValueError, match=r"argument\['cotangent'\].*device1"):
        pullback(x, cotangent=strict.asarray([1.0, 2.0, 3.0]))

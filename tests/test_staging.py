"""Staging: spec 000 ("Stage once", "Declare a signature", dtypes) and spec 001 (``stage``),
one test per sentence where a sentence states behaviour; answers come from NumPy."""

import re
import threading

import numpy as np
import pytest

import advect as ad
from advect.errors import MutationError, TracingError
from advect.staging.trace import AmbientRandomnessError


def loss(x):
    return np.sum(np.sin(x) ** 2)


SAMPLE = np.linspace(-0.5, 0.5, 8)


# --- stage once, call many times ----------------------------------------------------------------

def test_staged_program_matches_numpy_on_new_data():
    program = ad.stage(loss, SAMPLE)
    shifted = SAMPLE + 0.1
    np.testing.assert_allclose(program(shifted), np.sum(np.sin(shifted) ** 2), rtol=1e-14)


def test_the_python_function_is_not_rerun_on_warm_calls():
    calls = []

    def f(x):
        calls.append(1)
        return np.cos(x) * 3

    program = ad.stage(f, SAMPLE)
    for _ in range(3):
        np.testing.assert_allclose(program(SAMPLE + 1), np.cos(SAMPLE + 1) * 3)
    assert len(calls) == 1


@pytest.mark.parametrize("bad, error", [
    (np.linspace(0, 1, 9), ValueError),                      # shape
    (SAMPLE.astype(np.float32), ValueError),                 # dtype
    (0.5, ValueError),                                       # Python-scalar category
    ((SAMPLE,), TypeError),                                  # pytree structure
])
def test_calls_that_change_the_contract_fail(bad, error):
    program = ad.stage(loss, SAMPLE)
    with pytest.raises(error, match=r"argument\[0\]"):
        program(bad)


def test_contract_errors_name_the_leaf_and_both_specs():
    program = ad.stage(lambda d: d["w"] * 2, {"w": np.zeros((2, 3))})
    with pytest.raises(ValueError) as info:
        program({"w": np.zeros((3, 2))})
    message = str(info.value)
    assert "['w']" in message and "float64[2,3]" in message and "(3, 2)" in message


def test_keyword_set_is_part_of_the_contract():
    program = ad.stage(lambda x, *, s: x * s, SAMPLE, kw_specs={"s": ad.ArraySpec((), "float64")})
    with pytest.raises(TypeError, match="missing"):
        program(SAMPLE)
    with pytest.raises(TypeError, match="unexpected"):
        program(SAMPLE, s=np.asarray(1.0), t=1)


def test_optimizer_merges_repeated_computations_so_outputs_may_share_storage():
    program = ad.stage(lambda x: (np.sin(x) + 1, np.sin(x) + 1), SAMPLE)
    a, b = program(SAMPLE)
    assert a is b
    np.testing.assert_allclose(a, np.sin(SAMPLE) + 1)
    c = a.copy()  # copy an output before writing to it in place
    c[0] = 7.0
    assert b[0] != 7.0


# --- declare a signature without example data ----------------------------------------------------

def _transform(x, *, scale, center):
    if center:
        x = x - np.mean(x)
    return scale * x


def test_specs_and_kw_specs_with_a_static_branch():
    program = ad.stage(_transform, specs=(ad.ArraySpec((4,), "float64"),),
                       kw_specs={"scale": ad.ArraySpec((), "float64"),
                                 "center": ad.StaticSpec(True)})
    values = np.array([1.0, 2.0, 4.0, 5.0])
    np.testing.assert_allclose(program(values, scale=np.asarray(2.0), center=True),
                               2.0 * (values - values.mean()))
    with pytest.raises(TypeError, match="static"):
        program(values, scale=np.asarray(2.0), center=False)


def test_decorator_form_replaces_the_function_with_a_program():
    @ad.stage(specs=(ad.ArraySpec((2,), "float32"),), kw_specs={"k": ad.ArraySpec((), "float32")})
    def scale(x, *, k):
        return x * k

    assert isinstance(scale, ad.StagedProgram)
    out = scale(np.array([1.0, 2.0], np.float32), k=np.asarray(2.0, np.float32))
    assert out.dtype == np.float32 and out.tolist() == [2.0, 4.0]


def test_static_spec_snapshots_its_value():
    options = [1, 2]
    spec = ad.StaticSpec(options)
    options.append(3)
    assert spec.value == [1, 2]
    program = ad.stage(lambda x, n: x * len(n), SAMPLE, spec)
    np.testing.assert_allclose(program(SAMPLE, [1, 2]), SAMPLE * 2)


def test_data_dependent_python_branch_fails_naming_the_call_and_np_where():
    def branchy(x):
        if np.sum(x) > 0:
            return x
        return -x

    with pytest.raises(TracingError, match=r"bool\(\).*np\.where"):
        ad.stage(branchy, SAMPLE)


@pytest.mark.parametrize("fn, call", [
    (lambda x: float(x[0]), "float()"),
    (lambda x: x[x > 0], "boolean mask"),
    (lambda x: np.nonzero(x), "nonzero"),
])  # .item() and .tolist() stage as traced scalars (tests/test_detach.py)
def test_calls_that_need_data_fail_while_staging(fn, call):
    with pytest.raises(TracingError, match=call.replace("(", r"\(").replace(")", r"\)")):
        ad.stage(fn, SAMPLE)


def test_shape_queries_work_while_staging():
    program = ad.stage(lambda x: x * x.shape[0] + x.shape[-1] + x.ndim + x.size, SAMPLE)
    np.testing.assert_allclose(program(SAMPLE), SAMPLE * 8 + 8 + 1 + 8)


def _unpack(x):
    a, b = x
    return a + b


def _loop(x):
    total = 0.0
    for v in x:
        total = total + v
    return total


@pytest.mark.parametrize("function, call, instead", [
    (lambda x: x * len(x), "len()", "x.shape[0]"),
    (_loop, "iterating", "range(x.shape[0])"),
    (lambda x: sum(x), "iterating", "vectorized"),
    (lambda x: [v * 2 for v in x], "iterating", "range(x.shape[0])"),
    (lambda x: list(iter(x)), "iterating", "range(x.shape[0])"),
])
def test_len_and_iteration_of_a_staged_value_raise_naming_the_call(function, call, instead):
    with pytest.raises(TracingError, match=re.escape(call)) as info:
        ad.stage(function, SAMPLE)
    assert instead in str(info.value)
    with pytest.raises(TracingError, match="iterating"):
        ad.stage(_unpack, np.ones(2))


def test_len_and_iteration_work_in_dynamic_transforms_and_for_numpy_internals():
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(ad.grad(_loop)(x), np.ones(3))
    np.testing.assert_allclose(ad.grad(lambda v: len(v) * np.sum(v))(x), [3.0, 3.0, 3.0])
    assert ad.grad(_unpack)(np.array([1.0, 2.0])).tolist() == [1.0, 1.0]
    # NumPy's own iteration (np.poly's dispatch, np.stack of rows) is not the user's loop
    np.testing.assert_allclose(ad.stage(lambda v: np.poly(v), x)(x), [1.0, -6.0, 11.0, -6.0])
    np.testing.assert_array_equal(ad.stage(lambda m: np.stack(m), np.eye(2))(np.eye(2)),
                                  np.eye(2))
    # an explicit index loop stages (and unrolls, by the user's choice)
    program = ad.stage(lambda v: sum(v[i] * i for i in range(v.shape[0])), x)
    assert program(x) == 8.0


# --- dtypes are known while staging ---------------------------------------------------------------

def _by_dtype(x):
    return x * 2 if x.dtype == np.float32 else x * 3


@pytest.mark.parametrize("dtype, factor", [(np.float32, 2), (np.float64, 3)])
def test_dtype_selects_the_branch_eager_code_takes(dtype, factor):
    x = np.ones(3, dtype)
    program = ad.stage(_by_dtype, x)
    out = program(x)
    assert out.dtype == dtype
    np.testing.assert_allclose(out, _by_dtype(x))
    assert factor * 1.0 == out[0]


def test_dtype_is_the_numpy_dtype_object_with_specs_alone():
    seen = []

    def f(x):
        seen.append(x.dtype)
        y = x.astype(np.float32)
        seen.append(y.dtype)
        return y

    ad.stage(f, specs=(ad.ArraySpec((2,), "float64"),))
    assert seen == [np.dtype(np.float64), np.dtype(np.float32)]
    assert all(isinstance(d, np.dtype) for d in seen)


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "float16", "float32", "float64",
                                   "complex64", "complex128"])
def test_every_staged_dtype_is_accepted(dtype):
    x = np.ones(3, dtype)
    program = ad.stage(lambda a: a, x)
    assert program(x).dtype == dtype


@pytest.mark.parametrize("value, name", [
    (np.array([1, None], dtype=object), "object"),
    (np.array([b"a"]), "S1"),
    (np.array(["a"]), "U1"),
    (np.ones(2, np.longdouble), "float128"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "datetime64"),
])
def test_unsupported_dtypes_raise_type_error_naming_them(value, name):
    with pytest.raises(TypeError, match=name):
        ad.stage(lambda a: a, value)


def test_unsupported_dtype_in_a_spec_raises_type_error():
    with pytest.raises(TypeError, match="float128"):
        ad.ArraySpec((2,), np.longdouble)


# --- weak Python scalars (NEP 50) -----------------------------------------------------------------

def test_python_scalar_inputs_stay_weak():
    x = np.ones(2, np.float32)
    program = ad.stage(lambda a, s: a * s, x, 2.0)
    assert program.signature[0][1] == ad.ArraySpec((), "float64", weak=True)
    out = program(x, 3.0)
    assert out.dtype == np.float32 and out.tolist() == [3.0, 3.0]


def test_outputs_computed_only_from_weak_inputs_are_python_scalars():
    program = ad.stage(lambda s: s * 2 + 1, 2.0)
    out = program(3.0)
    assert type(out) is float and out == 7.0


# --- spec 001: every Raises of stage --------------------------------------------------------

def test_stage_needs_examples_or_specs():
    with pytest.raises(TypeError):
        ad.stage(lambda x: x)


def test_stage_refuses_examples_and_specs_together():
    with pytest.raises(TypeError):
        ad.stage(lambda x: x, np.ones(2), specs=(ad.ArraySpec((2,), "float64"),))


def test_stage_refuses_an_example_that_is_not_array_like():
    with pytest.raises(TypeError, match="StaticSpec"):
        ad.stage(lambda x: x, object())


def test_stage_refuses_a_spec_tree_with_other_leaves():
    with pytest.raises(TypeError, match="ArraySpec or a StaticSpec"):
        ad.stage(lambda x: x, specs=(np.ones(2),))


def test_stage_refuses_an_unsupported_revision():
    with pytest.raises(ValueError, match="1999.01"):
        ad.stage(lambda x: x, np.ones(2), array_api_version="1999.01")


def test_stage_refuses_a_revision_the_provider_does_not_serve():
    newest = ad.staging.SUPPORTED_API_VERSIONS[-1]
    if newest <= np.__array_api_version__:
        pytest.skip("NumPy serves every supported revision")
    with pytest.raises(TypeError, match=newest):
        ad.stage(lambda x: x, np.ones(2), array_api_version=newest)


def test_stage_reports_incompatible_shapes_as_value_error():
    with pytest.raises(ValueError, match="broadcast"):
        ad.stage(lambda x, y: x + y, np.ones(2), np.ones(3))


def test_revision_defaults():
    assert ad.stage(lambda x: x, np.ones(2)).array_api_version == np.__array_api_version__
    by_spec = ad.stage(lambda x: x, specs=(ad.ArraySpec((2,), "float64"),))
    assert by_spec.array_api_version in ad.staging.SUPPORTED_API_VERSIONS
    explicit = ad.stage(lambda x: x, np.ones(2), array_api_version="2022.12")  # NumPy 2.0's
    assert explicit.array_api_version == "2022.12"


# --- ambient randomness ---------------------------------------------------------------------------

@pytest.mark.parametrize("draw", [
    lambda x: x + np.random.normal(size=x.shape),
    lambda x: x + np.random.rand(*x.shape),
    lambda x: x + np.random.default_rng(0).normal(size=x.shape),
])
def test_ambient_randomness_fails_and_leaves_numpy_random_unchanged(draw):
    before = {name: getattr(np.random, name) for name in ("normal", "rand", "default_rng")}
    with pytest.raises(AmbientRandomnessError) as info:
        ad.stage(draw, SAMPLE)
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, TracingError)
    assert {name: getattr(np.random, name) for name in before} == before
    assert np.random.default_rng(0).normal() == np.random.default_rng(0).normal()


def test_other_threads_draw_random_numbers_while_one_stages():
    entered, release, drawn = threading.Event(), threading.Event(), []

    def slow(x):
        entered.set()
        release.wait(5)
        return x

    worker = threading.Thread(target=lambda: ad.stage(slow, SAMPLE))
    worker.start()
    entered.wait(5)
    drawn.append(np.random.default_rng(1).normal())  # another thread is staging right now
    release.set()
    worker.join(5)
    assert np.isfinite(drawn[0])


# --- mutation, capture, nesting -------------------------------------------------------------

def test_mutating_an_input_while_staging_raises():
    def write(x):
        x[0] = 1.0
        return x

    with pytest.raises(MutationError):
        ad.stage(write, SAMPLE)


def test_owned_local_copies_can_be_updated():
    def update(x):
        y = x.copy()
        y[0] = 5.0
        y *= 3.0
        return y

    expected = SAMPLE.copy()
    expected[0] = 5.0
    np.testing.assert_allclose(ad.stage(update, SAMPLE)(SAMPLE), expected * 3.0)


def test_captured_arrays_are_snapshotted_and_returned_read_only():
    table = np.arange(8.0)
    program = ad.stage(lambda x: (x + table, table), SAMPLE)
    table[0] = 100.0
    total, captured = program(SAMPLE)
    np.testing.assert_allclose(total, SAMPLE + np.arange(8.0))
    assert captured[0] == 0.0
    assert not captured.flags.writeable
    with pytest.raises(ValueError):
        captured[0] = 1.0
    assert program.constants[0].origin == "captured"


def test_a_closure_over_an_outer_tracer_fails_with_tracing_error():
    def outer(a):
        return np.sum(ad.stage(lambda y: y * a, SAMPLE)(SAMPLE))

    with pytest.raises(TracingError, match="another transform"):
        ad.grad(outer)(SAMPLE)


def test_program_inside_a_dynamic_transform_differentiates():
    program = ad.stage(lambda y: np.sin(y) * 2, SAMPLE)
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(program(x) * 2))(SAMPLE),
                               4 * np.cos(SAMPLE), rtol=1e-13)
    _, tangent = ad.jvp(program)(SAMPLE, tangents=np.ones(8))
    np.testing.assert_allclose(tangent, 2 * np.cos(SAMPLE), rtol=1e-13)


def test_program_inside_another_staging_is_inlined():
    inner = ad.stage(np.sin, SAMPLE)
    outer = ad.stage(lambda x: inner(x) + 1, SAMPLE)
    np.testing.assert_allclose(outer(SAMPLE), np.sin(SAMPLE) + 1)
    assert [n.op.name for n in outer.graph.nodes] == ["sin", "add"]


# --- the program object -------------------------------------------------------------------------

def test_program_is_immutable():
    program = ad.stage(loss, SAMPLE)
    with pytest.raises(AttributeError):
        program.signature = None
    with pytest.raises(AttributeError):
        program._plan = None


def test_a_program_is_planned_on_its_first_call():
    # a program that is only differentiated (grad of a stage) never pays for its own plan
    program = ad.stage(loss, SAMPLE)
    assert program._plan is None
    gradient = ad.grad(program)
    assert program._plan is None
    np.testing.assert_array_equal(program(SAMPLE), ad.stage(loss, SAMPLE)(SAMPLE))
    assert program._plan is not None and gradient(SAMPLE).shape == SAMPLE.shape


def test_program_describes_itself():
    program = ad.stage(loss, SAMPLE)
    assert program.signature == ((ad.ArraySpec((8,), "float64"),), {})
    assert program.compile_seconds > 0
    assert program.optimization.nodes_after <= program.optimization.nodes_before
    assert "loss" in repr(program) and "float64" in repr(program)
    listing = str(program)
    assert "= sin(%0)  float64[8]" in listing and "reduce_sum" in listing


def test_array_spec_dtype_compares_equal_to_its_name():
    spec = ad.ArraySpec((4,), "float64")
    assert spec.dtype == "float64" and spec.shape == (4,)
    with pytest.raises(ValueError):
        ad.ArraySpec((2,), "float64", weak=True)


# --- devices and other providers --------------------------------------------------------------

def test_device_is_part_of_the_contract():
    program = ad.stage(lambda x: x * 2, specs=(ad.ArraySpec((2,), "float64", device="cpu"),))
    np.testing.assert_array_equal(program(np.ones(2)), [2.0, 2.0])
    other = ad.stage(lambda x: x * 2, specs=(ad.ArraySpec((2,), "float64", device="gpu:1"),))
    with pytest.raises(ValueError, match="device"):
        other(np.ones(2))


def test_staging_from_another_providers_examples_presents_its_dtypes():
    strict = pytest.importorskip("array_api_strict")
    x = strict.asarray([1.0, 2.0], dtype=strict.float32)
    seen = []

    def f(v):
        xp = v.__array_namespace__()
        seen.append(v.dtype)
        return v * 2 if v.dtype == xp.float32 else v * 3

    program = ad.stage(f, x)
    assert seen == [strict.float32]
    out = program(x)
    assert type(out) is type(x) and out.dtype == strict.float32
    np.testing.assert_array_equal(np.asarray(out), [2.0, 4.0])
    with pytest.raises(TypeError):  # NumPy's own TypeError for a foreign dtype object
        ad.stage(lambda v: np.zeros(2, dtype=v.dtype), x)


def test_captured_arrays_are_fresh_copies_on_providers_without_read_only_arrays():
    strict = pytest.importorskip("array_api_strict")
    table = strict.asarray([1.0, 2.0])
    program = ad.stage(lambda v: (v + table, table), strict.asarray([0.0, 0.0]))
    _, first = program(strict.asarray([0.0, 0.0]))
    _, second = program(strict.asarray([0.0, 0.0]))
    assert type(first) is type(table) and first is not second
    np.testing.assert_array_equal(np.asarray(first), [1.0, 2.0])


MODULE_RNG = np.random.default_rng(7)


def test_generators_named_by_the_function_are_caught_and_rewound():
    closure_rng = np.random.default_rng(3)
    for draw, rng in ((lambda x: x + closure_rng.normal(size=x.shape), closure_rng),
                      (lambda x: x + MODULE_RNG.normal(size=x.shape), MODULE_RNG)):
        before = rng.bit_generator.state
        with pytest.raises(AmbientRandomnessError, match="(?i)rng"):
            ad.stage(draw, SAMPLE)
        assert rng.bit_generator.state == before


def test_examples_of_several_providers_are_a_type_error():
    strict = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError, match="several array providers"):
        ad.stage(lambda a, b: a, np.ones(2), strict.ones(2))


def test_keyword_and_weak_calls_take_the_flat_fast_path_and_still_check():
    program = ad.stage(lambda a, s, *, k: a * s + k, np.ones(2, np.float32), 2.0,
                       kw_specs={"k": ad.ArraySpec((), "float32")})
    k = np.asarray(1.0, np.float32)
    out = program(np.ones(2, np.float32), 3.0, k=k)
    assert out.dtype == np.float32 and out.tolist() == [4.0, 4.0]
    assert program(np.ones(2, np.float32), 3, k=k).tolist() == [4.0, 4.0]  # an int fits
    with pytest.raises(ValueError, match="Python float"):
        program(np.ones(2, np.float32), True, k=k)
    with pytest.raises(ValueError, match="float32"):
        program(np.ones(2, np.float32), 3.0, k=np.asarray(1.0))


def test_a_staged_value_used_after_staging_is_an_escaped_tracer():
    leaked = []

    def leak(x):
        leaked.append(x)
        return x * 2

    ad.stage(leak, SAMPLE)
    with pytest.raises(ad.EscapedTracerError):
        leaked[0] + 1

"""Providers: which library owns a value, one provider per computation, the revisions each
serves, and the providers beyond NumPy (array-api-strict devices, PyTorch, CuPy)."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad
from advect.array_api import (
    REVISIONS,
    check_revision,
    namespace_for,
    newest_revision,
    provider_revisions,
)
from advect.providers import namespace_of, provider_of

strict = pytest.importorskip("array_api_strict")


def _loss(x):
    xp = x.__array_namespace__()
    y = xp.linalg.matmul(xp.reshape(x, (2, 2)), xp.reshape(x, (2, 2)))
    # NumPy 2.0 serves revision 2022.12, which has no cumulative_sum
    scanned = xp.cumulative_sum(x) if np.__array_api_version__ >= "2023.12" else x
    return xp.sum(xp.sin(y) ** 2) + xp.linalg.vector_norm(x) + xp.max(scanned)


def _expected_grad(x):
    from advect.testing import check_grads

    check_grads(_loss, [x], order=1)
    return ad.grad(_loss)(x)


# --- one provider per computation ----------------------------------------------------------

def test_namespace_of_finds_the_provider_past_python_scalars():
    assert namespace_of((2.0, strict.asarray(1.0))) is strict
    assert namespace_of((2.0, 3)) is np


def test_mixing_providers_in_one_operation_is_a_type_error():
    with pytest.raises(TypeError, match="array_api_strict and numpy"):
        namespace_of((strict.asarray([1.0]), np.ones(1)))

    def f(x):
        xp = x.__array_namespace__()
        return xp.sum(xp.multiply(x, strict.asarray([1.0, 2.0])))

    with pytest.raises(TypeError, match="two providers"):
        ad.grad(f)(np.ones(2))


def test_provider_of_a_tracer_is_the_provider_of_its_value():
    seen = {}

    def f(x):
        seen["xp"] = provider_of(x)
        return x

    ad.jvp(f)(strict.asarray(1.0), tangents=strict.asarray(1.0))
    assert seen["xp"] is strict
    ad.jvp(ad.grad(lambda x: f(x) * x))(np.asarray(1.0), tangents=np.asarray(1.0))
    assert seen["xp"] is np


# --- revisions -------------------------------------------------------------------------------

def test_providers_serve_the_revisions_up_to_the_one_they_declare():
    assert provider_revisions(strict) == REVISIONS[
        : REVISIONS.index(strict.__array_api_version__) + 1]
    assert provider_revisions(np) == tuple(r for r in REVISIONS if r <= np.__array_api_version__)
    assert provider_revisions(object()) == ()


def test_newest_revision_is_the_newest_every_provider_serves():
    assert newest_revision() == REVISIONS[-1]
    assert newest_revision((strict,)) == strict.__array_api_version__
    assert newest_revision((strict, np)) == min(strict.__array_api_version__,
                                                np.__array_api_version__)
    with pytest.raises(TypeError, match="no common Array API revision"):
        newest_revision((object(),))


def test_an_explicit_revision_must_be_served_by_advect_and_every_provider():
    assert check_revision("2022.12", (np, strict)) == "2022.12"  # NumPy 2.0 serves 2022.12
    with pytest.raises(ValueError, match="not supported by Advect"):
        check_revision("2021.12")
    if np.__array_api_version__ < REVISIONS[-1]:
        with pytest.raises(ValueError, match="not served by numpy"):
            check_revision(REVISIONS[-1], (np,))


def test_namespaces_are_cached_per_provider_and_revision():
    seen = []

    def f(x):
        seen.append((namespace_for(x), namespace_for(x, "2023.12"), x.__array_namespace__()))
        return x

    ad.jvp(f)(strict.asarray(1.0), tangents=strict.asarray(1.0))
    ad.jvp(f)(strict.asarray(2.0), tangents=strict.asarray(1.0))
    (a, b, c), (d, e, _) = seen
    assert a is c is d and b is e and a is not b
    assert a.__array_api_version__ == strict.__array_api_version__
    assert b.__array_api_version__ == "2023.12"


def test_functions_a_revision_lacks_are_absent():
    def f(x):
        old, new = x.__array_namespace__("2022.12"), x.__array_namespace__("2025.12")
        for name in ("clip", "maximum", "cumulative_sum", "__array_namespace_info__"):
            assert not hasattr(old, name) and hasattr(new, name)
        assert not hasattr(old.linalg, "eig") and hasattr(new.linalg, "eig")
        assert hasattr(x.__array_namespace__("2024.12"), "diff")
        assert not hasattr(x.__array_namespace__("2023.12"), "diff")
        return x

    ad.jvp(f)(strict.asarray(1.0), tangents=strict.asarray(1.0))


def test_a_revision_the_provider_does_not_serve_is_a_value_error():
    def f(x):
        return x.__array_namespace__(api_version="2021.12")

    with pytest.raises(ValueError, match="2021.12"):
        ad.jvp(f)(strict.asarray(1.0), tangents=strict.asarray(1.0))


def test_dtypes_and_constants_are_the_providers_own():
    def f(x):
        xp = x.__array_namespace__()
        assert xp.float32 is strict.float32 and xp.int8 is strict.int8
        assert xp.pi == strict.pi and xp.e == strict.e and xp.newaxis is None
        assert np.isnan(xp.nan) and xp.inf == float("inf")
        return x

    ad.jvp(f)(strict.asarray(1.0), tangents=strict.asarray(1.0))


# --- staging against a revision (spec 001) ---------------------------------------------------

def _neutral(x):
    xp = x.__array_namespace__()
    return xp.sum(xp.exp(x) * xp.cos(x))


def test_staging_from_examples_picks_the_newest_revision_of_their_provider():
    x = np.linspace(0.0, 1.0, 4)
    assert ad.stage(_neutral, x).array_api_version == newest_revision((np,))
    assert ad.stage(_neutral, strict.asarray(x)).array_api_version == newest_revision((strict,))


def test_staging_and_the_frontend_support_the_same_revisions():
    from advect.staging.specs import SUPPORTED_API_VERSIONS

    assert tuple(SUPPORTED_API_VERSIONS) == REVISIONS


def test_staging_from_specs_alone_picks_the_newest_revision_advect_supports():
    program = ad.stage(_neutral, specs=(ad.ArraySpec((4,), "float64"),))
    assert program.array_api_version == REVISIONS[-1]


def test_an_explicit_staging_revision_is_stored_and_survives_saving():
    x = strict.asarray(np.linspace(0.0, 1.0, 4))
    program = ad.stage(_neutral, x, array_api_version="2023.12")
    assert program.array_api_version == "2023.12"
    restored = ad.StagedProgram.from_dict(program.to_dict())
    assert restored.array_api_version == "2023.12"
    np.testing.assert_allclose(np.asarray(restored(x)), np.asarray(program(x)))
    assert type(restored(x)) is type(x)


def test_a_neutral_function_staged_from_numpy_replays_on_strict_arrays():
    x = np.linspace(0.0, 1.0, 4)
    program = ad.stage(_neutral, x, array_api_version="2022.12")  # served by every NumPy 2
    out = program(strict.asarray(x))
    assert type(out) is type(strict.asarray(x))
    np.testing.assert_allclose(np.asarray(out), _neutral(x), rtol=1e-12)


def test_a_numpy_function_staged_from_strict_examples_lowers_to_the_numpy_graph():
    def f(x):
        return np.sum(np.sin(x) * x)

    x = np.linspace(0.0, 1.0, 4)
    from_strict = ad.stage(f, strict.asarray(x))
    from_numpy = ad.stage(f, x)
    assert str(from_strict.graph) == str(from_numpy.graph)


def test_an_unsupported_staging_revision_is_a_value_error():
    with pytest.raises(ValueError, match="2021.12"):
        ad.stage(_neutral, np.ones(3), array_api_version="2021.12")


def test_staged_namespace_follows_the_programs_revision():
    seen = {}

    def f(x):
        seen["version"] = x.__array_namespace__().__array_api_version__
        return _neutral(x)

    ad.stage(f, strict.asarray([1.0, 2.0]), array_api_version="2023.12")
    assert seen["version"] == "2023.12"


def test_staged_values_keep_the_providers_array_type_and_dtype():
    x = strict.asarray([0.1, 0.2, 0.3], dtype=strict.float32)
    program = ad.stage(_neutral, x)
    out = program(x)
    assert type(out) is type(x) and out.dtype == strict.float32


def test_staged_gradients_keep_the_providers_array_type():
    x = strict.asarray([0.1, 0.2, 0.3], dtype=strict.float32)
    gradient = ad.grad(ad.stage(_neutral, x))(x)
    assert type(gradient) is type(x) and gradient.dtype == strict.float32
    np.testing.assert_allclose(np.asarray(gradient), np.asarray(ad.grad(_neutral)(x)),
                               rtol=1e-6)


# --- providers beyond NumPy ------------------------------------------------------------------

def test_strict_extra_devices_keep_values_on_their_device():
    x = np.array([0.3, -0.2, 0.5, 0.1])
    expected = _expected_grad(x)
    for name in ("device1", "device2"):
        device = strict.Device(name)
        g = ad.grad(_loss)(strict.asarray(x, device=device))
        assert g.device == device
        np.testing.assert_allclose(np.from_dlpack(g), expected, rtol=1e-12)


def test_strict_float32_only_device_keeps_float32():
    device = strict.Device("no_float64")
    x = strict.asarray([0.3, -0.2, 0.5, 0.1], dtype=strict.float32, device=device)
    g = ad.grad(_loss)(x)
    assert g.device == device and g.dtype == strict.float32


def test_torch_tensors_are_a_provider():
    torch = pytest.importorskip("torch")
    x = np.array([0.3, -0.2, 0.5, 0.1])
    expected = _expected_grad(x)
    t = torch.tensor(x)
    g = ad.grad(_loss)(t)
    assert isinstance(g, torch.Tensor) and g.dtype == torch.float64
    np.testing.assert_allclose(g.numpy(), expected, rtol=1e-12)
    g32 = ad.grad(_loss)(t.to(torch.float32))
    assert g32.dtype == torch.float32
    np.testing.assert_allclose(g32.numpy(), expected, rtol=1e-5)


def test_torch_through_indexing_sorting_and_linalg():
    torch = pytest.importorskip("torch")

    def f(a, b):
        xp = a.__array_namespace__()
        picked = xp.take(b, xp.asarray([0, 0, 2]), axis=0)
        return (xp.sum(xp.linalg.solve(a, b)) + xp.sum(xp.sort(picked, axis=1) ** 2)
                + xp.sum(xp.real(xp.fft.rfft(b, axis=0))))

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 3)) + 3 * np.eye(3), rng.standard_normal((3, 2))
    got = ad.grad(f, (0, 1))(torch.tensor(a), torch.tensor(b))
    want = ad.grad(f, (0, 1))(a, b)
    for g, w in zip(got, want):
        assert isinstance(g, torch.Tensor)
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-12)


def test_cupy_arrays_are_a_provider():
    cupy = pytest.importorskip("cupy")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception:  # noqa: BLE001  (no GPU: CUDA raises its own error types)
        pytest.skip("no GPU")
    x = np.array([0.3, -0.2, 0.5, 0.1])
    g = ad.grad(_loss)(cupy.asarray(x))
    assert isinstance(g, cupy.ndarray)
    np.testing.assert_allclose(cupy.asnumpy(g), _expected_grad(x), rtol=1e-10)


@pytest.mark.parametrize("xp", [np, strict], ids=["numpy", "strict"])
def test_staged_dtypes_are_the_providers_and_can_select_branches(xp):
    def f(x):
        ns = x.__array_namespace__()
        assert x.dtype == ns.float32 and ns.finfo(x).dtype == ns.float32
        assert ns.result_type(x, ns.float32) == ns.float32
        assert ns.isdtype(x.dtype, "real floating")
        if x.dtype == ns.float32:  # known while staging: the branch eager code takes
            return ns.sum(x * 2.0)
        return ns.sum(x)

    x = xp.asarray([1.0, 2.0], dtype=xp.float32)
    program = ad.stage(f, x)
    out = program(x)
    # revision 2022.12 (NumPy 2.0's) sums floating input in the default floating dtype
    old = xp is np and np.__array_api_version__ < "2023.12"
    assert out.dtype == (xp.float64 if old else xp.float32)
    assert float(out) == 6.0


@pytest.mark.parametrize("revision", REVISIONS)
def test_each_revisions_namespace_serves_exactly_its_functions(revision):
    from advect.array_api._revisions import EXTENSIONS, names

    def f(x):
        ns = x.__array_namespace__(api_version=revision)
        newest = x.__array_namespace__(api_version=REVISIONS[-1])
        for ext in ("", *EXTENSIONS):
            here, every = (ns, newest) if not ext else (getattr(ns, ext), getattr(newest, ext))
            expected = set(names(revision, ext))
            assert {n for n in names(REVISIONS[-1], ext) if hasattr(here, n)} == expected
            assert all(callable(getattr(here, n)) for n in expected)
            assert expected <= {n for n in dir(every) if not n.startswith("_")} | {
                "__array_namespace_info__"}
        return x

    ad.jvp(f)(strict.asarray(1.0), tangents=strict.asarray(1.0))


NUMPY_AUTHORED = {
    "repeat": lambda x: np.sum(np.repeat(x, 2) ** 2),
    "take": lambda x: np.sum(np.take(x, [0, 0]) * x[1]),
    "delete": lambda x: np.sum(np.delete(x, 1) ** 2),
    "tile": lambda x: np.sum(np.tile(x, 2) ** 2),
    "sort": lambda x: np.sum(np.sort(x) * x),
    "pad": lambda x: np.sum(np.pad(x, 1) ** 2),
    "cumprod": lambda x: np.sum(np.cumprod(x)),
    "trace of outer": lambda x: np.trace(np.outer(x, x)),
    "diag": lambda x: np.sum(np.diag(x) ** 2) + np.sum(np.diag(np.outer(x, x), 1)),
    "tril": lambda x: np.sum(np.tril(np.outer(x, x)) + np.triu(np.outer(x, x), 1) ** 2),
    "where and mean": lambda x: np.mean(np.where(x > 1.5, x, 0.0) ** 2),
    "norm and fft": lambda x: np.linalg.norm(x) + np.sum(np.abs(np.fft.rfft(x))),
}


@pytest.mark.parametrize("name", NUMPY_AUTHORED)
def test_numpy_authored_functions_differentiate_strict_arrays(name):
    f = NUMPY_AUTHORED[name]
    x = np.array([1.0, 3.0, 2.0])
    g = ad.grad(f)(strict.asarray(x))
    assert type(g) is type(strict.asarray(x))
    np.testing.assert_allclose(np.asarray(g), ad.grad(f)(x), rtol=1e-12)


@pytest.mark.skipif(np.__array_api_version__ >= REVISIONS[-1], reason="NumPy serves them all")
def test_staging_at_a_revision_the_examples_provider_lacks_is_a_type_error():
    # spec 001: "TypeError - if the concrete array examples cannot use one common provider at
    # the selected Array API revision"
    with pytest.raises(TypeError, match=REVISIONS[-1]):
        ad.stage(_neutral, np.ones(3), array_api_version=REVISIONS[-1])


@pytest.mark.parametrize("revision", ["2022.12", "2023.12"])
def test_strict_at_an_older_revision_differentiates_and_stages(revision):
    # before 2024.12 element-wise functions refuse Python scalars and lack maximum, reciprocal,
    # ...: the provider namespace lifts scalars and fills those in
    def loss(x):
        xp = x.__array_namespace__()
        return (xp.sum(xp.log(x) ** 2) + xp.max(x) * 2.0 + xp.sum(xp.where(x > 0.2, x, 0.0))
                + xp.sum(2.0 ** x) + xp.mean(xp.take(x, xp.asarray([1, 1]))))

    x = np.array([0.1, 0.5, 0.3])
    with strict.ArrayAPIStrictFlags(api_version=revision):
        assert provider_revisions(strict)[-1] == revision
        g = ad.grad(loss)(strict.asarray(x))
        np.testing.assert_allclose(np.asarray(g), ad.grad(loss)(x), rtol=1e-12)
        g32 = ad.grad(loss)(strict.asarray(x, dtype=strict.float32))
        assert g32.dtype == strict.float32
        program = ad.stage(loss, strict.asarray(x))
        assert program.array_api_version == revision
        np.testing.assert_allclose(np.asarray(ad.grad(program)(strict.asarray(x))), g,
                                   rtol=1e-12)

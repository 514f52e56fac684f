"""Regression rows for silent wrong answers found by probing in the 2026-12-02 session (the
helpers' own finds have their files: test_probe_linalg.py, test_view_regressions.py, ...)."""

import numpy as np
import pytest

import advect as ad

X = np.array([-0.0, 1.0, -2.5])
Z = np.array([complex(-0.0, -0.0), complex(-1.0, -0.0), 1j])


@pytest.mark.parametrize("f", [
    lambda x: x + 0, lambda x: x + 0.0, lambda x: 0.0 + x, lambda x: x - (-0.0),
    lambda x: x + -0.0, lambda x: x - 0.0, lambda x: x - 0, lambda x: x * 1,
], ids=["x+0", "x+0.0", "0.0+x", "x-(-0.0)", "x+-0.0", "x-0.0", "x-0", "x*1"])
def test_staged_identities_keep_the_sign_of_zero(f):
    # x + 0.0 is +0.0 at x = -0.0: only x + -0.0 and x - 0.0 are the identity for floats
    expected = f(X)
    got = ad.stage(f, X)(X)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


@pytest.mark.parametrize("f", [lambda z: z + 0j, lambda z: z - 0j,
                               lambda z: z + complex(-0.0, -0.0)])
def test_staged_complex_identities_keep_the_sign_of_zero(f):
    expected, got = f(Z), ad.stage(f, Z)(Z)
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(expected.real))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(expected.imag))


def test_sqrt_on_the_branch_cut_after_adding_zero():
    z = np.array([complex(-1.0, -0.0)])
    f = lambda z: np.sqrt(z + 0j)  # noqa: E731  NumPy: +0.0 imaginary part, so +1j
    np.testing.assert_array_equal(ad.stage(f, z)(z), f(z))


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="ndarray.reshape takes copy= from NumPy 2.1")
def test_reshape_method_with_copy_true_is_a_new_array():
    def f(x):
        y = x * 1
        r = y.reshape((2, 2), copy=True)
        r[0, 0] = 100.0  # reaches r only
        return np.sum(y) + np.sum(r)

    x = np.arange(4.0)
    assert ad.stage(f, x)(x) == f(x)
    np.testing.assert_array_equal(ad.grad(f)(x), [1.0, 2.0, 2.0, 2.0])


@pytest.mark.parametrize("call", ["jvp", "vjp", "linearize"])
def test_a_numpy_tangent_or_cotangent_for_torch_values_is_refused(call):
    torch = pytest.importorskip("torch")
    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    f = lambda x: x * x  # noqa: E731
    with pytest.raises(TypeError, match="providers"):
        if call == "jvp":
            ad.jvp(f)(x, tangents=np.ones(2))
        elif call == "vjp":
            ad.vjp(f)(x)[1](np.ones(2))
        else:
            ad.linearize(f, x)[1](np.ones(2))
    _, tangent = ad.jvp(f)(x, tangents=torch.ones(2, dtype=torch.float64))
    assert isinstance(tangent, torch.Tensor)


def test_jacobian_of_a_transpose_only_primitive_falls_back_to_reverse_mode():
    # more outputs than inputs picks forward mode, which a primitive without a JVP cannot run
    @ad.primitive(name="tests.probe3.stack_scaled")
    def stack_scaled(x):
        return np.concatenate([x, 2 * x])

    @stack_scaled.def_abstract
    def _(x):
        return ad.ArraySpec((2 * x.spec.shape[0],), x.spec.dtype)

    @stack_scaled.def_transpose
    def _(ct, primals, output):
        n = primals[0].shape[0]
        return (ct[:n] + 2 * ct[n:],)

    np.testing.assert_array_equal(ad.jacobian(stack_scaled)(np.array([1.0, 2.0])),
                                  np.vstack([np.eye(2), 2 * np.eye(2)]))


def test_full_like_with_a_traced_fill_keeps_a_negative_zero():
    x = np.array([1.0, 2.0])
    f = lambda x: np.full_like(x, -x[0] * 0.0)  # noqa: E731
    for lifetime in (lambda f, x: ad.vjp(f)(x)[0], lambda f, x: ad.stage(f, x)(x)):
        np.testing.assert_array_equal(np.signbit(lifetime(f, x)), [True, True])
    g = lambda x: np.sum(np.full_like(x, x[0] * 3) * x)  # noqa: E731
    np.testing.assert_array_equal(ad.grad(g)(x), [12.0, 3.0])


@pytest.mark.parametrize("f", [lambda a: a.astype(np.float32), lambda a: ad.asarray(a * 2),
                               lambda a: ad.array(a.sum()), lambda a: ad.asarray(np.sum(a))],
                         ids=["astype", "asarray", "array", "asarray-of-sum"])
def test_0d_arrays_built_or_cast_stay_arrays_when_staged(f):
    s = np.array(2.0)
    assert type(ad.stage(f, s)(s)) is np.ndarray  # as eager NumPy (a 0-d ndarray)
    assert type(ad.stage(lambda a: np.float64(2.0) * a.sum(), s)(s)) is np.float64


@pytest.mark.parametrize("f", [
    lambda a, b: np.concatenate([a, b], casting="no"),
    lambda a, b: np.concatenate([b, b], dtype=np.int64),
    lambda a, b: np.stack([b, b], dtype=np.int64),
    lambda a, b: np.hstack([a, b], casting="equiv"),
], ids=["concatenate-no", "concatenate-dtype", "stack-dtype", "hstack-equiv"])
def test_joins_refuse_casts_their_casting_rule_refuses(f):
    a, b = np.ones(2, np.float32), np.ones(2)
    with pytest.raises(TypeError):
        f(a, b)
    with pytest.raises(TypeError):
        ad.stage(f, a, b)
    np.testing.assert_array_equal(ad.stage(lambda a, b: np.concatenate([a, b], casting="safe"),
                                           a, b)(a, b), np.concatenate([a, b], casting="safe"))


def test_moveaxis_refuses_repeated_axes():
    x = np.ones((2, 3))
    for source, destination in (([0, 1], [1, 1]), ([0, 0], [0, 1])):
        with pytest.raises(ValueError, match="repeated axis"):
            ad.grad(lambda x, s=source, d=destination: np.sum(np.moveaxis(x, s, d)))(x)


@pytest.mark.parametrize("transform", ["grad", "vjp", "jvp"])
def test_transforms_restore_the_cycle_collector(transform):
    import gc

    def run(f):
        x = np.ones(3)
        if transform == "grad":
            return ad.grad(f)(x)
        if transform == "vjp":
            return ad.vjp(f)(x)[1](1.0)
        return ad.jvp(f)(x, tangents=np.ones(3))

    def collecting(x):
        seen.append(gc.isenabled())  # paused while the transform traces
        return np.sum(x * x)

    def failing(x):
        raise RuntimeError("in the traced function")

    seen: list = []
    assert gc.isenabled()
    run(collecting)
    assert seen == [False] and gc.isenabled()
    with pytest.raises(RuntimeError):
        run(failing)
    assert gc.isenabled()
    gc.disable()
    try:
        run(collecting)
        assert not gc.isenabled()  # a collector the caller turned off stays off
    finally:
        gc.enable()


def test_hessian_diag_refuses_complex_inputs():
    # real unit vectors alone gave d2L/dx2 (+ 1j * d2L/dxdy): silently not the diagonal
    with pytest.raises(ValueError, match="real inputs"):
        ad.hessian_diag(lambda z: np.sum(np.imag(z) ** 2))(np.array([1 + 2j, 3 - 1j]))

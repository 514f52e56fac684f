"""Regressions found by probing the integrations against SciPy, xarray, torch, JAX, autograd
and Dask as a porting user would (second round)."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad


def test_logsumexp_with_a_python_scalar_b_keeps_float32_as_scipy_does():
    sc = pytest.importorskip("scipy.special")
    from advect.scipy import special

    x = np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]], np.float32)
    for kw in ({"b": 2.0}, {"b": 2}, {"b": -1.0, "return_sign": True}, {"b": 0.5, "axis": 1}):
        expected = sc.logsumexp(x, **kw)
        value, tangent = ad.jvp(lambda x, kw=kw: special.logsumexp(x, **kw))(
            x, tangents=np.ones_like(x))
        for got, want in zip(np.atleast_1d(value) if not isinstance(value, tuple) else value,
                             np.atleast_1d(expected) if not isinstance(expected, tuple)
                             else expected):
            assert np.asarray(got).dtype == np.asarray(want).dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=1e-6)
    assert ad.grad(lambda x: special.logsumexp(x, b=2.0))(x).dtype == np.float32


def test_logsumexp_over_an_empty_axis_is_minus_inf_as_scipy_gives():
    sc = pytest.importorskip("scipy.special")
    from advect.scipy import special

    for x, axis in ((np.zeros(0), None), (np.zeros((2, 0)), -1), (np.zeros((2, 0)), 0)):
        value, tangent = ad.jvp(lambda x, axis=axis: special.logsumexp(x, axis=axis))(
            x, tangents=x)
        expected = sc.logsumexp(x, axis=axis)
        np.testing.assert_array_equal(value, expected)
        assert np.shape(tangent) == np.shape(expected)
        assert np.all(np.asarray(tangent) == 0)


@pytest.mark.parametrize("mode", [["nearest", "wrap"], ("mirror", "constant"),
                                  ["reflect", "nearest"]])
def test_gaussian_laplace_with_a_mode_per_axis_matches_scipy(mode):
    nd = pytest.importorskip("scipy.ndimage")
    from advect.scipy import ndimage

    x = np.random.default_rng(0).normal(size=(5, 7))
    expected = nd.gaussian_laplace(x, (1.0, 0.6), mode=mode, cval=0.5)
    value, _ = ad.jvp(lambda x: ndimage.gaussian_laplace(x, (1.0, 0.6), mode=mode, cval=0.5))(
        x, tangents=x)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    staged = ad.stage(lambda x: ndimage.gaussian_laplace(x, (1.0, 0.6), mode=mode, cval=0.5),
                      x)
    np.testing.assert_allclose(staged(x), expected, rtol=1e-12, atol=1e-12)
    # linear in x (cval contributes a constant): the gradient is the adjoint of the filter
    w = np.random.default_rng(1).normal(size=x.shape)
    g = ad.grad(lambda x: np.sum(ndimage.gaussian_laplace(x, (1.0, 0.6), mode=mode) * w))(x)
    d = np.random.default_rng(2).normal(size=x.shape)
    h = 1e-6
    fd = (np.sum(nd.gaussian_laplace(x + h * d, (1.0, 0.6), mode=mode) * w)
          - np.sum(nd.gaussian_laplace(x - h * d, (1.0, 0.6), mode=mode) * w)) / (2 * h)
    np.testing.assert_allclose(np.sum(g * d), fd, rtol=1e-6)


def test_gaussian_laplace_with_modes_on_a_subset_of_axes_matches_scipy():
    nd = pytest.importorskip("scipy.ndimage")
    from advect.scipy import ndimage

    x = np.random.default_rng(3).normal(size=(3, 4, 5))
    kw = {"mode": ["nearest", "wrap"], "axes": (0, 2)}
    expected = nd.gaussian_laplace(x, (1.0, 0.5), **kw)
    value, _ = ad.jvp(lambda x: ndimage.gaussian_laplace(x, (1.0, 0.5), **kw))(x, tangents=x)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)


def test_xarray_jacobian_of_a_labeled_output_is_a_clear_error():
    xr = pytest.importorskip("xarray")
    import advect.xarray  # noqa: F401

    a = xr.DataArray(np.ones((2, 3)), dims=("x", "y"), name="a")
    with pytest.raises(ValueError, match="cannot be labeled with dims"):
        ad.jacobian(lambda a: a.sum("y"))(a)
    with pytest.raises(ValueError, match=r"\.data"):
        ad.hessian(lambda a: (a ** 3).sum().data)(a)
    # a scalar output keeps the gradient labeled, as before
    g = ad.jacobian(lambda a: (a ** 2).sum().data)(a)
    assert isinstance(g, xr.DataArray) and g.dims == ("x", "y") and g.name == "a"
    np.testing.assert_allclose(g.values, 2 * a.values)


def test_torch_forward_mode_ad_through_a_wrapped_function():
    torch = pytest.importorskip("torch")
    fwad = torch.autograd.forward_ad
    from advect.interop.torch import wrap

    f = wrap(lambda x, y: (np.sin(x) * np.sum(y), np.argmax(y), x.astype(np.float32) ** 2))
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64)
    y = torch.tensor([1.0, 4.0, 2.0], dtype=torch.float32)
    for requires_grad in (False, True):
        with fwad.dual_level():
            dual = fwad.make_dual(x.clone().requires_grad_(requires_grad),
                                  torch.ones(3, dtype=torch.float64))
            a, i, b = f(dual, y)
            ta, tb = fwad.unpack_dual(a).tangent, fwad.unpack_dual(b).tangent
            assert ta is not None and tb is not None  # never silently dropped
            torch.testing.assert_close(ta, torch.cos(x) * y.sum().double())
            torch.testing.assert_close(tb, 2 * x.float())
            assert tb.dtype == torch.float32
            assert fwad.unpack_dual(i).tangent is None
    z = torch.tensor([0.5 + 1j, -1.0 + 0.25j], dtype=torch.complex128, requires_grad=True)
    assert torch.autograd.gradcheck(wrap(lambda z: np.exp(z) * np.conj(z)), (z,),
                                    check_forward_ad=True)
    xs = x.clone().requires_grad_()
    assert torch.autograd.gradcheck(wrap(lambda x: np.sin(x) * np.sum(x ** 2)), (xs,),
                                    check_forward_ad=True)


def test_torch_func_jvp_names_the_torch_func_transforms():
    torch = pytest.importorskip("torch")
    from advect.interop.torch import wrap

    x = torch.ones(3, dtype=torch.float64)
    f = wrap(lambda x: np.sum(np.sin(x)))
    with pytest.raises(NotImplementedError, match="torch.func"):
        torch.func.jvp(f, (x,), (torch.ones_like(x),))
    with pytest.raises(NotImplementedError, match="torch.func"):
        torch.func.grad(f)(x)


def test_jax_wrapped_program_called_with_other_shapes_raises_at_trace_time():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from advect.interop.jax import wrap

    program = ad.stage(lambda x: np.sum(np.sin(x)), np.zeros((3, 2), np.float32))
    f = wrap(program)
    with pytest.raises(ValueError, match="got shape"):
        jax.jit(f)(jnp.zeros((2, 2), jnp.float32))
    with pytest.raises(ValueError, match="got shape"):
        f(jnp.zeros((2, 2), jnp.float32))
    with pytest.raises(TypeError, match="keys"):
        wrap(ad.stage(lambda d: d["a"] * 2, {"a": np.zeros(3, np.float32)}))(
            {"b": jnp.zeros(3, jnp.float32)})
    g = jax.jit(jax.grad(f))(jnp.ones((3, 2), jnp.float32))
    np.testing.assert_allclose(np.asarray(g), np.cos(np.ones((3, 2))), rtol=1e-6)


def test_autograd_gradient_with_respect_to_a_container_argument():
    autograd = pytest.importorskip("autograd")
    anp = pytest.importorskip("autograd.numpy")
    from autograd.test_util import check_grads

    from advect.interop.autograd import wrap

    x = np.arange(6.0).reshape(3, 2)
    f = wrap(lambda d: d["a"] * 2 + d["b"][1] ** 2)
    g = autograd.grad(lambda d: anp.sum(f(d)))({"a": x, "b": [x, x * 3]})
    np.testing.assert_allclose(g["a"], 2 * np.ones_like(x))
    np.testing.assert_allclose(g["b"][0], np.zeros_like(x))
    np.testing.assert_allclose(g["b"][1], 6 * x)
    assert isinstance(g["b"], list)
    t = autograd.grad(lambda t: anp.sum(wrap(lambda t: t[0] * t[1])(t)))((x, x + 1))
    assert isinstance(t, tuple)
    np.testing.assert_allclose(t[0], x + 1)
    np.testing.assert_allclose(t[1], x)
    check_grads(lambda d: wrap(lambda d: np.sin(d["a"]) * d["c"][0])(d), modes=["rev"],
                order=2)({"a": x, "c": (x + 1,)})


def test_dask_mean_keeps_integer_parameter_gradients_in_their_dtype():
    da = pytest.importorskip("dask.array")
    from advect.dask import blockwise_value_and_grad

    x = da.from_array(np.arange(12.0).reshape(6, 2), chunks=(4, 2))
    value, (gw, gn) = blockwise_value_and_grad(
        lambda p, xb: np.mean(xb @ p[0]) * p[1], (np.ones(2), np.int64(2)), x, reduce="mean")
    assert gn.dtype == np.int64 and gn == 0
    assert gw.dtype == np.float64
    np.testing.assert_allclose(gw, 2 * np.arange(12.0).reshape(6, 2).mean(axis=0))


def test_staged_function_may_return_a_captured_torch_tensor():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")

    c = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    x = torch.ones(3, dtype=torch.float64)
    program = ad.stage(lambda x: (x * 2, c), x)
    doubled, constant = program(x)
    assert isinstance(constant, torch.Tensor)
    torch.testing.assert_close(constant, c)
    torch.testing.assert_close(doubled, 2 * x)


def test_jax_result_shape_dtypes_of_another_structure_is_an_error_not_a_lost_output():
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from advect.interop.jax import wrap

    f = wrap(lambda x: (np.sum(x), x * 2),
             result_shape_dtypes=jax.ShapeDtypeStruct((), jnp.float32))
    with pytest.raises(Exception, match="returned the structure"):
        jax.block_until_ready(f(jnp.ones(3, jnp.float32)))
    ok = wrap(lambda x: (np.sum(x), x * 2),
              result_shape_dtypes=(jax.ShapeDtypeStruct((), jnp.float32),
                                   jax.ShapeDtypeStruct((3,), jnp.float32)))
    total, doubled = ok(jnp.ones(3, jnp.float32))
    assert float(total) == 3.0 and doubled.shape == (3,)

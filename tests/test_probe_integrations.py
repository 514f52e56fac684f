"""Regressions found by probing the integrations (Array API frontend, xarray, host bridges)
against the real libraries' eager results and central differences, one test per bug."""

import numpy as np
import pytest

import advect as ad
from interop_cases import central_gradient

xs = pytest.importorskip("array_api_strict")


def _xp(x):
    return x.__array_namespace__()


# --- xarray's shift, pad and rolling: xp.pad and xp.lib.stride_tricks.sliding_window_view ------

@pytest.mark.parametrize("name", ["shift", "pad_edge", "pad_reflect", "rolling_mean",
                                  "rolling_center"])
def test_xarray_shift_pad_and_rolling_differentiate_in_both_lifetimes(name):
    # they called xp.pad / xp.lib on the traced namespace, which had neither: AttributeError
    xr = pytest.importorskip("xarray")
    import advect.xarray  # noqa: F401  (registers the containers)

    op = {"shift": lambda d: d.shift(y=1, fill_value=0.5),
          "pad_edge": lambda d: d.pad(y=(1, 2), mode="edge"),
          "pad_reflect": lambda d: d.pad(x=1, mode="reflect"),
          "rolling_mean": lambda d: d.rolling(y=2).mean(),
          "rolling_center": lambda d: d.rolling(y=3, center=True, min_periods=1).sum()}[name]
    data = np.random.default_rng(0).normal(size=(3, 4))
    da = xr.DataArray(data, dims=("x", "y"), coords={"y": [1, 2, 3, 4]})

    def loss(d):
        return (op(d) ** 2).sum().data

    expected = op(da)
    value, pullback = ad.vjp(op)(da)
    pullback.close()
    assert value.dims == expected.dims and value.shape == expected.shape
    np.testing.assert_allclose(np.asarray(value.data), expected.values, equal_nan=True)
    reference = central_gradient(lambda v: loss(da.copy(data=v)), data)
    np.testing.assert_allclose(ad.grad(loss)(da).values, reference, atol=1e-6)
    np.testing.assert_allclose(ad.grad(ad.stage(loss, da))(da).values, reference, atol=1e-6)


def test_array_api_pad_on_strict_arrays_matches_numpy_and_differentiates():
    x = xs.asarray(np.arange(6.0).reshape(2, 3))

    def f(x):
        return _xp(x).pad(x, ((1, 0), (2, 1)), mode="reflect")

    expected = np.pad(np.arange(6.0).reshape(2, 3), ((1, 0), (2, 1)), mode="reflect")
    for out in (ad.vjp(f)(x)[0], ad.stage(f, x)(x)):
        assert type(out) is type(x)
        np.testing.assert_array_equal(np.asarray(out), expected)
    weights = np.linspace(0.5, 1.5, expected.size).reshape(expected.shape)
    grad = ad.grad(lambda x: _xp(x).sum(f(x) * xs.asarray(weights)))(x)
    reference = central_gradient(lambda v: np.sum(np.pad(v, ((1, 0), (2, 1)), mode="reflect")
                                                   * weights), np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(np.asarray(grad), reference, atol=1e-6)


def test_array_api_sliding_window_view_on_strict_arrays():
    x = xs.asarray(np.arange(5.0))

    def f(x):
        return _xp(x).lib.stride_tricks.sliding_window_view(x, 3)

    expected = np.lib.stride_tricks.sliding_window_view(np.arange(5.0), 3)
    np.testing.assert_array_equal(np.asarray(ad.stage(f, x)(x)), expected)
    grad = ad.grad(lambda x: _xp(x).sum(f(x)))(x)
    np.testing.assert_array_equal(np.asarray(grad), [1.0, 2.0, 3.0, 2.0, 1.0])


def test_array_api_pad_modes_a_provider_cannot_build_are_clear_errors():
    x = xs.asarray(np.arange(3.0))
    with pytest.raises(ValueError, match="linear_ramp.*NumPy arrays only"):
        ad.grad(lambda x: _xp(x).sum(_xp(x).pad(x, 1, mode="linear_ramp")))(x)
    from advect.array_api._namespace import namespace

    with pytest.raises(TypeError, match="no pad"):  # untraced: strict has no pad to call
        namespace(xs, "2024.12").pad(x, 1)


# --- meshgrid of arrays on two devices ----------------------------------------------------------

def test_meshgrid_refuses_arrays_on_two_devices_as_the_provider_does():
    # it returned a grid mixing devices, where array-api-strict raises
    a = xs.asarray(np.arange(3.0), device=xs.Device("device1"))
    b = xs.asarray(np.ones(2))
    with pytest.raises(ValueError):
        xs.meshgrid(a, b)
    with pytest.raises(ValueError, match="same device"):
        ad.vjp(lambda a, b: _xp(a).meshgrid(a, b)[0], argnums=(0, 1))(a, b)


# --- where with two Python scalars ---------------------------------------------------------------

def test_where_with_two_python_scalars_follows_the_provider():
    # the standard asks for an array among x1, x2: array-api-strict refuses, we returned one
    x = xs.asarray(np.arange(3.0))
    with pytest.raises(TypeError):
        xs.where(x > 0, 1.0, 2.0)
    with pytest.raises(TypeError):
        ad.grad(lambda x: _xp(x).sum(_xp(x).where(x > 0, 1.0, 2.0) * x))(x)
    # NumPy's where takes them
    grad = ad.grad(lambda x: _xp(x).sum(_xp(x).where(x > 0, 1.0, 2.0) * x))(np.arange(3.0))
    np.testing.assert_array_equal(grad, [2.0, 1.0, 1.0])


# --- host bridges --------------------------------------------------------------------------------

def test_jax_bridge_without_x64_gives_32_bit_results_as_jax_does():
    # 64-bit outputs (an argmax, a float64 constant) made pure_callback raise without x64
    jax = pytest.importorskip("jax")
    from advect.interop.jax import wrap

    enabled = jax.config.jax_enable_x64  # other test modules turn it on for good
    jax.config.update("jax_enable_x64", False)
    try:
        x = jax.numpy.array([0.3, 1.2])
        index = wrap(lambda x: np.argmax(x))(x)
        assert index.dtype == np.int32 and int(index) == 1
        scaled = wrap(lambda x: np.sum(x) * np.ones(2))
        assert scaled(x).dtype == np.float32
        grad = jax.jit(jax.grad(lambda x: scaled(x).sum()))(x)
        assert grad.dtype == np.float32
        np.testing.assert_allclose(grad, [2.0, 2.0])
    finally:
        jax.config.update("jax_enable_x64", enabled)


def test_torch_bridge_names_a_dtype_numpy_lacks():
    torch = pytest.importorskip("torch")
    from advect.interop.torch import wrap

    t = torch.tensor([1.0, 2.0], dtype=torch.bfloat16, requires_grad=True)
    with pytest.raises(TypeError, match="bfloat16 has no NumPy dtype"):
        wrap(lambda a: np.sum(a ** 2))(t)


# --- scipy.special -------------------------------------------------------------------------------

def test_complex_digamma_derivative_is_a_clear_error_in_both_lifetimes():
    # dynamic transforms reached SciPy's zeta, which raised a bare "ufunc '_zeta' not supported"
    scipy_special = pytest.importorskip("scipy.special")
    z = np.complex128(0.4 + 0.3j)

    def loss(z):
        return np.real(scipy_special.digamma(z))

    with pytest.raises(TypeError, match="polygamma takes real arguments only"):
        ad.grad(loss)(z)
    with pytest.raises(TypeError, match="polygamma takes real arguments only"):
        ad.grad(ad.stage(loss, z))(z)


# --- Array API argument checks that returned an answer where the standard raises ---------------

@pytest.mark.parametrize("call", [
    lambda xp, x: xp.moveaxis(x, (0, 1), (2, 2)),       # repeated destination: any order
    lambda xp, x: xp.moveaxis(x, (0, 1), (2,)),         # unequal lengths
    lambda xp, x: xp.take_along_axis(x, xp.asarray([[0]]), axis=0),  # indices of other ndim
    lambda xp, x: xp.take(x, xp.asarray([[0, 1]]), axis=0),          # 2-d indices
    lambda xp, x: xp.diff(x, n=-1),                     # a negative order returned x
], ids=["moveaxis-repeated", "moveaxis-lengths", "take_along_axis-ndim", "take-2d", "diff-n"])
def test_array_api_refuses_what_array_api_strict_refuses(call):
    x = xs.asarray(np.arange(24.0).reshape(2, 3, 4))
    with pytest.raises(ValueError):
        call(xs, x)
    with pytest.raises(ValueError):
        ad.vjp(lambda x: call(_xp(x), x))(x)
    with pytest.raises(ValueError):
        ad.stage(lambda x: call(_xp(x), x), x)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.diff(x, axis=0, n=3),  # along a length-2 axis: raised IndexError
    lambda xp, x: xp.meshgrid(x[0, ...], x[1, 0, ...])[1],  # a 2-d input: failed to reshape
], ids=["diff-beyond-length", "meshgrid-2d"])
def test_array_api_diff_beyond_the_length_and_meshgrid_of_nd_inputs_match_the_provider(call):
    x = xs.asarray(np.arange(24.0).reshape(2, 3, 4))
    expected = call(xs, x)
    for out in (ad.vjp(lambda x: call(_xp(x), x))(x)[0],
                ad.stage(lambda x: call(_xp(x), x), x)(x)):
        assert out.shape == expected.shape
        np.testing.assert_array_equal(np.asarray(out), np.asarray(expected))


@pytest.mark.parametrize("build, expected", [
    (lambda xp, x: xp.asarray([xp.argmax(x), 2.5]), [1.0, 2.5]),  # was [1, 2]: truncated
    (lambda xp, x: xp.asarray([x[0], 1j]), [0.5, 1j]),            # the imaginary part was lost
], ids=["int-tracer-and-float", "float-tracer-and-complex"])
def test_array_api_asarray_of_tracers_and_scalars_promotes_before_filling(build, expected):
    x = np.array([0.5, 2.0, 1.0])
    expected = np.asarray(expected)
    for out in (ad.vjp(lambda x: build(_xp(x), x))(x)[0],
                ad.stage(lambda x: build(_xp(x), x), x)(x)):
        assert out.dtype == expected.dtype
        np.testing.assert_array_equal(out, expected)


def test_array_api_isin_compares_a_python_scalar_as_itself():
    # the scalar was filled into the array's dtype: isin(ints, 2.5) read 2.5 as 2 (True for 2)
    x = xs.asarray(np.array([0.5, 2.0, 1.0]))

    def f(x, scalar):
        xp = _xp(x)
        return xp.isin(xp.astype(x, xp.int64), scalar)

    with pytest.raises(TypeError):  # array-api-strict refuses a float among integers
        xs.isin(xs.astype(x, xs.int64), 2.5)
    with pytest.raises(TypeError):
        ad.vjp(lambda x: f(x, 2.5))(x)
    out = ad.stage(lambda x: f(x, 2), x)(x)
    np.testing.assert_array_equal(np.asarray(out), [False, True, False])


@pytest.mark.parametrize("name", ["logsumexp", "log_softmax"])
def test_special_reductions_take_traced_arrays_of_other_providers(name):
    # they read x.dtype.kind, which array-api-strict's (and PyTorch's) dtypes lack
    pytest.importorskip("scipy")
    from advect.scipy import special

    fn = getattr(special, name)
    data = np.array([0.1, 0.5, 2.0])

    def loss(x):
        return fn(x, axis=0) if name == "logsumexp" else fn(x, axis=0)[1]

    expected = ad.grad(loss)(data)
    x = xs.asarray(data)
    for grad in (ad.grad(loss)(x), ad.grad(ad.stage(loss, x))(x)):
        assert type(grad) is type(x)
        np.testing.assert_allclose(np.asarray(grad), expected)

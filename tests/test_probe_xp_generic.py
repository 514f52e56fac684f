"""Provider-generic (Array API style) programs on NumPy, array-api-strict and torch tensors."""

import warnings

import numpy as np
import numpy.testing as npt
import pytest

import advect as ad

xps = pytest.importorskip("array_api_strict")


def _providers():
    rows = [pytest.param(np.asarray, id="numpy"), pytest.param(xps.asarray, id="strict")]
    try:
        import torch
    except ImportError:
        return rows
    return [*rows, pytest.param(lambda a: torch.asarray(np.array(a)), id="torch")]


def _np(a):
    return a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)


def _module(a):
    return type(a).__module__.split(".")[0]


def softmax_weights(x):
    xp = x.__array_namespace__() if hasattr(x, "__array_namespace__") else _compat(x)
    m = xp.max(x, axis=-1, keepdims=True)
    e = xp.exp(x - m)
    w = xp.linspace(0.0, 1.0, x.shape[-1], dtype=x.dtype, device=x.device)
    return xp.sum(e / xp.sum(e, axis=-1, keepdims=True) * w)


def _compat(x):
    return pytest.importorskip("array_api_compat").array_namespace(x)


@pytest.mark.parametrize("make", _providers())
def test_device_of_a_staged_value_under_grad_is_the_providers(make):
    # x.device inside ad.stage(ad.grad(f)) was NumPy's "cpu" for every provider, so
    # xp.linspace(..., device=x.device) failed on array-api-strict
    x0 = np.random.default_rng(0).normal(size=(3, 4))
    x = make(x0)
    g = ad.grad(softmax_weights)(x)
    staged = ad.stage(ad.grad(softmax_weights), x)(x)
    assert _module(staged) == _module(x) and str(staged.dtype) == str(x.dtype)
    npt.assert_allclose(_np(staged), _np(g), rtol=1e-12)
    eps, fd = 1e-6, np.zeros_like(x0)
    for i in np.ndindex(x0.shape):
        e = np.zeros_like(x0)
        e[i] = eps
        fd[i] = (float(_np(softmax_weights(make(x0 + e))))
                 - float(_np(softmax_weights(make(x0 - e))))) / (2 * eps)
    npt.assert_allclose(_np(g), fd, atol=1e-8)
    x32 = make(x0.astype(np.float32))
    assert str(ad.stage(ad.grad(softmax_weights), x32)(x32).dtype).endswith("float32")


def test_staged_devices_match_inside_jvp_on_strict():
    x = xps.asarray([1.0, 2.0])
    seen = []

    def f(x):
        seen.append(x.device)
        return x.__array_namespace__().sum(x * x)

    ad.stage(lambda x: ad.jvp(f)(x, tangents=x)[1], x)
    assert seen == [x.device]


def test_staged_torch_constants_raise_no_warning():
    torch = pytest.importorskip("torch")
    x = torch.ones(3, 4, dtype=torch.float64)
    program = ad.stage(ad.grad(softmax_weights), x)   # a captured linspace constant
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # torch warned of a non-writable array
        out = program(x)
        again = program(x)
    npt.assert_array_equal(out.numpy(), again.numpy())


def _n(a):
    return a.__array_namespace__()


REFUSED_BY_STRICT = {
    "asarray_of_0d_arrays": lambda x: _n(x).asarray([x[0], x[1]]),
    "tile_float_repetitions": lambda x: _n(x).tile(x, (2.0,)),
    "full_like_array_fill": lambda x: _n(x).full_like(x, x[0]),
}


@pytest.mark.parametrize("name", sorted(REFUSED_BY_STRICT))
def test_strict_refusals_hold_in_every_lifetime(name):
    f = REFUSED_BY_STRICT[name]
    x = xps.asarray([0.5, 1.5, 2.5, 3.5], dtype=xps.float64)
    with pytest.raises(Exception) as eager:
        f(x)
    with pytest.raises(eager.type):
        ad.jvp(f)(x, tangents=x)
    with pytest.raises(eager.type):
        ad.grad(lambda x: _n(x).sum(f(x)))(x)
    with pytest.raises(eager.type):
        ad.stage(f, x)


def test_what_strict_accepts_stays_differentiable():
    x = xps.asarray([0.5, 1.5, 2.5], dtype=xps.float64)

    def f(x):
        xp = _n(x)
        items = xp.asarray([1.0, 2.0])                # Python scalars in a list: accepted
        return xp.sum(xp.tile(x, (2,)) ** 2) + xp.sum(xp.full_like(x, 2.0) * x) + xp.sum(items)

    g = ad.grad(f)(x)
    npt.assert_allclose(np.asarray(g), 4 * np.asarray(x) + 2)
    npt.assert_allclose(np.asarray(ad.stage(ad.grad(f), x)(x)), np.asarray(g))


def test_torch_takes_a_list_of_0d_tensors_and_a_tensor_fill():
    torch = pytest.importorskip("torch")
    x = torch.asarray([0.5, 1.5, 2.5], dtype=torch.float64)

    def f(x):
        xp = _compat(x)
        return xp.sum(xp.asarray([x[0], x[1]]) ** 2) + xp.sum(xp.full_like(x, x[2]))

    g = ad.grad(f)(x)
    npt.assert_allclose(g.numpy(), [1.0, 3.0, 3.0])
    with pytest.raises(TypeError):
        ad.grad(lambda x: _compat(x).sum(_compat(x).tile(x, (2.0,))))(x)

"""Array API probe (third round): indexing and item assignment on array-api-strict and PyTorch
tracers follow their provider (refusals, and the index types it takes), squeeze's refusal on
PyTorch, and derivatives of standard functions against central differences and
torch.autograd, with the provider's array type and dtype kept."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad

strict = pytest.importorskip("array_api_strict")


def _outcome(call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 (the refusal's class is what is compared)
        return type(e)
    return type(out), str(out.dtype), tuple(out.shape), np.asarray(_host(out)).tolist()


def _host(v):
    if type(v).__module__.startswith("torch"):
        return v.detach().numpy()
    return np.asarray(v)


def _lifetimes(f, x):
    """``f(x)`` traced: forward, reverse (the value of vjp) and staged."""
    return (lambda: ad.jvp(f)(x, tangents=x * 0 + 1)[0], lambda: ad.vjp(f)(x)[0],
            lambda: ad.stage(f, x)(x))


def _same_as_eager(f, x):
    want = _outcome(lambda: f(x))
    for call in _lifetimes(f, x):
        got = _outcome(call)
        if isinstance(want, type):
            assert isinstance(got, type) and issubclass(got, want), (got, want)
        else:
            assert got == want
    return want


# --- x[key] on strict tracers refuses what strict refuses ---------------------------------------

GETITEM = {
    "partial integer index": lambda x: x[0],
    "partial index array": lambda x: x[strict.asarray([0, 1, 1])],
    "slice stop past the axis": lambda x: x[0:10, 0],
    "list index": lambda x: x[[0, 1], 0],
    "NumPy index array": lambda x: x[np.asarray([0, 1]), 1],
    "index array with a slice": lambda x: x[strict.asarray([0, 1]), :],
    "slice with an index array": lambda x: x[1:, strict.asarray([0, 1])],
    "index array with an ellipsis": lambda x: x[..., strict.asarray([0, -1])],
    "mask with a slice": lambda x: x[strict.asarray([True, False]), :],
    "Python bool": lambda x: x[True],
    "float": lambda x: x[0.0, 1],
}
ACCEPTED = {
    "integers": lambda x: x[1, 2],
    "trailing ellipsis": lambda x: x[0, ...],
    "slices": lambda x: x[:, 1:] * 2.0,
    "negative step": lambda x: x[::-1, 1],
    "new axis": lambda x: x[None, 0, 1],
    "index arrays": lambda x: x[strict.asarray([0, 1, 1]), strict.asarray([2, 0, 1])],
    "0-d integer array": lambda x: x[strict.asarray(1), 1],
    "NumPy integer": lambda x: x[np.int64(1), 1],
    "full mask": lambda x: x[strict.asarray([True, False])],
}


def _matrix():
    return strict.asarray([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])


@pytest.mark.parametrize("name", sorted(GETITEM))
def test_getitem_refuses_what_strict_refuses(name):
    assert _same_as_eager(GETITEM[name], _matrix()) is IndexError


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_getitem_strict_accepts_stays_traced(name):
    f = ACCEPTED[name]
    want = _same_as_eager(f, _matrix())
    assert want[0] is type(_matrix())

    def loss(v):
        return v.__array_namespace__().sum(f(v) ** 2)

    base = np.asarray(_matrix())
    fd = np.zeros(6)
    for i in range(6):
        e = np.zeros(6)
        e[i] = 1e-6
        fd[i] = (float(loss(strict.asarray(base + e.reshape(2, 3))))
                 - float(loss(strict.asarray(base - e.reshape(2, 3))))) / 2e-6
    for grad in (ad.grad(loss)(_matrix()), ad.grad(ad.stage(loss, _matrix()))(_matrix())):
        assert type(grad) is type(_matrix()) and grad.dtype == strict.float64
        np.testing.assert_allclose(np.asarray(grad).ravel(), fd, rtol=1e-6, atol=1e-6)


def test_a_strict_verdict_is_per_shape_and_not_per_integer():
    # x[0] is refused on a matrix, allowed on a vector; cached verdicts keep them apart
    vector = strict.asarray([1.0, 2.0, 3.0])
    assert _same_as_eager(lambda v: v[0], vector)[2] == ()
    assert _same_as_eager(lambda v: v[0], _matrix()) is IndexError
    assert _same_as_eager(lambda v: v[2], vector)[3] == 3.0
    assert _same_as_eager(lambda v: v[5], vector) is IndexError  # out of bounds


# --- x[key] = value on strict tracers ------------------------------------------------------------

def _writes(key, value):
    def f(x):
        y = x * 1.0
        y[key] = value
        return y
    return f


SETITEM_REFUSED = {
    "partial index": (0, 7.0),
    "slice past the axis": ((slice(0, 5), 0), 0.0),
    "index arrays": ((strict.asarray([0, 1]), 0), 0.0),
    "a NumPy value": ((slice(None), 0), np.asarray([1.0, 2.0])),
    "an integer value": ((slice(None), 0), strict.asarray([1, 2])),
    "a Python bool": ((Ellipsis, 0), True),
}


@pytest.mark.parametrize("name", sorted(SETITEM_REFUSED))
def test_setitem_refuses_what_strict_refuses(name):
    key, value = SETITEM_REFUSED[name]
    assert isinstance(_same_as_eager(_writes(key, value), _matrix()), type)


def test_setitem_strict_accepts_keeps_gradients():
    x = _matrix()
    for call in _lifetimes(lambda v: _writes((0, 1), 7)(v), x):
        assert np.asarray(call()).tolist() == [[1.0, 7.0, 3.0], [4.0, 5.0, 6.0]]

    def loss(v):
        xp = v.__array_namespace__()
        y = v * 1.0
        y[0, ...] = v[1, ...] ** 2
        return xp.sum(y)

    for grad in (ad.grad(loss)(x), ad.grad(ad.stage(loss, x))(x)):
        assert type(grad) is type(x)
        np.testing.assert_allclose(np.asarray(grad), [[0.0, 0.0, 0.0], [9.0, 11.0, 13.0]])


# --- PyTorch takes list and NumPy index arrays, in every lifetime --------------------------------

torch = pytest.importorskip("torch")
pytest.importorskip("array_api_compat")


def _tensor():
    return torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=torch.float64)


TORCH_INDICES = {
    "list": lambda t: t[[0, 1, 1], 1],
    "NumPy array": lambda t: t[np.asarray([1, 0]), 2],
    "list of lists": lambda t: t[[[0], [1]], [2, 0]],
    "bool list": lambda t: t[[True, False]],
    "partial integer index": lambda t: t[1],
}


@pytest.mark.parametrize("name", sorted(TORCH_INDICES))
def test_torch_tensors_take_the_indices_torch_takes(name):
    f = TORCH_INDICES[name]
    want = _same_as_eager(f, _tensor())
    assert want[0] is torch.Tensor

    def loss(t):
        return (f(t) ** 3).sum()

    leaf = _tensor().requires_grad_(True)
    expected, = torch.autograd.grad(loss(leaf), leaf)
    for grad in (ad.grad(loss)(_tensor()), ad.grad(ad.stage(loss, _tensor()))(_tensor())):
        assert type(grad) is torch.Tensor and grad.dtype == torch.float64
        np.testing.assert_allclose(grad.numpy(), expected.numpy())


def test_torch_refuses_a_negative_step_as_torch_does():
    assert _same_as_eager(lambda t: t[::-1], _tensor()) is ValueError


def test_squeeze_of_a_longer_axis_is_a_value_error_on_torch():
    def f(t):
        return t.__array_namespace__().squeeze(t, axis=0)

    for call in _lifetimes(f, _tensor()):
        with pytest.raises(ValueError, match="squeeze"):
            call()
    with pytest.raises(ValueError):
        np.squeeze(np.ones((2, 3)), axis=0)
    with pytest.raises(ValueError, match="squeeze"):
        ad.vjp(lambda x: np.squeeze(x, axis=0))(np.ones((2, 3)))


# --- derivatives of standard functions: central differences and torch.autograd -----------------

LOSSES = {
    "hypot, logaddexp, copysign, atan2": lambda xp, x: xp.sum(
        xp.hypot(x, 2.0 * x + 1) + xp.logaddexp(x, 1.0 - x) + xp.copysign(x * x, x - 0.5)
        + xp.atan2(x, 1.0 + x * x)),
    "cumulative_sum and cumulative_prod": lambda xp, x: xp.sum(
        xp.cumulative_sum(x, include_initial=True) ** 2)
        + xp.sum(xp.cumulative_prod(xp.reshape(x, (2, 3)), axis=1)),
    "manipulation": lambda xp, x: xp.sum(
        xp.roll(xp.tile(xp.reshape(x, (2, 3)), (2, 1)), 1, axis=0)
        * xp.reshape(xp.arange(12, dtype=x.dtype), (4, 3)))
        + xp.sum(xp.take_along_axis(xp.reshape(x, (2, 3)), xp.asarray([[2, 0], [1, 1]]),
                                    axis=1) ** 2)
        + xp.sum(xp.repeat(xp.flip(x), 2) * xp.arange(12, dtype=x.dtype)),
    "linalg": lambda xp, x: xp.linalg.slogdet(xp.reshape(x, (2, 3)) @ xp.reshape(x, (3, 2))
                                              + 3.0 * xp.eye(2, dtype=x.dtype))[1]
        + xp.linalg.vector_norm(x, ord=3.0),
    "fft": lambda xp, x: xp.sum(xp.abs(xp.fft.rfft(x)) ** 2) + xp.sum(xp.fft.fftshift(x) * x),
}
POINT = np.asarray([0.3, -0.7, 1.2, 0.9, -1.5, 2.1])


def _on(provider, values, dtype):
    values = np.asarray(values, dtype=dtype)
    if provider == "strict":
        return strict.asarray(values)
    return torch.from_numpy(values.copy())


def _eager_ns(x):
    if isinstance(x, torch.Tensor):
        from array_api_compat import torch as txp
        return txp
    return x.__array_namespace__()


@pytest.mark.parametrize("provider", ["strict", "torch"])
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_gradients_match_differences_and_torch_autograd(name, provider):
    fn = LOSSES[name]

    def loss(x):
        return fn(x.__array_namespace__(), x)

    for dtype in ("float64", "float32"):
        x = _on(provider, POINT, dtype)
        grad = ad.grad(loss)(x)
        assert type(grad) is type(x) and str(grad.dtype) == str(x.dtype)
        staged = ad.grad(ad.stage(loss, x))(x)
        assert type(staged) is type(x) and str(staged.dtype) == str(x.dtype)
        rtol = 1e-9 if dtype == "float64" else 2e-5
        np.testing.assert_allclose(_host(staged), _host(grad), rtol=rtol, atol=rtol)
        _, tangent = ad.jvp(loss)(x, tangents=_on(provider, np.ones(6), dtype))
        np.testing.assert_allclose(float(_host(tangent)), _host(grad).sum(), rtol=10 * rtol)
        if dtype == "float64":
            step, fd = 1e-6, np.zeros(6)
            for i in range(6):
                e = np.zeros(6)
                e[i] = step
                xp = _eager_ns(x)
                fd[i] = (float(_host(fn(xp, _on(provider, POINT + e, dtype))))
                         - float(_host(fn(xp, _on(provider, POINT - e, dtype))))) / (2 * step)
            np.testing.assert_allclose(_host(grad), fd, rtol=1e-5, atol=1e-6)
        if provider == "torch":
            from array_api_compat import torch as txp
            leaf = x.clone().requires_grad_(True)
            expected, = torch.autograd.grad(fn(txp, leaf), leaf)
            np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=rtol, atol=rtol)

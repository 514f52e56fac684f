"""numpy.fft on traced arrays: values against NumPy, derivatives to second order in both modes."""

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads


def _real(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _complex(*shape, seed=1):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


F = np.fft
# (name, function, input, keyword arguments)
CASES = [
    ("fft", F.fft, _complex(3, 6), {}),
    ("fft_real_input", F.fft, _real(3, 6), {"axis": 0}),
    ("fft_pad", F.fft, _complex(6), {"n": 9}),
    ("fft_crop", F.fft, _complex(2, 6), {"n": 4, "axis": -1}),
    ("ifft", F.ifft, _complex(5), {}),
    ("fft2", F.fft2, _complex(2, 4, 6), {}),
    ("ifft2_s", F.ifft2, _complex(4, 6), {"s": (5, 3)}),
    ("fftn", F.fftn, _complex(2, 3, 4), {}),
    ("fftn_axes_s", F.fftn, _complex(2, 3, 4), {"s": (5, 2), "axes": (0, 2)}),
    ("ifftn", F.ifftn, _complex(3, 4), {"axes": (1,)}),
    ("rfft_even", F.rfft, _real(3, 8), {}),
    ("rfft_odd", F.rfft, _real(7), {}),
    ("rfft_n", F.rfft, _real(2, 6), {"n": 9, "axis": 1}),
    ("rfft2", F.rfft2, _real(4, 6), {}),
    ("rfftn", F.rfftn, _real(2, 3, 5), {"axes": (0, 2)}),
    ("irfft_even", F.irfft, _complex(3, 5), {}),
    ("irfft_odd_n", F.irfft, _complex(5), {"n": 9}),
    ("irfft_crop", F.irfft, _complex(6), {"n": 6}),
    ("irfft2", F.irfft2, _complex(4, 4), {}),
    ("irfftn_s", F.irfftn, _complex(3, 4), {"s": (3, 7), "axes": (0, 1)}),
    ("hfft", F.hfft, _complex(5), {}),
    ("hfft_n", F.hfft, _complex(2, 4), {"n": 7}),
    ("ihfft", F.ihfft, _real(8), {}),
    ("ihfft_odd", F.ihfft, _real(2, 7), {"axis": 0}),
    ("fftshift", F.fftshift, _real(5, 4), {}),
    ("fftshift_axes", F.fftshift, _complex(5, 4), {"axes": 0}),
    ("ifftshift", F.ifftshift, _real(5, 3), {"axes": (0, 1)}),
]
NORMS = [None, "backward", "ortho", "forward"]
_TAKES_NORM = {name for name, f, *_ in CASES if "shift" not in name}


def _params():
    for name, f, x, kw in CASES:
        for norm in NORMS if name in _TAKES_NORM else [None]:
            kwargs = dict(kw, **({"norm": norm} if norm is not None else {}))
            yield pytest.param(f, x, kwargs, id=f"{name}-{norm or 'default'}")


@pytest.mark.parametrize("f,x,kwargs", list(_params()))
def test_fft_matches_numpy_and_differentiates(f, x, kwargs):
    fun = lambda x: f(x, **kwargs)  # noqa: E731
    expected = f(x, **kwargs)
    value, _ = ad.jvp(fun)(x, tangents=np.zeros_like(x))
    assert value.shape == expected.shape and value.dtype == expected.dtype
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
    check_grads(fun, (x,), order=2)


def test_fft_keeps_single_precision():
    x = _real(8).astype(np.float32)
    value, tangent = ad.jvp(np.fft.rfft)(x, tangents=x)
    assert value.dtype == np.complex64 and tangent.dtype == np.complex64
    assert ad.grad(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2))(x).dtype == np.float32


def test_grad_of_spectral_energy_is_parseval():
    # sum |fft(x)|^2 = n sum |x|^2, so the gradient is 2 n x
    x = _real(10)
    grad = ad.grad(lambda x: np.sum(np.abs(np.fft.fft(x)) ** 2))(x)
    np.testing.assert_allclose(grad, 2 * 10 * x, rtol=1e-12)
    ortho = ad.grad(lambda x: np.sum(np.abs(np.fft.rfft(x, norm="ortho")) ** 2))(x)
    weights = np.ones(6)
    weights[1:-1] = 2  # the interior bins of a half spectrum stand for two frequencies
    energy = lambda x: np.sum(np.abs(np.fft.rfft(x, norm="ortho")) ** 2 * weights)  # noqa: E731
    np.testing.assert_allclose(ad.grad(energy)(x), 2 * x, rtol=1e-12)
    assert ortho.shape == x.shape


def test_fftfreq_with_traced_spacing():
    grad = ad.grad(lambda d: np.sum(np.fft.fftfreq(8, d) ** 2))(0.5)
    freqs = np.fft.fftfreq(8, 1.0)
    np.testing.assert_allclose(grad, -2 * np.sum(freqs ** 2) / 0.5 ** 3, rtol=1e-12)
    grad = ad.grad(lambda d: np.sum(np.fft.rfftfreq(9, d)))(2.0)
    np.testing.assert_allclose(grad, -np.sum(np.fft.rfftfreq(9, 1.0)) / 4.0, rtol=1e-12)


def test_fft_round_trip_is_identity_under_differentiation():
    x = _real(3, 6)
    check_grads(lambda x: np.fft.irfft(np.fft.rfft(x), n=6), (x,), order=2)
    np.testing.assert_allclose(
        ad.grad(lambda x: np.sum(np.fft.irfft2(np.fft.rfft2(x), s=x.shape) * x))(x),
        2 * x, rtol=1e-12)


@pytest.mark.parametrize("call,error", [
    (lambda x: np.fft.fft(x, norm="sideways"), ValueError),
    (lambda x: np.fft.fft(x, n=0), ValueError),
    (lambda x: np.fft.rfft(x * 1j), TypeError),
    (lambda x: np.fft.fft2(x, s=(3,), axes=(0, 1)), ValueError),
    (lambda x: np.fft.fft(x, out=np.zeros(4, complex)), ad.errors.TracingError),
])
def test_fft_bad_arguments_raise(call, error):
    with pytest.raises(error):
        ad.jvp(lambda x: call(x))(_real(4, 4)[0], tangents=np.ones(4))


@pytest.mark.parametrize("f,x,kwargs", [p for p in _params() if "ortho" in p.id or "shift" in p.id])
def test_fft_stages_and_saves(f, x, kwargs):
    fun = lambda x: f(x, **kwargs)  # noqa: E731
    program = ad.StagedProgram.from_dict(ad.stage(fun, x).to_dict())
    np.testing.assert_allclose(program(x), f(x, **kwargs), rtol=1e-12, atol=1e-12)


def test_staged_gradient_of_spectral_loss():
    x = _real(3, 8)
    loss = lambda x: np.sum(np.abs(np.fft.rfft2(x, norm="ortho")) ** 3)  # noqa: E731
    np.testing.assert_allclose(ad.grad(ad.stage(loss, x))(x), ad.grad(loss)(x), rtol=1e-12)


def test_every_numpy_fft_function_is_covered():
    public = {n for n in dir(np.fft) if not n.startswith("_") and callable(getattr(np.fft, n))}
    covered = {f.__name__ for _, f, *_ in CASES} | {"fftfreq", "rfftfreq"}
    assert public - {"test"} == covered


@pytest.mark.parametrize("norm", ["backward", "ortho", "forward"])
def test_fft_ops_run_on_another_provider(norm):
    xp = pytest.importorskip("array_api_strict")
    from advect import ops

    def loss(x):
        spectrum = ops.fft(x, axes=(0, 1), inverse=False, norm=norm)
        half = ops.rfft(x, axes=(1,), norm=norm)
        back = ops.irfft(ops.multiply(half, half), axes=(1,), s=(5,), norm=norm)
        total = ops.add(ops.reduce_sum(ops.real(ops.multiply(spectrum, spectrum)), axes=(0, 1),
                                       keepdims=False),
                        ops.reduce_sum(back, axes=(0, 1), keepdims=False))
        return total

    x = _real(3, 5)
    grad = ad.grad(loss)(xp.asarray(x))
    assert type(grad).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(np.asarray(grad), ad.grad(loss)(x), rtol=1e-10, atol=1e-12)


def test_fft_out_writes_into_an_owned_traced_array():
    def f(x):
        out = np.zeros_like(x, dtype=complex)
        np.fft.fft(x, out=out)
        return np.sum(np.abs(out) ** 2)
    x = _real(6)
    np.testing.assert_allclose(ad.grad(f)(x), 2 * 6 * x, rtol=1e-12)


@pytest.mark.parametrize("x", [np.float64(2.0), np.array(3, np.int16), np.array(1 + 2j)],
                         ids=["float64_scalar", "int16", "complex"])
def test_transforms_over_no_axes_return_the_data_as_a_0d_array(x):
    # NumPy's n-d transforms of a 0-d value (or over axes=()) transform nothing: a 0-d ndarray
    # of the input's dtype, not a NumPy scalar
    for f in (np.fft.fftn, lambda x: np.fft.ifftn(x, norm="ortho"),
              lambda x: np.fft.fft2(x * 1, axes=())):
        expected = f(x)
        for got in (ad.stage(f, x)(x), ad.vjp(f)(x)[0]):
            assert type(got) is type(expected) and got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)

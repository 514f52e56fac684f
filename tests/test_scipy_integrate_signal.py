"""advect.scipy.integrate and advect.scipy.signal against SciPy: values, shapes and dtypes over
modes, axes and dtypes (staged and dynamic), SciPy's errors, derivatives against central
differences in both modes, jvp against grad, and staged programs that save and load."""

import json
import warnings

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

si = pytest.importorskip("scipy.integrate")
ss = pytest.importorskip("scipy.signal")
from advect.scipy import integrate, signal  # noqa: E402

rng = np.random.default_rng(0)
SHAPES = [((5,), -1), ((4,), 0), ((2,), -1), ((3,), 0), ((3, 6), 1), ((6, 3), 0),
          ((2, 3, 5), 1)]
DTYPES = [np.float64, np.float32, np.complex128, np.int64]


def _sample(shape, dtype):
    y = rng.normal(size=shape) * 3
    if np.dtype(dtype).kind == "c":
        y = y + 1j * rng.normal(size=shape)
    return np.asarray(y).astype(dtype)


def _reload(program):
    return ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))


def _agrees(f, ref, *args, rtol):
    """Staged (saved and loaded) and dynamic results equal SciPy's in value, shape, dtype."""
    staged = _reload(ad.stage(f, *args))(*args)
    dynamic = ad.vjp(f)(*args)[0] if np.asarray(args[0]).dtype.kind != "i" else f(*args)
    for got in (staged, dynamic):
        assert np.shape(got) == np.shape(ref)
        assert np.asarray(got).dtype == np.asarray(ref).dtype
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=rtol)


def _tolerance(*arrays):
    single = any(np.asarray(a).dtype in (np.float32, np.complex64) for a in arrays)
    return 2e-5 if single else 1e-11


# --- integrate -----------------------------------------------------------------------------

def _spacings(shape, axis):
    n = shape[axis]
    return [("dx", None), ("x1d", np.sort(rng.uniform(size=n)) * 3),
            ("x1d32", (np.sort(rng.uniform(size=n)) * 3).astype(np.float32)),
            ("xnd", np.sort(rng.uniform(size=shape), axis=axis))]


INTEGRATE = [(name, shape, axis, dtype, kind, x, initial)
             for shape, axis in SHAPES for dtype in DTYPES for kind, x in _spacings(shape, axis)
             for name in ("trapezoid", "cumulative_trapezoid", "simpson")
             for initial in ((None, 0) if name == "cumulative_trapezoid" else (None,))]


@pytest.mark.parametrize("name, shape, axis, dtype, kind, x, initial", INTEGRATE,
                         ids=[f"{r[0]}-{r[1]}-{r[2]}-{np.dtype(r[3]).name}-{r[4]}-{r[6]}"
                              for r in INTEGRATE])
def test_integrate_matches_scipy(name, shape, axis, dtype, kind, x, initial):
    y = _sample(shape, dtype)
    kwargs = {"axis": axis, **({"dx": 0.7} if x is None else {"x": x})}
    if initial is not None:
        kwargs["initial"] = initial
    ref = getattr(si, name)(y, **kwargs)
    _agrees(lambda y: getattr(integrate, name)(y, **kwargs), ref, y, rtol=_tolerance(y, x))


@pytest.mark.parametrize("name", ["trapezoid", "cumulative_trapezoid", "simpson"])
@pytest.mark.parametrize("n", [2, 5, 6])
def test_integrate_derivatives_in_samples_points_and_spacing(name, n):
    f = getattr(integrate, name)
    y = rng.normal(size=(2, n))
    x = np.cumsum(rng.uniform(0.2, 1.0, n))
    check_grads(lambda y, x: f(y, x, axis=1), (y, x), order=2)
    check_grads(lambda y, dx: f(y, dx=dx), (y, np.array(0.4)), order=2)
    check_grads(lambda x: f(np.sin(x), x), (x,), order=1)


def test_integrate_jvp_agrees_with_grad():
    x = np.cumsum(rng.uniform(0.2, 1.0, 6))

    def work(x):  # the kinetic energy of a tracer through its sampled velocities
        v = np.gradient(np.sin(x), x)
        return integrate.simpson(v ** 2, x) + integrate.cumulative_trapezoid(v, x,
                                                                              initial=0)[-1]

    t = rng.normal(size=6)
    np.testing.assert_allclose(ad.jvp(work)(x, tangents=t)[1], ad.grad(work)(x) @ t,
                               rtol=1e-12)


@pytest.mark.parametrize("call, error, match", [
    (lambda y: integrate.cumulative_trapezoid(y, initial=1.0), ValueError, "initial"),
    (lambda y: integrate.cumulative_trapezoid(y[:, :0]), ValueError, "At least one point"),
    (lambda y: integrate.cumulative_trapezoid(y, np.ones(3)), ValueError, "length of x"),
    (lambda y: integrate.cumulative_trapezoid(y, np.ones((1, 1, 4))), ValueError, "1-D"),
    (lambda y: integrate.simpson(y, np.ones(3)), ValueError, "length of x"),
    (lambda y: integrate.simpson(y, np.ones((1, 1, 4))), ValueError, "1-D"),
    (lambda y: integrate.trapezoid(y, np.ones(3)), ValueError, "broadcast"),
])
def test_integrate_refuses_what_scipy_refuses(call, error, match):
    y = np.ones((2, 4))
    with pytest.raises(error):
        call(y)  # SciPy's own error on plain arrays
    with pytest.raises(error, match=match):
        ad.grad(lambda y: np.sum(call(y)))(y)


# --- signal --------------------------------------------------------------------------------

PAIRS = [((5,), (3,)), ((3,), (6,)), ((4,), (4,)), ((1,), (3,)), ((3, 4), (2, 2)),
         ((2, 5), (4, 3)), ((4, 3), (2, 6)), ((3, 1, 4), (2, 3, 2)), ((70,), (80,)), ((), ())]
KINDS = [(np.float64, np.float64), (np.float32, np.float32), (np.float32, np.float64),
         (np.complex128, np.float64), (np.int64, np.int32)]
CALLS = [(n, {"method": m}) for n in ("convolve", "correlate") for m in ("auto", "direct", "fft")]
CALLS += [("fftconvolve", {}), ("oaconvolve", {})]
SIGNAL = [(s1, s2, d1, d2, mode) for s1, s2 in PAIRS for d1, d2 in KINDS
          for mode in ("full", "same", "valid")]


@pytest.mark.parametrize("s1, s2, d1, d2, mode", SIGNAL,
                         ids=[f"{r[0]}-{r[1]}-{np.dtype(r[2]).name}-{np.dtype(r[3]).name}-{r[4]}"
                              for r in SIGNAL])
def test_signal_matches_scipy(s1, s2, d1, d2, mode):
    a, b = _sample(s1, d1), _sample(s2, d2)
    for name, kwargs in CALLS:
        f = lambda a, name=name, kwargs=kwargs: getattr(signal, name)(  # noqa: E731
            a, b, mode, **kwargs)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ref = getattr(ss, name)(a, b, mode, **kwargs)
        except ValueError:  # valid mode of inputs neither of which contains the other
            with pytest.raises(ValueError, match="valid"):
                ad.stage(f, a)
            continue
        # SciPy transforms a float32 input in float32 even when the result is float64
        _agrees(f, ref, a, rtol=_tolerance(a, b) * (10 if a.size > 50 else 1))


@pytest.mark.parametrize("s1, s2, axes", [
    ((3, 5), (3, 2), 1), ((3, 5), (1, 2), 1), ((3, 5), (3, 2), [-1]), ((4, 5, 6), (4, 2, 3),
                                                                        (1, 2)),
    ((4, 5, 6), (1, 2, 3), (2, 1)), ((3, 5), (3, 6), 1), ((3, 1), (1, 4), None)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["fftconvolve", "oaconvolve"])
def test_fft_convolutions_over_axes(name, mode, s1, s2, axes):
    a, b = rng.normal(size=s1), rng.normal(size=s2)
    ref = getattr(ss, name)(a, b, mode, axes)
    f = lambda a, b: getattr(signal, name)(a, b, mode, axes)  # noqa: E731
    _agrees(lambda a: f(a, b), ref, a, rtol=1e-11)
    check_grads(f, (a, b), order=1)


@pytest.mark.parametrize("name, kwargs", CALLS, ids=[f"{n}-{k}" for n, k in CALLS])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_signal_derivatives_in_both_inputs(name, kwargs, mode):
    f = getattr(signal, name)
    a, b = rng.normal(size=(4, 5)), rng.normal(size=(2, 3))
    check_grads(lambda a, b: f(a, b, mode, **kwargs), (a, b), order=2)
    z = rng.normal(size=6) + 1j * rng.normal(size=6)
    check_grads(lambda z, b: f(z, b, mode, **kwargs), (z, rng.normal(size=3)), order=1)


def test_signal_jvp_agrees_with_grad_in_a_deconvolution_loss():
    blurred = ss.convolve(np.sin(np.linspace(0, 3, 40)), np.ones(5) / 5, "same")

    def loss(kernel):
        estimate = signal.fftconvolve(np.sin(np.linspace(0, 3, 40)), kernel, "same")
        return np.sum((estimate - blurred) ** 2) + np.sum(signal.correlate(kernel, kernel) ** 2)

    k, t = rng.uniform(size=5), rng.normal(size=5)
    np.testing.assert_allclose(ad.jvp(loss)(k, tangents=t)[1], ad.grad(loss)(k) @ t,
                               rtol=1e-10)
    staged = _reload(ad.stage(ad.grad(loss), k))
    np.testing.assert_allclose(staged(k), ad.grad(loss)(k), rtol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda a: signal.convolve(a, np.ones(3)), "same dimensionality"),
    (lambda a: signal.correlate(a, np.ones(3)), "same dimensionality"),
    (lambda a: signal.fftconvolve(a, np.ones(3)), "same dimensionality"),
    (lambda a: signal.convolve(a, np.ones((2, 2)), mode="bogus"), "mode flags"),
    (lambda a: signal.correlate(a, np.ones((2, 2)), mode="bogus"), "mode flags"),
    (lambda a: signal.convolve(a, np.ones((2, 2)), method="bogus"), "method flags"),
    (lambda a: signal.convolve(a, np.ones((4, 2)), mode="valid"), "at least as large"),
    (lambda a: signal.fftconvolve(a, np.ones((2, 2)), axes=[]), "cannot be empty"),
    (lambda a: signal.fftconvolve(a, np.ones((2, 2)), axes=[1, 1]), "unique"),
    (lambda a: signal.fftconvolve(a, np.ones((2, 2)), axes=2), "exceeds dimensionality"),
    (lambda a: signal.fftconvolve(a, np.ones((2, 2)), axes=1), "incompatible shapes"),
])
def test_signal_refuses_what_scipy_refuses(call, match):
    a = np.ones((3, 4))
    with pytest.raises(ValueError):
        call(a)  # SciPy's own error on plain arrays
    with pytest.raises(ValueError, match=match):
        ad.grad(lambda a: np.sum(call(a)))(a)


def test_empty_inputs_as_in_scipy():
    a = np.ones(3)
    assert ad.stage(lambda a: signal.fftconvolve(a, np.ones(0)), a)(a).shape == (0,)
    with pytest.raises(ValueError):
        ss.convolve(np.ones(0), a)
    with pytest.raises(ValueError, match="empty"):
        ad.grad(lambda a: np.sum(signal.convolve(a, np.ones(0))))(a)


def test_direct_convolution_of_integers_is_exact():
    a = np.array([2**40, 3, -7], dtype=np.int64)
    b = np.array([5, 2**11], dtype=np.int64)
    staged = ad.stage(lambda a: signal.convolve(a, b), a)
    np.testing.assert_array_equal(staged(a), ss.convolve(a, b))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_direct_1d_convolutions_are_numpy_s_as_scipy_s(dtype, mode):
    # SciPy hands a direct 1-d convolve / correlate to np.convolve / np.correlate (for 'same'
    # when the first input is the longer): the values are NumPy's, bit for bit
    rng = np.random.default_rng(5)
    a, v = ((rng.uniform(-1, 1, n) + (1j * rng.uniform(-1, 1, n) if dtype is np.complex128
                                      else 0)).astype(dtype) for n in (12, 5))
    for name in ("convolve", "correlate"):
        for first, second in ((a, v), (v, a)) if mode != "same" else ((a, v),):
            expected = getattr(ss, name)(first, second, mode, "direct")
            f = lambda x, y, name=name: getattr(signal, name)(x, y, mode, "direct")
            for got in (ad.stage(f, first, second)(first, second),
                        ad.vjp(f, argnums=(0, 1))(first, second)[0]):
                assert got.dtype == expected.dtype
                np.testing.assert_array_equal(got, expected)

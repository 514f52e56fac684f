"""Regressions for silent wrong answers that probing the integrations found: SciPy namespaces,
xarray containers and the host bridges, each checked against an answer Advect did not compute
(SciPy's own result, a closed form, the host framework's own derivative)."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad

RNG = np.random.default_rng(20240612)


# --- advect.scipy.linalg: float32 stays float32, as SciPy keeps it ---------------------------

def _spd(n, dtype):
    a = RNG.standard_normal((n, n))
    return (a @ a.T + n * np.eye(n)).astype(dtype)


_LINALG_F32 = {
    "solve_pos": lambda L, a, b: L.solve(a, b, assume_a="pos"),
    "solve_sym_lower": lambda L, a, b: L.solve(a, b, assume_a="sym", lower=True),
    "solve_triangular_unit": lambda L, a, b: L.solve_triangular(a, b, lower=True,
                                                                unit_diagonal=True),
    "cholesky": lambda L, a, b: L.cholesky(a),
    "cho_solve": lambda L, a, b: L.cho_solve(L.cho_factor(a, lower=True), b),
    "lu_solve": lambda L, a, b: L.lu_solve(L.lu_factor(a), b, trans=1),
    "eigh": lambda L, a, b: L.eigh(a, eigvals_only=True),
    "inv_pos": lambda L, a, b: L.inv(a, assume_a="pos"),
}


@pytest.mark.parametrize("name", sorted(_LINALG_F32))
def test_scipy_linalg_keeps_float32_when_traced_and_staged(name):
    sla = pytest.importorskip("scipy.linalg")
    from advect.scipy import linalg

    call = _LINALG_F32[name]
    a, b = _spd(3, np.float32), RNG.standard_normal(3).astype(np.float32)
    expected = call(sla, a, b)
    staged = ad.stage(lambda a, b: call(linalg, a, b), a, b)(a, b)
    value = ad.jvp(lambda a: call(linalg, a, b))(a, tangents=np.ones_like(a))[0]
    for got in (staged, value):
        assert got.dtype == expected.dtype == np.float32
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    assert ad.grad(lambda a: np.sum(call(linalg, a, b)))(a).dtype == np.float32


# --- advect.xarray: a 0-d result is held as an array, as xarray holds it ---------------------

def test_xarray_zero_d_results_hold_arrays_and_equal_the_eager_result():
    xr = pytest.importorskip("xarray")
    import advect.xarray  # noqa: F401

    a = xr.DataArray(np.array([1.0, 2.0, 4.0]), dims="x", name="a", attrs={"units": "m"})
    f = lambda a: (a * a).sum()  # noqa: E731  (a sum of exact squares: no rounding)
    expected = f(a)
    staged = ad.stage(f, a)(a)
    value, tangent = ad.jvp(f)(a, tangents=xr.ones_like(a))
    for got in (staged, value, tangent):
        assert isinstance(got.variable._data, np.ndarray)
    assert staged.identical(expected) and value.identical(expected)
    assert float(tangent) == 14.0


# --- advect.interop.torch: every backward pass through a retained graph ----------------------

def _torch_setup():
    torch = pytest.importorskip("torch")
    from advect.interop.torch import wrap

    f = wrap(lambda x: np.sin(x) * np.arange(1.0, 4.0))
    x = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float64)
    return torch, f, x, torch.diag(torch.cos(x) * torch.arange(1.0, 4.0, dtype=torch.float64))


def test_torch_backward_twice_with_retain_graph_accumulates_both_passes():
    torch, f, x, jac = _torch_setup()
    x.requires_grad_(True)
    y = f(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    torch.testing.assert_close(x.grad, 2 * jac.sum(0))


def test_torch_backward_twice_without_retain_graph_raises_torchs_error():
    torch, f, x, _ = _torch_setup()
    x.requires_grad_(True)
    y = f(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_torch_functional_jacobian_and_hessian_match_the_closed_form():
    torch, f, x, jac = _torch_setup()
    torch.testing.assert_close(torch.autograd.functional.jacobian(f, x), jac)
    hessian = torch.autograd.functional.hessian(lambda x: f(x).sum(), x)
    torch.testing.assert_close(hessian, torch.diag(-torch.sin(x) * torch.arange(1.0, 4.0,
                                                                               dtype=x.dtype)))


def test_torch_vmap_is_refused_with_a_clear_error():
    torch, f, x, _ = _torch_setup()
    with pytest.raises(NotImplementedError, match="vmap"):
        torch.autograd.functional.jacobian(f, x, vectorize=True)


# --- advect.interop.autograd: many backward passes, and higher orders -------------------------

def _autograd_setup():
    autograd = pytest.importorskip("autograd")
    from advect.interop.autograd import wrap

    x = np.array([0.1, 0.2, 0.3])
    return autograd, wrap(lambda x: np.sin(x) * np.arange(1.0, 4.0)), x


def test_autograd_jacobian_gets_one_row_per_cotangent():
    autograd, f, x = _autograd_setup()
    np.testing.assert_allclose(autograd.jacobian(f)(x), np.diag(np.cos(x) * [1.0, 2.0, 3.0]),
                               rtol=1e-12)


def test_autograd_pullback_called_twice_uses_each_cotangent():
    autograd, f, x = _autograd_setup()
    pullback, _ = autograd.make_vjp(f)(x)
    first, second = pullback(np.array([1.0, 0.0, 0.0])), pullback(np.array([0.0, 1.0, 0.0]))
    np.testing.assert_allclose(first, [np.cos(0.1), 0.0, 0.0], rtol=1e-12)
    np.testing.assert_allclose(second, [0.0, 2 * np.cos(0.2), 0.0], rtol=1e-12)


def test_autograd_hessian_is_the_second_derivative_not_zero():
    autograd, f, x = _autograd_setup()
    anp = pytest.importorskip("autograd.numpy")
    hessian = autograd.hessian(lambda x: anp.sum(f(x)))(x)
    np.testing.assert_allclose(hessian, np.diag(-np.sin(x) * [1.0, 2.0, 3.0]), rtol=1e-12)


def test_autograd_complex_second_derivative_matches_autograd_itself():
    autograd, _, _ = _autograd_setup()
    anp = pytest.importorskip("autograd.numpy")
    from advect.interop.autograd import wrap

    quartic = wrap(lambda z: np.sum(np.abs(z) ** 4))
    z = np.array([1 + 2j, -0.5 + 0.25j])

    def second(g):
        return autograd.grad(lambda z: anp.real(anp.sum(autograd.grad(g)(z) * (1 + 1j))))(z)

    np.testing.assert_allclose(second(quartic), second(lambda z: anp.sum(anp.abs(z) ** 4)),
                               rtol=1e-12)


# --- scipy.ndimage: complex weights and integer means, as SciPy computes them ----------------

@pytest.mark.parametrize("name", ["correlate1d", "convolve1d", "correlate", "convolve"])
@pytest.mark.parametrize("dtype", [np.complex128, np.float64, np.float32])
def test_complex_weights_filter_as_scipy_does(name, dtype):
    sn = pytest.importorskip("scipy.ndimage")
    from advect.scipy import ndimage

    z = np.array([1 + 1j, 2 - 1j, 0.5, -1j, 3.0])
    a = (z if np.dtype(dtype).kind == "c" else z.real).astype(dtype)
    w = np.array([1, 2j, 0.5 - 1j])  # a correlation conjugates them, a convolution does not

    def f(v):
        return getattr(ndimage, name)(v, w, mode="constant")

    expected = getattr(sn, name)(a, w, mode="constant")
    for actual in (ad.stage(f, a)(a), ad.jvp(f)(a, tangents=np.ones_like(a))[0]):
        assert actual.dtype == expected.dtype  # complex, in the input's precision
        np.testing.assert_allclose(actual, expected, rtol=1e-6)


@pytest.mark.parametrize("mode", ["reflect", "constant", "wrap", "nearest"])
def test_uniform_filter1d_of_integers_truncates_the_exact_mean(mode):
    sn = pytest.importorskip("scipy.ndimage")
    from advect.scipy import ndimage

    a = np.array([-1, -4, 2, 5, 7, -3])  # a window mean of -1 was -0.999..., truncated to 0
    staged = ad.stage(lambda v: ndimage.uniform_filter1d(v, 3, mode=mode), a)(a)
    np.testing.assert_array_equal(staged, sn.uniform_filter1d(a, 3, mode=mode), strict=True)

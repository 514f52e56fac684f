"""Silent wrong complex (and complex-adjacent) derivatives found by probing elementwise ops,
reductions and special functions: one test per fixed bug, each against central differences
in the real and imaginary parts (``grad(L)(z) == dL/dx + 1j dL/dy``)."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad


def _central(loss, z, step):
    """dL/dx + 1j dL/dy by central differences in complex128, step relative to |z|."""
    z = z.astype(np.complex128)
    out = np.zeros(z.shape, np.complex128)
    for k in range(z.size):
        e = np.zeros(z.shape, np.complex128)
        e.flat[k] = step
        dx = (loss(z + e) - loss(z - e)) / (2 * step)
        dy = (loss(z + 1j * e) - loss(z - 1j * e)) / (2 * step)
        out.flat[k] = dx + 1j * dy
    return out


@pytest.mark.parametrize("dtype,scale", [(np.complex64, 1e-20), (np.complex64, 1e-30),
                                         (np.complex64, 1e20), (np.complex128, 1e-170),
                                         (np.complex128, 1e170)])
@pytest.mark.parametrize("staged", [False, True], ids=["eager", "staged"])
def test_angle_gradient_far_from_unit_magnitude(dtype, scale, staged):
    # d angle = Im(conj(z) dz) / |z|^2 formed |z|^2, which underflows (nan, or a gradient of
    # the wrong size) or overflows (zero) for moderate complex64 magnitudes
    z = np.array([1 + 2j, 3 - 1.5j], dtype) * dtype(scale)

    def loss(z):
        return np.sum(np.angle(z))

    grad = ad.grad(ad.stage(loss, z) if staged else loss)(z)
    assert grad.dtype == dtype
    want = _central(loss, z, 1e-6 * scale)
    np.testing.assert_allclose(grad, want, rtol=1e-3)
    t = np.array([0.5 - 1j, 2 + 0.25j], dtype)
    _, tangent = ad.jvp(np.angle)(z, tangents=t)
    zz, tt = z.astype(np.complex128), t.astype(np.complex128)
    np.testing.assert_allclose(tangent, np.imag(tt / zz), rtol=1e-3)


def test_angle_gradient_at_zero_stays_zero():
    grad = ad.grad(lambda z: np.sum(np.angle(z)))(np.array([0j, 1 + 1j]))
    np.testing.assert_allclose(grad, [0, -0.5 + 0.5j])


@pytest.mark.parametrize("dtype,scale", [(np.float32, 1e-25), (np.float32, 1e20),
                                         (np.float64, 1e-170), (np.float64, 1e170)])
def test_arctan2_gradient_far_from_unit_magnitude(dtype, scale):
    # the partials x / (x^2 + y^2), -y / (x^2 + y^2) overflowed or underflowed in x^2 + y^2
    y = np.array([1.0, -2.0], dtype) * dtype(scale)
    x = np.array([2.0, 0.5], dtype) * dtype(scale)
    gy, gx = ad.grad(lambda y, x: np.sum(np.arctan2(y, x)), argnums=(0, 1))(y, x)
    yy, xx = y.astype(np.float64), x.astype(np.float64)
    r = np.hypot(xx, yy)
    np.testing.assert_allclose(gy, xx / r / r, rtol=1e-4)
    np.testing.assert_allclose(gx, -yy / r / r, rtol=1e-4)
    assert gy.dtype == gx.dtype == dtype

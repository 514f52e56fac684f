"""Python scalars at the transform and staging boundaries: weak promotion (NEP 50) inside
transforms, Python ints in weak float slots, Python scalars back for Python-scalar inputs."""

import numpy as np
import pytest

import advect as ad

X32 = np.array([1.0, 2.0, 3.0], np.float32)


def test_lifted_python_scalars_stay_weak_inside_transforms():
    f = lambda s, x: np.sum(s * 2.0 * x)
    gs, gx = ad.grad(f, argnums=(0, 1))(3.0, X32)
    assert type(gs) is float and gs == pytest.approx(2.0 * float(np.sum(X32)))
    assert gx.dtype == np.float32
    value, t = ad.jvp(lambda s, x: s * x, argnums=(0, 1))(3.0, X32,
                                                        tangents=(1.0, np.ones(3, np.float32)))
    assert value.dtype == np.float32 and t.dtype == np.float32
    assert value.dtype == (3.0 * X32).dtype  # as eager NumPy
    g = ad.grad(lambda s: np.sum(s * np.float32(3.0) * np.ones(2, np.float32)))(3.0)
    assert type(g) is float and g == 6.0


def test_python_int_inputs_are_lifted_to_floats():
    assert ad.grad(lambda s: s ** 3)(2) == 12.0
    assert type(ad.grad(lambda s: s ** 3)(2)) is float


def test_values_for_python_scalar_inputs_are_python_scalars():
    value, t = ad.jvp(lambda s: s ** 2)(3.0, tangents=1.0)
    assert type(value) is float and value == 9.0 and t == 6.0
    value, g = ad.value_and_grad(lambda s: s ** 2)(3.0)
    assert type(value) is float and type(g) is float
    (a, b), pullback = ad.vjp(lambda s: (s ** 2, s * np.ones(2)))(3.0)
    assert type(a) is float and b.dtype == np.float64
    assert pullback((1.0, np.ones(2))) == 8.0


def test_a_python_int_fits_a_weak_float_slot_of_a_program():
    program = ad.stage(lambda x, s: x * s, X32, 2.0)
    out = program(X32, 2)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, X32 * 2)
    for bad in (True, 1j):
        with pytest.raises(ValueError, match="weak scalar"):
            program(X32, bad)
    with pytest.raises(ValueError, match="weak scalar"):
        program(X32, np.float64(2.0))
    g = ad.grad(ad.stage(lambda s: s ** 2, 2.0))
    assert g(3) == 6.0 and type(g(3)) is float


def test_a_complex_weak_slot_takes_ints_and_floats():
    program = ad.stage(lambda z, x: z * x, 1j, np.ones(2))
    np.testing.assert_array_equal(program(2, np.ones(2)), [2, 2])
    np.testing.assert_array_equal(program(2.5, np.ones(2)), [2.5, 2.5])
    with pytest.raises(ValueError):
        program(True, np.ones(2))

"""The direct NumPy calls in the hot transposes (``multiply`` and ``add``) and the inline
avals of the linear tape against the general path, which ``advect.debug()`` takes: every rule
then goes through ``bind``. Gradients of random programs agree bit for bit, in float64 and
float32, dynamic and through a staged program."""

import numpy as np
from hypothesis import given, settings

import advect as ad
from programs import Program, programs

SETTINGS = settings(max_examples=80, deadline=None, derandomize=True, database=None)


def _gradients(program: Program, dtype):
    _, f, xs, _, _ = program.eager(dtype)
    argnums = tuple(range(len(xs)))
    return [*ad.grad(f, argnums=argnums)(*xs),
            *ad.value_and_grad(ad.stage(f, *xs), argnums=argnums)(*xs)[1]]


def _check(program: Program, dtype) -> None:
    fast = _gradients(program, dtype)
    with ad.debug():
        general = _gradients(program, dtype)
    for k, (a, b) in enumerate(zip(fast, general)):
        assert type(a) is type(b) and np.asarray(a).dtype == np.asarray(b).dtype, k
        np.testing.assert_array_equal(a, b, err_msg=f"gradient {k}: fast vs general path")


@SETTINGS
@given(programs())
def test_hot_transposes_agree_with_the_general_path_float64(program):
    _check(program, np.float64)


@SETTINGS
@given(programs())
def test_hot_transposes_agree_with_the_general_path_float32(program):
    _check(program, np.float32)


def test_products_with_python_and_array_constants_on_either_side():
    x = np.linspace(-1.0, 1.0, 6).reshape(2, 3).astype(np.float32)
    c = np.array([0.5, -2.0, 3.0], np.float32)

    def f(x):
        y = 0.1 * x + x * 3 + 2 * (x * c) + (c * x) / 3.0 - x[0] * 1.5
        return np.sum(y * np.sin(x) - np.broadcast_to(c, (2, 3)) * x)

    fast = ad.grad(f)(x)
    with ad.debug():
        general = ad.grad(f)(x)
    assert fast.dtype == general.dtype == np.float32
    np.testing.assert_array_equal(fast, general)

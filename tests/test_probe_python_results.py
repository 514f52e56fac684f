"""NumPy functions that return Python scalars (``np.allclose`` and the array comparisons) return
them from staged programs and dynamic transforms too, and they stay weak in arithmetic."""

import numpy as np
import pytest

import advect as ad

X = np.array([1.0, 2.0, 3.0])

CASES = [
    lambda x: np.allclose(x, x + 1e-12),
    lambda x: np.allclose(x, 1.0),
    lambda x: np.array_equal(x, x),
    lambda x: np.array_equal(x, x[:2]),
    lambda x: np.array_equal(x, x, equal_nan=True),
    lambda x: np.array_equiv(x, x[None]),
    lambda x: np.allclose(x, 2.0) + np.int8(3),
    lambda x: np.allclose(x, x) * x.astype(np.float32),
    lambda x: np.where(np.allclose(x, x), x, 2 * x),
]


@pytest.mark.parametrize("f", CASES)
def test_staged_result_type_is_eager(f):
    want, got = f(X), ad.stage(f, X)(X)
    assert type(got) is type(want)
    np.testing.assert_array_equal(got, want)
    assert getattr(got, "dtype", None) == getattr(want, "dtype", None)


def test_dynamic_aux_is_a_python_bool():
    value, grad, aux = ad.value_and_grad(lambda x: (np.sum(x), np.allclose(x, X)),
                                         has_aux=True)(X)
    assert aux is True
    np.testing.assert_array_equal(grad, np.ones(3))


def test_branch_on_allclose_in_a_dynamic_transform():
    f = lambda x: np.sum(x**2) if np.allclose(x, X) else 0.0  # noqa: E731
    np.testing.assert_allclose(ad.grad(f)(X), 2 * X)


def test_map_program_passes_batched_keywords():
    pytest.importorskip("dask")
    from advect.dask import map_program

    pullback = ad.vjp_program(ad.stage(lambda x: np.sin(x) * 2.0, np.zeros(3)))
    xs = [np.linspace(0, 1, 3), np.linspace(1, 2, 3)]
    cts = [np.ones(3), np.arange(3.0)]
    got = map_program(pullback, xs, cotangent=cts)
    for g, x, ct in zip(got, xs, cts):
        np.testing.assert_allclose(g, 2 * ct * np.cos(x), rtol=1e-14)
    with pytest.raises(ValueError, match="different lengths"):
        map_program(pullback, xs, cotangent=cts[:1])
    with pytest.raises(TypeError, match="batched keyword 'cotangent'"):
        map_program(pullback, xs, cotangent=3.0)


@pytest.mark.parametrize("literal", [float("nan"), -float("nan"), complex(-float("nan"), 1.0)])
def test_saved_literals_keep_a_nans_sign_bit(literal):
    import json

    f = lambda x: np.copysign(1.0, (x * 0 + literal).real)  # noqa: E731
    x = np.ones(2)
    program = ad.stage(f, x)
    loaded = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    np.testing.assert_array_equal(loaded(x), f(x))
    np.testing.assert_array_equal(program(x), f(x))


@pytest.mark.parametrize("f, args", [
    (lambda a, b: a * b, (2**40, 2**40)),
    (lambda a, b: a + b, (2**62, 2**62)),
    (lambda a, b: -(a - b), (-2**63, 1)),
    (lambda a, b: abs(a - b), (-2**63, 1)),
    (lambda a, b: a**b, (3, 50)),
    (lambda a, b: a << b, (1, 70)),
    (lambda a, b: a + b, (True, True)),
    (lambda a, b: a * b * 1.5, (2**40, 2**40)),
    (lambda a, b: np.ones(2) * (a * b), (2**40, 2**40)),
    (lambda a, b: a * b + 0.5, (3, 4)),
])
def test_staged_python_int_arithmetic_is_exact(f, args):
    want, got = f(*args), ad.stage(f, *args)(*args)
    assert type(got) is type(want)
    np.testing.assert_array_equal(got, want)


def test_staged_python_int_overflow_into_an_int64_array_raises_as_eager():
    f = lambda a, b: a * b + np.ones(2, np.int64)  # noqa: E731
    with pytest.raises(OverflowError):
        f(2**40, 2**40)
    with pytest.raises(OverflowError):
        ad.stage(f, 2**40, 2**40)(2**40, 2**40)


@pytest.mark.parametrize("x", [2.5, np.float64(2.5), np.array(2.5), np.float32(2.5)])
@pytest.mark.parametrize("axis", [0, -1, None, ()])
def test_ufunc_reduce_of_a_0d_value_is_numpys(x, axis):
    f = lambda x: np.add.reduce(x, axis=axis) * 3  # noqa: E731
    want = f(x)
    staged = ad.stage(f, x)(x)
    assert type(staged) is type(want) and staged == want
    assert ad.grad(f)(x) == 3.0


@pytest.mark.parametrize("axis", [1, (0,)])
def test_ufunc_reduce_of_a_0d_array_refuses_other_axes_as_numpy(axis):
    with pytest.raises(np.exceptions.AxisError):
        np.add.reduce(np.array(2.5), axis=axis)
    with pytest.raises(np.exceptions.AxisError):
        ad.grad(lambda x: np.add.reduce(x, axis=axis))(np.array(2.5))

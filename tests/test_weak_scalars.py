"""Python scalars inside traced code follow Python's rules, as eager code does.

``x.item()`` and ``x.tolist()`` give Python numbers (weak: ``int8_array.item() * 3`` is 300,
not an int8 that wraps), Python bools add as ints (``True + True`` is 2), and bitwise operators
on Python ints give Python ints. Each row compares the staged result (value and type) with the
eager one; derivatives through ``.item()`` are checked against central differences.
"""

import pickle
import warnings

import numpy as np
import pytest

import advect as ad
from oracles import central_gradient

I8 = np.array([100, 2], np.int8)
F32 = np.array([1.0, 2.5], np.float32)

CASES = [
    ("int8 item * 3", lambda a: a.item(0) * 3, (I8,)),
    ("int8 0-d item * 3", lambda a: a.item() * 3, (np.array(100, np.int8),)),
    ("uint8 item - 3", lambda a: a.item() - 3, (np.array(1, np.uint8),)),
    ("float32 item + 1e-10", lambda a: a.item(0) + 1e-10, (F32,)),
    ("complex64 item", lambda a: a.item() * 1j, (np.array(2, np.complex64),)),
    ("bool item + bool item", lambda a: a.item(0) + a.item(0), (np.array([True]),)),
    ("item(i, j)", lambda a: a.item(0, 1) * 200, (I8.reshape(1, 2),)),
    ("tolist", lambda a: [v * 200 for v in a.tolist()], (I8,)),
    ("item times array", lambda a: a.item(1) * a, (F32,)),
    ("item alone", lambda a: a.item(), (np.array(3, np.int8),)),
    ("True + True", lambda b: b + b, (True,)),
    ("-True", lambda b: -b, (True,)),
    ("+True", lambda b: +b, (True,)),
    ("abs(True)", lambda b: abs(b), (True,)),
    ("~True", lambda b: ~b, (True,)),
    ("True - True", lambda b: b - b, (True,)),
    ("True * True", lambda b: b * b, (True,)),
    ("True ** 2", lambda b: b**2, (True,)),
    ("True ** True", lambda b: b**b, (True,)),
    ("True // True", lambda b: b // b, (True,)),
    ("True % True", lambda b: b % b, (True,)),
    ("1 + True (reflected)", lambda b: 1 + b, (True,)),
    ("True + True, then an int8 array", lambda b, a: (b + b) * a, (True, I8)),
    ("True & True stays bool", lambda b: b & b, (True,)),
    ("bool array + True keeps NumPy's rule", lambda a: a + True, (np.array([True, False]),)),
    ("NumPy bool + True keeps NumPy's rule", lambda a: a + True, (np.True_,)),
    ("n & 3", lambda n: n & 3, (7,)),
    ("n | True", lambda n: n | True, (8,)),
    ("n ^ 5", lambda n: n ^ 5, (9,)),
    ("n << 2", lambda n: n << 2, (7,)),
    ("n >> 1", lambda n: n >> 1, (9,)),
    ("~n", lambda n: ~n, (7,)),
    ("int8 & 3", lambda a: a & 3, (I8,)),
    ("3 & int8", lambda a: 3 & a, (I8,)),
    ("~ bool array", lambda a: ~a, (np.array([True, False]),)),
]


def _same(eager, staged):
    if isinstance(eager, list):
        return len(eager) == len(staged) and all(map(_same, eager, staged))
    return (type(staged) is type(eager) and np.array_equal(staged, eager)
            and getattr(staged, "dtype", None) == getattr(eager, "dtype", None))


@pytest.mark.parametrize("name, f, args", CASES, ids=[c[0] for c in CASES])
def test_staged_python_scalars_match_eager(name, f, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # ~True on Python 3.12+
        eager = f(*args)
        staged = ad.stage(f, *args)(*args)
    assert _same(eager, staged), (eager, staged)


def test_bitwise_invert_of_a_float_array_is_refused_as_numpy_refuses():
    with pytest.raises(TypeError):
        ad.stage(lambda a: ~a, F32)


def _through_item(x):
    return np.real(np.sum(x.item(1) * x**2 + np.sin(x.item(0)) * x.tolist()[2]))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_derivatives_flow_through_item(dtype):
    x = np.array([0.3, 1.2, -0.7], dtype)
    expected = central_gradient(_through_item, np.array([0.3, 1.2, -0.7]))
    dynamic = ad.grad(_through_item)(x)
    staged = ad.grad(ad.stage(_through_item, x))(x)
    assert dynamic.dtype == staged.dtype == np.dtype(dtype)
    tol = 1e-4 if dtype is np.float32 else 1e-7
    np.testing.assert_allclose(dynamic.real, expected, rtol=tol)
    np.testing.assert_allclose(staged.real, expected, rtol=tol)
    t = np.array([0.5, -1.0, 2.0])
    _, tangent = ad.jvp(_through_item)(np.array([0.3, 1.2, -0.7]), tangents=t)
    np.testing.assert_allclose(tangent, expected @ t, rtol=1e-6)


def test_jacobian_through_item_keeps_float32():
    f = lambda x: x.item(0) * x  # noqa: E731
    expected = np.array([[2.0, 0.0], [2.5, 1.0]], np.float32)
    for jac in (ad.jacobian(f)(F32), ad.jacobian(ad.stage(f, F32))(F32)):
        assert jac.dtype == np.float32
        np.testing.assert_allclose(jac, expected)


def test_a_program_with_item_survives_save_and_pickle():
    program = ad.stage(lambda a: a.item() * 3, np.array(100, np.int8))
    for restored in (ad.StagedProgram.from_dict(program.to_dict()),
                     pickle.loads(pickle.dumps(program))):
        assert restored(np.array(100, np.int8)) == 300
        assert type(restored(np.array(5, np.int8))) is int

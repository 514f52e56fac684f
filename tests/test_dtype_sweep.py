"""Staged dtypes and shapes equal eager NumPy's, for every op and every staged dtype.

Every row of the op table (``tests/op_cases.py``, plus the ops it has no row for) and every
staged row of ``advect.support_catalog()`` (ufuncs, ufunc methods, functions, ndarray methods,
with the samples of ``tests/ufunc_samples.py`` and ``tests/catalog_samples.py``) runs with its
operands converted to each of the fourteen staged dtypes, and every binary ufunc with a Python
scalar operand (weak, as NEP 50 says) of each kind. Eager NumPy is the truth: the op's
abstract rule, the staged program's ``output_specs`` and the array the program returns must all
have NumPy's shape and dtype, and the values must agree. Where NumPy raises, staging (or the
staged call) must raise too. The fast profile checks each row in four dtypes (bool, int8,
float16 and one that rotates with the row); the slow profile checks all fourteen.
"""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

import advect as ad
from advect import ops
from advect.catalog import support_catalog
from advect.dtypes import STAGED_DTYPES, aval_of
from advect.pytree import tree_leaves
from catalog_samples import function_sample, method_sample, traced_call
from op_cases import CASES, OpCase, const, distinct, floats, ints
from ufunc_samples import method_call, ufunc_args

DTYPES = sorted(STAGED_DTYPES, key=lambda d: "?bhilBHILefdFD".index(d.char))
TRICKY = (np.dtype(bool), np.dtype(np.int8), np.dtype(np.float16))  # where promotion surprises
REST = [d for d in DTYPES if d not in TRICKY]

# ops op_cases has no row for (nondifferentiable, so the derivative laws skip them)
_X = floats(3, 4)
EXTRA_CASES = [
    *(OpCase(op, (_X,)) for op in (ops.floor, ops.ceil, ops.trunc, ops.isnan, ops.isinf,
                                   ops.isfinite, ops.signbit, ops.logical_not)),
    OpCase(ops.round, (_X,), {"decimals": 0}),
    OpCase(ops.round, (_X,), {"decimals": 2}, name="round_decimals"),
    *(OpCase(op, (_X, floats(4, seed=1))) for op in (
        ops.equal, ops.not_equal, ops.less, ops.less_equal, ops.greater, ops.greater_equal,
        ops.logical_and, ops.logical_or, ops.logical_xor)),
    OpCase(ops.floor_divide, (_X, floats(4, seed=1))),
    OpCase(ops.argmax, (distinct(3, 4),), {"axis": 1, "keepdims": False}),
    OpCase(ops.nanargmax, (distinct(3, 4),), {"axis": 1, "keepdims": False}),
    OpCase(ops.nanargmin, (distinct(3, 4),), {"axis": None, "keepdims": True}),
    OpCase(ops.argmin, (distinct(3, 4),), {"axis": 0, "keepdims": True}),
    OpCase(ops.full_like, (_X,), {"fill_value": 2, "shape": (2,), "dtype": None}),
    OpCase(ops.iota_like, (_X,), {"shape": (3, 4), "axis": 1}),
    OpCase(ops.where, (const(np.array([True, False, True])), ints(3), floats(3)),
           name="where_mixed"),
]
# ops only derived programs emit (with operands no user builds), and isnat, whose operands are
# datetimes, which are not a staged dtype
UNSWEPT = {"checkpoint_jvp", "implicit_solve", "isnat"}
OP_CASES = [c for c in CASES + EXTRA_CASES
            if not any(isinstance(a, np.ndarray) and a.dtype.kind == "M" for a in c.build())]

# rows whose values NumPy leaves unspecified (only shape and dtype are compared)
UNSPECIFIED_VALUES = {"numpy.empty", "numpy.empty_like"}
# NumPy refuses some values (a zero geomspace endpoint): a staged program cannot look at
# values, so it gives NaN there, while dynamic transforms raise as NumPy does
VALUE_DEPENDENT_REFUSALS = {"numpy.geomspace"}
ROWS = [r for r in support_catalog() if r.category != "array api" and r.staged]


def _cast(a, dtype):
    """``a`` in ``dtype``, keeping values nonzero and distinct where the dtype allows it."""
    if dtype.kind == "c":
        return (a + 0.25j * np.sign(np.real(a))).astype(dtype)
    a = np.real(a)
    if dtype.kind == "f":
        return a.astype(dtype)
    scaled = np.rint(a * 4)
    if dtype.kind == "b":
        return scaled % 2 == 1
    return (np.abs(scaled) if dtype.kind == "u" else scaled).astype(dtype)


def _converted(args, dtype, numeric):
    """Each inexact operand (each numeric one when ``numeric``, for ufuncs) in ``dtype``."""
    kinds = "fciub" if numeric else "fc"
    return [_cast(a, dtype) if isinstance(a, np.ndarray) and a.dtype.kind in kinds else a
            for a in args]


def _quiet(f, *args):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return f(*args)


_RTOL = {16: 1e-2, 32: 1e-4, 64: 1e-9}  # by the bits of a float or a complex part


def _agree(name, got, expected, values=True):
    """Assert that ``got`` (returned arrays, specs or avals) has ``expected``'s shapes and
    dtypes; arrays are compared by value too."""
    expected = [np.asarray(e) for e in tree_leaves(expected)]
    got = list(tree_leaves(got))
    assert len(got) == len(expected), f"{name}: {len(got)} results, NumPy gives {len(expected)}"
    for g, e in zip(got, expected):
        value = None if hasattr(g, "shape") and not isinstance(g, np.ndarray | np.generic) \
            else np.asarray(g)
        shape, dtype = (tuple(g.shape), np.dtype(str(g.dtype))) if value is None \
            else (value.shape, value.dtype)
        assert (shape, dtype) == (e.shape, e.dtype), (
            f"{name}: {dtype}{list(shape)}, NumPy gives {e.dtype}{list(e.shape)}")
        if value is not None and values:
            tol = _RTOL[np.finfo(e.dtype).bits] if e.dtype.kind in "fc" else 0
            np.testing.assert_allclose(value, e, rtol=tol, atol=tol, equal_nan=True,
                                       err_msg=f"{name}: staged values differ from NumPy's")


def _refuses(f, args) -> bool:
    try:
        _quiet(lambda: ad.stage(f, *args)(*args))
    except Exception:
        return True
    return False


def _dynamic_refuses(f, args) -> bool:
    try:
        _quiet(ad.jvp(f, tuple(range(len(args)))), *args,
               tangents=tuple(np.zeros_like(a, dtype=float) for a in args))
    except Exception:
        return True
    return False


def check_staged(f, args, what, abstract=None, values=True):
    """Stage ``f`` at ``args`` and compare with eager NumPy; ``abstract()`` gives the op's
    avals when ``f`` is one op. Returns whether NumPy accepted the call."""
    try:
        expected = _quiet(f, *args)
    except Exception as e:  # NumPy refuses: staging or the staged call must refuse too
        if what in VALUE_DEPENDENT_REFUSALS:
            assert _dynamic_refuses(f, args), f"{what}: dynamic tracing accepts ({e})"
        else:
            assert _refuses(f, args), f"{what}: staging accepts what NumPy refuses ({e})"
        return False
    if abstract is not None:
        _agree(f"{what}: abstract rule", abstract(), expected)
    try:
        program = _quiet(ad.stage, f, *args)
        result = _quiet(program, *args)
    except Exception as e:
        raise AssertionError(f"{what}: staging raises {type(e).__name__}: {e}, where NumPy "
                             "gives a result") from None
    _agree(f"{what}: output_specs", program.output_specs, expected)
    _agree(f"{what}: staged result", result, expected, values)
    return True


def _dtypes(i, exhaustive):
    return DTYPES if exhaustive else (*TRICKY, REST[i % len(REST)])


def _sweep(check, i, exhaustive):
    failures = []
    for dtype in _dtypes(i, exhaustive):
        try:
            check(dtype)
        except AssertionError as e:
            lines = [line for line in str(e).strip().splitlines() if line.strip()]
            failures.append(f"{dtype}: " + " | ".join(lines[:6]))
    assert not failures, "\n".join(failures)


# --- the op table ------------------------------------------------------------------------------

def _check_op(case, dtype):
    inexact = any(isinstance(a, np.ndarray) and a.dtype.kind in "fc" for a in case.build())
    args = _converted(case.build(), dtype, numeric=not inexact)

    def abstract():
        out = case.op.abstract(*[aval_of(a) for a in args], **case.attrs)
        return list(out) if case.op.multiple_results else out

    check_staged(lambda *a: case.op(*a, **case.attrs), args, case.name, abstract)


# ops computed by SciPy (their rows need it): the scipy.special and scipy.linalg families
_SCIPY_OPS = {name for name, op in ops.REGISTRY.items()
              if getattr(op.impl, "__module__", "") in ("advect.ops.special",
                                                        "advect.ops.matrix_functions")}


def test_every_op_has_a_sweep_row():
    # custom primitives that other tests and docstrings register are not Advect's ops
    builtin = {name for name, op in ops.REGISTRY.items() if getattr(op, "handle", None) is None}
    if importlib.util.find_spec("scipy") is None:  # the SciPy-backed ops have rows with SciPy
        builtin -= _SCIPY_OPS
    assert builtin - {c.op.name for c in OP_CASES} == UNSWEPT


@pytest.mark.parametrize("i", range(len(OP_CASES)), ids=lambda i: OP_CASES[i].name)
def test_op_dtypes(i):
    _sweep(lambda dtype: _check_op(OP_CASES[i], dtype), i, exhaustive=False)


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(OP_CASES)), ids=lambda i: OP_CASES[i].name)
def test_op_dtypes_exhaustive(i):
    _sweep(lambda dtype: _check_op(OP_CASES[i], dtype), i, exhaustive=True)


# --- the NumPy frontend ------------------------------------------------------------------------

def _sample(row):
    """``(f, args, numeric)``: a ufunc's operands are all data, a function's only its inexact
    ones (integer arguments there are indices, counts or masks)."""
    if row.category in ("ufunc", "scipy.special ufunc"):
        return row.target, ufunc_args(row.target), True
    if row.category == "ufunc method":
        return (*method_call(*row.target), True)
    if row.category == "function":
        return (*function_sample(row), False)
    return (*method_sample(row), False)


def _check_row(row, dtype):
    f, args, numeric = _sample(row)
    if any(isinstance(a, np.ndarray) and a.dtype.kind == "M" for a in args):
        return  # datetimes are not a staged dtype
    check_staged(f, _converted(args, dtype, numeric), row.name,
                 values=row.name not in UNSPECIFIED_VALUES)


@pytest.mark.parametrize("i", range(len(ROWS)), ids=lambda i: ROWS[i].name)
def test_numpy_dtypes(i):
    _sweep(lambda dtype: _check_row(ROWS[i], dtype), i, exhaustive=False)


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(ROWS)), ids=lambda i: ROWS[i].name)
def test_numpy_dtypes_exhaustive(i):
    _sweep(lambda dtype: _check_row(ROWS[i], dtype), i, exhaustive=True)


# --- rows that only dynamic transforms support (data-dependent shapes or dtypes) ---------------

DYNAMIC_ROWS = [r for r in support_catalog() if r.category != "array api" and r.dynamic
                and not r.staged and r.name not in (
                    "numpy.array2string", "numpy.array_repr", "numpy.array_str",  # text
                    "ndarray.tobytes", "ndarray.tolist",  # not arrays
                    "numpy.unique_values")]  # NumPy leaves the order unspecified


def _check_dynamic_row(row, dtype):
    f, args, numeric = _sample(row)
    args = _converted(args, dtype, numeric)
    try:
        expected = _quiet(f, *args)
    except Exception as e:
        try:
            _quiet(traced_call, f, args)
        except Exception:
            return
        raise AssertionError(f"{row.name}: tracing accepts what NumPy refuses ({e})") from None
    try:
        got = _quiet(traced_call, f, args)
    except Exception as e:
        raise AssertionError(f"{row.name}: tracing raises {type(e).__name__}: {e}, where NumPy "
                             "gives a result") from None
    _agree(f"{row.name}: traced result", got, expected)


@pytest.mark.parametrize("i", range(len(DYNAMIC_ROWS)), ids=lambda i: DYNAMIC_ROWS[i].name)
def test_dynamic_only_dtypes(i):
    _sweep(lambda dtype: _check_dynamic_row(DYNAMIC_ROWS[i], dtype), i, exhaustive=False)


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(DYNAMIC_ROWS)), ids=lambda i: DYNAMIC_ROWS[i].name)
def test_dynamic_only_dtypes_exhaustive(i):
    _sweep(lambda dtype: _check_dynamic_row(DYNAMIC_ROWS[i], dtype), i, exhaustive=True)


# --- Python scalars: weak operands (NEP 50) ---------------------------------------------------

SCALARS = (True, 3, 2.5, 1.5 - 0.5j)
BINARY = [r for r in ROWS if r.category in ("ufunc", "scipy.special ufunc") and r.target.nin == 2
          and r.target.__name__ not in ("matmul", "vecdot", "matvec", "vecmat")]


def _check_scalar(row, dtype, scalar, first):
    x = _converted(ufunc_args(row.target)[:1], dtype, numeric=True)[0]
    f = (lambda x: row.target(scalar, x)) if first else (lambda x: row.target(x, scalar))
    check_staged(f, [x], f"{row.name} with {scalar!r}")


@pytest.mark.parametrize("i", range(len(BINARY)), ids=lambda i: BINARY[i].name)
def test_python_scalar_operands(i):
    def check(dtype):  # one kind of Python scalar per row, rotating
        _check_scalar(BINARY[i], dtype, SCALARS[i % len(SCALARS)], first=False)
    _sweep(check, i, exhaustive=False)


@pytest.mark.slow
@pytest.mark.parametrize("i", range(len(BINARY)), ids=lambda i: BINARY[i].name)
def test_python_scalar_operands_exhaustive(i):
    def check(dtype):
        for scalar in SCALARS:
            for first in (False, True):
                _check_scalar(BINARY[i], dtype, scalar, first)
    _sweep(check, i, exhaustive=True)


# --- the reproductions of issue 10 -------------------------------------------------------------

def test_integer_true_division_is_float64():
    k = np.arange(4, dtype=np.int8)
    program = ad.stage(lambda k: k / 3, k)
    assert program.output_specs.dtype == "float64"
    assert program(k).dtype == np.float64


def test_a_cast_after_integer_division_is_kept():
    k = np.arange(4, dtype=np.int8)
    f = lambda k: (k / 3 * 1e5).astype(np.float16)  # noqa: E731
    with np.errstate(over="ignore"):
        expected = f(k)
        got = ad.stage(f, k)(k)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, expected)  # inf where float16 overflows


@pytest.mark.parametrize("dtype", [bool, np.int8, np.uint16, np.int64])
def test_fft_of_integers_is_complex128(dtype):
    x = np.arange(4).astype(dtype)
    program = ad.stage(np.fft.fft, x)
    assert program.output_specs.dtype == "complex128"
    np.testing.assert_allclose(program(x), np.fft.fft(x))


def test_square_of_bool_is_int8():
    b = np.array([True, False])
    assert ad.stage(np.square, b).output_specs.dtype == "int8"


def test_only_an_exact_astype_round_trip_cancels():
    big = np.array([2**53 + 1, 3], dtype=np.int64)
    f = lambda x: x.astype(np.float64).astype(np.int64)  # noqa: E731
    np.testing.assert_array_equal(ad.stage(f, big)(big), f(big))
    small = np.array([-7, 3], dtype=np.int32)
    program = ad.stage(f, small.astype(np.int64))
    np.testing.assert_array_equal(program(small.astype(np.int64)), small)
    exact = ad.stage(lambda x: x.astype(np.float64).astype(np.int32), small)
    assert "astype" not in exact.to_dot()

"""NumPy functions on traced arrays: one row per real invocation.

Each row is checked against NumPy's own result on the same data (traced inside a transform,
read back concretely) and, where differentiable, with ``check_grads`` to second order in both
modes. Rows live in this file and its siblings ``test_numpy_functions_*.py``; a coverage test
proves every translated function (outside linalg, fft and einsum) is exercised by some row.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

import advect as ad
from advect.core import Tracer
from advect.errors import TracingError
from advect.numpy import _functions
from advect.testing import check_grads

rng = np.random.default_rng(0)
# distinct values away from integers and from each other, so sorts, extremes, comparisons and
# bin edges do not flip under the small steps of finite differences
X = (rng.permutation(12).reshape(3, 4) * 0.3 + 0.15)
V = np.array([0.35, 1.9, -0.6, 1.25, 0.8])
W = np.array([1.45, -0.25, 0.65])
X3 = rng.permutation(24).reshape(2, 3, 4) * 0.2 - 2.35
XN = X.copy()
XN[0, 1] = XN[2, 3] = np.nan
CHOICES = np.array([[2, 0, 1, 3], [1, 1, 0, 2], [0, 3, 3, 1]])


@dataclass
class Case:
    name: str
    func: object
    args: tuple
    grad: bool = True
    order: int = 2
    rtol: float = 1e-10
    options: dict = field(default_factory=dict)


def C(name, func, *args, grad=True, order=2, rtol=1e-10, **options):
    return Case(name, func, args, grad, order, rtol, options)


def _inexact(args):
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind in "fc"]


def _readback(out):
    if isinstance(out, Tracer):
        return np.asarray(out._concrete())
    if isinstance(out, tuple) and hasattr(out, "_fields"):
        return type(out)(*map(_readback, out))
    if isinstance(out, tuple | list):
        return type(out)(map(_readback, out))
    return out


def traced_value(func, args):
    """``func(*args)`` with every float array argument traced by a forward-mode transform."""
    diff = _inexact(args)
    box = {}

    def inner(*xs):
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        box["out"] = _readback(func(*full))
        return xs[0]
    ad.jvp(inner, tuple(range(len(diff))))(*[args[i] for i in diff],
                                            tangents=tuple(np.ones_like(args[i]) for i in diff))
    return box["out"]


def assert_same(got, want, rtol, where="output"):
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want), where
        for k, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, rtol, f"{where}[{k}]")
        return
    if isinstance(want, np.ndarray | np.generic) and not isinstance(want, np.dtype):
        got = np.asarray(got)
        assert got.shape == np.shape(want), f"{where}: shape {got.shape} != {np.shape(want)}"
        assert got.dtype == want.dtype, f"{where}: dtype {got.dtype} != {want.dtype}"
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, equal_nan=True,
                                       err_msg=where)
        else:
            np.testing.assert_array_equal(got, want, err_msg=where)
        return
    if isinstance(got, np.ndarray) and got.ndim == 0 and not isinstance(want, np.ndarray):
        got = got.item()  # a traced 0-d answer stands for NumPy's Python scalar
    assert got == want or (want != want and got != got), f"{where}: {got!r} != {want!r}"


def run_value(case):
    with np.errstate(all="ignore"):
        want = case.func(*case.args)
        got = traced_value(case.func, case.args)
    assert_same(got, want, case.rtol)


def run_grads(case):
    diff = _inexact(case.args)

    def partial(*xs):
        full = list(case.args)
        for i, x in zip(diff, xs):
            full[i] = x
        return case.func(*full)
    check_grads(partial, [case.args[i] for i in diff], order=case.order)


def _copy_then(mutate):
    """A function that copies its first argument, mutates the copy and returns it."""
    def run(x, *rest):
        y = x.copy()
        assert mutate(y, *rest) is None  # NumPy's writing functions return None
        return y
    return run


CASES = [
    # --- creation -----------------------------------------------------------------------
    C("zeros_like_shape", lambda x: np.zeros_like(x, shape=(2, 5)) + x[0, 0], X),
    C("ones_like", lambda x: np.ones_like(x) * x, X),
    C("empty_like", lambda x: np.empty_like(x, dtype=np.float32).shape, X, grad=False),
    C("full_like_traced", lambda x: np.full_like(x, x[1, 2]), X),
    C("zeros_like", lambda x: np.zeros(3, like=x) + np.ones((2, 1), like=x) * x[0, :3], X),
    C("empty", lambda x: np.empty((2, 2), like=x).shape, X, grad=False),
    C("full", lambda x: np.full((2, 3), 2.5, like=x) * x[:2, :3], X),
    C("full_traced_fill", lambda x: np.full((2, 2), x[0, 0], like=x), X),
    C("eye", lambda x: np.eye(3, 4, k=1, like=x) * x, X),
    C("identity", lambda x: np.identity(3, like=x) @ x, X),
    C("tri", lambda x: np.tri(3, 4, -1, like=x) * x, X),
    C("array_like", lambda x: np.array([[1.0, 2.0]], like=x) * x[0, 0], X),
    C("asarray_like", lambda x: np.asarray([1.0, 2.0], like=x) + np.asanyarray([3.0], like=x),
      X, grad=False),
    # these three dispatch only through like= (NumPy converts positional arrays itself)
    C("ascontiguousarray", lambda x: np.ascontiguousarray(x, np.float32, like=x), X, order=1),
    C("asfortranarray", lambda x: np.asfortranarray([1.0, 2.0], like=x) * x[0, :2], X),
    C("require", lambda x: np.require(x, np.float64, "C", like=x), X),
    C("astype_function", lambda x: np.astype(x, np.float32), X, order=1),
    C("fromfunction", lambda x: np.fromfunction(lambda i, j: i * 3 + j, (2, 3), like=x) * x[0, 0],
      X),
    C("frombuffer", lambda x: np.frombuffer(b"\x00\x00\x80?\x00\x00\x00@", np.float32, like=x)
      * 1.0, X, grad=False),
    C("fromiter", lambda x: np.fromiter(range(3), float, like=x) + x[0, :3], X),
    C("fromstring", lambda x: np.fromstring("1 2 3", sep=" ", like=x) * x[1, :3], X),
    C("loadtxt", lambda x: np.loadtxt(["1 2", "3 4"], like=x) * x[:2, :2], X),
    C("genfromtxt", lambda x: np.genfromtxt(["1 2", "3 4"], like=x) * x[:2, :2], X),
    C("arange", lambda x: np.arange(2.0, 4.0, 0.5, like=x) * x[0], X),
    C("arange_traced_start", lambda x: np.arange(x[0, 0], 3.0, 0.5, like=x), X),
    C("linspace_traced", lambda x: np.linspace(x[0, 0], x[1, 1], 6), X),
    C("linspace_arrays", lambda x: np.linspace(x[0], x[1], 5, axis=1, endpoint=False), X),
    C("linspace_retstep", lambda x: np.linspace(x[0, 0], 4.0, 4, retstep=True), X),
    C("logspace", lambda x: np.logspace(x[0, 0], x[1, 0], 5, base=2.0), X),
    C("geomspace", lambda x: np.geomspace(x[0, 0], x[1, 0] + 3, 5), X),
    C("geomspace_axis", lambda x: np.geomspace(x[0], x[1] * 4, 3, axis=1), X),
    C("meshgrid", lambda x: np.meshgrid(x[0], x[1, :3]), X),
    C("meshgrid_ij_sparse", lambda x, v: np.meshgrid(x[0], x[1, :2], V, indexing="ij",
                                                  sparse=True), X, V),
    # --- joining --------------------------------------------------------------------------
    C("concatenate", lambda x: np.concatenate([x, x[:1] * 2], axis=0), X),
    C("concat_none", lambda x: np.concat([x, x[0]], axis=None), X),
    C("stack", lambda x: np.stack([x[0], x[1]], axis=1), X),
    C("hstack", lambda x, v: np.hstack([x[0], v]), X, V),
    C("vstack", lambda x: np.vstack([x[0], x]), X),
    C("row_stack", lambda x: np.vstack((x[0], x[1])), X),
    C("dstack", lambda x: np.dstack([x, x * 2]), X),
    C("column_stack", lambda x: np.column_stack([x[0], x[1:].T]), X),
    C("block", lambda x: np.block([[x[:2, :2], x[:2, 2:]], [x[2:, :2], x[2:, 2:]]]), X),
    C("block_1d", lambda x, w: np.block([x[0], w, 1.0]), X, W),
    C("append", lambda x: np.append(x, x[:1], axis=0), X),
    C("append_flat", lambda x, w: np.append(x, w), X, W),
    C("insert_scalar", lambda x: np.insert(x, 1, x[0, 0], axis=1), X),
    C("insert_sequence", lambda x, w: np.insert(x, [0, 2, 2], w, axis=1), X, W),
    C("insert_flat", lambda x, w: np.insert(x, 3, w), X, W),
    C("delete", lambda x: np.delete(x, [0, 2], axis=1), X),
    C("delete_slice", lambda x: np.delete(x, slice(1, None, 2)), X),
    # --- splitting ------------------------------------------------------------------------
    C("split", lambda x: np.split(x, 2, axis=1), X),
    C("split_indices", lambda x: np.split(x, [1, 3], axis=1), X),
    C("array_split", lambda x, v: np.array_split(v, 3), X, V),
    C("hsplit", lambda x: np.hsplit(x, [1]), X),
    C("vsplit", lambda x: np.vsplit(x, 3), X),
    C("dsplit", lambda x3: np.dsplit(x3, [1, 3]), X3),
    *([C("unstack", lambda x: np.unstack(x, axis=1), X)] if hasattr(np, "unstack") else []),
    # --- tiling, repeating, resizing -------------------------------------------------------
    C("tile", lambda x: np.tile(x, (2, 1, 2)), X),
    C("tile_int", lambda x: np.tile(x[0], 3), X),
    C("repeat", lambda x: np.repeat(x, 2, axis=0), X),
    C("repeat_counts", lambda x: np.repeat(x, [1, 0, 2, 1], axis=1), X),
    C("repeat_flat", lambda x: np.repeat(x, 2), X),
    C("resize", lambda x: np.resize(x, (5, 3)), X),
    C("trim_zeros", lambda x: np.trim_zeros(np.concatenate([[0.0, 0.0], x[0], [0.0]])), X),
    C("trim_zeros_front", lambda x: np.trim_zeros(np.concatenate([[0.0], x[0], [0.0]]), "f"), X),
    # --- axes and flips ----------------------------------------------------------------------
    C("reshape", lambda x: np.reshape(x, (2, -1)), X),
    C("ravel", lambda x: np.ravel(x), X),
    C("transpose", lambda x3: np.transpose(x3, (1, 2, 0)), X3),
    C("permute_dims", lambda x3: np.permute_dims(x3, (2, 0, 1)), X3),
    C("matrix_transpose", lambda x3: np.matrix_transpose(x3), X3),
    C("swapaxes", lambda x3: np.swapaxes(x3, 0, 2), X3),
    C("moveaxis", lambda x3: np.moveaxis(x3, [0, 1], [2, 0]), X3),
    C("rollaxis", lambda x3: np.rollaxis(x3, 2, 1), X3),
    C("squeeze", lambda x: np.squeeze(x[:1, None]), X),
    C("expand_dims", lambda x: np.expand_dims(x, (0, 3)), X),
    C("broadcast_to", lambda x: np.broadcast_to(x[0], (2, 4)), X),
    C("broadcast_arrays", lambda x: np.broadcast_arrays(x[:, :1], x[0]), X),
    C("atleast_1d", lambda x: np.atleast_1d(x[0, 0], x), X),
    C("atleast_2d", lambda x: np.atleast_2d(x[0]), X),
    C("atleast_3d", lambda x: np.atleast_3d(x[0], x), X),
    C("flip", lambda x: np.flip(x, 1), X),
    C("fliplr", lambda x: np.fliplr(x), X),
    C("flipud", lambda x: np.flipud(x), X),
    C("rot90", lambda x: np.rot90(x), X),
    C("rot90_k3", lambda x3: np.rot90(x3, 3, axes=(2, 0)), X3),
    C("rot90_k2", lambda x: np.rot90(x, 2), X),
    C("roll", lambda x: np.roll(x, (1, -2), axis=(0, 1)), X),
    C("roll_flat", lambda x: np.roll(x, 5), X),
    C("copy", lambda x: np.copy(x) * 2, X),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_matches_numpy(case):
    run_value(case)


@pytest.mark.parametrize("case", [c for c in CASES if c.grad], ids=lambda c: c.name)
def test_derivatives(case):
    run_grads(case)


def test_like_constructors_give_writable_traced_arrays():
    def f(x):
        y = np.zeros(3, like=x)
        y[1] = x[0] * 2
        z = np.array([1.0, 0.0], like=x)
        z[1] = x[1]
        return np.sum(y) + np.sum(z ** 2)
    x = np.array([0.5, 3.0])
    np.testing.assert_allclose(ad.grad(f)(x), [2.0, 6.0])


def test_dynamic_only_functions_read_data_or_refuse():
    assert np.nonzero in _functions.DYNAMIC_ONLY and np.unique in _functions.DYNAMIC_ONLY
    assert np.sort not in _functions.DYNAMIC_ONLY
    x = np.array([0.0, 1.5, 0.0, 2.0])
    got = traced_value(lambda x: np.nonzero(x), (x,))
    np.testing.assert_array_equal(got[0], [1, 3])


def test_unsupported_function_names_itself():
    with pytest.raises(TracingError, match="busday_count"):
        ad.grad(lambda x: np.busday_count(x, x).sum())(np.ones(2))


def test_writing_functions_refuse_inputs_and_plain_targets():
    from advect.errors import MutationError
    x = np.arange(4.0)
    with pytest.raises(MutationError, match="numpy.put"):
        ad.jvp(lambda x: np.put(x, [0], 1.0))(x, tangents=x)
    with pytest.raises(TracingError, match="numpy.copyto"):
        ad.jvp(lambda x: np.copyto(np.zeros(4), x))(x, tangents=x)


def test_staging_refuses_data_dependent_calls_by_name():
    with pytest.raises(TracingError, match="np.unique"):
        ad.stage(lambda x: np.unique(x), X)
    with pytest.raises(TracingError, match="bins='auto'"):
        ad.stage(lambda x: np.histogram(x, "auto")[0], X)


def test_bad_input_raises_named_errors():
    with pytest.raises(IndexError, match="numpy.take: index 20 is out of bounds"):
        traced_value(lambda x: np.take(x, [20]), (X,))
    with pytest.raises(ValueError, match="numpy.take: mode"):
        traced_value(lambda x: np.take(x, [0], mode="bad"), (X,))
    with pytest.raises(ValueError, match="method 'bad' is not a quantile method"):
        traced_value(lambda x: np.quantile(x, 0.5, method="bad"), (X,))
    with pytest.raises(ValueError, match="cross product"):
        traced_value(lambda x: np.cross(x, x), (X,))
    with pytest.raises(ValueError, match="quantiles must be in the range"):
        traced_value(lambda x: np.quantile(x, 1.5), (X,))
    with pytest.raises(ValueError, match="mode"):
        traced_value(lambda x: np.pad(x, 1, mode="nonsense"), (X,))
    with pytest.raises(ValueError, match="equal division"):
        traced_value(lambda x: np.split(x, 3, axis=1), (X,))

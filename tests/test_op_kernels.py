"""An op's ``kernel`` (the callable a staged plan resolves once per node) is a fast path of its
``impl``: for every op that has one, both give the same type, shape, dtype and bits, and leave
their operands alone; a plan that uses them computes what interpreting the graph computes."""

import numpy as np
import pytest

import advect as ad
from advect.core import REGISTRY
from advect.ops.indexing import index_key
from advect.staging.graph import evaluate
from advect.staging.plan import Plan

KERNEL_OPS = sorted(name for name, op in REGISTRY.items() if op.kernel is not None)

# basic indices as the frontend writes them: ints, (start, stop, step) slices, None (new axis)
INDICES = [
    ((3, 4), (1,)), ((3, 4), (-1 % 3, 2)), ((5,), ((4, None, -1),)), ((5,), ((1, 4, 2),)),
    ((2, 3), (None, 1)), ((2, 3), ((0, 2, 1), None, 0)), ((), ()), ((4,), (2,)),
    ((2, 3, 4), (1, (0, 3, 2))), ((3,), ((0, 0, 1),)),
]


def _same(a, b):
    assert type(a) is type(b), (type(a), type(b))
    assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b), strict=True)


def test_the_ops_with_kernels_are_the_indexing_ones():
    assert KERNEL_OPS == ["gather", "scatter_add"]  # each listed op is covered below


@pytest.mark.parametrize("shape, index", INDICES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_gather_kernel_is_its_impl(shape, index, dtype):
    op = REGISTRY["gather"]
    x = (np.arange(np.prod(shape, dtype=int)) + 1).astype(dtype).reshape(shape)
    _same(op.kernel(np, 1, index=index)(x), op.impl(np, x, index=index))


@pytest.mark.parametrize("shape, index", INDICES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_scatter_add_kernel_is_its_impl(shape, index, dtype):
    op = REGISTRY["scatter_add"]
    x = np.linspace(-1, 1, int(np.prod(shape, dtype=int))).astype(dtype).reshape(shape)
    v = np.asarray(REGISTRY["gather"].impl(np, x, index=index)) * 3 + 1
    before = x.copy()
    fast = op.kernel(np, 2, index=index)(x, v)
    _same(fast, op.impl(np, x, v, index=index))
    np.testing.assert_array_equal(x, before, strict=True)  # a new array, x untouched
    assert fast is not x and not np.shares_memory(fast, x)


def test_a_scalar_operand_scatters_like_impl():
    op = REGISTRY["scatter_add"]
    x = np.float64(2.0)  # a 0-d result of an earlier step may be a NumPy scalar
    _same(op.kernel(np, 2, index=())(x, 1.5), op.impl(np, x, 1.5, index=()))


def test_kernels_decline_index_arrays_and_other_providers():
    xp = pytest.importorskip("array_api_strict")
    for name in KERNEL_OPS:
        op = REGISTRY[name]
        n = 1 if name == "gather" else 2
        assert op.kernel(np, n + 1, index=("array",)) is None  # index arrays: impl
        assert op.kernel(xp, n, index=(0,)) is None


def test_an_unhashable_index_still_gives_its_key():
    assert index_key([0, (1, 3, 1)], ()) == (0, slice(1, 3, 1))
    assert index_key((0, (1, 3, 1)), ()) == (0, slice(1, 3, 1))


@pytest.mark.parametrize("seed", range(5))
def test_plans_with_kernels_compute_what_interpreting_computes(seed):
    rng = np.random.default_rng(seed)
    y0, k = rng.uniform(-1, 1, 3), rng.uniform(0.5, 2.0, ())

    def loss(y, k):
        z = y
        for _ in range(3):
            z = np.stack([z[1] * k, -np.sin(z[0]), z[-1] + z[::2].sum()])
        return np.sum(z[::-1] ** 2) + z[1:, None][0, 0]

    for program in (ad.stage(loss, y0, k), ad.grad(ad.stage(loss, y0, k), (0, 1))):
        planned = Plan(program.graph).run([y0, k])
        interpreted = evaluate(program.graph, [y0, k])
        for a, b in zip(planned, interpreted):
            _same(a, b)
    np.testing.assert_allclose(ad.grad(ad.stage(loss, y0, k))(y0, k), ad.grad(loss)(y0, k),
                               rtol=1e-12)

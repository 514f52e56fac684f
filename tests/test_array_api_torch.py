"""The Array API frontend on PyTorch CPU tensors (through array-api-compat's torch namespace):
every function of 2024.12 against torch's own result, and derivatives against NumPy's."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad
from advect.array_api._revisions import names
from advect.pytree import tree_flatten
from array_api_cases import CASES
from test_array_api import (
    PARAMS,
    ROWS,
    _inputs,
    _lookup,
    provider_and_numpy_tangents,
)

torch = pytest.importorskip("torch")
txp = pytest.importorskip("array_api_compat.torch")

REVISION = "2025.12"  # array-api-compat declares it for torch
SERVED = set(names(REVISION)) | {f"{e}.{n}" for e in ("linalg", "fft") for n in names(REVISION, e)}
TORCH_PARAMS = [p for p in PARAMS if p.values[0] in SERVED and ROWS[p.values[0]].dynamic]


def _host(value):
    if isinstance(value, torch.Tensor):
        return value.resolve_conj().numpy()
    return np.asarray(value)


def _lift(anchor, value):
    from advect import ops

    if isinstance(value, list):
        return [_lift(anchor, v) for v in value]
    if not isinstance(value, torch.Tensor):
        return value
    keep = ops.full_like(anchor, fill_value=True, shape=tuple(value.shape), dtype="bool")
    return ops.where(keep, value, value)


def _traced(name, args, kwargs):
    def f(anchor):
        ns = anchor.__array_namespace__(api_version=REVISION)
        return _lookup(ns, name)(*_lift(anchor, args), **kwargs)
    return ad.jvp(f)(txp.asarray(0.0), tangents=txp.asarray(1.0))[0]


@pytest.mark.parametrize("name,k", TORCH_PARAMS)
def test_torch_matches_torch(name, k):
    case = CASES[name][k]
    args, kwargs = _inputs(txp, case)
    try:
        expected = _lookup(txp, name)(*args, **kwargs)
    except NotImplementedError:
        pytest.skip(f"array-api-compat's torch namespace does not implement {name}")
    got = _traced(name, args, kwargs)
    got_leaves = tree_flatten(tuple(got) if isinstance(got, tuple) else got)[0]
    want_leaves = tree_flatten(tuple(expected) if isinstance(expected, tuple) else expected)[0]
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert isinstance(g, torch.Tensor) and g.dtype == w.dtype and g.shape == w.shape
        if name != "empty_like":
            np.testing.assert_allclose(_host(g), _host(w), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name,k", [p for p in TORCH_PARAMS
                                    if ROWS[p.values[0]].derivative == "rules"])
def test_torch_derivatives_match_numpy(name, k):
    got, want = provider_and_numpy_tangents(txp, name, CASES[name][k], REVISION, seed=1)
    for leaf in got:
        assert isinstance(leaf, torch.Tensor)
    if want is None:
        return  # NumPy does not serve this revision: nothing to compare with
    for g, w in zip(got, want):
        np.testing.assert_allclose(_host(g), np.asarray(w), rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_asarray_of_traced_items_is_on_the_provider_in_its_coercion_dtype(dtype):
    """``x.item()`` of a differentiated value is a traced Python scalar, which holds no
    provider: ``xp.asarray([v, 2.0])`` and ``xp.asarray(v)`` are torch arrays of torch's default
    dtype for Python floats, as eagerly (they were NumPy arrays, refused when they met x)."""
    def f(x, seen):
        xp = x.__array_namespace__() if hasattr(x, "__array_namespace__") else txp
        v = x[0].item()
        w, u, q = xp.asarray([v, 2.0]), xp.asarray([[v, 1], [2, v]]), xp.asarray(v)
        seen.append((w.dtype, u.dtype, q.dtype))
        return xp.sum(w * x) + xp.sum(u * x) + xp.sum(q * x)

    x = torch.tensor([1.0, 3.0], dtype=dtype)
    eager, traced = [], []
    f(x, eager)
    g = ad.grad(f)(x, traced)
    assert traced == eager == [(torch.float32,) * 3]
    # f = x0 (x0 + 2 x1) + (x0 x0 + x1 + 2 x0 + x0 x1) + x0 (x0 + x1)
    assert g.dtype == dtype and g.tolist() == [14.0, 5.0]


def test_vecdot_values_are_the_provider_s_own():
    """vecdot is one op whose implementation is the provider's vecdot (PyTorch's product and
    sum, NumPy's and array-api-strict's BLAS dot): values equal the eager call exactly."""
    a = torch.asarray(np.random.default_rng(8).normal(size=(6, 37)).astype(np.float32))

    def f(x):
        xp = x.__array_namespace__()
        return xp.vecdot(x, xp.flip(x, axis=0))

    expected = txp.vecdot(a, txp.flip(a, axis=0))
    assert bool((ad.vjp(f)(a)[0] == expected).all())
    assert bool((ad.stage(f, a)(a) == expected).all())


@pytest.mark.parametrize("keepdims", [False, True])
def test_products_over_every_axis_round_as_torch_s(keepdims):
    # PyTorch's product over all axes (axis=None) rounds unlike one over the axes named in turn
    x = torch.tensor((np.random.default_rng(0).uniform(-2, 2, (3, 3))
                      * (1 + 0.5j)).astype(np.complex64))
    f = lambda x: x.__array_namespace__().prod(x, keepdims=keepdims)
    expected = txp.prod(x, keepdims=keepdims)
    for got in (ad.stage(f, x)(x), ad.vjp(f)(x)[0]):
        assert torch.equal(got, expected)

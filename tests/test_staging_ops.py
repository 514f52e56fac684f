"""Every row of op_cases through the staged lifetime: staged equals eager, save/load equals
staged bit for bit, and the staged pullback (vjp_program) equals the dynamic one."""

import json

import numpy as np
import pytest

import advect as ad
from advect.dtypes import STAGED_DTYPES
from advect.pytree import tree_flatten, tree_map
from op_cases import CASES


def _staged_inputs(values):
    if any(isinstance(v, np.ndarray) and v.dtype not in STAGED_DTYPES for v in values):
        pytest.skip("an operand's dtype is not a staged dtype (spec 000)")
    return tuple(i for i, v in enumerate(values) if isinstance(v, np.ndarray))


def _function(case, values, positions):
    def f(*xs):
        full = list(values)
        for i, x in zip(positions, xs):
            full[i] = x
        return case.op(*full, **case.attrs)
    return f


def _same(got, want):
    got_leaves, want_leaves = tree_flatten(got)[0], tree_flatten(want)[0]
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_staged_and_restored_equal_eager(case):
    values = case.build()
    positions = _staged_inputs(values)
    f = _function(case, values, positions)
    inputs = [values[i] for i in positions]
    program = ad.stage(f, *inputs)
    with np.errstate(all="ignore"):
        expected = case.op(*values, **case.attrs)
        _same(program(*inputs), expected)
        restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
        _same(restored(*inputs), program(*inputs))


def _cotangent(out, rng):
    def one(o):
        if type(o) is float:  # a Python scalar output (python_scalar): a weak cotangent slot
            return float(rng.standard_normal())
        o = np.asarray(o)
        if o.dtype.kind == "c":
            return (rng.standard_normal(o.shape) + 1j * rng.standard_normal(o.shape)).astype(
                o.dtype)
        if o.dtype.kind == "f":
            return rng.standard_normal(o.shape).astype(o.dtype)
        return np.zeros(o.shape, o.dtype)
    return tree_map(one, out)


@pytest.mark.parametrize("case", [c for c in CASES if not c.op.nondiff], ids=lambda c: c.name)
def test_staged_pullback_equals_dynamic_pullback(case):
    values = case.build()
    diff = case.diff if case.diff is not None else tuple(
        i for i, v in enumerate(values) if isinstance(v, np.ndarray) and v.dtype.kind in "fc")
    positions = _staged_inputs(values)
    if not diff or not set(diff) <= set(positions):
        pytest.skip("nothing to differentiate among the staged inputs")
    f = _function(case, values, positions)
    inputs = [values[i] for i in positions]
    argnums = tuple(positions.index(i) for i in diff)
    cotangent = _cotangent(case.op(*values, **case.attrs), np.random.default_rng(0))
    _, pullback = ad.vjp(f, argnums)(*inputs)
    expected = pullback(cotangent)
    staged = ad.vjp_program(ad.stage(f, *inputs), argnums=argnums)
    got = staged(*inputs, cotangent=cotangent)
    for g, e in zip(tree_flatten(got)[0], tree_flatten(expected)[0]):
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-12)

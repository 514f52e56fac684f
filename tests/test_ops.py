"""Every row of op_cases through the derivative laws, and abstract vs concrete."""

import numpy as np
import pytest

from advect.core import REGISTRY
from advect.dtypes import aval_of
from advect.staging.attrs import KINDS, OTHER_KINDS
from advect.testing import check_grads
from op_cases import CASES


def _split(case):
    values = case.build()
    diff = case.diff
    if diff is None:
        diff = tuple(i for i, v in enumerate(values)
                     if isinstance(v, np.ndarray) and v.dtype.kind in "fc")
    return values, diff


def _partial(case, values, diff):
    def f(*xs):
        full = list(values)
        for i, x in zip(diff, xs):
            full[i] = x
        return case.op(*full, **case.attrs)
    return f


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_derivatives(case):
    if case.op.nondiff:
        pytest.skip("zero derivative by definition")
    values, diff = _split(case)
    check_grads(_partial(case, values, diff), [values[i] for i in diff], order=case.order)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_abstract_matches_impl(case):
    values = case.build()
    out = case.op(*values, **case.attrs)
    expected = case.op.abstract(*[aval_of(v) for v in values], **case.attrs)
    outs = out if case.op.multiple_results else (out,)
    avals = expected if case.op.multiple_results else (expected,)
    for o, a in zip(outs, avals):
        assert tuple(np.shape(o)) == a.shape
        assert np.asarray(o).dtype == a.dtype


@pytest.mark.parametrize("case", [c for c in CASES if c.op.allocates], ids=lambda c: c.name)
def test_allocating_ops_return_new_memory(case):
    # a staged plan writes into what an allocating op returns: it must be no operand's memory
    values = case.build()
    out = case.op(*values, **case.attrs)
    for o in out if case.op.multiple_results else (out,):
        for v in values:
            assert not (isinstance(o, np.ndarray) and isinstance(v, np.ndarray)
                        and np.shares_memory(o, v))


def test_every_attr_names_a_known_kind():
    for name, op in REGISTRY.items():
        for attr, kind in op.attrs.items():
            assert kind.rstrip("?") in KINDS or kind in OTHER_KINDS, (name, attr, kind)


@pytest.mark.parametrize("case", [c for c in CASES if c.attrs], ids=lambda c: c.name)
def test_case_attrs_pass_their_kinds(case):
    # what the frontends pass is what a loaded program may hold: the record's kinds accept it
    avals = [aval_of(v) for v in case.build()]
    for attr, value in case.attrs.items():
        kind = case.op.attrs[attr].rstrip("?")
        assert KINDS[kind](value, avals, case.attrs) is None, (attr, value)

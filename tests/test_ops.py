"""Every row of op_cases through the derivative laws, and abstract vs concrete."""

import numpy as np
import pytest

from advect.dtypes import aval_of
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

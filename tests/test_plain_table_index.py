"""A plain array indexed by a staged index: refused (NumPy asks the index for its data) with
the way out, which stages and differentiates like the eager lookup."""

import numpy as np
import pytest

import advect as ad

TABLE = np.arange(12.0).reshape(4, 3)


@pytest.mark.parametrize("index", [1, np.int64(2), np.array([0, 2])], ids=["int", "np", "array"])
def test_plain_table_refusal_says_how(index):
    def lookup(i, w):
        return np.sum(TABLE[i] * w)

    with pytest.raises(ad.TracingError, match=r"np.asarray\(table, like=x\)\[index\]"):
        ad.stage(lookup, index, np.ones(3))


def test_np_take_from_plain_table_says_how():
    def lookup(i, w):
        return np.sum(np.take(TABLE, i, axis=0) * w)

    with pytest.raises(ad.TracingError, match=r"like=x"):
        ad.stage(lookup, np.array([0, 2]), np.ones(3))


@pytest.mark.parametrize("index", [1, np.array([0, 2, 2])], ids=["int", "array"])
def test_the_traced_table_stages_like_the_eager_lookup(index):
    def lookup(i, w):
        return np.sum(np.asarray(TABLE, like=w)[i] * w ** 2)

    w = np.array([0.5, -1.0, 2.0])
    program = ad.stage(lookup, index, w)
    np.testing.assert_allclose(program(index, w), lookup(index, w))
    np.testing.assert_allclose(ad.grad(program, argnums=1)(index, w),
                               ad.grad(lookup, argnums=1)(index, w))
    np.testing.assert_allclose(ad.grad(lookup, argnums=1)(index, w),
                               2 * w * np.sum(np.atleast_2d(TABLE[index]), axis=0))

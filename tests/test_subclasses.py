"""ndarray subclasses that change what operations mean (masked arrays, np.matrix, others) are
refused with a TypeError naming the subclass and what to pass instead, in dynamic transforms and
staged calls; a memmap (storage only) passes (issue 10 item 7)."""

import warnings

import numpy as np
import pytest

import advect as ad

MASKED = np.ma.masked_array([1.0, 2.0, 3.0, 4.0], mask=[0, 1, 0, 0])
with warnings.catch_warnings():
    warnings.simplefilter("ignore", PendingDeprecationWarning)  # np.matrix is not recommended
    MATRIX = np.matrix(np.arange(12.0).reshape(3, 4))


class Tagged(np.ndarray):
    """A user subclass that carries metadata NumPy propagates and Advect would drop."""


TAGGED = np.arange(4.0).view(Tagged)

SUBCLASSES = {
    "masked": (MASKED, r"np\.ma\.MaskedArray.*m\.filled\(value\).*np\.asarray\(m\)"),
    "matrix": (MATRIX, r"np\.matrix.*np\.asarray\(m\)"),
    "other": (TAGGED, r"Tagged.*np\.asarray\(x\)"),
}


def _loss(x):
    return np.sum(x ** 2)


def _dynamic(value):
    return {
        "grad": lambda: ad.grad(_loss)(value),
        "value_and_grad": lambda: ad.value_and_grad(_loss)(value),
        "vjp": lambda: ad.vjp(_loss)(value),
        "jvp": lambda: ad.jvp(_loss)(value, tangents=np.ones(value.shape)),
        "jvp_tangent": lambda: ad.jvp(_loss)(np.asarray(value), tangents=value),
        "linearize": lambda: ad.linearize(_loss, value),
        "jacobian": lambda: ad.jacobian(lambda x: x * 2.0)(value),
        "hessian": lambda: ad.hessian(_loss)(value),
        "hessian_diag": lambda: ad.hessian_diag(_loss)(value),
        "hvp": lambda: ad.hvp(_loss)(value, vectors=np.ones(value.shape)),
        "constant": lambda: ad.grad(lambda x: np.sum(x * value))(np.ones(value.shape)),
        "constant_ufunc": lambda: ad.grad(
            lambda x: np.sum(np.multiply(value, x)))(np.ones(value.shape)),
    }


DYNAMIC = sorted(_dynamic(MASKED))


@pytest.mark.parametrize("transform", DYNAMIC)
@pytest.mark.parametrize("kind", sorted(SUBCLASSES))
def test_dynamic_transforms_refuse_subclasses(kind, transform):
    value, pattern = SUBCLASSES[kind]
    with pytest.raises(TypeError, match=pattern):
        _dynamic(value)[transform]()


def _staged(value):
    plain = np.asarray(value)
    program = ad.stage(_loss, plain)
    return {
        "example": lambda: ad.stage(lambda m: np.sum(m, axis=0), value),
        "example_in_tree": lambda: ad.stage(lambda d: _loss(d["m"]), {"m": value}),
        "specs_call": lambda: ad.stage(_loss, specs=(ad.ArraySpec(plain.shape, "float64"),))(
            value),
        "call": lambda: program(value),
        "staged_grad_call": lambda: ad.grad(program)(value),
        "captured_constant": lambda: ad.stage(lambda x: x * value, plain),
    }


STAGED = sorted(_staged(MASKED))


@pytest.mark.parametrize("use", STAGED)
@pytest.mark.parametrize("kind", sorted(SUBCLASSES))
def test_staging_refuses_subclasses(kind, use):
    value, pattern = SUBCLASSES[kind]
    with pytest.raises(TypeError, match=pattern):
        _staged(value)[use]()


def test_the_issue_reproductions():
    # the mask used to be dropped: value_and_grad(f)(m) and f(m) differed
    with pytest.raises(TypeError, match="mask"):
        ad.value_and_grad(_loss)(MASKED)
    # a staged np.sum(m, axis=0) returned shape (1, 4) against output specs (4,)
    with pytest.raises(TypeError, match="np.matrix"):
        ad.stage(lambda m: np.sum(m, axis=0), MATRIX)


def test_the_suggested_arrays_work():
    filled = MASKED.filled(0.0)
    np.testing.assert_allclose(ad.grad(_loss)(filled), 2 * filled)
    np.testing.assert_allclose(ad.grad(_loss)(np.asarray(MATRIX)), 2 * np.asarray(MATRIX))
    program = ad.stage(lambda m: np.sum(m, axis=0), np.asarray(MATRIX))
    assert program(np.asarray(MATRIX)).shape == (4,)


def test_memmap_passes(tmp_path):
    mm = np.memmap(tmp_path / "x.dat", dtype=np.float64, mode="w+", shape=(3,))
    mm[:] = [1.0, 2.0, 3.0]
    np.testing.assert_allclose(ad.grad(_loss)(mm), [2.0, 4.0, 6.0])
    np.testing.assert_allclose(ad.stage(_loss, mm)(mm), 14.0)


def test_subclasses_outside_transforms_are_left_to_numpy():
    # no tracer involved: NumPy's own semantics apply, Advect does not interfere
    assert np.sum(MASKED) == 8.0
    assert np.sum(MATRIX, axis=0).shape == (1, 4)

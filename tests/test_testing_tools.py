"""advect.testing: user-chosen seeds for check_primitive, several steps for check_gradient, and
failures that name the custom primitives on the failing path."""

import numpy as np
import pytest

import advect as ad
from advect.testing import check_gradient, check_grads, check_primitive

X = np.array([0.5, 1.5])


def _cube(name, factor=3.0):
    @ad.primitive(name=name)
    def cube(x):
        return x ** 3

    @cube.def_jvp
    def _(output, primals, tangents):
        return tangents[0] * (factor * primals[0] ** 2)  # tracer first: strict arrays do not defer

    @cube.def_abstract
    def _(x):
        return x.spec

    return cube


def test_check_primitive_with_given_real_and_complex_seeds():
    cube = _cube("test_testing.cube")
    ran = check_primitive(cube, primals=(X,), tangents=(np.array([1.0, -2.0]),),
                          cotangent=np.array([0.25, 4.0]))
    assert "jvp" in ran and "transpose" in ran
    z = np.array([0.5 + 0.25j, -1.0 + 1.0j])
    ran = check_primitive(cube, primals=(z,), tangents=(np.array([1j, 1.0]),),
                          cotangent=np.array([1.0 - 1j, 0.5j]))
    assert "complex" in ran


def test_check_primitive_with_array_api_strict_values():
    strict = pytest.importorskip("array_api_strict")
    cube = _cube("test_testing.cube_strict")
    ran = check_primitive(cube, primals=(strict.asarray(X),),
                          tangents=(strict.asarray([1.0, 2.0]),),
                          cotangent=strict.asarray([1.0, -1.0]), check=("jvp", "transpose"))
    assert ran == ("jvp", "transpose")


def test_check_primitive_tangents_must_match_the_primals():
    cube = _cube("test_testing.cube_mismatch")
    with pytest.raises(ValueError, match="one pytree"):
        check_primitive(cube, primals=(X,), tangents=(X, X))


def test_a_wrong_rule_is_named_in_the_failure():
    wrong = _cube("test_testing.wrong_cube", factor=2.0)
    with pytest.raises(AssertionError, match="test_testing.wrong_cube"):
        check_primitive(wrong, primals=(X,), check=("jvp",))
    with pytest.raises(AssertionError, match="custom primitives on the failing path: "
                                             "test_testing.wrong_cube"):
        check_grads(lambda x: np.sin(wrong(x)), (X,), order=1)
    with pytest.raises(AssertionError, match="test_testing.wrong_cube"):
        check_gradient(lambda x: wrong(x) * 2.0, X)


def test_check_gradient_tries_each_epsilon():
    f = lambda x: np.sin(1e3 * x)  # a large step is too coarse, a small one is right
    with pytest.raises(AssertionError, match="eps=0.1"):
        check_gradient(f, X, eps=0.1)
    check_gradient(f, X, epsilons=(0.1, 1e-7))
    with pytest.raises(ValueError, match="epsilons"):
        check_gradient(f, X, epsilons=())

"""Custom primitives, completed: default names, reserved names, residuals with release exactly
once, active_input_indices, checked staged replay, closure-captured tracers refused."""

import gc

import numpy as np
import pytest

import advect as ad

A = np.array([[3.0, 1.0], [1.0, 2.0]])
B = np.array([1.0, -1.0])


def _solver(tag, releases):
    @ad.primitive(name=f"test_contract.solve_{tag}", residual=True)
    def solve(a, b):
        inverse = np.linalg.inv(a)
        return ad.PrimitiveResult(inverse @ b, residual=inverse,
                                  release=lambda: releases.append(tag))

    @solve.def_transpose
    def _(ct, primals, output, *, residual):
        return None, residual.T @ ct

    return solve


def module_level(x):
    return x * 2


def test_default_name_is_module_and_qualname():
    handle = ad.primitive(module_level)
    assert handle.name == f"{__name__}.module_level"

    @ad.primitive
    def inner(x):
        return x + 1

    assert inner.name.endswith("test_default_name_is_module_and_qualname.<locals>.inner")
    np.testing.assert_array_equal(inner(np.ones(2)), [2.0, 2.0])


def test_advect_names_are_reserved():
    with pytest.raises(ValueError, match="reserved"):
        ad.primitive(lambda x: x, name="advect.mine")


def test_residual_reaches_the_transpose_and_is_released_once_per_call():
    releases = []
    solve = _solver("grad", releases)
    g = ad.grad(lambda b: np.sum(solve(A, b) ** 2))(B)
    x = np.linalg.solve(A, B)
    np.testing.assert_allclose(g, np.linalg.solve(A.T, 2 * x))
    assert releases == ["grad"]
    solve(A, B)  # a plain call releases at once
    assert releases == ["grad", "grad"]


def test_release_when_the_pullback_is_applied_closed_or_dropped():
    releases = []
    solve = _solver("maps", releases)
    _, pullback = ad.vjp(lambda b: solve(A, b))(B)
    assert releases == []  # the pullback may still need it
    pullback(np.ones(2))
    assert releases == ["maps"]
    _, pullback = ad.vjp(lambda b: solve(A, b))(B)
    pullback.close()
    assert releases == ["maps"] * 2
    _, linear = ad.linearize(lambda b: solve(A, b), B)
    linear.pullback(np.ones(2))
    linear.pullback(np.ones(2))  # reusable: still held
    assert releases == ["maps"] * 2
    linear.close()
    assert releases == ["maps"] * 3
    _, pullback = ad.vjp(lambda b: solve(A, b))(B)
    del pullback
    gc.collect()
    assert releases == ["maps"] * 4


def test_release_on_failure_and_in_forward_mode():
    releases = []
    solve = _solver("fail", releases)

    def f(b):
        solve(A, b)
        raise KeyError("later")

    with pytest.raises(KeyError):
        ad.grad(f)(B)
    gc.collect()
    assert releases == ["fail"]
    with pytest.raises(ad.NoJVPError):  # only a transpose rule: no forward mode
        ad.jvp(lambda b: solve(A, b))(B, tangents=np.ones(2))
    assert releases == ["fail"] * 2


def test_staging_runs_forward_and_refuses_derivatives_needing_the_residual():
    releases = []
    solve = _solver("stage", releases)

    @solve.def_abstract
    def _(a, b):
        return b.spec

    program = ad.stage(lambda b: solve(A, b), B)
    np.testing.assert_allclose(program(B), np.linalg.solve(A, B))
    assert releases == ["stage"]  # the replay released its residual at once
    with pytest.raises(ad.TracingError, match="residual"):
        ad.grad(ad.stage(lambda b: np.sum(solve(A, b)), B))


def test_a_residual_primitive_must_return_a_primitive_result_and_take_residual():
    bad = ad.primitive(lambda x: x * 2, name="test_contract.no_result", residual=True)
    with pytest.raises(TypeError, match="PrimitiveResult"):
        bad(np.ones(2))
    with pytest.raises(TypeError, match="residual"):
        bad.def_transpose(lambda ct, primals, output: (ct,))
    plain = ad.primitive(lambda x: ad.PrimitiveResult(x, 1), name="test_contract.plain")
    with pytest.raises(TypeError, match="residual=True"):
        plain(np.ones(2))


def test_transpose_rules_may_take_active_input_indices():
    seen = []

    @ad.primitive(name="test_contract.scaled_add")
    def scaled_add(x, y):
        return 2 * x + 3 * y

    @scaled_add.def_transpose
    def _(ct, primals, output, *, active_input_indices):
        seen.append(active_input_indices)
        return (2 * ct if 0 in active_input_indices else None,
                3 * ct if 1 in active_input_indices else None)

    gx = ad.grad(lambda x: np.sum(scaled_add(x, B)))(B)
    np.testing.assert_allclose(gx, [2.0, 2.0])
    gx, gy = ad.grad(lambda x, y: np.sum(scaled_add(x, y)), argnums=(0, 1))(B, B)
    np.testing.assert_allclose(gy, [3.0, 3.0])
    assert seen == [(0,), (0, 1)]


def test_staged_replay_checks_outputs_against_the_abstract_rule():
    @ad.primitive(name="test_contract.liar")
    def liar(x):
        return np.concatenate([x, x])

    @liar.def_abstract
    def _(x):
        return x.spec  # wrong: the implementation doubles the length

    program = ad.stage(lambda x: liar(x) * 1.0, B)
    with pytest.raises(ValueError, match="test_contract.liar"):
        program(B)


def test_a_tracer_captured_by_closure_is_refused():
    captured = {}

    @ad.primitive(name="test_contract.closure")
    def closure(x):
        return x * captured["y"]

    @closure.def_jvp
    def _(output, primals, tangents):
        return tangents[0] * captured["y"]

    def f(y):
        captured["y"] = y
        return np.sum(closure(np.ones(2)))

    with pytest.raises(ad.TracingError, match="closure"):
        ad.grad(f)(B)

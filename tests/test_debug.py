"""advect.debug: source locations on errors and tracer reprs; NaN/inf detection by phase."""

import inspect
import sys
import threading

import numpy as np
import pytest

import advect as ad
from advect import core


def _line() -> int:
    """The caller's line number."""
    return inspect.currentframe().f_back.f_lineno


def _mismatched(x):
    return np.sum(x @ np.ones((3, 2)))  # x has 2 entries: the matmul fails


def test_errors_inside_debug_name_the_operation_and_the_user_line():
    line = inspect.getsourcelines(_mismatched)[1] + 1
    with ad.debug(), pytest.raises(ValueError) as info:
        ad.grad(_mismatched)(np.ones(2))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "'matmul'" in notes
    assert f"test_debug.py:{line} in _mismatched" in notes


def test_errors_outside_debug_carry_no_location():
    with pytest.raises(ValueError) as info:
        ad.grad(_mismatched)(np.ones(2))
    assert not getattr(info.value, "__notes__", [])


def test_tracer_repr_shows_where_it_was_computed_only_inside_debug():
    seen = []

    def f(x):
        y = np.sin(x); seen.append((repr(y), _line()))  # noqa: E702
        return np.sum(y)

    with ad.debug():
        ad.grad(f)(np.ones(2))
    ad.grad(f)(np.ones(2))
    (inside, line), (outside, _) = seen
    assert inside.endswith(f"test_debug.py:{line} in f)")
    assert inside.startswith("JVPTracer(float64[2], at ")
    assert outside == "JVPTracer(float64[2])"


def test_primal_nan_names_the_op_phase_and_line():
    def f(x):
        return np.sum(np.log(x - 1.0))  # log(0) = -inf at x = 1
    line = inspect.getsourcelines(f)[1] + 1
    with ad.debug(numerics=True), pytest.raises(ad.NumericsError) as info, \
            np.errstate(divide="ignore"):
        ad.grad(f)(np.array([1.0, 2.0]))
    error = info.value
    assert (error.op, error.phase) == ("log", "primal")
    assert error.location.endswith(f"test_debug.py:{line} in f")
    assert "inf in the primal value of operation 'log'" in str(error)


def test_forward_mode_tangent_inf_is_a_jvp_error():
    def f(x):
        return np.sqrt(x)  # d sqrt(x) = dx / (2 sqrt(x)) is infinite at 0
    with ad.debug(numerics=True), pytest.raises(ad.NumericsError) as info, \
            np.errstate(divide="ignore"):
        ad.jvp(f)(np.array([4.0, 0.0]), tangents=np.ones(2))
    assert (info.value.op, info.value.phase) == ("sqrt", "JVP")


def test_reverse_mode_cotangent_inf_is_a_vjp_error_named_by_the_user_op():
    def f(x):
        return np.sum(np.sqrt(x))
    line = inspect.getsourcelines(f)[1] + 1
    with ad.debug(numerics=True), pytest.raises(ad.NumericsError) as info, \
            np.errstate(divide="ignore"):
        ad.grad(f)(np.array([4.0, 0.0]))
    error = info.value
    assert (error.op, error.phase) == ("sqrt", "VJP")
    assert error.location.endswith(f"test_debug.py:{line} in f")


def test_nan_in_a_checkpointed_block_is_found_during_recomputation():
    block = ad.checkpoint(lambda x: np.sqrt(x) * 2.0)
    with ad.debug(numerics=True), pytest.raises(ad.NumericsError) as info, \
            np.errstate(divide="ignore"):
        ad.grad(lambda x: np.sum(block(x)))(np.array([0.0]))
    assert (info.value.op, info.value.phase) == ("sqrt", "VJP")


def test_without_numerics_non_finite_values_pass():
    with ad.debug(), np.errstate(divide="ignore"):
        g = ad.grad(lambda x: np.sum(np.sqrt(x)))(np.array([4.0, 0.0]))
    np.testing.assert_array_equal(g, [0.25, np.inf])


def test_innermost_context_decides_numerics_and_hooks_leave_with_the_last():
    assert core.debug_hooks is None
    with ad.debug(numerics=True):
        assert core.debug_hooks is not None
        with ad.debug(numerics=False), np.errstate(divide="ignore"):
            ad.grad(lambda x: np.sum(np.sqrt(x)))(np.array([0.0]))
        with pytest.raises(ad.NumericsError), np.errstate(divide="ignore"):
            ad.grad(lambda x: np.sum(np.sqrt(x)))(np.array([0.0]))
    assert core.debug_hooks is None


def test_debug_is_thread_local():
    inside = threading.Event()
    done = threading.Event()
    results = {}

    def other_thread():
        inside.wait(5)
        with np.errstate(divide="ignore"):  # not in debug: no NumericsError, no location
            results["grad"] = ad.grad(lambda x: np.sum(np.sqrt(x)))(np.array([0.0]))
            try:
                ad.grad(_mismatched)(np.ones(2))
            except ValueError as e:
                results["notes"] = getattr(e, "__notes__", [])
        done.set()

    thread = threading.Thread(target=other_thread)
    thread.start()
    with ad.debug(numerics=True):
        inside.set()
        done.wait(5)
    thread.join()
    assert results["grad"][0] == np.inf
    assert results["notes"] == []


def test_results_inside_debug_equal_results_outside():
    def f(x):
        return np.sum(np.tanh(x) ** 2 * np.exp(-x))
    x = np.linspace(-1.0, 1.0, 5)
    with ad.debug(numerics=True):
        inside = ad.hessian(f)(x)
    np.testing.assert_allclose(inside, ad.hessian(f)(x), rtol=1e-14)


def test_long_debug_sessions_forget_released_tapes_but_not_live_ones(monkeypatch):
    module = sys.modules["advect.debug"]
    monkeypatch.setattr(module, "_PRUNE_AT", 50)

    def step(x):
        return np.sum(np.sin(x) * np.cos(x))
    with ad.debug(numerics=True), np.errstate(divide="ignore"):
        module._state.prune_at = 50
        _, pullback = ad.vjp(lambda x: np.sqrt(x) * 2.0)(np.array([1.0, 0.0]))
        for _ in range(100):
            ad.grad(step)(np.ones(3))
        assert len(module._state.origins) < 100  # about 4 tape variables per step
        with pytest.raises(ad.NumericsError) as info:
            pullback(np.ones(2))  # its tape is alive: its origins were kept
    assert info.value.op == "sqrt"

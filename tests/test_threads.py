"""Traces are local to the call that creates them: threads differentiating at once do not mix;
a Pullback or LinearMap shared by threads behaves as if its applications ran one at a time."""

import dis
import functools
import importlib
import inspect
import sys
import threading
import time

import numpy as np
import pytest

import advect as ad


def _run_concurrently(jobs, rounds=40):
    """Run each job ``rounds`` times in its own thread, all starting together."""
    barrier = threading.Barrier(len(jobs))
    results = [[] for _ in jobs]
    failures = []

    def worker(k, job):
        try:
            barrier.wait()
            for _ in range(rounds):
                results[k].append(job())
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=worker, args=(k, job)) for k, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures
    return results


def test_two_threads_differentiating_different_functions_both_get_correct_results():
    x = np.linspace(-1.0, 1.0, 200)
    y = np.linspace(0.5, 2.0, 200)

    def sine_loss():
        return ad.grad(lambda x: np.sum(np.sin(x) ** 2))(x)

    def cubic_hessian():
        return ad.hessian_diag(lambda y: np.sum(y ** 3 * np.log(y)))(y)

    sines, cubics = _run_concurrently([sine_loss, cubic_hessian])
    for g in sines:
        np.testing.assert_allclose(g, 2 * np.sin(x) * np.cos(x), rtol=1e-12)
    for h in cubics:
        np.testing.assert_allclose(h, 6 * y * np.log(y) + 5 * y, rtol=1e-10)


def test_threads_with_mutation_and_nesting():
    x = np.arange(1.0, 5.0)

    def mutating():
        def f(x):
            y = x.copy()
            v = y[1:3]
            v *= x[0]
            return np.sum(y ** 2)
        return ad.grad(f)(x)

    def nested():
        return ad.grad(lambda s: s * ad.grad(lambda t: s * t ** 2)(3.0))(2.0)

    expected = np.array([2 * x[0] * (1 + x[1] ** 2 + x[2] ** 2), 2 * x[1] * x[0] ** 2,
                         2 * x[2] * x[0] ** 2, 2 * x[3]])
    mutations, nests = _run_concurrently([mutating, nested])
    for g in mutations:
        np.testing.assert_allclose(g, expected)
    assert all(n == 24.0 for n in nests)  # d/ds [s * 6 s] = 12 s


# --- Pullback and LinearMap across threads (issue 12 item 4) ----------------------------------

X = np.linspace(-1.0, 1.0, 20_000)


def _chain(x):
    for _ in range(20):  # a tape long enough for two threads to overlap in the reverse pass
        x = np.sin(x) * 1.1
    return x


def _expected_chain_gradient(x):
    d = np.ones_like(x)
    for _ in range(20):
        d = d * np.cos(x) * 1.1
        x = np.sin(x) * 1.1
    return d


def _race(jobs, *args) -> list:
    """Run ``job(*args)`` for each job in threads released together; each outcome is
    ("ok", value) or ("error", exception)."""
    barrier = threading.Barrier(len(jobs))
    outcomes = [None] * len(jobs)

    def worker(k, job):
        barrier.wait()
        try:
            outcomes[k] = ("ok", job(*args))
        except BaseException as exc:  # compared by the caller
            outcomes[k] = ("error", exc)

    threads = [threading.Thread(target=worker, args=(k, job)) for k, job in enumerate(jobs)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so the applications interleave
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    return outcomes


def test_one_pullback_applied_by_two_threads_at_once_succeeds_exactly_once():
    expected = _expected_chain_gradient(X)
    ct = np.ones_like(X)
    for _ in range(30):
        _, pullback = ad.vjp(_chain)(X)
        outcomes = _race([pullback.__call__, pullback.__call__], ct)
        oks = [v for kind, v in outcomes if kind == "ok"]
        errors = [v for kind, v in outcomes if kind == "error"]
        assert len(oks) == 1 and len(errors) == 1, outcomes
        np.testing.assert_allclose(oks[0], expected, rtol=1e-12)
        assert type(errors[0]) is RuntimeError and "single-use" in str(errors[0])


def _apply_three_times(lm, ct):
    return [(lm.pullback(ct), lm(ct)) for _ in range(3)]


def _close_after(k, lm, ct):
    time.sleep(0.0005 * (k % 6))  # closes before, during or after the applications
    lm.close()


def test_closing_a_linear_map_while_another_thread_applies_it_never_gives_zeros():
    expected = _expected_chain_gradient(X)
    ct = np.ones_like(X)
    completed = refused = 0
    for k in range(30):
        _, lm = ad.linearize(_chain, X)
        (kind, value), _ = _race([_apply_three_times, functools.partial(_close_after, k)],
                                 lm, ct)
        if kind == "error":
            assert type(value) is RuntimeError and "closed" in str(value)
            refused += 1
            continue
        for pulled, pushed in value:
            np.testing.assert_allclose(pulled, expected, rtol=1e-12)
            np.testing.assert_allclose(pushed, expected, rtol=1e-12)  # diagonal Jacobian
        completed += 1
    assert completed + refused == 30
    with pytest.raises(RuntimeError, match="closed"):
        lm(ct)


def test_eight_threads_share_maps_and_differentiate_at_once():
    x = np.linspace(0.1, 2.0, 500)
    ct = np.linspace(-1.0, 1.0, 500)
    _, shared = ad.linearize(lambda v: np.exp(v) * v, x)
    expected_map = np.exp(x) * (1 + x) * ct
    program = ad.grad(ad.stage(lambda v: np.sum(np.log(v) * v), x))

    def job(k):
        def run():
            kind = k % 4
            if kind == 0:
                return "map", shared(ct), shared.pullback(ct)
            if kind == 1:
                return "grad", ad.grad(lambda v: np.sum(np.sin(v) * k))(x)
            if kind == 2:
                _, pullback = ad.vjp(lambda v: np.tanh(v) * k)(x)
                return "vjp", pullback(ct)
            return "staged", program(x)
        return run

    results = _run_concurrently([job(k) for k in range(8)], rounds=25)
    for k, rounds in enumerate(results):
        for result in rounds:
            if result[0] == "map":
                np.testing.assert_allclose(result[1], expected_map, rtol=1e-12)
                np.testing.assert_allclose(result[2], expected_map, rtol=1e-12)
            elif result[0] == "grad":
                np.testing.assert_allclose(result[1], np.cos(x) * k, rtol=1e-12)
            elif result[0] == "vjp":
                np.testing.assert_allclose(result[1], k * (1 - np.tanh(x) ** 2) * ct, rtol=1e-12)
            else:
                np.testing.assert_allclose(result[1], np.log(x) + 1, rtol=1e-12)
    shared.close()


# --- process-wide state survives interrupts (issue 12 item 6) ---------------------------------

def _inside_del(frame) -> bool:
    for _ in range(4):
        if frame is None:
            return False
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def _at_with_exit(frame) -> bool:
    """Whether a line event is a ``with`` statement's normal exit (its line again, after the
    block): an exception raised there skips ``__exit__``, which no real interrupt can do (they
    arrive at calls, function entries and loop jumps, all inside the block or after the exit)."""
    offsets = _WITH_OFFSETS.get(frame.f_code)
    if offsets is None:
        offsets = _WITH_OFFSETS[frame.f_code] = {
            i.positions.lineno: i.offset for i in dis.get_instructions(frame.f_code)
            if i.opname in ("BEFORE_WITH", "LOAD_SPECIAL") and i.positions is not None}
    entered = offsets.get(frame.f_lineno)
    return entered is not None and frame.f_lasti > entered


_WITH_OFFSETS: dict = {}


def _interrupt_at(k: int, files: tuple, body) -> int:
    """Run ``body`` raising KeyboardInterrupt at the k-th line or function return in ``files``
    (never, for k = 0); returns how many such events there were."""
    seen = [0]

    def tracer(frame, event, arg):
        # a generator's "return" event is a yield: an exception raised there ends the frame
        # without running its finally clauses, which no real interrupt can do
        # (and Python ignores exceptions raised in __del__, so none are injected there)
        code = frame.f_code
        returning = event == "return" and not code.co_flags & inspect.CO_GENERATOR
        if (event == "line" and not _at_with_exit(frame) or returning) \
                and code.co_filename.endswith(files) and not _inside_del(frame):
            seen[0] += 1
            if seen[0] == k:
                raise KeyboardInterrupt(f"injected at event {k}")
        return tracer

    sys.settrace(tracer)
    try:
        body()
    except KeyboardInterrupt:
        assert k and seen[0] == k
    finally:
        sys.settrace(None)
    return seen[0]


def _inject_everywhere(files: tuple, body, clean) -> int:
    """Interrupt ``body`` at each of its first and last 60 events (where contexts enter and
    exit) and at 50 points between, checking ``clean()`` after each; returns the count."""
    n = _interrupt_at(0, files, body)
    points = sorted({*range(1, min(n, 60) + 1), *range(max(1, n - 60), n + 1),
                     *range(1, n + 1, max(1, n // 50))})
    for k in points:
        _interrupt_at(k, files, body)
        assert clean(), f"an interrupt at event {k} of {n} left state behind"
    return len(points)


def _staging_guard_clean(originals: dict) -> bool:
    from advect.staging import trace

    return (all(getattr(np.random, name) is value for name, value in originals.items())
            and not trace._guard_tokens and not trace._originals
            and not getattr(trace._local, "tokens", None) and not trace._patch_lock._is_owned())


def test_an_interrupt_anywhere_in_the_staging_randomness_guard_leaves_numpy_random_unwrapped():
    from advect.staging.trace import no_ambient_randomness

    originals = {name: getattr(np.random, name) for name in np.random.__all__}

    def body():
        with no_ambient_randomness():
            with no_ambient_randomness():
                with pytest.raises(ad.errors.AmbientRandomnessError):
                    np.random.normal()
            assert np.random.normal is not originals["normal"]

    assert _inject_everywhere(("staging/trace.py", "contextlib.py"), body,
                              lambda: _staging_guard_clean(originals)) > 150
    np.random.default_rng(0).normal()


def test_an_interrupt_anywhere_while_staging_leaves_numpy_random_unwrapped():
    originals = {name: getattr(np.random, name) for name in np.random.__all__}
    assert _inject_everywhere(("staging/trace.py",),
                              lambda: ad.stage(lambda x: np.sin(x) * 2, np.ones(3)),
                              lambda: _staging_guard_clean(originals)) > 150


def test_an_interrupt_anywhere_in_debug_leaves_the_hooks_off():
    from advect import core
    debug = importlib.import_module("advect.debug")  # the module, not the function

    def body():
        with ad.debug():
            with ad.debug(numerics=True):
                ad.grad(lambda x: np.sum(x ** 2))(np.ones(2))
            assert core.debug_hooks is not None

    def clean():
        return (core.debug_hooks is None and not debug._contexts
                and not debug._state.numerics and not debug._state.origins
                and not debug._state.stack
                and not debug._lock._is_owned())

    assert _inject_everywhere(("advect/debug.py", "contextlib.py"), body, clean) > 150

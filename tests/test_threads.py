"""Traces are local to the call that creates them: threads differentiating at once do not mix."""

import threading

import numpy as np

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

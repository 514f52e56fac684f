"""Cache-blocked elementwise regions in staged plans: bit-identical to unblocked execution."""

import numpy as np
import pytest

import advect as ad
from advect.staging import blocks
from advect.staging.plan import Plan


@pytest.fixture
def small_chunks(monkeypatch):
    # regions from 1000 elements, chunks of 512: many chunks and a ragged last one
    monkeypatch.setattr(blocks, "MIN_ELEMENTS", 1000)
    monkeypatch.setattr(blocks, "MIN_CHEAP_ELEMENTS", 1000)
    monkeypatch.setattr(blocks, "L2_BYTES", 512 * 8)


def _w2(x):
    return np.sum(np.tanh(x) * np.exp(-(x ** 2)) + np.log1p(x * x))


def _mixed(x, y, s):
    t = np.where(x > y, x * s, y - 2) * np.cos(y)  # a comparison: a bool temporary
    return t + np.abs(x) / (1.5 + y * y), np.max(t)


def _ints(x, y):
    return (x * 3 + y) // 2 - np.maximum(x, y) * x, np.sum(x ^ y)


def _broadcast(x, row):
    a = np.sin(x) * 2.0 + 1.0           # a region
    b = a * row                          # a broadcast operand: outside regions
    return np.exp(b) - b * b             # another region


def _regions(plan) -> int:
    return sum(getattr(s, "__qualname__", "").startswith("_region_step") for s in plan.steps)


def _check(fn, *args):
    program = ad.stage(fn, *args)
    blocked, general = Plan(program.graph), Plan(program.graph, blocked=False)
    assert _regions(blocked) >= 1 and _regions(general) == 0
    copies = [np.array(a, copy=True) for a in args]
    for got, want in zip(blocked.run(list(args)), general.run(list(args))):
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert np.array_equal(got, want, equal_nan=np.asarray(want).dtype.kind in "fc")
    for a, c in zip(args, copies):  # no input was written into
        assert np.array_equal(a, c)
    return program, blocked, general


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_w2_chain_and_its_gradients_are_bit_identical(small_chunks, dtype):
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, 3001).astype(dtype)
    program, _, _ = _check(_w2, x)
    if dtype is not np.complex128:
        _check(ad.grad(program), x)
        _check(ad.value_and_grad(program), x)
        np.testing.assert_allclose(ad.grad(program)(x), ad.grad(_w2)(x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_mixed_operands_scalars_and_2d_shapes(small_chunks, dtype):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((37, 41)).astype(dtype)
    y = rng.standard_normal((37, 41)).astype(dtype)
    _check(_mixed, x, y, np.asarray(0.5, dtype))
    _check(lambda x, y: _mixed(x, y, 0.25), x, y)


def test_integer_programs(small_chunks):
    rng = np.random.default_rng(2)
    x, y = rng.integers(-50, 50, 2500), rng.integers(1, 50, 2500)
    _check(_ints, x, y)


def test_a_broadcast_operand_breaks_the_region(small_chunks):
    x, row = np.linspace(-1, 1, 40 * 50).reshape(40, 50), np.linspace(0, 1, 50)
    _, blocked, _ = _check(_broadcast, x, row)
    assert _regions(blocked) == 2


def test_the_general_path_runs_for_non_contiguous_operands(small_chunks):
    base = np.linspace(-1, 1, 6000)
    program = ad.stage(_w2, base[::2])
    blocked, general = Plan(program.graph), Plan(program.graph, blocked=False)
    for x in (base[::2], base[1::2].copy(), base[::2].astype(np.float32)):
        assert np.array_equal(blocked.run([x])[0], general.run([x])[0])
    assert program(base[::2]) == general.run([base[::2]])[0]


def test_small_arrays_keep_the_unblocked_plan():
    program = ad.stage(_w2, np.ones(1000))
    assert _regions(Plan(program.graph)) == 0


def test_regions_of_cheap_ufuncs_need_larger_arrays(monkeypatch):
    monkeypatch.setattr(blocks, "MIN_ELEMENTS", 1000)
    monkeypatch.setattr(blocks, "MIN_CHEAP_ELEMENTS", 4000)
    cheap = lambda x: (x * 2.0 + 1.0) * x - 3.0  # noqa: E731
    for n, regions in ((3000, 0), (4000, 1)):
        assert _regions(Plan(ad.stage(cheap, np.ones(n)).graph)) == regions
    assert _regions(Plan(ad.stage(lambda x: np.exp(x * 2.0) + 1.0, np.ones(3000)).graph)) == 1


def test_region_results_written_over_dying_operands_are_right(small_chunks, monkeypatch):
    # the diffusion step: each region's operands are results of earlier steps that die in
    # it, so its results are written over their buffers; a 0-d view of one (squeeze(v[:1]))
    # is read by every chunk of the next region, so that buffer must not be written over
    def f(u):
        for _ in range(3):
            u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        v = np.exp(u) * 2.0
        return np.sin(v * np.squeeze(v[:1]) + v) - v, u
    def g(x):  # a result (a) computed before the region's last read of a dying operand (d)
        d = np.sin(x) * 3.0
        a = np.exp(d) * np.cumsum(x)    # the cumsum ends the region of d
        return a, np.sin(a * d), np.cos(d)
    x = np.random.default_rng(6).standard_normal(3000)
    _check(f, x)
    _check(g, x)
    _check(ad.value_and_grad(lambda x: np.sum(f(x)[0] ** 2)), x)
    monkeypatch.setattr(blocks, "THREADS", 2)
    monkeypatch.setattr(blocks, "_MIN_CHUNKS_PER_THREAD", 1)
    monkeypatch.setattr(blocks, "_MIN_WORK_PER_THREAD", 1)
    _check(f, x)


def test_donation_into_region_results_stays_correct(small_chunks):
    def f(x, y):
        a = np.exp(x) * y + 1.0         # a region; its result is fresh
        b = np.flip(a)                   # a view: the region result must not be written over
        return np.sin(a) + b, a          # a donation candidate after the region
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal(2000), rng.standard_normal(2000)
    _check(f, x, y)
    program = ad.stage(f, x, y)
    got, a = program(x, y)
    want_a = np.exp(x) * y + 1.0
    assert np.array_equal(a, want_a) and np.array_equal(got, np.sin(want_a) + want_a[::-1])


def test_reductions_move_after_a_region_only_when_nothing_in_it_needs_them(small_chunks):
    x = np.random.default_rng(4).uniform(-2, 2, 3001)
    _, blocked, _ = _check(ad.value_and_grad(ad.stage(_w2, x)), x)
    assert _regions(blocked) == 1 and len(blocked.steps) == 2  # the chains, then the sum

    def normalized(x):
        y = np.exp(x) * 2.0
        total = np.sum(y)                # the next op needs it: it stays in place
        return (y / total + x) * 3.0, np.max(y)
    _, blocked, _ = _check(normalized, x)
    assert _regions(blocked) == 2


@pytest.fixture(params=[2, 3])
def threads(request, small_chunks, monkeypatch):
    # every region with at least one chunk per thread runs its spans on `request.param` threads
    monkeypatch.setattr(blocks, "THREADS", request.param)
    monkeypatch.setattr(blocks, "_MIN_CHUNKS_PER_THREAD", 1)
    monkeypatch.setattr(blocks, "_MIN_WORK_PER_THREAD", 1)
    return request.param


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_regions_run_on_several_threads_are_bit_identical(threads, dtype):
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, 5 * 512 + 79).astype(dtype)  # spans of whole chunks, a ragged end
    program, _, _ = _check(_w2, x)
    _check(ad.value_and_grad(program), x)
    y = rng.standard_normal(x.size).astype(dtype)
    _check(_mixed, x.reshape(-1, 7), y.reshape(-1, 7), np.asarray(0.5, dtype))
    _check(_ints, rng.integers(-50, 50, 4000), rng.integers(1, 50, 4000))


def test_threads_run_under_the_callers_errstate(threads):
    x = np.zeros(6 * 512)
    x[-1] = 1000.0  # overflows in the last span, which another thread runs
    program = ad.stage(lambda x: np.exp(x) * 2.0 + 1.0, x)
    with np.errstate(over="ignore"):  # with the worker's default errstate: a RuntimeWarning
        assert np.isinf(program(x)[-1])
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        program(x)
    assert program(np.ones(6 * 512))[-1] == np.exp(1.0) * 2.0 + 1.0  # the pool still works


def test_the_thread_count_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("ADVECT_NUM_THREADS", "3")
    assert blocks._threads() == 3
    monkeypatch.setenv("ADVECT_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="ADVECT_NUM_THREADS"):
        blocks._threads()
    monkeypatch.delenv("ADVECT_NUM_THREADS")
    assert 1 <= blocks._threads() <= 8


def test_one_program_called_by_several_threads_at_once(threads):
    # user threads share the program and the region pool; each call gets its own buffers
    import threading
    rng = np.random.default_rng(8)
    xs = [rng.uniform(-2, 2, 4 * 512 + 5) for _ in range(4)]
    program = ad.value_and_grad(ad.stage(_w2, xs[0]))
    want = [Plan(program.graph, blocked=False).run([x]) for x in xs]
    failures = []

    def worker(k):
        try:
            for _ in range(20):
                value, grad = program(xs[k])
                assert value == want[k][0] and np.array_equal(grad, want[k][1])
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    workers = [threading.Thread(target=worker, args=(k,)) for k in range(len(xs))]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert not failures, failures


def test_spans_the_pool_refuses_run_in_the_calling_thread(small_chunks, monkeypatch):
    # at interpreter shutdown the pool takes no new work: the caller runs those spans itself
    # (once each: a region may write its results over its operands' buffers)
    from concurrent.futures import ThreadPoolExecutor

    class Closing(ThreadPoolExecutor):
        def submit(self, *args, **kwargs):
            if self.taken:
                raise RuntimeError("cannot schedule new futures after interpreter shutdown")
            self.taken = True
            return super().submit(*args, **kwargs)

    pool = Closing(2)
    monkeypatch.setattr(blocks, "THREADS", 4)
    monkeypatch.setattr(blocks, "_MIN_CHUNKS_PER_THREAD", 1)
    monkeypatch.setattr(blocks, "_MIN_WORK_PER_THREAD", 1)

    def workers():
        pool.taken = False
        return pool
    monkeypatch.setattr(blocks, "_workers", workers)

    def f(x):
        d = np.sin(x) * 3.0
        a = np.exp(d) * np.cumsum(x)    # a region whose operand d dies in it
        return np.sin(a * d) - d
    x = np.random.default_rng(9).standard_normal(8 * 512 + 3)
    _check(f, x)
    _check(_w2, x)
    pool.shutdown()

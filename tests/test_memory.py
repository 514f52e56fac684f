"""Memory is freed at once (issue 12 item 5): no reference cycle keeps a tape alive, so a dropped
Pullback or LinearMap, or a transform that raised, releases its tape without the cycle
collector, and long loops of transforms and staged calls run in flat memory."""

import gc
import sys
import tracemalloc
import weakref

import numpy as np
import pytest

import advect as ad

X = np.linspace(-1.0, 1.0, 250_000)  # 2 MB per array; the tapes below hold several


@pytest.fixture
def no_cycle_collector():
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _advect_garbage() -> list:
    """Advect's objects that only the cycle collector would free (nothing: tapes are freed by
    reference counting). Other libraries' threads (a dask cluster's event loop, left by an
    earlier test) may make cycles of their own meanwhile; those are not counted."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        return [type(o).__qualname__ for o in gc.garbage
                if type(o).__module__.partition(".")[0] == "advect"]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()


def _loss_recording(residuals):
    """A loss whose tape keeps ``cos(sin(x))`` as a residual; a weak reference to that array
    goes to ``residuals`` (``.primal`` is the concrete value inside the tracer)."""
    def loss(x):
        y = np.sin(x)
        z = np.cos(y)
        residuals.append(weakref.ref(z.primal))
        return np.sum(z * y)
    return loss


def _held_after(make) -> tuple[int, list]:
    """Bytes still allocated after ``make(residuals)`` ran and its result was dropped, and the
    residuals' weak references."""
    residuals = []
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        make(residuals)
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before, residuals


def test_a_dropped_pullback_frees_its_tape_at_once(no_cycle_collector):
    def make(residuals):
        for _ in range(10):
            value, pullback = ad.vjp(_loss_recording(residuals))(X)
            del value, pullback
    held, residuals = _held_after(make)
    assert all(r() is None for r in residuals)
    assert held < X.nbytes // 4  # ten tapes of several arrays each would hold > 50 MB
    assert not _advect_garbage()  # nothing was left for the cycle collector


def test_a_dropped_linear_map_and_its_transpose_free_the_tape(no_cycle_collector):
    def make(residuals):
        for _ in range(10):
            value, lm = ad.linearize(lambda x: np.cos(np.sin(x)) * x, X)
            transposed = lm.transpose()
            residuals.append(weakref.ref(value))
            del value, lm, transposed
    held, residuals = _held_after(make)
    assert all(r() is None for r in residuals)
    assert held < X.nbytes // 4
    assert not _advect_garbage()


def test_a_transform_that_raised_frees_its_tape(no_cycle_collector):
    def failing(residuals):
        loss = _loss_recording(residuals)

        def f(x):
            loss(x)
            raise KeyError("the user's error")
        return f

    def make(residuals):
        for transform in (ad.grad, lambda f: ad.vjp(f), lambda f: ad.value_and_grad(f)):
            for _ in range(3):
                with pytest.raises(KeyError):
                    transform(failing(residuals))(X)
    held, residuals = _held_after(make)
    assert len(residuals) == 9 and all(r() is None for r in residuals)
    assert held < X.nbytes // 4
    assert not _advect_garbage()


def test_applied_and_closed_maps_free_their_tapes(no_cycle_collector):
    def make(residuals):
        loss = _loss_recording(residuals)
        for _ in range(5):
            _, pullback = ad.vjp(loss)(X)
            pullback(1.0)
            with ad.linearize(loss, X)[1] as lm:
                lm(np.ones_like(X))
    held, residuals = _held_after(make)
    assert all(r() is None for r in residuals)
    assert held < X.nbytes // 4
    assert not _advect_garbage()


def _rounds_of_calls():
    x = np.linspace(0.1, 1.0, 16)
    ct = np.ones(16)
    loss = lambda v: np.sum(np.sin(v) * v)  # noqa: E731
    program = ad.stage(loss, x)
    gradient = ad.grad(program)
    grad = ad.grad(loss)
    vjp = ad.vjp(lambda v: np.exp(v) * v)

    def rounds(n):  # four calls a round: grad, vjp and its pullback, a program, its gradient
        for _ in range(n):
            grad(x)
            vjp(x)[1](ct)
            program(x)
            gradient(x)
    return rounds


def _memory_growth(rounds, warm: int, measured: int) -> int:
    rounds(warm)  # caches filled
    early = sys.getallocatedblocks()  # Python's allocator: cheap to read, unlike tracemalloc
    rounds(measured)
    return sys.getallocatedblocks() - early


def test_ten_thousand_grad_vjp_and_staged_calls_run_in_flat_memory(no_cycle_collector):
    growth = _memory_growth(_rounds_of_calls(), 500, 2_000)  # 10,000 calls in all
    assert growth < 500, f"{growth} more memory blocks after 8,000 more calls"
    assert not _advect_garbage()


@pytest.mark.slow
def test_forty_thousand_calls_run_in_flat_memory(no_cycle_collector):
    growth = _memory_growth(_rounds_of_calls(), 1_000, 9_000)
    assert growth < 500, f"{growth} more memory blocks after 36,000 more calls"
    assert not _advect_garbage()


# --- bounded caches, no aliasing (issue 12 item 7) ----------------------------------------------

def test_a_primitive_remembers_a_bounded_number_of_output_structures():
    from advect.primitive import MAX_OUT_TREES

    @ad.primitive(name="tests.memory.scaled", static_argnames="k")
    def scaled(x, k):
        return {"y": x * k}

    @scaled.def_abstract
    def _(x, k):
        return {"y": x.spec}

    @scaled.def_jvp
    def _(output, primals, tangents, k):
        return {"y": tangents[0] * k}

    x = np.ones(3)
    for k in range(MAX_OUT_TREES + 500):  # one structure per distinct static value
        assert scaled(x, k=float(k))["y"][0] == k
    assert len(scaled._out_trees) <= MAX_OUT_TREES
    # a structure dropped from the table is found again from the abstract rule
    np.testing.assert_allclose(ad.grad(lambda v: np.sum(scaled(v, k=0.0)["y"] + v))(x), 1.0)
    np.testing.assert_allclose(ad.grad(lambda v: np.sum(scaled(v, k=2.0)["y"]))(x), 2.0)


def test_maps_return_new_arrays_never_the_callers():
    x = np.arange(3.0)
    ct = np.ones(3)
    pulled = ad.vjp(lambda v: v)(x)[1](ct)
    assert pulled is not ct and not np.shares_memory(pulled, ct)
    pulled[0] = 5.0
    assert ct[0] == 1.0
    column = np.ones((3, 1))
    assert not np.shares_memory(ad.vjp(lambda v: v.reshape(3, 1))(x)[1](column), column)
    _, lm = ad.linearize(lambda v: v, x)
    assert not np.shares_memory(lm(ct), ct) and not np.shares_memory(lm.pullback(ct), ct)
    assert not np.shares_memory(lm.transpose()(ct), ct)
    lm.close()


def test_setflags_on_a_tracer_is_a_mutation_error():
    def f(v):
        v.setflags(write=True)
        return np.sum(v)
    with pytest.raises(ad.errors.MutationError, match="setflags"):
        ad.grad(f)(np.ones(2))
    with pytest.raises(ad.errors.MutationError, match="setflags"):
        ad.stage(f, np.ones(2))


def test_constants_of_two_programs_compare_with_eq():
    import json

    table = np.array([1.0, np.nan, 3.0])
    program = ad.stage(lambda v: v * table, np.ones(3))
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    assert program.constants == restored.constants  # NaN included: values compare bit for bit
    assert not program.constants != restored.constants
    assert {program.constants[0]} == {restored.constants[0]}
    other = ad.stage(lambda v: v * (table + 1), np.ones(3))
    assert program.constants != other.constants

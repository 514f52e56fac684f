"""The optimizer pipeline and the execution plan: each rewrite, the report, donation safety,
release after last use. Results are compared with eager NumPy."""

import tracemalloc

import numpy as np
import pytest

import advect as ad

X = np.linspace(-1.0, 1.0, 6)


def op_names(program):
    return [node.op.name for node in program.graph.nodes]


@pytest.mark.parametrize("fn", [
    lambda x: np.sin(x) * 1,
    lambda x: 1.0 * np.sin(x),
    lambda x: np.sin(x) + -0.0,  # x + 0.0 is not x at x = -0.0 (test_probe_regressions_3)
    lambda x: -0.0 + np.sin(x),
    lambda x: np.sin(x) - 0.0,
    lambda x: np.sin(x) / 1.0,
    lambda x: np.negative(np.negative(np.sin(x))),
    lambda x: np.sin(x).astype(np.float64),
    lambda x: np.sin(x).reshape(2, 3).reshape(6),
    lambda x: np.sin(x).reshape(2, 3).T.T.reshape(6),
])
def test_identities_leave_only_the_real_work(fn):
    program = ad.stage(fn, X)
    assert op_names(program) == ["sin"]
    np.testing.assert_array_equal(program(X), fn(X))


def test_lossless_astype_round_trip_cancels_but_lossy_one_stays():
    x32 = X.astype(np.float32)
    lossless = ad.stage(lambda x: x.astype(np.float64).astype(np.float32) * 2, x32)
    assert op_names(lossless) == ["multiply"]
    lossy = ad.stage(lambda x: x.astype(np.float32).astype(np.float64) * 2, X)
    assert op_names(lossy).count("astype") == 2
    np.testing.assert_array_equal(lossy(X), X.astype(np.float32).astype(np.float64) * 2)


def test_transpose_chains_compose():
    a = np.arange(24.0).reshape(2, 3, 4)
    program = ad.stage(lambda x: np.transpose(np.transpose(x, (1, 2, 0)), (2, 0, 1)) + 1, a)
    assert op_names(program) == ["add"]
    program = ad.stage(lambda x: np.transpose(np.transpose(x, (1, 0, 2)), (0, 2, 1)) + 1, a)
    assert op_names(program) == ["permute_dims", "add"]
    np.testing.assert_array_equal(program(a),
                                  np.transpose(np.transpose(a, (1, 0, 2)), (0, 2, 1)) + 1)


def test_broadcast_of_a_scalar_feeds_the_elementwise_op_directly():
    program = ad.stage(lambda x, s: x * np.broadcast_to(s, x.shape), X, np.asarray(2.0))
    assert op_names(program) == ["multiply"]
    np.testing.assert_array_equal(program(X, np.asarray(3.0)), X * 3.0)


def test_cse_merges_repeated_work():
    program = ad.stage(lambda x: np.exp(x) * np.exp(x) + np.exp(x), X)
    assert op_names(program).count("exp") == 1
    np.testing.assert_allclose(program(X), np.exp(X) * np.exp(X) + np.exp(X), rtol=1e-15)


def test_dead_code_is_removed():
    def f(x):
        np.cos(x) * 3  # computed and dropped
        return np.sin(x)
    assert op_names(ad.stage(f, X)) == ["sin"]


def test_constant_subgraphs_are_folded_once_at_staging_time():
    program = ad.stage(lambda x: x + np.exp(np.ones_like(x)) * 2, X)
    assert op_names(program) == ["add"]
    (folded,) = program.constants
    assert folded.origin == "folded"
    np.testing.assert_allclose(program(X), X + np.exp(np.ones_like(X)) * 2, rtol=1e-15)


def test_large_constant_results_are_not_folded_into_the_program():
    big = np.ones((1000, 3))
    program = ad.stage(lambda x: x + np.exp(np.ones_like(x)), big)
    assert all(c.value.size <= 64 for c in program.constants)
    np.testing.assert_array_equal(program(big), big + np.e)


def test_report_counts_every_pass():
    program = ad.stage(lambda x: np.sin(x) * 1 + np.sin(x) * 1, X)
    report = program.optimization
    assert report.nodes_before == 5 and report.nodes_after == 2
    assert {p.name for p in report.passes} == {"dce", "simplify", "cse", "fold"}
    assert all(p.nodes_after <= p.nodes_before for p in report.passes)
    assert report.passes[0].nodes_before == report.nodes_before
    assert report.passes[-1].nodes_after == report.nodes_after


# --- the plan -------------------------------------------------------------------------------------

def chain(x):
    y = np.sin(x) * np.cos(x) + x * x
    return np.exp(-y) + 1.0


BIG = np.linspace(-2.0, 2.0, 100_000)


def test_donation_happens_and_gives_the_eager_result_bit_for_bit():
    program = ad.stage(chain, BIG)
    np.testing.assert_array_equal(program(BIG), chain(BIG))
    assert program._plan.donations > 0  # the plan is built on the first call


def test_donation_never_writes_inputs_constants_or_earlier_outputs():
    table = np.linspace(0.0, 1.0, BIG.size)
    program = ad.stage(lambda x: (np.sin(x) + table) * 2.0, BIG)
    x = BIG.copy()
    first = program(x)
    second = program(x + 1.0)
    np.testing.assert_array_equal(x, BIG)
    np.testing.assert_array_equal(program.constants[0].value, table)
    np.testing.assert_array_equal(first, (np.sin(BIG) + table) * 2.0)
    assert first is not second


def test_a_buffer_aliased_by_a_live_view_is_not_donated():
    def f(x):
        t = np.sin(x)              # fresh temporary
        v = t.reshape(100, 1000)   # a view of it, alive until the end
        u = np.exp(t)              # t dies here if views are ignored
        return u, v

    program = ad.stage(f, BIG)
    u, v = program(BIG)
    np.testing.assert_array_equal(v, np.sin(BIG).reshape(100, 1000))
    np.testing.assert_array_equal(u, np.exp(np.sin(BIG)))


def test_small_arrays_and_scalars_run_through_the_plan():
    program = ad.stage(lambda x: np.sum(np.sin(x) ** 2) * 2.0, X)
    assert program(X) == np.sum(np.sin(X) ** 2) * 2.0


def test_staged_call_peak_memory_is_at_most_eager():
    x = np.linspace(-2.0, 2.0, 200_000)
    program = ad.stage(chain, x)
    program(x)

    def peak(fn):
        tracemalloc.start()
        fn(x)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    assert peak(program) <= peak(chain)


def test_warm_calls_create_no_trace(request):
    program = ad.stage(chain, X)
    created = request.getfixturevalue("created_traces")
    program(X)
    ad.grad(lambda x: np.sum(chain(x)))  # building a transform creates no trace either
    assert created == []


def test_ops_the_plan_calls_as_ufuncs_compute_what_their_implementation_computes():
    from advect.core import REGISTRY
    from advect.staging.plan import donation_ufunc

    rng = np.random.default_rng(0)
    checked = 0
    for name, op in sorted(REGISTRY.items()):
        for n in (1, 2, 3):
            ufunc = donation_ufunc(op, n, {})
            if ufunc is None:
                continue
            for make in (lambda: rng.uniform(0.1, 0.9, 5), lambda: rng.integers(1, 7, 5)):
                args = [make() for _ in range(n)]
                with np.errstate(all="ignore"):
                    try:
                        expected = op.impl(np, *args)
                    except TypeError:
                        continue
                    got = ufunc(*args)
                assert got.dtype == expected.dtype, name
                np.testing.assert_array_equal(got, expected, err_msg=name)
                checked += 1
    assert checked > 40


@pytest.mark.parametrize("fn, names", [
    (lambda x, y: np.exp(x) + np.negative(np.exp(y)), ["exp", "exp", "subtract"]),
    (lambda x, y: np.negative(np.exp(x)) + np.exp(y), ["exp", "exp", "subtract"]),
    (lambda x, y: np.exp(x) - np.negative(np.exp(y)), ["exp", "exp", "add"]),
    (lambda x, y: 2.0 * np.negative(np.exp(x)) + y, ["exp", "multiply", "add"]),
    (lambda x, y: np.exp(x) + np.negative(np.sin(y)) * x, ["exp", "sin", "multiply",
                                                          "subtract"]),
])
def test_negations_are_absorbed_exactly(fn, names):
    program = ad.stage(fn, X, X[::-1].copy())
    assert op_names(program) == names
    np.testing.assert_array_equal(program(X, X[::-1].copy()), fn(X, X[::-1].copy()))


def test_x_times_x_is_square_so_cse_merges_the_spellings():
    program = ad.stage(lambda x: np.log1p(x * x) + np.exp(-(x ** 2)), X)
    assert op_names(program).count("square") == 1 and "multiply" not in op_names(program)
    np.testing.assert_array_equal(program(X), np.log1p(X * X) + np.exp(-(X ** 2)))


MENU = [
    lambda a, b: a * 1.0, lambda a, b: 0.0 + a, lambda a, b: a - 0.0, lambda a, b: a / 1.0,
    lambda a, b: np.negative(-a), lambda a, b: a * a, lambda a, b: a ** 2, lambda a, b: a + (-b),
    lambda a, b: (-a) + b, lambda a, b: a - (-b), lambda a, b: 2.0 * (-a),
    lambda a, b: a.reshape(3, 4).T.T.reshape(12), lambda a, b: a.reshape(4, 3).T.reshape(12),
    lambda a, b: a.astype(np.float32).astype(np.float64),
    lambda a, b: np.broadcast_to(np.sum(a), a.shape) * b, lambda a, b: np.sin(a) * np.cos(b),
    lambda a, b: np.exp(-a * a) + np.tanh(b), lambda a, b: a * b + a * b,
    lambda a, b: np.maximum(a, b) - np.minimum(a, b), lambda a, b: a[::-1] + np.ones_like(b),
]


def _random_chain(rng, high: int):
    """``chain(x, y)``: the values of a random program of 3 to ``high - 1`` MENU steps."""
    steps = [(int(rng.integers(len(MENU))), int(rng.integers(8)), int(rng.integers(8)))
             for _ in range(int(rng.integers(3, high)))]

    def chain(x, y):
        values = [x, y]
        for k, i, j in steps:
            values.append(MENU[k](values[i % len(values)], values[j % len(values)]))
        return values
    return chain


def _random_loss(rng, high: int):
    """A scalar loss of a random chain: the sum of its last two values' product."""
    chain = _random_chain(rng, high)

    def loss(x, y):
        values = chain(x, y)
        return np.sum(values[-1] * values[-2])
    return loss


@pytest.mark.parametrize("seed", range(20))
def test_optimized_random_programs_agree_with_eager_numpy(seed):
    rng = np.random.default_rng(100 + seed)
    chain = _random_chain(rng, 10)

    def f(x, y):
        values = chain(x, y)
        return values[-1], values[-2] * 0.5

    x, y = rng.uniform(-1, 1, 12), rng.uniform(-1, 1, 12)
    program = ad.stage(f, x, y)
    for got, want in zip(program(x, y), f(x, y)):
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)
    for got, want in zip(program(y, x), f(y, x)):  # warm call, other data
        np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("seed", range(10))
def test_optimized_random_gradients_agree_with_dynamic_gradients(seed):
    rng = np.random.default_rng(200 + seed)
    loss = _random_loss(rng, 8)
    x, y = rng.uniform(-1, 1, 12), rng.uniform(-1, 1, 12)
    staged = ad.grad(ad.stage(loss, x, y), (0, 1))(x, y)
    dynamic = ad.grad(loss, (0, 1))(x, y)
    for s, d in zip(staged, dynamic):
        np.testing.assert_allclose(s, d, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_one_walk_reaches_the_fixpoint(seed):
    # the optimizer walks once: optimizing its result again must find nothing more to do
    from advect.staging.passes import optimize

    rng = np.random.default_rng(300 + seed)
    loss = _random_loss(rng, 10)
    x = rng.uniform(-1, 1, 12)
    for program in (ad.stage(loss, x, x), ad.grad(ad.stage(loss, x, x), (0, 1)),
                    ad.vjp_program(ad.stage(loss, x, x))):
        again, report = optimize(program.graph)
        assert report.nodes_after == len(program.graph.nodes), program.graph
        assert [n.op.name for n in again.nodes] == op_names(program)


def test_element_cotangents_scatter_into_the_running_sum():
    # the reverse pass adds the cotangent of each y[i] into y's: x + scatter_add(0, v, i) is
    # scatter_add(x, v, i), bit for bit (basic indices only: no repeated targets)
    y = np.array([0.3, -1.2, 0.7])

    def loss(y):
        return y[0] * y[1] + np.sin(y[2]) * y[0] + y[1] ** 2

    program = ad.grad(ad.stage(loss, y))
    names = op_names(program)
    graph = program.graph
    assert names.count("scatter_add") == 3, str(graph)
    assert all(graph.avals[n.outputs[0]].shape == () for n in graph.nodes
               if n.op.name == "add"), str(graph)  # only the elements' own sums remain
    np.testing.assert_array_equal(program(y), ad.grad(loss)(y))
    for scalar in (np.array(0.3), np.array(0.3, np.float32)):  # a NumPy scalar scattered into
        f = lambda s: np.sum(s[None] ** 2) + np.sin(s)  # noqa: E731
        np.testing.assert_array_equal(ad.grad(ad.stage(f, scalar))(scalar), ad.grad(f)(scalar))
    advanced = ad.grad(ad.stage(lambda y: np.sum(y[[0, 0, 1]] * y[2]), y))
    np.testing.assert_allclose(advanced(y), [2 * y[2], y[2], 2 * y[0] + y[1]], rtol=1e-15)

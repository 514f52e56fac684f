"""advect.dask: blockwise gradients over chunked data and program maps, with the threaded
scheduler and with a dask.distributed LocalCluster of worker processes (loopback only)."""

import subprocess
import sys

import numpy as np
import pytest

import advect as ad

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
from advect.dask import blockwise_value_and_grad, map_program  # noqa: E402


def logistic(w, x, y):
    z = x @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def logistic_mean(w, x, y):
    z = x @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)


def _data(rows, cols, chunks, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, cols))
    y = (rng.random(rows) < 0.5).astype(np.float64)
    return x, y, da.from_array(x, chunks=(chunks, cols)), da.from_array(y, chunks=chunks)


def _assert_rel(got, want, rtol):
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.max(np.abs(want)))


def test_importing_advect_does_not_import_dask():
    code = "import sys, advect; assert 'dask' not in sys.modules, 'dask was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("reduce, loss", [("sum", logistic), ("mean", logistic_mean)])
def test_threaded_blockwise_gradient_equals_the_whole_data_gradient(reduce, loss):
    x, y, dx, dy = _data(1000, 5, 300)  # uneven blocks: 300, 300, 300, 100
    w = np.linspace(-0.5, 0.5, 5)
    value, g = blockwise_value_and_grad(loss, w, dx, dy, reduce=reduce)
    want_value, want_g = ad.value_and_grad(loss)(w, x, y)
    assert value == pytest.approx(float(want_value), rel=1e-12)
    _assert_rel(g, want_g, 1e-12)


def test_pytree_params():
    x, y, dx, dy = _data(400, 3, 100)
    params = {"w": np.ones(3) * 0.1, "b": np.asarray(0.2)}
    loss = lambda p, xb, yb: logistic(p["w"], xb, yb) + np.sum(p["b"] * yb)
    value, g = blockwise_value_and_grad(loss, params, dx, dy)
    want_value, want_g = ad.value_and_grad(loss)(params, x, y)
    assert value == pytest.approx(float(want_value), rel=1e-12)
    _assert_rel(g["w"], want_g["w"], 1e-12)
    _assert_rel(g["b"], want_g["b"], 1e-12)


def test_bad_arguments():
    _, _, dx, dy = _data(100, 2, 50)
    with pytest.raises(ValueError, match="reduce"):
        blockwise_value_and_grad(logistic, np.ones(2), dx, dy, reduce="max")
    with pytest.raises(TypeError, match="dask.array"):
        blockwise_value_and_grad(logistic, np.ones(2), np.ones((100, 2)), dy)
    with pytest.raises(ValueError, match="row chunks"):
        blockwise_value_and_grad(logistic, np.ones(2), dx, dy.rechunk(25))
    program = ad.stage(lambda a: a * 2, np.ones(2))
    with pytest.raises(ValueError, match="lengths"):
        map_program(program, [np.ones(2)], [1, 2])
    with pytest.raises(TypeError, match="StagedProgram"):
        map_program(lambda a: a, [np.ones(2)])


def test_threaded_parameter_sweep_in_order():
    program = ad.grad(ad.stage(lambda a, x: np.sum(np.sin(a * x)), 1.0, np.ones(4)))
    scales = [0.1 * i for i in range(64)]
    x = np.linspace(0.0, 1.0, 4)
    results = map_program(program, scales, [x] * 64)
    want = [float(np.sum(np.cos(a * x) * x)) for a in scales]
    np.testing.assert_allclose(results, want, rtol=1e-12)


def test_a_failing_run_surfaces_its_exception():
    program = ad.stage(lambda x: x * 2, np.ones(2))
    with pytest.raises(ValueError, match="shape"):
        map_program(program, [np.ones(2), np.ones(3)])


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=":0",
                                       memory_limit="4GiB")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()


def _block(i, rows, cols):
    rng = np.random.default_rng(i)
    return rng.standard_normal((rows, cols)), (rng.random(rows) < 0.5).astype(np.float64)


def test_distributed_logistic_regression_2e6_rows(client):
    rows, cols, n = 2_000_000, 20, 16
    chunk = rows // n
    # each worker makes its own blocks (nothing large travels); the reference rebuilds them here
    parts = [dask.delayed(_block)(i, chunk, cols) for i in range(n)]
    dx = da.concatenate([da.from_delayed(p[0], (chunk, cols), np.float64) for p in parts])
    dy = da.concatenate([da.from_delayed(p[1], (chunk,), np.float64) for p in parts])
    w = np.linspace(-0.1, 0.1, cols)
    value, g = blockwise_value_and_grad(logistic, w, dx, dy)
    blocks = [_block(i, chunk, cols) for i in range(n)]
    x, y = np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])
    want_value, want_g = ad.value_and_grad(ad.stage(logistic, w, x, y))(w, x, y)
    assert value == pytest.approx(float(want_value), rel=1e-10)
    _assert_rel(g, want_g, 1e-10)
    assert len(client.scheduler_info()["workers"]) == 2


def test_distributed_sweep_and_errors(client):
    program = ad.value_and_grad(ad.stage(lambda a, x: np.sum((a * x) ** 2), 1.0, np.ones(3)))
    x = np.arange(3.0)
    results = map_program(program, [float(i) for i in range(64)], [x] * 64)
    assert [float(v) for v, _ in results] == [float(np.sum((i * x) ** 2)) for i in range(64)]
    assert all(g == pytest.approx(2 * i * np.sum(x ** 2)) for i, (_, g) in enumerate(results))
    with pytest.raises(ValueError, match="shape"):
        map_program(ad.stage(lambda x: x * 2, np.ones(2)), [np.ones(2), np.ones(5)])


def test_scalar_parameters_get_the_gradient_types_advect_grad_gives():
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((40, 3)), rng.standard_normal(40)

    def loss(p, x, y):
        return np.mean((x @ p["w"] + p["b"] + p["c"] + p["n"] - y) ** 2)

    params = {"w": np.ones(3), "b": 0.5, "c": np.float32(1.0), "n": 2}
    _, g = blockwise_value_and_grad(loss, params, da.from_array(x, chunks=(15, 3)),
                                    da.from_array(y, chunks=15), reduce="mean")
    _, expected = ad.value_and_grad(loss)(params, x, y)
    for k in params:
        assert type(g[k]) is type(expected[k]), k
        # float32 blocks sum in another order than the whole array
        np.testing.assert_allclose(g[k], expected[k], rtol=1e-5 if k == "c" else 1e-12)

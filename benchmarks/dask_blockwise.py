"""Throughput of the blockwise logistic-regression gradient on Dask against the single-process
staged gradient, in rows per second.

Run: ``python benchmarks/dask_blockwise.py [--rows N] [--chunks K] [--rounds R]``. The data is
made on the workers block by block (nothing large travels), so the Dask figures measure the
gradient work plus scheduling. Reports the median over rounds for: the staged gradient in this
process on the whole array, ``advect.dask.blockwise_value_and_grad`` with the threaded scheduler,
and with a ``LocalCluster`` of two worker processes on loopback.
"""

from __future__ import annotations

import argparse
import statistics
import time

import dask
import dask.array as da
import numpy as np

import advect as ad
from advect.dask import blockwise_value_and_grad


def logistic(w, x, y):
    z = x @ w
    return np.sum(np.logaddexp(0.0, z) - y * z)


def block(i, rows, cols):
    rng = np.random.default_rng(i)
    return rng.standard_normal((rows, cols)), (rng.random(rows) < 0.5).astype(np.float64)


def chunked(rows, cols, chunks):
    size = rows // chunks
    parts = [dask.delayed(block)(i, size, cols) for i in range(chunks)]
    x = da.concatenate([da.from_delayed(p[0], (size, cols), np.float64) for p in parts])
    y = da.concatenate([da.from_delayed(p[1], (size,), np.float64) for p in parts])
    return x.persist(), y.persist()


def median_seconds(fn, rounds):
    fn()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--cols", type=int, default=20)
    parser.add_argument("--chunks", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows, cols = args.rows - args.rows % args.chunks, args.cols
    w = np.linspace(-0.1, 0.1, cols)
    blocks = [block(i, rows // args.chunks, cols) for i in range(args.chunks)]
    x, y = np.concatenate([b[0] for b in blocks]), np.concatenate([b[1] for b in blocks])
    staged = ad.value_and_grad(ad.stage(logistic, w, x, y))
    results = {"staged, one process": median_seconds(lambda: staged(w, x, y), args.rounds)}
    with dask.config.set(scheduler="threads"):
        dx, dy = chunked(rows, cols, args.chunks)
        results["dask threads"] = median_seconds(
            lambda: blockwise_value_and_grad(logistic, w, dx, dy), args.rounds)
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                      dashboard_address=":0") as cluster, Client(cluster):
        dx, dy = chunked(rows, cols, args.chunks)
        results["dask LocalCluster, 2 processes"] = median_seconds(
            lambda: blockwise_value_and_grad(logistic, w, dx, dy), args.rounds)
    base = results["staged, one process"]
    print(f"logistic regression gradient, {rows} x {cols} float64 in {args.chunks} chunks")
    print(f"{'candidate':34} {'seconds':>9} {'rows/s':>12} {'vs staged':>10}")
    for name, seconds in results.items():
        print(f"{name:34} {seconds:9.3f} {rows / seconds:12.3g} {base / seconds:9.2f}x")


if __name__ == "__main__":
    main()

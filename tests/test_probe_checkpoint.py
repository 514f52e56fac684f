"""Regression tests for silent wrong answers and unclear errors found by probing checkpoint,
implicit_root, debug, the command line and transform_state."""

from __future__ import annotations

import json

import numpy as np
import pytest

import advect as ad
from advect.cli import main

X = np.linspace(-1.0, 1.0, 7) + 2.0


def _noisy(x):
    return x * np.random.normal(size=x.shape)


def test_checkpoint_replays_global_random_numbers():
    grads, after = [], []
    for block in (_noisy, ad.checkpoint(_noisy)):
        np.random.seed(3)
        grads.append(ad.hessian(lambda x, b=block: np.sum(b(x) ** 3))(X))
        after.append(np.random.random())
    np.testing.assert_array_equal(grads[1], grads[0])
    assert after[1] == after[0]  # the recomputation leaves the global stream as it was


def test_checkpoint_replays_a_generator_argument_or_closure():
    def with_argument(x, g):
        return x * g.normal(size=x.shape)

    expected = ad.grad(lambda x: np.sum(with_argument(x, np.random.default_rng(0)) ** 2))(X)
    g = np.random.default_rng(0)
    got = ad.grad(lambda x: np.sum(ad.checkpoint(with_argument)(x, g) ** 2))(X)
    np.testing.assert_array_equal(got, expected)

    rng = np.random.default_rng(0)

    def with_closure(x):
        return x * rng.normal(size=x.shape)

    got = ad.grad(lambda x: np.sum(ad.checkpoint(with_closure)(x) ** 2))(X)
    np.testing.assert_array_equal(got, expected)


def test_checkpoint_refuses_a_recomputation_that_differs():
    class Holder:
        g = np.random.default_rng(0)

    def hidden(x):
        return x * Holder.g.normal(size=x.shape)

    with pytest.raises(ad.TracingError, match="deterministic"):
        ad.grad(lambda x: np.sum(ad.checkpoint(hidden)(x) ** 2))(X)

    w = np.ones_like(X)

    def loss(x):
        y = ad.checkpoint(lambda z: z * w)(x)
        w[:] = 7.0  # the recomputation would read the changed array
        return np.sum(y ** 2)

    with pytest.raises(ad.TracingError, match="different values"):
        ad.grad(loss)(X)


def test_checkpoint_recomputation_sees_the_callers_transform_states():
    def block(z):
        cache = ad.transform_state("probe-cache", dict)
        m = cache.setdefault("m", np.arange(z.size, dtype=float))
        return np.sin(z) * m * len(ad.transform_states("probe-cache"))

    for transform in (ad.grad, ad.hessian):
        plain = transform(lambda x: np.sum(block(x) ** 2))(X)
        saved = transform(lambda x: np.sum(ad.checkpoint(block)(x) ** 2))(X)
        np.testing.assert_array_equal(saved, plain)


def test_checkpoint_first_run_is_located_and_checked_inside_debug():
    def mismatched(x):
        return np.sum(x @ np.ones((3, 2)))

    with ad.debug(), pytest.raises(ValueError) as info:
        ad.grad(ad.checkpoint(mismatched))(np.ones(2))
    assert "'matmul' called at" in info.value.__notes__[-1]

    def nan_but_zero(z):
        return np.log(z - 1.0) * 0.0  # NaN only in the primal value

    with ad.debug(numerics=True), np.errstate(invalid="ignore"), \
            pytest.raises(ad.NumericsError) as error:
        ad.grad(lambda x: np.sum(ad.checkpoint(nan_but_zero)(x)))(np.full(2, 0.5))
    assert (error.value.op, error.value.phase) == ("log", "primal")


def test_checkpoint_writing_an_input_says_why():
    def writes(x):
        x *= 2.0
        return x

    with pytest.raises(ValueError) as info:
        ad.grad(lambda x: np.sum(ad.checkpoint(writes)(x * 1.0)))(X)
    assert any("must not write into its inputs" in note for note in info.value.__notes__)


def _dense_solve(matvec, b):
    matrix = np.stack([matvec(e) for e in np.eye(b.shape[0])], axis=1)
    return np.linalg.solve(matrix, b)


def test_implicit_root_refuses_a_solve_that_did_not_converge():
    scipy_optimize = pytest.importorskip("scipy.optimize")

    def scipy_solve(f, u):
        return scipy_optimize.root(lambda v: np.asarray(f(v)), u).x  # no success check

    root = ad.implicit_root(lambda u, p: u ** 2 + p, solve=scipy_solve,
                            linear_solve=_dense_solve)  # u^2 + 1 = 0 has no real root
    with pytest.raises(ad.ImplicitSolveError, match="did not converge"):
        root(np.array([1.0]), initial=np.array([0.5]))
    with pytest.raises(ad.ImplicitSolveError, match="did not converge"):
        ad.grad(lambda p: np.sum(root(p, initial=np.array([0.5]))))(np.array([1.0]))


def test_implicit_root_integer_initial_is_not_truncated():
    scipy_optimize = pytest.importorskip("scipy.optimize")

    def scipy_solve(f, u):
        return scipy_optimize.root(lambda v: np.asarray(f(v)), u, tol=1e-14).x

    root = ad.implicit_root(lambda u, p: u ** 3 - p, solve=scipy_solve,
                            linear_solve=_dense_solve)
    u = root(np.array([10.0]), initial=np.array([1]))
    assert u.dtype == np.float64
    np.testing.assert_allclose(u, np.cbrt(10.0), rtol=1e-12)
    g = ad.grad(lambda p: np.sum(root(p, initial=np.array([1]))))(np.array([10.0]))
    np.testing.assert_allclose(g, 1.0 / (3.0 * np.cbrt(10.0) ** 2), rtol=1e-10)


@pytest.fixture
def saved(tmp_path):
    program = ad.stage(lambda x, p: np.sum(x * p["w"]), np.ones(3), {"w": np.ones(3)})
    path = tmp_path / "p.json"
    path.write_text(json.dumps(program.to_dict()))
    np.save(tmp_path / "x.npy", np.arange(3.0))
    return tmp_path


def test_cli_unwritable_output_is_one_line_status_1(saved, capsys):
    run = ["run", str(saved / "p.json"), "--input", f"arg0={saved / 'x.npy'}",
           "--input", f"arg1.w={saved / 'x.npy'}"]
    assert main([*run, "--output", str(saved / "missing" / "o.npz")]) == 1
    assert main(["dot", str(saved / "p.json"), "-o", str(saved / "missing" / "p.dot")]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all("cannot write" in line for line in err)
    assert main([*run, "--output", str(saved / "plain")]) == 0  # exactly that path
    with np.load(saved / "plain") as outputs:
        assert float(outputs["output"]) == 5.0


def test_cli_names_a_container_given_as_one_file(saved, capsys):
    status = main(["run", str(saved / "p.json"), "--input", f"arg0={saved / 'x.npy'}",
                   "--input", f"arg1={saved / 'x.npy'}"])
    assert status == 2
    assert "unknown input 'arg1'; the program's inputs are: arg0, arg1.w" in \
        capsys.readouterr().err


def test_cli_main_returns_the_usage_status():
    assert main(["no-such-command"]) == 2
    assert main([]) == 2
    assert main(["check", "--help"]) == 0

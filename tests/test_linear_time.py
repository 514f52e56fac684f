"""Staging and staged derivation are linear in the number of nodes: the work (Python function
calls, counted, not timed) of staging an RK4 loop and deriving its gradient grows in proportion
to the number of steps."""

import cProfile
import pstats
import sys
from pathlib import Path

import numpy as np

import advect as ad

sys.path.insert(0, str(Path(__file__).parents[1] / "benchmarks"))
from workloads import make_rk4  # noqa: E402  (the benchmark's RK4 loop)


def rk4(steps):
    return make_rk4(np, steps)


def _calls(fn) -> int:
    profile = cProfile.Profile()
    profile.enable()
    fn()
    profile.disable()
    return sum(stat[1] for stat in pstats.Stats(profile).stats.values())  # all calls


def test_stage_grad_and_vjp_program_do_work_proportional_to_the_loop_length():
    y0, k = np.array([1.0, 0.0]), np.array(2.0)

    def work(steps):
        loss = rk4(steps)
        return _calls(lambda: (ad.grad(ad.stage(loss, y0, k), argnums=(0, 1)),
                               ad.vjp_program(ad.stage(loss, y0, k))))

    small, large = work(10), work(40)
    # 4x the nodes: linear work is 4x (plus a constant); quadratic would be 16x
    assert large / small < 4.4, (small, large)


def test_every_optimizer_pass_visits_each_node_a_bounded_number_of_times(monkeypatch):
    from advect.staging import passes

    visits = {"n": 0}
    run, live, renumber = passes._Walk.run, passes._live, passes.renumber

    def counting_run(walk):
        visits["n"] += len(walk.graph.nodes)
        return run(walk)

    def counting_live(graph):
        visits["n"] += len(graph.nodes)
        return live(graph)

    def counting_renumber(graph):
        visits["n"] += len(graph.nodes)
        return renumber(graph)

    monkeypatch.setattr(passes._Walk, "run", counting_run)
    monkeypatch.setattr(passes, "_live", counting_live)
    monkeypatch.setattr(passes, "renumber", counting_renumber)
    y0, k = np.array([1.0, 0.0]), np.array(2.0)
    for steps in (10, 40):
        visits["n"] = 0
        program = ad.grad(ad.stage(rk4(steps), y0, k))
        nodes = program.optimization.nodes_before
        # both programs (the loop and its gradient): DCE (counting uses), one walk, DCE with
        # renumbering
        assert 0 < visits["n"] <= 6 * nodes, (steps, visits["n"], nodes)

"""Staging and staged derivation are linear in the number of nodes: the work (Python function
calls, counted, not timed) of staging an RK4 loop and deriving its gradient grows in proportion
to the number of steps."""

import cProfile
import pstats

import numpy as np

import advect as ad


def rk4(steps):
    def f(y, k):
        return np.stack([y[1], -k * np.sin(y[0])])

    def loss(y0, k):
        y, h = y0, 0.01
        for _ in range(steps):
            k1 = f(y, k)
            k2 = f(y + h / 2 * k1, k)
            k3 = f(y + h / 2 * k2, k)
            k4 = f(y + h * k3, k)
            y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return np.sum(y ** 2)
    return loss


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
    run, dce = passes._Walk.run, passes.dce

    def counting_run(walk):
        visits["n"] += len(walk.graph.nodes)
        return run(walk)

    def counting_dce(graph):
        visits["n"] += len(graph.nodes)
        return dce(graph)

    monkeypatch.setattr(passes._Walk, "run", counting_run)
    monkeypatch.setattr(passes, "dce", counting_dce)
    y0, k = np.array([1.0, 0.0]), np.array(2.0)
    for steps in (10, 40):
        visits["n"] = 0
        program = ad.grad(ad.stage(rk4(steps), y0, k))
        nodes = program.optimization.nodes_before
        # both programs (the loop and its gradient): DCE, one walk, DCE
        assert visits["n"] <= 6 * nodes, (steps, visits["n"], nodes)

"""The rest of the transform surface on the random programs of ``tests/programs.py``.

``test_compositions.py`` checks grad, jvp, vjp, hvp and the staged loss against central
differences and eager NumPy. Here each derivative of another form is checked against those
(already checked) dynamic transforms, on the same generated programs:

* ``linearize``: ``LinearMap(t)``, ``.apply_many``, ``.pullback``, ``.transpose_many`` and
  ``.transpose()`` against ``jvp`` and ``vjp``;
* ``jacobian`` against one ``jvp`` per input direction;
* ``vjp_program`` and ``jvp`` of a staged body against the dynamic ``vjp`` and ``jvp``;
* a saved staged body, staged gradient and staged pullback (JSON and back) against the
  originals, bit for bit;
* ``checkpoint`` around the body: the same gradient and Hessian-vector product;
* inside ``advect.debug`` (which turns the reverse pass's fast paths off): the same gradient,
  JVP and Hessian-vector product, bit for bit;
* a staged program called inside dynamic transforms and inside another staging: the same
  derivatives as the function it was staged from; ``hessian`` against ``jacobian(grad)``;
  staging from specs alone against staging from examples.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import advect as ad
from advect.pytree import tree_leaves
from programs import programs

FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                       HealthCheck.data_too_large])
SLOW = settings(FAST, max_examples=800, derandomize=False)
RTOL, ATOL = 1e-10, 1e-12


def _close(actual, expected, what: str) -> None:
    a, e = tree_leaves(actual), tree_leaves(expected)
    assert len(a) == len(e), f"{what}: {len(a)} leaves, expected {len(e)}"
    for k, (x, y) in enumerate(zip(a, e)):
        assert np.shape(x) == np.shape(y), f"{what} [{k}]: shape {np.shape(x)} != {np.shape(y)}"
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=RTOL, atol=ATOL,
                                   err_msg=f"{what} [{k}]")


def _identical(actual, expected, what: str) -> None:
    for k, (x, y) in enumerate(zip(tree_leaves(actual), tree_leaves(expected), strict=True)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape, f"{what} [{k}]"
        assert np.array_equal(x, y, equal_nan=True), f"{what} [{k}]"


def _arrays(program, dtype=np.float64) -> list:
    """The sample point with 0-d arrays for Python floats (staged and linearized alike)."""
    return [np.asarray(x) for x in program.inputs(dtype, python_floats=False)]


def _setup(program, dtype=np.float64):
    body, f, _, _, _ = program.eager(dtype)
    xs = _arrays(program, dtype)
    argnums = tuple(range(len(xs)))
    ts = tuple(program.directions(dtype, salt=1))
    out = body(*xs)
    rng = np.random.default_rng([program.seed, 2])
    us = [rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype) for o in tree_leaves(out)]
    ct = tuple(us) if isinstance(out, tuple) else us[0]
    return body, f, xs, argnums, ts, ct


def check_linearize(program):
    body, _, xs, argnums, ts, ct = _setup(program)
    _, tangent = ad.jvp(body, argnums=argnums)(*xs, tangents=ts)
    _, pullback = ad.vjp(body, argnums=argnums)(*xs)
    cotangents = pullback(ct)
    value, linear = ad.linearize(body, *xs, argnums=argnums)
    with linear:
        _close(value, body(*xs), "linearize value")
        _close(linear(ts), tangent, "LinearMap(t)")
        _close(linear.pullback(ct), cotangents, "LinearMap.pullback")
        _close(linear.transpose()(ct), cotangents, "LinearMap.transpose()")
        doubled = tuple(2.0 * t for t in ts)
        many = linear.apply_many([ts, doubled])
        _close(many[0], tangent, "apply_many [0]")
        _close(many[1], [2.0 * t for t in tree_leaves(tangent)], "apply_many [1]")
        back = linear.transpose_many([ct, ct])
        _close(back[1], cotangents, "transpose_many")


def check_jacobian(program):
    body, _, xs, argnums, _, _ = _setup(program)
    jac = ad.jacobian(body, argnums=argnums)(*xs)
    out = body(*xs)
    outs = tree_leaves(out)
    blocks = [jac] if not isinstance(out, tuple) else list(jac)
    for i, x in enumerate(xs):
        for k in range(np.size(x)):
            e = [np.zeros(np.shape(y)) for y in xs]
            e[i].reshape(-1)[k] = 1.0
            _, column = ad.jvp(body, argnums=argnums)(*xs, tangents=tuple(e))
            for o, block, col in zip(outs, blocks, tree_leaves(column)):
                entry = np.asarray(block[i]).reshape(np.shape(o) + (np.size(x),))[..., k]
                _close(entry, col, f"jacobian block (output, x{i}) column {k}")


def check_staged_jvp_and_pullback(program):
    body, _, xs, argnums, ts, ct = _setup(program)
    staged = ad.stage(body, *xs)
    _, tangent = ad.jvp(body, argnums=argnums)(*xs, tangents=ts)
    _, pullback = ad.vjp(body, argnums=argnums)(*xs)
    cotangents = pullback(ct)
    _close(ad.jvp(staged, argnums=argnums)(*xs, tangents=ts)[1], tangent, "jvp(staged)")
    staged_pullback = ad.vjp_program(staged, argnums=argnums)
    _close(staged_pullback(*xs, cotangent=ct), cotangents, "vjp_program")


def check_saved_programs(program):
    for dtype in (np.float64, np.float32):
        body, f, xs, argnums, _, ct = _setup(program, dtype)
        staged_body = ad.stage(body, *xs)
        cases = [(staged_body, {}),
                 (ad.value_and_grad(ad.stage(f, *xs), argnums=argnums), {}),
                 (ad.vjp_program(staged_body, argnums=argnums), {"cotangent": ct})]
        for original, kwargs in cases:
            restored = ad.StagedProgram.from_dict(json.loads(json.dumps(original.to_dict())))
            assert str(restored) == str(original)
            _identical(restored(*xs, **kwargs), original(*xs, **kwargs), "restored program")


def check_checkpoint(program):
    body, _, xs, argnums, ts, _ = _setup(program)

    def loss(*x):
        return sum(np.sum(o ** 2) for o in tree_leaves(body(*x)))

    def checkpointed(*x):
        return sum(np.sum(o ** 2) for o in tree_leaves(ad.checkpoint(body)(*x)))

    _close(ad.grad(checkpointed, argnums=argnums)(*xs), ad.grad(loss, argnums=argnums)(*xs),
           "grad through checkpoint")
    _close(ad.hvp(checkpointed, argnums=argnums)(*xs, vectors=ts)[1],
           ad.hvp(loss, argnums=argnums)(*xs, vectors=ts)[1], "hvp through checkpoint")


def check_debug(program):
    body, f, xs, argnums, ts, _ = _setup(program)

    def derivatives():
        return [ad.grad(f, argnums=argnums)(*xs),
                ad.jvp(body, argnums=argnums)(*xs, tangents=ts)[1],
                ad.hvp(f, argnums=argnums)(*xs, vectors=ts)[1]]

    plain = derivatives()
    with ad.debug():
        _identical(derivatives(), plain, "inside advect.debug")


def check_programs_inside_transforms(program):
    body, f, xs, argnums, ts, ct = _setup(program)
    staged_f, staged_body = ad.stage(f, *xs), ad.stage(body, *xs)
    grads = ad.grad(f, argnums=argnums)(*xs)
    _close(ad.grad(lambda *x: staged_f(*x), argnums=argnums)(*xs), grads,
           "dynamic grad through a program")
    _close(ad.jvp(lambda *x: staged_body(*x), argnums=argnums)(*xs, tangents=ts)[1],
           ad.jvp(body, argnums=argnums)(*xs, tangents=ts)[1], "dynamic jvp through a program")
    _close(ad.hvp(lambda *x: staged_f(*x), argnums=argnums)(*xs, vectors=ts)[1],
           ad.hvp(f, argnums=argnums)(*xs, vectors=ts)[1], "hvp through a program")
    outer = ad.stage(lambda *x: staged_f(*x) * 2.0, *xs)  # a program calling a program
    _close(ad.grad(outer, argnums=argnums)(*xs), [2.0 * g for g in grads],
           "staged grad of a program calling a program")
    hessian = ad.hessian(f, argnums=argnums)(*xs)
    jacobian = ad.jacobian(ad.grad(f, argnums=argnums), argnums=argnums)(*xs)
    _close(hessian, jacobian, "hessian vs jacobian of grad")
    assert staged_body.to_dot().startswith("digraph") and str(staged_body)
    specs = [ad.ArraySpec(np.shape(x), np.asarray(x).dtype.name) for x in xs]
    from_specs = ad.stage(body, specs=specs)  # no examples: the same program
    assert str(from_specs) == str(staged_body)
    _identical(from_specs(*xs), staged_body(*xs), "staged from specs")


CHECKS = [check_linearize, check_jacobian, check_staged_jvp_and_pullback, check_saved_programs,
          check_checkpoint, check_debug,
          check_programs_inside_transforms]


@FAST
@given(programs())
def test_linearize_agrees_with_jvp_and_vjp(program):
    check_linearize(program)


@FAST
@given(programs())
def test_jacobian_agrees_with_one_jvp_per_direction(program):
    check_jacobian(program)


@FAST
@given(programs())
def test_staged_jvp_and_pullback_agree_with_the_dynamic_ones(program):
    check_staged_jvp_and_pullback(program)


@FAST
@given(programs())
def test_saved_programs_and_their_derivatives_run_bit_for_bit(program):
    check_saved_programs(program)


@FAST
@given(programs())
def test_checkpointed_body_has_the_same_derivatives(program):
    check_checkpoint(program)


@FAST
@given(programs())
def test_derivatives_inside_debug_are_the_same(program):
    check_debug(program)


@FAST
@given(programs())
def test_programs_inside_transforms_have_the_same_derivatives(program):
    check_programs_inside_transforms(program)


@pytest.mark.slow
@SLOW
@given(programs(max_steps=10))
def test_every_transform_on_long_programs(program):
    for check in CHECKS:
        check(program)

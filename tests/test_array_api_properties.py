"""Random Array API programs on array-api-strict arrays against independent oracles.

The programs are written the way Array API code is, with ``xp = x.__array_namespace__()``
functions and operators only, over one or two inputs of broadcasting shapes; each drawn line is
run on sample arrays and dropped when array-api-strict rejects it (shapes that do not fit,
indices out of range). Each program is checked for ``grad`` and ``jvp`` against central
differences, ``vjp`` against ``jvp`` by the adjoint identity, the staged body, loss and gradient
against eager array-api-strict in value, shape and dtype, and float32 gradients for float32
inputs. Kinks are avoided by construction (no max, min, abs or comparisons with thresholds).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import advect as ad

xps = pytest.importorskip("array_api_strict")

FAST = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
SLOW = settings(FAST, max_examples=800, derandomize=False)
SHAPES = [(), (3,), (2, 1), (1, 3), (2, 3)]

UNARY = ["xp.sin({a})", "xp.cos({a})", "xp.tanh({a})", "xp.exp(0.5 * xp.tanh({a}))",
         "xp.log({a} * {a} + 0.5)", "xp.sqrt({a} * {a} + 0.5)", "-{a}", "xp.square({a})",
         "xp.atan({a})", "xp.log1p({a} * {a})", "xp.expm1(0.3 * {a})", "{a} ** 2", "{a} ** 3",
         "1.0 / (1.0 + {a} * {a})", "2.5 * {a}", "{a} + 1.0", "3.0 - {a}", "{a} / 4.0",
         "xp.hypot({a}, xp.ones_like({a}))", "xp.logaddexp({a}, 0.5 * {a})"]
BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "{a} / (1.5 + xp.cos({b}))",
          "xp.atan2({a}, 1.5 + xp.cos({b}))", "xp.concat([{a}, {b}], axis=0)",
          "xp.concat([{a}, {b}], axis=-1)", "xp.stack([{a}, {b}])", "{a} @ {b}",
          "xp.matmul({a}, xp.matrix_transpose({b}))", "xp.vecdot({a}, {b})",
          "xp.tensordot({a}, {b}, axes=1)"]
SHAPE_OPS = ["xp.permute_dims({a}, tuple(range({a}.ndim))[::-1])", "xp.reshape({a}, (-1,))",
             "xp.expand_dims({a}, axis=0)", "xp.broadcast_to({a}, (2, *{a}.shape))",
             "xp.flip({a}, axis=0)", "xp.flip({a})", "{a}.mT", "xp.squeeze({a}, axis=0)",
             "xp.roll({a}, 1, axis=0)", "xp.roll({a}, -1)", "{a}[1:]", "{a}[::-1]", "{a}[0]",
             "{a}[..., -1:]", "{a}[:, 1:]", "xp.take({a}, xp.asarray([1, 0]), axis=0)",
             "xp.cumulative_sum({a}, axis=0)", "xp.tile({a}, (2,))", "xp.moveaxis({a}, 0, -1)",
             "xp.repeat({a}, 2, axis=0)"]
REDUCE = ["xp.sum({a}, axis={axis}, keepdims={keep})",
          "xp.mean({a}, axis={axis}, keepdims={keep})",
          "xp.prod({a}, axis={axis}, keepdims={keep})", "xp.linalg.vector_norm({a} + 2.0)",
          "xp.var({a}, axis={axis})", "xp.cumulative_prod({a} + 2.0, axis=0)"]
FINISH = ["xp.sum({v})", "xp.mean({v}) * 3.0", "xp.sum({v} ** 2)", "xp.sum(xp.sin({v}))"]


@dataclass(frozen=True)
class Program:
    source: str
    shapes: tuple
    seed: int

    def __repr__(self) -> str:
        return f"Program(shapes={self.shapes}, seed={self.seed}):\n{self.source}"

    def functions(self):
        env: dict = {}
        exec(compile(self.source, "<array api program>", "exec"), env)
        return env["body"], env["f"]

    def inputs(self, dtype=xps.float64) -> list:
        rng = np.random.default_rng(self.seed)
        return [xps.asarray(rng.uniform(-1.2, 1.2, s), dtype=dtype) for s in self.shapes]

    def directions(self, dtype=xps.float64, salt: int = 1) -> list:
        rng = np.random.default_rng([self.seed, salt])
        return [xps.asarray(rng.standard_normal(s), dtype=dtype) for s in self.shapes]


def _run(lines: list, names: list, samples: list):
    env: dict = {}
    source = "def body(" + ", ".join(names) + "):\n    xp = x0.__array_namespace__()\n" + \
        "".join(f"    {line}\n" for line in lines) + f"    return v{len(lines) - 1}\n"
    exec(compile(source, "<draft>", "exec"), env)
    return env["body"](*samples), source


@st.composite
def programs(draw, max_steps: int = 6) -> Program:
    shapes = tuple(draw(st.sampled_from(SHAPES)) for _ in range(draw(st.integers(1, 2))))
    names = [f"x{i}" for i in range(len(shapes))]
    samples = [xps.asarray(np.full(s, 0.5 + 0.1 * i)) for i, s in enumerate(shapes)]
    lines: list = []
    for _ in range(draw(st.integers(1, max_steps))):
        pool = names + [f"v{k}" for k in range(len(lines))]
        a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        kind = draw(st.sampled_from(["unary", "binary", "binary", "shape", "reduce"]))
        if kind == "unary":
            expr = draw(st.sampled_from(UNARY)).format(a=a)
        elif kind == "binary":
            expr = draw(st.sampled_from(BINARY)).format(a=a, b=b)
        elif kind == "shape":
            expr = draw(st.sampled_from(SHAPE_OPS)).format(a=a)
        else:
            axis = draw(st.sampled_from([None, 0, -1, (0, 1)]))
            expr = draw(st.sampled_from(REDUCE)).format(a=a, axis=axis,
                                                        keep=draw(st.booleans()))
        candidate = [*lines, f"v{len(lines)} = {expr}"]
        try:
            with np.errstate(all="ignore"):
                _run(candidate, names, samples)
        except Exception:  # array-api-strict rejects it: drop the line
            continue
        lines = candidate
    assume(lines)
    out, source = _run(lines, names, samples)
    finish = draw(st.sampled_from(FINISH)).format(v=f"v{len(lines) - 1}")
    source += f"\ndef f({', '.join(names)}):\n    xp = x0.__array_namespace__()\n" \
              f"    v{len(lines) - 1} = body({', '.join(names)})\n    return {finish}\n"
    return Program(source, shapes, draw(st.integers(0, 2**16)))


def _np(x) -> np.ndarray:
    return np.asarray(x)


def _strict(x) -> bool:
    return type(x).__module__.startswith("array_api_strict")


def _central(fun, xs, ts, eps=1e-6) -> np.ndarray:
    up = fun(*[x + eps * t for x, t in zip(xs, ts)])
    down = fun(*[x - eps * t for x, t in zip(xs, ts)])
    return (_np(up) - _np(down)) / (2 * eps)


def _close(actual, expected, what: str, rtol: float, atol: float) -> None:
    np.testing.assert_allclose(_np(actual), _np(expected), rtol=rtol, atol=atol, err_msg=what)


def check(program: Program) -> None:
    body, f = program.functions()
    xs = program.inputs()
    with np.errstate(all="ignore"):
        out, loss = body(*xs), f(*xs)
    assume(np.all(np.isfinite(_np(out))) and np.isfinite(float(loss)) and abs(float(loss)) < 1e4)
    argnums = tuple(range(len(xs)))
    grads = ad.grad(f, argnums=argnums)(*xs)
    for i, (g, x) in enumerate(zip(grads, xs)):
        assert _strict(g) and g.dtype == x.dtype and g.shape == x.shape, f"grad wrt x{i}"
        for k in range(int(np.prod(x.shape, dtype=int))):
            e = [np.zeros(y.shape) for y in xs]
            e[i].reshape(-1)[k] = 1.0
            fd = _central(f, xs, [xps.asarray(d) for d in e])
            _close(_np(g).reshape(-1)[k], fd, f"grad wrt x{i} [{k}] vs central differences",
                   1e-4, 1e-5)
    ts = program.directions()
    value, tangent = ad.jvp(body, argnums=argnums)(*xs, tangents=tuple(ts))
    assert _strict(tangent) and tangent.dtype == out.dtype and tangent.shape == out.shape
    _close(value, out, "jvp value", 1e-12, 1e-12)
    _close(tangent, _central(body, xs, ts), "jvp tangent vs central differences", 1e-4, 1e-5)
    u = xps.asarray(np.random.default_rng([program.seed, 3]).standard_normal(out.shape))
    _, pullback = ad.vjp(body, argnums=argnums)(*xs)
    cts = pullback(u)
    lhs = float(np.sum(_np(u) * _np(tangent)))
    rhs = sum(float(np.sum(_np(c) * _np(t))) for c, t in zip(cts, ts))
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9 * (1 + abs(lhs))), "adjoint identity"
    staged_body, staged_f = ad.stage(body, *xs), ad.stage(f, *xs)
    got = staged_body(*xs)
    assert _strict(got) and got.dtype == out.dtype and got.shape == out.shape, "staged body"
    _close(got, out, "staged body vs eager", 1e-9, 1e-12)
    _close(staged_f(*xs), loss, "staged loss vs eager", 1e-9, 1e-12)
    for i, (s, g) in enumerate(zip(ad.grad(staged_f, argnums=argnums)(*xs), grads)):
        assert _strict(s) and s.dtype == g.dtype, f"staged grad wrt x{i}"
        _close(s, g, f"staged grad wrt x{i} vs dynamic", 1e-9, 1e-12)
    xs32 = program.inputs(xps.float32)
    with np.errstate(all="ignore"):
        out32 = body(*xs32)
    for i, (g, x) in enumerate(zip(ad.grad(f, argnums=argnums)(*xs32), xs32)):
        assert g.dtype == xps.float32 and g.shape == x.shape, f"float32 grad wrt x{i}"
    got32 = ad.stage(body, *xs32)(*xs32)
    assert got32.dtype == out32.dtype and got32.shape == out32.shape, "float32 staged body"


@FAST
@given(programs())
def test_array_api_programs(program):
    check(program)


@pytest.mark.slow
@SLOW
@given(programs(max_steps=10))
def test_array_api_programs_long(program):
    check(program)

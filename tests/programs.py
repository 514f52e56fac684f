"""Random NumPy programs for the composition tests (``tests/test_compositions.py``).

A :class:`Program` is readable, runnable source written the way users write NumPy code::

    def body(x0, x1):
        v0 = np.sin(x0)
        _away(v0, 0.1)
        v1 = np.where(v0 > 0.1, v0 * 2.0, x1)
        return v1

    def f(x0, x1):
        return np.sum(body(x0, x1) ** 2)

``body`` returns an array (for ``vjp`` and ``jvp``), ``f`` a scalar loss (for ``grad``, ``hvp``
and staged gradients). The :func:`programs` strategy draws each step from Hypothesis, so a failing
program shrinks to a short one. Every line is run on sample arrays while it is drawn: a line NumPy
rejects (shapes that do not broadcast, an index out of range) is dropped, so every program is valid
NumPy and its shapes are NumPy's own.

Kinks are kept away from the sample point, so central differences are a fair oracle:
``_away(a, c)`` before ``abs``, ``where``, ``maximum`` and ``minimum``, and ``_gap(a, axis, kind)``
before ``max`` and ``min`` reductions (the two extreme entries are apart). On NumPy values they
raise :class:`Kink` when the point is within :data:`MARGIN` of the kink (the test then discards
the program); on traced values they do nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

import advect as ad

SHAPES = [(), (3,), (2, 1), (1, 3), (2, 3), (2, 3, 1)]
MARGIN = 1e-3


class Kink(Exception):
    """The sample point is too close to a kink for central differences."""


def _away(a, b=0.0) -> None:
    if ad.is_traced(a) or ad.is_traced(b):
        return
    d = np.abs(np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64))
    if d.size and d.min() < MARGIN:
        raise Kink(f"an operand is within {MARGIN} of a kink")


def _gap(a, axis, kind: str) -> None:
    """The largest (``kind="max"``) or smallest two entries along ``axis`` are apart."""
    if ad.is_traced(a):
        return
    a = np.asarray(a, dtype=np.float64)
    if a.ndim == 0 or a.size == 0:
        return
    axes = tuple(range(a.ndim)) if axis is None else (
        (axis,) if isinstance(axis, int) else tuple(axis))
    axes = tuple(ax % a.ndim for ax in axes)
    moved = np.moveaxis(a, axes, tuple(range(-len(axes), 0)))
    flat = np.sort(moved.reshape(moved.shape[:moved.ndim - len(axes)] + (-1,)), axis=-1)
    if flat.shape[-1] < 2:
        return
    gap = flat[..., -1] - flat[..., -2] if kind == "max" else flat[..., 1] - flat[..., 0]
    if gap.min() < MARGIN:
        raise Kink(f"two {kind} candidates are within {MARGIN} of each other")


def _distinct(a) -> None:
    """All entries are apart (a sort or a permutation by value is smooth here)."""
    if ad.is_traced(a):
        return
    flat = np.sort(np.asarray(a, dtype=np.float64).reshape(-1))
    if flat.size > 1 and np.diff(flat).min() < MARGIN:
        raise Kink(f"two entries are within {MARGIN} of each other")


GUARDS = {"np": np, "_away": _away, "_gap": _gap, "_distinct": _distinct}
_NO_GUARDS = {"np": np, "_away": lambda *a: None, "_gap": lambda *a: None,
              "_distinct": lambda *a: None}


@dataclass(frozen=True)
class Program:
    """One generated program: its source, input shapes, which 0-d inputs are Python floats, and
    the seed of its sample point."""

    source: str
    shapes: tuple
    python_float: tuple
    seed: int

    def __repr__(self) -> str:
        return (f"Program(shapes={self.shapes}, python_float={self.python_float}, "
                f"seed={self.seed}):\n{self.source}")

    def functions(self):
        """``(body, f)``: the array-valued body and the scalar loss."""
        env = dict(GUARDS)
        exec(compile(self.source, "<program>", "exec"), env)
        return env["body"], env["f"]

    def inputs(self, dtype=np.float64, python_floats: bool = True) -> list:
        """The sample point: uniform in [-1.2, 1.2]; Python floats where ``python_float`` (with
        ``python_floats``, else 0-d arrays of ``dtype``)."""
        rng = np.random.default_rng(self.seed)
        out = []
        for shape, scalar in zip(self.shapes, self.python_float):
            x = rng.uniform(-1.2, 1.2, shape)
            out.append(float(x) if scalar and python_floats else x.astype(dtype))
        return out

    def eager(self, dtype=np.float64):
        """``(body, f, inputs, body's output, loss)`` at the sample point, computed by NumPy;
        a wild or kinked point is discarded (Hypothesis ``assume``)."""
        body, f = self.functions()
        xs = self.inputs(dtype)
        try:
            with np.errstate(all="ignore"):
                out, loss = body(*xs), f(*xs)
        except Kink:
            assume(False)
        assume(np.isfinite(loss) and abs(loss) < 1e4)
        outs = list(out) if isinstance(out, tuple) else [out]
        assume(all(np.all(np.isfinite(o)) and np.max(np.abs(o), initial=0) < 1e4 for o in outs))
        return body, f, xs, out, loss

    def directions(self, dtype=np.float64, salt: int = 1) -> list:
        """Random tangents (or cotangents) for the inputs, 0-d arrays for Python floats."""
        rng = np.random.default_rng([self.seed, salt])
        return [rng.standard_normal(shape).astype(dtype) for shape in self.shapes]


def _literal(rng: np.random.Generator, shape: tuple) -> str:
    values = np.round(rng.uniform(-1.0, 1.0, shape), 2)
    return f"np.array({values.tolist()!r})" if values.size else f"np.zeros({shape!r})"


class _Builder:
    """Draws steps; keeps sample values (all 0.5-ish, from a fixed generator) to learn shapes."""

    def __init__(self, draw, shapes, python_float):
        self.draw = draw
        self.rng = np.random.default_rng(0)
        self.env = dict(_NO_GUARDS)
        self.names: list[str] = []
        self.lines: list[str] = []
        for i, (shape, scalar) in enumerate(zip(shapes, python_float)):
            x = self.rng.uniform(0.2, 0.9, shape)
            self.env[f"x{i}"] = float(x) if scalar else x
            self.names.append(f"x{i}")
        self.n = 0

    def shape(self, name: str) -> tuple:
        return np.shape(self.env[name])

    def pick(self) -> str:
        return self.draw(st.sampled_from(self.names[::-1]))  # shrinks towards the newest

    def emit(self, expr: str, guards: tuple = (), update: str | None = None) -> None:
        """Add ``v = expr`` (after its guards, then ``update``, an in-place statement on ``v``),
        unless NumPy rejects it on the sample values."""
        name = f"v{self.n}"
        lines = list(guards) + [f"{name} = {expr}"]
        if update is not None:
            lines.append(update.format(v=name))
        trial = dict(self.env)
        try:
            with np.errstate(all="ignore"):
                for line in lines:
                    exec(line, trial)
        except (ValueError, IndexError, TypeError, AttributeError):
            return
        value = trial[name]
        if not isinstance(value, np.ndarray | np.floating | float) or np.ndim(value) > 4 \
                or np.size(value) > 64 or np.asarray(value).dtype.kind != "f":
            return
        self.env = trial
        self.lines.extend(lines)
        self.names.append(name)
        self.n += 1

    # --- the steps ---------------------------------------------------------------------------

    def unary(self) -> None:
        a = self.pick()
        form = self.draw(st.sampled_from([
            "np.sin({a})", "np.cos({a})", "np.tanh({a})", "np.exp(0.5 * np.tanh({a}))",
            "np.log({a} * {a} + 0.5)", "np.sqrt({a} * {a} + 0.5)", "np.abs({a})", "-{a}",
            "np.square({a})", "np.arctan({a})", "np.log1p({a} * {a})", "np.expm1(0.3 * {a})",
            "{a} ** 2", "{a} ** 3", "np.abs({a}) ** 1.5", "1.0 / (1.0 + {a} * {a})",
            "np.hypot({a}, 0.7)", "np.maximum({a}, 0.1)", "np.minimum({a}, -0.2)",
            "np.exp({a}) / (1.0 + np.exp({a}))",
        ]))
        guards = ()
        if "abs" in form:
            guards = (f"_away({a}, 0.0)",)
        elif "maximum" in form:
            guards = (f"_away({a}, 0.1)",)
        elif "minimum" in form:
            guards = (f"_away({a}, -0.2)",)
        self.emit(form.format(a=a), guards)

    def scalar(self) -> None:
        a = self.pick()
        form = self.draw(st.sampled_from([
            "2.5 * {a}", "{a} * 2", "{a} + 1", "3 - {a}", "{a} / 4.0", "{a} - 0.25",
            "0.5 ** {a}", "2.0 ** {a}", "{a} * -1.5",
        ]))
        self.emit(form.format(a=a))

    def binary(self) -> None:
        a, b = self.pick(), self.pick()
        op = self.draw(st.sampled_from(["+", "-", "*", "*", "/", "max", "min", "arctan2"]))
        if op == "/":
            self.emit(f"{a} / (1.5 + np.cos({b}))")
        elif op in ("max", "min"):
            self.emit(f"np.{op}imum({a}, {b})", (f"_away({a}, {b})",))
        elif op == "arctan2":
            self.emit(f"np.arctan2({a}, 1.5 + np.cos({b}))")
        else:
            self.emit(f"{a} {op} {b}")

    def constant(self) -> None:
        """A binary op with a constant array of a drawn (broadcasting) shape."""
        a = self.pick()
        shape = self.draw(st.sampled_from(SHAPES))
        op = self.draw(st.sampled_from(["+", "*", "-"]))
        c = _literal(self.rng, shape)
        self.emit(f"{c} {op} {a}" if self.draw(st.booleans()) else f"{a} {op} {c}")

    def reduce(self) -> None:
        a = self.pick()
        ndim = len(self.shape(a))
        kind = self.draw(st.sampled_from(["sum", "mean", "max", "min", "prod"]))
        axis_choices = [None] + list(range(-ndim, ndim))
        if ndim >= 2:
            axis_choices += [(0, 1), (0, -1), tuple(range(ndim))]
        axis = self.draw(st.sampled_from(axis_choices))
        keep = self.draw(st.booleans())
        guards = (f"_gap({a}, {axis!r}, {kind!r})",) if kind in ("max", "min") else ()
        if self.draw(st.booleans()):
            self.emit(f"np.{kind}({a}, axis={axis!r}, keepdims={keep})", guards)
        elif keep:
            self.emit(f"{a}.{kind}(axis={axis!r}, keepdims=True)", guards)
        else:
            self.emit(f"{a}.{kind}({'' if axis is None else repr(axis)})", guards)

    def shape_op(self) -> None:
        a = self.pick()
        shape = self.shape(a)
        form = self.draw(st.sampled_from([
            "{a}.T", "{a}.reshape(-1)", "np.expand_dims({a}, 0)", "np.broadcast_to({a}, {b})",
            "{a}[None]", "{a}[..., None]", "np.squeeze({a})", "np.transpose({a})",
            "np.moveaxis({a}, 0, -1)", "{a}.ravel()", "np.flip({a}, 0)",
        ]))
        self.emit(form.format(a=a, b=(2,) + shape))

    def index(self) -> None:
        a = self.pick()
        sel = self.draw(st.sampled_from([
            "[1:]", "[::-1]", "[0]", "[-1]", "[[0, 1, 0]]", "[..., -1:]", "[:, 1:]", "[..., 0]",
            "[np.array([1, 0])]", "[:, [2, 0, 2]]", "[..., [True, False, True]]", "[1:, ::2]",
            "[[0, 1], [0, 0]]", "[np.array([[1], [0]]), np.array([0, 2])]",
        ]))
        self.emit(f"{a}{sel}")

    def where(self) -> None:
        a, b = self.pick(), self.pick()
        form = self.draw(st.sampled_from([
            "np.where({a} > 0.1, {a} * 2.0, {b})", "np.where({a} > 0.1, {b}, 0.0)",
            "np.where({a} < 0.1, {b}, {a} ** 2)",
        ]))
        self.emit(form.format(a=a, b=b), (f"_away({a}, 0.1)",))

    def matmul(self) -> None:
        a, b = self.pick(), self.pick()
        form = self.draw(st.sampled_from(["{a} @ {b}", "{a} @ {b}.T", "np.matmul({a}, {b})",
                                          "{a} @ {c}", "{c} @ {a}", "np.dot({a}, {b})",
                                          "{a} @ {a}.T", "{a}.T @ {b}", "np.dot({a}, {c})"]))
        shape = self.shape(a)
        if "{c}" in form:
            n = shape[-1] if form.startswith("{a}") and shape else (
                shape[-2] if len(shape) >= 2 else (shape[0] if shape else 1))
            c = _literal(self.rng, (n, 2) if form.startswith("{a}") else (2, n))
            self.emit(form.format(a=a, c=c))
        else:
            self.emit(form.format(a=a, b=b))

    def concat(self) -> None:
        a, b = self.pick(), self.pick()
        form = self.draw(st.sampled_from([
            "np.concatenate([{a}, {b}], axis=0)", "np.concatenate([{a}, {b}], axis=-1)",
            "np.concatenate([{a}, {a} * {b}])", "np.stack([{a}, {b}])",
        ]))
        self.emit(form.format(a=a, b=b))

    def roll(self) -> None:
        a = self.pick()
        form = self.draw(st.sampled_from(["np.roll({a}, 1, axis=0)", "np.roll({a}, -1)",
                                          "np.roll({a}, 2, axis=-1)"]))
        self.emit(form.format(a=a))

    def cumsum(self) -> None:
        a = self.pick()
        form = self.draw(st.sampled_from(["np.cumsum({a}, axis=0)", "np.cumsum({a})",
                                          "{a}.cumsum(axis=-1)", "np.cumprod({a}, axis=0)"]))
        self.emit(form.format(a=a))

    def update(self) -> None:
        """An in-place update of a local copy: ``v = a.copy(); v[1:] += b``."""
        a, b = self.pick(), self.pick()
        target = self.draw(st.sampled_from(["[1:]", "[0]", "[..., :1]", "[[0, 0]]", ""]))
        op = self.draw(st.sampled_from(["=", "+=", "-=", "*="]))
        if target == "":
            statement = f"{{v}} {op} {b}" if op != "=" else f"{{v}}[...] = {b}"
        else:
            statement = f"{{v}}{target} {op} {b}"
        self.emit(f"{a}.copy()", update=statement)

    def extra(self) -> None:
        """Other functions users reach for: clip, var/std, norm, sort, diff, outer, einsum."""
        a, b = self.pick(), self.pick()
        form = self.draw(st.sampled_from([
            "np.clip({a}, -0.3, 0.4)", "np.var({a}, axis=0)", "np.std({a})",
            "np.linalg.norm({a})", "np.sort({a}, axis=-1)", "np.diff({a}, axis=0)",
            "np.outer({a}, {b})", "np.einsum('...i->...', {a})", "np.take({a}, [2, 0], axis=-1)",
            "np.logaddexp({a}, {b})", "np.log(np.sum(np.exp({a})))", "np.tile({a}, 2)",
            "np.repeat({a}, 2, axis=0)", "np.flip({a})", "np.swapaxes({a}, 0, -1)",
            "np.atleast_2d({a})", "np.trace({a})", "np.tril({a})", "{a}.clip(min=0.1)",
        ]))
        guards = ()
        if "clip" in form:
            guards = (f"_away({a}, -0.3)", f"_away({a}, 0.4)", f"_away({a}, 0.1)")
        elif "std" in form or "norm" in form:
            guards = (f"_away(np.sum({a} * {a}), 0.0)", f"_away(np.var({a}), 0.0)")
        elif "sort" in form:
            guards = (f"_distinct({a})",)
        self.emit(form.format(a=a, b=b), guards)

    STEPS = ("unary", "unary", "scalar", "binary", "binary", "constant", "reduce", "reduce",
             "shape_op", "index", "where", "matmul", "matmul", "concat", "roll", "cumsum",
             "update", "extra")


# linear finishers come first and twice: a cotangent that arrives from a sum or mean as a 0-d
# stand-in is what lost reduction factors in reverse mode (issue 10)
FINISH = ["np.sum({v})", "np.mean({v})", "{v}.sum()", "np.mean({v}) * 3.0", "np.sum({v})",
          "np.sum({v} ** 2)", "np.sum(np.sin({v}))", "np.sum({v} * {v}) / 2.0",
          "np.sum(np.tanh({v}) * {c})"]


@st.composite
def programs(draw, max_steps: int = 6) -> Program:
    """A random NumPy program over one or two inputs of the shapes in :data:`SHAPES`."""
    n_inputs = draw(st.integers(1, 2))
    shapes = tuple(draw(st.sampled_from(SHAPES)) for _ in range(n_inputs))
    python_float = tuple(s == () and draw(st.booleans()) for s in shapes)
    b = _Builder(draw, shapes, python_float)
    for _ in range(draw(st.integers(1, max_steps))):
        getattr(b, draw(st.sampled_from(_Builder.STEPS)))()
    last = b.names[-1]
    reads = [line.split("=", 1)[-1] for line in b.lines if not line.startswith("_")]
    unused = [n for n in b.names[n_inputs:-1]
              if not any(re.search(rf"\b{n}\b", rhs) for rhs in reads)]
    finish = draw(st.sampled_from(FINISH))
    if isinstance(b.env[last], float):  # a Python float has no .sum()
        finish = finish.replace("{v}.sum()", "np.sum({v})")
    finish = finish.format(v="v", c=_literal(b.rng, b.shape(last)))
    args = ", ".join(f"x{i}" for i in range(n_inputs))
    body = "\n".join(f"    {line}" for line in b.lines) or "    pass"
    if unused:  # every value reaches an output: body returns a tuple, f sums them all
        outs = ", ".join(unused)
        source = (f"def body({args}):\n{body}\n    return {last}, {outs}\n\n"
                  f"def f({args}):\n    v, {outs} = body({args})\n    return {finish}"
                  + "".join(draw(st.sampled_from([" + np.sum({})", " + np.sum(np.cos({}))"]))
                            .format(n) for n in unused) + "\n")
    else:
        source = (f"def body({args}):\n{body}\n    return {last}\n\n"
                  f"def f({args}):\n    v = body({args})\n    return {finish}\n")
    return Program(source, shapes, python_float, draw(st.integers(0, 2**32 - 1)))

"""Staged derivatives: ``grad``, ``value_and_grad`` and ``vjp_program`` of a StagedProgram.

A derivative program is staged like any function: the function is the dynamic transform
(``ad.value_and_grad``, or linearize + backward for the pullback) applied to the primal program,
which, called with traced arguments, interprets its graph with ``bind``. Inside a new staging
trace the JVP rules and transposes then emit graph nodes, and the same optimizer and planner
run. Warm calls of the result run only its plan: no tape, no reverse sweep.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .. import ops
from ..autodiff import api
from ..autodiff.reverse import backward, linearize_flat, lower
from ..pytree import TreeDef, tree_flatten, tree_structure_in_order, tree_unflatten
from .program import StagedProgram, build_program, require_program
from .specs import PYTHON_SCALAR, ArraySpec, StaticSpec, check_call, is_spec

__all__ = ["staged_grad", "staged_value_and_grad", "vjp_program"]

COTANGENT = "cotangent"


class _Selected(NamedTuple):
    """A checked selection: the selected spec trees in the structure of the result (int ->
    tree, tuple -> tuple, names -> dict in the order named, both -> pair), and the flat
    signature positions of its Python int slots (lifted to weak float64, as ``grad`` lifts a
    Python int)."""

    specs: Any
    lifted: frozenset


def _selection(program: StagedProgram, argnums, argnames, where: str,
               lift_ints: bool = True) -> _Selected:
    """Check a selection against the signature (``lift_ints``: a Python int slot is
    differentiated as a weak float64 and a Python bool slot gets a zero gradient, as ``grad``
    treats them; else both are refused, as ``vjp_program`` does)."""
    pos, kw = program.signature
    if argnums is None and argnames is None:
        argnums = 0
    single, nums = api.selected_argnums(argnums, where)
    resolved = []
    for n in nums:
        if not -len(pos) <= n < len(pos):
            raise IndexError(f"{where}: argnums {n} is out of range for a program with "
                             f"{len(pos)} positional inputs")
        resolved.append(int(n) % len(pos))
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"{where}: argnums {argnums} selects an input twice")
    names = api.selected_argnames(argnames, where)
    for name in names:
        if name not in kw:
            raise ValueError(f"{where}: {name!r} is not a keyword input of the staged "
                             f"signature (it has {sorted(kw)})")
    slots = program._in_def.children  # (positional, keyword) spec trees, flattened in order
    starts = _leaf_starts([*slots[0].children, *slots[1].children])
    keyword = dict(zip(slots[1].aux, starts[len(pos):]))
    lifted = set()
    for tree, start in [(pos[n], starts[n]) for n in resolved] + [
            (kw[name], keyword[name]) for name in names]:
        for i, spec in enumerate(tree_flatten(tree, is_leaf=is_spec)[0]):
            _check_differentiable(spec, where, lift_ints)
            if isinstance(spec, ArraySpec) and spec.weak and spec.dtype.kind == "i":
                lifted.add(start + i)
    positional = pos[resolved[0]] if single else tuple(pos[n] for n in resolved)
    named = {name: kw[name] for name in names}
    if argnames is None:
        return _Selected(positional, frozenset(lifted))
    return _Selected(named if argnums is None else (positional, named), frozenset(lifted))


def _leaf_starts(trees: list[TreeDef]) -> list[int]:
    """The flat position of each tree's first leaf, the trees laid out one after another."""
    starts, n = [], 0
    for tree in trees:
        starts.append(n)
        n += tree.num_leaves
    return starts


# static leaves that grad would differentiate (or give zeros), which a program cannot
_NUMBERS = (bool, int, float, complex, np.ndarray, np.generic)


def _check_differentiable(spec, where: str, lift_ints: bool) -> None:
    if isinstance(spec, StaticSpec):
        if not any(isinstance(leaf, _NUMBERS) for leaf in tree_flatten(spec.value)[0]):
            return  # a string, None, ...: a None gradient, as grad gives a non-array leaf
        raise TypeError(f"{where}: a selected input holds the static value {spec.value!r}, "
                        "whose numbers the program holds as compile-time constants, so it has "
                        "no derivative; declare it with ArraySpec to differentiate it, or "
                        "select only array inputs")
    if spec.weak and spec.dtype.kind in "ib" and lift_ints:
        return
    if spec.weak and spec.dtype.kind != "f":
        kind = PYTHON_SCALAR[spec.dtype.kind].__name__
        raise TypeError(f"{where}: a selected input is a Python {kind} scalar; only real "
                        "floating weak scalars can be differentiated" + (
                            "" if lift_ints else " (ad.grad also takes Python int and bool "
                            "inputs)"))


def _derive(program: StagedProgram, fn, kw: dict, selected: _Selected,
            start: int) -> StagedProgram:
    """Stage ``fn`` on the program's signature (plus ``kw``). The gradient outputs (flat leaves
    from ``start`` on) have their input's type: Python floats where it was a Python int or
    float, NumPy scalars where it was a NumPy float or complex scalar, 0-d ndarrays where it was
    a 0-d array (as ``np.zeros_like`` of it), a NumPy integer or a Python bool (whose zero
    gradient dynamic ``grad`` gives as ``np.zeros((), bool)``)."""
    pos, primal_kw = program.signature
    derived = build_program(fn, pos, {**primal_kw, **kw}, program.array_api_version,
                            xp=None)
    leaves = tree_flatten(selected.specs, is_leaf=is_spec)[0]
    specs = [leaves[i] for i in tree_structure_in_order(selected.specs)[1]  # as outputs are,
             if isinstance(leaves[i], ArraySpec)]  # a static leaf's None gradient has none
    flags, scalars = list(derived._out_python), list(derived._out_scalars)
    n = len(specs)
    flags[start:start + n] = [s.weak and s.dtype.kind != "b" for s in specs]
    # a NumPy float or complex scalar input gets a NumPy scalar gradient, as from ``grad``
    scalars[start:start + n] = [s.numpy_scalar and s.dtype.kind in "fc" if s.shape == () and (
        s.dtype.kind == "b" or not s.weak) else None for s in specs]
    return derived._with_output_types(flags, scalars)


def staged_value_and_grad(program: StagedProgram, argnums: int | Sequence[int] | None = None,
                          *, argnames: str | Sequence[str] | None = None,
                          has_aux: bool = False) -> StagedProgram:
    """``value_and_grad`` of a staged program, as a staged program (see ``ad.value_and_grad``).

    Example:
        >>> import numpy as np, advect as ad
        >>> program = ad.stage(lambda x: np.sum(x ** 2), np.ones(2))
        >>> value, gradient = ad.value_and_grad(program)(np.array([1.0, 2.0]))
        >>> float(value), gradient.tolist()
        (5.0, [2.0, 4.0])
    """
    selected = _selection(require_program(program, "value_and_grad"), argnums, argnames,
                          "value_and_grad")
    dynamic = api.value_and_grad(_as_function(program, selected.lifted), argnums,
                                 argnames=argnames, has_aux=has_aux)
    return _derive(program, dynamic, {}, selected, start=1)


def staged_grad(program: StagedProgram, argnums: int | Sequence[int] | None = None, *,
                argnames: str | Sequence[str] | None = None,
                has_aux: bool = False) -> StagedProgram:
    """``grad`` of a staged program, as a staged program (see ``ad.grad``).

    Example:
        >>> import numpy as np, advect as ad
        >>> program = ad.stage(lambda x: np.sum(x ** 2), np.ones(2))
        >>> ad.grad(program)(np.array([1.0, 2.0])).tolist()
        [2.0, 4.0]
    """
    selected = _selection(require_program(program, "grad"), argnums, argnames, "grad")
    dynamic = api.grad(_as_function(program, selected.lifted), argnums, argnames=argnames,
                       has_aux=has_aux)
    return _derive(program, dynamic, {}, selected, start=0)


_LIFTED = ArraySpec((), "float64", weak=True)


def _as_function(program: StagedProgram, lifted: frozenset = frozenset()):
    """The program as a function of traced arguments; the signature positions in ``lifted``
    (selected Python int slots) take the weak float64 that the transform lifts them to."""
    specs = [_LIFTED if i in lifted else s for i, s in enumerate(program._specs)]

    def primal(*args, **kwargs):
        if not lifted:
            return program(*args, **kwargs)
        operands = check_call(program._in_def, specs, args, kwargs, None)
        return tree_unflatten(program._out_def, program._interpret(operands))
    primal.__name__ = program._name
    return primal


def vjp_program(f: StagedProgram, argnums: int | Sequence[int] | None = None, *,
                argnames: str | Sequence[str] | None = None) -> StagedProgram:
    """Compile a reusable staged pullback of a staged program.

    The result takes the primal inputs plus a keyword-only ``cotangent`` with the primal
    output's pytree and leaf specs, and returns the input cotangents (real adjoint) in the
    selection's structure: an int ``argnums`` gives that input's tree, a tuple a tuple,
    ``argnames`` a dict, both ``(positional, named)``.

    Raises:
        TypeError: ``f`` is not a StagedProgram, or a selected weak scalar is not real
            floating; a selected integer or bool array gets a cotangent of zeros in its own
            dtype and a selected static value ``None``, as with ``vjp``.
        IndexError: ``argnums`` out of range for the signature.
        ValueError: a duplicate selection, a name absent from the signature, or a primal
            signature that already has a ``cotangent`` keyword.
        NoVJPError: an op on the differentiated path has no transpose rule.

    Example:
        >>> import numpy as np, advect as ad
        >>> square = ad.stage(lambda x: x**2, np.array([1.0, 2.0]))
        >>> pullback = ad.vjp_program(square)
        >>> pullback(np.array([3.0, 4.0]), cotangent=np.ones(2)).tolist()
        [6.0, 8.0]
    """
    program = require_program(f, "vjp_program")
    selected = _selection(program, argnums, argnames, "vjp_program", lift_ints=False)
    if COTANGENT in program.signature[1]:
        raise ValueError("vjp_program: the primal signature already has a keyword input named "
                         "'cotangent', which the pullback program reserves; rename it")
    out_specs = program.output_specs
    out_leaves = tree_flatten(out_specs, is_leaf=is_spec)[0]

    def pullback(*args, cotangent, **kwargs):
        sel = api._Selection(args, kwargs, argnums, argnames, "vjp_program")
        out, in_vars, trace, tape = linearize_flat(sel.call(program), sel.primals)
        try:
            leaves = tree_flatten(out)[0]
            cts = tree_flatten(cotangent)[0]
            seeds = []
            for leaf, ct, spec in zip(leaves, cts, out_leaves):
                _, var = lower(trace, leaf)
                if var is not None and spec.dtype.kind in "fc":
                    seeds.append((var, ct))
            result = backward(tape.tape, seeds)
            grads = [result.get(v.index) for v in in_vars]
            grads = [ops.zeros_like(p) if g is None else g for g, p in zip(grads, sel.primals)]
        finally:
            trace.close()
            tape.close()
        return sel.unflatten(grads)

    return _derive(program, pullback, {COTANGENT: out_specs}, selected, start=0)

"""Derivative checks for Advect's own tests and for users' functions and primitives.

``check_grads`` compares forward mode with central differences and reverse mode with forward
mode through the adjoint identity ``<ct, J t> == <J^T ct, t>`` (real inner product, so complex
functions are checked as real-linear maps), then repeats both on the derivative itself up to
``order``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .autodiff.api import jvp, vjp
from .primitive_operands import leaves_like
from .primitive_residual import record_primitives
from .providers import namespace_of
from .pytree import tree_flatten, tree_map, tree_unflatten

__all__ = ["check_grads", "check_gradient", "check_primitive"]


def _concrete(x):
    if hasattr(x, "_concrete"):
        x = x._concrete()
    if x is None or isinstance(x, np.ndarray | np.generic | int | float | complex | bool):
        return np.asarray(x)
    try:
        return np.asarray(x)
    except (TypeError, ValueError, RuntimeError):  # providers without __array__: DLPack
        return np.from_dlpack(x)


def _random_like(x, rng):
    """A random value like ``x`` (None for integer and bool values), in ``x``'s provider."""
    value = _concrete(x)
    if value.dtype.kind == "c":
        out = (rng.standard_normal(value.shape)
               + 1j * rng.standard_normal(value.shape)).astype(value.dtype)
    elif value.dtype.kind == "f":
        out = rng.standard_normal(value.shape).astype(value.dtype)
    else:
        return None
    if type(x) in (float, complex):  # a Python scalar stays one (weak), as its primal is
        return type(x)(out)
    return _in_provider_of(out, x)


def _in_provider_of(value, like):
    """``value`` (a NumPy array) as an array of ``like``'s provider."""
    if like is None or isinstance(like, np.ndarray | np.generic | int | float | complex):
        return value
    if hasattr(like, "_concrete"):
        like = like._concrete()
    if isinstance(like, np.ndarray | np.generic):
        return value
    return namespace_of((like,)).asarray(value, device=getattr(like, "device", None))


# --- naming the custom primitives on a failing path ------------------------------------------

def _with_primitives(check: Callable, *args, **kwargs):
    """Run ``check``; an AssertionError it raises also names the custom primitives that were
    called while it ran."""
    with record_primitives() as names:
        try:
            return check(*args, **kwargs)
        except AssertionError as exc:
            if not names:
                raise
            raise AssertionError(f"{exc}\ncustom primitives on the failing path: "
                                 f"{', '.join(sorted(names))}") from None


def _inner(a_leaves, b_leaves) -> float:
    total = 0.0
    for a, b in zip(a_leaves, b_leaves):
        if a is None or b is None:
            continue
        a, b = np.asarray(_concrete(a)), np.asarray(_concrete(b))
        total += float(np.real(np.vdot(a.astype(np.complex128), b.astype(np.complex128))))
    return total


def _tolerances(args, rtol, atol, eps, out=None):
    leaves = tree_flatten(args)[0] + tree_flatten(out)[0]
    dtypes = {_concrete(a).dtype for a in leaves if hasattr(a, "dtype")}
    if np.dtype(np.float16) in dtypes:  # a 1e-3 step is about one float16 ulp: noise
        tol, step = 5e-2, 3e-2
    elif dtypes & {np.dtype(np.float32), np.dtype(np.complex64)}:
        tol, step = 2e-2, 1e-3
    else:
        tol, step = 1e-5, 1e-6
    return (rtol if rtol is not None else tol, atol if atol is not None else tol,
            eps if eps is not None else step)


def _inexact_leaves(tree):
    return [leaf if np.asarray(_concrete(leaf)).dtype.kind in "fc" else None
            for leaf in tree_flatten(tree)[0]]


def _leaves(tree) -> list:
    """``tree``'s leaves with ``None`` kept as a leaf, so that a tangent tree with ``None`` for
    an integer input lines up with its primal tree."""
    return tree_flatten(tree, is_leaf=lambda x: x is None)[0]


def _shifted(args, tangents, step):
    """``args + step * tangents`` leaf by leaf (leaves with a ``None`` tangent unchanged)."""
    flat, treedef = tree_flatten(args, is_leaf=lambda x: x is None)
    ts = _leaves(tangents)
    if len(ts) != len(flat):
        raise ValueError("the tangents' structure differs from the arguments'")
    return tree_unflatten(treedef, [a if t is None or a is None else a + step * t
                                    for a, t in zip(flat, ts)])


def _differences(f, args, tangents, eps):
    """Central differences of ``f`` along ``tangents`` (``None`` for non-float outputs)."""
    plus, minus = f(*_shifted(args, tangents, eps)), f(*_shifted(args, tangents, -eps))
    return [None if p is None else (_concrete(p) - _concrete(m)) / (2 * eps)
            for p, m in zip(_inexact_leaves(plus), _inexact_leaves(minus))]


def _check_jvp(f, args, tangents, rtol, atol, eps, what):
    argnums = tuple(range(len(args)))
    _, out_t = jvp(f, argnums)(*args, tangents=tangents)
    fd = _differences(f, args, tangents, eps)
    for k, (got, want) in enumerate(zip(tree_flatten(out_t)[0], fd)):
        if want is None:
            continue
        got = _concrete(got)
        if not np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
            raise AssertionError(f"{what}: JVP disagrees with central differences at output "
                                 f"leaf {k}:\nJVP   {got}\nfinite differences {want}")


def _cotangent_leaves(out_leaves, rng, cotangent=None, out_def=None):
    """Random cotangents for the output leaves (zeros for integer outputs), or the given
    ``cotangent`` pytree's leaves (``None`` leaves, zeros, kept in their output's place)."""
    if cotangent is not None:
        leaves = None if out_def is None else leaves_like(out_def, cotangent)
        return tree_flatten(cotangent)[0] if leaves is None else leaves
    cts = [_random_like(o, rng) for o in out_leaves]
    return [c if c is not None else _zero_cotangent(o) for c, o in zip(cts, out_leaves)]


def _zero_cotangent(out):
    """The zero cotangent of an integer or bool output, in the output's provider."""
    return _in_provider_of(np.zeros(np.shape(_concrete(out)), np.float64), out)


def _check_vjp(f, args, tangents, rng, rtol, atol, what, cotangent=None):
    argnums = tuple(range(len(args)))
    out, pullback = vjp(f, argnums)(*args)
    _, out_t = jvp(f, argnums)(*args, tangents=tangents)
    out_leaves, out_def = tree_flatten(out)
    cts = _cotangent_leaves(out_leaves, rng, cotangent, out_def)
    in_cts = pullback(tree_unflatten(out_def, cts))
    lhs = _inner(cts, [t if c is not None else None
                       for t, c in zip(tree_flatten(out_t)[0], _inexact_leaves(out))])
    rhs = _inner(_leaves(in_cts), _leaves(tangents))
    scale = max(1.0, abs(lhs), abs(rhs))
    if abs(lhs - rhs) > (rtol + atol) * scale:
        raise AssertionError(f"{what}: reverse mode disagrees with forward mode: <ct, J t> = "
                             f"{lhs!r} but <J^T ct, t> = {rhs!r}")


def check_grads(f: Callable, args: Sequence[Any], order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), *, rtol: float | None = None,
                atol: float | None = None, eps: float | None = None, seed: int = 0) -> None:
    """Check ``f``'s derivatives w.r.t. all of ``args`` up to ``order``.

    ``modes=("rev",)`` alone compares reverse mode with central differences instead of with
    forward mode, so functions whose custom primitives have only a transpose rule can be checked.
    Integer and bool arguments are held constant.

    Raises ``AssertionError`` naming what disagrees.

    Example:
        >>> import numpy as np
        >>> check_grads(lambda x: np.sin(x) * x, (np.array([0.5, 1.0]),), order=2)
    """
    args = tuple(args)
    rtol, atol, eps = _tolerances(args, rtol, atol, eps, f(*args))
    rng = np.random.default_rng(seed)
    _with_primitives(_check_order, f, args, order, tuple(modes), rng, rtol, atol, eps,
                     "order 1")


def _check_order(f, args, order, modes, rng, rtol, atol, eps, what):
    tangents = tuple(tree_map(lambda a: _random_like(a, rng), a) for a in args)
    if "fwd" in modes:
        _check_jvp(f, args, tangents, rtol, atol, eps, what)
    if "rev" in modes and "fwd" in modes:
        _check_vjp(f, args, tangents, rng, rtol, atol, what)
    elif "rev" in modes:  # reverse mode alone: no JVP to compare with (a transpose-only rule)
        _check_vjp_differences(f, args, tangents, rng, rtol, atol, eps, what)
    if order <= 1:
        return
    argnums = tuple(range(len(args)))
    nxt = f"order {int(what.split()[-1]) + 1}"
    if "fwd" in modes:
        def derivative(*xs):
            return jvp(f, argnums)(*xs, tangents=tangents)[1]
        _check_order(derivative, args, order - 1, modes, rng, rtol * 10, atol * 10, eps, nxt)
    if "rev" in modes:
        out = f(*args)
        def cotangent(o):  # integer outputs (frexp's exponent) get zero cotangents
            ct = _random_like(o, rng)
            return _zero_cotangent(o) if ct is None else ct
        cts = tree_map(cotangent, out)

        def pulled(*xs):
            return vjp(f, argnums)(*xs)[1](cts)
        _check_order(pulled, args, order - 1, modes, rng, rtol * 10, atol * 10, eps, nxt)


def check_gradient(f: Callable, primal: Any, *, tangent: Any = None, rtol: float | None = None,
                   atol: float | None = None, eps: float | None = None,
                   epsilons: Sequence[float] | None = None, seed: int = 0) -> None:
    """Check ``f``'s JVP at ``primal`` against central differences and its reverse mode against
    its forward mode (the adjoint identity); ``tangent`` fixes the direction.

    ``epsilons`` tries several finite-difference steps: the JVP passes when it agrees with the
    central differences of any of them (a kink or rounding can spoil one step size).

    Raises:
        AssertionError: naming what disagrees (and the custom primitives on the path).

    Example:
        >>> import numpy as np
        >>> check_gradient(np.tanh, np.array([0.1, 0.7]))
        >>> check_gradient(np.sqrt, np.array([0.5, 2.0]), epsilons=(1e-3, 1e-6))
    """
    rtol, atol, eps = _tolerances((primal,), rtol, atol, eps)
    rng = np.random.default_rng(seed)
    tangents = (tree_map(lambda a: _random_like(a, rng), primal) if tangent is None
                else tangent,)
    steps = (eps,) if epsilons is None else tuple(epsilons)
    if not steps:
        raise ValueError("check_gradient: epsilons must hold at least one step size")
    failures = []
    for step in steps:
        try:
            _with_primitives(_check_jvp, f, (primal,), tangents, rtol, atol, step,
                             f"check_gradient (eps={step:g})")
            break
        except AssertionError as exc:
            failures.append(str(exc))
    else:
        raise AssertionError("\n".join(failures))
    _with_primitives(_check_vjp, f, (primal,), tangents, rng, rtol, atol, "check_gradient")


# --- custom primitives ---------------------------------------------------------------------------

PRIMITIVE_CHECKS = ("abstract", "jvp", "transpose", "complex", "nested", "stage")


def check_primitive(handle, *, primals: Sequence[Any], static: dict | None = None,
                    tangents: Sequence[Any] | None = None, cotangent: Any = None,
                    check: Sequence[str] = PRIMITIVE_CHECKS, rtol: float | None = None,
                    atol: float | None = None, eps: float | None = None,
                    seed: int = 0) -> tuple[str, ...]:
    """Check a custom primitive's rules at ``primals`` (its positional dynamic arguments).

    ``static`` holds the keyword arguments (static ones included). ``tangents`` (one pytree per
    primal, ``None`` entries drawn at random) and ``cotangent`` (in the output's structure) fix
    the directions instead of random ones; they may be real, complex or of the primals' own
    provider (array-api-strict arrays, for example). Each named check runs when the primitive
    has the rules it needs, and the names of those that ran are returned:

    * ``"abstract"``: the abstract rule's output specs equal the implementation's output;
    * ``"jvp"``: the JVP rule against central differences;
    * ``"transpose"``: reverse mode against forward mode by the adjoint identity
      ``<ct, J t> == <J^T ct, t>`` (against central differences for a transpose-only primitive);
    * ``"complex"``: complex leaves of ``primals`` are differentiated too (without it they are
      held constant), so the rules are checked as real-linear maps;
    * ``"nested"``: the same checks on the first derivatives (second order; not for a
      ``residual=True`` primitive with only a transpose rule, which has none);
    * ``"stage"``: ``advect.stage`` of the call, then ``to_dict`` / JSON / ``from_dict``, equal
      the eager result, and so does the staged pullback (``vjp_program``) before and after
      saving (skipped with a warning while ``advect.stage`` is absent; the pullback not for a
      transpose-only residual primitive, whose residual is never saved).

    Raises:
        AssertionError: naming the check and what disagrees.
        ValueError: an unknown check name.

    Example:
        >>> import numpy as np, advect as ad
        >>> square = ad.primitive(lambda x: x * x, name="doc_check_square")
        >>> _ = square.def_jvp(lambda out, primals, tangents: 2 * primals[0] * tangents[0])
        >>> check_primitive(square, primals=(np.array([0.5, 2.0]),), check=("jvp", "transpose"))
        ('jvp', 'transpose')
    """
    unknown = [c for c in check if c not in PRIMITIVE_CHECKS]
    if unknown:
        raise ValueError(f"check_primitive: unknown checks {unknown}; choose from "
                         f"{PRIMITIVE_CHECKS}")
    primals, static = tuple(primals), dict(static or {})
    name = f"primitive {handle.name!r}"
    with handle._out_trees_lock:  # forget what an abstract rule declared: checked afresh below
        handle._out_trees.clear()
    expected = handle(*primals, **static)
    ran = []
    if "abstract" in check and handle._abstract is not None:
        _check_abstract(handle, primals, static, expected, name)
        ran.append("abstract")
    f, args, has_complex, positions = _differentiable(handle, primals, static,
                                                      "complex" in check)
    has_jvp, has_transpose = handle._jvp is not None, handle._transpose is not None
    if args and (has_jvp or has_transpose):
        rtol, atol, eps = _tolerances(args, rtol, atol, eps, expected)
        rng = np.random.default_rng(seed)
        given = _given_tangents(tangents, primals, positions)
        tangents = tuple(_random_like(a, rng) if t is None else t for a, t in zip(args, given))
        derivatives = [(f, f"{name}, order 1")]
        # a residual primitive with only a transpose rule has no second order: nested
        # transforms refuse it (its residual is a plain value they cannot differentiate)
        nested = "nested" in check and (has_jvp or not handle._residual)
        if nested:
            derivatives += _first_derivatives(f, args, tangents, has_jvp, rng, name, cotangent)
        for k, (g, what) in enumerate(derivatives):
            scale = 10.0 if k else 1.0
            ct = cotangent if k == 0 else None
            if "jvp" in check and has_jvp:
                _check_jvp(g, args, tangents, rtol * scale, atol * scale, eps, f"{what}, jvp")
            if "transpose" in check:
                if has_jvp:
                    _check_vjp(g, args, tangents, rng, rtol * scale, atol * scale,
                               f"{what}, transpose", ct)
                else:
                    _check_vjp_differences(g, args, tangents, rng, rtol * scale, atol * scale,
                                           eps, f"{what}, transpose", ct)
        if "transpose" in check and "active_input_indices" in handle._transpose_call[1]:
            _check_active_inputs(f, args, rng, rtol, atol, f"{name}, order 1, transpose",
                                 cotangent)
        ran += [c for c in ("jvp", "transpose") if c in check and (c != "jvp" or has_jvp)]
        ran += ["complex"] if "complex" in check and has_complex else []
        ran += ["nested"] if nested else []
    if "stage" in check and _check_staged(handle, primals, static, expected, name):
        if args and (has_jvp or has_transpose and not handle._residual):  # (a residual is
            # never saved: staged derivatives of a transpose-only residual primitive refuse)
            _check_staged_pullback(f, args, np.random.default_rng(seed), name)
        ran.append("stage")
    return tuple(c for c in PRIMITIVE_CHECKS if c in ran)


def _check_abstract(handle, primals, static, expected, name):
    try:
        specs = handle.abstract_eval(*primals, **static)
    except ValueError as exc:
        raise AssertionError(f"{name}, abstract: {exc}") from None
    spec_leaves, spec_def = tree_flatten(specs, is_leaf=lambda s: hasattr(s, "shape"))
    out_leaves, out_def = tree_flatten(expected)
    if spec_def != out_def:
        raise AssertionError(f"{name}, abstract: the abstract rule gives the structure "
                             f"{spec_def!r}, the implementation {out_def!r}")
    for k, (spec, out) in enumerate(zip(spec_leaves, out_leaves)):
        got = (tuple(spec.shape), np.dtype(spec.dtype))
        want = (tuple(np.shape(out)), np.asarray(out).dtype)
        if got != want:
            raise AssertionError(f"{name}, abstract: output leaf {k} is {want[1]}{list(want[0])} "
                                 f"but the abstract rule says {got[1]}{list(got[0])}")


def _differentiable(handle, primals, static, with_complex):
    """``f(*leaves)`` calling the primitive with only the differentiated leaves varying."""
    flat, treedef = tree_flatten(primals)
    positions, owners = [], []
    for i, arg in enumerate(primals):
        owner = handle._positional[i] if i < len(handle._positional) else None
        owners += [owner] * len(tree_flatten(arg)[0])
    has_complex = False
    for k, (leaf, owner) in enumerate(zip(flat, owners)):
        kind = np.asarray(_concrete(leaf)).dtype.kind
        held = owner in handle._nondiff or owner in handle._static  # a static 2.5: a setting
        has_complex |= kind == "c" and not held
        if not held and (kind == "f" or (kind == "c" and with_complex)):
            positions.append(k)

    def f(*xs):
        full = list(flat)
        for k, x in zip(positions, xs):
            full[k] = x
        return handle(*tree_unflatten(treedef, full), **static)

    return f, tuple(flat[k] for k in positions), has_complex and with_complex, positions


def _given_tangents(tangents, primals, positions) -> list:
    """The user's tangents for the differentiated leaves (None where not given)."""
    if tangents is None:
        return [None] * len(positions)
    tangents = tuple(tangents)
    if len(tangents) != len(primals):
        raise ValueError(f"check_primitive: tangents has {len(tangents)} entries for "
                         f"{len(primals)} primals; give one pytree (or None) per primal")
    flat = []
    for t, p in zip(tangents, primals):
        n = len(tree_flatten(p)[0])
        leaves = [None] * n if t is None else tree_flatten(t, is_leaf=lambda x: x is None)[0]
        if len(leaves) != n:
            raise ValueError("check_primitive: a tangent's structure differs from its primal's")
        flat += leaves
    return [flat[k] for k in positions]


def _first_derivatives(f, args, tangents, has_jvp, rng, name, cotangent=None):
    argnums = tuple(range(len(args)))
    out = []
    if has_jvp:
        def forward(*xs):
            return jvp(f, argnums)(*xs, tangents=tangents)[1]
        out.append((forward, f"{name}, order 2 (derivative of the JVP)"))
    cts = cotangent if cotangent is not None else tree_map(lambda o: _random_like(o, rng),
                                                           f(*args))

    def reverse(*xs):
        return vjp(f, argnums)(*xs)[1](cts)
    out.append((reverse, f"{name}, order 2 (derivative of the VJP)"))
    return out


def _check_active_inputs(f, args, rng, rtol, atol, what, cotangent=None):
    """Each input's cotangent with only that input differentiated (a transpose rule taking
    ``active_input_indices`` is then asked for it alone) against the one with all of them."""
    if len(args) < 2:
        return
    out, pullback = vjp(f, tuple(range(len(args))))(*args)
    out_leaves, out_def = tree_flatten(out)
    cts = tree_unflatten(out_def, _cotangent_leaves(out_leaves, rng, cotangent, out_def))
    full = pullback(cts)
    for k in range(len(args)):
        alone = vjp(f, k)(*args)[1](cts)
        if not all(np.allclose(_concrete(a), _concrete(b), rtol=rtol, atol=atol)
                   for a, b in zip(_leaves(alone), _leaves(full[k]))):
            raise AssertionError(f"{what}: with only differentiated leaf {k} active "
                                 f"(active_input_indices) its cotangent is {alone}, with all "
                                 f"of them active {full[k]}")


def _check_vjp_differences(f, args, tangents, rng, rtol, atol, eps, what, cotangent=None):
    """Reverse mode against central differences: ``<ct, (f(x+et) - f(x-et)) / 2e> == <J^T ct,
    t>`` (for functions without forward mode)."""
    out, pullback = vjp(f, tuple(range(len(args))))(*args)
    out_leaves, out_def = tree_flatten(out)
    cts = _cotangent_leaves(out_leaves, rng, cotangent, out_def)
    in_cts = pullback(tree_unflatten(out_def, cts))
    lhs = _inner(cts, _differences(f, args, tangents, eps))
    rhs = _inner(_leaves(in_cts), _leaves(tangents))
    if abs(lhs - rhs) > (rtol + atol) * max(1.0, abs(lhs), abs(rhs)):
        raise AssertionError(f"{what}: reverse mode disagrees with central differences: "
                             f"<ct, finite differences> = {lhs!r} but <J^T ct, t> = {rhs!r}")


def _check_staged(handle, primals, static, expected, name) -> bool:
    import json
    import warnings

    try:
        from . import stage  # the package imports this module, so stage is looked up late
    except ImportError:
        warnings.warn(f"check_primitive: skipped 'stage' for {name}: advect.stage is not "
                      "available yet", stacklevel=3)
        return False
    # a static argument given positionally (a positional-only one) is no staged input
    fixed = {i: p for i, p in enumerate(primals)
             if i < len(handle._positional) and handle._positional[i] in handle._static}
    inputs = [p for i, p in enumerate(primals) if i not in fixed]

    def call(*args):
        it = iter(args)
        return handle(*(fixed[i] if i in fixed else next(it) for i in range(len(primals))),
                      **static)

    program = stage(call, *inputs, **({} if inputs else {"specs": ()}))  # examples or specs
    restored = type(program).from_dict(json.loads(json.dumps(program.to_dict(), sort_keys=True)))
    want = [_concrete(o) for o in tree_flatten(expected)[0]]
    staged = [_concrete(o) for o in tree_flatten(program(*inputs))[0]]
    loaded = [_concrete(o) for o in tree_flatten(restored(*inputs))[0]]
    if len(staged) != len(want) or not all(np.allclose(g, w, rtol=1e-12, atol=0, equal_nan=True)
                                           for g, w in zip(staged, want)):
        raise AssertionError(f"{name}, stage: the staged program gives {staged}, the eager "
                             f"call {want}")
    if not all(np.array_equal(g, w, equal_nan=True) for g, w in zip(loaded, staged)):
        raise AssertionError(f"{name}, stage: the saved and loaded program gives {loaded}, the "
                             f"staged one {staged}")
    return True


def _check_staged_pullback(f, args, rng, name):
    import json

    from . import stage, vjp_program

    out = f(*args)
    if not all(o is not None for o in _inexact_leaves(out)):
        return  # a cotangent for an integer output has no meaning
    argnums = tuple(range(len(args)))
    rtol, atol, _ = _tolerances(args, None, None, None, out)
    cts = tree_map(lambda o: _random_like(o, rng), out)
    pullback = vjp_program(stage(f, *args), argnums=argnums)
    restored = type(pullback).from_dict(json.loads(json.dumps(pullback.to_dict())))
    want = [_concrete(g) for g in tree_flatten(vjp(f, argnums)(*args)[1](cts))[0]]
    staged = [_concrete(g) for g in tree_flatten(pullback(*args, cotangent=cts))[0]]
    loaded = [_concrete(g) for g in tree_flatten(restored(*args, cotangent=cts))[0]]
    if not all(np.allclose(g, w, rtol=rtol, atol=atol) for g, w in zip(staged, want)):
        raise AssertionError(f"{name}, stage: the staged pullback gives {staged}, the dynamic "
                             f"one {want}")
    if not all(np.array_equal(g, w, equal_nan=True) for g, w in zip(loaded, staged)):
        raise AssertionError(f"{name}, stage: the saved and loaded pullback gives {loaded}, the "
                             f"staged one {staged}")

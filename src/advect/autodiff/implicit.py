"""``implicit_root``: derivatives of the solution of ``residual(u, params) = 0`` by the implicit
function theorem, matrix-free.

With ``A = d residual / du`` and ``B = d residual / d params`` at the solution ``u*``:
``du = -A^{-1} (B dp)`` (forward) and ``p_bar = -B^T A^{-T} u_bar`` (reverse). ``B dp`` and
``B^T w`` are one JVP / VJP of ``residual``; ``A^{-1}`` and ``A^{-T}`` are the user's linear
solvers, called with operators built from JVPs and VJPs of ``residual``.

The solve is the tape-only op ``implicit_solve`` (``x = A^{-1} b``, or ``A^{-T} b`` when
``transposed``): linear in ``b``, its transpose is the transposed solve and its JVP is
``A^{-1} (db - dA x)``, again a solve. So derivatives of any order only ever call the user's
callbacks on concrete values; only ``residual`` is traced. Like ``checkpoint_jvp`` it never
reaches a staged graph (staging a root raises ``TracingError``), so it lives here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import ops
from ..core import Op, Tracer
from ..dtypes import aval_of
from ..errors import AdvectError, ImplicitSolveError, TracingError
from ..providers import is_array, namespace_of
from ..pytree import tree_flatten, tree_unflatten
from .checkpoint import innermost_trace, is_array_leaf, jvp_flat, vjp_flat
from .forward import JVPTrace, JVPTracer, split

__all__ = ["implicit_root"]


def _concrete(x):
    return x._concrete() if isinstance(x, Tracer) else x


def _max_abs(leaves: Sequence[Any]) -> float:
    """The largest magnitude among concrete array leaves (0.0 for none)."""
    sizes = []
    for x in leaves:
        xp = namespace_of((x,))
        x = xp.asarray(x)
        if x.size:
            sizes.append(float(xp.max(xp.abs(x))))
    return max(sizes, default=0.0)


def _norm(leaves: Sequence[Any]) -> float:
    """The 2-norm of concrete array leaves taken together."""
    total = 0.0
    for x in leaves:
        xp = namespace_of((x,))
        x = xp.asarray(x)
        if x.size:
            total += float(xp.sum(xp.abs(x) ** 2))
    return total ** 0.5


def _private(x):
    """A copy of an array leaf for a callback: a solver that updates in place (``u -= du``,
    ``b /= d``) must write neither into the caller's arrays nor into values the tape holds."""
    return ops.astype(x, dtype=aval_of(x).dtype.name) if is_array(x) else x


def _solver_initial(x):
    """An ``initial`` leaf as ``solve`` gets it: private, and an integer or bool leaf as float64
    (the root of a real residual is real, so the solution must not be cast (truncated) to the
    integer dtype of its first guess)."""
    return ops.astype(x, dtype="float64") if aval_of(x).dtype.kind in "biu" else _private(x)


class _Problem:
    """One root call as the tape sees it: the callbacks, the params' static leaves and tree,
    the solution's tree and avals. Never serialized."""

    __slots__ = ("residual", "solve", "linear_solve", "transpose_solve", "p_static",
                 "p_dynamic", "p_def", "u_def", "u_avals")

    def __init__(self, callbacks: tuple, params: Any, initial: Any):
        self.residual, self.solve, self.linear_solve, self.transpose_solve = callbacks
        leaves, self.p_def = tree_flatten(params)
        self.p_dynamic = [i for i, leaf in enumerate(leaves) if is_array_leaf(leaf)]
        self.p_static = [None if is_array_leaf(leaf) else leaf for leaf in leaves]
        u_leaves, self.u_def = tree_flatten(initial)
        self.u_avals = tuple(aval_of(u).update(weak=False) for u in u_leaves)

    def params(self, p: Sequence[Any]) -> Any:
        full = list(self.p_static)
        for i, x in zip(self.p_dynamic, p):
            full[i] = x
        return tree_unflatten(self.p_def, full)

    def residual_flat(self, u: Sequence[Any], p: Sequence[Any]) -> list:
        out = self.residual(tree_unflatten(self.u_def, list(u)), self.params(p))
        leaves, treedef = tree_flatten(out)
        if treedef != self.u_def or any(tuple(aval_of(r).shape) != a.shape
                                        for r, a in zip(leaves, self.u_avals)):
            raise ValueError("implicit_root: residual(u, params) must have the structure and "
                             f"shapes of u ({self.u_avals}); got {[aval_of(r) for r in leaves]}")
        return leaves

    def split(self, args: Sequence[Any]) -> tuple[list, list, list]:
        """``implicit_solve`` operands -> (u, params, right-hand side)."""
        n_u, n_p = len(self.u_avals), len(self.p_dynamic)
        return list(args[:n_u]), list(args[n_u:n_u + n_p]), list(args[n_u + n_p:])

    def jvp_u(self, u, p, v) -> list:
        """``A v`` (leaves); ``u``, ``p``, ``v`` may be traced."""
        n_u = len(u)
        _, outs, ts = jvp_flat(lambda *up: self.residual_flat(up[:n_u], up[n_u:]), [*u, *p],
                               [*v, *(None for _ in p)])
        return [ops.zeros_like(o) if t is None else t for o, t in zip(outs, ts)]

    def vjp_u(self, u, p, w) -> list:
        """``A^T w`` (leaves); ``u``, ``p``, ``w`` may be traced."""
        cts = vjp_flat(lambda *us: self.residual_flat(us, p), u, w)
        return [ops.zeros_like(x) if c is None else c for x, c in zip(u, cts)]

    def checked(self, name: str, value: Any) -> list:
        """A callback's result as leaves, or ImplicitSolveError naming what is wrong."""
        leaves, treedef = tree_flatten(value)
        if treedef != self.u_def:
            raise ImplicitSolveError(f"implicit_root: {name} returned structure {treedef!r}, "
                                     f"expected {self.u_def!r}")
        out = []
        for leaf, aval in zip(leaves, self.u_avals):
            if isinstance(leaf, Tracer):
                raise ImplicitSolveError(f"implicit_root: {name} returned a traced value; "
                                         "solver callbacks run on concrete values")
            xp = namespace_of((leaf,))
            leaf = xp.asarray(leaf)
            if tuple(leaf.shape) != aval.shape:
                raise ImplicitSolveError(f"implicit_root: {name} returned shape "
                                         f"{tuple(leaf.shape)}, expected {aval.shape}")
            if not bool(xp.all(xp.isfinite(leaf))):
                raise ImplicitSolveError(f"implicit_root: {name} returned non-finite values "
                                         "(NaN or inf); the solver did not converge")
            out.append(leaf if aval_of(leaf).dtype == aval.dtype else
                       ops.astype(leaf, dtype=aval.dtype.name))
        return out

    def tolerance(self) -> float:
        """``eps ** (1/4)`` of the unknowns' precision: how far from exact a callback's result
        may be before it is refused."""
        eps = max((np.finfo(a.dtype.name).eps for a in self.u_avals if a.dtype.kind in "fc"),
                  default=np.finfo(float).eps)
        return float(eps ** (1 / 4))

    def check_root(self, u: list, p: list, at_initial: float) -> None:
        """Refuse a ``solve`` result that is not a root: the implicit function theorem (and so
        every derivative) holds only at one. The residual must be below ``eps ** (1/4)`` of the
        problem's scale, the larger of the residual at ``initial`` (``at_initial``) and
        ``A u``."""
        size = _max_abs(self.residual_flat(u, p))
        if not size:
            return
        scale = max(at_initial, _max_abs(self.jvp_u(u, p, u)))
        if not size <= self.tolerance() * scale:  # also refuses a NaN residual
            raise ImplicitSolveError(
                f"implicit_root: solve did not converge: the residual at its result is "
                f"{size:.3g} (largest entry; {at_initial:.3g} at `initial`), so the result is "
                "not a root and its derivatives would be wrong")

    def call(self, name: str, callback: Callable, *args) -> list:
        try:
            result = callback(*args)
        except AdvectError:
            raise
        except Exception as e:
            raise ImplicitSolveError(f"implicit_root: {name} failed: {type(e).__name__}: {e}"
                                     ) from e
        return self.checked(name, result)

    def check_solution(self, name: str, operator: str, apply: Callable, x: list,
                       b: list) -> None:
        """Refuse a linear solver's ``x`` unless ``apply(x)`` (``operator``: ``A x`` or
        ``A^T x``) matches ``b`` to ``eps ** (1/4)`` relative to the larger of ``|b|`` and
        ``|A x|`` (2-norms): a solver that returns a wrong answer without failing would give
        wrong derivatives."""
        ax = [_concrete(leaf) for leaf in apply(x)]
        size = _norm([ops.subtract(a, c) for a, c in zip(ax, b)])
        if not size:
            return
        scale = max(_norm(b), _norm(ax))
        if not size <= self.tolerance() * scale:  # also refuses a NaN
            raise ImplicitSolveError(
                f"implicit_root: {name} returned a wrong solution: |{operator} - b| = "
                f"{size:.3g} for |b| = {_norm(b):.3g} (2-norms), so the derivatives would be "
                "wrong")


# --- the tape-only solve op ----------------------------------------------------------------------

def _implicit_solve_abstract(*avals, problem, transposed):
    return problem.u_avals


def _implicit_solve_impl(xp, *args, problem, transposed):
    u, p, b = problem.split(args)
    rhs = tree_unflatten(problem.u_def, [_private(x) for x in b])
    apply = problem.vjp_u if transposed else problem.jvp_u

    def matvec(v):
        return tree_unflatten(problem.u_def, apply(u, p, tree_flatten(v)[0]))
    if not transposed:
        name, callback = "linear_solve", problem.linear_solve
    elif problem.transpose_solve is None:
        name, callback = "linear_solve (transposed operator)", problem.linear_solve
    else:
        name, callback = "transpose_solve", problem.transpose_solve
    x = problem.call(name, callback, matvec, rhs)
    problem.check_solution(name, "A^T x" if transposed else "A x", lambda x: apply(u, p, x),
                           x, b)
    return tuple(x)


def _subtract(db, c):
    if c is None:
        return db
    return ops.negative(c) if db is None else ops.subtract(db, c)


def _implicit_solve_jvp(primals, tangents, out, *, problem, transposed):
    # A x = b  =>  A dx = db - dA x   (and A^T y = b  =>  A^T dy = db - dA^T y)
    u, p, _ = problem.split(primals)
    du, dp, db = problem.split(tangents)
    n_u, x = len(u), list(out)
    apply = problem.vjp_u if transposed else problem.jvp_u
    _, _, dax = jvp_flat(lambda *up: apply(up[:n_u], up[n_u:], x), [*u, *p], [*du, *dp])
    rhs = [_subtract(d, c) for d, c in zip(db, dax)]
    if all(r is None for r in rhs):
        return (None,) * n_u
    rhs = [ops.zeros_like(o) if r is None else r for r, o in zip(rhs, x)]
    return implicit_solve(*u, *p, *rhs, problem=problem, transposed=transposed)


def _implicit_solve_transpose(ct, *args, problem, transposed):
    u, p, _ = problem.split(args)
    cts = [ops.zeros_like(x) if c is None else c for c, x in zip(ct, u)]
    solved = implicit_solve(*u, *p, *cts, problem=problem, transposed=not transposed)
    return (None,) * (len(u) + len(p)) + tuple(solved)


implicit_solve = Op(
    "implicit_solve", attrs={"problem": "process", "transposed": "process"},
    abstract=_implicit_solve_abstract, impl=_implicit_solve_impl, jvp=_implicit_solve_jvp,
    transpose=_implicit_solve_transpose, multiple_results=True)


# --- the transform ------------------------------------------------------------------------------

def _root(problem: _Problem, p: list, initial: list) -> list:
    """The solution's leaves, differentiable w.r.t. the dynamic params ``p``."""
    trace = innermost_trace(p)
    if trace is None:
        # checks residual(initial, params) against the unknowns' structure and shapes first
        # (ValueError), so a mismatch is not reported as a failure of the solver
        at_initial = problem.residual_flat(initial, p)
        if any(isinstance(r, Tracer) for r in at_initial):
            raise TracingError(
                "implicit_root: residual(u, params) depends on a traced value that is not in "
                "params (a closure over a differentiated input?); derivatives flow only "
                "through params, so pass that value in params")
        at_initial = _max_abs(at_initial)
        f = lambda u: problem.residual(u, problem.params(p))  # noqa: E731
        u = problem.call("solve", problem.solve, f, tree_unflatten(problem.u_def, initial))
        problem.check_root(u, p, at_initial)
        return u
    if type(trace) is not JVPTrace:
        raise TracingError("implicit_root: the solver runs on concrete values, so a root cannot "
                           "be staged; call it in a dynamic transform (grad, jvp, ...) instead")
    primals, tangents = split(trace, p)
    u = _root(problem, primals, initial)
    if all(t is None for t in tangents):
        return [JVPTracer(trace, x, None) for x in u]
    n_u = len(u)
    _, r, r_dot = jvp_flat(lambda *up: problem.residual_flat(up[:n_u], up[n_u:]),
                           [*u, *primals], [*(None for _ in u), *tangents])
    if all(t is None for t in r_dot):
        return [JVPTracer(trace, x, None) for x in u]
    b = [ops.zeros_like(o) if t is None else ops.negative(t) for o, t in zip(r, r_dot)]
    du = implicit_solve(*u, *primals, *b, problem=problem, transposed=False)
    return [JVPTracer(trace, x, d) for x, d in zip(u, du)]


def implicit_root(residual: Callable, *, solve: Callable, linear_solve: Callable,
                  transpose_solve: Callable | None = None) -> Callable:
    """Differentiable root of ``residual(u, params) = 0`` by the implicit function theorem.

    Returns ``root(params, *, initial) -> u``. The solution comes from ``solve``; its
    derivatives w.r.t. ``params`` (any pytree) come from the implicit function theorem, without
    differentiating through the solver's iterations and without forming a Jacobian. No
    derivative flows to ``initial``. ``u`` (like ``initial``, any pytree of arrays) and
    ``residual(u, params)`` have the same structure and shapes.

    Callbacks (all called on concrete values, never on traced ones, at every order):

    * ``solve(f, initial) -> u`` with ``f(u) = residual(u, params)``; it may differentiate
      ``f`` (for instance ``advect.jacobian(f)`` in Newton's method).
    * ``linear_solve(matvec, b) -> x`` solving ``A x = b``, where ``A = d residual / du`` at
      the solution and ``matvec(v) = A v``.
    * ``transpose_solve(rmatvec, b) -> x`` solving ``A^T x = b`` with ``rmatvec(w) = A^T w``;
      by default ``linear_solve(rmatvec, b)``.

    First, second and higher derivatives work in forward and reverse mode (the derivative of a
    solve is another solve); ``residual`` must be traceable NumPy code.

    Raises:
        ImplicitSolveError: a callback raised, returned non-finite values or a result of the
            wrong structure or shape.
        TracingError: called while staging (the solver needs concrete values).
        ValueError: ``residual`` returned a value not shaped like ``u``.

    Example:
        >>> import numpy as np, advect as ad
        >>> def newton(f, u):
        ...     for _ in range(30):
        ...         u = u - f(u) / ad.grad(f)(u)
        ...     return u
        >>> cube_root = ad.implicit_root(lambda u, p: u ** 3 - p, solve=newton,
        ...                              linear_solve=lambda matvec, b: b / matvec(np.ones_like(b)))
        >>> round(float(cube_root(8.0, initial=1.0)), 12)
        2.0
        >>> round(float(ad.grad(lambda p: cube_root(p, initial=1.0))(8.0)), 12)  # p^(-2/3) / 3
        0.083333333333
    """
    callbacks = (residual, solve, linear_solve, transpose_solve)

    def root(params, *, initial):
        init_leaves, init_def = tree_flatten(initial)
        # no derivative flows to `initial`
        try:
            init_leaves = [_solver_initial(_concrete(x)) for x in init_leaves]
        except TracingError:
            raise TracingError("implicit_root: `initial` is a staged value, but the solver runs "
                               "on concrete values, so a root cannot be staged; call it in a "
                               "dynamic transform (grad, jvp, ...) instead") from None
        problem = _Problem(callbacks, params, tree_unflatten(init_def, init_leaves))
        leaves = tree_flatten(params)[0]
        u = _root(problem, [leaves[i] for i in problem.p_dynamic], init_leaves)
        return tree_unflatten(problem.u_def, u)

    root.__doc__ = f"Root of {getattr(residual, '__qualname__', 'residual')}(u, params) = 0."
    return root

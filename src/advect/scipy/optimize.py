"""``scipy.optimize.root`` as the ``solve`` callback of ``advect.implicit_root``.

The solver sees the unknowns as one flat float64 vector (any pytree of real arrays is packed
and unpacked around SciPy's call); for the methods that take a Jacobian (``hybr``, ``lm``) it
gets the exact one, from ``advect.jacobian`` of the residual. Derivatives of the root come from
``implicit_root`` itself, never from the solver's iterations.

Example:
    >>> import numpy as np, advect as ad
    >>> from advect.scipy.optimize import root_solver
    >>> from advect.scipy.sparse.linalg import gmres_solver
    >>> root = ad.implicit_root(lambda u, p: u ** 3 - p, solve=root_solver(),
    ...                         linear_solve=gmres_solver(rtol=1e-12))
    >>> float(root(np.array([8.0]), initial=np.array([1.0]))[0])
    2.0
    >>> float(ad.grad(lambda p: root(p, initial=np.array([1.0]))[0])(np.array([8.0]))[0])
    0.08333333333333333
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import scipy.optimize

from ..autodiff.dense import jacobian
from ..errors import ImplicitSolveError
from ..pytree import tree_flatten, tree_unflatten

__all__ = ["root_solver"]

_USES_JACOBIAN = frozenset({"hybr", "lm"})


class FlatVector:
    """Packs a pytree of arrays shaped like ``template`` into one 1-D vector and back."""

    def __init__(self, template: Any, what: str):
        leaves, self.treedef = tree_flatten(template)
        self.shapes = [np.shape(leaf) for leaf in leaves]
        self.sizes = [int(np.prod(s)) for s in self.shapes]
        kinds = {np.asarray(leaf).dtype.kind for leaf in leaves}
        self.dtype = np.dtype(complex if "c" in kinds else float)
        self.what = what

    @property
    def size(self) -> int:
        return sum(self.sizes)

    def pack(self, tree: Any) -> Any:
        leaves, treedef = tree_flatten(tree)
        if treedef != self.treedef:
            raise ImplicitSolveError(f"{self.what}: got structure {treedef!r}, expected "
                                     f"{self.treedef!r}")
        if not leaves:
            return np.zeros(0, self.dtype)
        return np.concatenate([np.reshape(leaf, (-1,)) for leaf in leaves])

    def unpack(self, vector: Any) -> Any:
        leaves, start = [], 0
        for shape, size in zip(self.shapes, self.sizes):
            leaves.append(np.reshape(vector[start:start + size], shape))
            start += size
        return tree_unflatten(self.treedef, leaves)


def root_solver(*, method: str | None = None,
                options: Mapping[str, Any] | None = None) -> Callable:
    """A ``solve(f, initial) -> u`` callback for ``implicit_root`` built on
    ``scipy.optimize.root(fun, x0, method=method, options=options)``.

    ``method=None`` is SciPy's default (``"hybr"``). Real unknowns only (SciPy's root finders
    are real).

    Raises:
        ImplicitSolveError: SciPy reports that the solve did not succeed (its message is
            included), or the unknowns are complex.

    Example:
        >>> import numpy as np
        >>> solve = root_solver(method="lm")
        >>> float(solve(lambda u: u ** 2 - 2.0, np.array([1.0]))[0]) ** 2
        2.0000000000000004
    """
    method_name = "hybr" if method is None else method

    def solve(f: Callable, initial: Any) -> Any:
        flat = FlatVector(initial, "scipy.optimize.root")
        if flat.dtype.kind == "c":
            raise ImplicitSolveError("root_solver: scipy.optimize.root solves real systems; "
                                     "split complex unknowns into real and imaginary parts")
        if flat.size == 0:  # no unknowns: nothing to solve (SciPy refuses an empty x0)
            return initial

        def fun(x):
            return flat.pack(f(flat.unpack(x)))

        jac = jacobian(fun) if method_name.lower() in _USES_JACOBIAN else None
        x0 = np.asarray(flat.pack(initial), dtype=float)
        result = scipy.optimize.root(fun, x0, method=method_name, jac=jac,
                                     options=dict(options or {}))
        if not result.success:
            raise ImplicitSolveError(f"scipy.optimize.root (method={method_name!r}) did not "
                                     f"converge: {result.message}")
        return flat.unpack(result.x)

    return solve

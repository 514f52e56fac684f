"""``scipy.sparse.linalg.gmres`` as the ``linear_solve`` callback of ``advect.implicit_root``.

The operator ``A`` (and ``A^T`` for reverse mode) reaches GMRES as a matrix-free
``LinearOperator`` over the flattened unknowns: one JVP (or VJP) of the residual per product.

Example:
    >>> import numpy as np
    >>> solve = gmres_solver(rtol=1e-12)
    >>> solve(lambda v: 2.0 * v, np.array([1.0, 4.0])).tolist()
    [0.5, 2.0]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse.linalg

from ...errors import ImplicitSolveError
from ..optimize import FlatVector

__all__ = ["gmres_solver"]


def gmres_solver(*, rtol: float = 1e-5, atol: float = 0.0,
                 maxiter: int | None = None) -> Callable:
    """A ``linear_solve(matvec, b) -> x`` callback for ``implicit_root`` built on
    ``scipy.sparse.linalg.gmres(LinearOperator(matvec), b, rtol=rtol, atol=atol,
    maxiter=maxiter)``; ``b`` and ``x`` are pytrees shaped like the unknowns.

    Tighten ``rtol`` for accurate derivatives (SciPy's default 1e-5 bounds their accuracy).
    Complex unknowns work when the residual is holomorphic in them (then ``A`` is complex
    linear, which GMRES assumes).

    Raises:
        ImplicitSolveError: GMRES reports no convergence within ``maxiter`` or an illegal
            input (its ``info`` code is included).

    Example:
        >>> import numpy as np
        >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
        >>> x = gmres_solver(rtol=1e-12)(lambda v: a @ v, np.array([1.0, 0.0]))
        >>> bool(np.allclose(a @ x, [1.0, 0.0]))
        True
    """
    def linear_solve(matvec: Callable, b: Any) -> Any:
        flat = FlatVector(b, "gmres_solver")
        if flat.size == 0:  # an empty system (SciPy refuses a 0 x 0 operator)
            return b
        operator = scipy.sparse.linalg.LinearOperator(
            (flat.size, flat.size), dtype=flat.dtype,
            matvec=lambda v: np.asarray(flat.pack(matvec(flat.unpack(np.ravel(v))))))
        rhs = np.asarray(flat.pack(b), dtype=flat.dtype)
        x, info = scipy.sparse.linalg.gmres(operator, rhs, rtol=rtol, atol=atol,
                                            maxiter=maxiter)
        if info != 0:
            what = (f"did not converge to rtol={rtol}, atol={atol} in {info} iterations"
                    if info > 0 else f"reported an illegal input (info={info})")
            raise ImplicitSolveError(f"scipy.sparse.linalg.gmres {what}; raise maxiter or "
                                     "loosen the tolerances")
        return flat.unpack(x)

    return linear_solve

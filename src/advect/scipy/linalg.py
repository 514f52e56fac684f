"""Differentiable ``scipy.linalg``: the solvers and factorizations scientists call most, with
SciPy's signatures, in dynamic transforms and staged programs.

On plain arrays every function returns SciPy's own result. On traced arrays each one is
written with Advect's linear-algebra ops (``solve``, ``triangular_solve``, ``cholesky``,
``eigh``, ``pinv``) and the SciPy-backed ops ``expm`` (exact Fréchet derivative) and
``lu_factor``. Routines that read one triangle (``lower=``) are differentiated as such: the
other triangle gets no derivative, exactly as it has no influence. ``overwrite_*`` and
``check_finite`` are accepted and have no effect on traced values (they are never written).

Example:
    >>> import numpy as np, advect as ad
    >>> from advect.scipy import linalg
    >>> a = np.array([[0.0, 1.0], [-1.0, 0.0]])
    >>> ad.jvp(linalg.expm)(a, tangents=np.eye(2))[1].round(12).tolist()  # d expm(A + tI)
    [[0.540302305868, 0.841470984808], [-0.841470984808, 0.540302305868]]
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import scipy.linalg as _sl

from .. import ops
from ..core import Tracer
from ..errors import TracingError

__all__ = ["solve", "solve_triangular", "cho_factor", "cho_solve", "lu_factor", "lu_solve",
           "cholesky", "eigh", "expm", "inv", "det", "lstsq"]

_ASSUME = {None: "general", "gen": "general", "general": "general", "sym": "symmetric",
           "symmetric": "symmetric", "her": "hermitian", "hermitian": "hermitian",
           "pos": "positive definite", "positive definite": "positive definite",
           "diagonal": "diagonal", "tridiagonal": "tridiagonal", "banded": "general",
           "upper triangular": "upper triangular", "lower triangular": "lower triangular"}


def _traced(*values: Any) -> bool:
    return any(isinstance(v, Tracer) for v in values)


def _mT(x: Any) -> Any:
    return np.swapaxes(x, -1, -2)


def _mH(x: Any) -> Any:
    return np.conj(_mT(x)) if x.dtype.kind == "c" else _mT(x)


def _eye(a: Any) -> np.ndarray:
    # in a's real precision: a float64 identity would promote float32 results to float64
    return np.eye(a.shape[-1], dtype=np.finfo(np.result_type(a.dtype, np.float32)).dtype)


def _from_triangle(a: Any, lower: bool, hermitian: bool) -> Any:
    """The symmetric (Hermitian) matrix a routine reading only one triangle of ``a`` sees."""
    strict = np.tril(a, -1) if lower else np.triu(a, 1)
    mirrored = _mH(strict) if hermitian else _mT(strict)
    diagonal = (np.real(a) if hermitian and a.dtype.kind == "c" else a) * _eye(a)
    return strict + mirrored + diagonal


def _as_matrix(b: Any) -> tuple[Any, bool]:
    """A 1-D right-hand side as one column (and whether to drop it again)."""
    return (b[..., None], True) if b.ndim == 1 else (b, False)


def _tri_solve(t: Any, b: Any, lower: bool) -> Any:
    return ops.triangular_solve(t, b, lower=lower)


def _cho_solve_lower(factor: Any, b: Any) -> Any:
    return _tri_solve(_mH(factor), _tri_solve(factor, b, lower=True), lower=False)


def solve(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True, assume_a: str | None = None,
          transposed: bool = False) -> Any:
    """Solve ``a @ x == b`` (``a.T @ x == b`` with ``transposed``), as ``scipy.linalg.solve``.

    ``assume_a`` selects what of ``a`` is read, and so differentiated: ``"general"`` (default;
    ``"banded"`` too), ``"symmetric"``/``"hermitian"``/``"positive definite"`` (one triangle,
    chosen by ``lower``), ``"diagonal"``, ``"tridiagonal"``, ``"upper triangular"``, ``"lower
    triangular"``.

    Raises:
        ValueError: an unknown ``assume_a``.
        NotImplementedError: ``transposed`` with complex ``a`` (as SciPy).

    Example:
        >>> import numpy as np, advect as ad
        >>> a = np.array([[4.0, 1.0], [1.0, 3.0]])
        >>> f = lambda a: solve(a, np.ones(2), assume_a="pos").sum()
        >>> bool(np.isclose(f(a), np.linalg.solve(a, np.ones(2)).sum()))
        True
        >>> float(ad.grad(f)(a)[1, 0])  # lower=False: the lower triangle is never read
        0.0
    """
    if assume_a not in _ASSUME:
        raise ValueError(f"scipy.linalg.solve: unknown assume_a={assume_a!r}; use one of "
                         f"{sorted(k for k in _ASSUME if k)}")
    if not _traced(a, b):
        given = {} if assume_a is None else {"assume_a": assume_a}  # SciPy < 1.17: no None
        return _sl.solve(a, b, lower=lower, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                         check_finite=check_finite, transposed=transposed, **given)
    a, b = _as_scipy("solve", a, b)
    if transposed and a.dtype.kind == "c":
        raise NotImplementedError("scipy.linalg.solve: transposed=True is not supported for "
                                  "complex a (as in SciPy); pass np.swapaxes(a, -1, -2)")
    kind = _ASSUME[assume_a]
    rhs, vector = _as_matrix(b)
    if kind.endswith("triangular"):
        low = kind == "lower triangular"
        x = solve_triangular(a, rhs, trans=1 if transposed else 0, lower=low)
    elif kind == "diagonal":
        x = rhs / np.diagonal(a, axis1=-2, axis2=-1)[..., None]
    elif kind == "positive definite":
        x = _cho_solve_lower(np.linalg.cholesky(_from_triangle(a, lower, True)), rhs)
    else:
        if kind in ("symmetric", "hermitian"):
            a = _from_triangle(a, lower, kind == "hermitian")
        elif kind == "tridiagonal":
            a = a * (np.abs(np.subtract.outer(np.arange(a.shape[-1]), np.arange(a.shape[-1])))
                     <= 1)
        x = np.linalg.solve(_mT(a) if transposed else a, rhs)
    return x[..., 0] if vector else x


def _array(x: Any) -> Any:
    return x if isinstance(x, Tracer) else np.asarray(x)


# examples of each function: the dtype of the result they return is the dtype it works in
_EXAMPLES = {
    "solve": lambda a, b: _sl.solve(a, b),
    "solve_triangular": lambda a, b: _sl.solve_triangular(a, b),
    "cholesky": lambda a: _sl.cholesky(a),
    "cho_solve": lambda c, b: _sl.cho_solve((c, False), b),
    "lu_factor": lambda a: _sl.lu_factor(a)[0],
    "lu_solve": lambda lu, b: _sl.lu_solve((lu, np.zeros(2, np.int32)), b),
    "eigh": lambda a, b=None: _sl.eigh(a, b)[1],
    "expm": lambda a: _sl.expm(a),
    "inv": lambda a: _sl.inv(a),
    "lstsq": lambda a, b: _sl.lstsq(a, b)[0],
}


@functools.cache
def _scipy_dtype(name: str, *dtypes: np.dtype) -> np.dtype:
    """The dtype the installed SciPy's ``name`` works in and returns for inputs of ``dtypes``,
    read off a 2 x 2 example (a 1 x 1 one can take a scalar shortcut: ``expm`` of a 1 x 1 bool
    matrix is float16): SciPy 1.17 solves bool, int8 and int16 in float32 but int32 in
    float64, float16 in float32, and ``solve`` and ``expm`` take every integer to float64."""
    return np.asarray(_EXAMPLES[name](*(np.eye(2, dtype=d) for d in dtypes))).dtype


# the routines whose first input must be a square matrix (or a stack): SciPy's ValueError
_SQUARE = frozenset({"solve", "solve_triangular", "cholesky", "eigh", "inv"})


def _as_scipy(name: str, *xs: Any) -> list[Any]:
    """The (non-None) inputs of ``name`` cast to the dtype SciPy works in for them."""
    arrays = [_array(x) for x in xs if x is not None]
    if name in _SQUARE and (arrays[0].ndim < 2 or arrays[0].shape[-1] != arrays[0].shape[-2]):
        raise ValueError(f"scipy.linalg: expected a square matrix (or a stack of them), got "
                         f"an array of shape {arrays[0].shape}")
    dtype = _scipy_dtype(name, *(x.dtype for x in arrays))
    return [x if x.dtype == dtype else x.astype(dtype) for x in arrays]


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False,
                     unit_diagonal: bool = False, overwrite_b: bool = False,
                     check_finite: bool = True) -> Any:
    """Solve ``op(a) @ x == b`` for a triangular ``a``, ``op`` chosen by ``trans``: 0 or
    ``"N"`` (``a``), 1 or ``"T"`` (``a.T``), 2 or ``"C"`` (``a^H``); with ``unit_diagonal``
    the diagonal is taken as ones (and gets no derivative).

    Example:
        >>> import numpy as np, advect as ad
        >>> a = np.array([[2.0, 0.0], [1.0, 4.0]])
        >>> solve_triangular(a, np.array([2.0, 9.0]), lower=True).tolist()
        [1.0, 2.0]
        >>> ad.grad(lambda a: solve_triangular(a, np.ones(2), lower=True)[0])(a).tolist()
        [[-0.25, 0.0], [0.0, 0.0]]
    """
    if not _traced(a, b):
        return _sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal,
                                    overwrite_b=overwrite_b, check_finite=check_finite)
    a, b = _as_scipy("solve_triangular", a, b)
    mode = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}.get(trans)
    if mode is None:
        raise ValueError(f"scipy.linalg.solve_triangular: trans={trans!r} is not 0, 1, 2, 'N', "
                         "'T' or 'C'")
    t = np.tril(a, -1 if unit_diagonal else 0) if lower else np.triu(a, 1 if unit_diagonal else 0)
    if unit_diagonal:
        t = t + _eye(a)
    if mode:
        t, lower = (_mT(t) if mode == 1 else _mH(t)), not lower
    rhs, vector = _as_matrix(b)
    x = _tri_solve(t, rhs, lower)
    return x[..., 0] if vector else x


def cholesky(a: Any, lower: bool = False, overwrite_a: bool = False,
             check_finite: bool = True) -> Any:
    """The Cholesky factor of a Hermitian positive-definite ``a``: upper ``U`` with
    ``a = U^H U`` by default, lower ``L`` with ``a = L L^H`` for ``lower=True``; only that
    triangle of ``a`` is read.

    Example:
        >>> import numpy as np, advect as ad
        >>> cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).tolist()
        [[2.0, 1.0], [0.0, 2.0]]
        >>> ad.grad(lambda a: cholesky(a)[0, 0])(np.array([[4.0, 2.0], [2.0, 5.0]])).tolist()
        [[0.25, 0.0], [0.0, 0.0]]
    """
    if not _traced(a):
        return _sl.cholesky(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite)
    (a,) = _as_scipy("cholesky", a)
    factor = np.linalg.cholesky(_from_triangle(a, lower, True))
    return factor if lower else _mH(factor)


def cho_factor(a: Any, lower: bool = False, overwrite_a: bool = False,
               check_finite: bool = True) -> tuple[Any, bool]:
    """``(c, lower)`` for ``cho_solve``: the Cholesky factor in one triangle of ``c``; the other
    triangle holds ``a``'s entries, as SciPy leaves them.

    Example:
        >>> import numpy as np, advect as ad
        >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
        >>> f = lambda a: cho_solve(cho_factor(a), np.array([1.0, 2.0])).sum()
        >>> bool(np.isclose(ad.grad(f)(a)[0, 0], -np.linalg.solve(a, [1.0, 2.0])[0]
        ...                 * np.linalg.solve(a, [1.0, 1.0])[0]))
        True
    """
    if not _traced(a):
        return _sl.cho_factor(a, lower=lower, overwrite_a=overwrite_a, check_finite=check_finite)
    (a,) = _as_scipy("cholesky", a)
    factor = cholesky(a, lower=lower)
    return factor + (np.triu(a, 1) if lower else np.tril(a, -1)), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any, overwrite_b: bool = False,
              check_finite: bool = True) -> Any:
    """Solve ``a @ x == b`` from ``cho_factor(a)``; only the factor's triangle of ``c`` is read.

    Example:
        >>> import numpy as np
        >>> c = cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]))
        >>> cho_solve(c, np.array([6.0, 7.0])).tolist()
        [1.0, 1.0]
    """
    c, lower = c_and_lower
    if not _traced(c, b):
        return _sl.cho_solve((c, lower), b, overwrite_b=overwrite_b, check_finite=check_finite)
    c, b = _as_scipy("cho_solve", c, b)
    factor = np.tril(c) if lower else _mH(np.triu(c))
    rhs, vector = _as_matrix(b)
    x = _cho_solve_lower(factor, rhs)
    return x[..., 0] if vector else x


def lu_factor(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> tuple[Any, Any]:
    """``(lu, piv)``: the pivoted LU factorization ``P a = L U`` packed as LAPACK does (unit
    lower ``L`` below the diagonal of ``lu``, ``U`` on and above it, row swaps in ``piv``).
    The pivots are locally constant: no derivative flows through them.

    Example:
        >>> import numpy as np, advect as ad
        >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> lu, piv = lu_factor(a)
        >>> piv.tolist()
        [1, 1]
        >>> f = lambda a: lu_solve(lu_factor(a), np.array([1.0, 0.0])).sum()
        >>> bool(np.allclose(ad.grad(f)(a), -np.outer(np.linalg.solve(a.T, np.ones(2)),
        ...                                           np.linalg.solve(a, [1.0, 0.0]))))
        True
    """
    if not _traced(a):
        return _sl.lu_factor(a, overwrite_a=overwrite_a, check_finite=check_finite)
    (a,) = _as_scipy("lu_factor", a)
    return ops.lu_factor(a)


def lu_solve(lu_and_piv: tuple[Any, Any], b: Any, trans: int = 0, overwrite_b: bool = False,
             check_finite: bool = True) -> Any:
    """Solve ``a @ x == b`` (``trans=1``: ``a.T``, ``trans=2``: ``a^H``) from ``lu_factor(a)``.

    Example:
        >>> import numpy as np
        >>> lu_solve(lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]])), np.array([5.0, 11.0])).tolist()
        [1.0, 2.0]
    """
    lu, piv = lu_and_piv
    if not _traced(lu, piv, b):
        return _sl.lu_solve((lu, piv), b, trans=trans, overwrite_b=overwrite_b,
                            check_finite=check_finite)
    if trans not in (0, 1, 2):
        raise ValueError(f"scipy.linalg.lu_solve: trans={trans!r} is not 0, 1 or 2")
    lu, b = _as_scipy("lu_solve", lu, b)
    n = lu.shape[-1]
    perm = ops.lu_permutation(piv)
    p = (perm[..., :, None] == np.arange(n)).astype(np.real(lu).dtype)  # (P a)[i] = a[perm[i]]
    lower, upper = np.tril(lu, -1) + _eye(lu), np.triu(lu)
    rhs, vector = _as_matrix(b)
    if trans == 0:
        x = _tri_solve(upper, _tri_solve(lower, p @ rhs, lower=True), lower=False)
    else:
        flip = _mT if trans == 1 else _mH
        x = _mT(p) @ _tri_solve(flip(lower), _tri_solve(flip(upper), rhs, lower=True),
                                lower=False)
    return x[..., 0] if vector else x


def eigh(a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False,
         overwrite_a: bool = False, overwrite_b: bool = False, type: int = 1,
         check_finite: bool = True, subset_by_index: Any = None, subset_by_value: Any = None,
         driver: str | None = None) -> Any:
    """Eigenvalues (ascending) and eigenvectors of a Hermitian ``a``, or of the generalized
    problem with a Hermitian positive-definite ``b`` (``type`` 1: ``a v = w b v``, 2:
    ``a b v = w v``, 3: ``b a v = w v``; eigenvectors normalized as SciPy's). Only the
    ``lower`` (or upper) triangles are read. Eigenvectors are unique up to sign (phase), so
    they may differ from SciPy's by one; derivatives assume distinct eigenvalues.

    Raises:
        ValueError: ``subset_by_value`` on traced arrays (the number of eigenvalues would
            depend on the data; use ``subset_by_index``), or ``type`` not 1, 2 or 3.

    Example:
        >>> import numpy as np, advect as ad
        >>> a = np.array([[2.0, 1.0], [1.0, 2.0]])
        >>> eigh(a, eigvals_only=True).tolist()
        [1.0, 3.0]
        >>> ad.grad(lambda a: eigh(a, eigvals_only=True)[1])(a).round(12).tolist()
        [[0.5, 0.0], [1.0, 0.5]]
    """
    if not _traced(a, b):
        return _sl.eigh(a, b, lower=lower, eigvals_only=eigvals_only, overwrite_a=overwrite_a,
                        overwrite_b=overwrite_b, type=type, check_finite=check_finite,
                        subset_by_index=subset_by_index, subset_by_value=subset_by_value,
                        driver=driver)
    if subset_by_value is not None:
        raise ValueError("scipy.linalg.eigh: subset_by_value selects a data-dependent number "
                         "of eigenvalues, which traced arrays cannot have; use subset_by_index")
    if type not in (1, 2, 3):
        raise ValueError(f"scipy.linalg.eigh: type={type!r} is not 1, 2 or 3")
    a, *b = _as_scipy("eigh", a, b)
    a = _from_triangle(a, lower, True)
    if not b:
        w, v = np.linalg.eigh(a)
    else:
        factor = np.linalg.cholesky(_from_triangle(b[0], lower, True))
        if type == 1:  # L^{-1} a L^{-H}
            left = _tri_solve(factor, a, lower=True)
            c = _mH(_tri_solve(factor, _mH(left), lower=True))
        else:
            c = _mH(factor) @ a @ factor
        w, y = np.linalg.eigh(c)
        v = factor @ y if type == 3 else _tri_solve(_mH(factor), y, lower=False)
    if subset_by_index is not None:
        lo, hi = (int(i) for i in subset_by_index)
        w, v = w[..., lo:hi + 1], v[..., :, lo:hi + 1]
    return w if eigvals_only else (w, v)


def expm(A: Any) -> Any:
    """The matrix exponential (of the last two axes), with the exact Fréchet derivative
    ``L(A, E)``: the top-right block of ``expm([[A, E], [0, A]])``, at every order.

    Example:
        >>> import numpy as np, advect as ad
        >>> a = np.array([[1.0, 2.0], [0.0, 1.0]])
        >>> bool(np.allclose(expm(a), [[np.e, 2 * np.e], [0.0, np.e]]))
        True
        >>> bool(np.isclose(ad.grad(lambda a: np.trace(expm(a)))(a)[0, 0], np.e))
        True
    """
    if not _traced(A):
        return _sl.expm(A)
    (a,) = _as_scipy("expm", A)
    return ops.expm(a)


def inv(a: Any, overwrite_a: bool = False, check_finite: bool = True, *,
        assume_a: str | None = None, lower: bool = False) -> Any:
    """The inverse of ``a``; ``assume_a`` and ``lower`` as in ``solve``.

    Example:
        >>> import numpy as np, advect as ad
        >>> inv(np.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[0.5, 0.0], [0.0, 0.25]]
        >>> ad.grad(lambda a: inv(a)[0, 0])(np.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
        [[-0.25, 0.0], [0.0, 0.0]]
    """
    if not _traced(a):
        given = {} if assume_a is None and not lower else {"assume_a": assume_a, "lower": lower}
        return _sl.inv(a, overwrite_a=overwrite_a, check_finite=check_finite, **given)
    (a,) = _as_scipy("inv", a)
    if _ASSUME.get(assume_a, "") == "general":
        return np.linalg.inv(a)
    return solve(a, np.broadcast_to(_eye(a), a.shape), lower=lower, assume_a=assume_a)


def det(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
    """The determinant (of the last two axes); its derivative is finite at singular ``a``.

    Example:
        >>> import numpy as np, advect as ad
        >>> ad.grad(det)(np.array([[1.0, 2.0], [2.0, 4.0]])).round(12).tolist()  # adj(a).T
        [[4.0, -2.0], [-2.0, 1.0]]
    """
    if not _traced(a):
        return _sl.det(a, overwrite_a=overwrite_a, check_finite=check_finite)
    (a,) = _as_scipy("inv", a)  # SciPy factors in the dtype inv works in (int8: float32)
    d = np.linalg.det(a)
    dtype = _det_dtype(d.dtype)
    return d if dtype == d.dtype else d.astype(dtype)


@functools.cache
def _det_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype SciPy's det returns for ``dtype`` input (from SciPy 1.13 on, double precision
    for single precision), read off a 1 x 1 example so it follows the installed SciPy."""
    return np.asarray(_sl.det(np.ones((1, 1), dtype))).dtype


def lstsq(a: Any, b: Any, cond: float | None = None, overwrite_a: bool = False,
          overwrite_b: bool = False, check_finite: bool = True,
          lapack_driver: str | None = None) -> tuple[Any, Any, int, Any]:
    """``(x, residues, rank, s)`` minimizing ``|b - a x|``, as ``scipy.linalg.lstsq``: singular
    values below ``cond * max(s)`` (default: machine epsilon) count as zero; ``residues`` are
    the squared residual norms when ``a`` is tall and of full rank, else empty.

    Differentiable in dynamic transforms. While staging only wide or square ``a`` works: for a
    tall ``a`` the residues' shape depends on its rank, which is data.

    Raises:
        TracingError: staging with a tall ``a``.

    Example:
        >>> import numpy as np, advect as ad
        >>> a, b = np.array([[1.0], [1.0]]), np.array([1.0, 3.0])
        >>> x, residues, rank, s = lstsq(a, b)
        >>> x.round(12).tolist(), round(float(residues), 12), int(rank)
        ([2.0], 2.0, 1)
        >>> ad.grad(lambda b: lstsq(a, b)[0][0])(b).round(12).tolist()
        [0.5, 0.5]
    """
    if not _traced(a, b):
        return _sl.lstsq(a, b, cond=cond, overwrite_a=overwrite_a, overwrite_b=overwrite_b,
                         check_finite=check_finite, lapack_driver=lapack_driver)
    a, b = _as_scipy("lstsq", a, b)
    m, n = a.shape[-2:]
    if cond is None:
        cond = float(np.finfo(np.result_type(a.dtype, b.dtype, np.float32)).eps)
    s = np.linalg.svd(a, compute_uv=False)
    x = np.linalg.pinv(a, rcond=cond) @ b
    rank = np.sum(s > cond * np.max(s))
    try:
        rank = int(rank)  # a Python int, as SciPy returns, except while staging
    except TracingError:
        if m > n:
            raise TracingError("scipy.linalg.lstsq while staging: for a tall a the shape of "
                               "the residues depends on the rank of a, which is data; stage "
                               "np.linalg.pinv(a) @ b instead, or call lstsq in a dynamic "
                               "transform") from None
    if m <= n or rank < n:
        return x, np.empty((0,), dtype=a.dtype), rank, s  # complex for complex a, as SciPy
    return x, np.sum(np.abs(b - a @ x) ** 2, axis=0), rank, s

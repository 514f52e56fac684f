"""Mismatches with NumPy and SciPy found by probing einsum, condition numbers and SciPy dtypes.

Each test holds one fixed bug against its oracle: NumPy's (or SciPy's) own value, dtype and type
(NumPy scalar or 0-d array), in dynamic transforms and in staged programs.
"""

import json
import warnings

import numpy as np
import pytest

import advect as ad
from advect.errors import PayloadError

LA = np.linalg
RNG = np.random.default_rng(7)
M, A = RNG.normal(size=(3, 3)), RNG.normal(size=3)
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])


def _same(got, want, rtol=1e-6):
    assert type(got) is type(want), (type(got), type(want))
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-12)


def _both_lifetimes(f, *args, rtol=1e-6):
    want = f(*args)
    argnums = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind in "fc")
    if argnums:
        _same(ad.vjp(f, argnums=argnums)(*args)[0], want, rtol)
    _same(ad.stage(f, *args)(*args), want, rtol)


# --- einsum: the result type follows optimize --------------------------------------------------

@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal", None, ("greedy", 2),
                                      ["einsum_path", (0, 1), (0, 1)],
                                      ["einsum_path", (0, 1, 2)]])
@pytest.mark.parametrize("subscripts", ["ij,j,i", "ij,ij->", "i,i", "ii", "i,j,i,j"])
def test_einsum_result_type_follows_optimize(subscripts, optimize):
    if subscripts != "ij,j,i" and isinstance(optimize, list):
        pytest.skip("a path of three operands")
    operands = {"ij,j,i": (M, A, A), "ij,ij->": (M, M), "i,i": (A, A), "ii": (M,),
                "i,j,i,j": (A, A, A, A)}[subscripts]
    _both_lifetimes(lambda *xs: np.einsum(subscripts, *xs, optimize=optimize), *operands)


@pytest.mark.parametrize("shapes", [[(1,), (3,)], [(3, 1), (1,), (3,)], [(0,), (0,)]])
def test_einsum_result_type_with_broadcast_and_empty_letters(shapes):
    operands = [RNG.normal(size=s) for s in shapes]
    subscripts = "i,i" if len(shapes) == 2 else "ij,j,i"
    for optimize in (True, None):
        _both_lifetimes(lambda *xs, o=optimize: np.einsum(subscripts, *xs, optimize=o), *operands)


def test_einsum_optimized_gradient_and_interleaved_form():
    f = lambda m, a: np.einsum(m, [0, 1], a, [1], a, [0], optimize=True)  # noqa: E731
    _both_lifetimes(f, M, A)
    g = ad.grad(f, argnums=1)(M, A)
    np.testing.assert_allclose(g, (M + M.T) @ A)


def test_einsum_invalid_optimize_raises_as_numpy():
    with pytest.raises(KeyError):
        ad.grad(lambda a: np.einsum("i,i", a, a, optimize="fastest"))(A)
    with pytest.raises(TypeError):
        ad.grad(lambda a: np.einsum("i,i", a, a, optimize=1))(A)
    with pytest.raises(ValueError):  # not a path of two operands
        ad.grad(lambda a: np.einsum("i,i", a, a, optimize=["einsum_path", (0, 3)]))(A)


def test_einsum_optimize_round_trips_and_old_programs_load():
    f = lambda m, a: np.einsum("ij,j,i", m, a, a, optimize=["einsum_path", (0, 1), (0, 1)])  # noqa: E731,E501
    payload = json.loads(json.dumps(ad.stage(f, M, A).to_dict()))
    _same(ad.StagedProgram.from_dict(payload)(M, A), f(M, A))
    (node,) = payload["graph"]["nodes"]
    del node[2]["optimize"]  # a program saved before the attr (its outputs' types are saved)
    np.testing.assert_allclose(ad.StagedProgram.from_dict(payload)(M, A), f(M, A))
    for bad in (["einsum_path", [0, 1]], "fastest", True, ["greedy", 1.5]):
        node[2]["optimize"] = bad
        with pytest.raises(PayloadError):
            ad.StagedProgram.from_dict(payload)


def test_linalg_tensordot_of_vectors_is_a_0d_array():
    _both_lifetimes(lambda a: np.linalg.tensordot(a, a, axes=1), A)


# --- cond of singular matrices -----------------------------------------------------------------

@pytest.mark.parametrize("p", [None, 1, -1, 2, -2, np.inf, -np.inf, "fro"])
@pytest.mark.parametrize("x", [SINGULAR, np.zeros((2, 2)), np.stack([SINGULAR, np.eye(2)]),
                               np.array([[np.nan, 1.0], [1.0, 1.0]]),
                               np.array([[np.inf, 1.0], [1.0, 1.0]])],
                         ids=["singular", "zero", "stack", "nan", "inf"])
def test_cond_of_singular_matrices_matches_numpy(x, p):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a staged 0 / 0, as NumPy's own
        try:
            LA.cond(x, p)
        except LA.LinAlgError:  # NumPy 2.4's SVD does not converge on NaN and inf entries
            with pytest.raises(LA.LinAlgError):
                ad.vjp(lambda x: LA.cond(x, p))(x)
            return
        _both_lifetimes(lambda x: LA.cond(x, p), x)


@pytest.mark.parametrize("p", [1, np.inf, "fro", None])
def test_cond_derivative_at_a_singular_matrix_is_not_a_silent_zero(p):
    f = lambda x: LA.cond(x, p)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for g in (ad.grad(f)(SINGULAR), ad.stage(ad.grad(f), SINGULAR)(SINGULAR),
                  ad.jvp(f)(SINGULAR, tangents=np.ones((2, 2)))[1]):
            assert not np.all(np.isfinite(g)) or np.max(np.abs(g)) > 1e20


@pytest.mark.parametrize("dtype", [np.float32, np.complex64, np.int64])
@pytest.mark.parametrize("p", [None, 1, "fro", -np.inf, "nuc"])
def test_cond_dtype_and_regular_derivative(dtype, p):
    x = np.array([[2.0, 1.0], [1.0, 3.0]]).astype(dtype)
    if dtype is np.complex64:
        x = x + 1j * np.array([[0.0, 1.0], [0.0, 0.5]], np.float32)
        if p is not None and np.lib.NumpyVersion(np.__version__) < "2.1.0":
            pytest.skip("NumPy 2.0's cond returns a complex value here; later releases a real")
    _both_lifetimes(lambda x: LA.cond(x, p), x, rtol=1e-5)
    if dtype is not np.int64:
        return
    y = x.astype(float)
    g = ad.grad(lambda x: LA.cond(x, p))(y)
    eps, central = 1e-6, np.zeros_like(y)
    for idx in np.ndindex(y.shape):
        e = np.zeros_like(y)
        e[idx] = eps
        central[idx] = (LA.cond(y + e, p) - LA.cond(y - e, p)) / (2 * eps)
    np.testing.assert_allclose(g, central, rtol=1e-5, atol=1e-6)


def test_cond_of_an_empty_or_non_square_matrix_raises_as_numpy():
    with pytest.raises(LA.LinAlgError):
        ad.grad(lambda x: LA.cond(x, 1).sum())(np.ones((2, 3)))
    with pytest.raises(LA.LinAlgError):
        ad.grad(lambda x: LA.cond(x).sum())(np.ones((0, 0)))


def test_slogdet_derivative_at_a_singular_matrix_is_nan_not_an_error():
    stack = np.stack([SINGULAR, 2 * np.eye(2)])
    _, tangent = ad.jvp(lambda a: LA.slogdet(a).logabsdet)(stack, tangents=np.ones((2, 2, 2)))
    assert np.isnan(tangent[0]) and tangent[1] == 1.0
    g = ad.grad(lambda a: LA.slogdet(a).logabsdet.sum())(stack)
    assert np.isnan(g[0]).all()
    np.testing.assert_allclose(g[1], 0.5 * np.eye(2))


# --- scipy.linalg dtypes: the installed SciPy's rule --------------------------------------------

_TRI = np.array([[2, 0], [1, 3]])
_SPD = np.array([[4, 1], [1, 3]])
_B = np.array([1, 2])
_SCIPY = {
    "solve": lambda m, a, b: m.solve(a, b),
    "solve_pos": lambda m, a, b: m.solve(a, b, assume_a="pos"),
    "solve_triangular": lambda m, a, b: m.solve_triangular(a, b, lower=True),
    "cholesky": lambda m, a, b: m.cholesky(a),
    "cho_factor": lambda m, a, b: np.triu(m.cho_factor(a)[0]),  # the other triangle: any data
    "cho_solve": lambda m, a, b: m.cho_solve((m.cholesky(a), False), b),
    "lu_factor": lambda m, a, b: m.lu_factor(a),
    "lu_solve": lambda m, a, b: m.lu_solve(m.lu_factor(a), b),
    "eigh": lambda m, a, b: m.eigh(a)[0],
    "expm": lambda m, a, b: m.expm(a),
    "inv": lambda m, a, b: m.inv(a),
    "det": lambda m, a, b: m.det(a),
    "lstsq": lambda m, a, b: m.lstsq(a, b)[0],
}


@pytest.mark.parametrize("dtype", ["bool", "int8", "int16", "int32", "float16", "float32",
                                   "complex64"])
@pytest.mark.parametrize("name", sorted(_SCIPY))
def test_scipy_linalg_result_dtype_follows_scipy(name, dtype):
    sl = pytest.importorskip("scipy.linalg")
    from advect.scipy import linalg as al

    f = _SCIPY[name]
    a = (np.eye(2, dtype=int) if dtype == "bool" else
         _TRI if name == "solve_triangular" else _SPD).astype(dtype)
    b = _B.astype(dtype)
    want = f(sl, a, b)
    for got in (ad.vjp(lambda b: f(al, a, b))(b)[0] if dtype[0] in "fc" else f(al, a, b),
                ad.stage(lambda a, b: f(al, a, b), a, b)(a, b)):
        for g, w in zip(got if isinstance(want, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            assert np.asarray(g).dtype == np.asarray(w).dtype
            np.testing.assert_allclose(g, w, rtol=2e-3)


def test_scipy_lstsq_of_complex_square_a_has_complex_empty_residues():
    sl = pytest.importorskip("scipy.linalg")
    from advect.scipy import linalg as al

    a = np.array([[1.0 + 1j, 2.0], [0.0, 1.0 - 1j]], np.complex64)
    b = np.ones(2, np.complex64)
    want = sl.lstsq(a, b)[1]
    got = ad.vjp(lambda a: al.lstsq(a, b)[1], )(a)[0]
    assert got.dtype == want.dtype and got.shape == want.shape == (0,)

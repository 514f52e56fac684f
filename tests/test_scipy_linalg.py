"""advect.scipy.linalg against scipy.linalg: traced values, derivatives (central differences and
both modes, second order), staged programs that save and load."""

import json

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

sl = pytest.importorskip("scipy.linalg")
from advect.scipy import linalg  # noqa: E402

rng = np.random.default_rng(3)
N = 4
A = rng.normal(size=(N, N)) + N * np.eye(N)
SPD = (lambda m: m @ m.T + N * np.eye(N))(rng.normal(size=(N, N)))
HPD = (lambda m: m @ m.conj().T + N * np.eye(N))(rng.normal(size=(N, N))
                                                  + 1j * rng.normal(size=(N, N)))
B = rng.normal(size=(N, 2))
b = rng.normal(size=N)
LOW = np.tril(A)
AC = A + 0.5j * rng.normal(size=(N, N))


def _traced(f, *args):
    """f's value computed on traced arrays (the path under test), not by SciPy."""
    return ad.jvp(f, tuple(range(len(args))))(*args, tangents=tuple(np.zeros_like(x)
                                                                   for x in args))[0]


def _reload(program):
    return ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))


def _all_laws(f, expected, *args, rtol=1e-10, order=2):
    np.testing.assert_allclose(_traced(f, *args), expected, rtol=rtol, atol=1e-12)
    check_grads(f, args, order=order)
    staged = _reload(ad.stage(f, *args))
    np.testing.assert_allclose(staged(*args), expected, rtol=rtol, atol=1e-12)


SOLVES = [
    ("general", A, B, {}),
    ("vector", A, b, {}),
    ("transposed", A, B, {"transposed": True}),
    ("sym_upper", A + A.T, B, {"assume_a": "sym"}),
    ("sym_lower", A + A.T, B, {"assume_a": "symmetric", "lower": True}),
    ("her", HPD, B + 0j, {"assume_a": "her", "lower": True}),
    ("pos", SPD, B, {"assume_a": "pos"}),
    ("pos_complex", HPD, B + 1j, {"assume_a": "positive definite", "lower": True}),
    ("diagonal", np.diag(np.diag(A)), B, {"assume_a": "diagonal"}),
    ("tridiagonal", A * (np.abs(np.subtract.outer(range(N), range(N))) <= 1), B,
     {"assume_a": "tridiagonal"}),
    ("banded", A, B, {"assume_a": "banded"}),
    ("upper", np.triu(A), B, {"assume_a": "upper triangular"}),
    ("lower_transposed", LOW, b, {"assume_a": "lower triangular", "transposed": True}),
    ("complex", AC, B + 0j, {}),
]


@pytest.mark.parametrize("name, a, rhs, kw", SOLVES, ids=[c[0] for c in SOLVES])
def test_solve(name, a, rhs, kw):
    f = lambda a, rhs: linalg.solve(a, rhs, **kw)  # noqa: E731
    _all_laws(f, sl.solve(a, rhs, **kw), a, rhs)


TRIANGULAR = [(0, True, False), ("T", False, True), (2, True, True), (1, False, False)]


@pytest.mark.parametrize("trans, lower, unit", TRIANGULAR, ids=str)
def test_solve_triangular(trans, lower, unit):
    a = (LOW if lower else LOW.T) + 0.3j * np.eye(N) * (trans == 2)
    f = lambda a, b: linalg.solve_triangular(a, b, trans=trans, lower=lower,  # noqa: E731
                                             unit_diagonal=unit)
    _all_laws(f, sl.solve_triangular(a, B, trans=trans, lower=lower, unit_diagonal=unit),
              a, B)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("a", [SPD, HPD], ids=["real", "complex"])
def test_cholesky_cho_factor_and_cho_solve(lower, a):
    _all_laws(lambda a: linalg.cholesky(a, lower=lower), sl.cholesky(a, lower=lower), a)
    # SciPy leaves unspecified data in the other triangle (it differs between releases)
    triangle = np.tril if lower else np.triu
    _all_laws(lambda a: triangle(linalg.cho_factor(a, lower=lower)[0]),
              triangle(sl.cho_factor(a, lower=lower)[0]), a)
    _all_laws(lambda a, b: linalg.cho_solve(linalg.cho_factor(a, lower=lower), b),
              sl.cho_solve(sl.cho_factor(a, lower=lower), B), a, B)


@pytest.mark.parametrize("trans", [0, 1, 2])
def test_lu_factor_and_lu_solve(trans):
    a = rng.normal(size=(N, N))  # pivoting happens
    lu, piv = sl.lu_factor(a)
    traced_lu, traced_piv = ad.jvp(linalg.lu_factor)(a, tangents=np.zeros_like(a))[0]
    np.testing.assert_allclose(traced_lu, lu, rtol=1e-12)
    np.testing.assert_array_equal(traced_piv, piv)
    _all_laws(lambda a: linalg.lu_factor(a)[0], lu, a)
    f = lambda a, b: linalg.lu_solve(linalg.lu_factor(a), b, trans=trans)  # noqa: E731
    _all_laws(f, sl.lu_solve((lu, piv), B, trans=trans), a, B)


def test_lu_factor_of_a_batch_and_of_complex_matrices():
    a = rng.normal(size=(2, 3, 3)) + 1j * rng.normal(size=(2, 3, 3))
    _all_laws(lambda a: linalg.lu_factor(a)[0], sl.lu_factor(a)[0], a, order=1)


def _sign_free(v):
    return v * np.conj(v)  # eigenvectors are unique up to sign (phase)


@pytest.mark.parametrize("lower", [True, False])
def test_eigh_standard(lower):
    a = np.tril(SPD) if lower else np.triu(SPD)  # only the chosen triangle is read
    w, v = sl.eigh(a, lower=lower)
    _all_laws(lambda a: linalg.eigh(a, lower=lower, eigvals_only=True), w, a)
    _all_laws(lambda a: _sign_free(linalg.eigh(a, lower=lower)[1]), _sign_free(v), a)


@pytest.mark.parametrize("kind", [1, 2, 3])
def test_eigh_generalized(kind):
    w, v = sl.eigh(A + A.T, SPD, type=kind)
    _all_laws(lambda a, m: linalg.eigh(a, m, type=kind)[0], w, A + A.T, SPD)
    _all_laws(lambda a, m: _sign_free(linalg.eigh(a, m, type=kind)[1]), _sign_free(v),
              A + A.T, SPD)


def test_eigh_subset_by_index_and_complex():
    w = sl.eigh(HPD, subset_by_index=(1, 2), eigvals_only=True)
    _all_laws(lambda a: linalg.eigh(a, subset_by_index=(1, 2), eigvals_only=True), w, HPD)
    with pytest.raises(ValueError, match="subset_by_index"):
        ad.grad(lambda a: linalg.eigh(a, subset_by_value=(0, 5))[0].sum())(SPD)


@pytest.mark.parametrize("a", [0.4 * A, 0.4 * AC, 0.3 * rng.normal(size=(2, 3, 3))],
                         ids=["real", "complex", "batch"])
def test_expm_and_its_frechet_derivative(a):
    _all_laws(linalg.expm, sl.expm(a), a, order=1 if a.ndim > 2 else 2)
    e = rng.normal(size=a.shape)
    tangent = ad.jvp(linalg.expm)(a, tangents=e)[1]
    expected = [sl.expm_frechet(x, y, compute_expm=False) for x, y in
                zip(a.reshape(-1, *a.shape[-2:]), e.reshape(-1, *a.shape[-2:]))]
    np.testing.assert_allclose(tangent, np.reshape(expected, a.shape), rtol=1e-11)


@pytest.mark.slow
def test_expm_third_derivative():
    check_grads(lambda a: linalg.expm(a)[0, 1], (0.4 * A[:3, :3],), order=3)


@pytest.mark.parametrize("kw", [{}, {"assume_a": "pos"}, {"assume_a": "lower triangular"}],
                         ids=["general", "pos", "lower"])
def test_inv(kw):
    a = SPD if kw.get("assume_a") == "pos" else (LOW if kw else A)
    _all_laws(lambda a: linalg.inv(a, **kw), sl.inv(a, **kw), a)


def test_det():
    _all_laws(linalg.det, sl.det(A), A)
    _all_laws(linalg.det, sl.det(AC), AC)


@pytest.mark.parametrize("shape", [(6, 3), (3, 5)], ids=["tall", "wide"])
def test_lstsq(shape):
    a, rhs = rng.normal(size=shape), rng.normal(size=(shape[0], 2))
    x, residues, rank, s = sl.lstsq(a, rhs)
    got = ad.jvp(linalg.lstsq, (0, 1))(a, rhs, tangents=(np.zeros_like(a),
                                                         np.zeros_like(rhs)))[0]
    np.testing.assert_allclose(got[0], x, rtol=1e-10)
    np.testing.assert_allclose(got[1], residues, rtol=1e-10)
    assert int(got[2]) == rank
    np.testing.assert_allclose(got[3], s, rtol=1e-12)
    check_grads(lambda a, b: linalg.lstsq(a, b)[0], (a, rhs), order=2)
    check_grads(lambda a, b: linalg.lstsq(a, b)[1], (a, rhs), order=2)
    if shape[0] > shape[1]:
        with pytest.raises(ad.TracingError, match="lstsq while staging"):
            ad.stage(lambda a, b: linalg.lstsq(a, b)[0], a, rhs)
    else:
        np.testing.assert_allclose(
            _reload(ad.stage(lambda a, b: linalg.lstsq(a, b)[0], a, rhs))(a, rhs), x,
            rtol=1e-10)


def test_plain_arrays_get_scipys_own_results():
    assert linalg.lu_factor(A)[1].dtype == sl.lu_factor(A)[1].dtype
    np.testing.assert_array_equal(linalg.solve(A, B), sl.solve(A, B))
    np.testing.assert_array_equal(linalg.expm(A), sl.expm(A))

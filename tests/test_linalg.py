"""numpy.linalg on traced arrays: all 31 public functions against NumPy, with derivatives.

Each row calls one function on real inputs; the traced result must equal NumPy's and
``check_grads`` (order 2, forward and reverse) must pass. Decompositions with a gauge freedom
(eigenvector phases, the extra columns of complete factors) are checked through gauge-invariant
functions of their outputs.
"""

import math

import numpy as np
import pytest

import advect as ad
from advect._compat import NUMPY_VERSION
from advect.testing import check_grads

LA = np.linalg


def _rng(seed):
    return np.random.default_rng(seed)


def general(*shape, seed=0, complex_=False):
    a = _rng(seed).standard_normal(shape)
    if complex_:
        a = a + 1j * _rng(seed + 1).standard_normal(shape)
    return a + shape[-1] * np.eye(shape[-1]) if shape[-1] == shape[-2] else a


def spd(*shape, seed=2, complex_=False):
    a = _rng(seed).standard_normal(shape)
    if complex_:
        a = a + 1j * _rng(seed + 1).standard_normal(shape)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + shape[-1] * np.eye(shape[-1])


def rect(*shape, seed=4, complex_=False):
    a = _rng(seed).standard_normal(shape)
    return a + 1j * _rng(seed + 1).standard_normal(shape) if complex_ else a


def vec(*shape, seed=6):
    return _rng(seed).standard_normal(shape)


def distinct(*shape, seed=7):
    n = math.prod(shape)
    return (_rng(seed).permutation(n).reshape(shape) - n / 2 + 0.25) * 0.3


# gauge-invariant views of decompositions: sums of weighted projectors
def _weights(n):
    return np.arange(1.0, n + 1)


def eigh_invariant(r):
    w, v = r
    return w, (v * _weights(v.shape[-1])) @ np.conj(np.swapaxes(v, -1, -2))


def eig_invariant(r):
    w, v = r
    return w, np.abs(v) ** 2, (v * _weights(v.shape[-1])) @ np.linalg.inv(v)


def _projectors(q, k):
    """Distinct weights on the first ``k`` columns, one shared weight on the rest."""
    w = np.minimum(_weights(q.shape[-1]), k + 1)
    return (q * w) @ np.conj(np.swapaxes(q, -1, -2))


def svd_invariant(r):
    u, s, vh = r
    k = s.shape[-1]
    return (s, (u[..., :k] * _weights(k)) @ vh[..., :k, :], _projectors(u, k),
            _projectors(np.conj(np.swapaxes(vh, -1, -2)), k))


def qr_invariant(r):
    q, rr = r
    return _projectors(q, rr.shape[-1]), q[..., :, : rr.shape[-1]], rr


def lstsq_parts(r):
    x, residuals, rank, s = r
    return x, residuals, s


class Row:
    def __init__(self, fn, *args, post=None, diff=True, name=None, **kwargs):
        self.fn, self.args, self.kwargs = fn, args, kwargs
        self.post, self.diff = post, diff
        self.name = name or fn.__name__

    def call(self, *xs):
        out = self.fn(*xs, **self.kwargs)
        return self.post(out) if self.post else out


ROWS = [
    Row(LA.inv, general(3, 3)),
    Row(LA.inv, general(2, 3, 3, complex_=True), name="inv_batch_complex"),
    Row(LA.solve, general(3, 3), vec(3), name="solve_vector"),
    Row(LA.solve, general(2, 3, 3), rect(2, 3, 2), name="solve_batch"),
    Row(LA.det, general(3, 3)),
    Row(LA.det, general(2, 3, 3, complex_=True), name="det_batch_complex"),
    Row(LA.slogdet, rect(3, 3)),
    Row(LA.slogdet, general(3, 3, complex_=True), name="slogdet_complex"),
    Row(LA.cholesky, spd(3, 3)),
    Row(LA.cholesky, spd(3, 3, complex_=True), upper=True, name="cholesky_upper_complex"),
    Row(LA.cholesky, rect(3, 3, seed=9) + 2 * spd(3, 3), name="cholesky_reads_lower_triangle"),
    Row(LA.qr, rect(4, 3), name="qr_reduced"),
    Row(LA.qr, rect(4, 2), mode="complete", post=qr_invariant, name="qr_complete"),
    Row(LA.qr, rect(3, 4, complex_=True), name="qr_wide_complex"),
    Row(LA.qr, rect(2, 4, 3), mode="r", name="qr_r_batch"),
    Row(LA.svd, rect(4, 3), full_matrices=False, post=svd_invariant, name="svd_reduced"),
    Row(LA.svd, rect(4, 2), post=svd_invariant, name="svd_full_tall"),
    Row(LA.svd, rect(2, 4, complex_=True), post=svd_invariant, name="svd_full_wide_complex"),
    Row(LA.svd, rect(3, 4), compute_uv=False, name="svd_values_only"),
    Row(LA.svd, spd(3, 3) + rect(3, 3, seed=20), hermitian=True, post=svd_invariant,
        name="svd_hermitian_reads_lower_triangle"),
    Row(LA.svdvals, rect(2, 4, 3, complex_=True)),
    Row(LA.eigh, spd(4, 4), post=eigh_invariant),
    Row(LA.eigh, spd(3, 3, complex_=True), post=eigh_invariant, name="eigh_complex"),
    Row(LA.eigh, rect(3, 3, seed=10) + spd(3, 3), UPLO="U", post=eigh_invariant,
        name="eigh_upper_reads_upper_triangle"),
    Row(LA.eigvalsh, spd(2, 3, 3)),
    Row(LA.eigvalsh, spd(3, 3, complex_=True), UPLO="U", name="eigvalsh_upper_complex"),
    Row(LA.eig, rect(4, 4, seed=11), post=eig_invariant, name="eig_complex_pairs"),
    Row(LA.eig, rect(3, 3, complex_=True), post=eig_invariant, name="eig_complex_input"),
    Row(LA.eigvals, rect(4, 4, seed=11)),
    Row(LA.eigh, spd(2, 3, 3, complex_=True), post=eigh_invariant, name="eigh_batch"),
    Row(LA.eig, rect(2, 3, 3, seed=21), post=eig_invariant, name="eig_batch"),
    Row(LA.slogdet, general(2, 3, 3), name="slogdet_batch"),
    Row(LA.svd, rect(2, 4, 2, complex_=True), post=svd_invariant, name="svd_full_batch"),
    Row(LA.qr, rect(2, 4, 2), mode="complete", post=qr_invariant, name="qr_complete_batch"),
    Row(LA.cond, general(2, 3, 3), name="cond_batch"),
    Row(LA.cholesky, spd(2, 3, 3), upper=True, name="cholesky_upper_batch"),
    Row(LA.norm, vec(5), name="norm_vector_default"),
    Row(LA.norm, rect(3, 4), name="norm_frobenius_default"),
    Row(LA.norm, rect(2, 3, 4), axis=(0, 2), keepdims=True, name="norm_fro_axes_keepdims"),
    *[Row(LA.norm, distinct(6), ord=o, name=f"norm_vector_ord_{o}")
      for o in (1, 2, 3, 0.5, -1, math.inf, -math.inf)],
    Row(LA.norm, distinct(6), ord=0, diff=False, name="norm_vector_ord_0"),
    Row(LA.norm, distinct(3, 4), ord=1, axis=1, name="norm_rows_ord_1"),
    *[Row(LA.norm, distinct(3, 4), ord=o, name=f"norm_matrix_ord_{o}")
      for o in ("fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf)],
    Row(LA.norm, distinct(3, 2, 4), ord="nuc", axis=(2, 0), name="norm_nuclear_axes"),
    Row(LA.norm, rect(3, 4, complex_=True), ord=2, name="norm_spectral_complex"),
    Row(LA.vector_norm, rect(2, 3, 4), axis=(0, 2), name="vector_norm_axes"),
    Row(LA.vector_norm, distinct(2, 3), ord=math.inf, keepdims=True,
        name="vector_norm_inf_keepdims"),
    Row(LA.vector_norm, rect(3, 4, complex_=True), ord=3, axis=-1, name="vector_norm_complex"),
    Row(LA.matrix_norm, rect(2, 3, 4), name="matrix_norm_fro_batch"),
    Row(LA.matrix_norm, distinct(2, 3, 3), ord=math.inf, keepdims=True,
        name="matrix_norm_inf_keepdims"),
    Row(LA.matrix_norm, rect(3, 4), ord="nuc", name="matrix_norm_nuclear"),
    Row(LA.lstsq, rect(5, 3), vec(5), post=lstsq_parts, name="lstsq_vector"),
    Row(LA.lstsq, rect(5, 3), rect(5, 2, seed=12), rcond=None, post=lstsq_parts,
        name="lstsq_matrix"),
    Row(LA.pinv, rect(4, 3)),
    Row(LA.pinv, rect(2, 3, 4, complex_=True), rcond=1e-10, name="pinv_batch_complex"),
    Row(LA.pinv, spd(3, 3), hermitian=True, name="pinv_hermitian"),
    Row(LA.matrix_power, general(3, 3), n=3, name="matrix_power_3"),
    Row(LA.matrix_power, general(2, 3, 3), n=-2, name="matrix_power_minus_2"),
    Row(LA.matrix_power, general(3, 3), n=0, diff=False, name="matrix_power_0"),
    Row(lambda a, b, c, d: LA.multi_dot([a, b, c, d]), vec(3), rect(3, 5), rect(5, 2),
        vec(2, seed=13), name="multi_dot"),
    Row(LA.tensorsolve, general(6, 6).reshape(2, 3, 6), rect(2, 3), name="tensorsolve"),
    Row(LA.tensorsolve, general(6, 6).reshape(6, 2, 3), rect(2, 3), axes=(0,),
        name="tensorsolve_axes"),
    Row(LA.tensorinv, general(6, 6).reshape(2, 3, 6), ind=2, name="tensorinv"),
    Row(LA.cond, general(3, 3), name="cond_default"),
    *[Row(LA.cond, general(3, 3), p=o, name=f"cond_p_{o}") for o in ("fro", 1, -2, math.inf)],
    Row(LA.trace, rect(2, 3, 4), name="trace_batch"),
    Row(LA.trace, rect(3, 4), offset=-1, name="trace_offset"),
    Row(LA.vecdot, rect(3, 4, complex_=True), rect(4, seed=14, complex_=True), name="vecdot"),
    Row(LA.vecdot, rect(3, 4), rect(3, 4, seed=14), axis=0, name="vecdot_axis"),
    Row(LA.matrix_rank, rect(4, 3), diff=False),
    Row(LA.matrix_rank, spd(3, 3), hermitian=True, diff=False, name="matrix_rank_hermitian"),
    Row(LA.matrix_rank, rect(2, 4, 3) @ rect(3, 4, seed=15) @ np.diag([1.0, 1, 0, 0]),
        diff=False, name="matrix_rank_deficient_batch"),
    Row(LA.outer, vec(3), vec(4, seed=16)),
    Row(LA.cross, rect(2, 3), rect(3, seed=17), name="cross_broadcast"),
    Row(LA.cross, rect(3, 2), rect(3, 2, seed=17), axis=0, name="cross_axis"),
    Row(LA.diagonal, rect(2, 3, 4), name="diagonal"),
    *[Row(LA.diagonal, rect(3, 4), offset=k, name=f"diagonal_offset_{k}") for k in (-2, 1, 3)],
    Row(LA.matmul, rect(2, 3, 4), rect(4, 2, seed=18), name="matmul"),
    Row(LA.matrix_transpose, rect(2, 3, 4), name="matrix_transpose"),
    Row(LA.tensordot, rect(2, 3, 4), rect(3, 4, 2, seed=19), name="tensordot"),
    Row(LA.tensordot, rect(2, 3, 4), rect(4, 3, seed=19), axes=([1, 2], [1, 0]),
        name="tensordot_axes"),
]


def _traced(fn, args):
    """``fn(*args)`` evaluated on tracers (forward mode with zero tangents)."""
    return ad.jvp(fn, tuple(range(len(args))))(
        *args, tangents=tuple(np.zeros_like(a) for a in args))[0]


def _leaves(tree):
    return ad.pytree.tree_flatten(tree)[0]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.name)
def test_linalg_matches_numpy(row):
    expected = row.call(*row.args)
    got = _traced(row.call, row.args)
    for g, e in zip(_leaves(got), _leaves(expected), strict=True):
        g, e = np.asarray(g), np.asarray(e)
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("row", [r for r in ROWS if r.diff], ids=lambda r: r.name)
def test_linalg_derivatives(row):
    check_grads(row.call, row.args, order=2)


def test_every_public_linalg_function_has_a_row():
    public = {n for n in dir(LA) if not n.startswith("_") and callable(getattr(LA, n))}
    public -= {"LinAlgError", "test"}
    covered = {r.fn.__name__ for r in ROWS} | {"multi_dot"}
    assert len(public) == 31
    assert public <= covered, public - covered


# --- behaviour checked against closed forms ------------------------------------------------------

def test_grad_of_log_determinant_is_inverse_transpose():
    a = spd(4, 4)
    np.testing.assert_allclose(ad.grad(lambda a: LA.slogdet(a).logabsdet)(a),
                               np.linalg.inv(a).T, rtol=1e-10)
    np.testing.assert_allclose(ad.grad(LA.det)(a), np.linalg.det(a) * np.linalg.inv(a).T,
                               rtol=1e-10)


def test_grad_of_eigenvalue_sum_weighted_is_projector():
    a = spd(4, 4)
    w, v = np.linalg.eigh(a)
    # d w_k / dA = v_k v_k^T for the lower triangle the routine reads (symmetrized)
    g = ad.grad(lambda a: LA.eigvalsh(a)[-1])(a)
    p = np.outer(v[:, -1], v[:, -1])
    np.testing.assert_allclose(g, np.tril(2 * p) - np.diag(np.diag(p)), atol=1e-10)


def test_grad_of_nuclear_norm_is_polar_factor():
    a = rect(4, 3)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(ad.grad(lambda a: LA.norm(a, "nuc"))(a), u @ vh, rtol=1e-10)


def test_named_tuple_results():
    a = spd(3, 3)
    assert type(_traced(LA.eigh, (a,))).__name__ == "EighResult"
    assert type(_traced(LA.svd, (a,))).__name__ == "SVDResult"
    assert type(_traced(LA.qr, (a,))).__name__ == "QRResult"
    assert type(_traced(LA.slogdet, (a,))).__name__ == "SlogdetResult"
    assert type(_traced(LA.eig, (a,))).__name__ == "EigResult"
    # a real matrix with real eigenvalues: real results, as NumPy returns
    assert _traced(LA.eig, (a,)).eigenvalues.dtype == np.linalg.eig(a).eigenvalues.dtype


def test_eig_of_real_matrices_is_real_exactly_when_numpy_is():
    rotation = np.array([[0.0, -1.0], [1.0, 0.0]])
    for m in (spd(3, 3), rotation, rect(4, 4, seed=11)):
        want = np.linalg.eig(m)
        got = _traced(LA.eig, (m,))
        assert got.eigenvalues.dtype == want.eigenvalues.dtype
        assert got.eigenvectors.dtype == want.eigenvectors.dtype
        assert _traced(LA.eigvals, (m,)).dtype == np.linalg.eigvals(m).dtype
    if NUMPY_VERSION < (2, 5):  # from NumPy 2.5 on the dtype is always complex: it stages
        with pytest.raises(ad.TracingError, match="astype"):
            ad.stage(LA.eigvals, spd(3, 3))
    z = spd(3, 3).astype(complex)
    np.testing.assert_allclose(np.sort(ad.stage(LA.eigvals, z)(z)), np.sort(LA.eigvals(z)))


def test_lstsq_rank_deficient_has_empty_residuals():
    a = rect(5, 3) @ np.diag([1.0, 1.0, 0.0])
    x, residuals, rank, s = _traced(lambda a: LA.lstsq(a, vec(5)), (a,))
    ex, _, erank, es = LA.lstsq(a, vec(5))
    assert rank == erank == 2 and residuals.shape == (0,)
    np.testing.assert_allclose(x, ex, atol=1e-10)


def test_float32_stays_float32():
    a = spd(3, 3).astype(np.float32)
    for fn in (LA.inv, LA.cholesky, LA.det, LA.pinv, LA.eigvalsh, LA.svdvals):
        assert np.asarray(ad.jvp(fn)(a, tangents=a)[1]).dtype == np.float32


@pytest.mark.parametrize("call,error,match", [
    (lambda a: LA.inv(a[0]), LA.LinAlgError, "two-dimensional"),
    (lambda a: LA.inv(a[:, :2]), LA.LinAlgError, "square"),
    (lambda a: LA.eigh(a, UPLO="X"), ValueError, "UPLO"),
    (lambda a: LA.qr(a, mode="raw"), ad.errors.TracingError, "raw"),
    (lambda a: LA.qr(a, mode="full"), ValueError, "mode"),
    (lambda a: LA.norm(a, ord="bad"), ValueError, "norm order"),
    (lambda a: LA.norm(a[None], ord=1), ValueError, "dimensions"),
    (lambda a: LA.cross(a, a), ValueError, "3-dimensional"),
    (lambda a: LA.outer(a, a), ValueError, "one-dimensional"),
    (lambda a: LA.matrix_power(a, 1.5), TypeError, "integer"),
    (lambda a: LA.tensorinv(a, ind=0), ValueError, "ind"),
])
def test_bad_input_raises_named_errors(call, error, match):
    with pytest.raises(error, match=match):
        _traced(call, (rect(4, 4),))


def test_staged_abstract_rules_validate_shapes():
    from advect import ops
    from advect.dtypes import Aval
    with pytest.raises(ValueError, match="right-hand side"):
        ops.solve.abstract(Aval((3, 3), np.dtype(float)), Aval((4, 1), np.dtype(float)))
    with pytest.raises(TypeError, match="float16"):
        ops.inv.abstract(Aval((3, 3), np.dtype(np.float16)))


def test_grad_of_determinant_at_a_singular_matrix_is_the_cofactor_matrix():
    a = rect(3, 3)
    a[:, 2] = a[:, 0] + a[:, 1]
    cofactors = np.array([[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(a, i, 0), j, 1))
                           for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(ad.grad(LA.det)(a), cofactors, atol=1e-12)
    check_grads(LA.det, (a,), order=2)
    exact = np.array([[1.0, 2.0], [2.0, 4.0]])  # a zero pivot: no inverse at all
    np.testing.assert_allclose(ad.grad(LA.det)(exact), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


def test_hessian_of_determinant_at_the_identity():
    # det = a00 a11 - a01 a10 for 2 x 2: repeated singular values must not break second order
    hessian = ad.hessian(LA.det)(np.eye(2)).reshape(4, 4)
    np.testing.assert_allclose(hessian, np.fliplr(np.diag([1.0, -1.0, -1.0, 1.0])), atol=1e-12)
    check_grads(LA.det, (np.eye(3),), order=2)


def _has_named_tuple(tree):
    return isinstance(tree, tuple) and (type(tree) is not tuple
                                        or any(map(_has_named_tuple, tree)))


def _stageable(row) -> bool:
    """lstsq is dynamic only; so are eig and eigvals of real matrices (NumPy's result dtype
    depends on whether the eigenvalues are real)."""
    if row.fn is LA.lstsq:
        return False
    return row.fn not in (LA.eig, LA.eigvals) or np.iscomplexobj(row.args[0])


@pytest.mark.parametrize("row", [r for r in ROWS if _stageable(r)], ids=lambda r: r.name)
def test_linalg_stages_and_saves(row):
    program = ad.stage(row.call, *row.args)
    for g, e in zip(_leaves(program(*row.args)), _leaves(row.call(*row.args)), strict=True):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-10, atol=1e-10)
    if not _has_named_tuple(row.call(*row.args)):  # saved programs hold plain containers only
        restored = ad.StagedProgram.from_dict(program.to_dict())
        for g, e in zip(_leaves(restored(*row.args)), _leaves(row.call(*row.args))):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-10, atol=1e-10)


def test_lstsq_is_dynamic_only():
    with pytest.raises(ad.errors.TracingError, match="lstsq"):
        ad.stage(lambda a, b: LA.lstsq(a, b)[0], rect(5, 3), vec(5))


@pytest.mark.parametrize("loss", [
    lambda a: np.sum(LA.eigh(a).eigenvalues ** 3),
    lambda a: np.sum(LA.cholesky(a)),
    lambda a: LA.norm(a, "nuc") + LA.slogdet(a).logabsdet,
    lambda a: np.sum(np.abs(np.einsum("ij,jk->ik", LA.inv(a), a.T)) ** 2),
], ids=["eigh", "cholesky", "nuclear_logdet", "einsum_inv"])
def test_staged_gradient_matches_dynamic(loss):
    a = spd(3, 3)
    staged = ad.grad(ad.stage(loss, a))
    np.testing.assert_allclose(staged(a), ad.grad(loss)(a), rtol=1e-10)


def _total(x):
    from advect import ops
    return ops.reduce_sum(x, axes=tuple(range(len(x.shape))), keepdims=False)


@pytest.mark.parametrize("name", ["cholesky", "eigh_upper", "inv", "solve", "triangular_solve",
                                  "det", "slogdet", "svd", "svdvals", "qr", "pinv", "einsum"])
def test_linalg_ops_run_on_another_provider(name):
    xp = pytest.importorskip("array_api_strict")
    from advect import ops
    losses = {
        "cholesky": lambda a: _total(ops.cholesky(a)),
        "eigh_upper": lambda a: _total(ops.multiply(ops.eigh(a, lower=False)[0], 2.0)),
        "inv": lambda a: _total(ops.inv(a)),
        "solve": lambda a: _total(ops.solve(a, a)),
        "triangular_solve": lambda a: _total(ops.triangular_solve(a, a, lower=True)),
        "det": ops.det,
        "slogdet": lambda a: ops.slogdet(a)[1],
        "svd": lambda a: _total(ops.svd(a, full_matrices=False)[1]),
        "svdvals": lambda a: _total(ops.svdvals(a)),
        "qr": lambda a: _total(ops.qr(a, complete=False)[1]),
        "pinv": lambda a: _total(ops.pinv(a, rcond=None, hermitian=False)),
        "einsum": lambda a: ops.einsum(a, a, subscripts="ij,ji->"),
    }
    a = spd(3, 3) + 0.3 * rect(3, 3)
    grad = ad.grad(losses[name])(xp.asarray(a))
    assert type(grad).__module__.startswith("array_api_strict")
    np.testing.assert_allclose(np.asarray(grad), ad.grad(losses[name])(a), rtol=1e-10,
                               atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("xs,ys,spec", [((5,), (5,), "k,k->"), ((5,), (5, 3), "k,kz->z"),
                                        ((4, 5), (5,), "ik,k->i"), ((2, 4, 5), (5,), "bik,k->bi"),
                                        ((5,), (2, 5, 3), "k,bkz->bz")])
def test_matmul_transposes_of_vectors_agree_with_einsum_and_check_grads(xs, ys, spec, dtype):
    """vector @ vector and vector @ matrix have one-product transposes (a scaled vector, a
    matrix-vector product): they must give what einsum's general transpose gives, in both
    modes and to second order, dynamic and staged."""
    rng = _rng(3)
    x, y = (rng.standard_normal(s).astype(dtype) for s in (xs, ys))
    if np.dtype(dtype).kind == "c":
        x, y = x + 1j * rng.standard_normal(xs), y + 1j * rng.standard_normal(ys)

    def loss(z):
        return np.sum(np.abs(z) ** 2) + np.sum(np.tanh(z.real))

    def f(x, y):
        return loss(x @ y)

    def reference(x, y):
        return loss(np.einsum(spec, x, y))

    tol = 1e-4 if dtype is np.float32 else 1e-10
    ours = ad.grad(f, (0, 1))(x, y)
    staged = ad.grad(ad.stage(f, x, y), (0, 1))(x, y)
    for a, b, c in zip(ours, ad.grad(reference, (0, 1))(x, y), staged):
        assert a.dtype == b.dtype == c.dtype
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
        np.testing.assert_allclose(c, b, rtol=tol, atol=tol)
    if dtype is np.float64:
        check_grads(f, (x, y), order=2)

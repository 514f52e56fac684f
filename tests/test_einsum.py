"""np.einsum on traced arrays: every subscript form against NumPy, derivatives to second order."""

import numpy as np
import pytest

import advect as ad
from advect import ops
from advect.dtypes import Aval
from advect.numpy._linalg import einsum_subscripts
from advect.testing import check_grads


def _arrays(*shapes, seed=0, complex_=False):
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(s) for s in shapes]
    if complex_:
        out = [a + 1j * rng.standard_normal(a.shape) for a in out]
    return out


# (subscripts, operand shapes): string forms, implicit and explicit, with and without ellipsis
STRING_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 2)]),
    ("ij,jk", [(3, 4), (4, 2)]),                   # implicit output
    ("ba", [(3, 2)]),                              # implicit transpose
    ("ii", [(3, 3)]),                              # implicit trace
    ("ii->i", [(3, 3)]),                           # diagonal
    ("ii->", [(3, 3)]),
    ("ij->", [(3, 4)]),
    ("ij->j", [(3, 4)]),
    ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]),
    ("ij,k->k", [(3, 2), (4,)]),                   # a letter summed only inside one operand
    ("iij,j->ij", [(3, 3, 2), (2,)]),              # a repeated letter beside free ones
    ("iji->j", [(2, 3, 2)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]),   # a chain (optimized contraction path)
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),  # ellipsis broadcasting over batch
    ("...i,...i", [(2, 1, 3), (4, 3)]),           # implicit with ellipsis, size-1 broadcast
    ("i...->...", [(3, 2, 2)]),
    ("ij,ij->ij", [(3, 1), (3, 4)]),               # a size-1 axis broadcast under a letter
    ("Ab,bC->AC", [(2, 3), (3, 2)]),               # upper-case labels
    (" i j , j k -> i k ", [(2, 3), (3, 2)]),      # spaces
]


@pytest.mark.parametrize("subscripts,shapes", STRING_CASES, ids=[c[0] for c in STRING_CASES])
def test_einsum_string_forms_match_numpy_and_differentiate(subscripts, shapes):
    arrays = _arrays(*shapes)
    expected = np.einsum(subscripts, *arrays)
    got = ad.jvp(lambda *xs: np.einsum(subscripts, *xs), tuple(range(len(arrays))))(
        *arrays, tangents=tuple(np.zeros_like(a) for a in arrays))[0]
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    check_grads(lambda *xs: np.einsum(subscripts, *xs), arrays, order=2)


def test_einsum_complex_operands():
    x, y = _arrays((3, 4), (4, 2), complex_=True)
    check_grads(lambda x, y: np.einsum("ij,jk->ik", x, y), (x, y), order=2)
    check_grads(lambda x: np.einsum("ii->i", x), (_arrays((3, 3), complex_=True)[0],), order=2)


SUBLIST_CASES = [
    ([0, 1], [1, 2], [0, 2]),
    ([0, 1], [1, 2]),                       # implicit output
    ([Ellipsis, 0, 1], [Ellipsis, 1, 2], [Ellipsis, 0, 2]),
    ([0, 0],),
]


@pytest.mark.parametrize("sublists", SUBLIST_CASES, ids=str)
def test_einsum_interleaved_sublist_form(sublists):
    n_in = 2 if len(sublists) >= 2 else 1
    shapes = {1: [(3, 3)], 2: [(2, 3, 4), (4, 2)] if Ellipsis in sublists[0] else [(3, 4), (4, 2)]}
    arrays = _arrays(*shapes[n_in])

    def call(*xs):
        args = []
        for x, s in zip(xs, sublists):
            args += [x, s]
        if len(sublists) > n_in:
            args.append(sublists[-1])
        return np.einsum(*args)

    np.testing.assert_allclose(ad.jvp(call, tuple(range(n_in)))(
        *arrays, tangents=tuple(np.ones_like(a) for a in arrays))[0], call(*arrays), rtol=1e-12)
    check_grads(call, arrays, order=2)


def test_einsum_accepts_optimize_and_dtype():
    x, y, z = _arrays((2, 3), (3, 4), (4, 2))
    for optimize in (False, True, "greedy", "optimal"):
        f = lambda x, y, z, o=optimize: np.einsum("ij,jk,kl->il", x, y, z, optimize=o)
        np.testing.assert_allclose(ad.jvp(f, (0, 1, 2))(x, y, z, tangents=(x, y, z))[0],
                                   f(x, y, z), rtol=1e-12)
    f = lambda x: np.einsum("ij->i", x, dtype=np.float32, casting="same_kind")
    out = ad.jvp(f)(x, tangents=x)[0]
    assert out.dtype == f(x).dtype == np.float32
    with pytest.raises(TypeError, match="casting"):  # NumPy's default casting="safe" refuses
        ad.jvp(lambda x: np.einsum("ij->i", x, dtype=np.float32))(x, tangents=x)


def test_einsum_grad_of_quadratic_form_matches_closed_form():
    a, v = _arrays((3, 3), (3,))
    grad = ad.grad(lambda v: np.einsum("i,ij,j->", v, a, v))(v)
    np.testing.assert_allclose(grad, (a + a.T) @ v, rtol=1e-12)


def test_einsum_normalizes_subscripts():
    assert einsum_subscripts("ij,jk", 2) == "ij,jk->ik"
    assert einsum_subscripts("...i,...i", 2) == "...i,...i->..."
    assert einsum_subscripts("ii", 1) == "ii->"


@pytest.mark.parametrize("subscripts,shapes,error", [
    ("ij,jk->ik", [(3, 4), (5, 2)], "sizes"),
    ("ij,jk->iz", [(3, 4), (4, 2)], "appear in the inputs"),
    ("ij,jk->ii", [(3, 4), (4, 2)], "distinct"),
    ("ij->i", [(3, 4), (4, 2)], "operand"),
    ("...i->i", [(2, 3)], "'...'"),
    ("ijk->i", [(2, 3)], "dimensions"),
])
def test_einsum_abstract_rule_names_bad_subscripts(subscripts, shapes, error):
    avals = [Aval(s, np.dtype(np.float64)) for s in shapes]
    with pytest.raises(ValueError, match=error):
        ops.einsum.abstract(*avals, subscripts=einsum_subscripts(subscripts, len(avals))
                            if subscripts.count(",") + 1 == len(avals) else subscripts)


def test_einsum_frontend_rejects_bad_subscripts():
    x = np.ones((2, 3))
    with pytest.raises(ValueError, match="invalid subscripts"):
        ad.grad(lambda x: np.einsum("i$j", x))(x)
    with pytest.raises(ValueError, match="2 operands"):
        ad.grad(lambda x: np.sum(np.einsum("ij->i", x, x)))(x)


def test_einsum_out_writes_into_an_owned_traced_array():
    a, b = _arrays((3, 4), (4, 2))

    def f(a):
        out = np.zeros_like(a, shape=(3, 2))
        np.einsum("ij,jk->ik", a, b, out=out)
        return np.sum(out ** 2)
    np.testing.assert_allclose(ad.grad(f)(a), 2 * (a @ b) @ b.T, rtol=1e-12)


def test_einsum_path_answers_from_shapes_and_feeds_optimize():
    a, b, c = _arrays((2, 3), (3, 4), (4, 2))
    expected = np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")[0]

    def f(a):
        path, _ = np.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")
        assert path == expected
        return np.sum(np.einsum("ij,jk,kl->il", a, b, c, optimize=path))
    np.testing.assert_allclose(ad.grad(f)(a), np.ones((2, 2)) @ (b @ c).T, rtol=1e-12)

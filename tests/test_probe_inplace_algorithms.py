"""Classic numerical algorithms written with in-place NumPy updates (LU with and without
pivoting, substitution loops, Thomas, Gram-Schmidt, Cholesky, DP tables, IIR recurrences,
stencils with double buffers, sort networks, histograms, flat/diagonal/strided views), checked
against central differences, the other AD mode, eager NumPy (staged values, dtypes, types),
the caller's inputs and JAX."""

import numpy as np
import pytest

pytest.importorskip("scipy")

import advect as ad  # noqa: E402
import advect.scipy.special as special  # noqa: E402

RNG = np.random.default_rng(20261202)
N = 5
A_SPD = RNG.standard_normal((N, N)) + N * np.eye(N)
A_GEN = RNG.standard_normal((N, N))
B_VEC = RNG.standard_normal(N)
W_MAT = RNG.standard_normal((N, N))
X7 = RNG.standard_normal(7)
W7 = RNG.standard_normal(7)
A4 = RNG.standard_normal((4, 4))
M4 = np.arange(16.0).reshape(4, 4)


def central_diff(f, args, k, eps=1e-6):
    x = np.asarray(args[k], dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[k], minus[k] = x + e, x - e
        g[i] = (f(*plus) - f(*minus)) / (2 * eps)
    return g


def check_program(f, *args, stage=True, float32=True):
    """grad vs central differences, jvp vs grad, inputs untouched, staged vs eager (value,
    dtype, type) in float64 and float32, and the staged gradient."""
    argnums = tuple(range(len(args)))
    saved = [a.copy() for a in args]
    expected = f(*[a.copy() for a in args])
    grads = ad.grad(f, argnums=argnums)(*args)
    for k in argnums:
        np.testing.assert_allclose(grads[k], central_diff(f, args, k), rtol=1e-6, atol=1e-6)
    tangents = tuple(RNG.standard_normal(a.shape) for a in args)
    value, tangent = ad.jvp(f, argnums=argnums)(*args, tangents=tangents)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(tangent, sum(np.sum(g * t) for g, t in zip(grads, tangents)),
                               rtol=1e-8, atol=1e-10)
    singles = [a.astype(np.float32) for a in args]
    if float32:
        assert all(g.dtype == np.float32 for g in ad.grad(f, argnums=argnums)(*singles))
    if stage:
        for inputs in ([args, singles] if float32 else [args]):
            eager = f(*[a.copy() for a in inputs])
            staged = ad.stage(f, *inputs)(*inputs)
            assert type(staged) is type(eager)
            assert np.asarray(staged).dtype == np.asarray(eager).dtype
            rtol = 1e-12 if inputs is args else 1e-5
            np.testing.assert_allclose(staged, eager, rtol=rtol)
        staged_grads = ad.grad(ad.stage(f, *args), argnums=argnums)(*args)
        for g, s in zip(grads, staged_grads):
            np.testing.assert_allclose(s, g, rtol=1e-10, atol=1e-12)
    for a, s in zip(args, saved):
        np.testing.assert_array_equal(a, s)


# --- dense factorizations and substitution ----------------------------------------------------

def lu_no_pivot(A):
    A = A.copy()
    n = A.shape[0]
    for k in range(n - 1):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


def gauss_solve(A, b):
    A, b = A.copy(), b.copy()
    n = b.shape[0]
    for i in range(n - 1):
        lead = A[i + 1:, i] / A[i, i]
        A[i + 1:] -= np.outer(lead, A[i])
        b[i + 1:] -= lead * b[i]
    x = np.zeros_like(b)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


def lu_partial_pivot(A):
    """Row swaps with a traced pivot index: stages too (no Python int of the data)."""
    A = A.copy()
    n = A.shape[0]
    perm = np.arange(n, like=A)
    for i in range(n - 1):
        p = i + np.argmax(np.abs(A[i:, i]))
        A[[i, p]] = A[[p, i]]
        perm[[i, p]] = perm[[p, i]]
        A[i + 1:, i] /= A[i, i]
        A[i + 1:, i + 1:] -= np.outer(A[i + 1:, i], A[i, i + 1:])
    return A, perm


def pivoted_solve(A, b):
    LU, perm = lu_partial_pivot(A)
    n = b.shape[0]
    x = b[perm]
    for i in range(n):
        x[i] -= LU[i, :i] @ x[:i]
    for i in range(n - 1, -1, -1):
        x[i] = (x[i] - LU[i, i + 1:] @ x[i + 1:]) / LU[i, i]
    return x


def forward_substitution(L, b):
    x = np.empty_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


def cholesky_loops(A):
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        L[j, j] = np.sqrt(A[j, j] - L[j, :j] @ L[j, :j])
        for i in range(j + 1, n):
            L[i, j] = (A[i, j] - L[i, :j] @ L[j, :j]) / L[j, j]
    return L


def cholesky_outer(A):
    A = A.copy()
    for j in range(A.shape[0]):
        A[j, j] = np.sqrt(A[j, j])
        A[j + 1:, j] /= A[j, j]
        A[j + 1:, j + 1:] -= np.outer(A[j + 1:, j], A[j + 1:, j])
    return np.tril(A)


def classical_gram_schmidt(A):
    n = A.shape[1]
    Q = np.zeros_like(A)
    R = np.zeros((n, n), like=A, dtype=A.dtype)
    for j in range(n):
        v = A[:, j].copy()
        for i in range(j):
            R[i, j] = Q[:, i] @ A[:, j]
            v -= R[i, j] * Q[:, i]
        R[j, j] = np.linalg.norm(v)
        Q[:, j] = v / R[j, j]
    return Q, R


def modified_gram_schmidt(A):
    n = A.shape[1]
    V = A.copy()
    Q = np.empty_like(A)
    R = np.zeros_like(A, shape=(n, n))
    for i in range(n):
        R[i, i] = np.linalg.norm(V[:, i])
        Q[:, i] = V[:, i] / R[i, i]
        for j in range(i + 1, n):
            R[i, j] = Q[:, i] @ V[:, j]
            V[:, j] -= R[i, j] * Q[:, i]
    return Q, R


def thomas(a, b, c, d):
    n = d.shape[0]
    cp, dp = np.zeros_like(d / b), np.zeros_like(d / b)
    cp[0], dp[0] = c[0] / b[0], d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        if i < n - 1:
            cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.empty_like(dp)
    x[-1] = dp[-1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


S_SPD = A_SPD @ A_SPD.T
TALL = RNG.standard_normal((6, 4))
W_TALL, W_R = RNG.standard_normal((6, 4)), RNG.standard_normal((4, 4))
TRI = (RNG.standard_normal(N), 4 + RNG.random(N), RNG.standard_normal(N), RNG.standard_normal(N))

FACTORIZATIONS = [
    pytest.param(lambda a: np.sum(lu_no_pivot(a) * W_MAT), (A_SPD,), id="lu-no-pivot"),
    pytest.param(lambda a, b: np.sum(gauss_solve(a, b) ** 2), (A_SPD, B_VEC), id="gauss-solve"),
    pytest.param(lambda a: np.sum(lu_partial_pivot(a)[0] * W_MAT), (A_GEN,), id="lu-pivot"),
    pytest.param(lambda a, b: np.sum(pivoted_solve(a, b) * np.arange(1, N + 1)),
                 (A_GEN, B_VEC), id="pivoted-solve"),
    pytest.param(lambda L, b: np.sum(forward_substitution(L, b) ** 3), (np.tril(A_SPD), B_VEC),
                 id="forward-substitution"),
    pytest.param(lambda a: np.sum(cholesky_loops(a) * W_MAT), (S_SPD,), id="cholesky-loops"),
    pytest.param(lambda a: 2 * np.sum(np.log(np.diagonal(cholesky_outer(a)))), (S_SPD,),
                 id="cholesky-logdet"),
    pytest.param(lambda a: sum(np.sum(m * w) for m, w in
                               zip(classical_gram_schmidt(a), (W_TALL, W_R))), (TALL,), id="cgs"),
    pytest.param(lambda a: sum(np.sum(m * w) for m, w in
                               zip(modified_gram_schmidt(a), (W_TALL, W_R))), (TALL,), id="mgs"),
    pytest.param(lambda a, b, c, d: np.sum(thomas(a, b, c, d) ** 2), TRI, id="thomas"),
]


@pytest.mark.parametrize("f, args", FACTORIZATIONS)
def test_factorizations_and_solves(f, args):
    check_program(f, *args)


def test_algorithms_reproduce_numpy_linear_algebra():
    np.testing.assert_allclose(gauss_solve(A_SPD, B_VEC), np.linalg.solve(A_SPD, B_VEC))
    np.testing.assert_allclose(pivoted_solve(A_GEN, B_VEC), np.linalg.solve(A_GEN, B_VEC))
    np.testing.assert_allclose(cholesky_outer(S_SPD), np.linalg.cholesky(S_SPD), atol=1e-12)
    Q, R = modified_gram_schmidt(TALL)
    np.testing.assert_allclose(Q @ R, TALL, atol=1e-12)
    a, b, c, d = TRI
    T = np.diag(b) + np.diag(a[1:], -1) + np.diag(c[:-1], 1)
    np.testing.assert_allclose(ad.jacobian(lambda d: thomas(a, b, c, d))(d), np.linalg.inv(T),
                               rtol=1e-10, atol=1e-12)


def test_staged_partial_pivoting_follows_the_data_of_each_call():
    program = ad.stage(lu_partial_pivot, A_GEN)
    for A in (A_GEN, RNG.standard_normal((N, N))):
        LU, perm = program(A)
        expected_lu, expected_perm = lu_partial_pivot(A.copy())
        np.testing.assert_allclose(LU, expected_lu, rtol=1e-12)
        np.testing.assert_array_equal(perm, expected_perm)
        assert perm.dtype == expected_perm.dtype


@pytest.mark.parametrize("key", [
    lambda p: [p, 0], lambda p: [[p, 0]], lambda p: ([p, 1], [0, p]),
    lambda p: (slice(None), [p, 0]), lambda p: [p, True],
], ids=["list", "nested", "two-lists", "slice-list", "with-bool"])
def test_index_lists_holding_traced_ints(key):
    def f(a):
        p = np.argmax(a[:, 0])
        b = a * 1.0
        b[key(p)] *= 2.0
        return np.sum(a[key(p)] ** 2) + np.sum(b * M4)

    check_program(f, A4)


def test_index_list_of_traced_floats_is_numpys_index_error():
    with pytest.raises(IndexError, match="integer"):
        ad.grad(lambda a: np.sum(a[[np.argmax(a[:, 0]), 1.5]]))(A4)


# --- dynamic programming ----------------------------------------------------------------------

def dtw(x, y):
    n, m = x.shape[0], y.shape[0]
    C = (x[:, None] - y[None, :]) ** 2
    D = np.full((n + 1, m + 1), np.inf, like=x)
    D[0, 0] = 0.0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            D[i, j] = C[i - 1, j - 1] + np.minimum(np.minimum(D[i - 1, j], D[i, j - 1]),
                                                   D[i - 1, j - 1])
    return D[n, m]


def soft_dtw(x, y, gamma=0.5):
    n, m = x.shape[0], y.shape[0]
    C = (x[:, None] - y[None, :]) ** 2
    R = np.full((n + 1, m + 1), np.inf, dtype=x.dtype, like=x)
    R[0, 0] = 0
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            r = -np.array([R[i - 1, j], R[i, j - 1], R[i - 1, j - 1]], like=x) / gamma
            R[i, j] = C[i - 1, j - 1] - gamma * special.logsumexp(r)
    return R[n, m]


SERIES = (RNG.standard_normal(5), RNG.standard_normal(4))


@pytest.mark.parametrize("f", [dtw, soft_dtw], ids=["dtw", "soft-dtw"])
def test_dynamic_programming_tables(f):
    check_program(f, *SERIES)


# --- recurrences and stencils -----------------------------------------------------------------

def ema(x, a):
    y = np.empty_like(x)
    y[0] = x[0]
    for t in range(1, x.shape[0]):
        y[t] = a * y[t - 1] + x[t]
    return np.sum(y ** 2)


def biquad(x, b, a):
    y = np.zeros_like(x)
    for t in range(x.shape[0]):
        acc = b[0] * x[t]
        if t >= 1:
            acc = acc + b[1] * x[t - 1] - a[0] * y[t - 1]
        if t >= 2:
            acc = acc + b[2] * x[t - 2] - a[1] * y[t - 2]
        y[t] = acc
    return np.sum(y * np.arange(x.shape[0]))


def anticausal_through_reversed_view(x, a):
    y = x.copy()
    reverse = y[::-1]
    for t in range(1, reverse.shape[0]):
        reverse[t] += a * reverse[t - 1]
    return np.sum(np.sin(y) * np.arange(y.shape[0]))


def heat_swap_buffers(u, k):
    u = u.copy()
    tmp = np.empty_like(u)
    for _ in range(5):
        tmp[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        tmp[0], tmp[-1] = u[0], u[-1]
        u, tmp = tmp, u
    return np.sum(u ** 2)


def heat_out_and_copyto(u, k):
    u = u.copy()
    tmp = np.zeros_like(u)
    for _ in range(5):
        np.subtract(u[2:], 2 * u[1:-1], out=tmp[1:-1])
        tmp[1:-1] += u[:-2]
        tmp[1:-1] *= k
        tmp[1:-1] += u[1:-1]
        tmp[0], tmp[-1] = u[0], u[-1]
        np.copyto(u, tmp)
    return np.sum(u ** 3)


def heat_ellipsis_assign(u, k):
    u = u.copy()
    for _ in range(5):
        tmp = u.copy()
        tmp[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        u[...] = tmp
    return np.sum(u ** 3)


def heat_2d(g, k):
    u = np.pad(g, 1)
    new = u.copy()
    for _ in range(3):
        np.add(u[:-2, 1:-1], u[2:, 1:-1], out=new[1:-1, 1:-1])
        new[1:-1, 1:-1] += u[1:-1, :-2] + u[1:-1, 2:]
        new[1:-1, 1:-1] -= 4 * u[1:-1, 1:-1]
        np.multiply(new[1:-1, 1:-1], k, out=new[1:-1, 1:-1])
        new[1:-1, 1:-1] += u[1:-1, 1:-1]
        u, new = new, u
    return np.sum(np.cos(u))


def periodic_automaton(g):
    u = np.empty((g.shape[0] + 2, g.shape[1] + 2), like=g, dtype=g.dtype)
    u[1:-1, 1:-1] = g
    for _ in range(3):
        u[0, 1:-1] = u[-2, 1:-1]
        u[-1, 1:-1] = u[1, 1:-1]
        u[:, 0] = u[:, -2]
        u[:, -1] = u[:, 1]
        around = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
        u[1:-1, 1:-1] = np.tanh(around - 2 * u[1:-1, 1:-1])
    return np.sum(u[1:-1, 1:-1] ** 2)


U10, K = RNG.random(10), np.array(0.2)
GRID = RNG.random((6, 7))


@pytest.mark.parametrize("f, args", [
    pytest.param(ema, (X7, np.array(0.7)), id="ema"),
    pytest.param(biquad, (X7, np.array([0.2, 0.3, 0.1]), np.array([-0.5, 0.2])), id="biquad"),
    pytest.param(anticausal_through_reversed_view, (X7, np.array(0.7)), id="reversed-view"),
    pytest.param(heat_swap_buffers, (U10, K), id="heat-swap"),
    pytest.param(heat_out_and_copyto, (U10, K), id="heat-out-copyto"),
    pytest.param(heat_ellipsis_assign, (U10, K), id="heat-ellipsis"),
    pytest.param(heat_2d, (GRID, np.array(0.1)), id="heat-2d"),
    pytest.param(periodic_automaton, (GRID,), id="automaton"),
])
def test_recurrences_and_stencils(f, args):
    check_program(f, *args)


def test_recurrence_with_python_float_coefficient_keeps_float32():
    def filt(x, a):
        y = x.copy()
        for t in range(1, y.shape[0]):
            y[t] += a * y[t - 1]
        return y

    x = X7.astype(np.float32)
    program = ad.stage(filt, x, 0.7)
    out = program(x, 0.3)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, filt(x.copy(), 0.3), rtol=1e-6)
    g = ad.grad(lambda x, a: np.sum(filt(x, a)), argnums=(0, 1))(x, 0.7)[1]
    assert type(g) is float
    staged = ad.grad(ad.stage(lambda x, a: np.sum(filt(x, a)), x, 0.7), argnums=1)(x, 0.7)
    np.testing.assert_allclose(staged, g, rtol=1e-6)


# --- sort networks, histograms, flat and strided views ----------------------------------------

def bubble_sort(x):
    y = x.copy()
    n = y.shape[0]
    for i in range(n):
        for j in range(n - 1 - i):
            lo, hi = np.minimum(y[j], y[j + 1]), np.maximum(y[j], y[j + 1])
            y[j], y[j + 1] = lo, hi
    return y


def odd_even_sort(x):
    y = x.copy()
    n = y.shape[0]
    for r in range(n):
        s = r % 2
        a, b = y[s:n - 1:2].copy(), y[s + 1:n:2].copy()
        y[s:n - 1:2] = np.minimum(a, b)
        y[s + 1:n:2] = np.maximum(a, b)
    return y


BINS = np.array([0, -1, 2, 2, -4, 0, 3])


def histograms(w):
    h = np.zeros(4, like=w, dtype=w.dtype)
    np.add.at(h, BINS, w)
    top = np.full(4, -10.0, like=w, dtype=w.dtype)
    np.maximum.at(top, BINS, w)
    g = np.zeros((4, 5), like=w, dtype=w.dtype)
    np.add.at(g, (slice(None), [0, 4, 4, 1]), h[:, None] * w[:4])
    return np.sum(h ** 2) + np.sum(top * np.arange(1, 5)) + np.sum(np.sin(g))


def flat_writes(a):
    B = a.copy()
    B.flat[::B.shape[1] + 1] = 1.0 + a.diagonal() ** 2
    B.flat[[1, 5]] *= 2
    B.flat[5] += a[0, 0] ** 2
    B.flat[2:6] *= 2  # NumPy reads B.flat[2:6] as a copy, multiplies it, writes it back
    return np.sum(B * B.T)


def diagonal_writes(a):
    B = a.copy()
    B[np.diag_indices(4)] += 2.0
    np.fill_diagonal(B, np.exp(a.diagonal()))
    np.fill_diagonal(B[:, ::-1], a[0] * 2)
    np.fill_diagonal(B[1:, :3], -1.0)
    return np.sum(B * M4)


def put_along(a):
    B = a.copy()
    np.put_along_axis(B, np.argsort(a, axis=1)[:, :1], 0.0, axis=1)
    np.put_along_axis(B[::-1], np.array([[1], [2], [3], [0]]), a[:, :1] ** 2, axis=1)
    return np.sum(B ** 2 * M4)


def strided_writes(x):
    y = np.zeros_like(x)
    y[::-1] = np.cumsum(x)
    z = y[::-2]
    z *= 3
    y[-1:0:-1] += x[:-1]
    y[1:] += y[:-1]  # overlapping operands: NumPy reads the old values
    y *= y[::-1]
    return np.sum(y * W7)


def row_swaps(a):
    A = a.copy()
    A[[0, 2]] = A[[2, 0]]
    A[:, [1, 3]] = A[:, [3, 1]]
    A[1], A[3] = A[3].copy(), A[1].copy()
    for i in range(A.shape[0]):
        row = A[i]
        row *= 2
    return np.sum(A * M4 * a)


@pytest.mark.parametrize("f, args", [
    pytest.param(lambda x: np.sum(bubble_sort(x) * W7), (X7,), id="bubble"),
    pytest.param(lambda x: np.sum(odd_even_sort(x) * W7), (X7,), id="odd-even"),
    pytest.param(histograms, (X7,), id="histograms"),
    pytest.param(flat_writes, (A4,), id="flat"),
    pytest.param(diagonal_writes, (A4,), id="diagonal"),
    pytest.param(put_along, (A4,), id="put-along-axis"),
    pytest.param(strided_writes, (X7,), id="strided"),
    pytest.param(row_swaps, (A4,), id="row-swaps"),
])
def test_networks_histograms_and_views(f, args):
    check_program(f, *args)


def test_sort_networks_sort():
    np.testing.assert_array_equal(bubble_sort(X7), np.sort(X7))
    np.testing.assert_array_equal(odd_even_sort(X7), np.sort(X7))


def test_flat_slice_is_a_copy_as_in_numpy():
    def f(a):
        B = a.copy()
        piece = B.flat[2:6]
        piece[0] = 100.0  # writes the copy only
        return np.sum(B) + np.sum(piece)

    expected = f(A4.copy())
    assert ad.jvp(f)(A4, tangents=A4)[0] == pytest.approx(expected)
    assert ad.stage(f, A4)(A4) == pytest.approx(expected)
    np.testing.assert_array_equal(ad.grad(f)(A4), np.where(np.isin(np.arange(16), [2]), 1.0,
                                                           1.0 + np.isin(np.arange(16), [3, 4, 5]))
                                  .reshape(4, 4))


@pytest.mark.parametrize("source", [lambda B: B, lambda B: B[0]], ids=["whole", "row"])
def test_broadcast_to_its_own_shape_is_read_only(source):
    def f(a):
        B = a * 1.0
        view = source(B)
        np.broadcast_to(view, view.shape)[...] *= 2.0
        return np.sum(B)

    with pytest.raises(ValueError, match="read-only"):
        f(A4.copy())
    with pytest.raises(ad.MutationError, match="read-only"):
        ad.grad(f)(A4)
    with pytest.raises(ValueError, match="read-only"):
        ad.grad(lambda a: np.sum(np.broadcast_to(a, a.shape).__setitem__(0, 1.0) or a))(A4)


def test_broadcast_to_its_own_shape_still_reads_and_stages():
    def f(a):
        return np.sum(np.broadcast_to(a, a.shape) * a) + np.broadcast_to(a[0, 0], ())

    check_program(f, A4)


# --- refusals a hand-written algorithm runs into ----------------------------------------------

def swap_with_views(a):
    A = a.copy()
    A[0], A[2] = A[2], A[0]  # NumPy copies row 2 into both: the second view is stale
    return np.sum(A)


def write_through_transpose(a):
    B = a.copy()
    B.T[0] = a[:, 1]
    return np.sum(B)


def sibling_views(a):
    B = a.copy()
    left, right = np.hsplit(B, 2)
    left *= 2.0
    right *= 3.0
    return np.sum(B)


def plain_buffer(x):
    y = np.zeros(x.shape[0])
    y[0] = x[0]
    return np.sum(y)


@pytest.mark.parametrize("f, error, words", [
    (swap_with_views, ad.StaleViewError, "take the view again"),
    (write_through_transpose, ad.MutationError, "copy the view first"),
    (sibling_views, ad.StaleViewError, "take the view again"),
    (plain_buffer, ad.TracingError, "np.zeros_like"),
    (lambda a: np.sum(a.diagonal().__setitem__(0, 1.0) or a), ad.MutationError, "read-only"),
], ids=["tuple-swap", "transpose", "split-siblings", "plain-buffer", "diagonal"])
def test_refusals_name_the_fix(f, error, words):
    with pytest.raises(error, match=words):
        ad.grad(f)(A4)


# --- JAX, rewritten with .at[] -----------------------------------------------------------------

@pytest.mark.slow  # JAX compiles the unrolled loops: ~15 s
def test_matches_jax_functional_rewrites():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)

    def lu_jax(A):
        for k in range(A.shape[0] - 1):
            A = A.at[k + 1:, k].divide(A[k, k])
            A = A.at[k + 1:, k + 1:].add(-jnp.outer(A[k + 1:, k], A[k, k + 1:]))
        return A

    def odd_even_jax(y):
        n = y.shape[0]
        for r in range(n):
            s = r % 2
            a, b = y[s:n - 1:2], y[s + 1:n:2]
            y = y.at[s:n - 1:2].set(jnp.minimum(a, b)).at[s + 1:n:2].set(jnp.maximum(a, b))
        return y

    def soft_dtw_jax(x, y, gamma=0.5):
        n, m = x.shape[0], y.shape[0]
        C = (x[:, None] - y[None, :]) ** 2
        R = jnp.full((n + 1, m + 1), jnp.inf).at[0, 0].set(0)
        for i in range(1, n + 1):
            for j in range(1, m + 1):
                r = -jnp.stack([R[i - 1, j], R[i, j - 1], R[i - 1, j - 1]]) / gamma
                R = R.at[i, j].set(C[i - 1, j - 1] - gamma * jax.scipy.special.logsumexp(r))
        return R[n, m]

    def hist_jax(w):
        return jnp.sum(jnp.zeros(4, w.dtype).at[BINS].add(w) ** 2)

    def hist(w):
        h = np.zeros(4, like=w, dtype=w.dtype)
        np.add.at(h, BINS, w)
        return np.sum(h ** 2)

    np.testing.assert_allclose(ad.grad(lambda a: np.sum(lu_no_pivot(a) * W_MAT))(A_SPD),
                               jax.jit(jax.grad(lambda a: jnp.sum(lu_jax(a) * W_MAT)))(A_SPD),
                               rtol=1e-12)
    ties = np.array([1.0, 1.0, 0.5, 0.5, 2.0, -1.0, 0.0])
    for x in (X7, ties):
        np.testing.assert_allclose(ad.jacobian(odd_even_sort)(x),
                                   jax.jit(jax.jacobian(odd_even_jax))(x))
    for got, expected in zip(ad.grad(soft_dtw, argnums=(0, 1))(*SERIES),
                             jax.jit(jax.grad(soft_dtw_jax, argnums=(0, 1)))(*SERIES)):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ad.grad(hist)(X7), jax.jit(jax.grad(hist_jax))(X7), rtol=1e-12)

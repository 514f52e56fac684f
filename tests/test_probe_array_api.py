"""Array API frontend probe: traced calls on array-api-strict and PyTorch arrays agree with the
provider's eager call (value, dtype, shape, refusal) in dynamic transforms and while staging."""

from __future__ import annotations

import re

import numpy as np
import pytest

import advect as ad
from advect.ops import _portable
from oracles import central_gradient

strict = pytest.importorskip("array_api_strict")


def _ns(x):
    return x.__array_namespace__()


def _lifetimes(f, x):
    """``f(x)`` in a dynamic transform and through a staged program."""
    return ad.vjp(f)(x)[0], ad.stage(f, x)(x)


def test_new_axis_index_gradient_on_strict():
    # scatter_add refused the None that strict's __setitem__ does not take
    x = strict.asarray([1.0, 2.0, 3.0])

    def loss(x):
        return _ns(x).sum(x[..., None, :, None] ** 2)

    want = [2.0, 4.0, 6.0]
    assert np.asarray(ad.grad(loss)(x)).tolist() == want
    assert np.asarray(ad.grad(ad.stage(loss, x))(x)).tolist() == want
    written = _portable.scatter(strict, strict.zeros((2, 3)), (0, None, slice(None)),
                                strict.asarray([[7.0, 8.0, 9.0]]))
    assert np.asarray(written).tolist() == [[7.0, 8.0, 9.0], [0.0, 0.0, 0.0]]


def test_vecdot_keeps_small_integer_dtypes():
    def f(b):
        xp = _ns(b)
        return xp.vecdot(xp.astype(b, xp.int8), xp.astype(b, xp.int8))

    x = strict.asarray([[1.0, 2.0], [3.0, 4.0]])
    want = strict.vecdot(strict.astype(x, strict.int8), strict.astype(x, strict.int8))
    for got in _lifetimes(f, x):
        assert got.dtype == want.dtype == strict.int8
        assert np.asarray(got).tolist() == np.asarray(want).tolist()


@pytest.mark.parametrize("xp_name", ["numpy", "strict"])
def test_vecdot_and_cross_refuse_a_positive_axis_after_2022_12(xp_name):
    x = np.arange(9.0).reshape(3, 3)
    if xp_name == "strict":
        x = strict.asarray(x)
    elif np.__array_api_version__ < "2023.12":
        pytest.skip("this NumPy serves no revision after 2022.12")

    def at(revision, name):
        def f(a):
            xp = a.__array_namespace__(api_version=revision)
            fn = xp.vecdot if name == "vecdot" else xp.linalg.cross
            return xp.sum(fn(a, a, axis=0))
        return f

    for name in ("vecdot", "cross"):
        with pytest.raises(ValueError, match="axis must be"):
            ad.grad(at("2024.12", name))(x)
        with pytest.raises(ValueError, match="axis must be"):
            ad.stage(at("2024.12", name), x)
    if xp_name == "numpy":  # 2022.12 allowed any axis (strict's own flag is at 2025.12)
        assert np.allclose(ad.grad(at("2022.12", "vecdot"))(x), 2 * x)


def test_cholesky_upper_reads_the_triangle_the_provider_reads():
    a = np.array([[4.0, 100.0, -7.0], [1.0, 3.0, 50.0], [0.5, -0.25, 2.0]])  # SPD lower part
    weights = np.arange(9.0).reshape(3, 3) + 1

    def eager(m):
        return float(np.sum(np.asarray(strict.linalg.cholesky(strict.asarray(m), upper=True))
                            * weights))

    def loss(m):
        xp = _ns(m)
        return xp.sum(xp.linalg.cholesky(m, upper=True) * xp.asarray(weights))

    x = strict.asarray(a)
    want = np.asarray(strict.linalg.cholesky(x, upper=True))
    for got in _lifetimes(lambda m: _ns(m).linalg.cholesky(m, upper=True), x):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12)
    numeric = central_gradient(eager, a)
    for grad in (ad.grad(loss)(x), ad.grad(ad.stage(loss, x))(x)):
        np.testing.assert_allclose(np.asarray(grad), numeric, rtol=1e-6, atol=1e-6)
    # NumPy's upper factor reads the upper triangle
    b = a.T.copy()
    got = ad.vjp(lambda m: _ns(m).linalg.cholesky(m, upper=True))(b)[0]
    np.testing.assert_allclose(got, np.linalg.cholesky(b, upper=True), rtol=1e-12)


REFUSED = {
    "sum of bool": lambda xp, b: xp.sum(b > 1),
    "cumulative_sum of bool": lambda xp, b: xp.cumulative_sum(b[0, :] > 1),
    "imag of int": lambda xp, b: xp.imag(xp.astype(b, xp.int64)),
    "imag of float": lambda xp, b: xp.imag(b),
    "ceil of bool": lambda xp, b: xp.ceil(b > 1),
    "argmax of bool": lambda xp, b: xp.argmax(b > 1),
    "std of complex": lambda xp, b: xp.std(xp.astype(b, xp.complex128)),
    "astype complex to real": lambda xp, b: xp.astype(xp.astype(b, xp.complex128), xp.float64),
    "matrix_power of int": lambda xp, b: xp.linalg.matrix_power(xp.astype(b, xp.int64), 2),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refusals_of_the_provider_hold_in_both_lifetimes(name):
    fn = REFUSED[name]
    x = strict.asarray([[2.0, 0.5], [0.5, 3.0]])
    with pytest.raises(TypeError) as eager:
        fn(strict, x)
    with pytest.raises(TypeError, match=re.escape(str(eager.value)[:20])):
        ad.vjp(lambda b: fn(_ns(b), b))(x)
    with pytest.raises(TypeError, match=re.escape(str(eager.value)[:20])):
        ad.stage(lambda b: fn(_ns(b), b), x)  # at staging time, not when the program runs


def test_refusals_follow_the_provider_torch():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    x = torch.tensor([[2.0, 0.5], [0.5, 3.0]], dtype=torch.float64)

    def imag_of_real(b):
        return _ns(b).imag(b)

    with pytest.raises(RuntimeError, match="imag is not implemented"):
        ad.vjp(imag_of_real)(x)
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        ad.stage(imag_of_real, x)
    # torch sums bools (strict does not): traced calls follow their provider
    for got in _lifetimes(lambda b: _ns(b).sum(b > 1), x):
        assert got.dtype == torch.int64 and int(got) == 2


def test_mixed_kinds_where_strict_accepts_them():
    # strict's matmul, vecdot and matrix_rank take what the standard leaves open; so do tracers
    x = strict.asarray([[2.0, 0.5], [0.5, 3.0]])
    calls = {
        "matmul": lambda xp, b: xp.matmul(xp.astype(b, xp.int64), b),
        "vecdot": lambda xp, b: xp.vecdot(xp.astype(b, xp.int64), b),
        "matrix_rank": lambda xp, b: xp.linalg.matrix_rank(xp.astype(b, xp.int64)),
    }
    for fn in calls.values():
        want = fn(strict, x)
        for got in _lifetimes(lambda b, fn=fn: fn(_ns(b), b), x):
            assert got.dtype == want.dtype and got.shape == want.shape
            assert np.asarray(got).tolist() == np.asarray(want).tolist()


def test_zero_dimensional_boolean_index():
    x = strict.asarray([1.0, 2.0, 3.0])
    for mask in (strict.asarray(True), strict.asarray(False)):
        want = x[mask]
        for got in _lifetimes(lambda t, mask=mask: t[mask], x):
            assert got.shape == want.shape


@pytest.mark.parametrize("swap", [False, True])
def test_vecdot_with_a_0d_operand_stages_as_eager(swap):
    # array-api-strict broadcasts a 0-d operand of vecdot; staging took the rank check of the
    # NumPy-shaped abstract rule (found by the slow Array API properties)
    s, v = strict.asarray(1.5), strict.asarray([[1.0], [2.0]])

    def f(s, v):
        xp = s.__array_namespace__()
        return xp.vecdot(v, s) if swap else xp.vecdot(s, v)

    want = f(s, v)
    for got in (ad.stage(f, s, v)(s, v), ad.vjp(f, argnums=(0, 1))(s, v)[0]):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    loss = lambda s, v: s.__array_namespace__().sum(f(s, v))  # noqa: E731
    dynamic = ad.grad(loss, argnums=(0, 1))(s, v)
    staged = ad.grad(ad.stage(loss, s, v), argnums=(0, 1))(s, v)
    for d, g, want in zip(dynamic, staged, (3.0, [[1.5], [1.5]])):
        np.testing.assert_array_equal(np.asarray(d), want)
        np.testing.assert_array_equal(np.asarray(g), want)

"""Precision, weak-scalar dtype and debug-numerics probes (second round): one test per fixed bug.

Accuracy rows compare a float16/float32 derivative with the exact one (float64, or a series
where float64 cancels too) in units of the dtype's eps: a few eps is what rounding the inputs'
derivative to that dtype costs.
"""

import math

import numpy as np
import pytest

import advect as ad

EPS = {np.dtype(d): float(np.finfo(d).eps) for d in (np.float16, np.float32, np.float64)}


def _ulps(got, want):
    """Largest relative error of ``got`` against the exact ``want``, in eps of got's dtype."""
    got = np.asarray(got)
    want = np.asarray(want, np.float64)
    return float(np.max(np.abs(got.astype(np.float64) - want) / np.abs(want))) / EPS[got.dtype]


def _derivative(f, x):
    """f'(x) elementwise, by reverse and by forward mode (both must keep x's dtype)."""
    g = ad.grad(lambda x: np.sum(f(x)))(x)
    t = ad.jvp(f)(x, tangents=np.ones_like(x))[1]
    assert g.dtype == t.dtype == x.dtype
    return g, t


# --- elementwise derivatives that cancelled or overflowed ------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_expm1_derivative_is_exp_where_expm1_is_near_minus_one(dtype):
    # the partial was expm1(x) + 1: 0 from x = -17 (float32) or -38 (float64), not exp(x)
    x = np.array([-5.0, -20.0, -40.0, -80.0, 0.5], dtype)
    for d in _derivative(np.expm1, x):
        assert _ulps(d, np.exp(x.astype(np.float64))) < 4


def _sinc_series(x, order):
    """The exact ``order``-th derivative of sinc at small x, from its Taylor series."""
    y = math.pi * x
    total = 0.0
    for k in range(order // 2, 25):
        n = 2 * k  # the power of y in the k-th term
        total += (-1) ** k * math.perm(n, order) * y ** (n - order) / math.factorial(n + 1)
    return math.pi ** order * total


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_sinc_derivatives_near_zero(dtype):
    # d(sin(y)/y) = cos(y)/y - sin(y)/y**2 cancels as y -> 0: at |x| < 0.01 the float16 and
    # float32 derivatives had no correct digit (1e10 eps at x = 1e-4 in float32)
    x = np.concatenate([np.geomspace(1e-3, 0.3, 12), -np.geomspace(1e-3, 0.3, 12)]).astype(dtype)
    first = [_sinc_series(float(v), 1) for v in x]
    for d in _derivative(np.sinc, x):
        assert _ulps(d, first) < 8
    second = ad.hessian_diag(lambda x: np.sum(np.sinc(x)))(x)
    assert second.dtype == x.dtype
    assert _ulps(second, [_sinc_series(float(v), 2) for v in x]) < 8
    # away from 0 the quotient is kept: NumPy's values there
    far = np.array([0.4, -0.75, 1.5, 2.25], dtype)
    np.testing.assert_array_equal(ad.jvp(np.sinc)(far, tangents=np.ones_like(far))[0],
                                  np.sinc(far))


def test_sinc_at_zero_and_far_out_stays_finite_in_every_lifetime():
    x = np.array([0.0, 1e-4, 3e30, -2.5])
    want = np.sinc(x)
    with ad.debug(numerics=True):  # no branch computes an overflow or a 0/0
        staged = ad.stage(np.sinc, x)(x)
        g = ad.grad(ad.stage(lambda x: np.sum(np.sinc(x)), x))(x)
    np.testing.assert_allclose(staged, want, rtol=EPS[np.dtype(np.float64)])
    assert np.isfinite(g).all() and g[0] == 0.0
    np.testing.assert_allclose(ad.hessian(lambda x: np.sum(np.sinc(x)))(x)[0, 0],
                               -math.pi ** 2 / 3, rtol=4 * EPS[np.dtype(np.float64)])


def test_arctanh_derivative_near_one():
    # 1 - x**2 lost the digits of 1 - x: 700 eps at x = 0.9998 in float32
    x = (1 - np.geomspace(1e-6, 0.1, 9)).astype(np.float32)
    x = np.concatenate([x, -x])
    exact = 1 / ((1 - x.astype(np.float64)) * (1 + x.astype(np.float64)))
    for d in _derivative(np.arctanh, x):
        assert _ulps(d, exact) < 4


@pytest.mark.parametrize("f", [np.arcsinh, np.arccosh], ids=["arcsinh", "arccosh"])
def test_inverse_hyperbolic_derivatives_do_not_overflow_in_float16(f):
    # x**2 overflows float16 from 256: the derivative, about 1/x, came out 0
    x = np.array([1.5, 3.0, 300.0, 1000.0, 6e4], np.float16)
    x64 = x.astype(np.float64)
    exact = 1 / np.sqrt(x64 ** 2 + 1) if f is np.arcsinh else 1 / np.sqrt(x64 ** 2 - 1)
    for d in _derivative(f, x):
        assert _ulps(d, exact) < 4
    inf = np.array([np.inf])
    assert ad.jvp(f)(inf, tangents=np.ones(1))[1][0] == 0.0
    if f is np.arcsinh:
        assert ad.jvp(f)(-inf, tangents=np.ones(1))[1][0] == 0.0
        assert ad.hessian(lambda x: np.sum(f(x)))(np.zeros(1))[0, 0] == 0.0


def test_expit_derivative_in_the_saturated_tail():
    # out * (1 - out) is 0 once expit rounds to 1 (x > 17 in float32)
    special = pytest.importorskip("scipy.special")
    x = np.array([-30.0, -5.0, 0.5, 5.0, 20.0, 30.0], np.float32)
    x64 = x.astype(np.float64)
    exact = np.exp(-np.abs(x64)) / (1 + np.exp(-np.abs(x64))) ** 2
    for d in _derivative(special.expit, x):
        assert _ulps(d, exact) < 4


# --- traced Python scalars where NumPy makes arrays of its operands --------------------------

X16 = np.array([0.1, 0.7, 1.3, 2.9], np.float16)
CT = np.full(4, 1.0001)  # a cotangent float16 cannot hold


def test_einsum_with_a_traced_python_scalar_is_float64_as_numpy():
    # einsum makes an array of a Python scalar, so x16 with 1.25 is float64; a traced scalar
    # was weak: the staged spec said float16, its gradient for x came back float64, and the
    # Python scalar's own gradient was summed in float16
    f = lambda x, s: np.einsum("i,->i", x, s)  # noqa: E731
    assert f(X16, 1.25).dtype == np.float64
    program = ad.stage(f, X16, 1.25)
    assert program.output_specs.dtype == "float64"
    assert program(X16, 1.25).dtype == np.float64
    exact = float(np.sum(CT * X16.astype(np.float64)))
    gx, gs = ad.vjp(f, (0, 1))(X16, 1.25)[1](CT)
    assert gx.dtype == np.float16 and gs == pytest.approx(exact, rel=EPS[np.dtype(np.float64)])
    loss = lambda x, s: np.sum(f(x, s) * 1.0001)  # noqa: E731
    for grad in (ad.grad(loss, (0, 1)), ad.grad(ad.stage(loss, X16, 1.25), (0, 1))):
        gx, gs = grad(X16, 1.25)
        assert gx.dtype == np.float16
        assert isinstance(gs, float) and gs == pytest.approx(exact, rel=1e-12)


def test_a_weak_tangent_is_strong_after_astype():
    # astype's JVP kept a Python scalar input's tangent weak: tensordot's float64 product then
    # took it as float16, and the scalar's gradient was rounded to float16
    f = lambda x, s: np.tensordot(x, s, 0)  # noqa: E731
    _, gs = ad.vjp(f, (0, 1))(X16, 1.25)[1](CT)
    assert gs == pytest.approx(float(np.sum(CT * X16.astype(np.float64))), rel=1e-12)
    _, tangent = ad.jvp(f, (0, 1))(X16, 1.25, tangents=(np.zeros_like(X16), 1.0001))
    assert tangent.dtype == np.float64
    np.testing.assert_allclose(tangent, 1.0001 * X16.astype(np.float64), rtol=1e-12)


@pytest.mark.parametrize("ufunc", [np.multiply, np.add, np.arctan2])
def test_ufunc_outer_with_a_traced_python_scalar_is_float64_as_numpy(ufunc):
    for f in (lambda x, s: ufunc.outer(x, s), lambda x, s: ufunc.outer(s, x)):
        want = f(X16, 1.25)
        assert want.dtype == np.float64
        value = ad.vjp(f, (0, 1))(X16, 1.25)[0]
        assert value.dtype == np.float64
        program = ad.stage(f, X16, 1.25)
        assert program.output_specs.dtype == "float64"
        np.testing.assert_allclose(program(X16, 1.25), want, rtol=EPS[np.dtype(np.float64)])
        gx, _ = ad.grad(lambda x, s, f=f: np.sum(f(x, s)), (0, 1))(X16, 1.25)
        assert gx.dtype == np.float16


def test_linspace_with_a_traced_python_scalar_endpoint_keeps_float16():
    # a traced Python scalar endpoint counted as a float64 array: float16 start gave float64
    want = np.linspace(X16, 1.25, 3)
    assert want.dtype == np.float16
    f = lambda x, s: np.linspace(x, s, 3)  # noqa: E731
    value, tangent = ad.jvp(f, (0, 1))(X16, 1.25, tangents=(np.ones_like(X16), 1.0))
    assert value.dtype == tangent.dtype == np.float16
    np.testing.assert_array_equal(value, want)
    assert ad.stage(f, X16, 1.25)(X16, 1.25).dtype == np.float16
    assert ad.jvp(lambda s: np.linspace(0.0, s, 3))(1.25, tangents=1.0)[0].dtype == np.float64


# --- debug(numerics=True) --------------------------------------------------------------------

def test_a_non_finite_primal_is_named_before_its_tangent():
    # forward mode reported log(0) = -inf as a JVP error: the tangent was checked first
    with ad.debug(numerics=True), pytest.raises(ad.NumericsError) as info, \
            np.errstate(divide="ignore"):
        ad.jvp(np.log)(np.array([1.0, 0.0]), tangents=np.ones(2))
    assert (info.value.op, info.value.phase) == ("log", "primal")
    with ad.debug(numerics=True), pytest.raises(ad.NumericsError) as info, \
            np.errstate(divide="ignore"):  # a finite primal: the tangent is the first inf
        ad.jvp(np.sqrt)(np.array([1.0, 0.0]), tangents=np.ones(2))
    assert (info.value.op, info.value.phase) == ("sqrt", "JVP")


def test_a_custom_primitive_transpose_inf_is_named_by_the_primitive():
    # the VJP error named the internal tape op 'probe_precision_2.double.linear_map'
    double = ad.primitive(lambda x: x * 2.0, name="probe_precision_2.double")
    double.def_abstract(lambda x: x.spec)
    double.def_jvp(lambda out, primals, tangents: tangents[0] * 2.0)
    double.def_transpose(lambda ct, primals, out: (ct / np.array([0.0, 1.0]),))
    with ad.debug(numerics=True), pytest.raises(ad.NumericsError) as info, \
            np.errstate(divide="ignore"):
        ad.grad(lambda x: np.sum(double(x)))(np.array([1.0, 2.0]))
    assert (info.value.op, info.value.phase) == ("probe_precision_2.double", "VJP")
    assert "test_probe_precision_2.py" in info.value.location


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="NumPy 2.0 computes sinc otherwise (its float16 sinc(0) is NaN); "
                    "Advect follows 2.1+")
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_sinc_values_are_numpys_bits_near_zero(dtype):
    # the series serves the derivatives only: the values are NumPy's own, in both lifetimes
    x = np.linspace(-0.4, 0.4, 801).astype(dtype)
    np.testing.assert_array_equal(ad.stage(np.sinc, x)(x), np.sinc(x))
    np.testing.assert_array_equal(ad.jvp(np.sinc)(x, tangents=np.ones_like(x))[0], np.sinc(x))

"""Regression rows for gaps listed in the performance issue's closing note (2026-12-02)."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad

X = np.linspace(0.1, 1.0, 4)

# 0-d results whose eager type is a 0-d ndarray or a NumPy scalar; every transform gives the
# value (and jvp the tangent) the type eager NumPy gives, as staged programs do
ZERO_D = {
    "a[0]": lambda a: a[0],
    "a[0, ...]": lambda a: a[0, ...],
    "sum()[...]": lambda a: a.sum()[...],
    "np.copy of 0-d": lambda a: np.copy(a.sum()),
    "ad.array of 0-d": lambda a: ad.array(a.sum()),
    "ad.asarray of a[0]": lambda a: ad.asarray(a[0]),
    "where": lambda a: np.where(a.sum() > 0, a.sum(), 0.0),
    "clip of 0-d": lambda a: np.clip(a.sum(), 0, 1),
    "squeeze": lambda a: a[:1].squeeze(),
    "sum": lambda a: np.sum(a),
}


@pytest.mark.parametrize("name", ZERO_D)
def test_zero_d_result_types_follow_eager_numpy(name):
    f = ZERO_D[name]
    want = type(f(X))
    assert type(ad.stage(f, X)(X)) is want
    value, tangent = ad.jvp(f)(X, tangents=np.ones(4))
    assert type(value) is want and type(tangent) is want
    assert type(ad.vjp(f)(X)[0]) is want
    assert type(ad.value_and_grad(f)(X)[0]) is want
    value, lm = ad.linearize(f, X)
    assert type(value) is want
    lm.close()


def test_zero_d_input_passed_through_keeps_its_type():
    s = np.float64(2.0)
    assert type(ad.jvp(lambda a: a)(s, tangents=np.float64(1.0))[0]) is np.float64
    z = np.array(2.0)
    assert type(ad.jvp(lambda a: a)(z, tangents=np.array(1.0))[0]) is np.ndarray


def test_complex_tangent_for_real_input_is_refused():
    # casting it would drop the imaginary part: a silent wrong tangent
    t = np.ones(4) * 1j
    with pytest.raises(TypeError, match="complex tangent"):
        ad.jvp(np.sin)(X, tangents=t)
    _, lm = ad.linearize(np.sin, X)
    with pytest.raises(TypeError, match="complex tangent"):
        lm(t)
    lm.close()
    with pytest.raises(TypeError, match="complex tangent"):
        ad.hvp(lambda a: np.sum(a ** 3))(X, vectors=t)
    z = X + 0j  # a complex input takes one
    assert np.allclose(ad.jvp(np.sin)(z, tangents=t)[1], np.cos(z) * t)


S = np.array(2.0)


@pytest.mark.parametrize("f", [lambda x: x * 2, lambda x: np.sum(x * np.ones(3))],
                         ids=["scalar cotangent", "broadcast cotangent"])
def test_gradient_of_a_0d_array_is_a_0d_array(f):
    # NumPy computes the first cotangent as a NumPy scalar, the second as an array: the
    # gradient has the input's type either way, in every reverse map and nested transform
    assert type(ad.grad(f)(S)) is np.ndarray
    assert type(ad.vjp(f)(S)[1](np.float64(1.0))) is np.ndarray
    _, lm = ad.linearize(f, S)
    assert type(lm.pullback(np.float64(1.0))) is np.ndarray
    lm.close()
    assert type(ad.grad(ad.stage(f, S))(S)) is np.ndarray
    cube = lambda x: x ** 3  # noqa: E731
    assert type(ad.hvp(cube)(S, vectors=np.array(1.0))[1]) is np.ndarray
    assert type(ad.stage(ad.grad(cube), S)(S)) is np.ndarray
    assert type(ad.grad(ad.grad(cube))(S)) is np.ndarray
    g = ad.grad(f)(S)
    g[...] = 7.0  # writable memory of its own
    assert S == 2.0


def test_membership_is_numpys_any_of_equal():
    # Python's fallback walked the rows and asked bool() of a row
    x = np.arange(6.0).reshape(2, 3)
    seen = []

    def f(a):
        seen.extend([3.0 in a, 7.0 in a, np.array([3.0, 4.0, 5.0]) in a, 3.0 in a[0]])
        return np.sum(a)

    ad.grad(f)(x)
    assert seen == [3.0 in x, 7.0 in x, np.array([3.0, 4.0, 5.0]) in x, 3.0 in x[0]]


def test_constant_outputs_get_zero_tangents_of_a_dependent_ones_type():
    x = np.ones(3)
    out = (np.sum(x), 2.0, np.float32(1.0), np.zeros(()), 1j)
    _, tangents = ad.jvp(lambda a: (np.sum(a), 2.0, np.float32(1.0), np.zeros(()), 1j))(
        x, tangents=x)
    assert [type(t) for t in tangents] == [np.float64, float, np.float32, np.ndarray, complex]
    assert all(t == 0 for t in tangents[1:]) and type(out[2]) is type(tangents[2])


def test_hvp_of_an_integer_input_is_zeros_of_its_dtype():
    f = lambda a, k: np.sum(a ** 2 * k)  # noqa: E731
    x, k = np.ones(3), np.arange(3)
    _, (hx, hk) = ad.hvp(f, (0, 1))(x, k, vectors=(x, np.zeros(3, int)))
    np.testing.assert_array_equal(hx, 2 * k * x)
    assert hk.dtype == k.dtype and not hk.any()  # as its gradient: zeros of the input's dtype


def test_hessian_of_a_complex_input_says_so():
    with pytest.raises(ValueError, match="hessian needs real inputs"):
        ad.hessian(lambda z: np.sum(np.abs(z) ** 2))(np.ones(2) + 1j)


def test_signature_hands_out_copies_of_static_values():
    program = ad.stage(lambda x, k: x * len(k), X, ad.StaticSpec([1, 2]))
    program.signature[0][1].value.append(9)  # the caller's copy
    assert program.signature[0][1] == ad.StaticSpec([1, 2])
    np.testing.assert_array_equal(program(X, [1, 2]), 2 * X)


def test_python_int_outputs_beyond_int64_are_returned_and_saved():
    import json

    f = lambda x: (x, 2 ** 70, -2 ** 65)  # noqa: E731
    program = ad.stage(f, X)
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))
    for p in (program, restored):
        _, big, small = p(X)
        assert (type(big), big, type(small), small) == (int, 2 ** 70, int, -2 ** 65)


def test_converting_an_escaped_tracer_names_the_escape():
    box = []
    ad.grad(lambda x: (box.append(x), np.sum(x))[1])(X)
    with pytest.raises(ad.EscapedTracerError):
        np.asarray(box[0])


def test_object_dtype_inputs_are_refused_not_given_zero_gradients():
    x = np.array([1.5, 2.5], dtype=object)
    with pytest.raises(ad.UnsupportedDtypeError, match="object"):
        ad.grad(lambda a: np.sum(a * 1.0))(x)
    with pytest.raises(ad.UnsupportedDtypeError):
        ad.jvp(lambda a: a * 1.0)(x, tangents=np.ones(2))
    # an unselected string input is a constant, as before
    assert ad.grad(lambda a, s: np.sum(a), argnums=0)(X, np.array(["a"])).shape == X.shape


def test_one_tangent_for_a_tuple_argnums_says_a_tuple_is_needed():
    with pytest.raises(TypeError, match="tuple of one tangent per selected input"):
        ad.jvp(lambda a, b: a * b, argnums=(0, 1))(X, X, tangents=X)


def test_a_python_scalar_outputs_tangent_is_a_python_scalar():
    assert ad.jvp(lambda x: x ** 2)(3.0, tangents=1.0) == (9.0, 6.0)
    value, tangent = ad.jvp(lambda x: x ** 2)(3.0, tangents=1.0)
    assert type(value) is float and type(tangent) is float


def test_check_primitive_of_a_transpose_only_residual_primitive():
    # nested and staged derivatives refuse such a primitive by design: the default checks
    # skip them instead of raising TracingError, and still catch a wrong transpose
    from advect.testing import check_primitive

    @ad.primitive(residual=True, name="probe_gaps.tanh_residual")
    def tanh_r(x):
        y = np.tanh(x)
        return ad.PrimitiveResult(y, 1 - y ** 2)

    tanh_r.def_abstract(lambda x: x.spec)
    tanh_r.def_transpose(lambda ct, primals, out, *, residual: (ct * residual,))
    x = np.array([0.3, -0.2])
    assert check_primitive(tanh_r, primals=(x,)) == ("abstract", "transpose", "stage")
    tanh_r.def_transpose(lambda ct, primals, out, *, residual: (2 * ct * residual,))
    with pytest.raises(AssertionError, match="transpose"):
        check_primitive(tanh_r, primals=(x,))

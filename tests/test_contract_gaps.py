"""The last gaps of the contract issue, against NumPy: np.pad with traced array-valued
constant_values/end_values, fftfreq's dtype= (where the installed NumPy has it, and in the
Array API namespace), order= on the like= constructors, and the flat has_aux layout of staged
value_and_grad programs with pytree aux."""

import inspect
import json

import numpy as np
import pytest

import advect as ad
from advect._compat import FFTFREQ_TAKES_DTYPE
from advect.pytree import tree_flatten
from advect.testing import check_grads

X = np.arange(6.0).reshape(2, 3) + 0.5
PAD_CASES = [
    # (pad_width, mode, keyword, value): every shape NumPy broadcasts to (ndim, 2)
    (1, "constant", "constant_values", np.array(3.0)),
    (((1, 0), (2, 1)), "constant", "constant_values", np.array([1.5, -2.0])),
    (((1, 2), (0, 1)), "constant", "constant_values", np.array([[1.0, 2.0], [3.0, 4.0]])),
    (2, "constant", "constant_values", np.array([[0.5], [7.0]])),
    (((2, 1), (1, 3)), "linear_ramp", "end_values", np.array([[1.0, 5.0], [-2.0, 0.5]])),
    (2, "linear_ramp", "end_values", np.array([4.0, -1.0])),
]


@pytest.mark.parametrize("width, mode, keyword, value", PAD_CASES)
def test_pad_traced_array_values_match_numpy_and_differentiate(width, mode, keyword, value):
    def f(x, v):
        return np.pad(x, width, mode=mode, **{keyword: v})

    expected = f(X, value)
    got, _ = ad.jvp(f, argnums=(0, 1))(X, value, tangents=(np.ones_like(X), np.ones_like(value)))
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    np.testing.assert_allclose(ad.stage(f, X, value)(X, value), expected, rtol=1e-13)
    check_grads(f, (X, value), order=2)
    staged_grad = ad.stage(ad.grad(lambda x, v: np.sum(f(x, v) ** 2), argnums=(0, 1)), X, value)
    dynamic = ad.grad(lambda x, v: np.sum(f(x, v) ** 2), argnums=(0, 1))(X, value)
    for a, b in zip(staged_grad(X, value), dynamic, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_pad_traced_values_inside_a_sequence():
    def f(x, c):
        return np.pad(x, 1, constant_values=(c, 2.0))

    got, _ = ad.jvp(f, argnums=(0, 1))(X, 3.0, tangents=(np.ones_like(X), 1.0))
    np.testing.assert_array_equal(got, f(X, 3.0))
    check_grads(f, (X, np.array(3.0)), order=1)


def test_pad_traced_values_that_do_not_broadcast_raise_as_numpy():
    with pytest.raises(ValueError):
        np.pad(X, 1, constant_values=np.ones(3))
    with pytest.raises(ValueError, match="does not broadcast"):
        ad.grad(lambda x, c: np.sum(np.pad(x, 1, constant_values=c)), argnums=(0, 1))(
            X, np.ones(3))


def test_pad_of_a_plain_array_with_traced_values_is_refused_not_detached():
    # np.pad dispatches on its array only: a plain array reaches NumPy's own pad
    with pytest.raises(ad.TracingError):
        ad.grad(lambda c: np.sum(np.pad(np.ones(2), 1, constant_values=c)))(3.0)
    # ...so make the array traced first
    grad = ad.grad(lambda c: np.sum(np.pad(np.asarray(np.ones(2), like=c), 1,
                                           constant_values=c)))(np.array(3.0))
    assert grad == 2.0


def test_fftfreq_dtype_follows_the_installed_numpy():
    assert FFTFREQ_TAKES_DTYPE == ("dtype" in inspect.signature(np.fft.fftfreq).parameters)
    for freq in (np.fft.fftfreq, np.fft.rfftfreq):
        def f(d, freq=freq):
            return freq(7, d, dtype=np.float32)

        if not FFTFREQ_TAKES_DTYPE:  # NumPy's TypeError, with or without a traced spacing
            with pytest.raises(TypeError):
                f(0.5)
            with pytest.raises(TypeError):
                ad.grad(lambda d, f=f: np.sum(f(d)))(0.5)
            continue
        value, tangent = ad.jvp(f)(np.array(0.5), tangents=np.array(1.0))
        np.testing.assert_allclose(value, f(0.5))
        assert value.dtype == f(0.5).dtype
        np.testing.assert_allclose(tangent, -freq(7, 1.0) / 0.25, rtol=1e-6)


@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_array_api_fftfreq_takes_dtype(name):
    def f(x):
        xp = x.__array_namespace__()
        freqs = getattr(xp.fft, name)(8, d=0.5, dtype=xp.float32)
        assert freqs.dtype == xp.float32
        return xp.sum(x * freqs)

    expected = getattr(np.fft, name)(8, 0.5).astype(np.float32)
    x = np.ones(expected.shape, np.float32)
    gradient = ad.grad(f)(x)
    assert gradient.dtype == np.float32
    np.testing.assert_array_equal(gradient, expected)
    np.testing.assert_array_equal(ad.stage(ad.grad(f), x)(x), expected)
    strict = pytest.importorskip("array_api_strict")
    gradient = ad.grad(f)(strict.ones(expected.shape, dtype=strict.float32))
    np.testing.assert_array_equal(np.asarray(gradient), expected)


@pytest.mark.parametrize("build", [
    lambda x, order: ad.array(x, order=order),
    lambda x, order: ad.array([x[0], x[1] * 2.0], order=order),
    lambda x, order: ad.asarray(x, order=order),
    lambda x, order: np.array([x[0], 1.0], order=order, like=x),
    lambda x, order: np.array(3.0, order=order, like=x),
    lambda x, order: np.asarray(x, order=order, like=x),
    lambda x, order: np.asarray([1.0, 2.0], order=order, like=x),
])
def test_constructor_orders_are_validated_as_numpy(build):
    x = np.array([1.0, 2.0])
    plain = build(x, "F")
    for order in ("C", "F", "A", "K", "c", "f"):
        value, _ = ad.jvp(lambda x, order=order: build(x, order))(x, tangents=np.ones(2))
        np.testing.assert_array_equal(value, plain)
        np.testing.assert_array_equal(ad.stage(lambda x, order=order: build(x, order), x)(x),
                                      plain)
    for bad, error in (("Z", ValueError), (3, TypeError)):
        with pytest.raises(error):
            build(x, bad)
        with pytest.raises(error):
            ad.grad(lambda x, bad=bad: np.sum(build(x, bad)))(x)
        with pytest.raises(error):
            ad.stage(lambda x, bad=bad: build(x, bad), x)


def _loss_with_tree_aux(x):
    loss = np.sum(np.sin(x) ** 2)
    return loss, {"grad_norm": np.max(np.abs(x)), "parts": [x * 2.0, (np.sum(x), np.cos(x))]}


def _assert_tree_equal(a, b):
    (leaves_a, def_a), (leaves_b, def_b) = tree_flatten(a), tree_flatten(b)
    assert def_a == def_b
    for u, v in zip(leaves_a, leaves_b, strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-13)


def test_staged_value_and_grad_has_aux_is_flat_with_pytree_aux():
    x = np.linspace(0.1, 0.9, 4)
    expected = ad.value_and_grad(_loss_with_tree_aux, has_aux=True)(x)
    assert len(expected) == 3
    value, gradient, aux = expected
    np.testing.assert_allclose(gradient, 2 * np.sin(x) * np.cos(x), rtol=1e-13)
    _assert_tree_equal(aux, _loss_with_tree_aux(x)[1])
    staged = [
        ad.stage(ad.value_and_grad(_loss_with_tree_aux, has_aux=True), x),
        ad.value_and_grad(ad.stage(_loss_with_tree_aux, x), has_aux=True),
    ]
    staged.append(ad.StagedProgram.from_dict(json.loads(json.dumps(staged[1].to_dict()))))
    for program in staged:
        out = program(x)
        assert isinstance(out, tuple) and len(out) == 3
        _assert_tree_equal(out, expected)
    gradient_and_aux = ad.grad(ad.stage(_loss_with_tree_aux, x), has_aux=True)(x)
    assert len(gradient_and_aux) == 2
    _assert_tree_equal(gradient_and_aux, (gradient, aux))

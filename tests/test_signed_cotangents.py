"""The reverse pass carries the signs of subtract and negative instead of computing negations:
the gradients equal those of the general path (each negation computed where the transpose rule
makes it; a - b is exactly a + (-b), so only the sign of a zero could differ, and the carried
sign never makes one -0.0), and user rules always see the true cotangent."""

import numpy as np
import pytest

import advect as ad
from advect import ops
from advect.autodiff import reverse

rng = np.random.default_rng(7)
X = rng.standard_normal((4, 3))
V = rng.standard_normal(3)


@pytest.fixture
def general(monkeypatch):
    """Switch the signed cotangents off: every negation computed by the transpose rules."""
    def run(fn, *args, **kw):
        with monkeypatch.context() as m:
            for op in (ops.subtract, ops.negative):
                m.setattr(op, "signed_transpose", None)
            m.setattr(reverse, "_odd", lambda op: False)
            return fn(*args, **kw)
    return run


def _diffusion(u):
    for _ in range(3):
        u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    return np.sum(u ** 2)


PROGRAMS = {
    "diffusion": (_diffusion, (V,)),
    "chains of negations": (lambda x: np.sum(np.negative(-(x - 2.0)) * -x), (X,)),
    "both operands": (lambda x: np.sum((x - x[::-1]) ** 2 - (x[:, ::-1] - x)), (X,)),
    "broadcast subtrahend": (lambda x, v: np.sum(np.sin(x - v) - v), (X, V)),
    "lazy 0-d cotangent": (lambda x: np.mean(-x) - np.sum(x), (X,)),
    "gather into a negated cotangent": (lambda x: np.sum(x[1] - x[:, 0].sum() - (-x)[2, 1]), (X,)),
    "mixed signs meeting": (lambda x: np.sum(np.exp(-x) - x * 3.0 + (1.0 - x) ** 2), (X,)),
    "reductions and matmul": (lambda x, v: np.max(-(x @ v)) - np.sum(x.T - v[:, None]), (X, V)),
    "multiple results": (lambda x: np.sum(-np.linalg.eigh(x.T @ x)[0]) - np.sum(np.modf(-x)[0]),
                         (X,)),
    "float32": (lambda x: np.sum(-(x - np.float32(0.5)) ** 3), (X.astype(np.float32),)),
    "complex": (lambda z: np.real(np.sum(-(z - 1j) * np.conj(-z))), (X + 0.5j * X,)),
    "checkpointed": (lambda x: np.sum(ad.checkpoint(lambda y: -(y - np.sin(y)))(x) ** 2), (X,)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_gradients_equal_the_general_paths(name, general):
    fn, args = PROGRAMS[name]
    argnums = tuple(range(len(args)))
    want = general(ad.grad(fn, argnums), *args)
    got = ad.grad(fn, argnums)(*args)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert np.array_equal(g, w), name
    # and they agree with the other mode and with the staged gradient
    for g, a, i in zip(got, args, argnums):
        t = np.ones_like(a)
        _, jv = ad.jvp(fn, i)(*args, tangents=t)
        np.testing.assert_allclose(np.real(np.vdot(t, g)), np.real(jv), rtol=1e-4, atol=1e-5)
    staged = ad.grad(ad.stage(fn, *args), argnums)(*args)
    for g, s in zip(got, staged):
        np.testing.assert_allclose(g, s, rtol=1e-5, atol=1e-6)


def test_hessians_through_negations_equal_the_general_path(general):
    fn = lambda x: np.sum(-(np.sin(x) - x ** 3) * (2.0 - x))  # noqa: E731
    assert np.array_equal(ad.hessian(fn)(V), general(ad.hessian(fn), V))
    f = lambda x: -(x - np.cos(x))  # noqa: E731
    got = ad.vjp(f)(V)[1](V)
    assert np.array_equal(got, general(lambda: ad.vjp(f)(V)[1](V)))
    np.testing.assert_allclose(got, V * -(1 + np.sin(V)), rtol=1e-15)


def test_a_custom_transpose_rule_sees_the_true_cotangent():
    seen = []
    clip = ad.primitive(lambda x: x * 1.0, name="test_signed_cotangents.clip")

    @clip.def_transpose
    def _(ct, primals, output):  # a clipping VJP: not odd in ct
        seen.append(np.array(ct))
        return (np.clip(ct, -1.0, 0.5),)

    clip.def_abstract(lambda x: x.spec)
    x = np.array([1.0, 2.0, 3.0])
    g = ad.grad(lambda x: np.sum(-(clip(x) * 4.0)))(x)
    assert np.array_equal(seen[-1], np.full(3, -4.0))
    assert np.array_equal(g, np.full(3, -1.0))

"""One precision rule for the dense derivatives: a derivative with respect to an input has that
input's dtype (float32 in, float32 out) and provider, whichever mode computes it (issue 10
item 6)."""

import numpy as np
import pytest

import advect as ad

X32 = np.array([0.5, -1.25, 2.0], np.float32)


def _wide(x):  # 3 inputs -> 6 outputs: forward mode
    return np.concatenate([x * x[0], np.sin(x)])


def _narrow(x):  # 3 inputs -> 2 outputs: reverse mode
    return np.stack([np.sum(x ** 3), x[0] * x[1]])


def _loss(x):
    return np.sum(np.sin(x) * x ** 2) + x[0] * x[2]


JACOBIANS = {
    "forward": _wide,
    "reverse": _narrow,
    "forward_float64_output": lambda x: _wide(x).astype(np.float64),
    "reverse_float64_output": lambda x: _narrow(x).astype(np.float64),
    "forward_constant_output": lambda x: np.ones(6),
    "reverse_constant_output": lambda x: np.ones(()),
    "integer_output": lambda x: np.argsort(x),
    "tree": lambda x: {"a": x * 2.0, "b": (np.sum(x), np.ones(2, np.float32))},
}


@pytest.mark.parametrize("name", sorted(JACOBIANS))
def test_jacobian_keeps_float32(name):
    f = JACOBIANS[name]
    got = ad.jacobian(f)(X32)
    want = ad.jacobian(f)(X32.astype(np.float64))
    for g, w in zip(ad.pytree.tree_leaves(got), ad.pytree.tree_leaves(want)):
        assert g.dtype == np.float32 and w.dtype == np.float64, name
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_both_modes_agree():
    f = _wide
    fwd = ad.jacobian(f)(X32)  # forward: fewer inputs than outputs
    rev = np.stack([ad.grad(lambda x, i=i: f(x)[i])(X32) for i in range(6)])
    assert fwd.dtype == rev.dtype == np.float32
    np.testing.assert_allclose(fwd, rev, rtol=1e-6)


def test_float64_input_with_float32_output_gives_float64():
    x = X32.astype(np.float64)
    for f in (_wide, _narrow):
        assert ad.jacobian(lambda x, f=f: f(x).astype(np.float32))(x).dtype == np.float64


def test_jacobian_blocks_of_mixed_inputs_keep_each_inputs_dtype():
    y64 = np.array([1.5, 2.0])

    def f(x, y):
        return np.concatenate([x * y[0], y * 2.0, np.ones(3)])

    jx, jy = ad.jacobian(f, argnums=(0, 1))(X32, y64)
    assert jx.dtype == np.float32 and jy.dtype == np.float64
    jx, jy = ad.jacobian(lambda x, y: np.sum(f(x, y)), argnums=(0, 1))(X32, y64)
    assert jx.dtype == np.float32 and jy.dtype == np.float64


SECOND_ORDER = {
    "hessian": lambda f, x: ad.hessian(f)(x),
    "hessian_diag": lambda f, x: ad.hessian_diag(f)(x),
    "hvp": lambda f, x: ad.hvp(f)(x, vectors=np.ones_like(x))[1],
    "hvp_float64_vectors": lambda f, x: ad.hvp(f)(x, vectors=np.ones(3))[1],
}

LOSSES = {"loss": _loss, "linear": lambda x: np.sum(x) * 2.0,
          "float64_inside": lambda x: np.sum(x.astype(np.float64) ** 3)}


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_keeps_float32(name, loss):
    f = LOSSES[loss]
    got = SECOND_ORDER[name](f, X32)
    want = SECOND_ORDER[name](f, X32.astype(np.float64))
    assert got.dtype == np.float32 and want.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_hessian_matches_central_differences_of_the_gradient():
    x = X32.astype(np.float64)
    eps = 1e-6
    g = ad.grad(_loss)
    fd = np.stack([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(ad.hessian(_loss)(X32), fd, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ad.hessian_diag(_loss)(X32), np.diag(fd), rtol=1e-4, atol=1e-4)


# --- the input's provider --------------------------------------------------------------------

xps = pytest.importorskip("array_api_strict")


def _strict_cases():
    def wide(x):
        xp = x.__array_namespace__()
        return xp.concat([x * x[0], xp.sin(x)])

    def narrow(x):
        xp = x.__array_namespace__()
        return xp.stack([xp.sum(x ** 3), x[0] * x[1]])

    def loss(x):
        xp = x.__array_namespace__()
        return xp.sum(xp.sin(x) * x ** 2) + x[0] * x[2]

    def constant(x):
        return x.__array_namespace__().ones(4)

    return {
        "jacobian_forward": lambda x: ad.jacobian(wide)(x),
        "jacobian_reverse": lambda x: ad.jacobian(narrow)(x),
        "jacobian_constant": lambda x: ad.jacobian(constant)(x),
        "hessian": lambda x: ad.hessian(loss)(x),
        "hessian_diag": lambda x: ad.hessian_diag(loss)(x),
        "hvp": lambda x: ad.hvp(loss)(x, vectors=x * 0.0 + 1.0)[1],
    }


STRICT = sorted(_strict_cases())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", STRICT)
def test_strict_inputs_give_strict_results(name, dtype):
    run = _strict_cases()[name]
    x = xps.asarray([0.5, -1.25, 2.0], dtype=getattr(xps, dtype))
    got = run(x)
    assert type(got) is type(x) and got.dtype == getattr(xps, dtype), name
    want = run(xps.asarray([0.5, -1.25, 2.0], dtype=xps.float64))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)


def test_zero_blocks_of_pass_through_inputs_keep_their_dtype():
    jx, jb, jk = ad.jacobian(lambda x, b, k: x * 2.0, argnums=(0, 1, 2))(
        X32, True, np.arange(2, dtype=np.int8))
    assert (jx.dtype, jb.dtype, jk.dtype) == (np.float32, np.bool_, np.int8)
    assert jb.shape == (3,) and jk.shape == (3, 2) and not jb.any() and not jk.any()

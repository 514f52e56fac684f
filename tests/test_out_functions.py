"""out= on NumPy array functions: the destination is updated functionally and returned, NumPy's
shape and casting rules for the destination hold, in dynamic and staged code and at order 2."""

import inspect

import numpy as np
import pytest

import advect as ad
from advect.numpy._functions import FUNCTIONS
from advect.numpy._out import HANDLES_OUT, out_position
from advect.testing import check_grads

X = np.array([0.5, 1.5, -2.0])
M = np.array([[1.0, 2.0], [3.0, -1.0]])

# (name, call(args..., out=buf) on the operands, operands, result shape)
CALLS = [
    ("sum", lambda a, out: np.sum(a, out=out), (X,), ()),
    ("prod", lambda a, out: np.prod(a, out=out), (X,), ()),
    ("max", lambda a, out: np.max(a, out=out), (X,), ()),
    ("min", lambda a, out: np.min(a, axis=0, out=out), (M,), (2,)),
    ("mean", lambda a, out: np.mean(a, axis=1, out=out), (M,), (2,)),
    ("var", lambda a, out: np.var(a, out=out), (X,), ()),
    ("std", lambda a, out: np.std(a, out=out), (X,), ()),
    ("cumsum", lambda a, out: np.cumsum(a, out=out), (X,), (3,)),
    ("cumprod", lambda a, out: np.cumprod(a, out=out), (X,), (3,)),
    ("take", lambda a, out: np.take(a, [2, 0], out=out), (X,), (2,)),
    ("round", lambda a, out: np.round(a * 3.7, 1, out=out), (X,), (3,)),
    ("dot", lambda a, out: np.dot(a, a, out=out), (X,), ()),
    ("matmul", lambda a, out: np.matmul(a, a, out=out), (M,), (2, 2)),
    ("outer", lambda a, out: np.outer(a, a, out=out), (X,), (3, 3)),
    ("einsum", lambda a, out: np.einsum("ij,jk->ik", a, a, out=out), (M,), (2, 2)),
    ("concatenate", lambda a, out: np.concatenate([a, a], out=out), (X,), (6,)),
    ("stack", lambda a, out: np.stack([a, a], out=out), (X,), (2, 3)),
    ("compress", lambda a, out: np.compress([True, False, True], a, out=out), (X,), (2,)),
    ("median", lambda a, out: np.median(a, out=out), (X,), ()),
    ("quantile", lambda a, out: np.quantile(a, 0.25, out=out), (X,), ()),
    ("trace", lambda a, out: np.trace(a, out=out), (M,), ()),
    ("ptp", lambda a, out: np.ptp(a, out=out), (X,), ()),
    ("nansum", lambda a, out: np.nansum(a, out=out), (X,), ()),
    ("nanmean", lambda a, out: np.nanmean(a, out=out), (X,), ()),
    ("fft", lambda a, out: np.fft.fft(a, out=out), (X,), (3,)),
    ("clip", lambda a, out: np.clip(a, -1.0, 1.0, out=out), (X,), (3,)),
    ("multi_dot", lambda a, out: np.linalg.multi_dot([a, a, a], out=out), (M,), (2, 2)),
]
DIFFERENTIABLE = [c for c in CALLS if c[0] not in ("fft",)]


def _traced(call, shape, dtype):
    def f(*operands):
        buf = np.zeros(shape, dtype=dtype, like=operands[0])
        result = call(*operands, out=buf)
        assert result is buf or not ad.is_traced(buf)  # NumPy may return a 0-d scalar
        return buf
    return f


@pytest.mark.parametrize("name, call, operands, shape", DIFFERENTIABLE, ids=lambda c: c
                         if isinstance(c, str) else "")
def test_out_values_and_gradients_match_numpy(name, call, operands, shape):
    f = _traced(call, shape, np.float64)
    want = call(*operands, out=np.zeros(shape))
    np.testing.assert_allclose(f(*operands), want)
    staged = ad.stage(f, *operands)
    np.testing.assert_allclose(staged(*operands), want)
    restored = ad.StagedProgram.from_dict(staged.to_dict())
    np.testing.assert_allclose(restored(*operands), want)
    if name not in ("round", "max", "min", "median", "quantile", "ptp", "clip"):
        check_grads(lambda *xs: f(*xs) * 1.0, operands, order=2)
    g = ad.grad(lambda *xs: np.sum(f(*xs)))(*operands)
    g_staged = ad.grad(ad.stage(lambda *xs: np.sum(f(*xs)), *operands))(*operands)
    np.testing.assert_allclose(g_staged, g)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.complex128, np.bool_])
@pytest.mark.parametrize("name, call, operands, shape", CALLS, ids=lambda c: c
                         if isinstance(c, str) else "")
def test_destination_casting_follows_numpy(name, call, operands, shape, dtype):
    try:
        want = call(*operands, out=np.zeros(shape, dtype))
    except Exception as e:  # noqa: BLE001 - NumPy's class is the oracle
        expected = type(e)
        for cls in (TypeError, ValueError):  # NumPy's UFuncTypeError & co. are subclasses
            if issubclass(expected, cls):
                expected = cls
        with pytest.raises(expected):
            ad.jvp(_traced(call, shape, dtype))(*operands[:1],
                                                tangents=np.ones_like(operands[0]))
        return
    value, tangent = ad.jvp(_traced(call, shape, dtype))(*operands[:1],
                                                         tangents=np.ones_like(operands[0]))
    assert value.dtype == want.dtype
    np.testing.assert_allclose(value, want, rtol=1e-6)
    if np.dtype(dtype).kind in "biu":
        assert not np.any(tangent)  # integer destinations get zero derivatives


def test_wrong_shape_positional_out_and_the_destination_rules():
    with pytest.raises(ValueError, match="shape"):
        ad.grad(lambda x: np.sum(np.sum(x, out=np.zeros(1, like=x))))(X)

    def positional(x):
        buf = np.zeros((), like=x)
        np.sum(x ** 2, None, None, buf)
        return buf

    assert ad.grad(positional)(X).tolist() == (2 * X).tolist()
    with pytest.raises(ad.TracingError, match="plain"):
        ad.grad(lambda x: np.sum(x, out=np.zeros(())))(X)
    with pytest.raises(ad.MutationError, match="input"):
        ad.grad(lambda x: np.sum(np.cumsum(x, out=x)))(X)
    with pytest.raises(ad.MutationError, match="input"):
        ad.stage(lambda x: np.cumsum(x, out=x), X)

    def owned_copy(x):
        y = x.copy()
        np.cumsum(y, out=y)  # an owned local copy may be the destination
        return np.sum(y)

    np.testing.assert_allclose(ad.grad(owned_copy)(X), [3.0, 2.0, 1.0])


def test_every_translated_function_with_out_takes_it():
    """Each translated NumPy function whose signature has out= goes through the out= path (or
    writes out= itself)."""
    missing = []
    for func in FUNCTIONS:
        try:
            params = inspect.signature(func).parameters
        except (TypeError, ValueError):
            continue
        if "out" in params and out_position(func) is None and func not in HANDLES_OUT:
            missing.append(func.__name__)
    assert not missing

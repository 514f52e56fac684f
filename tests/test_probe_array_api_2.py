"""Array API conformance probe (second round): traced calls on array-api-strict (and PyTorch)
arrays against the provider's eager call, in dynamic transforms and while staging: value, dtype,
container type and the refusal."""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad
from advect import ops
from advect.array_api import provider_revisions


def _ns(x, revision=None):
    return x.__array_namespace__(api_version=revision)


def _outcome(call):
    try:
        out = call()
    except Exception as e:  # noqa: BLE001 (the refusal's class is what is compared)
        return type(e)
    leaves = out if isinstance(out, tuple | list) else (out,)
    return [(str(v.dtype).rsplit(".", 1)[-1], tuple(v.shape), np.asarray(v).tolist())
            for v in leaves]


def _lifted(fn, xs):
    """``fn(*xs)`` with every array of ``xs`` a tracer, whatever its dtype: dynamic (jvp on a
    float anchor) and through a staged program."""
    def on_anchor(anchor):
        return fn(*[ops.where(ops.full_like(anchor, fill_value=True, shape=tuple(v.shape),
                                            dtype="bool"), v, v) for v in xs])

    anchor = xs[0].__array_namespace__().asarray(0.0)
    return (lambda: ad.jvp(on_anchor)(anchor, tangents=anchor)[0],
            lambda: ad.stage(fn, *xs)(*xs))


def _same_as_eager(xp, fn, *xs):
    want = _outcome(lambda: fn(xp, *xs))
    for call in _lifted(lambda *t: fn(_ns(t[0]), *t), xs):
        got = _outcome(call)
        if isinstance(want, type):
            assert isinstance(got, type) and issubclass(got, want), (got, want)
        else:
            assert got == want
    return want


# --- an explicit dtype= is the result's dtype, also below the 64-bit accumulator ---------------

NARROW = {
    "sum int8": lambda xp, x: xp.sum(x, dtype=xp.int8),
    "sum int8 axis": lambda xp, x: xp.sum(xp.reshape(x, (2, 2)), axis=1, dtype=xp.int8),
    "sum int16": lambda xp, x: xp.sum(x, dtype=xp.int16),
    "prod int8": lambda xp, x: xp.prod(x, dtype=xp.int8),
    "sum uint8": lambda xp, x: xp.sum(xp.astype(x, xp.uint8), dtype=xp.uint8),
    "cumulative_sum int8": lambda xp, x: xp.cumulative_sum(x, dtype=xp.int8),
    "cumulative_prod int8": lambda xp, x: xp.cumulative_prod(x, dtype=xp.int8,
                                                              include_initial=True),
    "trace int8": lambda xp, x: xp.linalg.trace(xp.reshape(x, (2, 2)), dtype=xp.int8),
}


@pytest.mark.parametrize("name", sorted(NARROW))
def test_an_explicit_narrow_dtype_is_the_result_dtype(name):
    strict = pytest.importorskip("array_api_strict")
    if "cumulative_prod" in name and not hasattr(strict, "cumulative_prod"):
        pytest.skip("this array-api-strict has no cumulative_prod")
    x = strict.asarray([100, 100, 3, 2], dtype=strict.int8)  # int8 sums and products wrap
    want = _same_as_eager(strict, NARROW[name], x)
    assert want[0][0] in ("int8", "int16", "uint8")


def test_an_explicit_narrow_dtype_on_numpy_and_torch():
    x = np.asarray([100.0, 100.0, 3.0])  # traced as floats, cast to int8 inside
    got = ad.vjp(lambda v: _ns(v).sum(_ns(v).astype(v, np.int8), dtype=np.int8))(x)[0]
    assert got.dtype == np.int8 and int(got) == int(np.sum(x.astype(np.int8), dtype=np.int8))
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    t = torch.tensor([100.0, 100.0, 3.0], dtype=torch.float64)

    def f(v):
        return _ns(v).cumulative_sum(_ns(v).astype(v, torch.int8), dtype=torch.int8)

    for got in (ad.vjp(f)(t)[0], ad.stage(f, t)(t)):
        assert got.dtype == torch.int8 and got.tolist() == [100, -56, -53]


def test_float_gradients_through_a_dtype_keep_their_precision():
    strict = pytest.importorskip("array_api_strict")
    x = strict.asarray([0.5, 2.0, 3.0], dtype=strict.float32)

    def loss(v):
        xp = _ns(v)
        return xp.astype(xp.sum(xp.cumulative_prod(v, dtype=xp.float64)), xp.float32)

    for grad in (ad.grad(loss)(x), ad.grad(ad.stage(loss, x))(x)):
        assert grad.dtype == strict.float32
        np.testing.assert_allclose(np.asarray(grad), [1 + 2 + 6, 0.5 + 1.5, 1.0], rtol=1e-6)


# --- meshgrid and broadcast_arrays: tuples from revision 2025.12 on ----------------------------

def test_meshgrid_and_broadcast_arrays_give_the_revisions_sequence_type():
    strict = pytest.importorskip("array_api_strict")
    if "2025.12" not in provider_revisions(strict):
        pytest.skip("this array-api-strict serves no 2025.12")
    x = strict.asarray([1.0, 2.0, 3.0])
    for revision, kind in (("2024.12", list), ("2025.12", tuple)):
        def f(v, revision=revision):
            xp = _ns(v, revision)
            return xp.meshgrid(v, v[:2]), xp.broadcast_arrays(v, xp.reshape(v, (3, 1)))

        for mesh, arrays in (ad.vjp(f)(x)[0], ad.stage(f, x, array_api_version=revision)(x)):
            assert type(mesh) is kind and type(arrays) is kind
    # the eager provider at its default flags agrees with our default revision
    assert type(strict.meshgrid(x, x)) is type(ad.vjp(lambda v: _ns(v).meshgrid(v, v))(x)[0])


# --- refusals the provider makes and the translation did not -----------------------------------

REFUSALS = {  # name -> (call, the dtypes of its arguments, each [1.0, 2.0, 3.0])
    "meshgrid of two dtypes": (lambda xp, a, b: xp.meshgrid(a, b), ("float64", "float32")),
    "repeat by floats": (lambda xp, a: xp.repeat(a, xp.asarray([1.0, 2.0, 0.0])), ("float64",)),
    "take at floats": (lambda xp, a: xp.take(a, xp.asarray([0.0, 1.0])), ("float64",)),
    "searchsorted by a float sorter": (
        lambda xp, a: xp.searchsorted(a, a, sorter=xp.asarray([0.0, 1.0, 2.0])), ("float64",)),
    "cross of 2-vectors": (lambda xp, a: xp.linalg.cross(xp.reshape(a[:2], (1, 2)),
                                                         xp.reshape(a[:2], (1, 2))), ("float64",)),
    "diagonal of a vector": (lambda xp, a: xp.linalg.diagonal(a), ("float64",)),
    "fft of real input": (lambda xp, a: xp.fft.fft(a), ("float64",)),
    "ifftn of real input": (lambda xp, a: xp.fft.ifftn(a), ("float64",)),
    "rfft of complex input": (lambda xp, a: xp.fft.rfft(xp.astype(a, xp.complex128)),
                              ("float64",)),
    "ihfft of complex input": (lambda xp, a: xp.fft.ihfft(xp.astype(a, xp.complex64)),
                               ("float32",)),
    "fft norm": (lambda xp, a: xp.fft.fft(xp.astype(a, xp.complex128), norm="bad"),
                 ("float64",)),
}


@pytest.mark.parametrize("name", sorted(REFUSALS))
def test_traced_calls_refuse_what_strict_refuses(name):
    strict = pytest.importorskip("array_api_strict")
    fn, dtypes = REFUSALS[name]
    xs = [strict.asarray([1.0, 2.0, 3.0], dtype=getattr(strict, d)) for d in dtypes]
    if not isinstance(_outcome(lambda: fn(strict, *xs)), type):
        pytest.skip("this array-api-strict accepts the call")
    assert _same_as_eager(strict, fn, *xs) in (TypeError, ValueError)


def test_torch_keeps_its_own_leniency():
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    for got in (ad.vjp(lambda v: _ns(v).fft.fft(v))(x)[0],
                ad.stage(lambda v: _ns(v).fft.fft(v), x)(x)):
        np.testing.assert_allclose(got.numpy(), np.fft.fft(x.numpy()))


def test_matrix_rank_takes_one_tolerance_per_matrix():
    strict = pytest.importorskip("array_api_strict")
    a = np.stack([np.eye(3), np.diag([1.0, 0.5, 0.01])])
    rtol = [0.1, 0.9]
    for xp in (np, strict):
        x = xp.asarray(a)

        def f(v, xp=xp):
            return _ns(v).linalg.matrix_rank(v, rtol=xp.asarray(rtol))

        assert np.asarray(f(x)).tolist() == [3, 1]
        for got in (ad.vjp(f)(x)[0], ad.stage(f, x)(x)):
            assert np.asarray(got).tolist() == [3, 1]
    # a traced tolerance too
    x = strict.asarray(a)
    got = ad.vjp(lambda v, t: _ns(v).linalg.matrix_rank(v, rtol=t), argnums=(0, 1))(
        x, strict.asarray(rtol))[0]
    assert np.asarray(got).tolist() == [3, 1]


# --- x op= y keeps x's dtype: array-api-strict refuses a promotion that changes it --------------

def _inplace(x, y):
    x = x * 1
    x += y
    return x


def test_inplace_operators_refuse_a_dtype_change_on_strict():
    strict = pytest.importorskip("array_api_strict")
    f32 = strict.asarray([1.0, 2.0], dtype=strict.float32)
    i8 = strict.asarray([1, 2], dtype=strict.int8)
    for x, y in ((f32, strict.asarray([1.0, 2.0])), (i8, strict.asarray([1, 2]))):
        assert _same_as_eager(strict, lambda xp, a, b: _inplace(a, b), x, y) is TypeError
    # what keeps the dtype still works: a Python scalar, or a wider right operand's kind
    for y in (2.5, strict.asarray([1.0, 1.0], dtype=strict.float32)):
        want = _same_as_eager(strict, lambda xp, a, y=y: _inplace(a, y), f32)
        assert want[0][0] == "float32"


def test_inplace_operators_cast_where_the_provider_casts():
    x, y = np.ones(2, dtype=np.float32), np.ones(2)
    for got in (ad.vjp(_inplace, argnums=(0, 1))(x, y)[0], ad.stage(_inplace, x, y)(x, y)):
        assert got.dtype == np.float32
    torch = pytest.importorskip("torch")
    pytest.importorskip("array_api_compat")
    x, y = torch.ones(2, dtype=torch.float32), torch.ones(2, dtype=torch.float64)
    assert _inplace(x, y).dtype == torch.float32
    for got in (ad.vjp(_inplace, argnums=(0, 1))(x, y)[0], ad.stage(_inplace, x, y)(x, y)):
        assert got.dtype == torch.float32


# --- a cached verdict of the provider never depends on the first value it saw -------------------

def test_probe_verdicts_do_not_depend_on_the_value_probed_first():
    strict = pytest.importorskip("array_api_strict")
    i8 = strict.asarray([1, -2, 3], dtype=strict.int8)
    f64 = strict.asarray([[0.5, 1.5], [3.0, 1.0]])
    # each pair shares what the old cache key held (dtype, rank, a scalar's type), in both orders
    pairs = [
        (lambda xp, x: xp.add(x, 1000), lambda xp, x: xp.add(x, 1), i8),
        (lambda xp, x: xp.subtract(x, 3), lambda xp, x: xp.subtract(x, -129), i8),
        (lambda xp, x: xp.pow(x, -1), lambda xp, x: xp.pow(x, 2), i8),
        (lambda xp, x: xp.clip(x, 2.0, 1.0), lambda xp, x: xp.clip(x, 0.0, 1.0), f64),
        (lambda xp, x: xp.clip(x, min=0.0, max=1.0), lambda xp, x: xp.clip(x, min=2.0, max=1.0),
         f64),
        (lambda xp, x: xp.linalg.matrix_norm(x, ord=3.0),
         lambda xp, x: xp.linalg.matrix_norm(x, ord=float("inf")), f64),
    ]
    for first, second, x in pairs:
        for fn in (first, second):
            _same_as_eager(strict, fn, x)

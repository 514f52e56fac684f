"""Float16/float32 precision and dtype probes: one test per fixed bug."""

import numpy as np

import advect as ad


def test_convolve_float16_accumulates_like_numpy():
    # long float16 convolutions summed the shifted terms sequentially in float16: 4096 ones of
    # about 1.5 saturated at 4096 (NumPy's float16 dot accumulates in float32: about 6137)
    rng = np.random.default_rng(1)
    x = (rng.random(4096) + 1.0).astype(np.float16)
    f = lambda a: np.convolve(a, np.ones(4096, np.float16), "valid")  # noqa: E731
    exact = np.convolve(x.astype(np.float64), np.ones(4096), "valid")
    for got in (ad.stage(f, x)(x), ad.vjp(f)(x)[0], ad.jvp(f)(x, tangents=np.ones_like(x))[0]):
        assert np.asarray(got).dtype == np.float16
        np.testing.assert_allclose(np.asarray(got, np.float64), exact, rtol=2e-3)
    g = ad.grad(lambda a: np.sum(np.correlate(a, a[:64])))(x[:512])
    assert g.dtype == np.float16
    g64 = ad.grad(lambda a: np.sum(np.correlate(a, a[:64])))(x[:512].astype(np.float64))
    np.testing.assert_allclose(g.astype(np.float64), g64, rtol=4e-3)


def test_convolve_float32_pairwise():
    rng = np.random.default_rng(1)
    x = (rng.random(4096) * 1e-3 + 1.0).astype(np.float32)
    f = lambda a: np.convolve(a, np.ones(4096, np.float32), "valid")  # noqa: E731
    exact = np.convolve(x.astype(np.float64), np.ones(4096), "valid")
    got = ad.stage(f, x)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got.astype(np.float64), exact, rtol=1e-7)


def test_percentile_traced_python_scalar_q_keeps_float16():
    # a Python float q passed as an input (a weak tracer) widened the result to float64
    a = np.array([0.3, 1.7, 0.9, 2.2], np.float16)
    for f, q in ((lambda a, q: np.percentile(a, q), 62.5),
                 (lambda a, q: np.quantile(a, q, method="midpoint"), 0.625),
                 (lambda a, q: np.nanquantile(a, q), 0.4)):
        ref = f(a, q)
        assert ref.dtype == np.float16
        for got in (ad.stage(f, a, q)(a, q), ad.vjp(f, (0, 1))(a, q)[0],
                    ad.jvp(f, (0, 1))(a, q, tangents=(np.ones_like(a), 1.0))[1]):
            assert np.asarray(got).dtype == np.float16
        np.testing.assert_allclose(np.asarray(ad.stage(f, a, q)(a, q), np.float64),
                                   np.float64(ref))
        ga, _ = ad.grad(f, (0, 1))(a, q)
        assert ga.dtype == np.float16


def test_tensordot_python_scalar_operand_gradient():
    # the transpose of tensordot(x, s, 0) with a traced Python float s crashed ('float' has no
    # ndim); np.tensordot makes arrays of its operands, so the result is float64
    x = np.array([0.6, 1.3, 0.9], np.float16)
    f = lambda x, s: np.tensordot(x, s, 0)  # noqa: E731
    assert f(x, 1.25).dtype == np.float64
    value, pullback = ad.vjp(f, (0, 1))(x, 1.25)
    assert value.dtype == np.float64
    gx, gs = pullback(np.ones(3))
    assert gx.dtype == np.float16
    np.testing.assert_allclose(gx, 1.25)
    # (gs is float16-rounded: a weak tangent stays weak through astype, see the report)
    np.testing.assert_allclose(gs, float(np.sum(x, dtype=np.float64)), rtol=1e-3)
    gx, gs = ad.grad(lambda x, s: np.sum(f(x, s)), (0, 1))(x, 1.25)
    assert gx.dtype == np.float16

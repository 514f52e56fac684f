"""Probes of an ML researcher porting PyTorch/JAX training code to NumPy + Advect: a small
transformer block, MLPs with tanh/relu/gelu, softmax cross-entropy with the logsumexp trick,
layer/batch norm, masked attention, 1-D/2-D convolution, dropout masks, embeddings with
repeated indices, ``np.add.at`` segment sums and Adam loops over a staged
``value_and_grad``. Every program is checked against eager NumPy (values, dtypes, Python
types), dynamic against staged against restored-from-JSON, grad against jvp and central
differences (float64), and JAX where the semantics match."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view

import advect as ad
from advect.pytree import tree_flatten, tree_leaves, tree_map, tree_unflatten

RNG = np.random.default_rng(20261202)
F32 = np.float32


def _restore(program):
    return ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict(), sort_keys=True)))


def _same_tree(a, b, *, exact=True, rtol=1e-5, atol=1e-7):
    """Same structure, leaf Python types and dtypes; values bit-equal or close."""
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert ta == tb, (ta, tb)
    for x, y in zip(la, lb):
        assert type(x) is type(y), (type(x), type(y))
        assert np.result_type(x) == np.result_type(y), (np.result_type(x), np.result_type(y))
        assert np.shape(x) == np.shape(y)
        if exact:
            np.testing.assert_array_equal(x, y)
        else:
            np.testing.assert_allclose(x, y, rtol=rtol, atol=atol)


def _randn(*shape, dtype=F32, scale=0.5):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


# --- a transformer block: embeddings, layer norm, masked attention, GELU, tied logits ---------

def _block_for(xp, erf):
    def layer_norm(x, g, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / xp.sqrt(var + 1e-5) * g + b

    def block(p, tokens, pad):
        x = p["emb"][tokens] + p["pos"][: tokens.shape[1]]  # repeated tokens: summed gradients
        B, T, D = x.shape
        h = layer_norm(x, *p["ln1"])
        qkv = (h @ p["wqkv"]).reshape(B, T, 3, 2, D // 2).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        s = xp.einsum("bhtd,bhsd->bhts", q, k) * (D // 2) ** -0.5
        keep = xp.tril(xp.ones((T, T), dtype=bool))[None, None] & pad[:, None, None, :]
        s = xp.where(keep, s, -xp.inf)
        s = s - s.max(-1, keepdims=True)
        a = xp.exp(s)
        a = a / a.sum(-1, keepdims=True)
        x = x + (a @ v).transpose(0, 2, 1, 3).reshape(B, T, D) @ p["wo"]
        h = layer_norm(x, *p["ln2"]) @ p["w1"]
        h = 0.5 * h * (1 + erf(h / math.sqrt(2)))
        x = x + h @ p["w2"]
        logits = x @ p["emb"].T
        m = logits.max(-1, keepdims=True)
        logp = logits - m - xp.log(xp.exp(logits - m).sum(-1, keepdims=True))
        nll = -xp.take_along_axis(logp[:, :-1], tokens[:, 1:, None], axis=-1)[..., 0]
        w = pad[:, 1:].astype(logits.dtype)
        return (nll * w).sum() / w.sum(), {"tokens": w.sum(), "pred": logits.argmax(-1)}

    return block


def _block_params(dtype, V=7, D=4, T=5):
    return {"emb": _randn(V, D, dtype=dtype), "pos": _randn(T, D, dtype=dtype),
            "ln1": (1 + _randn(D, dtype=dtype), _randn(D, dtype=dtype)),
            "ln2": [1 + _randn(D, dtype=dtype), _randn(D, dtype=dtype)],
            "wqkv": _randn(D, 3 * D, dtype=dtype), "wo": _randn(D, D, dtype=dtype),
            "w1": _randn(D, 8, dtype=dtype), "w2": _randn(8, D, dtype=dtype)}


TOKENS = np.array([[1, 3, 3, 0, 6], [2, 2, 5, 1, 1]])
PAD = np.array([[True] * 5, [True, True, True, False, False]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transformer_block_dynamic_staged_restored(dtype):
    special = pytest.importorskip("scipy.special")
    block = _block_for(np, special.erf)
    params = _block_params(dtype)
    eager = block(params, TOKENS, PAD)
    value, grads, aux = ad.value_and_grad(block, has_aux=True)(params, TOKENS, PAD)
    _same_tree((value, aux), eager)
    assert [g.dtype for g in tree_leaves(grads)] == [p.dtype for p in tree_leaves(params)]
    assert not any(np.isnan(g).any() for g in tree_leaves(grads))  # -inf masks stay finite

    program = ad.stage(block, params, TOKENS, PAD)
    _same_tree(program(params, TOKENS, PAD), eager)
    step = ad.value_and_grad(program, has_aux=True)
    staged = step(params, TOKENS, PAD)
    _same_tree(staged[0], value)
    _same_tree(staged[2], aux)
    _same_tree(staged[1], grads, exact=False, rtol=1e-5 if dtype == np.float32 else 1e-12)
    _same_tree(_restore(step)(params, TOKENS, PAD), staged)


def test_transformer_block_grad_matches_jvp_fd_and_jax():
    special = pytest.importorskip("scipy.special")
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    block = _block_for(np, special.erf)
    params = _block_params(np.float64)
    grads, _ = ad.grad(block, has_aux=True)(params, TOKENS, PAD)
    tangent = tree_map(lambda p: RNG.standard_normal(p.shape), params)
    directional = sum(np.sum(g * t) for g, t in zip(tree_leaves(grads), tree_leaves(tangent)))
    (_, _), (dvalue, daux) = ad.jvp(block)(params, TOKENS, PAD, tangents=tangent)
    np.testing.assert_allclose(dvalue, directional, rtol=1e-12)
    assert daux["tokens"] == 0.0
    eps = 1e-6
    shifted = [block(tree_map(lambda p, t, s=s: p + s * eps * t, params, tangent), TOKENS, PAD)[0]
               for s in (1, -1)]
    np.testing.assert_allclose((shifted[0] - shifted[1]) / (2 * eps), directional, rtol=1e-7)

    block_j = _block_for(jax.numpy, jax.scipy.special.erf)
    (_, _), grads_j = jax.jit(jax.value_and_grad(block_j, has_aux=True))(params, TOKENS, PAD)
    for g, gj in zip(tree_leaves(grads), jax.tree_util.tree_leaves(grads_j)):
        np.testing.assert_allclose(g, np.asarray(gj), rtol=1e-10, atol=1e-12)


# --- an MLP classifier trained with Adam over a staged value_and_grad ------------------------

def _mlp_loss(params, batch, *, wd=1e-4):
    x, y = batch
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i < len(params) - 1:
            x = np.tanh(x)
    m = x.max(axis=-1, keepdims=True)
    logz = np.log(np.exp(x - m).sum(axis=-1, keepdims=True)) + m
    nll = -(np.take_along_axis(x, y[:, None], axis=-1) - logz).mean()
    onehot = np.eye(x.shape[-1], dtype=x.dtype, like=x)[y]  # like=: the index may be staged
    ce = -np.mean(np.sum(onehot * (x - logz), axis=-1))
    reg = wd * sum((w ** 2).sum() for w, _ in params)
    return nll + reg, {"ce": ce, "acc": (x.argmax(-1) == y).mean()}


def _mlp_loss_jax(params, batch, wd=1e-4):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x, y = batch
    for i, (w, b) in enumerate(params):
        x = x @ w + b
        if i < len(params) - 1:
            x = jnp.tanh(x)
    logz = jax.nn.logsumexp(x, axis=-1, keepdims=True)
    nll = -(jnp.take_along_axis(x, y[:, None], axis=-1) - logz).mean()
    reg = wd * sum((w ** 2).sum() for w, _ in params)
    return nll + reg, {"ce": nll, "acc": (x.argmax(-1) == y).mean()}


SIZES = [4, 8, 3]
MLP = [(_randn(a, b), np.zeros(b, F32)) for a, b in zip(SIZES, SIZES[1:])]
BATCH = (_randn(16, 4, scale=1.0), RNG.integers(0, 3, 16))


def _adam(step, params, n=12, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8):
    leaves, treedef = tree_flatten(params)
    m = [np.zeros_like(p) for p in leaves]
    v = [np.zeros_like(p) for p in leaves]
    history = []
    for t in range(1, n + 1):
        out = step(tree_unflatten(treedef, leaves), BATCH)
        (value, _), grads = out if len(out) == 2 else ((out[0], out[2]), out[1])
        grads = [np.asarray(g) for g in tree_leaves(grads)]
        assert [g.dtype for g in grads] == [p.dtype for p in leaves]
        m = [b1 * mi + (1 - b1) * g for mi, g in zip(m, grads)]
        v = [b2 * vi + (1 - b2) * g * g for vi, g in zip(v, grads)]
        leaves = [p - lr * (mi / (1 - b1 ** t)) / (np.sqrt(vi / (1 - b2 ** t)) + eps)
                  for p, mi, vi in zip(leaves, m, v)]
        assert all(p.dtype == F32 for p in leaves)
        history.append(value)
    return history, leaves


def test_adam_on_staged_value_and_grad_matches_dynamic_restored_and_jax():
    jax = pytest.importorskip("jax")
    step = ad.value_and_grad(ad.stage(_mlp_loss, MLP, BATCH), has_aux=True)
    value, grads, aux = step(MLP, BATCH)
    eager_value, eager_aux = _mlp_loss(MLP, BATCH)
    _same_tree((value, aux), (eager_value, eager_aux))
    assert type(value) is np.float32 and type(aux["acc"]) is np.float64
    reg = 1e-4 * sum(float(np.sum(w.astype(float) ** 2)) for w, _ in MLP)
    np.testing.assert_allclose(aux["ce"], value - reg, rtol=1e-5)  # one-hot CE == gathered NLL

    staged_history, staged_params = _adam(step, MLP)
    restored_history, restored_params = _adam(_restore(step), MLP)
    dynamic_history, dynamic_params = _adam(ad.value_and_grad(_mlp_loss, has_aux=True), MLP)
    jax_step = jax.jit(jax.value_and_grad(_mlp_loss_jax, has_aux=True))
    jax_history, jax_params = _adam(jax_step, MLP)
    assert restored_history == staged_history
    _same_tree(restored_params, staged_params)
    assert staged_history[-1] < staged_history[0]
    np.testing.assert_allclose(staged_history, dynamic_history, rtol=1e-6)
    np.testing.assert_allclose(staged_history, np.asarray(jax_history, float), rtol=1e-5)
    for a, b, c in zip(staged_params, dynamic_params, jax_params):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(a, np.asarray(c), rtol=1e-5, atol=1e-6)


def _relu_loss(p, x, y):
    h = np.maximum(x @ p["w1"] + p["b1"], 0)
    logits = h @ p["w2"]
    m = logits.max(-1, keepdims=True)
    logp = logits - m - np.log(np.exp(logits - m).sum(-1, keepdims=True))
    return -np.take_along_axis(logp, y[:, None], 1).mean()


def _train_step(p, state, x, y, lr=1e-2, b1=0.9, b2=0.999, eps=1e-8, wd=1e-4):
    """A JAX-style jitted step: the dynamic grad runs inside the staged function."""
    value, g = ad.value_and_grad(_relu_loss)(p, x, y)
    t = state["t"] + 1
    m = tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], g)
    v = tree_map(lambda v, g: b2 * v + (1 - b2) * g * g, state["v"], g)
    mc, vc = 1 / (1 - b1 ** t), 1 / (1 - b2 ** t)
    new = tree_map(lambda p, m, v: p - lr * (m * mc / (np.sqrt(v * vc) + eps) + wd * p),
                   p, m, v)
    return new, {"m": m, "v": v, "t": t}, value


def test_staged_train_step_with_grad_inside():
    params = {"w1": _randn(4, 8), "b1": np.zeros(8, F32), "w2": _randn(8, 3)}
    state = {"m": tree_map(np.zeros_like, params), "v": tree_map(np.zeros_like, params),
             "t": np.asarray(0, F32)}
    x, y = BATCH
    step = ad.stage(_train_step, params, state, x, y)
    restored = _restore(step)
    eager, staged, saved = (params, state), (params, state), (params, state)
    for _ in range(8):
        *eager, eager_value = _train_step(*eager, x, y)
        *staged, staged_value = step(*staged, x, y)
        *saved, saved_value = restored(*saved, x, y)
        assert type(staged_value) is type(eager_value) is np.float32
        assert saved_value == staged_value
    _same_tree(saved, staged)
    _same_tree(staged, eager, exact=False, rtol=1e-5, atol=1e-7)


# --- selection forms of grad on staged and dynamic functions ---------------------------------

def _linear_loss(w, b, x, y, wd, *, temp, scale=1.0):
    logits = (x @ w + b) / temp
    m = logits.max(-1)
    logz = np.log(np.sum(np.exp(logits - m[:, None]), -1)) + m
    nll = np.mean(logz - np.take_along_axis(logits, y[:, None], 1)[:, 0])
    return scale * nll + wd * np.sum(w * w), {"nll": nll}


LIN_ARGS = (_randn(3, 4), np.zeros(4, F32), _randn(5, 3), RNG.integers(0, 4, 5), 1e-3)
LIN_KW = {"temp": np.asarray(2.0, F32)}


@pytest.mark.parametrize("selection", [
    {"argnums": (0, 1)}, {"argnums": (0, 4)}, {"argnums": 4}, {"argnums": -1},
    {"argnums": (0, 3)}, {"argnames": ("temp",)}, {"argnums": 0, "argnames": ("temp",)},
])
def test_grad_selection_staged_matches_dynamic(selection):
    program = ad.stage(_linear_loss, *LIN_ARGS, kw_specs={"temp": ad.ArraySpec((), "float32")})
    dynamic = ad.grad(_linear_loss, has_aux=True, **selection)(*LIN_ARGS, **LIN_KW)
    staged = ad.grad(program, has_aux=True, **selection)(*LIN_ARGS, **LIN_KW)
    _same_tree(staged, dynamic, exact=False, rtol=1e-6)
    _same_tree(_restore(ad.grad(program, has_aux=True, **selection))(*LIN_ARGS, **LIN_KW),
               staged)


# --- building blocks: eager vs dynamic vs staged vs restored, and central differences ---------

def _batch_norm(p, x):
    mu = x.mean(axis=0, keepdims=True)
    var = x.var(axis=0, ddof=1, keepdims=True)
    return np.mean(np.tanh(p["gamma"] * (x - mu) / np.sqrt(var + 1e-5) + p["beta"]) ** 2)


def _conv1d(w, x):
    y = np.einsum("bclk,ock->bol", sliding_window_view(x, w.shape[-1], axis=-1), w)
    return np.sum(np.maximum(y, 0) ** 2)


def _conv2d(w, x):
    win = sliding_window_view(x, (3, 3), axis=(-2, -1))[:, :, ::2]
    return np.sum(np.einsum("bchwij,ocij->bohw", win, w) ** 2)


def _convolve(w, x):
    return (np.sum(np.convolve(x, w, mode="valid") ** 2) + np.sum(np.convolve(x, w, "same"))
            + np.sum(np.correlate(x, w, "full") ** 2))


def _embedding(p, tokens):
    return np.sum(np.tanh(p["E"][tokens].mean(axis=1) @ p["W"]) ** 2)


def _take_clip(E, tokens):
    return np.sum(np.take(E, tokens, axis=0, mode="clip") ** 3)


def _segment_sum(x, ids):
    out = np.zeros_like(x, shape=(3, x.shape[1]))
    np.add.at(out, ids, x)
    return np.sum(np.sin(out))


def _scatter_into_param(E, ids, delta):
    E = E.copy()
    np.add.at(E, ids, delta)
    return np.sum(np.sin(E))


def _dropout(w, x, mask, rate=0.5):
    h = np.maximum(x @ w, 0.0)
    return np.mean(np.where(mask, h / (1.0 - rate), 0.0) ** 2)


def _gelu_tanh(x):
    c = math.sqrt(2 / math.pi)
    return np.sum(0.5 * x * (1 + np.tanh(c * (x + 0.044715 * np.power(x, 3)))))


def _bce_logits(z, t):
    return np.mean(np.maximum(z, 0) - z * t + np.log1p(np.exp(-np.abs(z))))


def _label_smoothing(logits, y, eps=0.1):
    k = logits.shape[-1]
    target = np.full_like(logits, eps / k)
    np.put_along_axis(target, y[:, None], 1 - eps + eps / k, axis=1)
    logp = logits - np.log(np.sum(np.exp(logits), -1, keepdims=True))
    return -np.mean(np.sum(target * logp, axis=-1))


def _cosine_similarity(E):
    n = E / np.linalg.norm(E, axis=-1, keepdims=True)
    return np.sum(np.triu(n @ n.T, 1) ** 2)


def _top2(x):
    idx = np.argsort(-x, axis=-1)[:, :2]
    return np.sum(np.take_along_axis(x, idx, axis=-1) ** 2)


def _rnn(p, xs):
    h = np.zeros((xs.shape[0], p["wh"].shape[0]), dtype=xs.dtype)
    for t in range(xs.shape[1]):
        h = np.tanh(xs[:, t] @ p["wx"] + h @ p["wh"] + p["b"])
    return np.mean(h ** 2)


IDS = np.array([0, 2, 2, 1, 0])
CASES = {
    "batch_norm": (_batch_norm, ({"gamma": _randn(4), "beta": _randn(4)}, _randn(5, 4)), (0, 1)),
    "conv1d": (_conv1d, (_randn(3, 2, 3), _randn(2, 2, 7)), (0, 1)),
    "conv2d_strided": (_conv2d, (_randn(2, 2, 3, 3), _randn(1, 2, 7, 6)), (0, 1)),
    "convolve": (_convolve, (_randn(3), _randn(7)), (0, 1)),
    "embedding": (_embedding, ({"E": _randn(6, 3), "W": _randn(3, 2)},
                               np.array([[1, 1, 4], [-6, 1, 1]])), 0),
    "take_clip": (_take_clip, (_randn(6, 3), np.array([[0, 9, 2], [-3, 5, 5]])), 0),
    "segment_sum": (_segment_sum, (_randn(5, 4), IDS), 0),
    "scatter_into": (_scatter_into_param, (_randn(6, 3), np.array([1, 1, 3, 1]), _randn(4, 3)),
                     (0, 2)),
    "dropout": (_dropout, (_randn(2, 3), _randn(5, 2), RNG.random((5, 3)) > 0.5), (0, 1)),
    "gelu_tanh": (_gelu_tanh, (_randn(4, 5, scale=2.0),), 0),
    "bce_logits": (_bce_logits, (_randn(4, 5, scale=2.0), (RNG.random((4, 5)) > 0.5) * F32(1)),
                   0),
    "label_smoothing": (_label_smoothing, (_randn(4, 5), RNG.integers(0, 5, 4)), 0),
    "cosine": (_cosine_similarity, (_randn(6, 3),), 0),
    "top2": (_top2, (_randn(6, 3),), 0),
    "rnn": (_rnn, ({"wx": _randn(3, 4), "wh": _randn(4, 4), "b": np.zeros(4, F32)},
                   _randn(2, 5, 3)), (0, 1)),
}
ULP_OFF = {"convolve", "conv2d_strided"}  # NumPy's BLAS dot / einsum on a strided view sum
# in their own order


@pytest.mark.parametrize("name", sorted(CASES))
def test_building_block_float32_staged_matches_eager(name):
    fn, args, argnums = CASES[name]
    eager = fn(*args)
    value, grads = ad.value_and_grad(fn, argnums)(*args)
    program = ad.stage(fn, *args)
    step = ad.value_and_grad(program, argnums)
    staged_value, staged_grads = step(*args)
    exact = name not in ULP_OFF
    _same_tree(program(*args), eager, exact=exact)
    _same_tree(value, eager, exact=exact)
    _same_tree(staged_value, eager, exact=exact)
    leaves = [a for i, a in enumerate(args)
              if i in (argnums if isinstance(argnums, tuple) else (argnums,))]
    assert [g.dtype for g in tree_leaves(grads)] == [a.dtype for a in tree_leaves(leaves)]
    _same_tree(staged_grads, grads, exact=False, rtol=1e-5, atol=1e-6)
    _same_tree(_restore(step)(*args), (staged_value, staged_grads))


def _as64(tree):
    return tree_map(lambda a: a.astype(np.float64) if a.dtype == F32 else a, tree)


@pytest.mark.parametrize("name", sorted(CASES))
def test_building_block_float64_central_differences(name):
    fn, args, argnums = CASES[name]
    args = _as64(args)
    chosen = argnums if isinstance(argnums, tuple) else (argnums,)
    tangent = tuple(tree_map(lambda a: RNG.standard_normal(a.shape), args[i]) for i in chosen)
    grads = ad.grad(fn, chosen)(*args)
    directional = sum(np.sum(g * t) for g, t in zip(tree_leaves(grads), tree_leaves(tangent)))
    _, forward = ad.jvp(fn, chosen)(*args, tangents=tangent)
    np.testing.assert_allclose(forward, directional, rtol=1e-10)
    eps = 1e-6
    values = []
    for s in (1, -1):
        moved = list(args)
        for i, t in zip(chosen, tangent):
            moved[i] = tree_map(lambda a, t, s=s: a + s * eps * t, args[i], t)
        values.append(fn(*moved))
    np.testing.assert_allclose((values[0] - values[1]) / (2 * eps), directional,
                               rtol=1e-6, atol=1e-8)


# --- float16 statistics: NumPy's var and nanmean keep a float16 mean ------------------------

F16 = (RNG.standard_normal((6, 5)) * 3).astype(np.float16)
F16_NAN = np.where(RNG.random((6, 5)) < 0.2, np.nan, F16).astype(np.float16)


@pytest.mark.parametrize("fn", [
    lambda x: np.var(x, axis=0, ddof=1), lambda x: np.std(x, axis=1), lambda x: np.var(x),
    lambda x: x.var(axis=-1, keepdims=True, ddof=2), lambda x: np.var(x, 0, dtype=np.float32),
    lambda x: np.nanvar(x, axis=0, ddof=1), lambda x: np.nanmean(x, 0), lambda x: np.nanmean(x),
    lambda x: np.nanstd(x, axis=1),
], ids=["var", "std", "var_all", "var_keepdims", "var_dtype", "nanvar", "nanmean",
        "nanmean_all", "nanstd"])
@pytest.mark.parametrize("x", [F16, F16_NAN], ids=["finite", "nan"])
def test_float16_statistics_bit_equal_to_numpy(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = fn(x)
        staged = ad.stage(fn, x)(x)
        dynamic, _ = ad.jvp(fn)(x, tangents=np.ones_like(x))
    for got in (staged, dynamic):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


# --- PyTorch-style gathers: logp[range(B), y] and tuple entries index as NumPy reads them -----

LOGP = _randn(5, 4)
Y5 = np.array([0, 3, 1, 2, 2])


@pytest.mark.parametrize("key", [
    (range(5), Y5), range(2), (range(1, 5, 2), slice(1, None)), (range(0),), ((0, 1), Y5[:2]),
    [(0, 1), (1, 2)], ((),), ((True, False, True, False, True),), (range(-2, 0), Ellipsis, None),
], ids=["range_y", "range", "range_slice", "empty_range", "tuple_y", "list_of_tuples",
        "empty_tuple", "bool_tuple", "negative_range"])
def test_sequence_index_entries(key):
    expected = LOGP[key]
    _same_tree(ad.stage(lambda p: p[key], LOGP)(LOGP), expected)
    grads = ad.grad(lambda p: np.sum(p[key] ** 2))(LOGP)
    oracle = np.zeros_like(LOGP)
    np.add.at(oracle, key, 2 * expected)
    np.testing.assert_allclose(grads, oracle)

    def zeroed(p):
        p = p.copy()
        p[key] = 0.0
        return np.sum(p ** 2)

    np.testing.assert_array_equal(ad.stage(zeroed, LOGP)(LOGP), zeroed(LOGP))

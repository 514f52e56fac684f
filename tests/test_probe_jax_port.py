"""Probes of a JAX user porting code to Advect's transforms: selection rules, pytrees, has_aux,
jvp / linearize / vjp, dense derivatives, nesting and staged derivatives, compared with JAX
(x64) as the oracle where Advect follows its conventions."""

import functools
from collections import namedtuple

import numpy as np
import pytest

import advect as ad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

X = np.array([0.3, -0.7, 1.2])
T = np.array([1.0, 0.5, -2.0])
B = np.array([1.5, 2.0])
Pair = namedtuple("Pair", "w b")


def assert_tree_close(actual, expected):
    """Same leaves (values and shapes) and the same pytree structure as JAX's result."""
    la, sa = jax.tree_util.tree_flatten(actual)
    lb, sb = jax.tree_util.tree_flatten(expected)
    assert str(sa) == str(sb), (sa, sb)
    for a, b in zip(la, lb):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-12, atol=1e-12)


def kinds(tree):
    return [type(leaf).__name__ for leaf in jax.tree_util.tree_leaves(tree)]


# --- grad / value_and_grad selection ------------------------------------------------------------

def _f(a, b, c):
    return np.sum(np.sin(a) * c) + np.sum(b**2) * c


def _fj(a, b, c):
    return jnp.sum(jnp.sin(a) * c) + jnp.sum(b**2) * c


@pytest.mark.parametrize("argnums", [0, 1, -1, (0, 2), (2, 0), (-1, 0), (1,), [0, 1]])
def test_grad_argnums_match_jax(argnums):
    args = (X, B, np.array(2.0))
    assert_tree_close(ad.grad(_f, argnums)(*args), jax.grad(_fj, argnums)(*args))
    value, g = ad.value_and_grad(_f, argnums)(*args)
    value_j, g_j = jax.value_and_grad(_fj, argnums)(*args)
    assert_tree_close((value, g), (value_j, g_j))


def test_grad_pytree_input_matches_jax():
    def g(p):
        return np.sum(p["a"][0] * p["a"][1]) + np.sum(p["n"].w ** 2 * p["n"].b) + p["t"][0]

    def gj(p):
        return jnp.sum(p["a"][0] * p["a"][1]) + jnp.sum(p["n"].w ** 2 * p["n"].b) + p["t"][0]

    params = {"a": [X, X * 2], "n": Pair(X, np.array(3.0)), "t": (np.array(1.5),), "z": None,
              "e": [], "d": {}}
    assert_tree_close(ad.grad(g)(params), jax.grad(gj)(params))


def test_has_aux_tracers_come_back_concrete():
    def h(a):
        return np.sum(a**2), {"s": np.sin(a), "m": np.max(a), "l": [a * 2, None]}

    def hj(a):
        return jnp.sum(a**2), {"s": jnp.sin(a), "m": jnp.max(a), "l": [a * 2, None]}

    g, aux = ad.grad(h, has_aux=True)(X)
    assert_tree_close((g, aux), jax.grad(hj, has_aux=True)(X))
    assert not any(ad.is_traced(leaf) for leaf in jax.tree_util.tree_leaves(aux))
    value, g, aux = ad.value_and_grad(h, has_aux=True)(X)
    (value_j, aux_j), g_j = jax.value_and_grad(hj, has_aux=True)(X)
    assert_tree_close((value, g, aux), (value_j, g_j, aux_j))


def test_has_aux_accepts_a_list_pair_as_jax_does():
    """JAX's has_aux takes a two-item list as well as a tuple (porting `return [loss, aux]`)."""
    g, aux = ad.grad(lambda a: [np.sum(a**2), a * 3], has_aux=True)(X)
    g_j, aux_j = jax.grad(lambda a: [jnp.sum(a**2), a * 3], has_aux=True)(X)
    assert_tree_close((g, aux), (g_j, aux_j))
    program = ad.stage(lambda a: [np.sum(a**2), a * 3], X)
    value, g, aux = ad.value_and_grad(program, has_aux=True)(X)
    assert_tree_close((value, g, aux), (np.sum(X**2), 2 * X, 3 * X))


def test_has_aux_error_names_what_was_returned():
    """Not the internal tracer class: what the user's function returned."""
    for f in (lambda a: np.sum(a), ad.stage(lambda a: np.sum(a), X)):
        with pytest.raises(TypeError, match="pair") as info:
            ad.grad(f, has_aux=True)(X)
        assert "Tracer" not in str(info.value)
        assert "shape ()" in str(info.value)


@pytest.mark.parametrize("transform", ["grad", "jacobian", "hessian", "hessian_diag", "vjp",
                                       "jvp", "hvp", "linearize"])
def test_argnums_out_of_range_is_index_error(transform):
    f = lambda a, b: a * b  # noqa: E731
    with pytest.raises(IndexError):
        if transform == "jvp":
            ad.jvp(f, 2)(1.5, 2.0, tangents=1.0)
        elif transform == "hvp":
            ad.hvp(f, 2)(1.5, 2.0, vectors=1.0)
        elif transform == "linearize":
            ad.linearize(f, 1.5, 2.0, argnums=2)
        else:
            getattr(ad, transform)(f, 2)(1.5, 2.0)


# --- jvp / linearize / vjp ----------------------------------------------------------------------

def _g(a, b):
    return {"p": np.sin(a) * b[0], "q": (np.sum(a * b[1]), np.ones(2))}


def _gj(a, b):
    return {"p": jnp.sin(a) * b[0], "q": (jnp.sum(a * b[1]), jnp.ones(2))}


def test_jvp_pytrees_and_argnums_match_jax():
    t2 = np.array([0.1, 0.2])
    assert_tree_close(ad.jvp(_g)(X, B, tangents=T), jax.jvp(lambda a: _gj(a, B), (X,), (T,)))
    assert_tree_close(ad.jvp(_g, (1, 0))(X, B, tangents=(t2, T)), jax.jvp(_gj, (X, B), (T, t2)))
    assert_tree_close(ad.jvp(_g, -1)(X, B, tangents=t2),
                      jax.jvp(lambda b: _gj(X, b), (B,), (t2,)))


def test_linearize_matches_jax_linearize_and_transpose():
    def s(a):
        return np.sin(a) * a, np.sum(a**2)

    def sj(a):
        return jnp.sin(a) * a, jnp.sum(a**2)

    value, lm = ad.linearize(s, X)
    value_j, lm_j = jax.linearize(sj, X)
    transpose_j = jax.linear_transpose(lm_j, X)
    ct = (np.array([1.0, 2.0, 3.0]), 0.5)
    with lm:
        assert_tree_close(value, value_j)
        assert_tree_close(lm(T), lm_j(T))
        assert_tree_close(lm.pullback(ct), transpose_j(ct)[0])
        assert_tree_close(lm.transpose()(ct), transpose_j(ct)[0])
        assert_tree_close(lm.transpose().pullback(T), lm_j(T))
        assert_tree_close(lm.apply_many([T, 2 * T]), [lm_j(T), lm_j(2 * T)])
        assert_tree_close(lm.transpose_many([ct]), [transpose_j(ct)[0]])
    for use in (lambda: lm(T), lambda: lm.pullback(ct), lm.transpose,
                lambda: lm.apply_many([]), lambda: lm.transpose_many([])):
        with pytest.raises(RuntimeError):
            use()


def _types_agree(f, primal, tangent):
    """The rank-0 types of f's output, of jvp's value and tangent and of a LinearMap's
    application: eager NumPy's, the tangent's those of its primal."""
    eager = f(primal)
    value, tangent_jvp = ad.jvp(f)(primal, tangents=tangent)
    value_lin, lm = ad.linearize(f, primal)
    with lm:
        tangent_lin = lm(tangent)
        tangent_t = lm.transpose().pullback(tangent)
    assert kinds(value) == kinds(value_lin) == kinds(eager)
    assert kinds(tangent_jvp) == kinds(tangent_lin) == kinds(tangent_t) == kinds(eager)


@pytest.mark.parametrize("name", ["ellipsis", "sum", "index", "pair", "where"])
def test_linear_map_tangent_types_follow_the_output(name):
    """Regression: LinearMap applications gave 0-d outputs NumPy-scalar tangents (``a[0, ...]``
    is a 0-d ndarray, so is its tangent in ``jvp``)."""
    f = {"ellipsis": lambda a: a[0, ...], "sum": np.sum, "index": lambda a: a[0],
         "pair": lambda a: (np.sum(a), a[0, ...], a[1:]),
         "where": lambda a: np.where(True, a[0], 1.0)}[name]
    _types_agree(f, X, T)


@pytest.mark.parametrize("name", ["mul", "identity", "sin", "pair"])
def test_linear_map_tangent_of_python_scalar_output_is_a_float(name):
    """Regression: ``linearize(lambda a: a * 2, 3.0)[1](1.0)`` gave ``np.float64`` where
    ``jvp`` gives a Python float (the output is one)."""
    f = {"mul": lambda a: a * 2, "identity": lambda a: a, "sin": np.sin,
         "pair": lambda a: (a * 2, np.cos(a))}[name]
    _types_agree(f, 3.0, 1.0)


@pytest.mark.parametrize("primal", [np.float64(3.0), np.float32(3.0), np.array(3.0)],
                         ids=["float64", "float32", "0-d"])
@pytest.mark.parametrize("name", ["identity", "copy", "tuple"])
def test_tangent_of_passed_through_scalar_input_has_its_type(primal, name):
    """Regression: ``jvp(lambda a: a)(np.float64(3.0), tangents=...)`` returned a 0-d ndarray
    tangent for a NumPy-scalar output."""
    f = {"identity": lambda a: a, "copy": lambda a: a.copy(),
         "tuple": lambda a: (a, a * 1)}[name]
    _types_agree(f, primal, primal.dtype.type(1.0))


def test_vjp_single_use_and_context_manager():
    value, pullback = ad.vjp(lambda a: np.sin(a) * a)(X)
    _, pullback_j = jax.vjp(lambda a: jnp.sin(a) * a, X)
    with pytest.raises(ValueError):
        pullback(np.ones(2))  # a failed application does not use it up
    assert_tree_close(pullback(T), pullback_j(T)[0])
    with pytest.raises(RuntimeError):
        pullback(T)
    with ad.vjp(np.sin)(X)[1] as pullback:
        pass
    with pytest.raises(RuntimeError):
        pullback(T)


# --- dense derivatives --------------------------------------------------------------------------

def _select(full, argnums):
    """JAX's blocks for ``argnums`` from its blocks for ``(0, 1)`` (each JAX evaluation costs
    seconds of compilation, so the oracle runs once)."""
    if isinstance(argnums, int):
        return full[argnums]
    return tuple(full[n] for n in argnums)


def _j(a, b):
    return {"u": np.outer(a, b), "v": np.sum(a) * b, "w": (np.cos(a),)}


@functools.cache
def _jacobian_j():
    return jax.jacrev(lambda a, b: {"u": jnp.outer(a, b), "v": jnp.sum(a) * b,
                                    "w": (jnp.cos(a),)}, (0, 1))(X, B)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0)])
def test_jacobian_pytree_blocks_match_jax(argnums):
    expected = jax.tree_util.tree_map(lambda blocks: _select(blocks, argnums), _jacobian_j(),
                                      is_leaf=lambda v: isinstance(v, tuple) and len(v) == 2
                                      and not isinstance(v[0], tuple))
    assert_tree_close(ad.jacobian(_j, argnums)(X, B), expected)


def test_jacobian_forward_and_reverse_agree():
    grid = np.linspace(0.1, 1.0, 10)
    wide = ad.jacobian(lambda s: np.sin(s * grid))(np.array(0.5))  # forward (1 in, 10 out)
    assert_tree_close(wide, jax.jacfwd(lambda s: jnp.sin(s * grid))(np.array(0.5)))
    tall = ad.jacobian(lambda v: np.sum(np.sin(v * 0.5)))(grid)  # reverse (10 in, 1 out)
    assert_tree_close(tall, jax.jacrev(lambda v: jnp.sum(jnp.sin(v * 0.5)))(grid))


def _h(a, b):
    return np.sum(a**2 * b[0]) + np.prod(b)


@functools.cache
def _hessian_j():
    return jax.hessian(lambda a, b: jnp.sum(a**2 * b[0]) + jnp.prod(b), (0, 1))(X, B)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1, 0), -1])
def test_hessian_nested_blocks_match_jax(argnums):
    full = _hessian_j()
    if isinstance(argnums, int):
        expected = full[argnums][argnums]
    else:
        expected = tuple(tuple(full[i][j] for j in argnums) for i in argnums)
    assert_tree_close(ad.hessian(_h, argnums)(X, B), expected)


def test_hvp_and_hessian_diag_match_jax_hessian():
    def e(a, b):
        return np.sum(a**3 * b[0]) + a[0] * a[1] * b[1]

    def ej(a, b):
        return jnp.sum(a**3 * b[0]) + a[0] * a[1] * b[1]

    H = jax.hessian(ej, (0, 1))(X, B)
    t2 = np.array([0.1, 0.2])
    _, hv = ad.hvp(e, (0, 1))(X, B, vectors=(T, t2))
    assert_tree_close(hv, (H[0][0] @ T + H[0][1] @ t2, H[1][0] @ T + H[1][1] @ t2))
    assert_tree_close(ad.hessian_diag(e, (0, 1))(X, B), (np.diag(H[0][0]), np.diag(H[1][1])))


# --- nesting, staging -----------------------------------------------------------------------------

def test_nested_transforms_match_jax():
    f = lambda a: np.sum(np.sin(a) ** 2 * a)  # noqa: E731
    fj = lambda a: jnp.sum(jnp.sin(a) ** 2 * a)  # noqa: E731
    assert_tree_close(ad.jacobian(ad.grad(f))(X), jax.jacfwd(jax.grad(fj))(X))
    assert_tree_close(ad.jvp(ad.grad(f))(X, tangents=T), jax.jvp(jax.grad(fj), (X,), (T,)))
    assert_tree_close(ad.grad(lambda a: np.sum(ad.hvp(f)(a, vectors=T)[1]))(X),
                      jax.grad(lambda a: jnp.sum(jax.jvp(jax.grad(fj), (a,), (T,))[1]))(X))
    assert_tree_close(ad.grad(lambda a: ad.grad(lambda b: np.sum(ad.stop_gradient(a * b) * b))(
        X)[0])(X), jax.grad(lambda a: jax.grad(lambda b: jnp.sum(
            jax.lax.stop_gradient(a * b) * b))(X)[0])(X))


def test_staged_grad_selection_equals_dynamic():
    def f(p, s, *, k):
        return np.sum(np.sin(p["a"]) * s) + np.sum(p["b"] ** 2) * k

    args, kw = ({"a": X, "b": B}, 2.0), {"k": np.array(0.5)}
    program = ad.stage(f, *args, kw_specs={"k": ad.ArraySpec((), "float64")})
    for argnums, argnames in [(0, None), (1, None), ((0, 1), None), (None, "k"), (-1, ("k",))]:
        staged = ad.value_and_grad(program, argnums, argnames=argnames)(*args, **kw)
        dynamic = ad.value_and_grad(f, argnums, argnames=argnames)(*args, **kw)
        assert_tree_close(staged, dynamic)
        assert kinds(staged) == kinds(dynamic)


def test_vjp_program_integer_input_gets_zero_cotangent():
    """As its docstring now says: an integer array selected gets zeros of its dtype."""
    program = ad.stage(lambda a, n: np.sum(a * n), X, np.arange(3))
    g_a, g_n = ad.vjp_program(program, (0, 1))(X, np.arange(3), cotangent=np.float64(1.0))
    np.testing.assert_array_equal(g_a, [0.0, 1.0, 2.0])
    assert g_n.dtype == np.int64 and not g_n.any()


def test_traced_zero_tangent_of_an_integer_input_is_read_not_refused():
    """Regression: the zero check of an integer input's tangent converted a traced tangent (of
    an outer transform) with np.asarray and raised TracingError."""
    n = np.arange(3)

    def inner(s):
        _, tangent = ad.jvp(lambda a, k: a * k, (0, 1))(X, n, tangents=(X * s, s * np.zeros(3)))
        return np.sum(tangent)

    assert ad.grad(inner)(1.0) == pytest.approx(np.sum(X * n))
    with pytest.raises(ValueError, match="must be zero"):
        ad.grad(lambda s: np.sum(ad.jvp(lambda k: k * 2.0)(n, tangents=s * np.ones(3))[1]))(1.0)
    with pytest.raises(ValueError, match="must be zero"):
        ad.jvp(lambda k: k * 2.0)(n, tangents=np.ones(3))


def test_tangent_structure_error_names_differing_static_metadata():
    """A dataclass's static field is not in a structure's repr: the error now says which
    metadata differs instead of 'Lin(*, *) does not match Lin(*, *)'."""
    import dataclasses

    from advect.pytree import register_dataclass

    @register_dataclass
    @dataclasses.dataclass
    class Lin:
        w: np.ndarray
        act: str = dataclasses.field(default="tanh", metadata={"static": True})

    loss = lambda p: np.sum(np.tanh(p.w) ** 2)  # noqa: E731
    _, hv = ad.hvp(loss)(Lin(X, "relu"), vectors=Lin(T, "relu"))
    assert hv.act == "relu"
    with pytest.raises(TypeError, match=r"metadata \('tanh',\) differs from \('relu',\)"):
        ad.hvp(loss)(Lin(X, "relu"), vectors=Lin(T, "tanh"))
    with pytest.raises(TypeError, match="metadata"):
        ad.vjp(lambda p: p)(Lin(X, "relu"))[1](Lin(T, "tanh"))


_STAGED_TANGENTS = {
    "jvp view": (lambda a, t: ad.jvp(lambda b: (b[0, ...], np.sum(b), b * 2))(a, tangents=t),
                 (X, T)),
    "linearize view": (lambda a, t: ad.linearize(lambda b: (b[0, ...], b[1]), a)[1](t), (X, T)),
    "jvp python": (lambda a: ad.jvp(lambda b: b**3)(a, tangents=1.0), (2.0,)),
    "linearize python": (lambda a: ad.linearize(lambda b: (b**3, np.sin(b)), a)[1](1.0), (2.0,)),
    "linearize 0-d id": (lambda a: ad.linearize(lambda b: b, a)[1](np.array(1.0)),
                         (np.array(2.0),)),
    "value_and_grad view": (lambda a: ad.value_and_grad(lambda b: b[0, ...])(a), (X,)),
}


@pytest.mark.parametrize("name", sorted(_STAGED_TANGENTS))
def test_staged_tangents_have_the_dynamic_types(name):
    """Regression: while staging, a tangent (and jvp's primal) lost the rank-0 type its output
    has: ``b[0, ...]``'s became a NumPy scalar, a Python scalar's an ``np.float64``."""
    fn, args = _STAGED_TANGENTS[name]
    dynamic = fn(*args)
    staged = ad.stage(fn, *args)(*args)
    assert kinds(staged) == kinds(dynamic)
    assert_tree_close(staged, dynamic)


def test_nested_tangent_types_follow_the_output():
    """Inside an outer transform a tangent's type is fixed when it comes out: as without one."""
    def inner(s):
        value, tangent = ad.jvp(lambda b: (b * s)[0, ...])(X, tangents=T)
        return tangent

    _, tangent = ad.jvp(inner)(2.0, tangents=1.0)
    assert type(inner(2.0)) is np.ndarray and type(tangent) is np.ndarray
    assert ad.grad(lambda s: ad.jvp(lambda b: b**3 * s)(2.0, tangents=1.0)[1])(1.0) == 12.0

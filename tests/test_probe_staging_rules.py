"""Staging bakes in only what the signature fixes: data-dependent things are traced or refused,
and a call (concrete or traced) that differs from the signature is refused (probe of the
staging rules: weak slots under traced calls, generators reached through partials and
callable objects, NumPy's dispatch iteration, identity-compared static values, Python-scalar
conversions)."""

import functools
import math

import numpy as np
import pytest

import advect as ad
from advect.pytree import static

X = np.array([1.0, 2.0, 3.0])
X32 = np.ones(3, np.float32)


# --- a traced call matches the weak (Python scalar) category of each slot ---------------------
# (a strong 0-d tracer passed a weak slot, and a traced Python float a 0-d array slot, so the
# inlined graph promoted as the other kind: float32 instead of the staged float64)

WEAK = ad.stage(lambda x, s: x * s, X32, 2.0)
STRONG = ad.stage(lambda x, s: x * s, X32, np.float64(2.0))


@pytest.mark.parametrize("call", [
    lambda: ad.stage(lambda x, z: WEAK(x, z[0]), X32, np.ones(1)),
    lambda: ad.grad(lambda s: np.sum(WEAK(X32, s)).astype(float))(np.array(2.0)),
    lambda: ad.stage(lambda x, s: STRONG(x, s), X32, 2.0),
    lambda: ad.grad(lambda s: np.sum(STRONG(X32, s)).astype(float))(2.0),
], ids=["strong-in-weak-staged", "strong-in-weak-grad", "weak-in-strong-staged",
        "weak-in-strong-grad"])
def test_traced_calls_match_the_scalar_category(call):
    with pytest.raises(ValueError, match=r"argument\[1\]: expected"):
        call()


def test_the_concrete_calls_refuse_the_same():
    with pytest.raises(ValueError):
        WEAK(X32, np.float64(2.0))
    with pytest.raises(ValueError):
        STRONG(X32, 2.0)


def test_converted_traced_arguments_are_accepted():
    to_weak = ad.stage(lambda x, z: WEAK(x, z[0].item()), X32, np.ones(1))
    assert to_weak(X32, np.ones(1)).dtype == np.float32
    to_strong = ad.stage(lambda x, s: STRONG(x, np.asarray(s, like=s)), X32, 2.0)
    assert to_strong(X32, 2.0).dtype == np.float64
    assert ad.grad(lambda s: np.sum(WEAK(X32, s)).astype(float))(2.0) == 3.0
    assert ad.grad(lambda n: np.sum(WEAK(X32, n)).astype(float))(2) == 3.0  # int -> float


def test_a_traced_python_scalar_example_declares_a_weak_slot():
    def f(s):
        program = ad.stage(lambda x, t: x * t, X32, s)
        assert program.signature[0][1] == ad.ArraySpec((), "float64", weak=True)
        out = program(X32, s)
        assert out.dtype == np.float32  # as X32 * 2.0
        return np.sum(out).astype(float)

    assert ad.grad(f)(2.0) == 3.0


# --- generators the staged callable reaches are watched and rewound ---------------------------

RNG = np.random.default_rng(0)


def _noisy(x, k=1.0):
    return x * k + RNG.normal(size=3)


class _Noisy:
    def __call__(self, x):
        return x + RNG.normal(size=3)


def _nested(x):
    def inner(y):
        return y + RNG.normal(size=3)
    return inner(x)


def _local_rng():
    return np.random.default_rng(1)


BOUND = _local_rng()


@pytest.mark.parametrize("function, name", [
    (functools.partial(_noisy, k=2.0), "RNG"),               # a partial of a function naming it
    (functools.partial(lambda x, r: x + r.normal(size=3), r=BOUND), "r"),  # bound by a partial
    (_Noisy(), "RNG"),                                       # a callable object's __call__
    (_nested, "RNG"),                                        # a function it defines
    (lambda x, r=BOUND: x + r.normal(size=3), "r"),          # a default argument
], ids=["partial", "partial-argument", "callable-object", "nested-function", "default"])
def test_generators_reached_by_the_callable_are_caught_and_rewound(function, name):
    before = RNG.bit_generator.state, BOUND.bit_generator.state
    with pytest.raises(ad.AmbientRandomnessError, match=f"random generator '{name}'"):
        ad.stage(function, X)
    assert (RNG.bit_generator.state, BOUND.bit_generator.state) == before


def test_every_drawn_generator_is_rewound():
    first, second = np.random.default_rng(2), np.random.default_rng(3)
    before = first.bit_generator.state, second.bit_generator.state
    with pytest.raises(ad.AmbientRandomnessError):
        ad.stage(lambda x: x + first.random(3) + second.random(3), X)
    assert (first.bit_generator.state, second.bit_generator.state) == before


def test_a_generator_passed_as_a_static_value_is_caught():
    rng = np.random.default_rng(4)
    with pytest.raises(ad.AmbientRandomnessError, match=r"static value argument\[1\]"):
        ad.stage(lambda x, r: x + r.normal(size=3), X, ad.StaticSpec(rng))
    with pytest.raises(ad.AmbientRandomnessError, match=r"static value argument\['r'\]"):
        ad.stage(lambda x, *, r: x + r.normal(size=3), X, kw_specs={"r": ad.StaticSpec(rng)})
    # one the function only carries is fine
    assert ad.stage(lambda x, r: x * 2.0, X, ad.StaticSpec(rng)) is not None


def test_a_generator_held_by_a_static_node_is_caught():
    rng = np.random.default_rng(5)
    with pytest.raises(ad.AmbientRandomnessError, match=r"static value argument\[1\]\['a'\]"):
        ad.stage(lambda x, t: x + t["a"].value.normal(size=3), X, {"a": static(rng), "b": X})
    assert ad.stage(lambda x, t: x * t.value["k"], X, static({"k": 2.0}))(
        X, static({"k": 2.0})).tolist() == [2.0, 4.0, 6.0]


def test_a_partial_without_generators_stages():
    program = ad.stage(functools.partial(lambda x, k: x * k, k=np.full(3, 2.0)), X)
    np.testing.assert_array_equal(program(X), 2 * X)


# --- NumPy's own iteration in np.concatenate's dispatch ---------------------------------------
# (np.concatenate(x) of a 2-D value raised "dispatcher for __array_function__ did not return an
# iterable": the dispatcher returns x itself and NumPy's C code iterates over it)

@pytest.mark.parametrize("function", [
    lambda x: np.concatenate(x),
    lambda x: np.concatenate(x * 2, axis=None),
])
def test_concatenate_of_a_staged_value_stages(function):
    a = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ad.stage(function, a)(a + 1), function(a + 1))


def test_iteration_by_the_staged_function_is_still_refused():
    with pytest.raises(ad.StagedIterationError):
        ad.stage(lambda x: np.concatenate(list(x)), np.ones((2, 3)))


# --- static values compared by identity ---------------------------------------------------------

class _Config:
    def __init__(self, k):
        self.k = k


def test_a_static_value_compared_by_identity_says_why_no_call_matches():
    config = _Config(2.0)
    program = ad.stage(lambda x, c: x * c.k, X, ad.StaticSpec(config))
    with pytest.raises(TypeError, match=r"compares by identity.*__eq__"):
        program(X, config)  # the snapshot is a deep copy, which config does not equal
    node = ad.stage(lambda x, c: x * c.value.k, X, static(config))
    with pytest.raises(TypeError, match=r"compares by identity"):
        node(X, static(config))
    with pytest.raises(TypeError, match=r"differs from the staged"):
        ad.stage(lambda x, c: x * c, X, ad.StaticSpec(2.0))(X, 3.0)


# --- Python-scalar conversions promote as eagerly ------------------------------------------------

@pytest.mark.parametrize("function", [
    lambda x: x * ad.asarray(x[0].item()),                      # a 0-d float64 array
    lambda x: x * ad.array(x[0].item()),
    lambda x: x * x.__array_namespace__().asarray(x[0].item()),
    lambda x: x * np.asarray(x[0].item(), like=x),
], ids=["ad.asarray", "ad.array", "xp.asarray", "like"])
def test_arrays_made_of_item_values_are_not_weak(function):
    expected = function(X32)
    assert expected.dtype == np.float64
    assert ad.stage(function, X32)(X32).dtype == np.float64
    assert ad.jvp(function)(X32, tangents=X32)[0].dtype == np.float64


@pytest.mark.skipif(type(round(np.float32(2.5))) is not int,
                    reason="round() of a NumPy scalar is a Python int from NumPy 2.x on")
def test_round_gives_the_python_types_eager_code_gets():
    x = np.array([2.5, 3.7], np.float32)
    counts = np.ones(2, np.int8)

    def f(x, i):
        return (round(x[0]), round(x[1]) * i, round(x[0], 1), round(x[0].item()),
                round(x[0].item(), 1))

    expected = f(x, counts)
    got = ad.stage(f, x, counts)(x, counts)
    assert [type(v) for v in got] == [type(v) for v in expected] == [
        int, np.ndarray, np.float32, int, float]
    assert got[1].dtype == np.int8  # a Python int promotes weakly, a float64 would not
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)
    assert ad.grad(lambda x: x[0] * round(x[1]))(x).tolist() == [4.0, 0.0]


def test_math_trunc_is_refused_like_math_floor():
    assert math.trunc(X[1] + 0.5) == 2
    for conversion in (math.trunc, math.floor):
        with pytest.raises(ad.TracingError, match="needs the data of a staged value"):
            ad.stage(lambda x, c=conversion: x * c(x[0]), X)
    with pytest.raises(ad.TracingError, match="math.trunc"):
        ad.grad(lambda x: x[0] * math.trunc(x[1]))(X)

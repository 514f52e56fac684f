"""ad.transform_state: scratch state private to the innermost dynamic transform invocation."""

import threading

import numpy as np
import pytest

import advect as ad
from advect.autodiff import state

X = np.array([0.5, 1.5])


def test_one_state_per_invocation_made_once():
    made = []

    def f(x):
        s = ad.transform_state("k", lambda: made.append(1) or {"n": 0})
        s["n"] += 1
        again = ad.transform_state("k", dict)
        assert again is s
        return np.sum(x ** 2)

    ad.grad(f)(X)
    ad.grad(f)(X)
    assert made == [1, 1]  # a fresh state for each call
    assert state._stack() == []


@pytest.mark.parametrize("transform", [
    lambda f: ad.grad(f)(X),
    lambda f: ad.value_and_grad(f)(X),
    lambda f: ad.vjp(f)(X)[1](1.0),
    lambda f: ad.jvp(f)(X, tangents=np.ones(2)),
    lambda f: ad.linearize(f, X)[1].close(),
    lambda f: ad.hvp(f)(X, vectors=np.ones(2)),
    lambda f: ad.jacobian(f)(X),
])
def test_every_dynamic_transform_provides_state(transform):
    seen = []

    def f(x):
        seen.append(ad.transform_state("t", object))
        return np.sum(np.sin(x))

    transform(f)
    assert seen and all(s is not None for s in seen)
    assert state._stack() == []


def test_nesting_levels_are_distinct_and_listed_outermost_first():
    record = {}

    def inner(x):
        ad.transform_state("level", lambda: "inner")
        record["states"] = ad.transform_states("level")
        return np.sum(x ** 3)

    def outer(x):
        ad.transform_state("level", lambda: "outer")
        return np.sum(ad.grad(inner)(x))

    ad.grad(outer)(X)
    assert record["states"] == ["outer", "inner"]
    assert ad.transform_states("level") == []


def test_state_is_dropped_when_the_transform_fails():
    def f(x):
        ad.transform_state("boom", list)
        raise KeyError("inside")

    with pytest.raises(KeyError):
        ad.grad(f)(X)
    assert state._stack() == []
    assert ad.transform_states("boom") == []


def test_refused_outside_transforms_and_while_staging():
    with pytest.raises(ad.TracingError, match="dynamic transform"):
        ad.transform_state("k", dict)

    def f(x):
        ad.transform_state("k", dict)
        return x * 2

    with pytest.raises(ad.TracingError, match="staging"):
        ad.stage(f, X)
    with pytest.raises(ad.TracingError, match="staging"):  # a dynamic transform inside staging
        ad.stage(lambda x: ad.grad(lambda y: np.sum(f(y)))(x), X)


def test_threads_have_their_own_stacks():
    barrier = threading.Barrier(2)
    results = {}

    def f(x, name):
        s = ad.transform_state("who", lambda: name)
        barrier.wait(timeout=10)
        results[name] = ad.transform_states("who")
        assert s == name
        return np.sum(x ** 2)

    threads = [threading.Thread(target=lambda n=n: ad.grad(f)(X, n)) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {"a": ["a"], "b": ["b"]}

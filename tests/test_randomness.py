"""Randomness cannot be frozen into a staged program: constructing a Generator, a RandomState, a
bit generator or a SeedSequence while staging raises AmbientRandomnessError (a RuntimeError);
outside staging, and in other threads, numpy.random is untouched (issue 10 item 8)."""

import threading

import numpy as np
import pytest

import advect as ad

X = np.ones(3)

CONSTRUCTORS = {
    "Generator(PCG64)": lambda: np.random.Generator(np.random.PCG64(1)).normal(),
    "PCG64": lambda: np.random.PCG64(1).random_raw(),
    "PCG64DXSM": lambda: np.random.PCG64DXSM(1).random_raw(),
    "MT19937": lambda: np.random.MT19937(1).random_raw(),
    "Philox": lambda: np.random.Philox(1).random_raw(),
    "SFC64": lambda: np.random.SFC64(1).random_raw(),
    "RandomState": lambda: np.random.RandomState(0).rand(),
    "SeedSequence": lambda: np.random.default_rng(np.random.SeedSequence(1)).random(),
    "default_rng": lambda: np.random.default_rng(1).random(),
    "seeded_global": lambda: np.random.seed(0),
}


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_constructing_random_generators_while_staging_raises(name):
    make = CONSTRUCTORS[name]
    with pytest.raises(ad.AmbientRandomnessError, match=r"numpy\.random\..*while staging") as info:
        ad.stage(lambda x: x + make(), X)
    assert isinstance(info.value, RuntimeError)
    assert "input" in str(info.value)


def test_the_issue_reproduction_no_longer_returns_frozen_numbers():
    with pytest.raises(ad.AmbientRandomnessError, match="PCG64"):
        ad.stage(lambda x: x + np.random.Generator(np.random.PCG64(1)).normal(size=3), X)


def test_inside_a_dynamic_transform_under_staging_too():
    def f(x):
        return ad.grad(lambda y: np.sum(y * np.random.default_rng(0).random(3)))(x)

    with pytest.raises(ad.AmbientRandomnessError):
        ad.stage(f, X)


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS))
def test_outside_staging_nothing_changes(name):
    CONSTRUCTORS[name]()  # works
    # and dynamic transforms draw as usual
    got = ad.grad(lambda x: np.sum(x * np.random.Generator(np.random.PCG64(3)).random(3)))(X)
    np.testing.assert_array_equal(got, np.random.Generator(np.random.PCG64(3)).random(3))


def test_the_guard_undoes_itself_on_every_exit():
    originals = {name: getattr(np.random, name) for name in np.random.__all__}

    def fails(x):
        raise ValueError("boom")

    ad.stage(lambda x: x * 2.0, X)
    with pytest.raises(ValueError, match="boom"):
        ad.stage(fails, X)
    with pytest.raises(ad.AmbientRandomnessError):
        ad.stage(lambda x: x + np.random.PCG64(1).random_raw(), X)
    assert {name: getattr(np.random, name) for name in np.random.__all__} == originals
    assert np.random.Generator is type(np.random.default_rng(0))


def test_classes_keep_working_while_staging():
    rng = np.random.default_rng(0)
    seen = {}

    def f(x):
        # only construction is refused: isinstance, subclassing and attributes still work
        seen["isinstance"] = isinstance(rng, np.random.Generator)
        seen["issubclass"] = issubclass(np.random.PCG64, np.random.BitGenerator)

        class Mine(np.random.PCG64):
            pass

        seen["subclass"] = issubclass(Mine, np.random.BitGenerator)
        seen["name"] = np.random.Generator.__name__
        return x * 2.0

    ad.stage(f, X)
    assert seen == {"isinstance": True, "issubclass": True, "subclass": True,
                    "name": "Generator"}


def test_other_threads_construct_generators_while_one_stages():
    started, release = threading.Event(), threading.Event()
    drawn = []

    def slow(x):
        started.set()
        release.wait(10)
        return x * 2.0

    stager = threading.Thread(target=lambda: ad.stage(slow, X))
    stager.start()
    try:
        assert started.wait(10)
        drawn.append(np.random.Generator(np.random.PCG64(5)).random())
        drawn.append(np.random.RandomState(5).rand())
    finally:
        release.set()
        stager.join(10)
    assert drawn == [np.random.Generator(np.random.PCG64(5)).random(),
                     np.random.RandomState(5).rand()]


def test_numbers_passed_in_as_inputs_stage():
    program = ad.stage(lambda x, noise: x + noise, X, np.zeros(3))
    noise = np.random.default_rng(0).normal(size=3)
    np.testing.assert_allclose(program(X, noise), X + noise)

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def created_traces(monkeypatch):
    """The names of the trace classes created while the test runs (a list that fills up)."""
    from advect import core

    created = []
    original = core.Trace.__init__

    def counting(self):
        created.append(type(self).__name__)
        original(self)

    monkeypatch.setattr(core.Trace, "__init__", counting)
    return created


@pytest.fixture
def jax_x64():
    """JAX with 64-bit types on for the test (skipped without JAX), restored afterwards."""
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", previous)

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

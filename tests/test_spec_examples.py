"""Every example of the user's spec runs unchanged and prints what its page says."""

import runpy
import sys
from pathlib import Path

import pytest

# in CI the spec lives next to the repository: ../shared/spec/examples from the repo root
EXAMPLES = Path(__file__).resolve().parents[2] / "shared" / "spec" / "examples"
SCRIPTS = sorted(EXAMPLES.glob("s*.py")) if EXAMPLES.is_dir() else []


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="the spec examples are not checked out here")
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_spec_example_runs_unchanged(script, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(script)])
    runpy.run_path(str(script), run_name="__main__")
    printed = capsys.readouterr().out
    assert printed.strip().splitlines()[-1].endswith(": ok")


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason="the spec examples are not checked out here")
def test_spec_000_prints_what_the_page_prints(capsys):
    runpy.run_path(str(EXAMPLES / "s000_stage_once.py"), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "sample loss: 0.804763"
    assert lines[1] == "shifted loss: 0.868455"
    assert lines[2] == "staged transform: [-4. -2.  2.  4.]"
    size = int(next(line for line in lines if line.startswith("serialized bytes:")).split()[-1])
    assert size < 7000

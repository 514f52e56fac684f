"""Every script in examples/ runs to completion (they check their own results) and prints."""

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, capsys):
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_debug_example_reports_the_op_phase_and_line(capsys):
    runpy.run_path(str(EXAMPLES[0].parent / "debug_numerics.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "inf in the VJP (cotangent) of operation 'sqrt' at " in out
    assert "debug_numerics.py:14 in loss" in out


def test_checkpoint_example_saves_memory(capsys):
    runpy.run_path(str(EXAMPLES[0].parent / "checkpoint_chain.py"), run_name="__main__")
    shares = [int(line.rsplit("(", 1)[1].split("%")[0])
              for line in capsys.readouterr().out.splitlines() if "of plain" in line]
    assert len(shares) == 2 and shares[0] < 70 and shares[1] < 35

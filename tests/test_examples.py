"""Every script in examples/ runs to completion (they check their own results) and prints;
the gallery's scripts (a ``Requires: ...`` line in their docstring) also save their figure to
the folder ``ADVECT_FIGURES`` names, and are skipped when what they require is missing."""

import ast
import re
import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def _requirements(path: Path) -> list[str]:
    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    found = re.search(r"^Requires: (.+?)\.?$", doc, re.M)
    return [name.strip() for name in found.group(1).split(",")] if found else []


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, capsys, monkeypatch, tmp_path):
    requires = _requirements(path)
    for name in requires:
        pytest.importorskip(name, reason=f"{path.name} needs {name} (the examples extra)")
    monkeypatch.setenv("ADVECT_FIGURES", str(tmp_path))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    runpy.run_path(str(path), run_name="__main__")
    assert capsys.readouterr().out.strip()
    if "matplotlib" in requires:
        assert [p.name for p in tmp_path.iterdir()] == [f"{path.stem}.png"]


def test_the_gallery_lists_every_gallery_script():
    gallery = Path(__file__).resolve().parents[1] / "docs" / "gallery"
    shown = {m for page in gallery.glob("*.md")
             for m in re.findall(r"advect-example\}\s+examples/(\w+\.py)", page.read_text())}
    assert shown == {p.name for p in EXAMPLES if "matplotlib" in _requirements(p)}


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

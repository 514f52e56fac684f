"""StagedProgram.to_dot: Graphviz text naming inputs, constants, ops with avals, outputs."""

import re
import shutil
import subprocess

import numpy as np
import pytest

import advect as ad


def _loss(x, params):
    return {"loss": np.sum(np.sin(x) * params["w"]) - 1.0, "peak": np.max(x)}


def _edges(dot: str) -> set[tuple[str, str]]:
    return set(re.findall(r"^\s+(\w+) -> (\w+)", dot, re.M))


def test_dot_names_inputs_ops_and_outputs():
    program = ad.stage(_loss, np.ones(3), {"w": np.ones(3)})
    dot = program.to_dot()
    assert dot.startswith('digraph "_loss" {') and dot.rstrip().endswith("}")
    assert r'label="arg 0\n%0: float64[3]"' in dot
    assert r"""label="arg 1['w']\n%1: float64[3]""" in dot
    assert r'label="subtract(%4, 1.0)\n%5: float64[]"' in dot  # operand order and a literal
    assert r"reduce_sum(%3)\naxes=(0,)\nkeepdims=False\n%4: float64[]" in dot
    assert "label=\"output['loss']\"" in dot and "label=\"output['peak']\"" in dot
    # every value of the listing is drawn, and each op has an edge from each of its operands
    assert len(re.findall(r"^\s+n\d+ \[", dot, re.M)) == len(program.graph.nodes)
    assert {("v0", "n0"), ("n0", "n1"), ("v1", "n1")} <= _edges(dot)


def test_dot_shows_constants_with_origin_and_dtype():
    matrix = np.arange(6.0).reshape(2, 3)
    program = ad.stage(lambda x: matrix @ x, np.ones(3))
    dot = program.to_dot()
    assert r'label="constant (captured)\n%1: float64[2,3]"' in dot
    assert ("v1", "n0") in _edges(dot)


def test_dot_labels_the_edges_of_a_multiple_output_op():
    program = ad.stage(lambda a: np.linalg.eigh(a)[1] * 2.0, np.eye(2))
    dot = program.to_dot()
    assert re.search(r'n0 -> n1 \[label="%\d+"\];', dot)


def test_dot_of_a_python_scalar_output_and_a_static_input():
    program = ad.stage(lambda x, n: x * n, 2.0, ad.StaticSpec(3))
    dot = program.to_dot()
    assert r'label="arg 0\n%0: weak float64[]"' in dot  # the static leaf is not an input
    assert "arg 1" not in dot


def test_dot_escapes_quotes_in_names():
    def quoted(x):
        return x + 1

    quoted.__name__ = 'say "hi"'
    dot = ad.stage(quoted, np.ones(1)).to_dot()
    assert dot.startswith(r'digraph "say \"hi\"" {')


def test_dot_of_a_restored_program_matches():
    program = ad.grad(ad.stage(lambda x: np.sum(np.tanh(x) ** 2), np.ones(4)))
    restored = ad.StagedProgram.from_dict(program.to_dict())
    assert restored.to_dot() == program.to_dot()


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz is not installed")
def test_graphviz_renders_the_text():
    program = ad.value_and_grad(ad.stage(_loss_scalar, np.ones(3), np.ones(3)))
    svg = subprocess.run(["dot", "-Tsvg"], input=program.to_dot(), capture_output=True,
                         text=True, check=True).stdout
    assert "<svg" in svg and "reduce_sum" in svg


def _loss_scalar(x, w):
    return np.sum(np.sin(x) * w)


def test_the_picture_in_the_staging_guide_is_current():
    # docs/staging.md shows docs/_static/staged_program.svg, rendered from this program's DOT
    # text; after a change to to_dot or the optimizer, regenerate both (dot -Tsvg)
    from pathlib import Path

    def energy(x, params):
        return np.sum(params["w"] * np.tanh(x) ** 2) + 0.5 * np.sum(x**2)

    program = ad.value_and_grad(ad.stage(energy, np.ones(4), {"w": np.ones(4)}))
    static = Path(__file__).resolve().parents[1] / "docs" / "_static"
    assert (static / "staged_program.dot").read_text() == program.to_dot()

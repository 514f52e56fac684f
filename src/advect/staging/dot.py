"""Graphviz DOT text of a staged program: a picture of its graph, with no dependency.

Inputs are named by their place in the signature (``arg 0``, ``arg 1['w']``, keyword names),
constants say their shape, dtype and origin, each op shows its name, its static attrs and the
values it defines (``%3: float64[8]``), and the outputs are named by their place in the output
tree. Render the text with Graphviz (``dot -Tsvg program.dot -o program.svg``), or in Sphinx
with ``sphinx.ext.graphviz``.
"""

from __future__ import annotations

from typing import Any

from ..pytree import tree_flatten_with_paths
from .graph import Graph, Literal
from .specs import ArraySpec, is_spec

__all__ = ["to_dot"]

_ATTR_CHARS = 40  # an attr longer than this (an index structure, say) is shortened


def _quote(text: str) -> str:
    r"""A DOT string literal; a ``\n`` in ``text`` stays a line break of the label."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _path_text(path: tuple) -> str:
    return "".join(f"[{k!r}]" for k in path)


def _input_labels(signature: tuple[tuple, dict]) -> list[str]:
    """One label per graph input (the ArraySpec leaves, in order): where it sits in a call."""
    pos, kw = signature
    labels = []
    for path, spec in tree_flatten_with_paths((tuple(pos), dict(kw)), is_leaf=is_spec)[0]:
        if not isinstance(spec, ArraySpec):
            continue  # a static value is part of the program, not an input
        part, key, rest = path[0], path[1], path[2:]
        head = f"arg {key}" if part == 0 else str(key)
        labels.append(head + _path_text(rest))
    return labels


def _output_labels(outputs: Any, count: int) -> list[str]:
    leaves_paths = tree_flatten_with_paths(outputs, is_leaf=is_spec)[0]
    if len(leaves_paths) == 1 and leaves_paths[0][0] == ():
        return ["output"]
    labels = [f"output{_path_text(path)}" for path, _ in leaves_paths]
    return labels if len(labels) == count else [f"output {k}" for k in range(count)]


def _attr_text(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _ATTR_CHARS else text[:_ATTR_CHARS - 3] + "..."


def to_dot(graph: Graph, signature: tuple[tuple, dict], outputs: Any, name: str) -> str:
    """The DOT text of ``graph`` (``signature`` and the output spec tree give the names);
    :meth:`StagedProgram.to_dot` calls it.

    Example:
        >>> import numpy as np, advect as ad
        >>> program = ad.stage(lambda x: x * 2.0, np.ones(2))
        >>> text = to_dot(program.graph, program.signature, program.output_specs, "double")
        >>> [line.strip() for line in text.splitlines() if "->" in line]
        ['v0 -> n0;', 'n0 -> out0;']
    """
    lines = [f"digraph {_quote(name)} {{",
             "  rankdir=TB;",
             '  node [fontname="Helvetica", fontsize=11];',
             '  edge [fontname="Helvetica", fontsize=9];']
    source: dict[int, int | None] = {}  # value id -> index of the node defining it (None: none)
    in_labels = _input_labels(signature)
    for k, vid in enumerate(graph.inputs):
        label = "\n".join((in_labels[k] if k < len(in_labels) else f"input {k}",
                           f"%{vid}: {graph.avals[vid]!r}"))
        source[vid] = None
        lines.append(f'  v{vid} [shape=invhouse, style=filled, fillcolor="#dbeafe", '
                     f"label={_quote(label)}];")
    for vid in sorted(graph.constants):
        label = f"constant ({graph.origins.get(vid, 'captured')})\n%{vid}: {graph.avals[vid]!r}"
        source[vid] = None
        lines.append(f'  v{vid} [shape=box, style="filled,rounded", fillcolor="#f3f4f6", '
                     f"label={_quote(label)}];")
    for k, node in enumerate(graph.nodes):
        call = ", ".join(repr(x) if type(x) is Literal else f"%{x}" for x in node.inputs)
        label = "\n".join([f"{node.op.name}({call})",
                           *(f"{key}={_attr_text(v)}" for key, v in node.attrs.items()),
                           *(f"%{v}: {graph.avals[v]!r}" for v in node.outputs)])
        lines.append(f"  n{k} [shape=box, label={_quote(label)}];")
        for x in dict.fromkeys(x for x in node.inputs if type(x) is not Literal):
            lines.append(f"  {_edge(source, x)} -> n{k}{_edge_label(graph, source, x)};")
        for v in node.outputs:
            source[v] = k
    out_labels = _output_labels(outputs, len(graph.outputs))
    for k, x in enumerate(graph.outputs):
        lines.append(f'  out{k} [shape=house, style=filled, fillcolor="#dcfce7", '
                     f"label={_quote(out_labels[k])}];")
        if type(x) is Literal:
            lines.append(f"  out{k}_value [shape=plaintext, label={_quote(repr(x))}];")
            lines.append(f"  out{k}_value -> out{k};")
        else:
            lines.append(f"  {_edge(source, x)} -> out{k}{_edge_label(graph, source, x)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _edge(source: dict, x: int) -> str:
    k = source[x]
    return f"v{x}" if k is None else f"n{k}"


def _edge_label(graph: Graph, source: dict, x: int) -> str:
    # a node that defines several values labels its edges with the value used
    k = source[x]
    if k is not None and len(graph.nodes[k].outputs) > 1:
        return f" [label={_quote(f'%{x}')}]"
    return ""

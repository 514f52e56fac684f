"""The staged graph: SSA values, nodes, constants, inputs and outputs.

A value is an integer id with an aval. A node applies one registered op to input values and
weak Python-scalar ``Literal``s and defines its output values. Nodes are kept in a valid
execution order: every input is an input of the graph, a constant, or an output of an earlier
node. ``validate`` checks exactly that and re-derives every aval from the ops' abstract rules.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..core import REGISTRY, Op, bind
from ..dtypes import Aval, aval_of

__all__ = ["Literal", "Node", "Graph", "validate", "evaluate", "listing", "live_nodes",
           "renumber"]


class Literal:
    """A Python scalar operand: weak, so NEP 50 promotion holds when it meets an array."""

    __slots__ = ("value", "_key")

    def __init__(self, value: bool | int | float | complex):
        self.value = value
        self._key = None

    def key(self) -> tuple:
        # 1, 1.0 and True hash alike in Python, and 0.0 equals -0.0: different operands here
        if self._key is None:
            self._key = (type(self.value).__name__, repr(self.value))
        return self._key

    def __repr__(self) -> str:
        return repr(self.value)


class Node:
    """``outputs = op(*inputs, **attrs)``."""

    __slots__ = ("op", "inputs", "attrs", "outputs")

    def __init__(self, op: Op, inputs: tuple, attrs: dict, outputs: tuple[int, ...]):
        self.op = op
        self.inputs = inputs
        self.attrs = attrs
        self.outputs = outputs


class Graph:
    """Values (avals by id), inputs, constants, nodes in execution order, outputs.

    ``constants`` maps a value id to a read-only C-contiguous array (the layout a saved program
    restores, so that both compute the same bits); ``origins`` says where it came from
    (``"captured"`` from the staged function, ``"folded"`` by the optimizer).
    """

    __slots__ = ("avals", "inputs", "constants", "origins", "nodes", "outputs")

    def __init__(self):
        self.avals: list[Aval] = []
        self.inputs: list[int] = []
        self.constants: dict[int, object] = {}
        self.origins: dict[int, str] = {}
        self.nodes: list[Node] = []
        self.outputs: list = []  # value ids or Literals

    def new_value(self, aval: Aval) -> int:
        self.avals.append(aval)
        return len(self.avals) - 1

    def add_constant(self, array, origin: str) -> int:
        if array.size:  # held in immutable bytes, in C order (the layout a saved program
            # restores: a matmul's rounding depends on it), so that nobody holding it, an
            # output returning it or a view of it can set it writeable and change later calls
            array = np.frombuffer(np.ascontiguousarray(array).tobytes(),
                                  array.dtype).reshape(array.shape)
        elif array.flags.writeable:
            array = array.copy()
            array.setflags(write=False)
        vid = self.new_value(Aval(tuple(array.shape), np.dtype(array.dtype)))
        self.constants[vid] = array
        self.origins[vid] = origin
        return vid

    def copy(self, nodes: bool = True) -> Graph:
        """A copy whose lists and tables can change independently (``nodes=False``: without
        the nodes, for a pass that builds them anew)."""
        g = Graph()
        g.avals = list(self.avals)
        g.inputs = list(self.inputs)
        g.constants = dict(self.constants)
        g.origins = dict(self.origins)
        g.nodes = [Node(n.op, n.inputs, n.attrs, n.outputs) for n in self.nodes] if nodes else []
        g.outputs = list(self.outputs)
        return g

    def __len__(self) -> int:
        return len(self.nodes)

    def __str__(self) -> str:
        return listing(self)


def operand_aval(graph: Graph, x) -> Aval:
    return aval_of(x.value) if type(x) is Literal else graph.avals[x]


def validate(graph: Graph, error: Callable[[str], Exception] = ValueError,
             derive: bool = True) -> None:
    """Check definition before use and every node's avals against its op's abstract rule.

    ``derive=False`` checks the structure only (registered ops, each value defined once before
    use): for a graph the staging trace just built, whose avals the same rules gave."""
    defined = set(graph.inputs) | set(graph.constants)
    n_values = len(graph.avals)
    # (op, operand avals, attrs and their types) -> what the abstract rule gave for them
    derived: dict = {}
    for k, node in enumerate(graph.nodes):
        op = node.op
        if REGISTRY.get(op.name) is not op:
            raise error(f"node {k} ({op.name}): the op is not the registered op of that name")
        for x in node.inputs:
            if type(x) is not Literal and x not in defined:
                raise error(f"node {k} ({op.name}): input %{x} is used before it is defined")
        if derive:
            _check_avals(graph, k, node, derived, error)
        for vid in node.outputs:
            if not 0 <= vid < n_values or vid in defined:
                raise error(f"node {k} ({op.name}): output %{vid} is out of range or defined "
                            "twice")
            defined.add(vid)
    for x in graph.outputs:
        if type(x) is not Literal and x not in defined:
            raise error(f"graph output %{x} is never defined")


def _check_avals(graph: Graph, k: int, node, derived: dict, error) -> None:
    """Node ``k``'s output avals against its op's abstract rule (memoized in ``derived``)."""
    op = node.op
    avals = tuple(operand_aval(graph, x) for x in node.inputs)
    try:
        key = (op, avals, tuple((a, type(v), v) for a, v in node.attrs.items()))
        expected = derived.get(key)
    except TypeError:  # attrs that cannot be hashed: derive every time
        key, expected = None, None
    if expected is None:
        try:
            expected = op.abstract(*avals, **node.attrs)
        except Exception as exc:  # the rule's ValueError/TypeError, with a place
            raise error(f"node {k} ({op.name}): {exc}") from None
        expected = expected if op.multiple_results else (expected,)
        if key is not None:
            derived[key] = expected
    if len(expected) != len(node.outputs):
        raise error(f"node {k} ({op.name}): has {len(node.outputs)} outputs, its op gives "
                    f"{len(expected)}")
    for vid, aval in zip(node.outputs, expected):
        if 0 <= vid < len(graph.avals) and graph.avals[vid] != aval:
            raise error(f"node {k} ({op.name}): output %{vid} is {graph.avals[vid]!r} but "
                        f"the op gives {aval!r}")


def evaluate(graph: Graph, inputs: list, constants: dict | None = None) -> list:
    """Interpret the graph with ``bind``, so the innermost trace of the inputs sees each op
    (this is how a staged program differentiates, and how derivatives of programs are built).
    ``constants`` replaces the graph's constants (with tracers of a staging trace, say)."""
    env = dict(zip(graph.inputs, inputs))
    env.update(graph.constants if constants is None else constants)
    for node in graph.nodes:
        args = [x.value if type(x) is Literal else env[x] for x in node.inputs]
        out = bind(node.op, *args, **node.attrs)
        if node.op.multiple_results:
            env.update(zip(node.outputs, out))
        else:
            env[node.outputs[0]] = out
    return [x.value if type(x) is Literal else env[x] for x in graph.outputs]


def live_nodes(graph: Graph) -> tuple[list[Node], dict[int, int]]:
    """The nodes some output needs, in order, and how often each value is used by them and the
    outputs (the values not in it are dead): one backward sweep."""
    uses: dict[int, int] = {}
    for x in graph.outputs:
        if type(x) is not Literal:
            uses[x] = uses.get(x, 0) + 1
    kept = []
    for node in reversed(graph.nodes):
        outs = node.outputs
        if outs[0] in uses if len(outs) == 1 else any(v in uses for v in outs):
            kept.append(node)
            for x in node.inputs:
                if type(x) is not Literal:
                    uses[x] = uses.get(x, 0) + 1
    kept.reverse()
    return kept, uses


def renumber(graph: Graph) -> Graph:
    """The live part of the graph with dense ids: inputs, then the constants used, then the
    outputs of the nodes needed, in order (the numbering saved programs use, so a listing reads
    the same before and after saving). Dead nodes and unused constants are dropped."""
    needed, live = live_nodes(graph)
    avals = graph.avals
    out = Graph()
    new = out.avals  # out.new_value, inline: the id of a value is its index in avals
    ids: dict[int, int] = {}
    for v in graph.inputs:
        ids[v] = len(new)
        new.append(avals[v])
    out.inputs = list(range(len(new)))
    for v in sorted(graph.constants):
        if v in live:
            ids[v] = vid = len(new)
            new.append(avals[v])
            out.constants[vid] = graph.constants[v]
            out.origins[vid] = graph.origins.get(v, "captured")
    nodes = out.nodes
    for node in needed:
        inputs = tuple([x if type(x) is Literal else ids[x] for x in node.inputs])
        outputs = []
        for v in node.outputs:
            ids[v] = vid = len(new)
            new.append(avals[v])
            outputs.append(vid)
        nodes.append(Node(node.op, inputs, node.attrs, tuple(outputs)))
    out.outputs = [x if type(x) is Literal else ids[x] for x in graph.outputs]
    return out


def _attr_text(attrs: dict) -> str:
    return "".join(f", {k}={v!r}" for k, v in attrs.items())


def _name(graph: Graph, x) -> str:
    return repr(x) if type(x) is Literal else f"%{x}"


def listing(graph: Graph) -> str:
    """A readable SSA listing: ``%3 = sin(%1)  float64[8]``."""
    lines = ["inputs: " + ", ".join(f"%{v}: {graph.avals[v]!r}" for v in graph.inputs)]
    for vid in sorted(graph.constants):
        lines.append(f"%{vid} = constant  {graph.avals[vid]!r}  ({graph.origins.get(vid)})")
    for node in graph.nodes:
        outs = ", ".join(f"%{v}" for v in node.outputs)
        args = ", ".join(_name(graph, x) for x in node.inputs)
        avals = ", ".join(repr(graph.avals[v]) for v in node.outputs)
        lines.append(f"{outs} = {node.op.name}({args}{_attr_text(node.attrs)})  {avals}")
    lines.append("return " + ", ".join(_name(graph, x) for x in graph.outputs))
    return "\n".join(lines)

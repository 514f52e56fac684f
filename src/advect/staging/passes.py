"""The optimizer: a fixed pipeline of dead-code elimination, algebraic simplification,
common-subexpression elimination and constant folding, with a report of each pass.

Every pass returns a new graph that computes the same outputs (up to the sign of zero for
``x + 0``). Rewrites only fire when the replacement has exactly the aval of what it replaces,
so shapes, dtypes and NEP 50 weakness are preserved.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .. import ops
from ..dtypes import Aval
from .graph import Graph, Literal, Node, live_nodes, operand_aval, renumber

__all__ = ["PassReport", "OptimizationReport", "optimize", "dce", "simplify", "cse", "fold"]

FOLD_LIMIT = 64  # folded constants may grow to this many elements (or the largest input's size)


class PassReport(NamedTuple):
    """One pass of the pipeline: its name and the node counts around it."""

    name: str
    nodes_before: int
    nodes_after: int


class OptimizationReport(NamedTuple):
    """What the optimizer did: node counts before and after, and each pass in order.

    Example:
        >>> import numpy as np, advect as ad
        >>> report = ad.stage(lambda x: np.sum(x * 1.0), np.ones(3)).optimization
        >>> report.nodes_before, report.nodes_after, report.passes[0].name
        (2, 1, 'dce')
    """

    nodes_before: int
    nodes_after: int
    passes: tuple[PassReport, ...]


# --- dead-code elimination -------------------------------------------------------------------

def dce(graph: Graph) -> Graph:
    """Drop nodes none of whose outputs is needed, and constants nobody uses."""
    return _live(graph)[0]


def _live(graph: Graph) -> tuple[Graph, dict[int, int]]:
    """``dce(graph)`` and how often each value is used in it (by its nodes and outputs): the
    backward sweep that finds what is live counts the uses on the way."""
    kept, uses = live_nodes(graph)
    out = graph.copy(nodes=False)
    out.nodes = kept
    out.constants = {v: c for v, c in graph.constants.items() if v in uses}
    out.origins = {v: o for v, o in graph.origins.items() if v in out.constants}
    return out, uses


# --- helpers ---------------------------------------------------------------------------------

def _is_scalar_value(graph: Graph, x, value) -> bool:
    if type(x) is Literal:
        return type(x.value) is not bool and x.value == value
    const = graph.constants.get(x)
    return const is not None and const.size == 1 and bool(np.all(const == value))


def _is_zero(graph: Graph, x, inexact: bool, negative: bool) -> bool:
    """Whether ``x`` is a scalar zero that adds (``negative``) or subtracts as the identity.
    For floats the additive identity is -0.0: ``x + 0.0`` is +0.0 at ``x = -0.0``, while
    ``x + -0.0`` and ``x - 0.0`` are ``x`` everywhere (an integer zero is +0.0 there)."""
    if not _is_scalar_value(graph, x, 0):
        return False
    if not inexact:
        return True
    value = np.asarray(x.value if type(x) is Literal else graph.constants[x])
    if value.dtype.kind not in "fc":
        return not negative
    parts = (value.real, value.imag) if value.dtype.kind == "c" else (value,)
    return all(bool(np.all(np.signbit(v) == negative)) for v in parts)


def _same_aval(graph: Graph, x, aval: Aval) -> bool:
    return type(x) is not Literal and graph.avals[x] == aval


# --- algebraic simplification -----------------------------------------------------------------

_RESHAPES = ("reshape", "expand_dims", "squeeze")


def _identity(graph, node, producer, uses):
    """x*1, 1*x, x/1, x+0, 0+x, x-0 (with the zero's sign that makes them exact), ops that
    leave their operand unchanged; x*x is square."""
    name, ins, aval = node.op.name, node.inputs, graph.avals[node.outputs[0]]
    inexact = aval.dtype.kind in "fc"
    # a complex product or quotient by 1 is not exact: (inf+0j) * (1+0j) is inf+nanj
    unit = aval.dtype.kind != "c"
    if name in ("multiply", "add"):
        for a, b in ((ins[0], ins[1]), (ins[1], ins[0])):
            if (unit and _is_scalar_value(graph, b, 1) if name == "multiply"
                    else _is_zero(graph, b, inexact, negative=True)) and _same_aval(graph, a, aval):
                return a
    if (name == "divide" and unit and _is_scalar_value(graph, ins[1], 1) or name == "subtract"
            and _is_zero(graph, ins[1], inexact, negative=False)):
        if _same_aval(graph, ins[0], aval):
            return ins[0]
    # a float sum over no axes still adds: np.sum(-0.0, axis=()) is +0.0
    if name in ("astype", "broadcast_to", "positive", "reshape", "conj", "real") or (
            name == "reduce_sum" and not node.attrs["axes"] and not inexact):
        if _same_aval(graph, ins[0], aval) and (name != "conj" or aval.dtype.kind != "c") and (
                name != "real" or aval.dtype.kind != "c"):
            return ins[0]
    if name == "permute_dims" and tuple(node.attrs["axes"]) == tuple(range(aval.ndim)):
        return ins[0]
    if (name == "multiply" and ins[0] == ins[1] and _same_aval(graph, ins[0], aval)
            and aval.dtype.kind in "iufc"):
        # x * x is square(x) bit for bit; one spelling lets CSE merge the two
        return Node(ops.square, (ins[0],), {}, node.outputs)
    return None


def _chain(graph, node, producer, uses):
    """Pairs that cancel or compose: -(-x), transposes, reshapes, lossless astype round trips,
    broadcasts of broadcasts."""
    name, x = node.op.name, node.inputs[0]
    inner = producer.get(x) if type(x) is not Literal else None
    if inner is None:
        return None
    aval = graph.avals[node.outputs[0]]
    base = inner.inputs[0]
    if type(base) is Literal:
        return None
    if name == "negative" and inner.op.name == "negative":
        return base if _same_aval(graph, base, aval) else None
    if name == "permute_dims" and inner.op.name == "permute_dims":
        axes = tuple(inner.attrs["axes"][a] for a in node.attrs["axes"])
        if axes == tuple(range(len(axes))):
            return base
        return Node(node.op, (base,), {"axes": axes}, node.outputs)
    if name in _RESHAPES and inner.op.name in _RESHAPES:
        if _same_aval(graph, base, aval):
            return base
        return Node(ops.reshape, (base,), {"shape": aval.shape}, node.outputs)
    if name == "astype" and inner.op.name == "astype":
        start = graph.avals[base].dtype
        if start == aval.dtype and _exact_widening(start, graph.avals[x].dtype):
            return base if _same_aval(graph, base, aval) else None
    if name == "broadcast_to" and inner.op.name == "broadcast_to":
        return Node(node.op, (base,), node.attrs, node.outputs)
    if name in _RESHAPES and inner.op.name == "matmul":
        return _vector_matmul(graph, node, inner, producer, aval)
    return None


def _exact_widening(start: np.dtype, middle: np.dtype) -> bool:
    """Whether every value of ``start`` survives a cast to ``middle`` exactly, so casting there
    and back is the identity. NumPy's "safe" casts are not all exact: int64 -> float64 rounds
    integers above 2**53."""
    if not np.can_cast(start, middle, "safe"):
        return False
    if start.kind in "iu" and middle.kind in "fc":
        digits = np.finfo(middle).nmant + 1
        return start.itemsize * 8 - (start.kind == "i") <= digits
    return True


def _vector_matmul(graph, node, inner, producer, aval):
    """reshape(matmul(A, reshape(v, (n, 1)))) -> matmul(A, v), and its mirror: a matrix-vector
    product that a transpose rule wrote as a matrix-matrix one."""
    operands = list(inner.inputs)
    for i, x in enumerate(operands):
        lifted = producer.get(x) if type(x) is not Literal else None
        if lifted is None or lifted.op.name not in _RESHAPES or type(lifted.inputs[0]) is Literal:
            continue
        if graph.avals[lifted.inputs[0]].ndim != 1:
            continue
        trial = operands[:i] + [lifted.inputs[0]] + operands[i + 1:]
        try:
            got = inner.op.abstract(*[graph.avals[y] for y in trial])
        except (ValueError, TypeError):
            continue
        if got == aval:
            return Node(inner.op, tuple(trial), {}, node.outputs)
    return None


def _implicit_broadcast(graph, node, producer, uses):
    """An elementwise op broadcasts by itself: feed it the broadcast's operand directly."""
    if not node.op.elementwise or len(node.inputs) < 2:
        return None
    aval = graph.avals[node.outputs[0]]
    inputs = list(node.inputs)
    changed = False
    for i, x in enumerate(inputs):
        inner = producer.get(x) if type(x) is not Literal else None
        if inner is None or inner.op.name != "broadcast_to":
            continue
        trial = inputs[:i] + [inner.inputs[0]] + inputs[i + 1:]
        try:
            got = node.op.abstract(*[operand_aval(graph, y) for y in trial], **node.attrs)
        except (ValueError, TypeError):
            continue
        if got == aval:
            inputs, changed = trial, True
    return Node(node.op, tuple(inputs), node.attrs, node.outputs) if changed else None


def _negations(graph, node, producer, uses):
    """Absorb a negation, exactly: a + (-b) = a - b, a - (-b) = a + b, (-a) + b = b - a,
    k * (-x) = (-k) * x for a literal k."""
    name, ins = node.op.name, node.inputs
    if name not in ("add", "subtract", "multiply"):
        return None
    aval = graph.avals[node.outputs[0]]
    negated = [producer.get(x) if type(x) is not Literal else None for x in ins]
    negated = [n.inputs[0] if n is not None and n.op.name == "negative"
               and _exact_negation(graph, x, aval) else None for n, x in zip(negated, ins)]
    candidates = []
    if name == "add" and negated[1] is not None:
        candidates.append((ops.subtract, (ins[0], negated[1])))
    if name == "add" and negated[0] is not None:
        candidates.append((ops.subtract, (ins[1], negated[0])))
    if name == "subtract" and negated[1] is not None:
        candidates.append((ops.add, (ins[0], negated[1])))
    if name == "multiply":
        for k, x in ((0, 1), (1, 0)):
            if type(ins[k]) is Literal and negated[x] is not None:
                trial = [None, None]
                trial[k], trial[x] = ins[k], negated[x]
                candidate = _scaled(graph, node, tuple(trial))
                if candidate is not None:
                    return candidate
    for op, inputs in candidates:
        if op.abstract(*[operand_aval(graph, x) for x in inputs]) == aval:
            return Node(op, inputs, {}, node.outputs)
    return None


def _exact_negation(graph, x, aval: Aval) -> bool:
    """Whether the negation that produced ``x`` can move across the op that makes ``aval``:
    it happens in that op's dtype, or in a float or complex one (where it commutes with the
    cast). An integer negation that wraps before a promotion does not (``-uint8(1)`` is 255)."""
    dtype = graph.avals[x].dtype
    return dtype == aval.dtype or dtype.kind in "fc"


def _scaled(graph, node, operands):
    """``(-k) * x`` for operands ``(k, x)`` or ``(x, k)`` with a numeric literal k (that
    ``-k`` fits an integer result: NumPy refuses ``uint8 * -2``)."""
    aval = graph.avals[node.outputs[0]]
    for k, x in ((0, 1), (1, 0)):
        lit = operands[k]
        if (type(lit) is Literal and type(lit.value) is not bool
                and type(operands[x]) is not Literal):
            if aval.dtype.kind in "iu" and not (
                    np.iinfo(aval.dtype).min <= -lit.value <= np.iinfo(aval.dtype).max):
                continue
            trial = [None, None]
            trial[k], trial[x] = Literal(-lit.value), operands[x]
            if ops.multiply.abstract(*[operand_aval(graph, y) for y in trial]) == aval:
                return Node(ops.multiply, tuple(trial), {}, node.outputs)
    return None


def _negation_outward(graph, node, producer, uses):
    """(-a) * b -> -(a * b) when the negation has no other use, so it can travel to where it
    is absorbed (a later add, subtract or literal factor)."""
    if node.op.name != "multiply":
        return None
    aval = graph.avals[node.outputs[0]]
    for k in (0, 1):
        x, other = node.inputs[k], node.inputs[1 - k]
        inner = producer.get(x) if type(x) is not Literal else None
        if (inner is None or inner.op.name != "negative" or uses.get(x) != 1
                or type(other) is Literal or not _exact_negation(graph, x, aval)):
            continue
        trial = (inner.inputs[0], other) if k == 0 else (other, inner.inputs[0])
        if ops.multiply.abstract(*[operand_aval(graph, y) for y in trial]) != aval:
            continue
        product = graph.new_value(aval)
        return [Node(ops.multiply, trial, {}, (product,)),
                Node(ops.negative, (product,), {}, node.outputs)]
    return None


def _scatter_into(graph, node, producer, uses):
    """x + scatter_add(zeros, v, index) -> scatter_add(x, v, index) for a basic index (no
    index arrays, so no repeated targets: exact up to the sign of zero), when the scatter has
    no other use: how a reverse pass adds the cotangent of ``y[i]`` into that of ``y``."""
    aval = graph.avals[node.outputs[0]]
    for k in (0, 1):
        x, other = node.inputs[k], node.inputs[1 - k]
        inner = producer.get(x) if type(x) is not Literal else None
        if (inner is None or inner.op.name != "scatter_add" or len(inner.inputs) != 2
                or uses.get(x) != 1 or type(other) is Literal or graph.avals[other] != aval
                or graph.avals[x] != aval):
            continue
        zeros = graph.constants.get(inner.inputs[0])
        if zeros is not None and not np.any(zeros):
            return Node(inner.op, (other, *inner.inputs[1:]), inner.attrs, node.outputs)
    return None


# --- constant folding ------------------------------------------------------------------------

_CREATION = frozenset((ops.full_like, ops.iota_like))  # read only their operand's aval


def _data_independent(node: Node) -> bool:
    return node.op in _CREATION


def _fold_operand(graph: Graph, x, stand_in: bool):
    if type(x) is Literal:
        return x.value
    const = graph.constants.get(x)
    if const is not None:
        return const
    aval = graph.avals[x]  # shape and dtype without memory
    return np.broadcast_to(np.zeros((), aval.dtype), aval.shape) if stand_in else None


def _fold(graph: Graph, node: Node):
    """The node's result computed now, as a constant id or a Literal; None to keep the node:
    an operand is unknown, the result is large (more than FOLD_LIMIT elements, or than its
    largest constant operand), or computing it fails (it fails, or warns, at run time)."""
    stand_in = _data_independent(node)
    args = [_fold_operand(graph, x, stand_in) for x in node.inputs]
    if any(a is None for a in args):
        return None
    aval = graph.avals[node.outputs[0]]
    if node.op.linear and not node.op.elementwise and aval.size > FOLD_LIMIT:
        return None  # a large reshape, transpose or slice is a view at run time: keep it
    limit = max([FOLD_LIMIT] + [np.size(a) for a in args if isinstance(a, np.ndarray)
                                and not stand_in])
    if aval.size > limit:
        return None
    try:
        with np.errstate(all="ignore"):
            value = node.op.impl(np, *args, **node.attrs)
    except Exception:  # left to fail, or warn, when the program runs, as eager code would
        return None
    if aval.weak and aval.shape == ():
        return Literal(np.asarray(value).item())
    array = np.array(value, copy=True, order="C")
    if Aval(array.shape, array.dtype) != aval:
        return None
    array.setflags(write=False)
    return array


# --- the rewriting walk ----------------------------------------------------------------------

# what each rule needs before it can fire (so a node tries only the rules that may):
_UNIT_OPS = frozenset(("multiply", "add", "divide", "subtract"))  # a known operand, or x * x
_IDENTITY_OPS = frozenset(("astype", "broadcast_to", "positive", "reshape", "conj", "real",
                           "reduce_sum", "permute_dims"))
_CHAIN_OPS = frozenset(("negative", "permute_dims", "astype", "broadcast_to") + _RESHAPES)
_NEGATION_OPS = frozenset(("add", "subtract", "multiply"))  # a negated operand
_RULE_OPS = _UNIT_OPS | _IDENTITY_OPS | _CHAIN_OPS | _NEGATION_OPS


def _simplify_rules(graph: Graph, node: Node, producer: dict) -> list | tuple:
    """The rules that may rewrite ``node``, in order: each needs a known operand, a producer
    of some kind, or an op of some name, and most nodes have none of those."""
    name, ins = node.op.name, node.inputs
    if name not in _RULE_OPS and not (node.op.elementwise and len(ins) >= 2):
        return ()  # no rule takes this op (gather, sin, stack, ...)
    known = negated = broadcast = scattered = False
    first = None  # the producer of the first operand
    for i, x in enumerate(ins):
        if type(x) is Literal or x in graph.constants:
            known = True
            continue
        inner = producer.get(x)
        if inner is not None:
            first = inner if i == 0 else first
            negated = negated or inner.op.name == "negative"
            broadcast = broadcast or inner.op.name == "broadcast_to"
            scattered = scattered or inner.op.name == "scatter_add"
    rules = []
    if name in _IDENTITY_OPS or name in _UNIT_OPS and (known or ins[0] == ins[-1]):
        rules.append(_identity)
    if first is not None and name in _CHAIN_OPS:
        rules.append(_chain)
    if negated and name in _NEGATION_OPS:
        rules.append(_negations)
        if name == "multiply":
            rules.append(_negation_outward)
    if broadcast and node.op.elementwise and len(ins) >= 2:
        rules.append(_implicit_broadcast)
    if scattered and name == "add":
        rules.append(_scatter_into)
    return rules


def _constant_key(array) -> tuple:
    return (array.dtype.str, array.shape, array.tobytes())


class _Walk:
    """One forward walk over the nodes applying the chosen rewrites to each node in turn:
    ``simplify`` (repeated on a node while it returns a new node), then ``fold``, then ``cse``.
    Operands are final by the time a node is reached, so chains collapse in one walk. Counts
    the nodes each rewrite removed (``simplify`` may add one: an outward negation)."""

    def __init__(self, graph: Graph, stages: tuple[str, ...], uses: dict | None = None):
        self.graph, self.stages = graph, stages
        self.removed = dict.fromkeys(stages, 0)
        self.simplifying, self.folding, self.merging = (
            "simplify" in stages, "fold" in stages, "cse" in stages)
        self.out = graph.copy(nodes=False)
        self.sub: dict[int, object] = {}  # value id -> the operand that replaces it
        self.producer: dict[int, Node] = {}
        self.seen: dict[tuple, Node] = {}
        if uses is None:  # how often each value is used (where ``simplify`` needs it)
            uses = _live(graph)[1] if self.simplifying else {}
        self.uses = uses
        self.constants: dict[tuple, int] = {}  # contents -> the first constant holding them

    def run(self) -> Graph:
        graph, out, sub = self.graph, self.out, self.sub
        if self.merging:
            for vid, const in graph.constants.items():
                first = self.constants.setdefault(_constant_key(const), vid)
                if first != vid:
                    sub[vid] = first
        for node in graph.nodes:
            self._visit(node)
        out.outputs = [x if type(x) is Literal else sub.get(x, x) for x in graph.outputs]
        return out

    def _visit(self, node: Node) -> None:
        sub, ins = self.sub, node.inputs
        inputs = tuple([x if type(x) is Literal else sub.get(x, x) for x in ins])
        if inputs != ins:
            node = Node(node.op, inputs, node.attrs, node.outputs)
        result = None
        op = node.op
        if op.multiple_results:
            pass
        elif self.simplifying and (op.name in _RULE_OPS or op.elementwise and len(inputs) >= 2):
            node, result = self._simplify(node)  # (only those ops have rules)
        if result is None and self.folding and not node.op.multiple_results:
            constants = self.out.constants
            for x in node.inputs:  # foldable: every operand known, or a creation op
                if type(x) is not Literal and x not in constants and node.op not in _CREATION:
                    break
            else:
                result = self._fold(node)
        if result is None and self.merging and not node.op.multiple_results:
            key = _cse_key(node)
            first = self.seen.get(key) if key is not None else None
            if first is not None:
                result = first.outputs[0]
                self.removed["cse"] += 1
            elif key is not None:
                self.seen[key] = node
        if result is not None:
            sub[node.outputs[0]] = result
            return
        self.out.nodes.append(node)
        for v in node.outputs:
            self.producer[v] = node

    def _simplify(self, node: Node):
        for _ in range(4):  # a replacement node may simplify again (bounded)
            for rule in _simplify_rules(self.out, node, self.producer):
                result = rule(self.out, node, self.producer, self.uses)
                if result is not None:  # value id 0 is a valid replacement
                    break
            else:
                return node, None
            if isinstance(result, list):  # new nodes before the replacement: visit them
                self.removed["simplify"] -= len(result) - 1
                for extra in result[:-1]:
                    self._visit(extra)
                last = result[-1]
                result = Node(last.op, tuple(x if type(x) is Literal else self.sub.get(x, x)
                                             for x in last.inputs), last.attrs, last.outputs)
            if not isinstance(result, Node):
                self.removed["simplify"] += 1
                return node, result
            node = result
        return node, None

    def _fold(self, node: Node):
        result = _fold(self.out, node)
        if isinstance(result, np.ndarray):
            key = _constant_key(result) if self.merging else None
            first = self.constants.get(key) if key is not None else None
            if first is None:
                first = self.out.add_constant(result, "folded")
                if key is not None:
                    self.constants[key] = first
            result = first
        if result is not None:
            self.removed["fold"] += 1
        return result


def _cse_key(node: Node):
    """What makes two nodes the same computation (None: attrs that cannot be hashed)."""
    operands = node.inputs
    for x in operands:
        if type(x) is Literal:
            operands = tuple(x.key() if type(x) is Literal else x for x in operands)
            break
    attrs = node.attrs
    if not attrs:  # value ids and Literal keys: hashable
        return (node.op, operands, ())
    # attrs with their types: 1, 1.0 and True are equal keys in Python, not equal attrs here
    key = (node.op, operands, tuple(sorted((a, type(v).__name__, v) for a, v in attrs.items())))
    try:
        hash(key)
    except TypeError:
        return None
    return key


def simplify(graph: Graph) -> Graph:
    """Algebraic identities, cancelling chains, absorbed negations, implicit broadcasts."""
    return _Walk(graph, ("simplify",)).run()


def cse(graph: Graph) -> Graph:
    """Merge identical constants and nodes that apply the same op to the same operands."""
    return dce(_Walk(graph, ("cse",)).run())


def fold(graph: Graph) -> Graph:
    """Compute at staging time every node whose operands are all known, when the result is
    small (at most FOLD_LIMIT elements, or no larger than its largest constant operand)."""
    return _Walk(graph, ("fold",)).run()


# --- the pipeline ------------------------------------------------------------------------------

STAGES = ("simplify", "fold", "cse")  # the order the walk tries them on a node


def optimize(graph: Graph) -> tuple[Graph, OptimizationReport]:
    """DCE, one walk that simplifies, folds and merges each node in turn, DCE (with dense ids:
    ``renumber``). Operands are final before a node is reached and a rewrite's new nodes are
    visited too, so the walk reaches what repeating it would (a second walk finds nothing on
    the test programs); each pass visits each node once, so optimizing is linear in the
    graph."""
    before = len(graph.nodes)
    graph, uses = _live(graph)
    n = len(graph.nodes)
    passes = [PassReport("dce", before, n)]
    walk = _Walk(graph, STAGES, uses)
    graph = walk.run()
    for name in STAGES:  # the walk's removals, reported as the passes they stand for
        passes.append(PassReport(name, n, n - walk.removed[name]))
        n -= walk.removed[name]
    n = len(graph.nodes)
    graph = renumber(graph)  # drops what the walk left dead
    passes.append(PassReport("dce", n, len(graph.nodes)))
    return graph, OptimizationReport(before, len(graph.nodes), tuple(passes))

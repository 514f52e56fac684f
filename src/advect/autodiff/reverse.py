"""Reverse mode: a linear tape recorded while JVP rules run, walked backward by transposes.

``linearize_flat`` runs a function under a :class:`JVPTrace` whose input tangents are variables
of a :class:`LinearTrace`. Each JVP rule's tangent arithmetic lands on the tape as equations
``(op, args, attrs, out)``; arguments that are not tape variables are the constants (residuals)
the reverse pass needs. ``backward`` applies each op's transpose rule from the last equation to
the first and releases every equation (and so its residuals) as soon as it is used.
"""

from __future__ import annotations

import gc
import itertools
import sys

import numpy as np

from .. import core, ops
from ..core import Trace, Tracer, bind
from ..dtypes import Aval, aval_of
from ..errors import NoVJPError
from ..numpy._methods import INPUT
from ..numpy._mutation import input_marker
from ..ops import _rules
from ..ops.indexing import index_key
from .forward import JVPTrace, JVPTracer

__all__ = ["LinearTrace", "LinearTracer", "linearize_flat", "lower", "backward", "forward",
           "ones_like_scalar"]


class LinearTracer(Tracer):
    """A variable of the linear tape: only its aval is known."""

    __slots__ = ("aval", "index", "shape")  # shape: aval.shape, read by every transpose
    _linear = True

    def __init__(self, trace: LinearTrace, aval: Aval, index: int):
        self._trace = trace
        self.aval = aval
        self.index = index
        self.shape = aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def ndim(self):
        return len(self.aval.shape)

    def __repr__(self) -> str:
        return f"LinearTracer(%{self.index}: {self.aval})"


class LinearTrace(Trace):
    """Records the linear equations the JVP rules apply to tape variables."""

    __slots__ = ("tape", "count")

    def __init__(self):
        super().__init__()
        self.tape: list = []
        self.count = 0

    def close(self) -> None:
        """Finish recording. The trace lets go of its tape, so the tape's variables (which
        refer to the trace) form no reference cycle with it: whoever holds the tape frees it,
        without waiting for the cycle collector. Take ``tape`` before closing."""
        self.alive = False
        self.tape = None

    def new_var(self, aval: Aval) -> LinearTracer:
        var = LinearTracer(self, aval, self.count)
        self.count += 1
        return var

    def process(self, op, args, attrs):
        if op in _SAME_AVAL_OPS and len(args) == 2:
            var, constant = args  # the hot case: var * constant of the same aval
            out_aval = var.aval if type(var) is LinearTracer else None
            if out_aval is None or type(constant) is not np.ndarray or out_aval.weak \
                    or constant.shape != out_aval.shape or constant.dtype != out_aval.dtype:
                out_aval = _same_aval(var, constant)  # the general test
            if out_aval is None:
                out_aval = op.abstract(*[_aval(a) for a in args], **attrs)
        else:
            out_aval = op.abstract(*[_aval(a) for a in args], **attrs)
        if op.transpose is None:
            raise _no_transpose(op)
        if not op.multiple_results:  # self.record(op, args, attrs, out_aval), inline
            out = LinearTracer(self, out_aval, self.count)
            self.count += 1
            self.tape.append((op, args, attrs, out))
            return out
        out = tuple(self.new_var(a) for a in out_aval)
        self.tape.append((op, args, attrs, out))
        return out

    def record(self, op, args: tuple, attrs: dict, aval: Aval) -> LinearTracer:
        """Append ``op(*args)`` with the known output ``aval`` (a single result)."""
        if op.transpose is None:
            raise _no_transpose(op)
        out = LinearTracer(self, aval, self.count)
        self.count += 1
        self.tape.append((op, args, attrs, out))
        return out


# Binary ops whose result has the aval of a tape variable they combine with a constant of the
# same aval (tape variables are inexact, which divide keeps)
_SAME_AVAL_OPS = frozenset((ops.multiply, ops.add, ops.subtract, ops.divide))


def _no_transpose(op) -> NoVJPError:
    return NoVJPError(f"operation {op.name!r} has no transpose rule, so it cannot be "
                      "differentiated in reverse mode", op=op.name)


def _aval(a):
    return a.aval if type(a) is LinearTracer else aval_of(a)


def _same_aval(x, y):
    """The common aval of a tape variable and a NumPy array (or another variable, or a tracer)
    that agree in shape and dtype, else None."""
    var, other = (x, y) if type(x) is LinearTracer else (y, x)
    if type(var) is not LinearTracer:
        return None
    aval = var.aval
    if type(other) is LinearTracer:
        other_aval = other.aval
        return aval if other_aval.shape == aval.shape and other_aval.dtype == aval.dtype \
            and other_aval.weak == aval.weak else None
    if type(other) is np.ndarray and other.shape == aval.shape and other.dtype == aval.dtype \
            and not aval.weak:
        return aval
    if (type(other) is float or type(other) is int) and aval.dtype.kind in "fc":
        return aval  # a weak Python scalar keeps a floating variable's dtype (NEP 50)
    if isinstance(other, Tracer):  # a staged value, when a program is differentiated
        o = other.aval
        if o.shape == aval.shape and o.dtype == aval.dtype and o.weak == aval.weak \
                and o.device == aval.device:
            return aval
    return None


def linearize_flat(fun, primals):
    """Run ``fun(*inputs)`` with one read-only tracer per primal; returns ``(outputs, in_vars,
    trace, tape)``: whatever ``fun`` returned (tracers inside, for the caller to ``lower``), the
    input tape variables, and the two traces, which the caller closes when done."""
    trace = JVPTrace()
    tape = LinearTrace()
    in_vars, inputs = [], []
    for p in primals:
        var = LinearTracer(tape, Aval(p.shape, p.dtype) if type(p) is np.ndarray  # new_var,
                           else aval_of(p), tape.count)  # inline: aval_of(p) without a call
        tape.count += 1
        x = JVPTracer(trace, p, var)
        # a transform's inputs are never writable; a NumPy scalar is immutable anyway
        x._mut = INPUT if type(p) is np.ndarray else input_marker(p)
        in_vars.append(var)
        inputs.append(x)
    try:
        out = call_uncollected(fun, inputs)
    except BaseException:
        trace.close()
        tape.close()
        raise
    return out, in_vars, trace, tape


def call_uncollected(fun, inputs):
    """``fun(*inputs)`` with Python's cycle collector paused (left as the caller had it).

    A transform's trace allocates thousands of tracers and tape entries, which form no cycles
    (tapes are freed by reference counting), and each collection would walk every object of
    the process: with a large heap (JAX and PyTorch imported) a 100-step RK4 gradient took
    twice as long with the collector running. Cycles the function makes are collected
    afterwards, as usual."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        return fun(*inputs)
    finally:
        if collecting:
            gc.enable()


def ones_like_scalar(primal):
    """The cotangent seed 1 for a scalar output, in its dtype and provider."""
    if type(primal) is np.ndarray or isinstance(primal, np.generic):
        seed = _SEEDS.get(primal.dtype)
        if seed is None:
            seed = _SEEDS[primal.dtype] = np.ones((), primal.dtype)
            seed.flags.writeable = False  # shared by every call: backward copies what it keeps
        return seed
    return ops.full_like(primal, fill_value=1, shape=(), dtype=None)


_SEEDS: dict = {}


def lower(trace, value):
    """Split a value of ``trace`` into (primal, tangent var or None)."""
    if type(value) is JVPTracer and value._trace is trace:
        return value.primal, value.tangent
    return value, None


def _broadcastable(shape, target) -> bool:
    """Whether ``shape`` broadcasts to ``target`` (right-aligned, each axis 1 or equal)."""
    if len(shape) > len(target):
        return False
    return all(n == 1 or n == m for n, m in zip(reversed(shape), reversed(target)))


def _accumulate(cts, lazy, var, ct, neg=None, negated=False):
    """Add ``ct`` (its negation when ``negated``) into the cotangent of ``var``. A cotangent
    that merely broadcasts to the variable's shape is kept small (``lazy``) until a
    non-elementwise transpose needs it; ``neg`` holds the variables whose stored cotangent is
    the negation of theirs (see ``backward``)."""
    aval = var.aval
    if type(ct) is np.ndarray or isinstance(ct, np.generic):
        shape, dtype = ct.shape, ct.dtype
    else:  # a tracer, a Python scalar or another provider's array: compare NumPy dtypes
        ct_aval = aval_of(ct)
        shape, dtype = ct_aval.shape, ct_aval.dtype
    if dtype != aval.dtype:
        ct = _rules.fit(ct, aval.update(shape=tuple(shape)))
    if shape != aval.shape:
        # a 0-d cotangent broadcasts to all; an empty variable gets its (empty) cotangent at
        # once, so no transpose computes on values that do not exist (1 / 0 for a mean of none)
        if (not shape or _broadcastable(shape, aval.shape)) and 0 not in aval.shape:
            lazy[var.index] = aval
        else:
            ct = _rules.fit(ct, aval)
    old = cts.get(var.index)
    if old is None:
        cts[var.index] = ct
        if negated:
            neg.add(var.index)
        return
    # the stored value keeps its sign: add ct when the signs agree, else subtract it
    differ = negated != (neg is not None and var.index in neg)
    if (type(old) is np.ndarray and type(ct) is np.ndarray and old.base is None
            and sys.getrefcount(old) == 3 and old.flags.writeable and old.dtype == ct.dtype
            and old.shape == ct.shape):
        # only the table holds ``old`` (a temporary of this backward pass): add in place
        (np.subtract if differ else np.add)(old, ct, out=old)
    else:
        cts[var.index] = ops.subtract(old, ct) if differ else ops.add(old, ct)


def _expand(ct, aval, elementwise, args):
    """A lazily broadcast cotangent at the full shape ``aval.shape``.

    The small cotangent stands for ``broadcast_to(ct, aval.shape)``. Only an elementwise
    transpose whose tape operands all have that full shape may take it as it is: each operand's
    cotangent is then a pointwise function of the output's, so it broadcasts the same way. An
    operand that was itself broadcast needs the sum over the broadcast axes, which only the
    full-shape cotangent gives (a NumPy broadcast is a view: no data is copied).
    """
    if elementwise:
        shape = aval.shape
        for a in args:
            if type(a) is LinearTracer and a.aval.shape != shape:
                break
        else:
            return ct
    return ops.broadcast_to(ct, shape=aval.shape)


def _full(ct, aval):
    """An input's final cotangent ``ct`` broadcast to ``aval`` (its dtype already): writable
    memory of its own for NumPy, else the provider's broadcast."""
    if type(ct) is np.ndarray or isinstance(ct, np.generic):
        full = np.empty(aval.shape, aval.dtype)  # writable memory of its own
        full[...] = ct
        return full
    return ops.broadcast_to(ct, shape=aval.shape)


def _pop(cts, lazy, neg, var):
    ct = cts.pop(var.index, None)
    if ct is not None and var.index in neg:
        neg.discard(var.index)
        ct = _negated(ct)
    if ct is not None and var.index in lazy:
        ct = ops.broadcast_to(ct, shape=lazy.pop(var.index).shape)
    return ct


def _odd(op) -> bool:
    """Whether ``op``'s transpose of ``-ct`` is exactly minus its transpose of ``ct``: the
    built-in rules (linear in ct, with NumPy arithmetic, which rounds symmetrically). A custom
    primitive's or a checkpoint's rule runs user code (a clipping VJP, say): it gets the
    negation computed."""
    odd = _ODD.get(op)
    if odd is None:
        odd = _ODD[op] = getattr(op.transpose, "__module__", "").startswith("advect.ops.")
    return odd


_ODD: dict = {}
_UNSIGNED = itertools.repeat(False)  # no operand's cotangent negated (an endless iterator)


def _negated(ct):
    """The true cotangent of a negated one: ``0 - ct``, which is ``-ct`` except that a zero
    comes out +0.0 (IEEE sums are not odd at zero: -(a + b) is -0.0 where (-a) + (-b) is +0.0
    for b = -a, so ``-ct`` would show signs the general path does not)."""
    return ops.subtract(0, ct)


_GATHER = ops.gather


def _gather_into(cts, lazy, neg, var, ct, negated, attrs) -> bool:
    """The transpose of a basic-index ``gather`` (no index arrays, so no repeated targets)
    for NumPy cotangents, in place: ``ct`` is added into the variable's cotangent at the index
    when that cotangent is a temporary of this pass, or written into fresh zeros. The general
    path builds zeros, scatters into them and adds (three ops); the values are the same. Returns
    False (nothing done) for any other case."""
    if type(var) is not LinearTracer or core.debug_hooks is not None or var.index in lazy:
        return False
    aval = var.aval
    if not (type(ct) is np.ndarray or isinstance(ct, np.generic)) or ct.dtype != aval.dtype:
        return False
    key = index_key(attrs["index"], ())
    old = cts.get(var.index)
    if old is None:
        old = np.zeros(aval.shape, aval.dtype)
        old[key] = ct
        cts[var.index] = old
        if negated:
            neg.add(var.index)
        return True
    if (type(old) is np.ndarray and old.base is None and sys.getrefcount(old) == 3
            and old.flags.writeable and old.dtype == aval.dtype and old.shape == aval.shape):
        # only the table holds ``old``: a temporary of this backward pass
        if negated != (var.index in neg):
            old[key] -= ct
        else:
            old[key] += ct
        return True
    return False


def backward(tape: list, seeds: list, keep: bool = False) -> dict:
    """Walk ``tape`` backward from ``seeds`` (pairs of output var and cotangent); returns the
    cotangents by variable index. Without ``keep`` each equation is released once used.

    A cotangent may be stored negated (its variable's index is in ``neg``): the transposes of
    subtract and negative flip signs instead of computing negations (``Op.signed_transpose``),
    and a built-in transpose maps a negated cotangent to negated ones."""
    cts: dict = {}
    lazy: dict = {}
    neg: set = set()
    for var, ct in seeds:
        if var is not None and ct is not None:
            aval = var.aval
            if type(ct) is np.ndarray and ct.shape == aval.shape and ct.dtype == aval.dtype \
                    and var.index not in cts:
                cts[var.index] = ct  # _accumulate's first case, inline: a seed that fits
            else:
                _accumulate(cts, lazy, var, ct)
    hooks = core.debug_hooks  # read once: another thread may leave its debug context meanwhile
    debugging = hooks is not None
    for i in range(len(tape) - 1, -1, -1):
        op, args, attrs, out = tape[i]
        if not keep:
            tape[i] = None
        if op.multiple_results:
            ct = tuple(_pop(cts, lazy, neg, o) for o in out)
            if all(c is None for c in ct):
                continue
            negated = False
        else:
            ct = cts.pop(out.index, None)
            if ct is None:
                continue
            negated = False
            if neg and out.index in neg:
                neg.discard(out.index)
                odd = _ODD.get(op)  # _odd(op), inline
                if debugging or not (_odd(op) if odd is None else odd):
                    ct = _negated(ct)
                else:
                    negated = True
            if lazy and out.index in lazy:
                ct = _expand(ct, lazy.pop(out.index), op.elementwise, args)
        if op is _GATHER and len(args) == 1 and _gather_into(cts, lazy, neg, args[0], ct,
                                                             negated, attrs):
            continue
        signs = _UNSIGNED
        if debugging:  # inside advect.debug: locate errors, check cotangents for NaN and inf
            arg_cts = hooks.transpose(op, out, ct, args, attrs)
        elif op.signed_transpose is not None:  # subtract, negative: carry the signs
            transpose, signs = op.signed_transpose
            arg_cts = transpose(ct, *args, **attrs)
        else:
            arg_cts = op.transpose(ct, *args, **attrs)
        for a, c, flip in zip(args, arg_cts, signs):
            if c is not None and type(a) is LinearTracer:
                sign = negated is not flip
                aval = a.aval
                if type(c) is np.ndarray:
                    fits = c.shape == aval.shape and c.dtype == aval.dtype
                else:  # a tracer (staging a gradient, say) has its aval at hand
                    c_aval = c.aval if isinstance(c, Tracer) else None
                    fits = c_aval is not None and c_aval.shape == aval.shape \
                        and c_aval.dtype == aval.dtype
                if fits and a.index not in cts:
                    cts[a.index] = c  # the common case, inline
                    if sign:
                        neg.add(a.index)
                else:
                    _accumulate(cts, lazy, a, c, neg, sign)
    for index in neg:  # what is left are the inputs' cotangents
        cts[index] = _negated(cts[index])
    for index, aval in lazy.items():
        if index in cts:
            cts[index] = _full(cts[index], aval)
    _own(cts, seeds)
    if not keep:
        tape.clear()
    return cts


def _root(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def _own(cts: dict, seeds: list) -> None:
    """Make each NumPy cotangent left in ``cts`` (the inputs') writable memory of its own.

    A transpose may hand one array to several variables (``add`` returns ``(ct, ct)``), a view
    of another's (``reshape``), a read-only broadcast (``permute_dims`` of a lazily expanded
    cotangent) or the seed itself; a caller that updates one gradient in place must change
    nothing else. Only arrays that share memory or are read-only are copied.
    """
    seen = set()
    for _, ct in seeds:
        if type(ct) is np.ndarray:
            seen.add(id(ct if ct.base is None else _root(ct)))
    for index, ct in cts.items():
        if type(ct) is not np.ndarray:
            continue
        root = id(ct if ct.base is None else _root(ct))
        if root in seen or not ct.flags.writeable:
            cts[index] = ct.copy()
        else:
            seen.add(root)


def forward(tape: list, in_vars: list, tangents: list) -> dict:
    """Evaluate the tape forward for new input tangents; returns values by variable index."""
    values = {v.index: t for v, t in zip(in_vars, tangents) if t is not None}
    ref = next(iter(values.values()), None)
    for op, args, attrs, out in tape:
        if not any(type(a) is LinearTracer and a.index in values for a in args):
            continue
        filled = []
        for a in args:
            if type(a) is LinearTracer:
                v = values.get(a.index)
                filled.append(ops.zeros_like(ref, shape=a.aval.shape, dtype=a.aval.dtype.name)
                              if v is None else v)
            else:
                filled.append(a)
        result = bind(op, *filled, **attrs)
        if op.multiple_results:
            for o, r in zip(out, result):
                values[o.index] = r
        else:
            values[out.index] = result
    return values

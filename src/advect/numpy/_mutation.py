"""Functionalized mutation: ``y[i] = v``, ``y += v`` and ``out=y`` on owned local arrays.

A tracer is a mutable wrapper around an immutable value: each write emits a pure op (``scatter``,
``add``, ...) and repoints the tracer to its result (``_assign``), so the tape and the staged graph
stay pure dataflow. The ``_mut`` slot of a tracer says what it may do:

* ``None``: an owned local array, freely writable; a 0-d one stands for the immutable NumPy
  scalar that NumPy returns for a 0-d result (``np.sum(x)``, ``y[0]``), so ``v += 1`` rebinds it;
* ``ARRAY``: an owned 0-d ndarray (``np.zeros(())``, ``y.copy()`` of a 0-d array), written in
  place by ``v += 1`` as NumPy's;
* ``INPUT``: an input of a transform, or a view of one: never writable (an input that is a
  NumPy scalar, or a traced one, is marked ``None`` instead: :func:`input_marker`);
* a :class:`View`: taken from ``parent`` by a basic index (writes pass through to the parent), by
  a transformation such as ``.T`` or ``.reshape()`` (``index`` is None: not writable), or as one
  of NumPy's read-only views (``index`` is ``READ_ONLY``: ``np.broadcast_arrays`` pieces,
  ``np.diagonal``, sliding windows; a write raises NumPy's ValueError).

A parent remembers its views (weakly). Writing the parent marks them stale: their trace is
swapped for a dead one, so any later use raises :class:`StaleViewError` at ``bind``, at no cost to
the reads that never meet a write. Writing through a view keeps that view current.
"""

from __future__ import annotations

import sys
import weakref

import numpy as np

from .. import ops
from ..core import Trace, Tracer
from ..dtypes import aval_of
from ..errors import MutationError, StaleViewError, TracingError

__all__ = ["INPUT", "ARRAY", "READ_ONLY", "View", "Flat", "mark_view", "mark_array", "marks_array",
           "input_marker",
           "array_result", "setitem", "assign_inplace", "owned_copy", "check_writable",
           "write_plain", "numpy_scalar", "same_root", "root_positions",
           "read_after_write",
           "check_sequential"]

INPUT = "input"  # the _mut marker of a transform's inputs and their views: never writable
ARRAY = "array"  # the _mut marker of an owned 0-d ndarray (not a NumPy scalar): writable
READ_ONLY = "read-only"  # the index of a view NumPy makes read-only (np.broadcast_to, ...)


def marks_array(mut) -> bool:
    """Whether a 0-d tracer with the marker ``mut`` stands for a 0-d ndarray in eager NumPy (an
    owned one such as ``np.zeros(())`` or a copy, a view such as ``y[0, ...]``, an input) rather
    than a NumPy scalar. Both lifetimes give their 0-d results these types."""
    return mut is ARRAY or mut is INPUT or type(mut) is View


def input_marker(value):
    """The marker of a transform's input standing for ``value``: ``None`` for a NumPy scalar
    (``np.float64(2)``) or a tracer standing for one, which NumPy's rules already keep from
    being written (``v += 1`` rebinds, ``v[...] = 1`` raises as NumPy does) and whose results
    get NumPy's types (``v.copy()`` and ``v.astype(...)`` are scalars, ``v[...]`` an array);
    else ``INPUT``."""
    if isinstance(value, np.generic):
        return None
    if isinstance(value, Tracer) and getattr(value, "_mut", INPUT) is None \
            and not value.shape and not aval_of(value).weak:
        return None
    return INPUT


def numpy_scalar(x) -> bool:
    """Whether ``x`` is a live 0-d tracer that stands for an immutable NumPy scalar (see
    :func:`marks_array`). NumPy's ``scalar.fill(v)``, ``np.put(scalar, ...)`` and
    ``scalar.flat[i] = v`` write into a temporary 0-d array: the scalar keeps its value."""
    return isinstance(x, Tracer) and not x.shape and not marks_array(x._mut) and x._trace.alive


class ReadOnlyViewError(MutationError, ValueError):
    """A write into one of NumPy's read-only views: NumPy's ValueError, and a MutationError."""


class View:
    """How a view was taken: from ``parent`` with the gather ``index`` (None: a transformed
    view such as ``.T``, which cannot be written through; ``READ_ONLY``: a view NumPy makes
    read-only) and its ``arrays``: the traced 0-d integers of the index (``y[np.argmax(x)]``,
    an integer to NumPy), copies taken with the view (so ``i += 1`` does not move it)."""

    __slots__ = ("parent", "index", "arrays")

    def __init__(self, parent, index, arrays=()):
        self.parent = parent
        self.index = index
        self.arrays = arrays


def mark_view(parent, out, index, arrays=()) -> None:
    """Record that ``out`` is a view of ``parent`` (``index`` None for a transformed view,
    ``READ_ONLY`` for a read-only one). A view already recorded keeps its first record."""
    mut = out._mut
    if mut is INPUT or type(mut) is View and mut.parent is parent:
        return
    if parent._mut is INPUT:  # never writable (nor written): a read-only one says so as NumPy
        out._mut = View(parent, READ_ONLY) if index is READ_ONLY else INPUT
        return
    out._mut = View(parent, index, tuple(a._clone() for a in arrays) if arrays else ())
    try:
        views = parent._views
    except AttributeError:  # the first view of this parent
        parent._views = [weakref.ref(out)]
        return
    views.append(weakref.ref(out))
    n = len(views)
    if n >= 64 and not n & (n - 1):  # at powers of two, drop views that died: O(1) amortized
        views[:] = [ref for ref in views if ref() is not None]


class _StaleTrace(Trace):
    """The dead trace a stale view is moved to: every use of the view raises."""

    __slots__ = ("message", "original")

    def __init__(self, original: Trace, message: str):  # no level: it interprets nothing
        self.level = 0
        self.alive = False
        self.message = message
        self.original = original

    def __getattr__(self, name):  # metadata queries (a staged dtype, ...) still work
        return getattr(self.original, name)

    def dead_error(self, what: str) -> Exception:
        return StaleViewError(f"{what}: {self.message}")


def _user_location() -> str:
    """``file:line`` of the innermost caller outside Advect and NumPy."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").partition(".")[0] in (
            "advect", "numpy"):
        frame = frame.f_back
    return "an unknown location" if frame is None else \
        f"{frame.f_code.co_filename}:{frame.f_lineno}"


def _index_text(index) -> str:
    if index is None:
        return "a transformed view (.T, .reshape(), ...)"
    if index is READ_ONLY:
        return "a read-only view (np.broadcast_arrays, np.diagonal, sliding windows, ...)"
    parts = []
    for e in index:
        if e is None:
            parts.append("None")
        elif isinstance(e, tuple):
            start, stop, step = e
            parts.append(f"{start}:{'' if stop is None else stop}"
                         + ("" if step == 1 else f":{step}"))
        else:
            parts.append(str(e))
    return f"the view [{', '.join(parts)}]"


def _invalidate(x, keep=None, where: str | None = None) -> None:
    """Mark every view of ``x`` except ``keep`` (and their views) stale."""
    views = getattr(x, "_views", None)
    if not views:
        return
    x._views = [] if keep is None else [weakref.ref(keep)]
    for ref in views:
        v = ref()
        if v is None or v is keep or not v._trace.alive:
            continue
        if where is None:
            where = _user_location()
        _invalidate(v, None, where)
        v._trace = _StaleTrace(v._trace, (
            f"{_index_text(v._mut.index)} was used after the array it was taken from was "
            f"modified at {where}; take the view again after the write, or take a copy "
            "(v = y[...].copy()) before it"))
        v._mut = None


def check_writable(x, what: str) -> None:
    """Raise unless ``x`` is a live owned array, or a live basic view of one."""
    if not x._trace.alive:
        raise x._trace.dead_error(what)
    mut = x._mut
    if mut is None and not x.shape:  # a write into it would reach its aliases (w = v)
        raise TypeError(f"{what}: the destination stands for a NumPy scalar (as np.sum(x) and "
                        "y[0] give), which NumPy cannot write either; write into a 0-d array "
                        "(np.zeros((), like=x), y[0, ...]) instead")
    while type(mut) is View:
        if mut.index is READ_ONLY:
            raise ReadOnlyViewError(
                f"{what}: assignment destination is read-only (a read-only view, as NumPy's "
                "np.broadcast_to, np.broadcast_arrays, np.diagonal and sliding_window_view "
                "give); copy it first (v = v.copy())")
        if mut.index is None:
            raise MutationError(
                f"{what} would write through a transformed view (.T, .reshape(), .ravel(), "
                "...), which Advect does not do; write to the original array, or copy the "
                "view first (v = y.T.copy())")
        mut = mut.parent._mut
    if mut is INPUT:
        raise MutationError(
            f"{what} would modify an input of the transformed function (or a view of one), "
            "which Advect never does; copy it first (y = x.copy()) and update the copy")


def _repoint(x, new) -> None:
    if not isinstance(new, Tracer):  # a constant written whole (np.copyto(y, plain_array))
        new = ops.where(True, new, x)
    if type(new) is not type(x) or new._trace is not x._trace:
        raise MutationError("cannot write a value of an inner transform into an array owned by "
                            "an outer one; build a new array inside the inner function instead")
    x._assign(new)


def _commit(x, new) -> None:
    """Repoint ``x`` to ``new``, invalidate its views and write through to its parents."""
    _repoint(x, new)
    _invalidate(x)
    child, mut = x, x._mut
    while type(mut) is View:
        parent = mut.parent
        _repoint(parent, ops.scatter(parent, child, *mut.arrays, index=mut.index))
        _invalidate(parent, keep=child)
        child, mut = parent, parent._mut


def _cast_for_write(x, new, what, casting="same_kind"):
    """``new`` in ``x``'s dtype: in-place operators cast 'same_kind', as NumPy's; item assignment
    casts 'unsafe' (``ints[0] = floats[0]`` truncates), except that the imaginary part of a
    complex value is never dropped (NumPy warns and drops it)."""
    new_aval = aval_of(new)
    x_dtype, new_dtype = aval_of(x).dtype, new_aval.dtype
    if new_dtype != x_dtype:
        if new_dtype.kind == "c" and x_dtype.kind != "c":
            casting = "same_kind"
        if not np.can_cast(new_dtype, x_dtype, casting):
            raise TypeError(f"{what}: cannot cast {new_dtype} to {x_dtype} with casting rule "
                            f"'{casting}'; convert explicitly with .astype(np.{x_dtype.name})")
        if not new_aval.weak:  # a Python scalar is written as it is, in x's dtype (NEP 50)
            new = ops.astype(new, dtype=x_dtype.name)
    return new


def setitem(x, key, value) -> None:
    """``x[key] = value`` as ``x = scatter(x, value, key)``; repeated indices: last write wins."""
    from ._indexing import normalize_index  # _indexing imports this module

    check_writable(x, "item assignment")
    mask = _whole_mask(x, key, value)
    if mask is not None:  # x[mask] = v: where(mask, v, x), which staging can trace too
        if isinstance(value, Tracer):
            value = _cast_for_write(x, value, "item assignment", "unsafe")
        _commit(x, ops.where(mask, value, x))
        return
    index, arrays = normalize_index(x.shape, key)
    mut = getattr(value, "_mut", None)
    if not arrays and ((value is x and not index) or (
            type(mut) is View and mut.parent is x and mut.index == index and value._trace.alive)):
        return  # `y[i] += v` already wrote through the view y[i]; this write changes nothing
    if isinstance(value, list | tuple):
        from ._construct import asarray
        value = asarray(value)
    if isinstance(value, Tracer):
        value = _cast_for_write(x, value, "item assignment", "unsafe")
    value = _drop_leading_ones(value, ops.indexing.index_shape(x.shape, index,
                                                              [a.shape for a in arrays]))
    _commit(x, ops.scatter(x, value, *arrays, index=index))


def _whole_mask(x, key, value):
    """The mask of ``x[mask] = value`` where NumPy's write is ``where(mask, value, x)``: a
    boolean NumPy array or traced array over x's leading axes (as a mask of x's shape), one
    value (a 0-d tracer, or a Python number that fits x's dtype kind, which NumPy's promotion
    keeps in it); else None (the general scatter, which needs the mask's data)."""
    if type(key) is tuple and len(key) == 1:
        key = key[0]
    if not (isinstance(key, Tracer) or type(key) is np.ndarray):
        return None
    kind = aval_of(x).dtype.kind
    if not (isinstance(value, Tracer) and value.shape == () or kind in "fc" and type(
            value) in (bool, int, float) or kind == "c" and type(value) is complex):
        return None
    shape = tuple(key.shape)
    if aval_of(key).dtype != np.bool_ or not shape or shape != tuple(x.shape[:len(shape)]):
        return None
    extra = len(x.shape) - len(shape)
    return ops.reshape(key, shape=shape + (1,) * extra) if extra else key


def _drop_leading_ones(value, target: tuple):
    """NumPy drops a value's extra leading length-1 axes in an assignment (``y[0] = row[None]``,
    ``y[...] = v`` of shape (1,) for a 0-d ``y``)."""
    shape = tuple(aval_of(value).shape)
    extra = len(shape) - len(target)
    if extra > 0 and all(n == 1 for n in shape[:extra]):
        value = ops.reshape(value, shape=shape[extra:])
    return value


def assign_inplace(x, new, name: str):
    """``x <- new`` for an in-place operator or ``out=x``; returns ``x``."""
    if not isinstance(x, Tracer):
        write_plain(x, name)
    check_writable(x, name)
    if tuple(aval_of(new).shape) != tuple(x.shape):
        raise ValueError(f"{name}: non-broadcastable output operand with shape {x.shape} "
                         f"doesn't match the broadcast shape {aval_of(new).shape}")
    _commit(x, _cast_for_write(x, new, name))
    return x


def owned_copy(x):
    """A writable copy: the same immutable value behind a new wrapper. A copy of a 0-d array
    is a 0-d array; of a NumPy scalar (or a Python scalar), a scalar."""
    if not x._trace.alive:
        raise x._trace.dead_error("copy")
    out = x._clone()
    if not x.shape and x._mut is not None and not x._weak():
        out._mut = ARRAY
    return out


def mark_array(x):
    """``x`` (a new value) marked as a 0-d ndarray where it is 0-d, for constructors: NumPy's
    ``np.zeros(())`` is an array written in place by ``v += t``, not an immutable scalar."""
    if isinstance(x, Tracer) and not x.shape and x._mut is None:
        x._mut = ARRAY
    return x


def array_result(out, operands):
    """The 0-d ``out`` of a NumPy function that gives 0-d arrays (``np.where``, ``np.copy``)
    as a 0-d ndarray; a NumPy scalar operand returned as it is becomes a new array
    (``np.asarray(np.sum(x))``), so the scalar itself is never written."""
    if out._mut is None:
        if any(out is a for a in operands):
            out = owned_copy(out)
        out._mut = ARRAY
    return out


def write_plain(target, what: str):
    """Raise: a traced value cannot be written into a plain array."""
    raise TracingError(
        f"{what} writes a traced value into a plain {type(target).__name__}, which would "
        "detach it from differentiation; create the array from the traced value instead: "
        "y = np.zeros_like(x), or np.zeros(shape, like=x)")


def _view_chain(x) -> list:
    """The views from ``x`` up (``View`` records), then the array they all view."""
    chain, mut = [], x._mut
    while type(mut) is View:
        chain.append(mut)
        x, mut = mut.parent, mut.parent._mut
    return [*chain, x] if chain else []


def same_root(x, y) -> bool:
    """Whether the traced arrays ``x`` and ``y`` are, or view, the same array."""
    if not (isinstance(x, Tracer) and isinstance(y, Tracer)):
        return False
    return (_view_chain(x) or [x])[-1] is (_view_chain(y) or [y])[-1]


def root_positions(x):
    """``(root, positions)``: the array that ``x`` is or views (None where ``x`` is no traced
    array) and the flat positions of ``x``'s elements in it, an integer array of ``x``'s shape
    (None where a view on the way cannot say: a transformed or read-only one, a traced index)."""
    if not isinstance(x, Tracer):
        return None, None
    chain = _view_chain(x)
    x = chain.pop() if chain else x
    if any(v.index is None or v.index is READ_ONLY or v.arrays for v in chain):
        return x, None
    positions = np.arange(x.size).reshape(x.shape)
    for view in reversed(chain):
        positions = positions[ops.indexing.index_key(view.index, ())]
    return x, positions


def read_after_write(what: str, name: str) -> StaleViewError:
    return StaleViewError(
        f"{what} writes its destination in order, and {name} views memory that an earlier part "
        "of that write changed, which NumPy then reads changed; Advect's values never change "
        "(the view is stale): copy it first (v = v.copy())")


def check_sequential(x, written, value, what: str) -> None:
    """NumPy writes ``x.flat[key] = value`` (and ``np.fill_diagonal``) element by element, in the
    order of the flat positions ``written`` of ``x``, reading ``value`` (flattened, repeated) as
    it goes: where ``value`` views an element that an earlier write changed, NumPy reads the new
    one. Raise :class:`StaleViewError` then (where the positions are known)."""
    root, source = root_positions(value)
    if root is None or written is None:
        return
    target_root, target = root_positions(x)
    if target_root is not root or source is None or target is None or not source.size:
        return
    t = target.ravel()[written].ravel()
    order = np.arange(t.size)
    s = source.ravel()[order % source.size]
    changes = t != s  # an element written with itself changes nothing
    first = np.full(root.size, t.size)
    np.minimum.at(first, t[changes], order[changes])
    if np.any(first[s] < order):
        raise read_after_write(what, "the value")


class Flat:
    """``x.flat``: flat-index reads, and writes into ``x`` itself (functionalized)."""

    __slots__ = ("_x",)

    def __init__(self, x):
        self._x = x

    def __getitem__(self, key):  # a copy (or a scalar), never a view, as NumPy's flatiter
        return owned_copy(np.ravel(self._x)[key])

    def __setitem__(self, key, value):
        x = self._x
        if same_root(value, x):  # NumPy reads the value as it writes
            try:
                written = np.arange(x.size)[key]
            except (TypeError, IndexError, ValueError, TracingError):  # a traced key
                written = None
            check_sequential(x, written, value, "x.flat[...] = value")
        flat = owned_copy(np.ravel(x))
        flat[key] = value
        if numpy_scalar(x):  # NumPy writes a temporary copy of a scalar
            return
        assign_inplace(x, np.reshape(flat, x.shape), "x.flat[...] = value")

    def __iter__(self):
        return iter(np.ravel(self._x))

    def __len__(self):
        return self._x.size

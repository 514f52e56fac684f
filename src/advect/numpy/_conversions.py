"""Python conversions of tracers: never a silent detach.

``float(x)``, ``int(x)``, ``complex(x)``, ``operator.index(x)`` (and the ``math`` functions,
which call them) read the current value only when it does not depend on a differentiated
input; otherwise, and for any value while staging, they raise ``TracingError`` naming the call.
``.item()`` / ``.tolist()`` of such values return traced 0-d values instead. Writing a traced
value into a plain array (``y[0] = x``) raises too, also where NumPy's C code would replace the
error with its own.
"""

from __future__ import annotations

import ast
import dis
import linecache
import operator
import sys
from types import TracebackType

import numpy as np

from .. import ops
from ..core import Tracer
from ..errors import TracingError
from ..ops.casts import PYTHON_DTYPES
from ._mutation import owned_copy, write_plain

__all__ = ["python_scalar", "scalar_conversion", "scipy_caller", "stays_traced", "traced_item",
           "traced_tolist"]

_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]


def scalar_conversion(x, what):
    """The current value for ``float(x)`` and friends (``what`` names the function).

    Refuses ``plain[i] = x``, which NumPy performs through the same conversion and which would
    detach ``x``, and any conversion of a value that depends on a differentiated input: a
    Python number carries no derivative, so the result would silently be a constant."""
    frame = sys._getframe(2)
    try:
        if frame.f_lasti >= 0 and frame.f_code.co_code[frame.f_lasti] == _STORE_SUBSCR:
            write_plain(np.empty(0), "item assignment")
        statistics = _library_frames("statistics", ())
        if statistics and (what == "as_integer_ratio" or _differentiated(x)):
            raise TracingError(
                f"statistics.{statistics[-1].f_code.co_name}() of a traced value: Python's "
                "statistics module computes with exact fractions of plain numbers and rebuilds "
                "its result with the data's type, which detaches a derivative and cannot make "
                "a traced value; use np.mean, np.median, np.var or np.std, which trace")
        if _differentiated(x):
            name = _called_name(frame) or what
            instead = (f"np.{name[5:]}(x) instead of {name}(x)" if name.startswith("math.")
                       else "x instead of float(x), np.exp(x) instead of math.exp(x)")
            raise TracingError(
                f"{name}() of a traced value that depends on a differentiated input would "
                "detach it: the result is a plain Python number, so the derivative through it "
                f"would silently be zero. Keep it an array ({instead}), or call "
                "advect.stop_gradient(x) first if you want a constant")
        return x._concrete_for(f"{what}()")
    except TracingError as error:  # also when NumPy's C code asked (plain[i] = x, y.fill(x))
        if what == "operator.index":  # table[i]: NumPy asks a plain table's index for an int
            error = TracingError(f"{error}. {TRACED_TABLE}")
        _raise_in(frame, error)


TRACED_TABLE = ("To index a plain array (or np.take from it) with a traced index, make the "
                "array traced first: np.asarray(table, like=x)[index], x a traced array")


def _differentiated(x) -> bool:
    """Whether a tracer's value depends on a differentiated input at any nesting level."""
    while isinstance(x, Tracer):
        if getattr(x, "tangent", None) is not None:
            return True
        x = getattr(x, "primal", None)
    return False


def stays_traced(x) -> bool:
    """Whether ``x.item()`` must return a traced value: it depends on a differentiated input,
    or it has no data (while staging)."""
    while isinstance(x, Tracer):
        if getattr(x, "tangent", None) is not None or not hasattr(x, "primal"):
            return True
        x = x.primal
    return False


def _called_name(frame) -> str | None:
    """The dotted name of the function the frame's current instruction calls (``math.exp``),
    read from its source; None when there is no call or no source."""
    code = frame.f_code
    try:
        if not dis.opname[code.co_code[frame.f_lasti]].startswith(("CALL", "PRECALL")):
            return None
        first, last, start, end = list(code.co_positions())[frame.f_lasti // 2]
        lines = [linecache.getline(code.co_filename, n) for n in range(first, last + 1)]
        lines[-1] = lines[-1][:end]
        lines[0] = lines[0][start:]
        call = ast.parse("".join(lines).strip(), mode="eval").body
        return ast.unparse(call.func) if isinstance(call, ast.Call) else None
    except Exception:  # no source, or not one call expression
        return None


def _raise_in(frame, error):
    """Raise ``error`` as the exception of the statement ``frame`` runs.

    NumPy turns any error from a sequence-like operand of ``plain[i] = x`` or ``plain.fill(x)``
    into its own "setting an array element with a sequence"; a one-shot trace function on the
    frame puts ``error`` back when that exception arrives. (Skipped when a Python-level tracer, a
    debugger or coverage, is active: NumPy's error then carries ``error`` as its cause.)"""
    if sys.gettrace() is None:
        def restore(_frame, event, _arg):
            frame.f_trace = None
            sys.settrace(None)
            if event == "exception":
                raise error.with_traceback(TracebackType(None, frame, frame.f_lasti,
                                                         frame.f_lineno))
        frame.f_trace = restore
        sys.settrace(_no_tracing)
    raise error


def _no_tracing(_frame, _event, _arg):
    """The thread's trace function while :func:`_raise_in` waits: it traces no new frame."""
    return None


def traced_item(x, index):
    """``x.item(*index)`` as a traced value that is the Python scalar NumPy gives: weak, so
    ``int8_array.item() * 3`` is 300 and ``float32_array.item() + 1e-10`` keeps float64 digits
    (NumPy's index forms: none, flat, per axis)."""
    if len(index) == 1 and isinstance(index[0], tuple):
        index = index[0]
    index = tuple(operator.index(i) for i in index)  # NumPy's TypeError for 1.0 or a slice
    if len(index) > 1 and len(index) != len(x.shape):
        raise ValueError(f"incorrect number of indices for array: .item() takes one flat index "
                         f"or one per axis ({len(x.shape)}), got {len(index)}")
    if not index:
        if x.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return python_scalar(ops.reshape(x, shape=()))
    if len(index) == 1:
        return python_scalar(ops.reshape(x, shape=(x.size,))[index[0]])
    return python_scalar(x[tuple(index)])


def traced_tolist(x):
    """``x.tolist()`` as nested lists of traced Python scalars (see :func:`traced_item`)."""
    if not x.shape:
        return python_scalar(ops.reshape(x, shape=()))
    return [traced_tolist(x[i]) for i in range(x.shape[0])]


def python_scalar(x):
    """The 0-d traced ``x`` as the Python scalar its ``.item()`` is: a weak value (a copy, never
    a view of ``x``'s array)."""
    kind = PYTHON_DTYPES.get(x.aval.dtype.kind)
    if kind is None:  # datetimes and the like have no Python number: keep the 0-d value
        return owned_copy(x)
    return ops.python_scalar(x, dtype=kind)


def _library_frames(library: str, helpers: tuple[str, ...]) -> list:
    """The frames of ``library``'s code on top of the stack of whoever called the caller of the
    function calling this, innermost first: the walk passes frames of ``helpers`` (libraries
    ``library`` calls, such as NumPy) and stops at the first other frame, the user code (or
    Advect) that called the library."""
    frame, found = sys._getframe(3), []
    while frame is not None:
        top = frame.f_globals.get("__name__", "").partition(".")[0]
        if top == library:
            found.append(frame)
        elif top not in helpers:
            break
        frame = frame.f_back
    return found


def xarray_caller() -> str | None:
    """The qualified name of the xarray method whose code is converting a tracer (the outermost
    xarray frame of the library frames on top of the stack: ``DataArray.dropna``), or None."""
    found = _library_frames("xarray", ("numpy", "scipy", "pandas"))
    return found[-1].f_code.co_qualname if found else None


def scipy_caller() -> str | None:
    """The public name of the SciPy function whose code is converting a tracer (the outermost
    SciPy frame on the stack: the call user code made), or None outside SciPy."""
    names = []  # outermost first; a decorator's wrapper is named by the function it wraps
    for frame in reversed(_library_frames("scipy", ("numpy",))):
        public = ".".join(p for p in frame.f_globals["__name__"].split(".")
                          if not p.startswith("_"))
        module = sys.modules.get(public)
        for name in (frame.f_code.co_name, *(getattr(v, "__name__", "") for v in
                                             frame.f_locals.values() if callable(v))):
            if name and not name.startswith("_") and hasattr(module, name):
                return f"{public}.{name}"
        names.append(f"{public}.{frame.f_code.co_name}")
    return names[0] if names else None

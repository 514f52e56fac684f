"""``out=`` on NumPy array functions: the result is computed, then written into ``out``.

Every translated function whose NumPy signature has ``out`` goes through :func:`call_with_out`
when one is given (keyword or positional), so translations never see it. The destination is
an owned traced array (or owned local copy), updated functionally as ``y[...] = result`` is:
tangents follow, views of it go stale, and the call returns the destination itself. NumPy's
rules for the destination apply: the exact result shape, and the casting rule NumPy uses for
that function (reductions cast unsafely, ufunc-based functions need ``same_kind``, ``dot``
needs the result's dtype); an integer destination gets a zero derivative, as any cast to an
integer does.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

from .. import ops
from ..core import Tracer
from ..dtypes import aval_of
from ..errors import AdvectError
from ._mutation import assign_inplace, read_after_write, root_positions, same_root, write_plain

__all__ = ["out_position", "call_with_out"]

# translations that write out= themselves (ufunc keywords such as where=, or several outputs)
HANDLES_OUT = {np.clip, *(getattr(np.fft, n) for n in (
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "rfft2", "rfftn", "irfft", "irfft2",
    "irfftn", "hfft", "ihfft"))}

_UNSAFE = {"sum", "prod", "max", "min", "amax", "amin", "mean", "var", "cumsum", "cumprod",
           "cumulative_sum", "cumulative_prod", "nansum", "nanprod", "nanmax", "nanmin",
           "nanmedian", "median", "trace", "choose", "all", "any", "nancumsum", "nancumprod"}
_INEXACT = {"nanmean", "nanvar", "nanstd"}  # NumPy: "If a is inexact, then out must be inexact"
_EQUIV = {"dot", "multi_dot"}  # NumPy: "output array is not acceptable" unless the dtype matches
# NumPy's take and compress decide by release (the destination's dtype casting safely to the
# result's before 2.5, any destination from then): the running NumPy is asked; so are the
# index reductions (an int32 destination takes argmax's int64, a float64 one does not)
_BACK_SAFE = {"take", "compress", "argmax", "argmin", "nanargmax", "nanargmin"}
_PROBES = {"numpy.take(out=...)": lambda a, out: np.take(a, [0], out=out),
           "numpy.compress(out=...)": lambda a, out: np.compress([True], a, out=out),
           **{f"numpy.{name}(out=...)": lambda a, out, name=name: getattr(np, name)(
               np.zeros((1, 1)), axis=0, out=out)
              for name in ("argmax", "argmin", "nanargmax", "nanargmin")}}
_taken: dict = {}


def _numpy_takes(what: str, source, target) -> bool:
    """Whether the running NumPy writes a ``source`` result of take/compress into a ``target``
    destination (asked once per pair, on one-element arrays)."""
    key = (what, source, target)
    if key not in _taken:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _PROBES[what](np.zeros(1, source), np.zeros(1, target))
            _taken[key] = True
        except (TypeError, ValueError):
            _taken[key] = False
    return _taken[key]
_TAKES_CASTING = {"concatenate": "same_kind", "stack": "same_kind", "einsum": "safe"}
_OUT_OR_DTYPE = {"concatenate", "concat", "stack"}  # NumPy's TypeError when given both
_TAKES_TUPLE = {"fix"}

_KEYWORD = -1
_positions: dict = {}


def out_position(func, impl=None):
    """Where ``func`` takes ``out``: its positional index, ``-1`` for keyword-only, ``None`` for
    no ``out`` (or a translation that writes it itself). Read once per function, from NumPy's
    signature, or from the translation ``impl`` (which mirrors it) where a NumPy release gives
    its C functions none (``np.dot`` and ``np.concatenate`` on NumPy 2.0)."""
    try:
        return _positions[func]
    except KeyError:
        pass
    position = None
    if func not in HANDLES_OUT:
        params = []
        for source in (func, impl):
            try:
                params = list(inspect.signature(source).parameters.values())
                break
            except (TypeError, ValueError):
                continue
        for i, p in enumerate(params):
            if p.name == "out":
                position = i if p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD else _KEYWORD
                break
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                continue
    _positions[func] = position
    return position


def call_with_out(func, impl, position: int, args: tuple, kwargs: dict):
    """``impl(*args, **kwargs)`` with ``out`` taken out and the result written into it, or the
    plain call when no ``out`` was given."""
    out = kwargs.get("out")
    if out is None and 0 <= position < len(args):
        out = args[position]
        args = (*args[:position], None, *args[position + 1:])
    if out is None:
        return impl(*args, **kwargs)
    kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    name = func.__name__
    if name in _OUT_OR_DTYPE and kwargs.get("dtype") is not None:
        raise TypeError(f"numpy.{name}: give out= or dtype=, not both (out's dtype is the "
                        "result's)")
    if isinstance(out, tuple):  # only fix, a composite of ufuncs, takes a tuple as they do
        if name not in _TAKES_TUPLE or len(out) != 1:
            raise TypeError(f"numpy.{name}: out= must be an array, not a tuple")
        out = out[0]
    result = impl(*args, **kwargs)
    if name in _OUT_OR_DTYPE:
        _check_pieces(name, out, args[0] if args else kwargs.get("arrays"),
                      args[1] if len(args) > 1 else kwargs.get("axis", 0))
    return write_result(out, result, _casting(name, kwargs), f"numpy.{name}(out=...)")


def _check_pieces(name: str, out, arrays, axis) -> None:
    """NumPy's concatenate and stack copy their inputs into ``out`` one after another: an input
    that views memory an earlier input's part of ``out`` overwrote is read changed. Raise
    :class:`StaleViewError` then, as for any view used after its array was written."""
    if not isinstance(arrays, list | tuple) or not any(
            k and same_root(a, out) for k, a in enumerate(arrays)):
        return
    try:  # each element's input, as NumPy lays them out
        ids = (np.stack if name == "stack" else np.concatenate)(
            [np.full(a.shape if isinstance(a, Tracer) else np.shape(a), k)
             for k, a in enumerate(arrays)], axis=axis)
    except (TypeError, ValueError, AdvectError):  # a list of traced values
        return
    root, target = root_positions(out)
    if target is None or target.size != ids.size:
        return  # positions unknown, or a shape NumPy refuses (write_result raises)
    target, ids = target.ravel(), ids.ravel()
    first = np.full(root.size, len(arrays))  # the first input that changes each element
    for k, a in enumerate(arrays):
        source = root_positions(a)[1] if same_root(a, out) else None
        if source is not None and np.any(first[source] < k):
            raise read_after_write(f"numpy.{name}(out=...)", f"input {k}")
        written = target[ids == k]
        if source is not None:  # an element written with itself does not change
            written = written[written != source.ravel()]
        first[written] = np.minimum(first[written], k)


def _casting(name: str, kwargs: dict) -> str:
    if name in _UNSAFE:
        return "unsafe"
    if name in _INEXACT:
        return "inexact"
    if name in _EQUIV:
        return "equiv"
    if name in _BACK_SAFE:
        return "back_safe"
    return kwargs.get("casting", _TAKES_CASTING.get(name, "same_kind"))


def write_result(out, result, casting: str, what: str):
    """Write ``result`` into the owned traced array ``out`` under NumPy's ``casting`` rule
    (``"inexact"``: unsafe, but an inexact result needs an inexact destination; ``"equiv"``:
    the dtypes must match; ``"back_safe"``: the destination's dtype casts safely to the
    result's); returns ``out``."""
    if not isinstance(out, Tracer):
        if isinstance(out, np.ndarray):
            write_plain(out, what)  # raises: a traced value would be detached
        raise TypeError(f"{what}: out must be an array, got {type(out).__name__}")
    result_aval, out_aval = aval_of(result), aval_of(out)
    if tuple(result_aval.shape) != tuple(out_aval.shape):
        raise ValueError(f"{what}: the output array has shape {tuple(out_aval.shape)}, the "
                         f"result has shape {tuple(result_aval.shape)}; they must be equal")
    source, target = result_aval.dtype, out_aval.dtype
    if source != target:
        if casting == "equiv":
            raise ValueError(f"{what}: output array is not acceptable (it must have the "
                             f"result's dtype {source}, got {target})")
        if casting == "back_safe":
            if not _numpy_takes(what, source, target):
                raise TypeError(f"{what}: cannot cast array data from {target} to {source} "
                                "according to the rule 'safe'")
        elif casting == "inexact":
            if source.kind in "fc" and target.kind not in "fc":
                raise TypeError(f"{what}: if a is inexact, then out must be inexact (got "
                                f"{target})")
        elif casting != "unsafe" and not np.can_cast(source, target, casting):
            raise TypeError(f"{what}: cannot cast the result from {source} to {target} with "
                            f"casting rule {casting!r}")
        result = ops.astype(result, dtype=target.name)
    if not (isinstance(result, Tracer) and result._trace is out._trace):
        result = ops.where(True, result, out)  # joins out's trace
    return assign_inplace(out, result, what)

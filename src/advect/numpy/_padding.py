"""``np.pad`` in every mode on traced arrays.

Axes are padded one after the other, as NumPy does, so corners agree. Modes that copy values
(edge, wrap, even reflections) are one gather with the index map NumPy's own ``pad`` gives for
``arange``; odd reflections are linear maps, applied as a matrix NumPy builds by padding the
identity; statistic modes reduce the edge slices; ``linear_ramp`` interpolates to the end values.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from .._compat import PAD_TAKES_DICT
from ..core import Tracer
from ..dtypes import aval_of
from ._construct import _contains_tracer
from ._construct import array as construct_array
from ._functions import _moveaxis, _shape, astype, implements, operand, slice_along, take_axis
from ._mutation import owned_copy
from ._quantiles import _median
from ._reductions import _mean, reduction

_OPTIONS = {"constant": ("constant_values",), "edge": (), "linear_ramp": ("end_values",),
            "maximum": ("stat_length",), "mean": ("stat_length",), "median": ("stat_length",),
            "minimum": ("stat_length",), "reflect": ("reflect_type",),
            "symmetric": ("reflect_type",), "wrap": (), "empty": ()}  # NumPy's allowed kwargs


def _dict_widths(pad_width: dict, ndim: int) -> list:
    """NumPy's reading of a dict ``pad_width``: each key an axis (negative counts from the
    end), each value an int or an ``(int, int)`` tuple; the axes not named get no padding.
    Anything else fails as NumPy's ``typing.assert_never`` does (``AssertionError``)."""
    seq = [(0, 0)] * ndim
    for axis, width in pad_width.items():
        match width:
            case int(both):
                seq[axis] = both, both
            case tuple((int(before), int(after))):
                seq[axis] = before, after
            case _:
                raise AssertionError(f"Expected code to be unreachable, but got: {width!r}")
    return seq


def _pairs(value, ndim, name):
    """``value`` as one ``(before, after)`` pair per axis, broadcast to ``(ndim, 2)`` as NumPy
    does; traced values (an array, or tracers inside nested sequences) give 0-d traced sides."""
    if _contains_tracer(value):
        value = construct_array(value)
        shape = _shape(value)
        try:
            np.broadcast_shapes(shape, (ndim, 2))
        except ValueError:
            raise ValueError(f"numpy.pad: {name} of shape {shape} does not broadcast to "
                             f"({ndim}, 2), one (before, after) pair per axis") from None
        pairs = ops.broadcast_to(value, shape=(ndim, 2))
        return [(pairs[i, 0], pairs[i, 1]) for i in range(ndim)]
    pairs = np.broadcast_to(np.asarray(value), (ndim, 2))
    return [(pairs[i, 0].item(), pairs[i, 1].item()) for i in range(ndim)]


def _side(a, axis, width, value):
    shape = _shape(a)[:axis] + (width,) + _shape(a)[axis + 1:]
    if isinstance(value, Tracer):
        return ops.broadcast_to(astype(value, aval_of(a).dtype), shape=shape)
    return ops.full_like(a, fill_value=value, shape=shape)


def _round_for(a, value):
    """NumPy rounds statistics and ramps back to an integer array's dtype."""
    if aval_of(a).dtype.kind in "iub":
        return astype(ops.round(value), aval_of(a).dtype)
    return value


def _statistic(a, axis, lo, hi, mode):
    part = slice_along(a, lo, hi, axis)
    if mode == "maximum":
        return reduction(ops.reduce_max, part, axis, True)
    if mode == "minimum":
        return reduction(ops.reduce_min, part, axis, True)
    if mode == "mean":
        return _round_for(a, _mean(part, axis, keepdims=True))
    return _round_for(a, _median(part, axis, keepdims=True))


def _stat_lengths(stat_length, nd):
    """NumPy's ``stat_length`` pairs: rounded to integers, negatives refused, None for all."""
    if stat_length is None:
        return [(None, None)] * nd
    lengths = np.round(np.asarray(stat_length)).astype(np.intp)
    if np.any(lengths < 0):
        raise ValueError("index can't contain negative values")
    return _pairs(lengths, nd, "stat_length")


def _stat_sides(a, axis, before, after, mode, stat_length):
    n = _shape(a)[axis]
    lb, la = (n if s is None else min(s, n) for s in stat_length)
    left = _statistic(a, axis, 0, lb, mode)
    right = _statistic(a, axis, n - la, n, mode)
    grow = _shape(a)[:axis]
    rest = _shape(a)[axis + 1:]
    return (ops.broadcast_to(left, shape=grow + (before,) + rest),
            ops.broadcast_to(right, shape=grow + (after,) + rest))


def _ramp_sides(a, axis, before, after, ends):
    n = _shape(a)[axis]
    nd = len(_shape(a))
    view = [1] * nd

    def ramp(edge, end, width):
        view[axis] = width
        t = (np.arange(width, dtype=np.float64) / max(width, 1)).reshape(view)
        end = end if isinstance(end, Tracer) else float(end)
        values = ops.add(end, ops.multiply(ops.subtract(edge, end), t))
        dtype = aval_of(a).dtype
        if dtype.kind in "iub":  # NumPy's integer linspace floors
            return astype(ops.floor(values), dtype)
        return astype(values, dtype)
    left = ramp(slice_along(a, 0, 1, axis), ends[0], before)
    right = ops.flip(ramp(slice_along(a, n - 1, n, axis), ends[1], after), axes=(axis,))
    return left, right


def _linear_map(a, axis, before, after, mode, reflect_type):
    n = _shape(a)[axis]
    matrix = np.pad(np.eye(n), ((before, after), (0, 0)), mode=mode, reflect_type=reflect_type)
    dtype = aval_of(a).dtype
    matrix = matrix.astype(dtype) if dtype.kind in "fc" else matrix
    out = ops.dot_general(matrix, a, contract=((1,), (axis,)), batch=((), ()))
    out = _moveaxis(out, 0, axis)
    return _round_for(a, out) if dtype.kind in "iub" else out


def _odd_reflection(a, axis, before, after, mode):
    """A single odd reflection is ``2 * edge - even reflection``; wider pads reflect the
    reflections, which the matrix handles."""
    n = _shape(a)[axis]
    if max(before, after) > (n - 1 if mode == "reflect" else n):
        return _linear_map(a, axis, before, after, mode, "odd")
    positions = np.pad(np.arange(n), (before, after), mode=mode)
    parts = []
    if before:
        edge = ops.multiply(slice_along(a, 0, 1, axis), 2)
        parts.append(ops.subtract(edge, take_axis(a, positions[:before], axis)))
    parts.append(a)
    if after:
        edge = ops.multiply(slice_along(a, n - 1, n, axis), 2)
        parts.append(ops.subtract(edge, take_axis(a, positions[n + before:], axis)))
    return ops.concat(*parts, axis=axis) if len(parts) > 1 else a


def _pad_axis(a, axis, before, after, mode, options):
    if mode in ("constant", "empty"):
        left, right = options["constant_values"][axis] if mode == "constant" else (0, 0)
        parts = [_side(a, axis, before, left)] if before else []
        parts.append(a)
        if after:
            parts.append(_side(a, axis, after, right))
        return ops.concat(*parts, axis=axis) if len(parts) > 1 else a
    if mode in ("maximum", "minimum", "mean", "median", "linear_ramp"):
        if mode == "linear_ramp":
            left, right = _ramp_sides(a, axis, before, after, options["end_values"][axis])
        else:
            left, right = _stat_sides(a, axis, before, after, mode,
                                      options["stat_length"][axis])
        return ops.concat(left, a, right, axis=axis)
    reflect_type = options["reflect_type"]
    if mode in ("reflect", "symmetric") and reflect_type == "odd":
        return _odd_reflection(a, axis, before, after, mode)
    positions = np.pad(np.arange(_shape(a)[axis]), (before, after), mode=mode)
    return take_axis(a, positions, axis)


@implements(np.pad)
def _pad(array, pad_width, mode="constant", **kwargs):
    a = operand(array)
    if callable(mode) or mode not in _OPTIONS:
        raise ValueError(f"numpy.pad: mode {mode!r} is not supported on traced arrays; use one "
                         f"of {', '.join(_OPTIONS)}")
    unsupported = set(kwargs) - set(_OPTIONS[mode])
    if unsupported:
        raise ValueError(f"unsupported keyword arguments for mode '{mode}': {unsupported}")
    nd = len(_shape(a))
    if isinstance(pad_width, dict) and PAD_TAKES_DICT:  # {axis: width or (before, after)}
        pad_width = _dict_widths(pad_width, nd)
    widths = np.asarray(pad_width)
    if widths.dtype.kind != "i":  # NumPy's check: 1.5 is refused, never truncated to 1
        raise TypeError("`pad_width` must be of integral type.")
    widths = np.broadcast_to(widths.astype(np.int64), (nd, 2))
    if np.any(widths < 0):
        raise ValueError("index can't contain negative values")
    options = {
        "constant_values": _pairs(kwargs.get("constant_values", 0), nd, "constant_values"),
        "end_values": _pairs(kwargs.get("end_values", 0), nd, "end_values"),
        "stat_length": _stat_lengths(kwargs.get("stat_length"), nd),
        "reflect_type": kwargs.get("reflect_type", "even"),
    }
    shape = _shape(a)
    if not math.prod(shape) and mode not in ("constant", "empty"):
        for axis, n in enumerate(shape):  # nothing to copy or reduce: NumPy's check
            if n == 0 and widths[axis].any():
                raise ValueError(f"can't extend empty axis {axis} using modes other than "
                                 f"'constant' or 'empty'")
        return ops.full_like(a, fill_value=0, shape=tuple(
            int(n + w.sum()) for n, w in zip(shape, widths)))
    if mode in ("maximum", "minimum") and any(
            0 in lengths for lengths in options["stat_length"]):
        raise ValueError("stat_length of 0 yields no value for padding")  # every axis, as NumPy
    for axis in range(nd):
        before, after = int(widths[axis, 0]), int(widths[axis, 1])
        if before or after:
            a = _pad_axis(a, axis, before, after, mode, options)
    return owned_copy(a) if a is array and isinstance(a, Tracer) else a  # np.pad copies

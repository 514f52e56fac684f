"""Helpers shared by the refusal-parity tables (tests/test_probe_refusals*.py): each row is a
function of one traced input, run eagerly on NumPy and under the transforms."""

from __future__ import annotations

import numpy as np


def raised(call):
    """The exception ``call()`` raises, or None."""
    try:
        call()
    except Exception as error:  # noqa: BLE001 (the class is what the tables compare)
        return error
    return None


def owned(write):
    """``write(y, x)`` applied to an owned copy ``y`` of the input, which is returned."""
    def f(x):
        y = x.copy()
        write(y, x)
        return y
    return f


def into(shape, dtype, call):
    """``call(x, out)`` with ``out`` a fresh traced array of ``shape`` and ``dtype``."""
    def f(x):
        out = np.zeros(shape, dtype=dtype, like=x)
        call(x, out)
        return out * 1.0
    return f

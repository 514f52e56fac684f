"""``advect.numpy``: NumPy's namespace with array constructors that keep tracers traced.

``array``, ``asarray`` and ``asanyarray`` accept tracers and nested lists of tracers; every
other name forwards to NumPy, whose functions dispatch to Advect through NumPy's protocols.

Example:
    >>> import numpy as np
    >>> import advect as ad
    >>> import advect.numpy as anp
    >>> ad.grad(lambda x: anp.sum(anp.array([x[0], 2 * x[1]]) ** 2))(np.array([1.0, 1.0]))
    array([2., 8.])
"""

from __future__ import annotations

import numpy as _np

from . import _ufuncs  # noqa: F401  (before _methods, which imports it: see _ufuncs' imports)
from ._construct import array, asanyarray, asarray

__all__ = ["array", "asarray", "asanyarray"]


def __getattr__(name: str):
    return getattr(_np, name)

"""Differentiable SciPy namespaces: ``advect.scipy.special``, ``ndimage``, ``linalg``,
``integrate``, ``signal``, ``optimize`` and ``sparse.linalg``.

Each submodule imports SciPy itself (``import advect`` never does) and keeps SciPy's signatures;
on plain arrays the results are SciPy's, on traced arrays they are differentiable to any order
and stage into programs that save and load. A ``scipy.*`` function Advect does not cover, called
on a traced array, raises ``TracingError`` naming that function. ``docs/scipy.md`` shows each
module at work.
"""

import importlib

__all__ = ["integrate", "linalg", "ndimage", "optimize", "signal", "sparse", "special"]


def __getattr__(name: str):
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Per-call state of custom primitives: what a ``residual=True`` primitive's function returns,
how the residual travels to the transpose rule and is released exactly once, and the recorder
``advect.testing`` uses to name the primitives on a failing path."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["PrimitiveResult", "Residual", "frame_stack", "record_primitives", "note_call"]


class PrimitiveResult:
    """What the function of a ``residual=True`` primitive returns: its ``output`` pytree, the
    ``residual`` its transpose rule receives, and an optional ``release()`` callback.

    Example:
        >>> import numpy as np, advect as ad
        >>> @ad.primitive(name="doc_solve_lu", residual=True)
        ... def solve(a, b):
        ...     inverse = np.linalg.inv(a)            # the "factorization"
        ...     return ad.PrimitiveResult(inverse @ b, residual=inverse)
        >>> @solve.def_transpose
        ... def _(ct, primals, output, *, residual):
        ...     return None, residual.T @ ct           # linear in b only
        >>> a = np.array([[2.0, 0.0], [0.0, 4.0]])
        >>> ad.grad(lambda b: np.sum(solve(a, b)))(np.ones(2))
        array([0.5 , 0.25])
    """

    __slots__ = ("output", "residual", "release")

    def __init__(self, output: Any, residual: Any = None,
                 release: Callable[[], Any] | None = None):
        if release is not None and not callable(release):
            raise TypeError(f"PrimitiveResult: release must be callable or None, got "
                            f"{type(release).__name__}")
        self.output, self.residual, self.release = output, residual, release


class Residual:
    """A residual on its way to the transpose rule; ``close()`` releases it (once). A tape
    equation that holds it keeps it alive, so dropping the tape releases it too."""

    __slots__ = ("value", "taped", "_finalizer", "__weakref__")

    def __init__(self, value, release):
        self.value = value
        self.taped = False
        self._finalizer = None if release is None else weakref.finalize(self, release)

    def close(self) -> None:
        self.value = None
        if self._finalizer is not None:
            self._finalizer()


# One frame per running Primitive.__call__ in this thread: ``[residual, handle]``, the residual
# its implementation made (the innermost trace runs the implementation once; every nesting
# level's rules share it) and the handle called. An implementation reached without its own
# handle's frame on top (a staged program replayed inside another primitive's implementation,
# say) keeps no residual, so it can never take another call's slot.
_frames = threading.local()


def frame_stack() -> list:
    stack = getattr(_frames, "stack", None)
    if stack is None:
        stack = _frames.stack = []
    return stack


_recorders = threading.local()


@contextmanager
def record_primitives() -> Iterator[set]:
    """Collect the names of the custom primitives called in this thread meanwhile."""
    names: set = set()
    outer = getattr(_recorders, "names", None)
    _recorders.names = names
    try:
        yield names
    finally:
        _recorders.names = outer
        if outer is not None:
            outer |= names


def note_call(name: str) -> None:
    names = getattr(_recorders, "names", None)
    if names is not None:
        names.add(name)

"""Scratch state private to one dynamic transform invocation.

Each :class:`~advect.autodiff.forward.JVPTrace` (one per ``grad``, ``vjp``, ``jvp``,
``linearize``, ... call, and one per nesting level) registers itself in a per-thread stack while
it is alive; :func:`transform_state` hands out state kept on the innermost one, which is dropped
when that trace closes, on success or failure. The stack is read only here, never by ``bind``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..errors import TracingError

__all__ = ["transform_state", "transform_states", "push", "pop", "hide", "visible_levels",
           "replaying"]


class _Local(threading.local):
    def __init__(self):
        # each thread starts with its own empty stack of [trace, states, hidden] entries
        self.stack: list[list] = []


_local = _Local()


def _stack() -> list:
    """This thread's stack of ``[trace, states, hidden]`` entries (read by the tests)."""
    return _local.stack


def push(trace) -> None:
    _local.stack.append([trace, {}, False])


def pop(trace) -> None:
    """Forget ``trace`` and its state (searching from the innermost: closes may come out of
    order when a pullback outlives an inner transform)."""
    stack = _local.stack
    if stack and stack[-1][0] is trace:  # the usual, innermost case
        del stack[-1]
        return
    for i in range(len(stack) - 1, -1, -1):
        if stack[i][0] is trace:
            del stack[i]
            return


def hide(trace) -> None:
    """Make ``trace``'s level invisible to :func:`transform_state`: an internal trace of Advect
    (a checkpoint's recomputation, an implicit root's residual evaluations) is not one of the
    user's transform invocations, so code run in it sees the levels around it."""
    for entry in reversed(_local.stack):
        if entry[0] is trace:
            entry[2] = True
            return


def visible_levels() -> tuple:
    """The user-visible levels of this thread now, outermost first (for :func:`replaying`)."""
    return tuple(entry for entry in _local.stack if not entry[2])


@contextmanager
def replaying(levels: tuple) -> Iterator[None]:
    """Run code with the levels ``levels`` visible, as when they were taken: a checkpointed
    block recomputed during the backward pass sees the transform states of its first run."""
    saved = _local.stack
    _local.stack = list(levels)
    try:
        yield
    finally:
        _local.stack = saved


def _staging() -> bool:
    trace = sys.modules.get("advect.staging.trace")  # loaded once staging is used
    return trace is not None and trace.staging_in_this_thread()


def transform_state(key: Any, factory: Callable[[], Any]) -> Any:
    """Scratch state for ``key``, private to the innermost dynamic transform invocation.

    The first call at a nesting level makes the state with ``factory()``; later calls at that
    level return the same object. Each nesting level has its own, and the state is dropped when
    its transform returns or fails.

    Raises:
        TracingError: no dynamic transform is running in this thread, or the call is made while
            staging (the state would not exist when the staged program runs).

    Example:
        >>> import numpy as np, advect as ad
        >>> def f(x):
        ...     calls = ad.transform_state("calls", list)
        ...     calls.append(1)
        ...     return np.sum(x ** 2) * len(calls)
        >>> float(ad.grad(f)(np.array(1.0)))
        2.0
    """
    if _staging():
        raise TracingError("transform_state() was called while staging: scratch state lives "
                           "only during one dynamic transform call; pass the value in as an "
                           "input of the staged function instead")
    stack = visible_levels()
    if not stack:
        raise TracingError("transform_state() needs a running dynamic transform (grad, vjp, "
                           "jvp, linearize, ...) in this thread")
    states = stack[-1][1]
    if key not in states:
        states[key] = factory()
    return states[key]


def transform_states(key: Any) -> list:
    """The states made for ``key`` by :func:`transform_state`, outermost transform first.

    Example:
        >>> import numpy as np, advect as ad
        >>> def inner(x):
        ...     ad.transform_state("level", lambda: "inner")
        ...     return np.sum(x ** 3) * len(ad.transform_states("level"))
        >>> def outer(x):
        ...     ad.transform_state("level", lambda: "outer")
        ...     return ad.grad(inner)(x)
        >>> float(ad.grad(outer)(np.array(1.0)))   # d/dx (2 * 3x^2) = 12x
        12.0
    """
    return [states[key] for _, states, _ in visible_levels() if key in states]

"""The random generators a function names, and their states: what staging refuses to freeze
into a program (staging/trace.py) and what a checkpointed block replays (autodiff/checkpoint.py).
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["GENERATOR_KINDS", "state_of", "same_state", "set_state", "generators_of"]

GENERATOR_KINDS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def state_of(obj):
    if isinstance(obj, np.random.RandomState):
        return obj.get_state(legacy=False)
    return obj.bit_generator.state if isinstance(obj, np.random.Generator) else obj.state


def same_state(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            same_state(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return np.array_equal(a, b)
    return a == b


def set_state(obj, state) -> None:
    if isinstance(obj, np.random.RandomState):
        obj.set_state(state)
    elif isinstance(obj, np.random.Generator):
        obj.bit_generator.state = state
    else:
        obj.state = state


def generators_of(function) -> list[tuple[str, object]]:
    """Random generators the function names directly: closure cells, default arguments and
    globals it reads (also in the functions it defines), through ``functools.partial`` (and
    the generators it binds) and a callable object's ``__call__``. (NumPy's global RandomState
    is not watched: other threads may draw from it meanwhile.)"""
    kinds = GENERATOR_KINDS
    found: list[tuple[str, object]] = []
    while isinstance(function, functools.partial):
        found.extend((str(k), v) for k, v in [*enumerate(function.args),
                                              *function.keywords.items()] if isinstance(v, kinds))
        function = function.func
    code = getattr(function, "__code__", None)
    if code is None:
        call = type(function).__call__ if callable(function) else None  # an object's
        code = getattr(call, "__code__", None)
        if code is None:
            return found
        function = call
    for name, cell in zip(code.co_freevars, getattr(function, "__closure__", None) or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, kinds):
            found.append((name, value))
    defaults = getattr(function, "__defaults__", None) or ()
    named = dict(zip(code.co_varnames[code.co_argcount - len(defaults):code.co_argcount],
                     defaults)) | (getattr(function, "__kwdefaults__", None) or {})
    found.extend((name, v) for name, v in named.items() if isinstance(v, kinds))
    namespace = getattr(function, "__globals__", {})
    codes = [code]
    for c in codes:  # the function's code and the code of the functions it defines
        codes.extend(k for k in c.co_consts if isinstance(k, type(code)))
    for name in dict.fromkeys(n for c in codes for n in c.co_names):
        value = namespace.get(name)
        if isinstance(value, kinds):
            found.append((name, value))
    return found

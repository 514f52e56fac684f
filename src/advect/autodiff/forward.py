"""Forward mode: a JVPTrace carries (primal, tangent) pairs; ``None`` is a symbolic zero.

The same trace serves ``linearize``: there the input tangents are variables of a linear tape
(see reverse.py), so each JVP rule's tangent arithmetic is recorded instead of computed.
"""

from __future__ import annotations

import numpy as np

from ..core import Trace, Tracer, bind
from ..dtypes import aval_of
from ..numpy._methods import ArrayTracer
from ..providers import NUMPY_TYPES, namespace_of
from . import state

__all__ = ["JVPTrace", "JVPTracer", "split"]

_PYTHON_SCALARS = (bool, int, float, complex)


class JVPTrace(Trace):
    __slots__ = ()

    def __init__(self):
        super().__init__()
        state.push(self)  # scratch state for ad.transform_state, dropped on close

    def close(self) -> None:
        if self.alive:
            state.pop(self)
            self.alive = False  # Trace.close

    def process(self, op, args, attrs):
        n = len(args)
        if n == 1:  # the common unary case, without the loop
            a = args[0]
            if type(a) is JVPTracer and a._trace is self:
                p, t = a.primal, a.tangent
            else:
                p, t = a, None
            primals, tangents, nonzero, nested = (p,), (t,), t is not None, isinstance(p, Tracer)
        elif n == 2:  # the common binary case, without the loop
            a, b = args
            if type(a) is JVPTracer and a._trace is self:
                pa, ta = a.primal, a.tangent
            else:
                pa, ta = a, None
            if type(b) is JVPTracer and b._trace is self:
                pb, tb = b.primal, b.tangent
            else:
                pb, tb = b, None
            primals, tangents = (pa, pb), (ta, tb)
            nonzero = ta is not None or tb is not None
            nested = isinstance(pa, Tracer) or isinstance(pb, Tracer)
        else:
            primals, tangents = [], []
            nonzero = False
            nested = False  # whether a primal belongs to an outer trace
            for a in args:
                if type(a) is JVPTracer and a._trace is self:
                    p = a.primal
                    t = a.tangent
                    tangents.append(t)
                    if t is not None:
                        nonzero = True
                else:
                    p = a
                    tangents.append(None)
                primals.append(p)
                if isinstance(p, Tracer):
                    nested = True
        if nested:
            out = bind(op, *primals, **attrs)
        else:  # concrete primals: call the provider directly
            xp = np if type(primals[0]) in NUMPY_TYPES and (
                n == 1 or n == 2 and type(primals[1]) in NUMPY_TYPES) else \
                namespace_of(primals)  # which also refuses mixed providers
            out = op.impl(xp, *primals, **attrs)
            if type(out) is not np.ndarray and type(primals[0]) in _PYTHON_SCALARS \
                    and isinstance(out, np.generic) and not op.strong \
                    and all(type(p) in _PYTHON_SCALARS for p in primals):
                out = out.item()  # Python scalars in, a weak Python scalar out (as bind does)
        if not nonzero or op.nondiff:
            if op.multiple_results:
                return tuple(JVPTracer(self, o, None) for o in out)
            return JVPTracer(self, out, None)
        if op.jvp is None:
            raise op.missing_jvp()
        out_tangent = op.jvp(primals, tangents, out, **attrs)
        if op.multiple_results:
            return tuple(JVPTracer(self, o, t) for o, t in zip(out, out_tangent))
        return JVPTracer(self, out, out_tangent)


def split(trace: JVPTrace, args) -> tuple[list, list]:
    """Primals and tangents (None for zero) of ``args`` as ``trace`` sees them."""
    primals, tangents = [], []
    for x in args:
        if type(x) is JVPTracer and x._trace is trace:
            primals.append(x.primal)
            tangents.append(x.tangent)
        else:
            primals.append(x)
            tangents.append(None)
    return primals, tangents


class JVPTracer(ArrayTracer):
    """A value inside a forward-mode or linearize trace."""

    __slots__ = ("primal", "tangent")

    def __init__(self, trace: JVPTrace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self._mut = None

    @property
    def aval(self):
        return aval_of(self.primal)

    def _weak(self) -> bool:
        primal = self.primal
        if type(primal) is np.ndarray:  # the hot case
            return False
        if isinstance(primal, ArrayTracer):  # an outer trace's value
            return primal._weak()
        return type(primal) in _PYTHON_SCALARS or isinstance(primal, Tracer) and primal.aval.weak

    @property
    def shape(self):
        return tuple(self.primal.shape) if hasattr(self.primal, "shape") else ()

    @property
    def dtype(self):
        return self.primal.dtype if hasattr(self.primal, "dtype") else aval_of(self.primal).dtype

    @property
    def device(self):
        # the primal's: a staged primal's aval names no default device, its tracer does
        return getattr(self.primal, "device", "cpu")

    def _concrete(self):
        primal = self.primal
        return primal._concrete() if isinstance(primal, Tracer) else primal

    def _clone(self):
        return JVPTracer(self._trace, self.primal, self.tangent)

    def _assign(self, new: JVPTracer) -> None:
        self.primal = new.primal
        self.tangent = new.tangent

"""The trace a custom primitive's JVP rule runs under in reverse mode: tape variables get NumPy
syntax as views, so a rule written with NumPy calls records its tangent arithmetic on the tape."""

from __future__ import annotations

import numpy as np

from .core import Trace, bind
from .dtypes import aval_of
from .errors import TracingError
from .numpy._methods import ArrayTracer
from .ops._rules import is_linear
from .ops.creation import full_like, iota_like

__all__ = ["RuleTrace", "TapeView"]

_CREATION = frozenset((full_like, iota_like))  # values that never depend on the operand's data


class RuleTrace(Trace):
    """Runs a user's JVP rule: tape variables get NumPy syntax as views, and each op on a view is
    bound again on the variable itself, so the linear tape records it. ``xp`` is the primals'
    provider, which the views report as their Array API namespace."""

    __slots__ = ("xp",)

    def __init__(self, xp):
        super().__init__()
        self.xp = xp

    def view(self, x):
        return TapeView(self, x) if is_linear(x) else x

    def unview(self, x):
        return x.value if type(x) is TapeView and x._trace is self else x

    def _stand_in(self, x):
        """A creation op's operand (only its shape, dtype and device matter): zeros for a tape
        variable, which has no data."""
        x = self.unview(x)
        if not is_linear(x):
            return x
        zeros = np.zeros(x.aval.shape, x.aval.dtype)
        return zeros if self.xp is np else self.xp.asarray(zeros, device=x.aval.device)

    def process(self, op, args, attrs):
        # every result stays a view, so that the rule can write tangents into it: a constant
        # (zeros_like(tangent), whose operand only gives its shape) is zero by linearity anyway
        if op in _CREATION:
            out = bind(op, *(self._stand_in(a) for a in args), **attrs)
        else:
            out = bind(op, *(self.unview(a) for a in args), **attrs)
        if op.multiple_results:
            return tuple(TapeView(self, o) for o in out)
        return TapeView(self, out)


class TapeView(ArrayTracer):
    """A tape variable as the JVP rule of a custom primitive sees it: shape and dtype, no data."""

    __slots__ = ("value",)

    def __init__(self, trace: RuleTrace, value):
        self._trace = trace
        self.value = value
        self._mut = None

    @property
    def aval(self):
        value = self.value  # a tape variable, or a constant a creation op made from one
        return value.aval if is_linear(value) else aval_of(value)

    def _concrete(self):
        raise TracingError("a tangent inside the JVP rule of a custom primitive has no value in "
                           "reverse mode; the rule must be linear in the tangents and use only "
                           "NumPy calls on them")

    def _clone(self):
        return TapeView(self._trace, self.value)

    def _assign(self, new) -> None:
        self.value = new.value

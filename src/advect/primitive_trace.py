"""The trace a custom primitive's JVP rule runs under in reverse mode: tape variables get NumPy
syntax as views, so a rule written with NumPy calls records its tangent arithmetic on the tape."""

from __future__ import annotations

from .core import Trace, bind
from .errors import TracingError
from .numpy._methods import ArrayTracer
from .ops._rules import is_linear

__all__ = ["RuleTrace", "TapeView"]


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

    def process(self, op, args, attrs):
        out = bind(op, *(self.unview(a) for a in args), **attrs)
        if op.multiple_results:
            return tuple(self.view(o) for o in out)
        return self.view(out)


class TapeView(ArrayTracer):
    """A tape variable as the JVP rule of a custom primitive sees it: shape and dtype, no data."""

    __slots__ = ("value",)

    def __init__(self, trace: RuleTrace, value):
        self._trace = trace
        self.value = value
        self._mut = None

    @property
    def aval(self):
        return self.value.aval

    def _concrete(self):
        raise TracingError("a tangent inside the JVP rule of a custom primitive has no value in "
                           "reverse mode; the rule must be linear in the tangents and use only "
                           "NumPy calls on them")

    def _clone(self):
        return TapeView(self._trace, self.value)

    def _assign(self, new) -> None:
        self.value = new.value

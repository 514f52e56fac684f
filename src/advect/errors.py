"""Advect's named errors.

Every error Advect raises on purpose is an :class:`AdvectError`; those that are also API misuse
additionally subclass Python's own (``TypeError``, ``ValueError``) so ordinary handlers catch them.
"""

from __future__ import annotations

__all__ = [
    "AdvectError",
    "TracingError",
    "EscapedTracerError",
    "MissingPrimitiveRuleError",
    "MutationError",
    "StaleViewError",
    "NumericsError",
    "NoJVPError",
    "NoVJPError",
    "MissingJVPRuleError",
    "MissingVJPRuleError",
    "ImplicitSolveError",
    "UnsupportedDtypeError",
    "PayloadError",
    "RevisionError",
    "SchemaVersionError",
    "UnregisteredOpError",
    "AmbientRandomnessError",
    "StagedIterationError",
]

QUOTE_LIMIT = 200  # characters of a user-supplied value that an error message quotes


def bounded(value, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)`` for an error message, cut to about ``limit`` characters (a 10 MB einsum
    subscript must not become a 10 MB message).

    Example:
        >>> bounded("ij" * 1000, limit=12)
        "'ijijijijiji... (2000 characters)"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    size = len(value) if isinstance(value, str) else len(text)
    return f"{text[:limit]}... ({size} characters)"


class AdvectError(Exception):
    """Base class of every error Advect raises on purpose."""


class TracingError(AdvectError, TypeError):
    """An unsupported call on a traced value, a tracer turned into a plain array or Python
    number (which would detach it), or data-dependent control flow while staging. Also a
    ``TypeError``: a traced value was used where only a concrete one works."""


class EscapedTracerError(TracingError):
    """A tracer was used after the transform that created it had returned."""


class _RuleError(AdvectError):
    """An error about an op's rules; it carries the op's name and where the call was made.

    ``str(error)`` is the plain message; ``op`` and ``source_location`` are ``None`` when not
    known::

        >>> e = NoVJPError("no transpose rule", op="custom.f", source_location="model.py:1")
        >>> (str(e), e.op, e.source_location)
        ('no transpose rule', 'custom.f', 'model.py:1')
    """

    def __init__(self, message: str = "", *, op: str | None = None,
                 source_location: str | None = None):
        super().__init__(message)
        self.op = op
        self.source_location = source_location

    def __reduce__(self):  # keep op and source_location through pickling
        return _rebuild, (type(self), str(self), self.op, self.source_location)


def _rebuild(cls, message, op, source_location):
    return cls(message, op=op, source_location=source_location)


class MissingPrimitiveRuleError(TracingError, _RuleError):
    """A custom primitive lacks the rule a transform needs. The error raised is also a
    :class:`NoJVPError` or :class:`NoVJPError` for the mode that needed the rule."""


class MutationError(AdvectError):
    """Mutating an input, or mutating through a transformed view."""


class StaleViewError(MutationError):
    """A view was used after its root array changed."""


class NumericsError(AdvectError):
    """A NaN or infinity appeared inside ``advect.debug(numerics=True)``."""


class NoJVPError(_RuleError):
    """An operation has no forward-mode (JVP) rule."""


class NoVJPError(_RuleError):
    """An operation has no reverse-mode (transpose) rule."""


class MissingJVPRuleError(MissingPrimitiveRuleError, NoJVPError):
    """A custom primitive lacks the rule forward mode needs."""


class MissingVJPRuleError(MissingPrimitiveRuleError, NoVJPError):
    """A custom primitive lacks the rule reverse mode needs."""


class ImplicitSolveError(AdvectError):
    """A solver callback of ``implicit_root`` failed or returned non-finite values."""


class UnsupportedDtypeError(AdvectError, TypeError):
    """A dtype that traced or staged values do not support."""


class PayloadError(AdvectError, ValueError):
    """A saved-program payload is malformed; the message names the field."""


class RevisionError(AdvectError, ValueError, TypeError):
    """An Array API revision that an array provider does not serve (for example an explicit
    ``array_api_version`` that an example's provider lacks). Both a ``ValueError`` and a
    ``TypeError``: the revision is a bad value, and the arrays cannot use one common provider
    at it."""


class SchemaVersionError(PayloadError):
    """A saved program of another schema version; it must be staged again."""


class UnregisteredOpError(PayloadError):
    """A saved program names an op that is not registered in this process."""


class AmbientRandomnessError(TracingError, RuntimeError):
    """Random numbers were drawn while staging; they would be frozen into the program."""


class StagedIterationError(TracingError, TypeError):
    """``len()`` of, or iteration over, a staged value (use ``x.shape[0]``)."""

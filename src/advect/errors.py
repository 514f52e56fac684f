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
    "ImplicitSolveError",
    "UnsupportedDtypeError",
    "PayloadError",
    "RevisionError",
    "SchemaVersionError",
    "UnregisteredOpError",
    "AmbientRandomnessError",
    "StagedIterationError",
]


class AdvectError(Exception):
    """Base class of every error Advect raises on purpose."""


class TracingError(AdvectError):
    """An unsupported call on a traced value, a tracer turned into a plain array, or
    data-dependent control flow while staging."""


class EscapedTracerError(TracingError):
    """A tracer was used after the transform that created it had returned."""


class MissingPrimitiveRuleError(TracingError):
    """A custom primitive lacks the rule a transform needs."""


class MutationError(AdvectError):
    """Mutating an input, or mutating through a transformed view."""


class StaleViewError(MutationError):
    """A view was used after its root array changed."""


class NumericsError(AdvectError):
    """A NaN or infinity appeared inside ``advect.debug(numerics=True)``."""


class NoJVPError(AdvectError):
    """An operation has no forward-mode (JVP) rule."""


class NoVJPError(AdvectError):
    """An operation has no reverse-mode (transpose) rule."""


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

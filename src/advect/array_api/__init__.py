"""The Array API frontend: one namespace object per (provider, revision).

``tracer.__array_namespace__(api_version=None)`` returns the namespace of the tracer's provider
for that revision (the newest one Advect and the provider share when none is given). Functions
on tracers record the same canonical ops as the NumPy frontend; functions without tracer
arguments, dtypes and constants are the provider's own.

Example:
    >>> import numpy as np
    >>> import advect as ad
    >>> def loss(x):
    ...     xp = x.__array_namespace__()
    ...     return xp.sum(xp.exp(x))
    >>> ad.grad(loss)(np.zeros(2)).tolist()
    [1.0, 1.0]
"""

from __future__ import annotations

from ..errors import RevisionError
from ..providers import provider_name, provider_of
from ._namespace import ArrayNamespace, namespace
from ._revisions import REVISIONS
from ._support import SupportRow, support_markdown, support_table

__all__ = ["namespace_for", "provider_revisions", "newest_revision", "check_revision",
           "REVISIONS", "ArrayNamespace", "SupportRow", "support_table", "support_markdown"]


def provider_revisions(xp) -> tuple[str, ...]:
    """The Array API revisions Advect supports that provider ``xp`` serves, oldest first.

    A provider serves every revision up to the one it declares in ``__array_api_version__``.

    Example:
        >>> import numpy as np
        >>> "2022.12" in provider_revisions(np)
        True
    """
    declared = getattr(xp, "__array_api_version__", None)
    if declared is None:
        return ()
    return tuple(r for r in REVISIONS if r <= declared)


def newest_revision(xps=()) -> str:
    """The newest revision Advect supports that every provider in ``xps`` serves.

    With no providers (a signature from specs alone) this is Advect's newest revision.

    Raises:
        RevisionError: (a TypeError and a ValueError) if the providers share no supported
            revision.

    Example:
        >>> newest_revision()
        '2025.12'
    """
    common = set(REVISIONS)
    for xp in xps:
        common &= set(provider_revisions(xp))
    if not common:
        names = ", ".join(sorted({provider_name(xp) for xp in xps}))
        raise RevisionError(f"the array providers {names} serve no common Array API revision that "
                        f"Advect supports ({', '.join(REVISIONS)})")
    return max(common)


def check_revision(revision: str, xps=()) -> str:
    """Return ``revision`` if Advect and every provider in ``xps`` serve it.

    Raises:
        ValueError: naming the revision Advect does not support.
        RevisionError: (a ValueError and a TypeError) naming the revision and the provider
            that lacks it.

    Example:
        >>> check_revision("2023.12")
        '2023.12'
    """
    if revision not in REVISIONS:
        raise ValueError(f"Array API revision {revision!r} is not supported by Advect; "
                         f"supported are {', '.join(REVISIONS)}")
    for xp in xps:
        if revision not in provider_revisions(xp):
            served = ", ".join(provider_revisions(xp)) or "none"
            raise RevisionError(f"Array API revision {revision!r} is not served by "
                             f"{provider_name(xp)} (it serves {served})")
    return revision


def namespace_for(tracer, api_version=None) -> ArrayNamespace:
    """The Array API namespace of ``tracer``: its provider's, at ``api_version``.

    Without ``api_version`` this is the revision the enclosing staging trace compiles against,
    or else the newest revision Advect and the provider share.

    Raises:
        ValueError: if Advect or the provider does not serve ``api_version``.

    Example:
        >>> import numpy as np
        >>> import advect as ad
        >>> ad.grad(lambda x: x.__array_namespace__().sin(x))(0.0)
        1.0
    """
    xp = provider_of(tracer)
    if api_version is None:
        staged = getattr(tracer._trace, "array_api_version", None)
        if staged is not None:  # the staging trace fixed (and checked) its revision
            return namespace(xp, staged)
        api_version = newest_revision((xp,))
    else:
        check_revision(api_version, (xp,))
    return namespace(xp, api_version)

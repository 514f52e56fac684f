"""The namespace object: one per (provider, revision), cached.

Every function of the revision that the provider serves becomes an attribute. A call whose
arguments hold a tracer runs Advect's translation (canonical ops); any other call goes straight
to the provider, so creation functions and constants cost nothing extra. Dtypes and constants
are the provider's own objects.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

from .._compat import array_api_function
from ..core import Tracer
from ..errors import TracingError
from ..providers import numpy_dtype, provider_name
from . import _revisions
from ._probes import PROBED, refuse_as_provider

__all__ = ["ArrayNamespace", "Context", "namespace"]

_CACHE: dict[tuple[int, str], ArrayNamespace] = {}
_LOCK = threading.Lock()


class Context:
    """What a translation needs to know about the namespace it serves: the provider ``xp``
    and the revision, plus conversions between provider dtypes and NumPy dtypes."""

    __slots__ = ("xp", "revision", "_dtypes", "probes")

    def __init__(self, xp, revision: str):
        self.xp = xp
        self.revision = revision
        self.probes: dict = {}  # _probes' cached verdicts of the provider
        self._dtypes = {np.dtype(name): getattr(xp, name) for name in _revisions.DTYPES
                        if hasattr(xp, name)}

    def dtype(self, dtype):
        """The provider's dtype object for ``dtype`` (a provider dtype, NumPy dtype or name)."""
        if dtype is None:
            return None
        try:
            return self._dtypes[numpy_dtype(dtype)]
        except KeyError:
            raise TypeError(
                f"the {provider_name(self.xp)} namespace has no dtype {dtype}") from None

    def dtype_of(self, x):
        """The provider's dtype object of a tracer, array or dtype."""
        return self.dtype(x.dtype if hasattr(x, "dtype") and not _is_dtype(x) else x)


def _is_dtype(x) -> bool:
    return isinstance(x, np.dtype | type) or type(x).__name__ in ("DType", "dtype")


def traced(values) -> bool:
    """Whether a tracer is among ``values`` or inside (nested) lists and tuples among them."""
    for v in values:
        if isinstance(v, Tracer) or (isinstance(v, list | tuple) and traced(v)):
            return True
    return False


def _serve(qualname: str, provider_fn, translation, ctx: Context, probed: bool):
    """The namespace function: translate traced calls, pass the rest to the provider. A
    ``probed`` function first refuses what the provider refuses (_probes); NumPy tracers
    keep NumPy's own leniency, with no probe on their path."""
    numpy_provider = ctx.xp is np
    probed = probed and not numpy_provider

    def function(*args, **kwargs):
        if traced(args) or traced(kwargs.values()):
            if translation is None:
                raise TracingError(
                    f"{qualname} is not supported on traced arrays; see "
                    "advect.array_api.support_table() for the functions that are")
            if probed:
                refuse_as_provider(ctx, qualname, provider_fn, args, kwargs)
            return translation(ctx, *args, **kwargs)
        if not numpy_provider and kwargs.get("dtype") is not None:
            kwargs["dtype"] = ctx.dtype(kwargs["dtype"])
        return provider_fn(*args, **kwargs)

    function.__name__ = qualname.rsplit(".", 1)[-1]
    function.__qualname__ = qualname
    function.__doc__ = getattr(provider_fn, "__doc__", None)
    return function


class ArrayNamespace(SimpleNamespace):
    """The Array API namespace of traced arrays for one provider and revision.

    Example:
        >>> import numpy as np
        >>> import advect as ad
        >>> def f(x):
        ...     xp = x.__array_namespace__()
        ...     return xp.sum(xp.sin(x) ** 2)
        >>> ad.grad(f)(np.asarray([0.0, 1.0])).round(4).tolist()
        [0.0, 0.9093]
    """

    # one cached namespace per (provider, revision): identity is equality, and hashable
    # (libraries such as xarray collect the namespaces of their operands in a set)
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return (f"<Array API namespace {self.__array_api_version__} of "
                f"{provider_name(self._context.xp)} (advect)>")

    def __getattr__(self, name: str):
        # only names the namespace lacks get here: say why, as an AttributeError (hasattr)
        if name.startswith("_"):
            raise AttributeError(name)
        revision = self.__dict__.get("__array_api_version__")
        raise AttributeError(
            f"the Array API namespace {revision} of traced arrays has no {name!r}: it is not a "
            f"function of that revision (a library calling xp.{name} expects more than the "
            f"Array API); NumPy code can call numpy.{name} on traced NumPy arrays instead")


def _extension(xp, ext: str):
    if ext == "" or xp is None:
        return xp
    return getattr(xp, ext, None)


def namespace(xp, revision: str) -> ArrayNamespace:
    """The cached namespace serving ``revision`` of provider ``xp``."""
    key = (id(xp), revision)
    ns = _CACHE.get(key)
    if ns is None:
        with _LOCK:
            ns = _CACHE.get(key)
            if ns is None:
                ns = _CACHE[key] = _build(xp, revision)
    return ns


def _build(xp, revision: str) -> ArrayNamespace:
    from ._padding import BEYOND, missing
    from ._tables import ELEMENTWISE, TRANSLATIONS

    ctx = Context(xp, revision)
    ns = ArrayNamespace()
    ns._context = ctx
    ns._provider = xp  # keeps id(xp) in the cache key alive
    ns.__array_api_version__ = revision
    ns.__name__ = f"advect.array_api[{provider_name(xp)}, {revision}]"
    for name in _revisions.DTYPES:
        if hasattr(xp, name):
            setattr(ns, name, getattr(xp, name))
    for name in _revisions.CONSTANTS:
        setattr(ns, name, getattr(xp, name) if hasattr(xp, name) else getattr(np, name))
    for ext in ("", *_revisions.EXTENSIONS):
        source = _extension(xp, ext)
        if source is None:
            continue
        target = ns if ext == "" else SimpleNamespace(__name__=f"{ns.__name__}.{ext}")
        for name in _revisions.names(revision, ext):
            provider_fn = array_api_function(source, name)
            if provider_fn is None:
                continue
            qualname = f"{ext}.{name}" if ext else name
            setattr(target, name, _serve(qualname, provider_fn, TRANSLATIONS.get(qualname), ctx,
                                         qualname in PROBED or qualname in ELEMENTWISE))
        if ext:
            setattr(ns, ext, target)
    for qualname in BEYOND:
        *path, name = qualname.split(".")
        source, target = xp, ns
        for part in path:
            source = getattr(source, part, None)
            if part not in vars(target):
                setattr(target, part, SimpleNamespace(__name__=f"{target.__name__}.{part}"))
            target = getattr(target, part)
        provider_fn = getattr(source, name, None) or missing(xp, qualname)
        setattr(target, name, _serve(qualname, provider_fn, TRANSLATIONS[qualname], ctx, False))
    return ns


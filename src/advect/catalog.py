"""What the NumPy frontend supports, derived from its translation tables at call time.

Every row names one NumPy spelling (a function of ``numpy``, ``numpy.linalg`` or ``numpy.fft``,
a ufunc, a ufunc method form such as ``numpy.add.reduce``, or an ``ndarray`` method or
property) and says whether it works in each lifetime:

* ``dynamic``: on traced arrays inside ``grad``, ``vjp``, ``jvp``, ... (the translation exists);
* ``staged``: inside ``stage`` too, which needs every output shape to follow from input shapes
  (rows whose output shape depends on the data, such as ``nonzero``, are dynamic only);
* ``differentiable``: derivatives flow through it (false for integer and boolean results such as
  comparisons or ``argsort``, and for rows that are not supported at all).

Nothing here is a second list: ufunc rows come from ``numpy/_ufuncs.UFUNCS`` and the ops'
``nondiff`` flags, function rows from ``numpy/_functions.FUNCTIONS`` and its ``DYNAMIC_ONLY`` and
``NONDIFF`` marks, ndarray rows from the ``ArrayTracer`` class. Run ``python -m advect.catalog``
to print the Markdown page ``docs/compatibility/numpy.md``.

Example:
    >>> import advect as ad
    >>> row = next(r for r in ad.support_catalog() if r.name == "numpy.add.reduce")
    >>> row.dynamic, row.staged, row.differentiable
    (True, True, True)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ._compat import NUMPY_VERSION
from .core import Op

__all__ = ["Row", "support_catalog", "catalog_counts", "catalog_markdown"]

CATEGORIES = ("function", "ufunc", "ufunc method", "ndarray method", "scipy.special ufunc",
              "array api")
_MODULES = (("numpy", np), ("numpy.linalg", np.linalg), ("numpy.fft", np.fft),
            ("numpy.emath", np.emath))
# ndarray members that describe the array rather than compute from it: no derivative to take
_METADATA = frozenset({"shape", "dtype", "ndim", "size", "itemsize", "nbytes", "device",
                       "strides", "flags", "base", "ctypes", "data"})
# ndarray members that export the data (to bytes or files): they need the concrete value, so
# they are dynamic only and end differentiation (item and tolist stay traced: tests/test_detach.py)
_EXPORTS = frozenset({"tobytes", "tofile", "dump", "dumps"})


@dataclass(frozen=True)
class Row:
    """One NumPy spelling and its status in each lifetime."""

    category: str
    name: str
    dynamic: bool
    staged: bool
    differentiable: bool
    note: str = ""
    target: object = field(default=None, compare=False, repr=False)  # the NumPy object


def _translation_differentiable(found) -> bool:
    if isinstance(found, Op):
        return not found.nondiff and found.jvp is not None
    # a composite of ops: differentiable through them, unless it says it is not
    return found is not None and not getattr(found, "nondiff", False)


def _has_float_loop(ufunc) -> bool:
    """Whether NumPy's reduce-style methods can run ``ufunc`` on two float64 operands."""
    try:
        out = ufunc.resolve_dtypes((np.dtype(np.float64), np.dtype(np.float64), None))[-1]
    except (TypeError, ValueError):
        return False
    return out.kind in "fc"


def _numpy_ufuncs() -> list:
    found = {}
    for name in sorted(dir(np)):
        value = getattr(np, name)
        if isinstance(value, np.ufunc):
            found.setdefault(value, []).append(name)
    return sorted(found.items(), key=lambda item: item[0].__name__)


def _ufunc_rows(table, category, ufuncs):
    from .numpy._ufunc_methods import METHODS, method_defined

    rows = []
    for ufunc, names, prefix in ufuncs:
        found = table.get(ufunc)
        diff = _translation_differentiable(found)
        aliases = [n for n in names if n != ufunc.__name__]
        note = f"alias {', '.join(f'{prefix}.{n}' for n in aliases)}" if aliases else ""
        rows.append(Row(category, f"{prefix}.{ufunc.__name__}", found is not None,
                        found is not None, diff, note, ufunc))
        if category != "ufunc":
            continue
        for method in METHODS:
            if not method_defined(ufunc, method):
                continue
            method_diff = diff and (method in ("outer", "at") or _has_float_loop(ufunc))
            note = "indices must be constant" if method == "reduceat" else ""
            rows.append(Row("ufunc method", f"{prefix}.{ufunc.__name__}.{method}",
                            found is not None, found is not None, method_diff, note,
                            (ufunc, method)))
    return rows


def _scipy_rows():
    from .numpy._ufuncs import SCIPY_SPECIAL, UFUNCS, add_scipy_rows

    try:
        import scipy.special
    except ImportError:
        return []
    add_scipy_rows()

    names = {}
    for name in sorted(SCIPY_SPECIAL):  # digamma and psi are one ufunc
        names.setdefault(getattr(scipy.special, name), []).append(name)
    ufuncs = [(u, found, "scipy.special") for u, found in names.items()]
    return _ufunc_rows(UFUNCS, "scipy.special ufunc", ufuncs)


def _function_rows():
    from .numpy import _functions

    functions = _functions.FUNCTIONS
    dynamic_only = getattr(_functions, "DYNAMIC_ONLY", set())
    nondiff = getattr(_functions, "NONDIFF", set())
    names = {}
    for prefix, module in _MODULES:
        for name in sorted(dir(module)):
            value = getattr(module, name)
            if name.startswith("_") or not callable(value) or isinstance(value, np.ufunc | type):
                continue
            if type(value) is type(np.sum) or value in functions \
                    or value in _functions.WITHOUT_TRANSLATION:
                names.setdefault(value, f"{prefix}.{name}")
    for value in functions:
        if not isinstance(value, np.ufunc):
            names.setdefault(value, f"{value.__module__}.{value.__name__}")
    plain = _functions.WITHOUT_TRANSLATION
    rows = []
    for value, name in sorted(names.items(), key=lambda item: item[1]):
        if value in plain:
            rows.append(Row("function", name, True, True, plain[value],
                            "works through NumPy's own code", value))
            continue
        supported = value in functions
        staged = supported and value not in dynamic_only
        rows.append(Row("function", name, supported, staged, supported and value not in nondiff,
                        "output shape depends on the data" if supported and not staged else "",
                        value))
    return rows


def _ndarray_rows():
    from .numpy import _functions
    from .numpy._methods import ArrayTracer

    nondiff = getattr(_functions, "NONDIFF", set())
    dynamic_only = getattr(_functions, "DYNAMIC_ONLY", set())
    rows = []
    for name in sorted(n for n in dir(np.ndarray) if not n.startswith("_") and _kept(n)):
        supported = name in _tracer_members(ArrayTracer)
        function = getattr(np, name, None)
        staged = supported and function not in dynamic_only and name not in _EXPORTS
        diff = (supported and name not in _METADATA and name not in _EXPORTS
                and function not in nondiff)
        note = "reads the concrete value" if name in _EXPORTS else (
            "metadata" if name in _METADATA else "")
        rows.append(Row("ndarray method", f"ndarray.{name}", supported, staged, diff, note,
                        name))
    return rows


def _kept(name: str) -> bool:
    """Whether NumPy arrays still have the member (NumPy 2.0 lists removed ones, such as
    ``ptp``, that raise AttributeError)."""
    try:
        getattr(np.empty((1, 1)), name)
    except AttributeError:
        return False
    return True


def _tracer_members(cls) -> set:
    """Public members the tracer class defines (refusing ones, such as in-place ``sort``,
    carry ``refuses = True``)."""
    members = set()
    for klass in cls.__mro__:
        for name, value in vars(klass).items():
            if not name.startswith("_") and not getattr(value, "refuses", False):
                members.add(name)
    return members


def support_catalog() -> list[Row]:
    """Every NumPy function, ufunc, ufunc method form and ndarray method with its status in each
    lifetime (``dynamic``, ``staged``, ``differentiable``), read from the frontend tables.

    SciPy's special-function ufuncs that Advect translates are listed too when SciPy is
    installed, and so is the Array API namespace of the newest revision (category
    ``"array api"``; ``advect.array_api.support_table(revision)`` has the others).

    Example:
        >>> import advect as ad
        >>> row = next(r for r in ad.support_catalog() if r.name == "numpy.sin")
        >>> row.differentiable
        True
    """
    from .numpy._ufuncs import UFUNCS

    ufuncs = [(u, names, "numpy") for u, names in _numpy_ufuncs()]
    return (_function_rows() + _ufunc_rows(UFUNCS, "ufunc", ufuncs) + _ndarray_rows()
            + _scipy_rows() + _array_api_rows())


def _array_api_rows() -> list[Row]:
    """The Array API namespace of the newest revision, from its own support table (which
    tests/test_array_api.py proves function by function, at every revision)."""
    from .array_api import REVISIONS, support_table

    newest = REVISIONS[-1]
    data = "; output shape depends on the data"
    return [Row("array api", f"xp.{r.name}", r.dynamic, r.staged, r.differentiable,
                f"since {r.introduced}" + ("" if r.staged else data))
            for r in support_table(newest)]


def catalog_counts(rows=None) -> dict:
    """``{category: Counter}`` of rows, and of rows dynamic, staged, differentiable and
    dynamic only, over ``rows`` (default: the whole catalog).

    Example:
        >>> from advect.catalog import catalog_counts
        >>> counts = catalog_counts()["ufunc"]
        >>> counts["rows"] == counts["dynamic"]  # every NumPy ufunc has a translation
        True
    """
    counts = {}
    for row in support_catalog() if rows is None else rows:
        c = counts.setdefault(row.category, Counter())
        c["rows"] += 1
        c["dynamic"] += row.dynamic
        c["staged"] += row.staged
        c["differentiable"] += row.differentiable
        c["dynamic only"] += row.dynamic and not row.staged
    return counts


def _mark(flag: bool) -> str:
    return "yes" if flag else "no"


def catalog_markdown() -> str:
    """The compatibility page (Markdown): counts per category, then one table per category.

    Example:
        >>> from advect.catalog import catalog_markdown
        >>> catalog_markdown().splitlines()[0]
        '# NumPy compatibility'
    """
    rows = support_catalog()
    counts = catalog_counts(rows)
    lines = ["# NumPy compatibility", "",
             "Generated by `python -m advect.catalog > docs/compatibility/numpy.md` from the "
             "frontend tables; do not edit by hand.", "",
             f"Describes NumPy {'.'.join(map(str, NUMPY_VERSION))}: a NumPy release lists the "
             "functions it has (`numpy.unstack` from 2.1, `numpy.matvec` from 2.2, no "
             "`numpy.row_stack` from 2.5).", "",
             "*Dynamic*: works on traced arrays in `grad`, `vjp`, `jvp`, ... *Staged*: works "
             "inside `advect.stage`. *Differentiable*: derivatives flow through it.", "",
             "| category | rows | dynamic | staged | differentiable | dynamic only |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for category in CATEGORIES:
        c = counts.get(category)
        if c:
            lines.append(f"| {category} | {c['rows']} | {c['dynamic']} | {c['staged']} | "
                         f"{c['differentiable']} | {c['dynamic only']} |")
    for category in CATEGORIES:
        selected = [r for r in rows if r.category == category]
        if not selected:
            continue
        lines += ["", f"## {category}", "", "| name | dynamic | staged | differentiable | note |",
                  "| --- | --- | --- | --- | --- |"]
        lines += [f"| `{r.name}` | {_mark(r.dynamic)} | {_mark(r.staged)} | "
                  f"{_mark(r.differentiable)} | {r.note} |" for r in selected]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(catalog_markdown(), end="")

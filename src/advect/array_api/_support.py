"""What the Array API frontend supports, derived from the revision and translation tables.

``support_table()`` lists every function of the Array API revisions with its lifetimes; the
support catalog and ``docs/compatibility/array_api.md`` are generated from it.
"""

from __future__ import annotations

from typing import NamedTuple

from .. import ops
from . import _revisions

__all__ = ["SupportRow", "support_table", "support_markdown"]

# Functions that never take arrays to trace: they run on the provider and give constants.
# (``full`` and ``linspace`` also take a traced fill value or end points.)
PROVIDER_CALLS = frozenset({"arange", "empty", "eye", "full", "linspace", "ones", "zeros",
                            "fft.fftfreq", "fft.rfftfreq"})
# Trace-time metadata: answered from shapes and dtypes, no graph node.
METADATA = frozenset({"can_cast", "finfo", "iinfo", "isdtype", "result_type",
                      "broadcast_shapes", "__array_namespace_info__"})
# The output shape depends on the data: dynamic transforms only.
DATA_DEPENDENT = frozenset({"nonzero", "unique_all", "unique_counts", "unique_inverse",
                            "unique_values"})
# Integer- or boolean-valued results, or values that do not depend on the input's values:
# their derivative is zero by definition.
INDEX_VALUED = frozenset({"argmax", "argmin", "argsort", "searchsorted", "count_nonzero",
                          "all", "any", "nonzero", "isin", "linalg.matrix_rank",
                          "empty_like", "zeros_like", "ones_like"})


class SupportRow(NamedTuple):
    """One Array API function: where it appears and which lifetimes serve it.

    ``derivative`` is ``"rules"`` (derivative rules carry tangents through it), ``"zero"``
    (index-, boolean- or shape-valued: zero by definition, so transforms pass zeros through),
    ``"n/a"`` (takes no arrays, or answers metadata) or ``"missing"`` (an op lacks its rule).

    Example:
        >>> from advect.array_api import support_table
        >>> row = [row for row in support_table() if row.name == "sin"][0]
        >>> row.introduced, row.kind, row.dynamic, row.staged, row.derivative
        ('2022.12', 'traced', True, True, 'rules')
    """

    name: str        # qualified: "sin", "linalg.solve", "fft.rfft"
    introduced: str  # the first revision that names it
    kind: str        # "traced", "constant" (provider call) or "metadata"
    dynamic: bool    # works on tracers in dynamic transforms
    staged: bool     # works while staging
    derivative: str  # "rules", "zero", "n/a" or "missing"

    @property
    def differentiable(self) -> bool:
        """Whether derivative rules carry tangents through it (as ``support_catalog()`` counts:
        index- and boolean-valued results are not differentiable)."""
        return self.derivative == "rules"


def _ops_present(name: str) -> bool:
    from ._tables import NEEDS
    return all(op in ops.REGISTRY for op in NEEDS.get(name, ()))


def _derivative(name: str) -> str:
    from ._tables import ELEMENTWISE, NEEDS
    if name in INDEX_VALUED or (name in ELEMENTWISE and ops.REGISTRY[name].nondiff):
        return "zero"
    if all(ops.REGISTRY[op].jvp is not None or ops.REGISTRY[op].nondiff
           for op in NEEDS.get(name, ())):
        return "rules"
    return "missing"


def support_table(revision: str = _revisions.REVISIONS[-1]) -> tuple[SupportRow, ...]:
    """Every function of ``revision`` with its lifetimes, main namespace first.

    Example:
        >>> rows = {row.name: row for row in support_table("2024.12")}
        >>> rows["sin"].dynamic, rows["sin"].staged, rows["sin"].derivative
        (True, True, 'rules')
        >>> rows["floor"].derivative, rows["arange"].derivative
        ('zero', 'n/a')
        >>> rows["unique_values"].staged
        False
    """
    from ._tables import TRANSLATIONS

    if revision not in _revisions.REVISIONS:
        raise ValueError(f"Array API revision {revision!r} is not supported by Advect; "
                         f"supported are {', '.join(_revisions.REVISIONS)}")
    rows = []
    for ext in ("", *_revisions.EXTENSIONS):
        for name in _revisions.names(revision, ext):
            qualname = f"{ext}.{name}" if ext else name
            introduced = _revisions.introduced_in(name, ext)
            if qualname in PROVIDER_CALLS or qualname in METADATA:
                kind = "constant" if qualname in PROVIDER_CALLS else "metadata"
                rows.append(SupportRow(qualname, introduced, kind, True, True, "n/a"))
                continue
            dynamic = qualname in TRANSLATIONS and _ops_present(qualname)
            rows.append(SupportRow(
                qualname, introduced, "traced", dynamic,
                dynamic and qualname not in DATA_DEPENDENT,
                _derivative(qualname) if dynamic else "missing"))
    return tuple(rows)


def support_markdown() -> str:
    """The Markdown page ``docs/compatibility/array_api.md``: counts and one row per function.

    Example:
        >>> support_markdown().splitlines()[0]
        '# Array API support'
    """
    lines = ["# Array API support", "",
             "Generated from `advect.array_api.support_table()`; regenerate with",
             "`python -c \"import advect.array_api as a; print(a.support_markdown(), end='')\" "
             "> docs/compatibility/array_api.md`.", "",
             "A function is *dynamic* when it works on traced arrays inside `grad`, `vjp`, "
             "`jvp` and friends, and *staged* when it works inside `advect.stage`. Its "
             "*derivative* is `rules` when derivative rules carry tangents through it, `zero` "
             "when its result is index-, boolean- or step-valued (transforms pass zeros), "
             "`n/a` for *constant* functions (they take no arrays and run on the provider) and "
             "*metadata* functions (answered from shapes and dtypes), and `missing` where an "
             "operation lacks its rule.", "",
             "| revision | functions | dynamic | staged | derivative rules | zero derivative |",
             "| --- | --- | --- | --- | --- | --- |"]
    for revision in _revisions.REVISIONS:
        rows = support_table(revision)
        rules = sum(r.derivative == "rules" for r in rows)
        zero = sum(r.derivative == "zero" for r in rows)
        lines.append(f"| {revision} | {len(rows)} | {sum(r.dynamic for r in rows)} | "
                     f"{sum(r.staged for r in rows)} | {rules} | {zero} |")
    lines += ["", "| function | since | kind | dynamic | staged | derivative |",
              "| --- | --- | --- | --- | --- | --- |"]
    mark = {True: "yes", False: "no"}
    for r in support_table():
        lines.append(f"| `{r.name}` | {r.introduced} | {r.kind} | {mark[r.dynamic]} | "
                     f"{mark[r.staged]} | {r.derivative} |")
    return "\n".join(lines) + "\n"

"""Advect: automatic differentiation for the NumPy and Array API code you already write.

Example:
    >>> import numpy as np
    >>> import advect as ad
    >>> ad.grad(lambda x: np.sum(np.sin(x) ** 2))(np.array([0.0, np.pi / 4]))
    array([0., 1.])
"""

from . import errors, ops, pytree
from .autodiff.api import (
    LinearMap,
    Pullback,
    grad,
    is_traced,
    jvp,
    linearize,
    stop_gradient,
    value_and_grad,
    vjp,
)
from .autodiff.checkpoint import checkpoint
from .autodiff.dense import hessian, hessian_diag, hvp, jacobian
from .autodiff.implicit import implicit_root
from .autodiff.state import transform_state, transform_states
from .debug import debug
from .errors import (  # every named error is re-exported
    AdvectError,
    AmbientRandomnessError,
    EscapedTracerError,
    ImplicitSolveError,
    MissingJVPRuleError,
    MissingPrimitiveRuleError,
    MissingVJPRuleError,
    MutationError,
    NoJVPError,
    NoVJPError,
    NumericsError,
    PayloadError,
    RevisionError,
    SchemaVersionError,
    StagedIterationError,
    StaleViewError,
    TracingError,
    UnregisteredOpError,
    UnsupportedDtypeError,
)
from .numpy import array, asarray
from .primitive import PrimitiveResult, primitive
from .staging import (
    AbstractValue,
    ArraySpec,
    OptimizationReport,
    StagedProgram,
    StaticSpec,
    stage,
    vjp_program,
)

__version__ = "0.3.0"

__all__ = [
    "__version__", "errors", "ops", "pytree",
    "grad", "value_and_grad", "vjp", "jvp", "linearize", "jacobian", "hessian", "hessian_diag",
    "hvp", "stop_gradient", "is_traced", "Pullback", "LinearMap", "array", "asarray",
    "AdvectError", "AmbientRandomnessError", "EscapedTracerError", "ImplicitSolveError",
    "MissingPrimitiveRuleError", "MissingJVPRuleError", "MissingVJPRuleError", "MutationError",
    "NoJVPError", "NoVJPError", "NumericsError",
    "PayloadError", "RevisionError", "SchemaVersionError", "StagedIterationError",
    "StaleViewError", "TracingError", "UnregisteredOpError", "UnsupportedDtypeError",
    "checkpoint", "implicit_root", "support_catalog", "debug", "transform_state",
    "transform_states",
    "stage", "vjp_program", "StagedProgram", "ArraySpec", "StaticSpec", "AbstractValue",
    "OptimizationReport", "primitive", "PrimitiveResult",
]


def __getattr__(name):
    # the catalog reads every frontend table: load it on first use (and so that
    # `python -m advect.catalog` runs it fresh)
    if name == "support_catalog":
        from .catalog import support_catalog
        return support_catalog
    raise AttributeError(f"module 'advect' has no attribute {name!r}")

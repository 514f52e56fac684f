"""Staging: trace one signature once, optimize the graph, and run it as a StagedProgram."""

from .derive import vjp_program
from .program import (
    SUPPORTED_API_VERSIONS,
    AbstractValue,
    ArraySpec,
    OptimizationReport,
    StagedProgram,
    StaticSpec,
    stage,
)

__all__ = ["stage", "vjp_program", "StagedProgram", "ArraySpec", "StaticSpec", "AbstractValue",
           "OptimizationReport", "SUPPORTED_API_VERSIONS"]

"""What each Array API revision names: functions, constants, dtypes, and the extensions.

Each revision lists only what it adds to the one before; ``names(revision)`` accumulates them.
Advect serves the revisions in ``REVISIONS``, oldest first.
"""

from __future__ import annotations

from functools import cache

__all__ = ["REVISIONS", "ADDED", "CONSTANTS", "DTYPES", "EXTENSIONS", "names", "introduced_in"]

REVISIONS = ("2022.12", "2023.12", "2024.12", "2025.12")

CONSTANTS = ("e", "inf", "nan", "newaxis", "pi")
DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64", "complex64", "complex128")
EXTENSIONS = ("linalg", "fft")

# Functions each revision adds, by namespace ("" is the main namespace).
ADDED: dict[str, dict[str, tuple[str, ...]]] = {
    "2022.12": {
        "": (
            # element-wise
            "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
            "bitwise_and", "bitwise_left_shift", "bitwise_invert", "bitwise_or",
            "bitwise_right_shift", "bitwise_xor", "ceil", "conj", "cos", "cosh", "divide",
            "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal",
            "imag", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log1p", "log2",
            "log10", "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor",
            "multiply", "negative", "not_equal", "positive", "pow", "real", "remainder", "round",
            "sign", "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc",
            # creation
            "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full",
            "full_like", "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros",
            "zeros_like",
            # data types
            "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
            # linear algebra
            "matmul", "matrix_transpose", "tensordot", "vecdot",
            # manipulation
            "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "permute_dims",
            "reshape", "roll", "squeeze", "stack",
            # searching, sets, sorting
            "argmax", "argmin", "nonzero", "where",
            "unique_all", "unique_counts", "unique_inverse", "unique_values",
            "argsort", "sort",
            # statistics, utilities, indexing
            "max", "mean", "min", "prod", "std", "sum", "var", "all", "any", "take",
        ),
        "linalg": (
            "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "matmul",
            "matrix_norm", "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv",
            "qr", "slogdet", "solve", "svd", "svdvals", "tensordot", "trace", "vecdot",
            "vector_norm",
        ),
        "fft": (
            "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
            "fftfreq", "rfftfreq", "fftshift", "ifftshift",
        ),
    },
    "2023.12": {
        "": ("clip", "copysign", "hypot", "maximum", "minimum", "signbit", "cumulative_sum",
             "moveaxis", "repeat", "tile", "unstack", "searchsorted",
             "__array_namespace_info__"),
    },
    "2024.12": {
        "": ("nextafter", "reciprocal", "count_nonzero", "cumulative_prod", "diff",
             "take_along_axis"),
    },
    "2025.12": {
        "": ("isin", "broadcast_shapes"),
        "linalg": ("eig", "eigvals"),
    },
}


@cache
def names(revision: str, extension: str = "") -> tuple[str, ...]:
    """Every function ``revision`` names in ``extension`` ("" for the main namespace)."""
    out: list[str] = []
    for rev in REVISIONS[: REVISIONS.index(revision) + 1]:
        out.extend(ADDED[rev].get(extension, ()))
    return tuple(out)


def introduced_in(name: str, extension: str = "") -> str:
    """The first revision that names ``name``."""
    for rev in REVISIONS:
        if name in ADDED[rev].get(extension, ()):
            return rev
    raise KeyError(f"{extension + '.' if extension else ''}{name} is in no Array API revision")

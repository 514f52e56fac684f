"""Canonical operations: ``REGISTRY`` maps each stable op name to its ``Op`` record.

The table modules are imported here; every op is also an attribute of this package
(``ops.sin``), which is how rules and frontends spell them.
"""

from ..core import REGISTRY, Op
from . import _rules
from .bitwise import *  # noqa: F403
from .casts import *  # noqa: F403
from .correlation import *  # noqa: F403
from .creation import *  # noqa: F403
from .einsum import *  # noqa: F403
from .elementwise import *  # noqa: F403
from .fft import *  # noqa: F403
from .floatbits import *  # noqa: F403
from .indexing import *  # noqa: F403
from .linalg import *  # noqa: F403
from .matrix_functions import *  # noqa: F403
from .pseudoinverse import *  # noqa: F403
from .reductions import *  # noqa: F403
from .scans import *  # noqa: F403
from .shape import *  # noqa: F403
from .sorting import *  # noqa: F403
from .special import *  # noqa: F403

__all__ = ["REGISTRY", "Op", "_rules"]

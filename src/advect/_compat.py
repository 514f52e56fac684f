"""Differences between the supported NumPy releases (2.0 to 2.5), in one place.

Advect follows the installed NumPy: a function it lacks is not translated (and not listed by
``advect.support_catalog()``), and a call it rejects is rejected by Advect too. Nothing outside
this module names a NumPy attribute that some supported NumPy lacks, or compares NumPy versions.

* ``numpy.unstack``, ``numpy.cumulative_sum`` and ``numpy.cumulative_prod`` arrived in 2.1;
* the ``numpy.matvec`` and ``numpy.vecmat`` ufuncs arrived in 2.2;
* ``numpy.row_stack`` (an alias of ``vstack``, deprecated in 2.0) was removed in 2.5;
* ``numpy.cross`` of 2-element vectors is deprecated from 2.0 and an error from 2.5.

Example:
    >>> import numpy as np
    >>> from advect._compat import present
    >>> present(np, "vstack", "no_such_function") == (np.vstack,)
    True
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["NUMPY_VERSION", "present", "cross_of_2_vectors"]

NUMPY_VERSION: tuple[int, int] = tuple(int(part) for part in np.__version__.split(".")[:2])


def present(module, *names: str) -> tuple:
    """The attributes ``names`` of ``module`` that the installed NumPy defines, in order (the
    others arrived in a later release or were removed)."""
    found = []
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            value = getattr(module, name, None)
        if value is not None:
            found.append(value)
    return tuple(found)


def cross_of_2_vectors(stacklevel: int = 3) -> None:
    """What ``numpy.cross`` does when an operand holds 2-element vectors: a DeprecationWarning
    before NumPy 2.5, NumPy's ValueError from 2.5 on."""
    message = ("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional "
               "vectors instead.")
    if NUMPY_VERSION >= (2, 5):
        raise ValueError("numpy.cross: both input arrays must be (arrays of) 3-dimensional "
                         "vectors from NumPy 2.5 on; append a zero component to 2-element "
                         "vectors")
    warnings.warn(message, DeprecationWarning, stacklevel=stacklevel)

"""Differences between the supported NumPy releases (2.0 to 2.5), in one place.

Advect follows the installed NumPy: a function it lacks is not translated (and not listed by
``advect.support_catalog()``), and a call it rejects is rejected by Advect too. Nothing outside
this module names a NumPy attribute that some supported NumPy lacks, or compares NumPy versions.

* ``numpy.unstack``, ``numpy.cumulative_sum`` and ``numpy.cumulative_prod`` arrived in 2.1;
* the ``numpy.matvec`` and ``numpy.vecmat`` ufuncs arrived in 2.2;
* ``numpy.row_stack`` (an alias of ``vstack``, deprecated in 2.0) was removed in 2.5;
* ``numpy.cross`` of 2-element vectors is deprecated from 2.0 and an error from 2.5;
* ``numpy.linalg.eig`` and ``eigvals`` return complex arrays for every matrix from 2.5 on
  (before, real ones for a real matrix whose eigenvalues are all real);
* ``numpy.trim_zeros`` checks its ``trim`` letters (and gained ``axis=``) in 2.2;
* ``numpy.clip`` gained ``min=``/``max=`` and open bounds on both sides in 2.1;
* ``numpy.fft.fftfreq`` and ``rfftfreq`` lack the ``dtype=`` keyword of Array API revision
  2024.12 (NumPy 2.4 still does): ``numpy.fft.fftfreq(n, d, dtype=...)`` is NumPy's TypeError
  there, and the Array API namespace over NumPy adds the keyword (``array_api_function``);
* NumPy 2.0 serves Array API revision 2022.12 (``cumulative_sum``, ``cumulative_prod`` and
  ``astype`` of a NumPy scalar arrived with 2.1); its ``floor``, ``ceil`` and ``trunc`` round
  integers to floats (2.1 keeps them integers).

Example:
    >>> import numpy as np
    >>> from advect._compat import present
    >>> present(np, "vstack", "no_such_function") == (np.vstack,)
    True
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np

__all__ = ["NUMPY_VERSION", "EIG_ALWAYS_COMPLEX", "FFTFREQ_TAKES_DTYPE", "PAD_TAKES_DICT",
           "present",
           "cross_of_2_vectors",
           "provider_function", "array_api_function", "clip_bounds"]

NUMPY_VERSION: tuple[int, int] = tuple(int(part) for part in np.__version__.split(".")[:2])
EIG_ALWAYS_COMPLEX: bool = NUMPY_VERSION >= (2, 5)
FFTFREQ_TAKES_DTYPE: bool = "dtype" in inspect.signature(np.fft.fftfreq).parameters
PAD_TAKES_DICT: bool = NUMPY_VERSION >= (2, 3)  # np.pad(a, {axis: width})


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


# NumPy 2.0 serves Array API revision 2022.12: it lacks the two scans of 2023.12, and its
# ``astype`` takes arrays only (op implementations also meet NumPy scalars)
_NUMPY_2_0 = {
    "cumulative_sum": lambda x, axis=None: np.cumsum(x, axis=axis),
    "cumulative_prod": lambda x, axis=None: np.cumprod(x, axis=axis),
    "astype": lambda x, dtype, /, *, copy=True: np.asarray(x).astype(dtype, copy=copy),
}


def provider_function(xp, name: str):
    """``xp.<name>`` for an op implementation; on NumPy 2.0, NumPy's own spelling of the
    Array API functions it lacks.

    Example:
        >>> import numpy as np
        >>> provider_function(np, "cumulative_sum")(np.array([1.0, 2.0]), axis=0).tolist()
        [1.0, 3.0]
    """
    if xp is np and NUMPY_VERSION < (2, 1) and name in _NUMPY_2_0:
        return _NUMPY_2_0[name]
    return getattr(xp, name)


def _frequencies_with_dtype(frequencies):
    """NumPy's ``fftfreq`` or ``rfftfreq`` with the Array API signature, ``dtype=`` included
    (None keeps NumPy's float64, the default real floating dtype)."""
    def served(n, /, *, d=1.0, dtype=None, device=None):
        out = frequencies(n, d, device=device)
        return out if dtype is None else out.astype(dtype, copy=False)
    served.__name__ = served.__qualname__ = frequencies.__name__
    served.__doc__ = frequencies.__doc__
    return served


_NUMPY_FFT_FREQUENCIES = {} if FFTFREQ_TAKES_DTYPE else {
    "fftfreq": _frequencies_with_dtype(np.fft.fftfreq),
    "rfftfreq": _frequencies_with_dtype(np.fft.rfftfreq),
}


def array_api_function(module, name: str):
    """``module.<name>`` as an Array API namespace serves it (None where the module lacks it):
    NumPy's ``fft.fftfreq`` and ``fft.rfftfreq`` gain ``dtype=`` where the installed NumPy
    lacks it.

    Example:
        >>> import numpy as np
        >>> array_api_function(np.fft, "fftfreq")(4, d=0.5, dtype=np.float32).tolist()
        [0.0, 0.5, -1.0, -0.5]
    """
    if module is np.fft and name in _NUMPY_FFT_FREQUENCIES:
        return _NUMPY_FFT_FREQUENCIES[name]
    return getattr(module, name, None)


def clip_bounds(a_min, a_max, min, max) -> tuple:
    """``numpy.clip``'s reading of its bounds as ``(low, high)``, None for an open side.

    NumPy 2.1 added the ``min=``/``max=`` keywords and allows both bounds None (a copy);
    NumPy 2.0 needs ``a_min`` and ``a_max`` and at least one of them not None.
    """
    missing = np._NoValue
    if NUMPY_VERSION < (2, 1):
        if a_min is missing or a_max is missing or min is not missing or max is not missing:
            raise TypeError("clip() missing required positional arguments: 'a_min' and "
                            "'a_max' (NumPy 2.0 has no min=/max= keywords)")
        if a_min is None and a_max is None:
            raise ValueError("One of max or min must be given")
        return a_min, a_max
    if a_min is missing and a_max is missing:
        return (None if min is missing else min), (None if max is missing else max)
    for name, value in (("a_min", a_min), ("a_max", a_max)):
        if value is missing:
            raise TypeError(f"clip() missing 1 required positional argument: '{name}'")
    if min is not missing or max is not missing:
        raise ValueError("Passing `min` or `max` keyword argument when `a_min` and `a_max` "
                         "are provided is forbidden.")
    return a_min, a_max

"""Grey morphology of ``advect.scipy.ndimage`` (erosion, dilation and their composites), with
SciPy's signatures: SciPy's own result on plain arrays, the window stack on traced ones (a max
or min over each window, so the cotangent reaches the selected element).

Example:
    >>> import numpy as np, advect as ad
    >>> x = np.array([3.0, 1.0, 2.0, 5.0])
    >>> ad.grad(lambda x: grey_erosion(x, size=3)[3])(x).tolist()
    [0.0, 0.0, 1.0, 0.0]
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.ndimage as _nd

from ._windows import asarray, axes_given, finish, footprint_of, per_axis, selected, traced

__all__ = ["grey_erosion", "grey_dilation", "grey_opening", "grey_closing",
           "morphological_gradient", "morphological_laplace", "white_tophat", "black_tophat"]


def grey_erosion(input: Any, size: Any = None, footprint: Any = None, structure: Any = None,
                 output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0,
                 *, axes: Any = None) -> Any:
    """Grey erosion: the minimum over the footprint of ``input - structure``.

    Example:
        >>> import numpy as np
        >>> grey_erosion(np.array([3.0, 1.0, 2.0, 5.0]), size=3).tolist()
        [1.0, 1.0, 1.0, 2.0]
    """
    if not traced(input):
        return _nd.grey_erosion(input, size, footprint, structure, output, mode, cval, origin,
                                **axes_given(axes))
    x, picked = selected(input, footprint, mode, cval, origin, axes, size, structure, -1.0)
    return finish(np.min(picked, axis=-1), x, output)


def grey_dilation(input: Any, size: Any = None, footprint: Any = None, structure: Any = None,
                  output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0,
                  *, axes: Any = None) -> Any:
    """Grey dilation: the maximum of ``input + structure`` over the reflected footprint.

    Example:
        >>> import numpy as np
        >>> grey_dilation(np.array([3.0, 1.0, 2.0, 5.0]), size=2).tolist()
        [3.0, 2.0, 5.0, 5.0]
    """
    if not traced(input):
        return _nd.grey_dilation(input, size, footprint, structure, output, mode, cval, origin,
                                 **axes_given(axes))
    x = asarray(input)
    axes_, fp, st = footprint_of(x, size, footprint, structure, axes)
    flip = (slice(None, None, -1),) * fp.ndim
    fp, st = fp[flip], (None if st is None else st[flip])
    origins = [-int(o) - (1 - s % 2) for o, s in zip(per_axis(origin, fp.ndim, "origin"),
                                                      fp.shape)]
    x, picked = selected(x, fp, mode, cval, origins, axes_, None, st, 1.0)
    return finish(np.max(picked, axis=-1), x, output)


def _morphology(name, input, size, footprint, structure, output, mode, cval, origin, axes):
    """The composite morphology operation ``name`` (SciPy's own for a plain array)."""
    if not traced(input):
        return getattr(_nd, name)(input, size, footprint, structure, output, mode, cval, origin,
                                  **axes_given(axes))
    args = (size, footprint, structure, None, mode, cval, origin)
    if name in ("grey_opening", "white_tophat"):
        opened = grey_dilation(grey_erosion(input, *args, axes=axes), *args, axes=axes)
        out = opened if name == "grey_opening" else input - opened
    elif name in ("grey_closing", "black_tophat"):
        closed = grey_erosion(grey_dilation(input, *args, axes=axes), *args, axes=axes)
        out = closed if name == "grey_closing" else closed - input
    else:
        dilated = grey_dilation(input, *args, axes=axes)
        eroded = grey_erosion(input, *args, axes=axes)
        out = dilated - eroded if name == "morphological_gradient" else \
            dilated + eroded - 2 * input
    return finish(out, asarray(input), output)


def grey_opening(input: Any, size: Any = None, footprint: Any = None, structure: Any = None,
                 output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0,
                 *, axes: Any = None) -> Any:
    """Grey opening: erosion, then dilation.

    Example:
        >>> import numpy as np
        >>> grey_opening(np.array([3.0, 1.0, 2.0, 5.0]), size=2).tolist()
        [3.0, 1.0, 2.0, 2.0]
    """
    return _morphology("grey_opening", input, size, footprint, structure, output, mode, cval,
                       origin, axes)


def grey_closing(input: Any, size: Any = None, footprint: Any = None, structure: Any = None,
                 output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0,
                 *, axes: Any = None) -> Any:
    """Grey closing: dilation, then erosion.

    Example:
        >>> import numpy as np
        >>> grey_closing(np.array([3.0, 1.0, 2.0, 5.0]), size=2).tolist()
        [3.0, 2.0, 2.0, 5.0]
    """
    return _morphology("grey_closing", input, size, footprint, structure, output, mode, cval,
                       origin, axes)


def morphological_gradient(input: Any, size: Any = None, footprint: Any = None,
                           structure: Any = None, output: Any = None, mode: str = "reflect",
                           cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """Dilation minus erosion.

    Example:
        >>> import numpy as np
        >>> morphological_gradient(np.array([3.0, 1.0, 2.0, 5.0]), size=3).tolist()
        [2.0, 2.0, 4.0, 3.0]
    """
    return _morphology("morphological_gradient", input, size, footprint, structure, output,
                       mode, cval, origin, axes)


def morphological_laplace(input: Any, size: Any = None, footprint: Any = None,
                          structure: Any = None, output: Any = None, mode: str = "reflect",
                          cval: float = 0.0, origin: Any = 0, *, axes: Any = None) -> Any:
    """Dilation plus erosion minus twice the input.

    Example:
        >>> import numpy as np
        >>> morphological_laplace(np.array([3.0, 1.0, 2.0, 5.0]), size=3).tolist()
        [-2.0, 2.0, 2.0, -3.0]
    """
    return _morphology("morphological_laplace", input, size, footprint, structure, output,
                       mode, cval, origin, axes)


def white_tophat(input: Any, size: Any = None, footprint: Any = None, structure: Any = None,
                 output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0,
                 *, axes: Any = None) -> Any:
    """The input minus its grey opening.

    Example:
        >>> import numpy as np
        >>> white_tophat(np.array([3.0, 1.0, 2.0, 5.0]), size=2).tolist()
        [0.0, 0.0, 0.0, 3.0]
    """
    return _morphology("white_tophat", input, size, footprint, structure, output, mode, cval,
                       origin, axes)


def black_tophat(input: Any, size: Any = None, footprint: Any = None, structure: Any = None,
                 output: Any = None, mode: str = "reflect", cval: float = 0.0, origin: Any = 0,
                 *, axes: Any = None) -> Any:
    """The grey closing minus the input.

    Example:
        >>> import numpy as np
        >>> black_tophat(np.array([3.0, 1.0, 2.0, 5.0]), size=2).tolist()
        [0.0, 1.0, 0.0, 0.0]
    """
    return _morphology("black_tophat", input, size, footprint, structure, output, mode, cval,
                       origin, axes)

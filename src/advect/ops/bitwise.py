"""Integer and bit operations: integer-valued, so their derivative is zero.

Their abstract rules follow NumPy's ufunc type resolution, which rejects floating-point operands
with a ``TypeError`` naming the ufunc.
"""

from __future__ import annotations

import numpy as np

from ..core import Op
from .elementwise import numpy_impl, ufunc_abstract


def _integer_op(name, ufunc, impl):
    return Op(name, abstract=ufunc_abstract(ufunc), impl=impl, nondiff=True, elementwise=True)


bitwise_and = _integer_op("bitwise_and", np.bitwise_and, lambda xp, x, y: xp.bitwise_and(x, y))
bitwise_or = _integer_op("bitwise_or", np.bitwise_or, lambda xp, x, y: xp.bitwise_or(x, y))
bitwise_xor = _integer_op("bitwise_xor", np.bitwise_xor, lambda xp, x, y: xp.bitwise_xor(x, y))
bitwise_invert = _integer_op("bitwise_invert", np.invert, lambda xp, x: xp.bitwise_invert(x))
bitwise_left_shift = _integer_op("bitwise_left_shift", np.left_shift,
                                 lambda xp, x, y: xp.bitwise_left_shift(x, y))
bitwise_right_shift = _integer_op("bitwise_right_shift", np.right_shift,
                                  lambda xp, x, y: xp.bitwise_right_shift(x, y))
bitwise_count = _integer_op("bitwise_count", np.bitwise_count, numpy_impl("bitwise_count"))
gcd = _integer_op("gcd", np.gcd, numpy_impl("gcd"))
lcm = _integer_op("lcm", np.lcm, numpy_impl("lcm"))

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]

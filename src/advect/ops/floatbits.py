"""Floating-point decomposition: ldexp, frexp, modf, nextafter, spacing.

``ldexp(x, e) = x * 2**e`` is linear in ``x``; the mantissa of ``frexp`` and the fractional part
of ``modf`` move with ``x`` (the exponent and integer part are locally constant);
``nextafter(x, y)`` is ``x`` moved by one unit in the last place, so its derivative in ``x`` is 1.
"""

from __future__ import annotations

import numpy as np

from ..core import Op
from ..dtypes import aval_of
from ._rules import fit, unbroadcast
from .elementwise import negative, numpy_impl, ufunc_abstract


def _ldexp_jvp(primals, tangents, out):
    (_, e), (dx, _) = primals, tangents
    return None if dx is None else fit(ldexp(dx, e), aval_of(out))


def _ldexp_transpose(ct, x, e):  # only the mantissa can be linear: the exponent is an integer
    return (unbroadcast(ldexp(ct, e), x.shape), None)


ldexp = Op("ldexp", abstract=ufunc_abstract(np.ldexp), elementwise=True,
           impl=numpy_impl("ldexp", lambda xp, x, e: x * xp.pow(2.0, xp.astype(e, x.dtype))),
           jvp=_ldexp_jvp, transpose=_ldexp_transpose)


def _frexp_jvp(primals, tangents, out):
    (dx,), (mantissa, exponent) = tangents, out
    return (fit(ldexp(dx, negative(exponent)), aval_of(mantissa)), None)


frexp = Op("frexp", abstract=ufunc_abstract(np.frexp), impl=numpy_impl("frexp"),
           jvp=_frexp_jvp, multiple_results=True, elementwise=True)


def _modf_jvp(primals, tangents, out):
    (dx,), (fraction, _) = tangents, out
    return (fit(dx, aval_of(fraction)), None)


modf = Op("modf", abstract=ufunc_abstract(np.modf),
          impl=numpy_impl("modf", lambda xp, x: (x - xp.trunc(x), xp.trunc(x))),
          jvp=_modf_jvp, multiple_results=True, elementwise=True)


def _nextafter_jvp(primals, tangents, out):
    (dx, _) = tangents
    return None if dx is None else fit(dx, aval_of(out))


nextafter = Op("nextafter", abstract=ufunc_abstract(np.nextafter), elementwise=True,
               impl=lambda xp, x, y: xp.nextafter(x, y), jvp=_nextafter_jvp)

spacing = Op("spacing", abstract=ufunc_abstract(np.spacing), impl=numpy_impl("spacing"),
             nondiff=True, elementwise=True)

__all__ = [name for name, value in globals().items() if isinstance(value, Op)]

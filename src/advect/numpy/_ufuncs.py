"""NumPy ufuncs on traced arrays: one table line per ufunc, the call keywords and the methods.

``UFUNCS`` maps every NumPy ufunc to its canonical op, or to a composite written with ops where
no single op matches (``float_power``, ``divmod``, ``vecdot``, ``matvec``, ``vecmat``). SciPy's
special functions are ufuncs too: their rows join the table the first time a ufunc misses it
while ``scipy.special`` is imported, so ``import advect`` never imports SciPy. The methods
(``reduce``, ``accumulate``, ``reduceat``, ``outer``, ``at``) live in ``_ufunc_methods``.
"""

from __future__ import annotations

import sys

import numpy as np

from .. import ops
from .._compat import present
from ..core import Tracer
from ..dtypes import aval_of
from ..errors import TracingError
from ..ops._rules import axis_last, conj, one_axis
from ._functions import numpy_scalar
from ._methods import _operand

__all__ = ["UFUNCS", "SCIPY_SPECIAL", "array_ufunc", "translation", "call_ufunc"]


# --- composites: NumPy ufuncs with no single canonical op ------------------------------------

def _float_power(x, y):
    """``x ** y`` computed in float64 (complex128 for complex operands), as NumPy does."""
    dtype = np.float_power.resolve_dtypes((aval_of(x).dtype, aval_of(y).dtype, None))[-1]
    x, y = (a if aval_of(a).dtype == dtype else np.asarray(a, dtype)
            if isinstance(a, bool | int | float | complex) else ops.astype(a, dtype=dtype.name)
            for a in (x, y))
    return ops.pow(x, y)


def _divmod(x, y):
    return ops.floor_divide(x, y), ops.remainder(x, y)


def _check_core(name, a, b, axis_a, axis_b):
    if aval_of(a).shape[axis_a] != aval_of(b).shape[axis_b]:
        raise ValueError(f"numpy.{name}: core dimensions differ: shapes {aval_of(a).shape} and "
                         f"{aval_of(b).shape}")


def _vecdot(x1, x2, axis=-1):
    """``sum(conj(x1) * x2, axis)``: the vector dot product over one axis."""
    n1, n2 = aval_of(x1).ndim, aval_of(x2).ndim
    if n1 == 0 or n2 == 0:
        raise ValueError("numpy.vecdot: both operands need at least one dimension")
    # axis names a core axis of each operand separately (a gufunc's axes=), so each moves last
    # before the loop dimensions broadcast: (4,) . (4, 3) over axis 0 is (3,)
    a1, a2 = one_axis(axis, n1), one_axis(axis, n2)
    _check_core("vecdot", x1, x2, a1, a2)
    return ops.vecdot(axis_last(x1, a1), axis_last(x2, a2))


def _matvec(x1, x2):
    """``x1 @ x2`` for a stack of matrices ``x1`` and a stack of vectors ``x2``."""
    n1, n2 = aval_of(x1).ndim, aval_of(x2).ndim
    if n1 < 2 or n2 < 1:
        raise ValueError("numpy.matvec: needs a matrix (ndim >= 2) and a vector (ndim >= 1)")
    _check_core("matvec", x1, x2, -1, -1)
    column = ops.matmul(x1, ops.expand_dims(x2, axes=(n2,)))
    return ops.squeeze(column, axes=(aval_of(column).ndim - 1,))


def _vecmat(x1, x2):
    """``conj(x1) @ x2`` for a stack of vectors ``x1`` and a stack of matrices ``x2``."""
    n1, n2 = aval_of(x1).ndim, aval_of(x2).ndim
    if n1 < 1 or n2 < 2:
        raise ValueError("numpy.vecmat: needs a vector (ndim >= 1) and a matrix (ndim >= 2)")
    _check_core("vecmat", x1, x2, -1, -2)
    row = ops.matmul(ops.expand_dims(conj(x1), axes=(n1 - 1,)), x2)
    return ops.squeeze(row, axes=(aval_of(row).ndim - 2,))


def _rounding(ufunc, op):
    """``op`` with integer and bool operands first cast to the dtype the running NumPy's
    ``ufunc`` gives them: NumPy 2.0 rounds integers to floats (float16 for int8), later
    releases keep the integer dtype, which the op itself does (as the Array API says)."""
    targets: dict = {}

    def rounded(x):
        dtype = aval_of(x).dtype
        if dtype.kind in "biu":
            target = targets.get(dtype)
            if target is None:
                target = targets[dtype] = ufunc(np.zeros((), dtype)).dtype
            if target != dtype:
                x = ops.astype(x, dtype=target.name)
        return op(x)
    rounded.__name__ = ufunc.__name__
    rounded.nondiff = op.nondiff  # a zero derivative, as the op's (the support catalog reads it)
    return rounded


UFUNCS = {
    # arithmetic
    np.add: ops.add, np.subtract: ops.subtract, np.multiply: ops.multiply,
    np.divide: ops.divide, np.negative: ops.negative, np.positive: ops.positive,
    np.power: ops.pow, np.float_power: _float_power, np.square: ops.square,
    np.sqrt: ops.sqrt, np.cbrt: ops.cbrt, np.reciprocal: ops.reciprocal,
    np.absolute: ops.abs, np.fabs: ops.fabs, np.sign: ops.sign,
    np.remainder: ops.remainder, np.fmod: ops.fmod, np.floor_divide: ops.floor_divide,
    np.divmod: _divmod, np.heaviside: ops.heaviside,
    # exponentials and logarithms
    np.exp: ops.exp, np.exp2: ops.exp2, np.expm1: ops.expm1, np.log: ops.log,
    np.log2: ops.log2, np.log10: ops.log10, np.log1p: ops.log1p, np.logaddexp: ops.logaddexp,
    np.logaddexp2: ops.logaddexp2,
    # trigonometric and hyperbolic
    np.sin: ops.sin, np.cos: ops.cos, np.tan: ops.tan, np.arcsin: ops.asin, np.arccos: ops.acos,
    np.arctan: ops.atan, np.arctan2: ops.atan2, np.sinh: ops.sinh, np.cosh: ops.cosh,
    np.tanh: ops.tanh, np.arcsinh: ops.asinh, np.arccosh: ops.acosh, np.arctanh: ops.atanh,
    np.hypot: ops.hypot, np.deg2rad: ops.deg2rad, np.rad2deg: ops.rad2deg,
    np.radians: ops.deg2rad, np.degrees: ops.rad2deg,
    # selection and sign
    np.maximum: ops.maximum, np.minimum: ops.minimum, np.fmax: ops.fmax, np.fmin: ops.fmin,
    np.copysign: ops.copysign,
    # floating-point decomposition
    np.ldexp: ops.ldexp, np.frexp: ops.frexp, np.modf: ops.modf, np.nextafter: ops.nextafter,
    np.spacing: ops.spacing,
    # rounding (zero derivative)
    np.floor: _rounding(np.floor, ops.floor), np.ceil: _rounding(np.ceil, ops.ceil),
    np.trunc: _rounding(np.trunc, ops.trunc), np.rint: ops.rint,
    # comparisons, logic and classification (nondifferentiable)
    np.equal: ops.equal, np.not_equal: ops.not_equal, np.less: ops.less,
    np.less_equal: ops.less_equal, np.greater: ops.greater, np.greater_equal: ops.greater_equal,
    np.logical_and: ops.logical_and, np.logical_or: ops.logical_or,
    np.logical_xor: ops.logical_xor, np.logical_not: ops.logical_not,
    np.isnan: ops.isnan, np.isinf: ops.isinf, np.isfinite: ops.isfinite, np.isnat: ops.isnat,
    np.signbit: ops.signbit,
    # integers and bits (nondifferentiable)
    np.bitwise_and: ops.bitwise_and, np.bitwise_or: ops.bitwise_or,
    np.bitwise_xor: ops.bitwise_xor, np.invert: ops.bitwise_invert,
    np.left_shift: ops.bitwise_left_shift, np.right_shift: ops.bitwise_right_shift,
    np.bitwise_count: ops.bitwise_count, np.gcd: ops.gcd, np.lcm: ops.lcm,
    # complex numbers and linear algebra
    np.conjugate: ops.conj, np.matmul: ops.matmul, np.vecdot: _vecdot,
}
UFUNCS.update(zip(present(np, "matvec", "vecmat"), (_matvec, _vecmat)))  # NumPy 2.2+

def _in_scipy_loop(name, op):
    """``op`` (a NumPy ufunc's op) with its operands first cast to the loop of SciPy's ufunc
    ``name``: scipy.special.cbrt has only float64 and float32 loops and picks float64 for
    int8 and float16, where np.cbrt keeps float16."""
    def call(*args):
        u = getattr(sys.modules["scipy.special"], name)
        dtypes = u.resolve_dtypes(tuple(type(a) if isinstance(a, int | float | complex)
                                        else aval_of(a).dtype for a in args) + (None,) * u.nout)
        return op(*(a if isinstance(a, int | float | complex) or aval_of(a).dtype == d
                    else ops.astype(a, dtype=d.name) for a, d in zip(args, dtypes)))
    return call


# scipy.special ufuncs by name; their rows join UFUNCS on first use (see translation)
SCIPY_SPECIAL = {
    "erf": ops.erf, "erfc": ops.erfc, "erfcx": ops.erfcx, "erfinv": ops.erfinv,
    "expit": ops.expit, "log_expit": ops.log_expit, "gammaln": ops.gammaln,
    "gamma": ops.gamma, "digamma": ops.digamma, "psi": ops.digamma, "ndtr": ops.ndtr,
    "log_ndtr": ops.log_ndtr, "ndtri": ops.ndtri, "xlogy": ops.xlogy, "xlog1py": ops.xlog1py,
    "logit": ops.logit, "entr": ops.entr, "rel_entr": ops.rel_entr, "betaln": ops.betaln,
    "i0": ops.i0, "i0e": ops.i0e, "i1": ops.i1, "i1e": ops.i1e,
    "erfcinv": ops.erfcinv, "erfi": ops.erfi, "dawsn": ops.dawsn, "wofz": ops.wofz,
    "ndtri_exp": ops.ndtri_exp, "loggamma": ops.loggamma, "beta": ops.beta, "poch": ops.poch,
    "exp10": ops.exp10, "exp2": _in_scipy_loop("exp2", ops.exp2),
    "expm1": _in_scipy_loop("expm1", ops.expm1), "log1p": _in_scipy_loop("log1p", ops.log1p),
    "cbrt": _in_scipy_loop("cbrt", ops.cbrt), "cosdg": ops.cosdg, "sindg": ops.sindg,
    "tandg": ops.tandg,
    "cotdg": ops.cotdg, "cosm1": ops.cosm1, "spence": ops.spence, "kl_div": ops.kl_div,
    "huber": ops.huber, "pseudo_huber": ops.pseudo_huber, "ellipk": ops.ellipk,
    "ellipe": ops.ellipe, "j0": ops.j0, "j1": ops.j1, "y0": ops.y0, "y1": ops.y1,
    "k0": ops.k0, "k1": ops.k1, "k0e": ops.k0e, "k1e": ops.k1e, "jv": ops.jv, "yv": ops.yv,
    "iv": ops.iv, "kv": ops.kv, "gammainc": ops.gammainc, "gammaincc": ops.gammaincc,
    "gammaincinv": ops.gammaincinv, "gammainccinv": ops.gammainccinv, "betainc": ops.betainc,
    "betaincinv": ops.betaincinv, "expi": ops.expi, "exp1": ops.exp1, "expn": ops.expn,
    "hyp2f1": ops.hyp2f1, "hyp1f1": ops.hyp1f1, "struve": ops.struve,
    "modstruve": ops.modstruve, "owens_t": ops.owens_t, "chdtr": ops.chdtr,
    "chdtrc": ops.chdtrc, "stdtr": ops.stdtr, "ellipkinc": ops.ellipkinc,
    "ellipeinc": ops.ellipeinc, "sici": ops.sici, "shichi": ops.shichi,
    "fresnel": ops.fresnel, "airy": ops.airy, "gdtr": ops.gdtr, "gdtrc": ops.gdtrc,
    "fdtr": ops.fdtr, "fdtrc": ops.fdtrc, "hyp0f1": ops.hyp0f1, "boxcox": ops.boxcox,
    "boxcox1p": ops.boxcox1p, "inv_boxcox": ops.inv_boxcox, "inv_boxcox1p": ops.inv_boxcox1p,
    "ellipj": ops.ellipj,
}
_scipy_rows_added = False


def add_scipy_rows() -> bool:
    """Key the SCIPY_SPECIAL rows by SciPy's ufunc objects in UFUNCS, once ``scipy.special`` is
    imported (by the user: Advect never imports it first); returns whether they are in."""
    global _scipy_rows_added
    if not _scipy_rows_added and "scipy.special" in sys.modules:
        special = sys.modules["scipy.special"]
        UFUNCS.update({getattr(special, name): op for name, op in SCIPY_SPECIAL.items()})
        _scipy_rows_added = True
    return _scipy_rows_added


def translation(ufunc):
    """The op or composite for ``ufunc``, or None; adds the SciPy rows on the first miss."""
    found = UFUNCS.get(ufunc)
    if found is None and not _scipy_rows_added and add_scipy_rows():
        found = UFUNCS.get(ufunc)
    return found


def _name(ufunc) -> str:
    if ufunc in _NUMPY_UFUNCS:
        return f"numpy.{ufunc.__name__}"
    special = sys.modules.get("scipy.special")
    if special is not None and getattr(special, ufunc.__name__, None) is ufunc:
        return f"scipy.special.{ufunc.__name__}"
    public = ufunc.__name__.lstrip("_")  # a private ufunc behind a SciPy function (zeta)
    if special is not None and public and callable(getattr(special, public, None)):
        return f"scipy.special.{public} (through its ufunc {ufunc.__name__!r})"
    return f"ufunc {ufunc.__name__!r}"


_NUMPY_UFUNCS = frozenset(v for v in vars(np).values() if isinstance(v, np.ufunc))

# --- the call and its keywords -----------------------------------------------------------------

def _cast(x, dtype, casting, what):
    """``x`` as ``dtype`` under NumPy's ``casting`` rule; Python scalars stay weak."""
    if _scalar(x):
        return x
    source = aval_of(x).dtype
    if source == dtype:
        return x
    if not np.can_cast(source, dtype, casting):
        raise TypeError(f"{what}: cannot cast from {source} to {dtype} with casting rule "
                        f"{casting!r}")
    return ops.astype(x, dtype=dtype.name)


def _scalar(x) -> bool:
    return isinstance(x, bool | int | float | complex)


def _fixed_loop(ufunc, args, signature, dtype, casting, what):
    """The operands cast to the loop NumPy runs for ``signature=`` or ``dtype=`` (which fixes
    every output's dtype), and the loop's output dtypes. ``ufunc.resolve_dtypes`` picks the loop
    and checks the casts, raising NumPy's own errors (no loop, a cast ``casting`` refuses)."""
    if dtype is not None:
        if signature is not None:
            raise TypeError(f"{what}: cannot specify both 'signature' and 'dtype'")
        signature = (None,) * ufunc.nin + (np.dtype(dtype),) * ufunc.nout
    elif isinstance(signature, str):  # "ff->f"
        ins, arrow, outs = signature.partition("->")
        if not arrow or len(ins) != ufunc.nin or len(outs) != ufunc.nout:
            raise ValueError(f"{what}: signature={signature!r} needs {ufunc.nin} type codes "
                             f"before '->' and {ufunc.nout} after it")
        signature = tuple(np.dtype(c) for c in ins + outs)
    else:
        signature = tuple(None if s is None else np.dtype(s) for s in signature)
    operands = tuple(np.dtype(bool) if type(a) is bool else type(a) if _scalar(a)
                     else aval_of(a).dtype for a in args)
    loop = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout, signature=signature,
                                casting=casting)
    args = [_loop_scalar(a, d, casting) if _scalar(a) else _cast(a, d, "unsafe", what)
            for a, d in zip(args, loop)]
    return args, loop[ufunc.nin:]


def _loop_scalar(x, dtype, casting):
    """A Python scalar operand converted to its loop's dtype as NumPy converts it: an int must
    fit (``OverflowError``), a complex needs a complex loop (``TypeError``) unless ``casting``
    is "unsafe", which casts it."""
    if type(x) is int or casting != "unsafe":
        return np.array(x, dtype=dtype)[()]
    with np.errstate(invalid="ignore"):
        return np.array(x).astype(dtype)[()]


def _finite_at(ufunc, v) -> bool:
    try:
        with np.errstate(all="ignore"):
            return bool(np.all([np.isfinite(r) for r in np.atleast_1d(ufunc(*(v,) * ufunc.nin))]))
    except TypeError:  # no floating-point loop (ldexp's exponent): any point will do
        return True


def _masked_inputs(ufunc, args, where):
    """The operands with the entries ``where`` masks out replaced by an interior point of the
    ufunc's domain: NumPy never computes those entries, and computing them at a singularity
    (``np.log(x, out=y, where=x > 0)`` at 0) would turn reverse mode's ``0 * inf`` into NaN."""
    if ufunc.signature is not None:
        return args
    safe = next((v for v in (2.0, 0.5, 1.5) if _finite_at(ufunc, v)), 2.0)
    return [ops.where(where, a, safe) if isinstance(a, Tracer) and aval_of(a).dtype.kind in "fc"
            else a for a in args]


def write_out(out, results, casting, what):
    """Write ``results`` into the ``out`` tuple of owned tracers (functionalized: each one is
    repointed to its new value); returns what NumPy returns, the ``out`` arrays."""
    from ._mutation import assign_inplace

    several = isinstance(results, tuple)
    results = results if several else (results,)
    if len(out) != len(results):
        raise ValueError(f"{what}: out= needs {len(results)} arrays, got {len(out)}")
    written = []
    for target, value in zip(out, results):
        if target is None:
            written.append(value)
            continue
        if not isinstance(target, Tracer):
            assign_inplace(target, value, what)  # raises: a traced value into a plain array
        value = _cast(value, aval_of(target).dtype, casting, what)
        if not (isinstance(value, Tracer) and value._trace is target._trace) or \
                aval_of(value).shape != target.shape or aval_of(value).weak:
            # joins target's trace, broadcast to it (and strong: np.sin(0.5, out=buf) is buf)
            value = ops.where(True, value, target)
        written.append(assign_inplace(target, value, what))
    return tuple(written) if several else written[0]


def where_mask(where, what):
    """A ``where=`` mask as NumPy reads it: an array must be boolean (NumPy casts it with the
    'safe' rule); Python values, NumPy scalars and lists are converted (None is False)."""
    if isinstance(where, np.ndarray | Tracer):
        if aval_of(where).dtype != np.bool_:
            raise TypeError(f"{what}: Cannot cast array data from {aval_of(where).dtype!r} to "
                            "dtype('bool') according to the rule 'safe': a where= array must "
                            "be boolean (compare it, as where=mask != 0)")
        return where
    where = _operand(False if where is None else where)
    if isinstance(where, Tracer):
        return where if aval_of(where).dtype == np.bool_ else ops.not_equal(where, 0)
    return np.asarray(where, dtype=bool)


def _stand_in(x, target=False):
    """A tiny NumPy value standing for operand ``x`` in :func:`_ask_numpy`: a Python scalar
    (or a traced one, unless it is an out= ``target``) stays one, an array is all ones of its
    dtype and number of axes."""
    if x is None or _scalar(x):
        return x
    aval = aval_of(x)
    if aval.weak and not target:
        return aval.dtype.type(0).item()
    return np.ones((1,) * len(aval.shape), aval.dtype)


def _ask_numpy(ufunc, args, out, kwargs):
    """NumPy's own checks of a call's keywords (casting=, order=, subok=, axes=, the casts of
    the inputs and into out=), run by NumPy on one-element stand-ins of the operands, so a
    refusal is NumPy's, of NumPy's class, and an acceptance costs microseconds."""
    # (out=None said outright: NumPy's warning that where= leaves entries unset is not ours)
    kwargs["out"] = (None,) * ufunc.nout if out is None else tuple(_stand_in(o, True)
                                                                   for o in out)
    with np.errstate(all="ignore"):
        ufunc(*(_stand_in(a) for a in args), **kwargs)


def _gufunc_axes(ufunc, found, args, axes, what):
    """A gufunc (matmul, vecdot, ...) called with ``axes=`` (already checked by NumPy): each
    operand's core axes moved last, the op, and the result's core axes moved into place."""
    ins, outs = ufunc.signature.replace(" ", "").split("->")
    specs = [s.split(",") if s else [] for s in ins[1:-1].split("),(")]
    out_spec = outs[1:-1].split(",") if outs != "()" else []
    missing = set()
    for a, spec in zip(args, specs):  # an optional core dim (n?) is missing from a 1-d operand
        if spec and aval_of(a).ndim < len(spec):
            missing.update(d for d in spec if d.endswith("?"))
    moved = []
    for k, (a, spec) in enumerate(zip(args, specs)):
        core = [d for d in spec if d not in missing]
        given = axes[k]
        given = (given,) if not isinstance(given, tuple | list) else tuple(given)
        nd = aval_of(a).ndim
        given = tuple(one_axis(g, nd) for g in given)
        moved.append(ops.permute_dims(a, axes=(*(d for d in range(nd) if d not in given),
                                               *given)) if given else a)
    result = found(*moved)
    core = [d for d in out_spec if d not in missing]
    if not core or len(axes) <= len(args):
        return result
    given = axes[len(args)]
    given = (given,) if not isinstance(given, tuple | list) else tuple(given)
    nd = aval_of(result).ndim
    target = tuple(one_axis(g, nd) for g in given)
    order = [None] * nd
    for src, dst in zip(range(nd - len(target), nd), target):
        order[dst] = src
    rest = iter(range(nd - len(target)))
    return ops.permute_dims(result, axes=tuple(next(rest) if o is None else o for o in order))


def call_ufunc(ufunc, inputs, kwargs):
    """``ufunc(*inputs, **kwargs)`` on traced arrays."""
    found = translation(ufunc)
    what = _name(ufunc)
    if found is None:
        raise TracingError(f"{what} is not supported on traced arrays; see "
                           "advect.support_catalog() for the supported ufuncs")
    asked = dict(kwargs)  # NumPy checks these keywords itself (see _ask_numpy)
    out = kwargs.pop("out", None)
    if out is not None and not isinstance(out, tuple):
        out = (out,)
    where = kwargs.pop("where", True)
    if where is not True:
        where = where_mask(where, what)
        asked["where"] = _stand_in(where)
    casting = kwargs.pop("casting", "same_kind")
    dtype = kwargs.pop("dtype", None)
    signature = kwargs.pop("signature", None)
    kwargs.pop("subok", None)
    kwargs.pop("order", None)  # memory layout: traced values have none
    gufunc_kwargs = {}
    if ufunc is np.vecdot and "axis" in kwargs:
        gufunc_kwargs["axis"] = kwargs.pop("axis")
    axes = kwargs.pop("axes", None) if ufunc.signature is not None else None
    if kwargs:
        raise TypeError(f"{what}: unsupported keywords {sorted(kwargs)} on traced arrays")
    args = [_operand(a) for a in inputs]
    if asked:
        _ask_numpy(ufunc, args, out, asked)
    loop = None
    if signature is not None or dtype is not None:
        args, loop = _fixed_loop(ufunc, args, signature, dtype, casting, what)
    if axes is not None:
        result = _gufunc_axes(ufunc, found, args, axes, what)
    else:
        result = found(*(args if where is True else _masked_inputs(ufunc, args, where)),
                       **gufunc_kwargs)
    parts = result if isinstance(result, tuple) else (result,)
    if loop is not None:  # a composite (float_power's float64) may compute wider than the loop
        parts = tuple(_cast(r, d, "unsafe", what) for r, d in zip(parts, loop))
    if where is not True:
        # NumPy leaves the masked-off entries of a fresh result uninitialized: Advect makes
        # them zeros (with zero derivatives), any value being what NumPy may return there
        targets = out if out is not None else (None,) * len(parts)
        # (a fresh 0-d result is a NumPy scalar, as NumPy gives)
        parts = tuple(numpy_scalar(ops.where(where, r, ops.zeros_like(r))) if o is None
                      else ops.where(where, _cast(r, aval_of(o).dtype, casting, what), o)
                      for r, o in zip(parts, targets))
    result = parts if isinstance(result, tuple) else parts[0]
    if out is not None:
        return write_out(out, result, casting, what)
    return result


def array_ufunc(ufunc, method, inputs, kwargs):
    """``ufunc.method(*inputs, **kwargs)`` on traced arrays (``ArrayTracer.__array_ufunc__``
    takes plain calls of translated ufuncs on arrays itself)."""
    if method == "__call__":
        return call_ufunc(ufunc, inputs, dict(kwargs))
    from . import _ufunc_methods
    return _ufunc_methods.call_method(ufunc, method, inputs, dict(kwargs))

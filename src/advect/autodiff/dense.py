"""The dense derivatives: jacobian, hessian, hessian_diag and hvp, built from the transforms
in api.py (one reverse or forward sweep per basis vector)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from .. import ops
from ..dtypes import aval_of
from ..errors import NoJVPError
from ..providers import on_provider_of
from ..pytree import tree_flatten, tree_unflatten
from .api import _is_array, _linearize_leaves, _Selection, grad, jvp, value_and_grad
from .maps import input_type, zero_tangent
from .reverse import backward, forward

__all__ = ["jacobian", "hessian", "hessian_diag", "hvp"]


def _basis(primal):
    """The unit vectors of ``primal``'s space, in its dtype and provider."""
    aval = aval_of(primal)
    size = aval.size
    for i in range(size):
        e = np.zeros(size, aval.dtype)
        e[i] = 1
        yield on_provider_of(primal, e.reshape(aval.shape))


def _zeros(like, shape):
    """Zeros of ``shape`` in ``like``'s provider and dtype (a Python bool's is bool)."""
    return ops.zeros_like(like, shape=tuple(shape), dtype=aval_of(like).dtype.name)


def _in_dtype(block, primal):
    """A Jacobian block in its input's dtype: the derivative with respect to an input has that
    input's dtype (float32 in, float32 out), whichever mode computed it."""
    dtype = aval_of(primal).dtype
    return block if aval_of(block).dtype == dtype else ops.astype(block, dtype=dtype.name)


def jacobian(f: Callable, argnums: int | Sequence[int] | None = None, *,
             argnames: str | Sequence[str] | None = None):
    """Return a function computing the dense Jacobian of ``f``.

    Each block has shape ``out.shape + in.shape``; the result is the output pytree with each
    leaf replaced by the selection's structure (like ``grad``). Forward mode is used when the
    inputs are smaller than the outputs, reverse mode otherwise (and for complex inputs, whose
    rows follow ``grad``'s convention).

    Example:
        >>> import numpy as np, advect as ad
        >>> ad.jacobian(lambda x: x ** 2)(np.array([1.0, 2.0]))
        array([[2., 0.],
               [0., 4.]])
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        sel = _Selection(args, kwargs, argnums, argnames, "jacobian")
        outs, out_vars, out_def, tape, in_vars = _linearize_leaves(sel.call(f), sel)
        for p in outs:
            if aval_of(p).dtype.kind == "c":
                raise ValueError("jacobian needs real outputs; use jvp or vjp for complex ones")
        n_in = sum(aval_of(p).size for p in sel.primals)
        n_out = sum(aval_of(p).size for p in outs)
        complex_in = any(aval_of(p).dtype.kind == "c" for p in sel.primals)
        blocks = None
        if n_in < n_out and not complex_in:
            try:
                blocks = _jac_forward(tape, in_vars, out_vars, sel.primals, outs)
            except NoJVPError:  # a primitive with only a transpose rule: reverse mode serves
                pass
        if blocks is None:
            blocks = _jac_reverse(tape, in_vars, out_vars, sel.primals, outs)
        # a 0-d block has the 0-d type grad gives its input (a NumPy scalar's is a NumPy scalar)
        per_out = [sel.unflatten(row if aval_of(o).shape else [
            input_type(b, p) for b, p in zip(row, sel.primals)], _zero_block(o))
            for row, o in zip(blocks, outs)]
        return tree_unflatten(out_def, per_out)

    return wrapped


def _zero_block(out):
    """The Jacobian block of ``out`` for an integer or bool input: zeros in its dtype."""
    def fill(leaf):
        if not _is_array(leaf) and type(leaf) is not bool:
            return None
        aval = aval_of(leaf)
        return _zeros(leaf, (*aval_of(out).shape, *aval.shape))
    return fill


def _stack_rows(rows, lead_shape):
    """Stack per-basis-vector results into a block of shape ``lead_shape + row.shape``."""
    stacked = ops.concat(*(ops.expand_dims(r, axes=(0,)) for r in rows), axis=0)
    return ops.reshape(stacked, shape=(*lead_shape, *aval_of(rows[0]).shape))


def _jac_reverse(tape, in_vars, out_vars, primals, outs):
    blocks = []
    for o, var in zip(outs, out_vars):
        o_shape = aval_of(o).shape
        per_in = [[] for _ in primals]
        for e in _basis(o) if var is not None else ():
            result = backward(tape, [(var, e)], keep=True)
            for k, (v, p) in enumerate(zip(in_vars, primals)):
                g = result.get(v.index)
                per_in[k].append(ops.zeros_like(p) if g is None else g)
        blocks.append([_in_dtype(_stack_rows(rows, o_shape), p) if rows else
                       _zeros(p, (*o_shape, *aval_of(p).shape)) for rows, p in zip(per_in,
                                                                                   primals)])
    return blocks


def _jac_forward(tape, in_vars, out_vars, primals, outs):
    cols = [[] for _ in outs]  # cols[j][k] = list of output-j tangents for input-k basis
    for k, p in enumerate(primals):
        for j in range(len(outs)):
            cols[j].append([])
        for e in _basis(p):
            tangents = [e if i == k else None for i in range(len(primals))]
            values = forward(tape, in_vars, tangents)
            for j, (o, var) in enumerate(zip(outs, out_vars)):
                t = values.get(var.index) if var is not None else None
                cols[j][k].append(zero_tangent(o) if t is None else t)
    blocks = []
    for j, o in enumerate(outs):
        row = []
        for k, p in enumerate(primals):
            in_shape, o_shape = aval_of(p).shape, aval_of(o).shape
            if not cols[j][k]:
                row.append(_zeros(p, (*o_shape, *in_shape)))
                continue
            stacked = _in_dtype(_stack_rows(cols[j][k], in_shape), p)  # in.shape + out.shape
            n_in, n_out = len(in_shape), len(o_shape)
            perm = (*range(n_in, n_in + n_out), *range(n_in))
            row.append(ops.permute_dims(stacked, axes=perm) if n_in and n_out else stacked)
        blocks.append(row)
    return blocks


def hessian(f: Callable, argnums: int | Sequence[int] = 0):
    """Dense Hessian of a real scalar ``f`` (tuple ``argnums`` gives nested blocks).

    Example:
        >>> import numpy as np, advect as ad
        >>> ad.hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
        array([[ 6.,  0.],
               [ 0., 12.]])
    """
    gradient = jacobian(grad(f, argnums), argnums)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        _refuse_complex(_Selection(args, kwargs, argnums, None, "hessian"), "hessian")
        return gradient(*args, **kwargs)

    return wrapped


def _refuse_complex(sel, where: str) -> None:
    if any(aval_of(p).dtype.kind == "c" for p in sel.primals):
        raise ValueError(f"{where} needs real inputs: second derivatives in a complex input's "
                         "real and imaginary parts do not fit one complex entry; "
                         "differentiate with respect to z.real and z.imag as real arrays, "
                         "or use hvp")


def hessian_diag(f: Callable, argnums: int | Sequence[int] = 0):
    """The exact diagonal of the Hessian of a real scalar ``f``, in the input's structure.

    One linearization of the gradient, then one forward pass over its tape per entry; the
    Hessian itself is never formed. A tuple ``argnums`` gives a tuple of diagonals (the
    diagonal of each input's own block).

    Example:
        >>> import numpy as np, advect as ad
        >>> ad.hessian_diag(lambda x: np.sum(x ** 3) + x[0] * x[1])(np.array([1.0, 2.0]))
        array([ 6., 12.])
        >>> ad.hessian_diag(lambda x, y: np.sum(x ** 2 * y), argnums=(0, 1))(
        ...     np.array([1.0, 2.0]), np.array([3.0, 4.0]))
        (array([6., 8.]), array([0., 0.]))
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        sel = _Selection(args, kwargs, argnums, None, "hessian_diag")
        _refuse_complex(sel, "hessian_diag")
        n = len(sel.primals)
        gradient = grad(sel.call(f), tuple(range(n)))
        _, out_vars, _, tape, in_vars = _linearize_leaves(gradient, sel)
        diag = []
        for k, (p, var) in enumerate(zip(sel.primals, out_vars)):
            aval = aval_of(p)
            entries = []
            for j, e in enumerate(_basis(p) if var is not None else ()):
                hv = forward(tape, in_vars, [e if i == k else None for i in range(n)])
                hv = hv.get(var.index)
                # the entry itself, not sum(hv * e): an inf elsewhere in the column (0 * inf)
                # must not make a finite diagonal entry NaN
                index = tuple(int(q) for q in np.unravel_index(j, aval.shape))
                entries.append(_zeros(p, ()) if hv is None else ops.gather(hv, index=index)
                               if index else hv)
            diag.append(_in_dtype(_stack_rows(entries, aval.shape), p) if entries else
                        _zeros(p, aval.shape))
        return sel.unflatten([input_type(d, p) for d, p in zip(diag, sel.primals)])

    return wrapped


def hvp(f: Callable, argnums: int | Sequence[int] = 0):
    """Return ``hvp_f(*args, vectors=..., **kw) -> (value, H @ vectors)`` without forming H.

    Example:
        >>> import numpy as np, advect as ad
        >>> value, hv = ad.hvp(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]),
        ...                                               vectors=np.array([1.0, 1.0]))
        >>> hv
        array([ 6., 12.])
    """

    @functools.wraps(f)
    def wrapped(*args, vectors, **kwargs):
        g = functools.partial(f, **kwargs) if kwargs else f  # a keyword named `tangents` too
        (value, grads), (_, hv) = jvp(value_and_grad(g, argnums), argnums)(
            *args, tangents=vectors)
        hv_leaves, treedef = tree_flatten(hv)
        # an integer or bool input's entries are zeros of its own dtype, as its gradient's
        return value, tree_unflatten(treedef, [
            h if not _is_array(gr) or aval_of(gr).dtype.kind in "fc" else ops.zeros_like(gr)
            for h, gr in zip(hv_leaves, tree_flatten(grads)[0])])

    return wrapped



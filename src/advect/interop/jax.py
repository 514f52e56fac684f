"""JAX bridge: an Advect function as one ``jax.custom_vjp`` operation, also under ``jax.jit``.

``wrap(f)`` returns a function of JAX (or NumPy) arrays in positional and keyword pytrees; other
leaves are constants. The arrays reach ``f`` as NumPy arrays of the same dtype through
``jax.pure_callback``, so the wrapped function works eagerly, under ``jit`` and under ``grad``.
A call differentiated by JAX runs ``f`` once under ``advect.vjp``; the backward pass applies that
recorded pullback (``f`` is not rerun). The backward is itself a ``custom_vjp`` operation built
from an Advect function, so ``jax.grad(jax.grad(...))`` and deeper orders work (each higher
order reruns ``f`` inside its own pullback).

Result shapes: a callback needs its output shapes before it runs. They come from
``result_shape_dtypes`` (a pytree of ``jax.ShapeDtypeStruct`` matching ``f``'s output), from a
wrapped ``StagedProgram``'s ``output_specs``, or else from staging ``f`` once per call
signature (abstract tracing, no data), which needs ``f`` to be stageable.

Complex numbers: JAX's cotangents are the conjugates of Advect's. JAX documents
``grad(f)(z)`` of a real ``f`` as ``df/dx - i df/dy`` (so ``grad(abs(z)**2) == 2*conj(z)``),
and its VJPs transport covectors in that convention; Advect's real adjoint gives
``df/dx + i df/dy``. The bridge conjugates complex cotangents on the way in and out.

Float64 needs ``jax.config.update("jax_enable_x64", True)``, as everywhere in JAX: without
it the bridge gives 64-bit results as JAX gives every 64-bit array, in 32 bits (an
``argmax`` comes back int32, a float64 result float32).

Example:
    >>> import numpy as np, jax, jax.numpy as jnp
    >>> from advect.interop.jax import wrap
    >>> f = wrap(lambda x: np.sum(np.sin(x) ** 2))
    >>> x = jnp.array([0.5, 1.0])
    >>> bool(jnp.allclose(jax.jit(jax.grad(f))(x), jnp.sin(2 * x)))
    True
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from ..pytree import tree_flatten, tree_unflatten
from ..staging.program import StagedProgram, stage
from ..staging.specs import ArraySpec, check_call, is_spec
from . import Bridge

__all__ = ["wrap"]

_TOKEN = jax.ShapeDtypeStruct((), np.int32)


def _is_operand(leaf) -> bool:
    return isinstance(leaf, jax.Array | np.ndarray | np.generic)


def _struct(x) -> jax.ShapeDtypeStruct:
    """``x``'s shape and dtype as JAX holds them (32 bits for 64 without jax_enable_x64)."""
    return jax.ShapeDtypeStruct(tuple(x.shape), jax.dtypes.canonicalize_dtype(x.dtype))


def _as_structs(arrays, structs) -> list:
    """Callback results in the dtypes their structs declare (JAX's, see ``_struct``); a result
    whose shape or dtype is not the declared one (a wrong ``result_shape_dtypes``) is refused,
    not converted."""
    for k, (a, s) in enumerate(zip(arrays, structs)):
        if np.shape(a) != tuple(s.shape) or _struct(np.asarray(a)).dtype != s.dtype:
            raise ValueError(f"advect.interop.jax: output leaf {k} of the function is "
                             f"{np.asarray(a).dtype}{list(np.shape(a))}, but its declared "
                             f"result (result_shape_dtypes=) is {s.dtype}{list(s.shape)}")
    return [np.asarray(a, dtype=s.dtype) for a, s in zip(arrays, structs)]


def _inexact(x) -> bool:
    return np.dtype(x.dtype).kind in "fc"


def _zero_cotangent(x):
    return np.zeros(tuple(x.shape), dtype=jax.dtypes.float0)


class _Operation:
    """The JAX operations of one bridge: ``apply`` (a custom_vjp of the operands) and what its
    derivative needs. Pending pullbacks wait in ``records`` under an int32 token."""

    def __init__(self, bridge: Bridge, in_structs: list, out_structs: list):
        self.bridge, self.in_structs, self.out_structs = bridge, in_structs, out_structs
        self.records: dict[int, Any] = {}
        self.lock = threading.Lock()
        self.tokens = itertools.count()
        self._vjp_operation: _Operation | None = None

        @jax.custom_vjp
        def apply(*xs):
            return list(jax.pure_callback(self._run, self.out_structs, *xs,
                                          vmap_method="sequential"))

        def apply_fwd(*xs):
            *outs, token = recorded(*xs)
            return outs, (xs, token)

        def apply_bwd(res, cts):
            xs, token = res
            cts = tuple(c if _inexact(s) else np.zeros(s.shape, s.dtype)  # not float0
                        for c, s in zip(cts, self.out_structs))
            return tuple(backward(token, xs, cts))

        apply.defvjp(apply_fwd, apply_bwd)

        @jax.custom_vjp
        def recorded(*xs):  # the forward pass that keeps its pullback, and the token
            return list(jax.pure_callback(self._record, [*self.out_structs, _TOKEN], *xs,
                                          vmap_method="sequential"))

        def recorded_fwd(*xs):  # recorded differentiated again (second order and above)
            _, pullback = jax.vjp(lambda *a: tuple(apply(*a)), *xs)
            return recorded(*xs), pullback

        def recorded_bwd(pullback, cts):
            return pullback(tuple(cts[:-1]))

        recorded.defvjp(recorded_fwd, recorded_bwd)

        @jax.custom_vjp
        def backward(token, xs, cts):  # first order: the recorded pullback, f is not rerun
            grads = jax.pure_callback(self._backward, self._grad_structs(), token, *xs, *cts,
                                      vmap_method="expand_dims")
            return self._with_zeros(xs, grads)

        def backward_fwd(token, xs, cts):  # the backward differentiated: an Advect vjp
            jax.debug.callback(self._discard, token)
            vjp_apply = self.vjp_operation().apply
            out, pullback = jax.vjp(lambda *a: tuple(vjp_apply(*a)), *xs, *cts)
            return self._with_zeros(xs, [o for o, x in zip(out, xs) if _inexact(x)]), (
                pullback, token)

        def backward_bwd(res, gs):
            pullback, token = res
            n = len(self.in_structs)
            gs = [g for g, x in zip(gs, self.in_structs) if _inexact(x)]
            grads = pullback(tuple(_pad(gs, self.in_structs)))  # float0 for integer outputs
            return (_zero_cotangent(token), tuple(grads[:n]), tuple(grads[n:]))

        backward.defvjp(backward_fwd, backward_bwd)
        self.apply = apply

    # -- host callbacks (NumPy in, NumPy out) --

    def _run(self, *xs):
        return _as_structs(self.bridge.run([np.asarray(x) for x in xs]), self.out_structs)

    def _record(self, *xs):
        outs, record = self.bridge.forward([np.asarray(x) for x in xs])
        with self.lock:
            token = next(self.tokens) % (1 << 31)
            self.records[token] = record
        return [*_as_structs(outs, self.out_structs), np.int32(token)]

    def _take(self, token, xs):
        """The record of ``token``'s forward pass; once its pullback was applied (JAX lets a
        ``jax.vjp`` pullback be called again), the forward pass of ``xs`` is run anew."""
        with self.lock:
            record = self.records.pop(int(token), None)
        if record is None:
            record = self.bridge.forward([np.asarray(x) for x in xs])[1]
        return record

    def _backward(self, token, *args):
        n = len(self.in_structs)
        xs, cts = args[:n], args[n:]
        token = np.asarray(token)
        if token.ndim == 0:
            return self._inexact_grads(self.bridge.backward(self._take(token, xs), list(cts)))
        # under vmap: a leading batch axis (size 1 where that operand is not batched), as for
        # jax.jacrev (one forward pass, a batch of cotangents) or vmap(grad(f))
        size = max([token.shape[0], *(np.shape(c)[0] for c in args)])
        records: dict = {}
        rows = []
        for i in range(size):
            t = int(token[i if token.shape[0] > 1 else 0])
            row_xs = [x[i if np.shape(x)[0] > 1 else 0] for x in xs]
            if t not in records:
                records[t] = self._take(t, row_xs)
            row = [c[i if np.shape(c)[0] > 1 else 0] for c in cts]
            rows.append(self._inexact_grads(self.bridge.backward(records[t], row, keep=True)))
        for record in records.values():
            record.close()
        return [np.stack(column) for column in zip(*rows)]

    def _inexact_grads(self, grads) -> list:
        return [np.asarray(g).astype(s.dtype) for g, s in zip(grads, self.in_structs)
                if _inexact(s)]

    def _discard(self, token):
        with self.lock:
            record = self.records.pop(int(token), None)
        if record is not None:
            record.close()

    # -- structure --

    def _grad_structs(self) -> list:
        return [s for s in self.in_structs if _inexact(s)]

    def _with_zeros(self, xs, grads) -> list:
        it = iter(grads)
        return [next(it) if _inexact(x) else _zero_cotangent(x) for x in xs]

    def vjp_operation(self) -> _Operation:
        """The backward as an operation of ``(*operands, *output cotangents)``."""
        if self._vjp_operation is None:
            vjp_bridge = self.bridge.vjp_bridge()
            vjp_bridge.out_def = tree_flatten(tuple(range(len(self.in_structs))))[1]
            vjp_bridge.out_dtypes = [s.dtype for s in self.in_structs]
            self._vjp_operation = _Operation(vjp_bridge, [*self.in_structs, *self.out_structs],
                                             self.in_structs)
        return self._vjp_operation


def _pad(gs, structs):
    it = iter(gs)
    return [next(it) if _inexact(s) else _zero_cotangent(s) for s in structs]


def _check_program_call(program: StagedProgram, bridge: Bridge, in_structs: list) -> None:
    """Check the call against the program's signature now, with data-free stand-ins of the
    operands: inside the callback a mismatch would surface as JAX's runtime error."""
    leaves = list(bridge.leaves)
    for i, s in zip(bridge.positions, in_structs):
        leaves[i] = np.broadcast_to(np.zeros((), s.dtype), s.shape)
    args, kwargs = tree_unflatten(bridge.treedef, leaves)
    check_call(program._in_def, program._specs, args, kwargs, program._provider,
               program._version)


def _result_structs(f, bridge: Bridge, result_shape_dtypes, in_structs: list):
    """The flat output structs and the output tree definition."""
    if result_shape_dtypes is not None:
        leaves, out_def = tree_flatten(result_shape_dtypes)
        return [_struct(s) for s in leaves], out_def
    if isinstance(f, StagedProgram):
        _check_program_call(f, bridge, in_structs)
        leaves, out_def = tree_flatten(f.output_specs, is_leaf=is_spec)
    else:
        specs = tuple(ArraySpec(s.shape, s.dtype) for s in in_structs)
        try:
            program = stage(bridge.call, specs=specs)
        except Exception as exc:
            raise TypeError(f"advect.interop.jax.wrap: the output shapes of "
                            f"{getattr(f, '__name__', 'f')} could not be found by staging it "
                            f"({exc}); pass result_shape_dtypes= (a pytree of "
                            "jax.ShapeDtypeStruct matching its output)") from exc
        leaves, out_def = tree_flatten(program.output_specs, is_leaf=is_spec)
    return [_struct(s) for s in leaves], out_def


def wrap(f: Callable, *, has_aux: bool = False, result_shape_dtypes: Any = None) -> Callable:
    """Make ``f`` (an Advect function, or a ``StagedProgram``) one differentiable JAX
    operation that works under ``jax.jit``, ``jax.grad`` (any order) and ``jax.vjp``.

    With ``has_aux``, ``f`` returns ``(output, aux)``; ``aux`` is returned as is and not
    differentiated. ``result_shape_dtypes`` (a pytree of ``jax.ShapeDtypeStruct`` matching
    ``f``'s whole output, ``aux`` included) spares the staging pass that finds them otherwise.

    Raises:
        TypeError: the output shapes cannot be found (``f`` does not stage, for example
            because of data-dependent control flow) and ``result_shape_dtypes`` is not given.

    Example:
        >>> import numpy as np, jax, jax.numpy as jnp
        >>> from advect.interop.jax import wrap
        >>> f = wrap(lambda x: (np.sum(x ** 2), np.max(x)), has_aux=True)
        >>> (value, aux), g = jax.value_and_grad(f, has_aux=True)(jnp.array([1.0, 2.0]))
        >>> float(value), float(aux), g.tolist()
        (5.0, 2.0, [2.0, 4.0])
    """
    if has_aux:
        def split(*args, **kwargs):
            out = f(*args, **kwargs)
            if not (isinstance(out, tuple) and len(out) == 2):
                raise TypeError("advect.interop.jax.wrap(has_aux=True) needs a function "
                                f"returning a pair (output, aux), got {type(out).__name__}")
            return out
        function = split
    else:
        function = f

    def wrapped(*args, **kwargs):
        bridge = Bridge.of(function, args, kwargs, is_operand=_is_operand, conjugate=True)
        in_structs = [_struct(x) for x in bridge.inputs]
        out_structs, out_def = _result_structs(f, bridge, result_shape_dtypes, in_structs)
        bridge.out_def, bridge.out_dtypes = out_def, [s.dtype for s in out_structs]
        outs = _Operation(bridge, in_structs, out_structs).apply(*bridge.inputs)
        bridge.inputs = []
        out = tree_unflatten(out_def, outs)
        if has_aux:
            return out[0], jax.tree_util.tree_map(jax.lax.stop_gradient, out[1])
        return out

    wrapped.__wrapped__ = f
    return wrapped

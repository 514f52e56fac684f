"""Shared pieces of the integration tests (xarray and the host bridges): central differences
of a host loss, the functions every bridge wraps, and the lazy-import check."""

import subprocess
import sys

import numpy as np


def central_gradient(loss, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences of a real scalar ``loss`` at ``x``, in Advect's convention for
    complex ``x`` (``dL/dx + 1j * dL/dy``)."""
    x = np.asarray(x)
    out = np.zeros(x.shape, x.dtype)
    directions = (1.0, 1j) if x.dtype.kind == "c" else (1.0,)
    for index in np.ndindex(x.shape):
        for unit in directions:
            step = np.zeros(x.shape, x.dtype)
            step[index] = eps * unit
            slope = (float(loss(x + step)) - float(loss(x - step))) / (2 * eps)
            out[index] += slope * unit
    return out


def model(x, params, *, scale):
    """A pytree function every bridge wraps: positional and keyword inputs, two outputs."""
    hidden = np.tanh(x @ params["w"] + params["b"]) * scale
    return {"hidden": hidden, "energy": np.sum(hidden ** 2) + np.sum(params["w"] ** 3)}


def complex_model(z):
    """Complex in, complex out: a host loss over its real and imaginary parts."""
    return np.exp(z) * np.conj(z) + z ** 2


def imports_after_advect() -> set:
    """The optional frameworks that ``import advect`` imports (run in a fresh interpreter)."""
    code = ("import sys, advect, advect.interop; print(','.join(m for m in "
            "('xarray', 'torch', 'jax', 'autograd') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return {m for m in out.stdout.strip().split(",") if m}

"""Sample invocations for the NumPy function and ndarray rows of advect.support_catalog().

``FUNCTION_SAMPLES[name]`` is ``(f, args)``: ``f(*args)`` calls the function on sample data,
with every floating-point argument differentiated. A function without an entry is sampled as
``function(M)`` on a well-conditioned 3x3 matrix. Domains keep the derivative smooth (no ties,
no kinks, positive where logarithms appear).
"""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

import numpy as np

from advect.autodiff.forward import JVPTrace, JVPTracer
from advect.pytree import tree_map


def traced_call(f, args):
    """``f(*args)`` with the arrays traced by a live forward-mode trace (zero tangents): the
    dynamic lifetime, results made concrete."""
    trace = JVPTrace()
    try:
        out = f(*(JVPTracer(trace, a, None) if isinstance(a, np.ndarray) else a for a in args))
        return tree_map(lambda o: o._concrete() if isinstance(o, JVPTracer) else o, out)
    finally:
        trace.close()


def _rng(seed):
    return np.random.default_rng(seed)


M = _rng(0).uniform(0.5, 1.5, (3, 3)) + 2.0 * np.eye(3)  # distinct entries, well conditioned
M2 = _rng(1).uniform(0.5, 1.5, (3, 3))
V = _rng(2).uniform(0.5, 1.5, 4)
W = _rng(3).uniform(0.5, 1.5, 4)
V3 = _rng(4).uniform(0.5, 1.5, 3)
T3 = _rng(5).uniform(0.5, 1.5, (2, 3, 4))
S1, S2 = np.array(1.2), np.array(2.5)
UNIT = _rng(6).uniform(-0.8, 0.8, (3, 3))
MASK = np.array([[True, False, True], [False, True, False], [True, True, False]])
IDX = np.array([[2], [0], [1]])


def _written(write):
    """A function that copies its first argument, writes into the copy and returns it."""
    def f(a, *rest):
        y = a.copy()
        write(y, *rest)
        return y
    return f


def _dict(**kwargs):
    return kwargs


def _raw_file():
    path = Path(tempfile.mkdtemp()) / "values.bin"
    np.arange(4.0).tofile(path)
    return path


RAW_FILE = _raw_file()


FUNCTION_SAMPLES = _dict(**{
    "numpy.append": (lambda a, b: np.append(a, b), [M, V]),
    "numpy.apply_along_axis": (lambda a: np.apply_along_axis(lambda r: r * r.sum(), 1, a), [M]),
    "numpy.apply_over_axes": (lambda a: np.apply_over_axes(np.sum, a, [0]), [M]),
    "numpy.array": (lambda a: np.array(a, like=a), [M]),
    "numpy.asarray": (lambda a: np.asarray(a, like=a), [M]),
    "numpy.asanyarray": (lambda a: np.asanyarray(a, like=a), [M]),
    "numpy.ascontiguousarray": (lambda a: np.ascontiguousarray(a, like=a), [M]),
    "numpy.asfortranarray": (lambda a: np.asfortranarray(a, like=a), [M]),
    "numpy.require": (lambda a: np.require(a, like=a), [M]),
    "numpy.array_split": (lambda a: np.array_split(a, 2), [M]),
    "numpy.astype": (lambda a: np.astype(a, np.complex128), [M]),
    "numpy.bincount": (lambda w: np.bincount(np.array([0, 1, 1, 3]), weights=w), [V]),
    "numpy.block": (lambda a, b: np.block([[a, b], [b, a]]), [M, M2]),
    "numpy.broadcast_arrays": (lambda a, b: np.broadcast_arrays(a, b), [M, V3]),
    "numpy.broadcast_to": (lambda a: np.broadcast_to(a, (2, 3, 3)), [M]),
    "numpy.choose": (lambda a, b: np.choose(np.array([0, 1, 0]), [a, b]), [V3, V3 + 1.0]),
    "numpy.clip": (lambda a: np.clip(a, 0.7, 2.9), [M]),
    "numpy.column_stack": (lambda a, b: np.column_stack([a, b]), [V, W]),
    "numpy.compress": (lambda a: np.compress([True, False, True], a, axis=0), [M]),
    "numpy.concat": (lambda a, b: np.concat([a, b]), [M, M2]),
    "numpy.convolve": (lambda a, b: np.convolve(a, b), [V, W]),
    "numpy.copyto": (_written(lambda y, b: np.copyto(y, b)), [M, M2]),
    "numpy.correlate": (lambda a, b: np.correlate(a, b, mode="full"), [V, W]),
    "numpy.cross": (lambda a, b: np.cross(a, b), [V3, V3[::-1] + 0.1]),
    "numpy.cumulative_prod": (lambda a: np.cumulative_prod(a, axis=1), [M]),
    "numpy.cumulative_sum": (lambda a: np.cumulative_sum(a, axis=1), [M]),
    "numpy.delete": (lambda a: np.delete(a, 1, axis=0), [M]),
    "numpy.dot": (lambda a, b: np.dot(a, b), [M, M2]),
    "numpy.dsplit": (lambda a: np.dsplit(a, 2), [T3]),
    "numpy.dstack": (lambda a, b: np.dstack([a, b]), [M, M2]),
    "numpy.einsum": (lambda a, b: np.einsum("ij,jk->ik", a, b), [M, M2]),
    "numpy.expand_dims": (lambda a: np.expand_dims(a, 0), [M]),
    "numpy.extract": (lambda a: np.extract(MASK, a), [M]),
    "numpy.fill_diagonal": (_written(lambda y, v: np.fill_diagonal(y, v)), [M, V3]),
    "numpy.fromfunction": (lambda a: np.fromfunction(lambda i, j: i * a[0, 0] + j, (2, 3),
                                                     like=a), [M]),
    "numpy.full": (lambda a: np.full((2, 3), a[0, 0], like=a), [M]),
    "numpy.full_like": (lambda a: np.full_like(a, a[0, 1]), [M]),
    "numpy.geomspace": (lambda a, b: np.geomspace(a, b, 5), [S1, S2]),
    "numpy.histogram": (lambda w: np.histogram(np.arange(4.0), bins=2, weights=w)[0], [V]),
    "numpy.histogram2d": (lambda w: np.histogram2d(np.arange(4.0), np.arange(4.0)[::-1],
                                                   bins=2, weights=w)[0], [V]),
    "numpy.histogramdd": (lambda w: np.histogramdd(np.arange(8.0).reshape(4, 2), bins=2,
                                                   weights=w)[0], [V]),
    "numpy.histogram_bin_edges": (lambda a: np.histogram_bin_edges(a, bins=3), [V]),
    "numpy.hsplit": (lambda a: np.hsplit(a, 3), [M]),
    "numpy.hstack": (lambda a, b: np.hstack([a, b]), [M, M2]),
    "numpy.inner": (lambda a, b: np.inner(a, b), [V, W]),
    "numpy.insert": (lambda a, v: np.insert(a, 1, v), [V, S1]),
    "numpy.interp": (lambda x, fp: np.interp(x, np.array([0.0, 1.0, 2.0, 3.0]), fp),
                     [np.array([0.3, 1.6, 2.7]), V]),
    "numpy.kron": (lambda a, b: np.kron(a, b), [M[:2, :2], M2[:2, :2]]),
    "numpy.emath.arccos": (np.emath.arccos, [UNIT]),
    "numpy.emath.arcsin": (np.emath.arcsin, [UNIT]),
    "numpy.emath.arctanh": (np.emath.arctanh, [UNIT]),
    "numpy.emath.logn": (lambda a: np.emath.logn(3.0, a), [M]),
    "numpy.emath.power": (lambda a: np.emath.power(a, 2.5), [M]),
    "numpy.lib.stride_tricks.sliding_window_view": (
        lambda a: np.lib.stride_tricks.sliding_window_view(a, 2), [V]),
    "numpy.linalg.cholesky": (lambda a: np.linalg.cholesky(a @ a.T), [M]),
    "numpy.linalg.cross": (lambda a, b: np.linalg.cross(a, b), [V3, V3[::-1] + 0.1]),
    "numpy.linalg.eigh": (lambda a: np.linalg.eigh(a + a.T), [M]),
    "numpy.linalg.eigvalsh": (lambda a: np.linalg.eigvalsh(a + a.T), [M]),
    "numpy.linalg.lstsq": (lambda a, b: np.linalg.lstsq(a, b)[0], [T3[0].T, V]),
    "numpy.linalg.matmul": (lambda a, b: np.linalg.matmul(a, b), [M, M2]),
    "numpy.linalg.matrix_power": (lambda a: np.linalg.matrix_power(a, 3), [M]),
    "numpy.linalg.multi_dot": (lambda a, b, c: np.linalg.multi_dot([a, b, c]), [M, M2, M]),
    "numpy.linalg.outer": (lambda a, b: np.linalg.outer(a, b), [V, W]),
    "numpy.linalg.solve": (lambda a, b: np.linalg.solve(a, b), [M, V3]),
    "numpy.linalg.tensordot": (lambda a, b: np.linalg.tensordot(a, b), [M, M2]),
    "numpy.linalg.tensorinv": (lambda a: np.linalg.tensorinv(a, ind=1),
                               [(np.kron(M[:2, :2], M2[:2, :2]) + 3 * np.eye(4)).reshape(4, 2, 2)]),
    "numpy.linalg.tensorsolve": (lambda a, b: np.linalg.tensorsolve(a, b),
                                 [(np.kron(M[:2, :2], M2[:2, :2]) + 3 * np.eye(4))
                                  .reshape(4, 2, 2), V]),
    "numpy.linalg.vecdot": (lambda a, b: np.linalg.vecdot(a, b), [M, M2]),
    "numpy.linspace": (lambda a, b: np.linspace(a, b, 5), [S1, S2]),
    "numpy.logspace": (lambda a, b: np.logspace(a, b, 4), [S1, S2]),
    "numpy.meshgrid": (lambda a, b: np.meshgrid(a, b), [V, V3]),
    "numpy.moveaxis": (lambda a: np.moveaxis(a, 0, -1), [T3]),
    "numpy.nanpercentile": (lambda a: np.nanpercentile(a, 30), [M]),
    "numpy.nanquantile": (lambda a: np.nanquantile(a, 0.3), [M]),
    "numpy.outer": (lambda a, b: np.outer(a, b), [V, W]),
    "numpy.pad": (lambda a: np.pad(a, 1, mode="reflect"), [M]),
    "numpy.partition": (lambda a: np.partition(a, 2), [V]),
    "numpy.percentile": (lambda a: np.percentile(a, 30), [M]),
    "numpy.piecewise": (lambda a: np.piecewise(a, [a < 2.0, a >= 2.0],
                                               [lambda x: x**2, lambda x: 3 * x]), [M]),
    "numpy.place": (_written(lambda y, v: np.place(y, MASK, v)), [M, W[:3]]),
    "numpy.poly": (lambda a: np.poly(a), [V3]),
    "numpy.polyadd": (lambda a, b: np.polyadd(a, b), [V3, W[:2]]),
    "numpy.polysub": (lambda a, b: np.polysub(a, b), [V3, W[:2]]),
    "numpy.polymul": (lambda a, b: np.polymul(a, b), [V3, W[:2]]),
    "numpy.polydiv": (lambda a, b: np.polydiv(a, b), [V, W[:2]]),
    "numpy.polyder": (lambda a: np.polyder(a), [V]),
    "numpy.polyint": (lambda a: np.polyint(a), [V]),
    "numpy.polyfit": (lambda y: np.polyfit(np.arange(5.0), y, 2), [np.append(V, 0.3)]),
    "numpy.polyval": (lambda p, x: np.polyval(p, x), [V3, W]),
    "numpy.put": (_written(lambda y, v: np.put(y, [0, 4], v)), [M, W[:2]]),
    "numpy.put_along_axis": (_written(lambda y, v: np.put_along_axis(y, IDX, v, axis=1)),
                             [M, V3[:, None]]),
    "numpy.putmask": (_written(lambda y, v: np.putmask(y, MASK, v)), [M, M2]),
    "numpy.quantile": (lambda a: np.quantile(a, 0.3), [M]),
    "numpy.repeat": (lambda a: np.repeat(a, 2, axis=0), [M]),
    "numpy.reshape": (lambda a: np.reshape(a, (9,)), [M]),
    "numpy.resize": (lambda a: np.resize(a, (2, 5)), [M]),
    "numpy.roll": (lambda a: np.roll(a, 1), [M]),
    "numpy.rollaxis": (lambda a: np.rollaxis(a, 2), [T3]),
    "numpy.roots": (lambda p: np.roots(p), [np.poly(np.array([1.0, 2.0, 3.5]))]),
    "numpy.select": (lambda a, b: np.select([a < 2.0, a >= 2.0], [a, b]), [M, M2]),
    "numpy.setdiff1d": (lambda a, b: np.setdiff1d(a, b),
                        [np.array([0.5, 1.7, 2.9]), np.array([1.1, 2.3])]),
    "numpy.setxor1d": (lambda a, b: np.setxor1d(a, b),
                       [np.array([0.5, 1.7, 2.9]), np.array([1.1, 2.3])]),
    "numpy.union1d": (lambda a, b: np.union1d(a, b),
                      [np.array([0.5, 1.7, 2.9]), np.array([1.1, 2.3])]),
    "numpy.split": (lambda a: np.split(a, 3), [M]),
    "numpy.stack": (lambda a, b: np.stack([a, b]), [M, M2]),
    "numpy.swapaxes": (lambda a: np.swapaxes(a, 0, 1), [M]),
    "numpy.take": (lambda a: np.take(a, [0, 2, 2]), [M]),
    "numpy.take_along_axis": (lambda a: np.take_along_axis(a, IDX, axis=1), [M]),
    "numpy.tensordot": (lambda a, b: np.tensordot(a, b), [M, M2]),
    "numpy.tile": (lambda a: np.tile(a, 2), [M]),
    "numpy.trapezoid": (lambda y: np.trapezoid(y), [V]),
    "numpy.trim_zeros": (lambda a: np.trim_zeros(a), [V]),
    "numpy.unstack": (lambda a: np.unstack(a), [M]),
    "numpy.vander": (lambda a: np.vander(a), [V3]),
    "numpy.vdot": (lambda a, b: np.vdot(a, b), [V, W]),
    "numpy.vsplit": (lambda a: np.vsplit(a, 3), [M]),
    "numpy.vstack": (lambda a, b: np.vstack([a, b]), [M, M2]),
    "numpy.where": (lambda a, b: np.where(a > 2.0, a, b), [M, M2]),
    "numpy.sort_complex": (lambda a: np.sort_complex(a), [V]),
    "numpy.unwrap": (lambda a: np.unwrap(a * 3.0), [V]),
    "numpy.i0": (lambda a: np.i0(a), [V]),
    "numpy.sinc": (lambda a: np.sinc(a), [V]),
    "numpy.gradient": (lambda a: np.gradient(a), [V]),
    "numpy.ediff1d": (lambda a: np.ediff1d(a), [V]),
    # rows without a derivative: sampled for the staged lifetime
    "numpy.allclose": (lambda a, b: np.allclose(a, b), [M, M2]),
    "numpy.array_equal": (lambda a, b: np.array_equal(a, b), [M, M2]),
    "numpy.array_equiv": (lambda a, b: np.array_equiv(a, b), [M, M2]),
    "numpy.isclose": (lambda a, b: np.isclose(a, b), [M, M2]),
    "numpy.isin": (lambda a: np.isin(a, M2), [M]),
    "numpy.argpartition": (lambda a: np.argpartition(a, 2), [V]),
    "numpy.digitize": (lambda a: np.digitize(a, np.array([0.8, 1.2, 2.5])), [M]),
    "numpy.searchsorted": (lambda a: np.searchsorted(np.sort(a), 1.0), [V]),
    "numpy.ix_": (lambda a: np.ix_(np.argsort(a), np.argsort(a)), [V]),
    "numpy.ravel_multi_index": (lambda a: np.ravel_multi_index((np.argsort(a), np.argsort(a)),
                                                               (4, 4)), [V]),
    "numpy.unravel_index": (lambda a: np.unravel_index(np.argsort(a), (2, 2)), [V]),
    "numpy.packbits": (lambda a: np.packbits(a > 1.0), [M]),
    "numpy.unpackbits": (lambda a: np.unpackbits(np.packbits(a > 1.0)), [M]),
    "numpy.can_cast": (lambda a: a + float(np.can_cast(a, np.float32, "same_kind")), [M]),
    "numpy.may_share_memory": (lambda a, b: a + float(np.may_share_memory(a, b)), [M, M2]),
    "numpy.shares_memory": (lambda a, b: a + float(np.shares_memory(a, b)), [M, M2]),
    "numpy.common_type": (lambda a: a.astype(np.common_type(a)), [M]),
    "numpy.result_type": (lambda a: a.astype(np.result_type(a, np.float32)), [M]),
    "numpy.min_scalar_type": (lambda a: a.astype(np.min_scalar_type(a)), [M]),
    "numpy.einsum_path": (lambda a, b: np.einsum("ij,jk->ik", a, b, optimize=np.einsum_path(
        "ij,jk->ik", a, b)[0]), [M, M2]),
    "numpy.intersect1d": (lambda a, b: np.intersect1d(a, b),
                          [np.array([0.5, 1.7, 2.9]), np.array([1.7, 2.3])]),
    "numpy.save": (lambda a: (np.save(io.BytesIO(), a), a)[1], [M]),
    "numpy.savetxt": (lambda a: (np.savetxt(io.StringIO(), a), a)[1], [M]),
    "numpy.savez": (lambda a: (np.savez(io.BytesIO(), a=a), a)[1], [M]),
    "numpy.savez_compressed": (lambda a: (np.savez_compressed(io.BytesIO(), a=a), a)[1], [M]),
    "numpy.arange": (lambda a: np.arange(5, like=a), [M]),
    "numpy.zeros": (lambda a: np.zeros(3, like=a), [M]),
    "numpy.ones": (lambda a: np.ones(3, like=a), [M]),
    "numpy.empty": (lambda a: np.empty(3, like=a) * 0.0, [M]),
    "numpy.eye": (lambda a: np.eye(3, like=a), [M]),
    "numpy.identity": (lambda a: np.identity(3, like=a), [M]),
    "numpy.tri": (lambda a: np.tri(3, like=a), [M]),
    "numpy.frombuffer": (lambda a: np.frombuffer(np.arange(3.0).tobytes(), like=a), [M]),
    "numpy.fromfile": (lambda a: np.fromfile(RAW_FILE, like=a), [M]),
    "numpy.fromiter": (lambda a: np.fromiter(range(4), float, like=a), [M]),
    "numpy.fromstring": (lambda a: np.fromstring("1 2 3", sep=" ", like=a), [M]),
    "numpy.loadtxt": (lambda a: np.loadtxt(io.StringIO("1 2\n3 4"), like=a), [M]),
    "numpy.genfromtxt": (lambda a: np.genfromtxt(io.StringIO("1,2\n3,4"), delimiter=",",
                                                 like=a), [M]),
    # functions without a translation: NumPy's own code works on traced arrays
    "numpy.row_stack": (lambda a, b: np.row_stack([a, b]), [M, M2]),
    "numpy.fft.fftfreq": (lambda d: np.fft.fftfreq(4, d=d[0]), [V]),
    "numpy.fft.rfftfreq": (lambda d: np.fft.rfftfreq(4, d=d[0]), [V]),
    "numpy.isscalar": (lambda a: a * (np.isscalar(a) + 1.0), [M]),
    "numpy.iterable": (lambda a: a * float(np.iterable(a)), [M]),
    "numpy.broadcast_shapes": (lambda a: np.broadcast_to(a, np.broadcast_shapes(a.shape,
                                                                                (2, 1, 1))), [M]),
    "numpy.promote_types": (lambda a: a.astype(np.promote_types(a.dtype, np.float32)), [M]),
    "numpy.issubdtype": (lambda a: a * float(np.issubdtype(a.dtype, np.floating)), [M]),
    "numpy.isdtype": (lambda a: a * float(np.isdtype(a.dtype, "real floating")), [M]),
    "numpy.typename": (lambda a: a * len(np.typename(a.dtype.char)), [M]),
    "numpy.mintypecode": (lambda a: a.astype(np.mintypecode([a.dtype.char])), [M]),
    "numpy.indices": (lambda a: a[tuple(np.indices((2, 2)))], [M]),
    "numpy.diag_indices": (lambda a: a[np.diag_indices(3)], [M]),
    "numpy.tril_indices": (lambda a: a[np.tril_indices(3)], [M]),
    "numpy.triu_indices": (lambda a: a[np.triu_indices(3)], [M]),
    "numpy.mask_indices": (lambda a: a[np.mask_indices(3, np.triu)], [M]),
    "numpy.bartlett": (lambda a: a * np.bartlett(3), [M]),
    "numpy.blackman": (lambda a: a * np.blackman(3), [M]),
    "numpy.hamming": (lambda a: a * np.hamming(3), [M]),
    "numpy.hanning": (lambda a: a * np.hanning(3), [M]),
    "numpy.kaiser": (lambda a: a * np.kaiser(3, 5.0), [M]),
})


def function_sample(row):
    """``(f, args)`` for a function row: the table entry, or ``function(M)``."""
    if row.name in FUNCTION_SAMPLES:
        return FUNCTION_SAMPLES[row.name]
    function = row.target
    return (lambda a: function(a)), [M]


METHOD_SAMPLES = _dict(**{
    "item": (lambda a: a * a.item(2) + a.item(0, 1), [M]),
    "tolist": (lambda a: a * sum(a.tolist()[1]), [M]),
    "T": (lambda a: a.T, [M]),
    "mT": (lambda a: a.mT, [T3]),
    "astype": (lambda a: a.astype(np.complex128), [M]),
    "clip": (lambda a: a.clip(0.7, 2.9), [M]),
    "conj": (lambda a: (a * (1 + 2j)).conj(), [M]),
    "conjugate": (lambda a: (a * (1 + 2j)).conjugate(), [M]),
    "copy": (lambda a: a.copy(), [M]),
    "cumprod": (lambda a: a.cumprod(axis=1), [M]),
    "cumsum": (lambda a: a.cumsum(), [M]),
    "diagonal": (lambda a: a.diagonal(), [M]),
    "dot": (lambda a, b: a.dot(b), [M, M2]),
    "fill": (_written(lambda y, a: y.fill(a[0, 1])), [M, M2]),
    "flatten": (lambda a: a.flatten(), [M]),
    "imag": (lambda a: (a * (1 + 2j)).imag, [M]),
    "real": (lambda a: (a * (1 + 2j)).real, [M]),
    "max": (lambda a: a.max(axis=0), [M]),
    "min": (lambda a: a.min(axis=1), [M]),
    "mean": (lambda a: a.mean(), [M]),
    "prod": (lambda a: a.prod(axis=0), [M]),
    "ravel": (lambda a: a.ravel(), [M]),
    "repeat": (lambda a: a.repeat(2), [M]),
    "reshape": (lambda a: a.reshape(9), [M]),
    "round": (lambda a: a.round(1), [M]),
    "squeeze": (lambda a: a[None].squeeze(), [M]),
    "std": (lambda a: a.std(axis=0), [M]),
    "var": (lambda a: a.var(), [M]),
    "sum": (lambda a: a.sum(axis=1), [M]),
    "swapaxes": (lambda a: a.swapaxes(0, 1), [M]),
    "take": (lambda a: a.take([0, 2, 2]), [M]),
    "trace": (lambda a: a.trace(), [M]),
    "transpose": (lambda a: a.transpose(), [M]),
    "to_device": (lambda a: a.to_device("cpu"), [M]),
    "compress": (lambda a: a.compress([True, False, True], axis=0), [M]),
    "put": (_written(lambda y, v: y.put([0, 4], v)), [M, W[:2]]),
    "choose": (lambda a, b: (np.argsort(a) % 2).choose([a, b]), [V3, V3 + 1.0]),
    "partition": (_written(lambda y: y.partition(2)), [V]),
    "sort": (_written(lambda y: y.sort()), [V]),
    "flat": (lambda a: a.flat[1:4], [M]),
    "argpartition": (lambda a: a.argpartition(2), [V]),
    "searchsorted": (lambda a: np.sort(a).searchsorted(1.0), [V]),
    # metadata, read while staging
    "base": (lambda a: a + (0.0 if a.base is None else 1.0), [M]),
    "device": (lambda a: a + (0.0 if str(a.device) == "cpu" else 1.0), [M]),
    "dtype": (lambda a: a.astype(a.dtype), [M]),
    "itemsize": (lambda a: a * a.itemsize, [M]),
    "nbytes": (lambda a: a * a.nbytes, [M]),
    "ndim": (lambda a: a * a.ndim, [M]),
    "shape": (lambda a: a.reshape(a.shape[::-1]), [T3]),
    "size": (lambda a: a * a.size, [M]),
})


def method_sample(row):
    """``(f, args)`` for a differentiable ndarray row: the table entry, or ``a.<name>()``."""
    if row.target in METHOD_SAMPLES:
        return METHOD_SAMPLES[row.target]
    name = row.target
    return (lambda a: getattr(a, name)()), [M]

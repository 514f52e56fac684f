"""NumPy's own behaviour for every call: what NumPy accepts works on traced arrays, in dynamic
transforms and while staging, and what NumPy rejects is rejected with the same exception class
(or a subclass), never answered with a value.

``VALID`` calls pass metadata arguments (axes, shapes, counts, ``kth``) as NumPy integers and 0-d
integer arrays; each is compared with plain NumPy and its derivatives with central differences.
``BAD`` is the bad-call table: each row runs through plain NumPy, ``ad.grad`` and ``ad.stage``,
and all three must raise the row's exception class.
"""

from __future__ import annotations

import numpy as np
import pytest

import advect as ad
from advect.testing import check_grads

X = np.arange(1.0, 7.0).reshape(2, 3) + np.array([[0.1, 0.7, 0.3], [0.9, 0.2, 0.5]])
I0, I1, I2 = np.array(0), np.array(1), np.array(2)  # 0-d integer arrays

VALID = {
    "moveaxis_int64": lambda x: np.moveaxis(x, np.int64(0), 1),
    "moveaxis_sequences": lambda x: np.moveaxis(x, [np.int64(0)], [I1]),
    "tile_0d": lambda x: np.tile(x, I2),
    "tile_int64_tuple": lambda x: np.tile(x, (np.int64(2), 1)),
    "partition_0d": lambda x: np.partition(x, I0),
    "argpartition_take": lambda x: np.take_along_axis(x, np.argpartition(x, I1), axis=-1),
    "resize_int64": lambda x: np.resize(x, np.int64(4)),
    "resize_tuple": lambda x: np.resize(x, (I2, np.int64(2))),
    "sum_axis_0d": lambda x: np.sum(x, axis=I1),
    "sum_axis_tuple": lambda x: np.sum(x, axis=(np.int64(0), I1)),
    "mean_axis_0d": lambda x: np.mean(x, axis=I1),
    "max_axis_0d": lambda x: np.max(x, axis=I0),
    "cumsum_axis_0d": lambda x: np.cumsum(x, axis=I1),
    "reshape_0d": lambda x: np.reshape(x, np.array(6)),
    "reshape_int64s": lambda x: x.reshape(np.int64(3), np.int64(2)),
    "reshape_tuple": lambda x: x.reshape((np.int64(-1), I2)),
    "transpose_axes": lambda x: np.transpose(x, (np.int64(1), I0)),
    "swapaxes": lambda x: np.swapaxes(x, I0, np.int32(1)),
    "expand_dims_0d": lambda x: np.expand_dims(x, I0),
    "squeeze_0d": lambda x: np.squeeze(x[None], axis=I0),
    "broadcast_to": lambda x: np.broadcast_to(x, (np.int64(2), I2, 3)),
    "concatenate_axis": lambda x: np.concatenate([x, x], axis=I0),
    "stack_axis": lambda x: np.stack([x, x], axis=np.int64(1)),
    "roll": lambda x: np.roll(x, I1, axis=I0),
    "flip": lambda x: np.flip(x, I0),
    "repeat_axis": lambda x: np.repeat(x, I2, axis=I0),
    "split_0d": lambda x: np.split(x, np.array(3), axis=I1)[1],
    "array_split_int64": lambda x: np.array_split(x, np.int64(2), axis=1)[0],
    "tensordot_int64": lambda x: np.tensordot(x, x.T, axes=np.int64(1)),
    "tensordot_0d": lambda x: np.tensordot(x, x, axes=I2),
    "norm_axis": lambda x: np.linalg.norm(x, axis=I1),
    "take_axis": lambda x: np.take(x, [0, 2], axis=I1),
    "sort_axis": lambda x: np.sort(x, axis=I0),
    "diff_axis": lambda x: np.diff(x, axis=I0),
    "std_axis": lambda x: np.std(x, axis=I0),
    "quantile_axis": lambda x: np.quantile(x, 0.5, axis=I0),
    "full_like_shape": lambda x: np.ones_like(x, shape=I2) * x[0, 0],
    "sum_method_0d": lambda x: x.sum(I1),
    "add_accumulate_axis": lambda x: np.add.accumulate(x, axis=I1),
}


@pytest.mark.parametrize("name", VALID)
def test_numpy_integer_metadata_arguments_work(name):
    f = VALID[name]
    expected = f(X)
    np.testing.assert_allclose(ad.stage(f, X)(X), expected, rtol=1e-12)
    check_grads(f, (X,), order=1)


def test_resize_refuses_a_0d_shape_as_numpy_does():
    with pytest.raises(TypeError):
        np.resize(X, I2)
    with pytest.raises(TypeError):
        ad.grad(lambda x: np.sum(np.resize(x, I2)))(X)


def test_float_metadata_arguments_raise_typeerror_as_in_numpy():
    for f in (lambda x: np.sum(x, axis=1.0), lambda x: np.tile(x, 2.5),
              lambda x: np.moveaxis(x, 0.0, 1)):
        with pytest.raises(TypeError):
            f(X)
        with pytest.raises(TypeError):
            ad.grad(lambda x, f=f: np.sum(f(x)))(X)

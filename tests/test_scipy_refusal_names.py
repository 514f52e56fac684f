"""SciPy calls Advect cannot trace are refused naming the function the user called, not the
decorator or private ufunc behind it."""

import numpy as np
import pytest

sp = pytest.importorskip("scipy.special")
signal = pytest.importorskip("scipy.signal")

import advect as ad  # noqa: E402
from advect.errors import TracingError  # noqa: E402

CASES = [
    (lambda x: sp.spherical_jn(1, x), r"scipy\.special\.spherical_jn is not supported"),
    (lambda x: sp.zeta(x + 2.0, 1.0), r"scipy\.special\.zeta \(through its ufunc '_zeta'\)"),
    (lambda x: signal.detrend(x), r"scipy\.signal\.detrend is not supported"),
]


@pytest.mark.parametrize("f, message", CASES)
def test_refusals_name_the_public_function(f, message):
    x = np.array([0.5, 1.5, 2.0])
    with pytest.raises(TracingError, match=message):
        ad.grad(lambda x: np.sum(f(x)))(x)
    with pytest.raises(TracingError, match=message):
        ad.stage(f, x)

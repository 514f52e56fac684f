"""Find where a NaN or infinity comes from with ``advect.debug(numerics=True)``.

The gradient of ``sqrt`` is infinite at zero, so this loss has a finite value but an infinite
gradient entry. Inside ``advect.debug(numerics=True)`` the first non-finite value raises
``NumericsError`` naming the operation, the phase (primal, JVP or VJP) and the source line.
"""

import numpy as np

import advect as ad


def loss(x):
    distances = np.sqrt(x**2)  # |x| written as sqrt(x^2): its derivative is inf at 0
    return np.sum(distances * np.exp(-x))


x = np.array([0.5, 0.0, -1.0])
with np.errstate(divide="ignore", invalid="ignore"):
    print("plain gradient:", ad.grad(loss)(x))  # nan, silently

    with ad.debug(numerics=True):
        try:
            ad.grad(loss)(x)
        except ad.NumericsError as error:
            print("caught:", error)
            print(f"op={error.op!r} phase={error.phase!r}")
            assert (error.op, error.phase) == ("sqrt", "VJP")


def fixed_loss(x):
    return np.sum(np.abs(x) * np.exp(-x))  # abs'(0) = 0: no infinities


with ad.debug(numerics=True):
    print("fixed gradient:", ad.grad(fixed_loss)(x))

# tracer reprs inside debug say where each value was computed
with ad.debug():
    ad.grad(lambda x: print("traced value:", repr(np.sin(x))) or np.sum(x))(x)

"""Regression tests for wrong results (and needless refusals) found by probing nested and
higher-order transforms and transforms under threads (one test per fixed bug)."""

import numpy as np
import pytest

import advect as ad

X = np.array([0.3, 0.5, -0.2])


def _f(x):
    return np.sin(x) * x[::-1] + np.cumsum(x ** 2)


def _central_jacobian(f, x, eps=1e-6):
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        columns.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * eps))
    return np.stack(columns, -1)


def test_a_map_of_concrete_inputs_pulls_back_a_traced_cotangent():
    # was: TypeError "arrays of two providers meet" when a Pullback or LinearMap made outside a
    # transform was applied to a cotangent traced by one (a Jacobian of the adjoint)
    jac = _central_jacobian(_f, X)
    _, linear = ad.linearize(_f, X)
    with linear:
        np.testing.assert_allclose(ad.jacobian(linear.pullback)(X), jac.T, rtol=1e-6)
        np.testing.assert_allclose(ad.jacobian(linear.transpose())(X), jac.T, rtol=1e-6)
        _, t = ad.jvp(linear.pullback)(X, tangents=np.array([0.0, 1.0, 0.0]))
        np.testing.assert_allclose(t, jac[1], rtol=1e-6)

    def pulled(ct):
        _, pullback = ad.vjp(_f)(X)
        return pullback(ct)

    np.testing.assert_allclose(ad.jacobian(pulled)(X), jac.T, rtol=1e-6)


def _tanh(name, *, jvp):
    @ad.primitive(name=name, residual=True)
    def tanh(x):
        y = np.tanh(x)
        return ad.PrimitiveResult(y, residual=1 - y ** 2)

    tanh.def_transpose(lambda ct, primals, output, *, residual: (residual * ct,))
    tanh.def_abstract(lambda x: x.spec)
    if jvp:
        tanh.def_jvp(lambda output, primals, tangents: (1 - output ** 2) * tangents[0])
    return tanh


def test_a_residual_primitive_under_an_outer_transform_keeps_the_residuals_derivative():
    # was: the concrete residual (1 - tanh(x)**2) went into the inner transpose, so every second
    # derivative silently lost its dependence on x (hessian 1.46 where 1.33 is right)
    tanh = _tanh("probe_nesting.tanh_jvp", jvp=True)

    def loss(x):
        return np.sum(tanh(x) ** 3)

    want = _central_jacobian(ad.grad(lambda x: np.sum(np.tanh(x) ** 3)), X)
    v = np.array([1.0, -0.5, 2.0])
    np.testing.assert_allclose(ad.hessian(loss)(X), want, atol=1e-7)
    np.testing.assert_allclose(ad.jvp(ad.grad(loss))(X, tangents=v)[1], want @ v, rtol=1e-6)
    np.testing.assert_allclose(ad.hvp(loss)(X, vectors=v)[1], want @ v, rtol=1e-6)
    np.testing.assert_allclose(ad.hessian_diag(loss)(X), np.diag(want), rtol=1e-6)
    np.testing.assert_allclose(ad.hessian(ad.checkpoint(loss))(X), want, atol=1e-7)
    # without a JVP rule nothing can differentiate through the residual: refused, not wrong
    only_transpose = _tanh("probe_nesting.tanh_transpose", jvp=False)
    np.testing.assert_allclose(ad.grad(lambda x: np.sum(only_transpose(x) ** 3))(X),
                               ad.grad(lambda x: np.sum(np.tanh(x) ** 3))(X))
    with pytest.raises(ad.TracingError, match="residual"):
        ad.hessian(lambda x: np.sum(only_transpose(x) ** 3))(X)


def _mixed():
    x = np.array([0.3, 0.5, -0.2], np.float32)
    return [ad.grad(lambda s, x: np.sum(np.sin(s) * x), argnums=(0, 1))(2.0, x),
            ad.vjp(lambda s, x: np.sin(s) * x, argnums=(0, 1))(2.0, x)[1](np.ones(3, np.float32))]


def test_a_debug_context_in_another_thread_changes_no_result():
    # was: while any thread was in advect.debug, an op on Python scalars inside a rule (the
    # cos(s) of sin's JVP for a Python float s) gave a strong np.float64 instead of a weak
    # float, so the gradient of s was summed in float64, not float32: other bits
    import threading

    want = _mixed()
    entered, leave = threading.Event(), threading.Event()

    def hold():
        with ad.debug(numerics=True):
            entered.set()
            leave.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait()
    try:
        elsewhere = _mixed()
    finally:
        leave.set()
        holder.join()
    with ad.debug():
        inside = _mixed()
    for got in (elsewhere, inside):
        for (gs, gx), (ws, wx) in zip(got, want):
            assert type(gs) is type(ws) is float and gs == ws
            assert gx.dtype == wx.dtype == np.float32 and np.array_equal(gx, wx)


def test_a_debug_context_left_in_another_thread_during_a_backward_pass():
    # was: AttributeError 'NoneType' object has no attribute 'transpose': the backward pass saw
    # a debug context (of another thread) when it started and read the hooks again per equation
    import threading

    entered, leave = threading.Event(), threading.Event()

    def hold():
        with ad.debug():
            entered.set()
            leave.wait()

    holder = threading.Thread(target=hold)
    release = ad.primitive(lambda x: x * 2.0, name="probe_nesting.release_debug")

    @release.def_transpose
    def _(ct, primals, output):
        leave.set()  # the other thread leaves its context in the middle of this backward pass
        holder.join()
        return (ct * 2.0,)

    release.def_abstract(lambda x: x.spec)
    holder.start()
    entered.wait()
    try:
        gradient = ad.grad(lambda x: np.sum(release(np.sin(x) * x) - x))(X)
    finally:
        leave.set()
        holder.join()
    np.testing.assert_allclose(gradient, 2 * (np.cos(X) * X + np.sin(X)) - 1)


def test_a_block_checkpointed_in_an_inner_transform_may_close_over_an_outer_value():
    # was: TracingError "the block uses a traced value that is not one of its arguments" for a
    # block of an inner grad closing over the outer variable (a constant to the inner grad):
    # checkpointing it against the outer trace too found that trace's value captured
    def inner(a, block):
        return ad.grad(lambda y: np.sum(block(lambda z: np.sin(z * a) ** 2)(y)))(a)

    def checkpointed(a):
        return inner(a, ad.checkpoint)

    def plain(a):
        return inner(a, lambda f: f)

    np.testing.assert_allclose(ad.jacobian(checkpointed)(X), ad.jacobian(plain)(X), rtol=1e-12)
    np.testing.assert_allclose(ad.grad(lambda a: np.sum(checkpointed(a)))(X),
                               ad.grad(lambda a: np.sum(plain(a)))(X), rtol=1e-12)
    np.testing.assert_allclose(ad.hessian(lambda a: np.sum(checkpointed(a)))(X),
                               ad.hessian(lambda a: np.sum(plain(a)))(X), rtol=1e-12)
    # a block closing over the value of the transform it is checkpointed against is still refused
    with pytest.raises(ad.TracingError, match="not one of its arguments"):
        ad.grad(lambda a: np.sum(ad.checkpoint(lambda z: z * a)(a)))(X)


def test_hessian_diag_is_the_diagonal_of_the_hessian_next_to_infinite_entries():
    # was: each entry was sum(H[:, i] * e_i), so an inf elsewhere in the column (0 * inf = NaN)
    # made a finite diagonal entry NaN: [nan, -inf] where diag(hessian) is [-0.25, -inf]
    def f(x):
        return np.sum(np.sqrt(x))

    x = np.array([1.0, 0.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        want = np.diag(ad.hessian(f)(x))
        np.testing.assert_array_equal(want, [-0.25, -np.inf])
        np.testing.assert_array_equal(ad.hessian_diag(f)(x), want)
        grid = np.array([[1.0, 0.0], [4.0, 0.0]])
        np.testing.assert_array_equal(ad.hessian_diag(f)(grid), [[-0.25, -np.inf],
                                                                 [-1 / 32, -np.inf]])

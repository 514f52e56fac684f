"""Deploying staged programs as an engineer would: a model staged with pytree, keyword, static
and weak scalar inputs; programs derived from it (grad, value_and_grad, vjp_program, second
derivatives, programs calling programs); each saved as JSON and pickled, loaded in a fresh
process and run bit-identically; the command line; the call contract's errors; threads;
captured constants; outputs that must never alias inputs or the program's state."""

import collections
import json
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest

import advect as ad
from advect.cli import main
from advect.pytree import tree_flatten, tree_leaves
from oracles import central_gradient

Layer = collections.namedtuple("Layer", "w b")

RNG = np.random.default_rng(7)
PARAMS = {"layer": Layer(RNG.normal(size=(3, 4)), RNG.normal(size=4)),
          "extra": [RNG.normal(size=2), RNG.normal(size=2)]}
X = RNG.normal(size=(5, 3))
TABLE = RNG.normal(size=(4,))  # a captured constant


def _model(params, x, *, scale, act):
    h = x @ params["layer"].w + params["layer"].b
    h = np.tanh(h) if act == "tanh" else np.maximum(h, 0.0)
    return scale * np.sum(h ** 2 * TABLE) + np.sum(params["extra"][0] * params["extra"][1])


KW_SPECS = {"scale": ad.ArraySpec((), "float64", weak=True), "act": ad.StaticSpec("tanh")}
KW = {"scale": 1.5, "act": "tanh"}


def _staged():
    return ad.stage(_model, PARAMS, X, kw_specs=KW_SPECS)


def _derived():
    """name -> (program, extra keyword arguments of its call)."""
    program = _staged()
    scalar = ad.stage(lambda t: np.sin(t) * t ** 3, 0.7)
    cotangent = np.float64(1.0)
    return {
        "primal": (program, {}),
        "grad": (ad.grad(program), {}),
        "value_and_grad": (ad.value_and_grad(program, argnums=(0, 1), argnames=("scale",)), {}),
        "vjp_program": (ad.vjp_program(program, argnums=1, argnames=("scale",)),
                        {"cotangent": cotangent}),
        "second": (ad.grad(ad.grad(scalar)), {}),
    }


def _args(name):
    return ((0.7,), {}) if name == "second" else ((PARAMS, X), dict(KW))


def _fingerprint(out):
    """Types, dtypes and exact bytes of every leaf, plus the tree structure."""
    leaves, treedef = tree_flatten(out)
    return repr(treedef), [(type(leaf).__name__, str(np.asarray(leaf).dtype),
                            np.asarray(leaf).tobytes().hex()) for leaf in leaves]


# --- derived programs against dynamic transforms and central differences -------------------

def test_staged_gradients_match_dynamic_grad_and_central_differences():
    program = _staged()
    staged = ad.grad(program, argnums=(0, 1), argnames=("scale",))(PARAMS, X, **KW)
    dynamic = ad.grad(_model, argnums=(0, 1), argnames=("scale",))(PARAMS, X, **KW)
    assert _fingerprint(staged)[0] == _fingerprint(dynamic)[0]
    for a, b in zip(tree_leaves(staged), tree_leaves(dynamic)):
        assert type(a) is type(b)
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    (g_params, g_x), g_kw = staged
    w = PARAMS["layer"].w

    def of_w(v):
        return _model({**PARAMS, "layer": Layer(v, PARAMS["layer"].b)}, X, **KW)
    np.testing.assert_allclose(g_params["layer"].w, central_gradient(of_w, w), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g_x, central_gradient(lambda v: _model(PARAMS, v, **KW), X),
                               rtol=1e-6, atol=1e-8)
    assert type(g_kw["scale"]) is float
    np.testing.assert_allclose(g_kw["scale"], (_model(PARAMS, X, scale=1.5 + 1e-6, act="tanh")
                                               - _model(PARAMS, X, scale=1.5 - 1e-6,
                                                        act="tanh")) / 2e-6, rtol=1e-6)


def test_pullback_program_agrees_with_jvp_by_the_adjoint_identity():
    field = ad.stage(lambda p, x: np.tanh(x @ p["layer"].w) * p["layer"].b, PARAMS, X)
    pullback = ad.vjp_program(field, argnums=1)
    cotangent = RNG.normal(size=(5, 4))
    tangent = RNG.normal(size=X.shape)
    x_bar = pullback(PARAMS, X, cotangent=cotangent)
    _, t_out = ad.jvp(lambda x: field(PARAMS, x))(X, tangents=tangent)
    np.testing.assert_allclose(np.vdot(x_bar, tangent), np.vdot(cotangent, t_out), rtol=1e-12)


def test_second_derivative_and_nested_programs():
    def f(t):
        return np.sin(t) * t ** 3
    t = 0.7
    exact = -np.sin(t) * t ** 3 + 6 * t ** 2 * np.cos(t) + 6 * t * np.sin(t)
    second = ad.grad(ad.grad(ad.stage(f, t)))
    assert type(second(t)) is float and second(t) == pytest.approx(exact, rel=1e-13)
    inner = ad.stage(lambda x: np.exp(x) * np.cos(x), np.ones(4))
    outer = ad.stage(lambda x: np.sum(inner(x) ** 2), np.ones(4))
    x = np.linspace(0.0, 1.0, 4)
    expected = ad.grad(lambda v: np.sum((np.exp(v) * np.cos(v)) ** 2))(x)
    np.testing.assert_allclose(ad.grad(outer)(x), expected, rtol=1e-14)
    np.testing.assert_allclose(ad.hessian(outer)(x), ad.hessian(
        lambda v: np.sum((np.exp(v) * np.cos(v)) ** 2))(x), rtol=1e-13, atol=1e-14)


# --- NumPy scalar inputs: staged gradients have the dynamic gradient's type ------------------

@pytest.mark.parametrize("derive", ["grad", "value_and_grad", "vjp_program"])
def test_numpy_scalar_inputs_get_numpy_scalar_gradients(derive):
    def f(s, t, n):
        return s * 2.0 + t * t + n
    args = (np.float32(2.0), np.float64(1.5), np.int64(3))
    program = ad.stage(f, *args)
    assert [s.numpy_scalar for s in program.signature[0]] == [True, True, True]
    kw = {"cotangent": np.float64(1.0)} if derive == "vjp_program" else {}
    derived = getattr(ad, derive)(program, argnums=(0, 1))
    if derive == "vjp_program":
        _, pullback = ad.vjp(f, argnums=(0, 1))(*args)
        expected = pullback(np.float64(1.0))
    else:
        expected = getattr(ad, derive)(f, argnums=(0, 1))(*args)
    for candidate in (derived, ad.StagedProgram.from_dict(json.loads(json.dumps(
            derived.to_dict()))), pickle.loads(pickle.dumps(derived))):
        got = candidate(*args, **kw)
        assert [type(g) for g in tree_leaves(got)] == [type(e) for e in tree_leaves(expected)]
        assert [np.asarray(g).dtype for g in tree_leaves(got)] == [
            np.asarray(e).dtype for e in tree_leaves(expected)]
        np.testing.assert_array_equal(tree_leaves(got), tree_leaves(expected))


def test_a_numpy_integer_input_keeps_its_zero_array_gradient():
    program = ad.stage(lambda s, n: s * n, np.float64(2.0), np.int32(3))
    got = ad.grad(program, argnums=(0, 1))(np.float64(2.0), np.int32(3))
    expected = ad.grad(lambda s, n: s * n, argnums=(0, 1))(np.float64(2.0), np.int32(3))
    assert [type(g) for g in got] == [type(e) for e in expected] == [np.float64, np.ndarray]
    assert got[1].dtype == np.int32 and got[1] == 0


# --- saved forms, loaded in a fresh process ---------------------------------------------------

_LOADER = r"""
import collections, json, pickle, sys
import numpy as np
import advect as ad
from advect.pytree import tree_flatten
Layer = collections.namedtuple("Layer", "w b")
data = np.load(sys.argv[1])
params = {"layer": Layer(data["w"], data["b"]), "extra": [data["e0"], data["e1"]]}
x = data["x"]
def fingerprint(out):
    leaves, treedef = tree_flatten(out)
    return repr(treedef), [(type(l).__name__, str(np.asarray(l).dtype),
                            np.asarray(l).tobytes().hex()) for l in leaves]
result = {}
for name, path in json.loads(sys.argv[2]).items():
    args = ((0.7,), {}) if name == "second" else ((params, x), {"scale": 1.5, "act": "tanh"})
    if name == "vjp_program":
        args[1]["cotangent"] = np.float64(1.0)
    with open(path + ".json") as f:
        from_json = ad.StagedProgram.from_dict(json.load(f))
    with open(path + ".pkl", "rb") as f:
        from_pickle = pickle.load(f)
    result[name] = [fingerprint(p(*args[0], **args[1])) for p in (from_json, from_pickle)]
    result[name].append([len(from_json.constants), from_json.optimization.nodes_after])
print(json.dumps(result))
"""


def test_every_derived_program_reloads_bit_identically_in_a_fresh_process(tmp_path):
    programs = _derived()
    paths, expected = {}, {}
    for name, (program, extra) in programs.items():
        path = str(tmp_path / name)
        with open(path + ".json", "w") as f:
            json.dump(program.to_dict(), f)
        with open(path + ".pkl", "wb") as f:
            pickle.dump(program, f)
        paths[name] = path
        args, kw = _args(name)
        fp = _fingerprint(program(*args, **kw, **extra))
        expected[name] = json.loads(json.dumps(  # as the fresh process reports it
            [fp, fp, [len(program.constants), program.optimization.nodes_after]]))
    data = tmp_path / "inputs.npz"
    np.savez(data, w=PARAMS["layer"].w, b=PARAMS["layer"].b, e0=PARAMS["extra"][0],
             e1=PARAMS["extra"][1], x=X)
    run = subprocess.run([sys.executable, "-c", _LOADER, str(data), json.dumps(paths)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got == expected


def test_captured_constants_are_snapshotted_saved_and_read_only():
    table = np.arange(6.0).reshape(2, 3)
    program = ad.stage(lambda x: (np.sum(table @ x), table, table.T, table[0]), np.ones(3))
    assert {c.origin for c in program.constants} == {"captured"}
    payload = json.dumps(program.to_dict())
    table[0, 0] = 100.0  # after staging: the snapshot does not see it
    restored = ad.StagedProgram.from_dict(json.loads(payload))
    for candidate in (program, restored, pickle.loads(pickle.dumps(program))):
        total, whole, transposed, row = candidate(np.ones(3))
        assert total == 15.0 and whole[0, 0] == 0.0
        for out in (whole, transposed, row):
            with pytest.raises(ValueError, match="read-only"):
                out[...] = -1.0
        assert candidate(np.ones(3))[1][0, 0] == 0.0


@pytest.mark.parametrize("make", [
    lambda w: ad.stage(lambda x: (np.sum(x), w), np.ones(3)),
    lambda w: pickle.loads(pickle.dumps(ad.stage(lambda x: (np.sum(x), w.T[::-1]), np.ones(3)))),
    lambda w: ad.grad(ad.stage(lambda x: np.sum(w * x), np.ones(3))),
    lambda w: ad.stage(lambda x: (np.sum(x), np.ones(3) * 2.0), np.ones(3)),  # folded
])
def test_no_one_can_make_a_returned_constant_writeable_again(make):
    # before, the held array owned its data, so `out.flags.writeable = True` succeeded and a
    # write through it changed every later call (and the program's `constants`)
    program = make(np.arange(3.0))
    expected = program(np.ones(3))
    out = program(np.ones(3))
    out = out[1] if isinstance(out, tuple) else out
    for array in (out, out.base, program.constants[0].value):
        if isinstance(array, np.ndarray):
            with pytest.raises(ValueError, match="WRITEABLE"):
                array.flags.writeable = True
    assert _fingerprint(program(np.ones(3))) == _fingerprint(expected)


def test_large_constants_round_trip_exactly():
    big = RNG.normal(size=(64, 128))
    large = ad.grad(ad.stage(lambda x: np.sum(np.tanh(big @ x)), np.ones(128)))
    restored = ad.StagedProgram.from_dict(json.loads(json.dumps(large.to_dict())))
    np.testing.assert_array_equal(restored(np.ones(128)), large(np.ones(128)))
    assert any(c.shape == (64, 128) and np.array_equal(c.value, big) for c in restored.constants)


@pytest.mark.parametrize("function", [
    lambda x: x,
    lambda x: x[...],
    lambda x: x.T,
    lambda x: x.reshape(-1),
    lambda x: x[1:],
    lambda x: (x, x),
    lambda x: {"same": x, "scaled": x * 1.0},
    lambda x: x.copy(),
])
def test_outputs_that_are_inputs_or_views_never_write_through(function):
    program = ad.stage(function, np.ones((2, 2)))
    x = np.arange(4.0).reshape(2, 2)
    for candidate in (program, pickle.loads(pickle.dumps(program))):
        for out in tree_leaves(candidate(x)):
            assert not np.shares_memory(out, x)
            out[...] = -7.0
        np.testing.assert_array_equal(x, np.arange(4.0).reshape(2, 2))
        assert all(np.all(o != -7.0) for o in tree_leaves(candidate(x)))


# --- the call contract ---------------------------------------------------------------------------

def _contract_program():
    return ad.stage(lambda p, x, n, *, k: np.sum(p["a"] * x) * n + k,
                    {"a": np.ones(3)}, np.ones(3), ad.StaticSpec(2),
                    kw_specs={"k": ad.ArraySpec((), "float64")})


_K = np.asarray(1.0)


@pytest.mark.parametrize("args, kw, error, words", [
    (({"a": np.ones(3)}, np.ones(4), 2), {"k": _K}, ValueError, ["argument[1]", "float64[3]",
                                                                 "shape (4,)"]),
    (({"a": np.ones(3)}, np.ones(3, np.float32), 2), {"k": _K}, ValueError,
     ["argument[1]", "dtype float32"]),
    (({"a": np.ones(3)}, np.ones(3, int), 2), {"k": _K}, ValueError, ["dtype int64"]),
    (({"b": np.ones(3)}, np.ones(3), 2), {"k": _K}, TypeError, ["argument[0]", "keys ['a']"]),
    (([np.ones(3)], np.ones(3), 2), {"k": _K}, TypeError, ["argument[0]", "a list"]),
    (({"a": np.ones(3)}, np.ones(3), 3), {"k": _K}, TypeError, ["argument[2]", "static value 3",
                                                                "staged 2"]),
    (({"a": np.ones(3)}, np.ones(3), 2), {}, TypeError, ["missing ['k']"]),
    (({"a": np.ones(3)}, np.ones(3), 2), {"k": _K, "j": _K}, TypeError, ["unexpected ['j']"]),
    (({"a": np.ones(3)}, np.ones(3)), {"k": _K}, TypeError, ["3 positional", "got 2"]),
    (({"a": np.ones(3)}, np.ones(3), 2), {"k": 1.0}, ValueError, ["argument['k']",
                                                                  "np.asarray"]),
    (({"a": np.ones(3)}, [1.0, 2.0, 3.0], 2), {"k": _K}, TypeError, ["argument[1]", "list"]),
    (({"a": np.ones(3)}, np.ma.ones(3), 2), {"k": _K}, TypeError, ["MaskedArray"]),
])
def test_contract_mismatches_name_what_was_wrong(args, kw, error, words):
    program = _contract_program()
    for candidate in (program, ad.StagedProgram.from_dict(program.to_dict())):
        with pytest.raises(error) as info:
            candidate(*args, **kw)
        for word in words:
            assert word in str(info.value)


def test_a_device_mismatch_names_both_devices():
    xps = pytest.importorskip("array_api_strict")
    first, second = xps.__array_namespace_info__().devices()[:2]
    program = ad.grad(ad.stage(lambda x: (lambda xp: xp.sum(xp.sin(x) * x))(
        x.__array_namespace__()), xps.asarray([1.0, 2.0], device=first)))
    with pytest.raises(ValueError) as info:
        program(xps.asarray([1.0, 2.0], device=second))
    assert repr(first) in str(info.value) and repr(second) in str(info.value)


def test_concurrent_calls_of_primal_derived_and_nested_programs_agree():
    inner = ad.stage(lambda x: np.tanh(x) * np.exp(-x ** 2), np.ones(50))
    loss = ad.stage(lambda x: np.sum(inner(x) ** 2), np.ones(50))
    gradient = ad.grad(loss)
    calls = [loss, gradient, ad.grad(lambda y: loss(y)),
             ad.grad(lambda y: np.sum(gradient(y) * y))]
    xs = [np.random.default_rng(i).normal(size=50) for i in range(8)]
    expected = [[np.asarray(c(x)).tobytes() for c in calls] for x in xs]
    failures = []

    def work(i):
        for k in range(12):
            c = (i + k) % len(calls)
            if np.asarray(calls[c](xs[i])).tobytes() != expected[i][c]:
                failures.append((i, c))
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


# --- zero-size arrays, empty pytrees, listings -------------------------------------------------

def test_zero_size_and_empty_pytrees_through_derivation_and_saving():
    empty = ad.stage(lambda x: np.sum(x ** 2), np.ones((0, 3)))
    assert ad.grad(empty)(np.ones((0, 3))).shape == (0, 3)
    pullback = ad.vjp_program(ad.stage(lambda x: x * 2, np.ones(0)))
    assert pullback(np.ones(0), cotangent=np.ones(0)).shape == (0,)
    program = ad.stage(lambda p, x, t: {"out": np.sum(x), "nothing": {}, "none": None},
                       {}, np.ones(2), ())
    for candidate in (program, ad.StagedProgram.from_dict(json.loads(json.dumps(
            program.to_dict()))), pickle.loads(pickle.dumps(program))):
        assert candidate({}, np.ones(2), ()) == {"out": 2.0, "nothing": {}, "none": None}
    assert ad.grad(lambda p, x, t: program(p, x, t)["out"], argnums=(0, 1, 2))(
        {}, np.ones(2), ())[0] == {}


def test_listing_report_and_dot_describe_the_same_graph():
    program = ad.grad(_staged())
    listing = str(program)
    assert listing.startswith("inputs: ") and listing.rstrip().splitlines()[-1].startswith(
        "return ")
    report = program.optimization
    assert report.nodes_after == len(program.graph.nodes) <= report.nodes_before
    assert [p.name for p in report.passes] and all(
        p.nodes_after <= p.nodes_before for p in report.passes)
    dot = program.to_dot()
    assert dot.startswith('digraph "_model"') and dot.rstrip().endswith("}")
    assert dot.count("shape=box, label=") == len(program.graph.nodes)


# --- the command line --------------------------------------------------------------------------

def test_command_line_runs_a_saved_gradient_like_python(tmp_path):
    def loss(params, x, *, scale):
        return scale * np.sum(np.tanh(x @ params["w"] + params["b"]) ** 2)
    params = {"w": np.full((3, 2), 0.1), "b": np.zeros(2)}
    x = np.linspace(0, 1, 12).reshape(4, 3)
    program = ad.value_and_grad(ad.stage(loss, params, x, kw_specs={
        "scale": ad.ArraySpec((), "float64", weak=True)}), argnums=(0, 1), argnames=("scale",))
    path = tmp_path / "vg.json"
    path.write_text(json.dumps(program.to_dict()))
    np.savez(tmp_path / "params.npz", **params)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "scale.npy", np.asarray(2))  # an int fits the Python float slot
    out = tmp_path / "out.npz"
    run = subprocess.run([sys.executable, "-m", "advect", "run", str(path),
                          f"--input=arg0={tmp_path / 'params.npz'}",
                          f"--input=arg1={tmp_path / 'x.npy'}",
                          f"--input=scale={tmp_path / 'scale.npy'}", "--output", str(out)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    value, ((g_params, g_x), g_kw) = program(params, x, scale=2)
    with np.load(out) as saved:
        assert saved["output.0"].tobytes() == np.asarray(value).tobytes()
        assert saved["output.1.0.0.w"].tobytes() == g_params["w"].tobytes()
        assert saved["output.1.0.1"].tobytes() == g_x.tobytes()
        assert saved["output.1.1.scale"] == g_kw["scale"]


def test_command_line_says_when_a_program_has_no_outputs(tmp_path, capsys):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(ad.stage(lambda x: (), np.ones(2)).to_dict()))
    np.save(tmp_path / "x.npy", np.ones(2))
    assert main(["run", str(path), "--input", f"arg0={tmp_path / 'x.npy'}",
                 "--output", str(tmp_path / "o.npz")]) == 0
    assert capsys.readouterr().out == f"wrote no outputs to {tmp_path / 'o.npz'}\n"
    with np.load(tmp_path / "o.npz") as saved:
        assert saved.files == []


# --- static leaves inside differentiated inputs -----------------------------------------------

def _configured(p, x, *, mode):
    return np.sum(p["w"] * x) * (2.0 if p["act"] == "double" else 1.0) * (mode == "on")


_CONFIG = {"w": np.array([1.0, 2.0]), "act": "double"}


@pytest.mark.parametrize("derive", ["grad", "value_and_grad", "vjp_program"])
@pytest.mark.parametrize("selection", [{}, {"argnums": (0, 1)}, {"argnames": ("mode",)},
                                       {"argnums": 0, "argnames": ("mode",)}])
def test_static_strings_in_a_selected_input_get_none_as_with_grad(derive, selection):
    # before, a staged derivative refused any selected static value, while dynamic grad gives
    # a non-array leaf (a configuration string) a None gradient
    program = ad.stage(_configured, {"w": np.ones(2), "act": ad.StaticSpec("double")},
                       np.ones(2), kw_specs={"mode": ad.StaticSpec("on")})
    x = np.array([0.5, -1.0])
    extra = {"cotangent": np.float64(1.0)} if derive == "vjp_program" else {}
    if derive == "vjp_program":
        def expected_fn(p, x, *, mode):
            return ad.grad(_configured, **selection)(p, x, mode=mode)
    else:
        expected_fn = getattr(ad, derive)(_configured, **selection)
    expected = expected_fn(_CONFIG, x, mode="on")
    derived = getattr(ad, derive)(program, **selection)
    for candidate in (derived, ad.StagedProgram.from_dict(json.loads(json.dumps(
            derived.to_dict())))):
        assert _fingerprint(candidate(_CONFIG, x, mode="on", **extra)) == _fingerprint(expected)


@pytest.mark.parametrize("static", [3, 2.5, (1, "a"), np.float64(1.0)])
def test_a_selected_static_number_still_says_how_to_differentiate_it(static):
    program = ad.stage(lambda x, s: x * 2.0, np.ones(2), ad.StaticSpec(static))
    for derive in (ad.grad, ad.value_and_grad, ad.vjp_program):
        with pytest.raises(TypeError, match="ArraySpec"):
            derive(program, argnums=1)

"""Probe of saving, restoring and the command line: regressions an audit found.

Each row is a payload ``from_dict`` must refuse with a ``PayloadError`` (never a bare
``TypeError`` from a hash or a sort), a program whose saved form must load again (or be refused
by ``to_dict`` with a ``TypeError``, never written and then refused by ``from_dict``), or a
command-line case that must end in one line on standard error.
"""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import advect as ad
from advect.cli import main
from advect.errors import PayloadError


def _round_trip(program):
    return ad.StagedProgram.from_dict(json.loads(json.dumps(program.to_dict())))


def _same(a, b):
    la, da = ad.pytree.tree_flatten(a)
    lb, db = ad.pytree.tree_flatten(b)
    assert da == db
    for x, y in zip(la, lb):
        assert type(x) is type(y)
        assert np.asarray(x).dtype == np.asarray(y).dtype
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


def _pair_payload():
    program = ad.stage(lambda d: d["a"] * d["b"], {"a": np.ones(2), "b": np.ones(2)})
    return json.loads(json.dumps(program.to_dict()))


def _dict_output_payload():
    program = ad.stage(lambda x: {"a": x, "b": x + 1}, np.ones(2))
    return json.loads(json.dumps(program.to_dict()))


# --- malformed payloads: a PayloadError naming the field, not a bare TypeError ----------------

def _edit_signature_leaf(payload, leaf):
    payload["signature"]["positional"][0]["dict"][0][1] = leaf


@pytest.mark.parametrize("edit", [
    lambda p: _edit_signature_leaf(p, {"weak": []}),  # unhashable: `in` a dict raised
    lambda p: _edit_signature_leaf(p, {"weak": {"a": 1}}),
    lambda p: _edit_signature_leaf(p, {"shape": [2], "dtype": {}}),
    lambda p: _edit_signature_leaf(p, {"shape": [2], "dtype": ["float64"]}),
    lambda p: p["graph"]["constants"].append(
        {"dtype": [], "shape": [], "data": "", "origin": "captured"}),
    # dict keys of two types cannot be sorted into a pytree; a key given twice is ambiguous
    lambda p: p["signature"]["positional"][0]["dict"][0].__setitem__(0, 1),
    lambda p: p["signature"]["positional"][0]["dict"][1].__setitem__(0, "a"),
], ids=["weak-list", "weak-dict", "dtype-dict", "dtype-list", "constant-dtype-list",
        "signature-mixed-keys", "signature-duplicate-keys"])
def test_malformed_signatures_and_constants_are_payload_errors(edit):
    payload = _pair_payload()
    edit(payload)
    with pytest.raises(PayloadError):
        ad.StagedProgram.from_dict(payload)


@pytest.mark.parametrize("key", [1, "a"], ids=["mixed-keys", "duplicate-keys"])
def test_output_dicts_with_mixed_or_repeated_keys_are_refused(key):
    payload = _dict_output_payload()
    payload["outputs"]["tree"]["dict"][1][0] = key  # loaded before as {"a": .., 1: ..}
    with pytest.raises(PayloadError, match="dict keys"):
        ad.StagedProgram.from_dict(payload)


# --- what to_dict writes, from_dict loads -----------------------------------------------------

@ad.primitive(name="tests.probe_saved.twice", static_argnames=("k",))
def twice(x, k=None):
    return x * 2


@twice.def_abstract
def _(x, k=None):
    return x.spec


@pytest.mark.parametrize("k", [2 ** 70, -(2 ** 64), (1, 2 ** 80)])
def test_primitive_static_ints_beyond_int64_round_trip(k):
    program = ad.stage(lambda x: twice(x, k=k), np.ones(2))
    restored = _round_trip(program)
    assert str(restored) == str(program) and restored.to_dict() == program.to_dict()
    _same(restored(np.ones(2)), program(np.ones(2)))


def _nested(value, depth, kind=tuple):
    for _ in range(depth):
        value = (value,) if kind is tuple else [value]
    return value


_DEEP = {
    "static-spec": lambda d: ad.stage(lambda x, s: x * 2, np.ones(2),
                                      ad.StaticSpec(_nested(1, d))),
    "static-spec-list": lambda d: ad.stage(lambda x, s: x * 2, np.ones(2),
                                           ad.StaticSpec(_nested(1j, d, list))),
    "static-output": lambda d: ad.stage(lambda x: (x, ad.pytree.static(_nested(1, d, list))),
                                        np.ones(2)),
    "signature-tree": lambda d: ad.stage(lambda t: 2.0, _nested(np.ones(2), d)),
    "output-tree": lambda d: ad.stage(lambda x: _nested(x, d), np.ones(2)),
    "primitive-static": lambda d: ad.stage(lambda x: twice(x, k=_nested(1, d)), np.ones(2)),
}


@pytest.mark.parametrize("name", sorted(_DEEP))
def test_deeply_nested_values_save_only_what_loads(name):
    # before, to_dict wrote payloads nested deeper than from_dict reads (the primitive's
    # static values already failed to load from 16 levels)
    for depth in range(14, 72):
        program = _DEEP[name](depth)
        try:
            payload = json.loads(json.dumps(program.to_dict()))
        except TypeError as exc:
            assert "nested more than 64 levels" in str(exc)
            assert depth > 55, f"{name}: refused at depth {depth}"
            return
        _round_trip(program)  # never a PayloadError for what to_dict wrote
        assert ad.StagedProgram.from_dict(payload).to_dict() == payload
    pytest.fail(f"{name}: to_dict never refused a value nested 71 levels deep")


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "complex64"])
@pytest.mark.parametrize("fn", [
    lambda x: x * 2 ** 70, lambda x: 2 ** 64 - x, lambda x: x - (-2 ** 63 - 1),
    lambda x: np.where(x > 0, 2 ** 70, x), lambda x: np.maximum(x.real, 2 ** 70),
    lambda x: x.real > 2 ** 70, lambda x: np.clip(x.real, -2 ** 70, 2 ** 70),
    lambda x: x * 10 ** 300,
], ids=["mul", "rsub", "sub-neg", "where", "maximum", "greater", "clip", "huge"])
def test_int_literals_beyond_int64_on_float_arrays_round_trip(fn, dtype):
    # NumPy converts such a Python int to the float dtype; the loader refused every one
    x = np.linspace(-1.0, 1.0, 4).astype(dtype)
    with np.errstate(all="ignore"):
        program = ad.stage(fn, x)
        restored = _round_trip(program)
        assert str(restored) == str(program)
        _same(restored(x), program(x))


def test_int_literals_beyond_int64_still_refused_on_integer_arrays():
    program = ad.stage(lambda x: x > 2 ** 70, np.ones(3))
    payload = json.loads(json.dumps(program.to_dict()))
    payload["signature"]["positional"][0]["dtype"] = "int64"
    with pytest.raises(PayloadError, match="beyond int64"):
        ad.StagedProgram.from_dict(payload)
    payload["graph"]["nodes"][0][1][1] = {"int": 1 << 2000}  # never converted to text
    with pytest.raises(PayloadError, match="literal"):
        ad.StagedProgram.from_dict(payload)


def test_a_program_with_xarray_inputs_unpickles_in_a_fresh_process():
    xr = pytest.importorskip("xarray")
    import advect.xarray  # noqa: F401  (registers the saved nodes)

    da = xr.DataArray(np.arange(3.0), dims=("x",), attrs={"units": "K"})
    blob = pickle.dumps(ad.stage(lambda d: d * 2, da))
    code = textwrap.dedent("""
        import pickle, sys
        import numpy as np, xarray as xr
        program = pickle.loads(sys.stdin.buffer.read())  # imports advect.xarray first
        out = program(xr.DataArray(np.arange(3.0), dims=("x",), attrs={"units": "K"}))
        print(out.values.tolist(), out.attrs)
    """)
    done = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True,
                          timeout=120, env=dict(os.environ))
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().strip() == "[0.0, 2.0, 4.0] {'units': 'K'}"


# --- the command line ---------------------------------------------------------------------------

@pytest.fixture
def cli(capsys):
    def run(*args: str):
        status = main(list(args))
        captured = capsys.readouterr()
        return status, captured.out, captured.err
    return run


@pytest.mark.parametrize("text, reason", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"a": ' + "9" * 5000 + "}", "invalid JSON"),  # int() refuses 4300+ digits
], ids=["deep", "huge-int"])
def test_json_that_python_cannot_read_is_one_line(cli, tmp_path, text, reason):
    path = tmp_path / "bad.json"
    path.write_text(text)
    for command in ("check", "inspect", "dot"):
        status, out, err = cli(command, str(path))
        assert status == 1 and out == ""
        assert reason in err and len(err.strip().splitlines()) == 1


def test_a_name_with_a_lone_surrogate_is_printed_escaped(tmp_path):
    program = ad.stage(lambda d: d["\ud800"] * 2, {"\ud800": np.ones(2)})
    path = tmp_path / "surrogate.json"
    path.write_text(json.dumps(program.to_dict()))  # ASCII: "\\ud800"
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}  # strict errors, as in a UTF-8 locale
    for command in ("check", "inspect", "dot"):
        done = subprocess.run([sys.executable, "-m", "advect", command, str(path)],
                              capture_output=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        assert b"Traceback" not in done.stderr
        assert command == "check" or b"\\ud800" in done.stdout  # the key, escaped
    status = main(["dot", str(path), "-o", str(tmp_path / "g.dot")])
    assert status == 0 and "\\ud800" in (tmp_path / "g.dot").read_text()


def test_run_refuses_an_input_name_that_stands_for_two_leaves(cli, tmp_path):
    program = ad.stage(lambda d: d["a.b"] - d["a"]["b"],
                       {"a.b": np.ones(2), "a": {"b": np.ones(2)}})
    path = tmp_path / "p.json"
    path.write_text(json.dumps(program.to_dict()))
    np.save(tmp_path / "x.npy", np.ones(2))
    # before, one file fed both leaves and the run "succeeded"
    status, out, err = cli("run", str(path), "--input", f"arg0.a.b={tmp_path / 'x.npy'}")
    assert status == 1 and out == ""
    assert "arg0.a.b" in err and "several leaves" in err and len(err.splitlines()) == 1

"""The command line for saved programs. The main paths run as a user would, ``python -m
advect ...`` in a subprocess; the error cases call the same ``main`` in process (fast)."""

import json
import subprocess
import sys

import numpy as np
import pytest

import advect as ad
from advect.cli import main


class _Result:
    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def _advect(*args: str):
    return subprocess.run([sys.executable, "-m", "advect", *args], capture_output=True,
                          text=True, timeout=120)


@pytest.fixture
def cli(capsys):
    def run(*args: str) -> _Result:
        try:
            status = main(list(args))
        except SystemExit as exit_:  # argparse: --help and usage errors
            status = exit_.code
        captured = capsys.readouterr()
        return _Result(status, captured.out, captured.err)
    return run


def _model(x, params, scale=1.0):
    return {"loss": np.sum(np.sin(x) * params["w"]) * scale, "peak": np.max(x)}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("cli")
    program = ad.stage(_model, np.ones(3), {"w": np.ones(3)},
                       kw_specs={"scale": ad.ArraySpec((), "float64", weak=True)})
    path = folder / "model.json"
    path.write_text(json.dumps(program.to_dict()))
    return folder, path, program


def test_check_accepts_a_saved_program(saved):
    _, path, _ = saved
    result = _advect("check", str(path))
    assert result.returncode == 0, result.stderr
    program = saved[2]
    assert result.stdout == (f"ok: _model, {len(program.graph.nodes)} nodes, schema 3, "
                             f"Array API {program.array_api_version}\n")


@pytest.mark.parametrize("content, reason", [
    ("{not json", "invalid JSON"),
    ('{"format": "advect.staged_program", "schema_version": 2}', "schema"),
    ("[1, 2]", "expected a dict"),
])
def test_check_refuses_a_bad_file_in_one_line(cli, saved, content, reason):
    folder, _, _ = saved
    bad = folder / "bad.json"
    bad.write_text(content)
    result = cli("check", str(bad))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert result.stderr.startswith(f"advect check: {bad}: ") and reason in result.stderr


def test_check_refuses_a_tampered_graph(cli, saved):
    folder, path, _ = saved
    payload = json.loads(path.read_text())
    payload["graph"]["nodes"][0][0] = "no_such_op"
    bad = folder / "tampered.json"
    bad.write_text(json.dumps(payload))
    result = cli("check", str(bad))
    assert result.returncode == 1 and "no_such_op" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_missing_file_is_a_usage_error(cli, saved):
    folder, _, _ = saved
    result = cli("inspect", str(folder / "absent.json"))
    assert result.returncode == 2 and "no such file" in result.stderr


def test_inspect_prints_signature_outputs_report_constants_and_listing(saved):
    _, path, program = saved
    result = _advect("inspect", str(path))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for line in ["program: _model", "saved by: advect 0.3.0, schema 3",
                 f"Array API revision: {program.array_api_version}",
                 "  arg0: float64[3]", "  arg1.w: float64[3]", "  scale: Python float",
                 "  output.loss: float64[]", "  output.peak: float64[]",
                 f"optimization: {program.optimization.nodes_before} -> "
                 f"{program.optimization.nodes_after} nodes", "  cse: ", "constants: 0",
                 f"graph ({len(program.graph.nodes)} nodes):", "  %3 = sin(%0)  float64[3]"]:
        assert line in out, line


def test_run_takes_npy_and_npz_inputs_and_writes_npz(saved):
    folder, path, program = saved
    x = np.array([0.1, 0.7, -0.4])
    np.save(folder / "x.npy", x)
    np.savez(folder / "params.npz", w=np.array([1.0, 2.0, 3.0]))
    np.save(folder / "scale.npy", np.array(0.5))
    out = folder / "out.npz"
    result = _advect("run", str(path), "--input", f"arg0={folder / 'x.npy'}",
                     "--input", f"arg1={folder / 'params.npz'}",
                     "--input", f"scale={folder / 'scale.npy'}", "--output", str(out))
    assert result.returncode == 0, result.stderr
    expected = _model(x, {"w": np.array([1.0, 2.0, 3.0])}, scale=0.5)
    with np.load(out) as saved_outputs:
        assert sorted(saved_outputs.files) == ["output.loss", "output.peak"]
        np.testing.assert_allclose(saved_outputs["output.loss"], expected["loss"], rtol=1e-15)
        np.testing.assert_allclose(saved_outputs["output.peak"], expected["peak"])


def test_run_prints_outputs_and_takes_one_npz_of_full_names(cli, saved):
    folder, path, _ = saved
    np.savez(folder / "all.npz", **{"arg0": np.zeros(3), "arg1.w": np.ones(3),
                                    "scale": np.array(1.0)})
    result = cli("run", str(path), "--input", str(folder / "all.npz"))
    assert result.returncode == 0, result.stderr
    assert "output.loss = array(0.)" in result.stdout


def test_run_names_a_missing_input(cli, saved):
    folder, path, _ = saved
    np.save(folder / "x.npy", np.zeros(3))
    result = cli("run", str(path), "--input", f"arg0={folder / 'x.npy'}")
    assert result.returncode == 2
    assert "missing input 'arg1.w' (float64[3]); pass --input arg1.w=FILE.npy" in result.stderr


def test_run_names_an_unknown_input(cli, saved):
    folder, path, _ = saved
    np.savez(folder / "extra.npz", **{"arg0": np.zeros(3), "arg1.w": np.ones(3),
                                      "scale": np.array(1.0), "arg7": np.ones(1)})
    result = cli("run", str(path), "--input", str(folder / "extra.npz"))
    assert result.returncode == 2 and "unknown input 'arg7'" in result.stderr


def test_run_reports_a_shape_mismatch_without_traceback(saved):
    folder, path, _ = saved
    np.savez(folder / "wrong.npz", **{"arg0": np.zeros(4), "arg1.w": np.ones(3),
                                      "scale": np.array(1.0)})
    result = _advect("run", str(path), "--input", str(folder / "wrong.npz"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "the inputs do not fit the program" in result.stderr and "(4,)" in result.stderr


def test_run_refuses_a_file_that_is_not_numpy(cli, saved):
    folder, path, _ = saved
    fake = folder / "fake.npy"
    fake.write_text("hello")
    result = cli("run", str(path), "--input", f"arg0={fake}")
    assert result.returncode == 1 and "is not a .npy or .npz file" in result.stderr


def test_dot_writes_graphviz_text(cli, saved):
    folder, path, program = saved
    result = _advect("dot", str(path))
    assert result.returncode == 0 and result.stdout == program.to_dot()
    target = folder / "model.dot"
    assert cli("dot", str(path), "-o", str(target)).returncode == 0
    assert target.read_text() == program.to_dot()


@pytest.mark.parametrize("command", ["inspect", "check", "run", "dot"])
def test_every_command_has_help(cli, command):
    result = cli(command, "--help")
    assert result.returncode == 0
    assert "PROGRAM.json" in result.stdout and "--import" in result.stdout


def test_no_command_is_a_usage_error(cli):
    result = cli()
    assert result.returncode == 2 and "inspect|check|run|dot" in result.stderr


def test_import_option_reports_a_missing_module(cli, saved):
    _, path, _ = saved
    result = cli("check", str(path), "--import", "no_such_module_for_advect")
    assert result.returncode == 2 and "--import no_such_module_for_advect" in result.stderr


_PRIMITIVE_MODULE = '''
import numpy as np
import advect as ad


@ad.primitive(name="advect_cli_test.twice")
def twice(x):
    return 2.0 * x


@twice.def_abstract
def _(x):
    return x.spec
'''


_SAVE_PROGRAM = """
import json, sys
import numpy as np
import advect as ad
import cli_test_primitives
program = ad.stage(lambda x: cli_test_primitives.twice(x) + 1.0, np.ones(2))
print(json.dumps(program.to_dict()))
"""


def test_import_registers_the_primitives_a_program_uses(tmp_path, monkeypatch):
    # the primitive is registered only in subprocesses: this process's registry stays as it is
    (tmp_path / "cli_test_primitives.py").write_text(_PRIMITIVE_MODULE)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    saved = subprocess.run([sys.executable, "-c", _SAVE_PROGRAM], capture_output=True,
                           text=True, timeout=120, check=True)
    path = tmp_path / "custom.json"
    path.write_text(saved.stdout)
    missing = _advect("check", str(path))
    assert missing.returncode == 1 and "advect_cli_test.twice" in missing.stderr
    assert "--import MODULE" in missing.stderr
    found = _advect("check", str(path), "--import", "cli_test_primitives")
    assert found.returncode == 0, found.stderr

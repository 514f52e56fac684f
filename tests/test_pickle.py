"""Staged programs pickle through their saved form into equal programs in other processes
(issue 17 item 1): derived programs too, and programs with custom primitives whose module the
other process can import (a clear error when it cannot)."""

import copy
import importlib
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import advect as ad

X = np.linspace(-1.0, 1.0, 6)
TABLE = np.arange(6.0)


def _loss(x):
    return np.sum(np.sin(x) ** 2 * TABLE)


def _programs() -> dict:
    base = ad.stage(_loss, X)
    return {
        "base": (base, (X,), {}),
        "grad": (ad.grad(base), (X,), {}),
        "value_and_grad": (ad.value_and_grad(base), (X,), {}),
        "vjp_program": (ad.vjp_program(ad.stage(lambda x: np.tanh(x) * TABLE, X)), (X,),
                        {"cotangent": np.ones(6)}),
    }


_WORKER = textwrap.dedent("""
    import pickle, sys
    programs, arguments = pickle.loads(sys.stdin.buffer.read())
    out = {name: (program.to_dict(), program(*arguments[name][0], **arguments[name][1]))
           for name, program in programs.items()}
    sys.stdout.buffer.write(pickle.dumps(out))
""")


def _in_another_process(blob: bytes, pythonpath: str | None = None):
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", _WORKER], input=blob, capture_output=True,
                          env=env, timeout=120)
    return done.returncode, done.stdout, done.stderr.decode()


def test_programs_pickle_into_equal_programs_in_another_process():
    programs = _programs()
    blob = pickle.dumps(({k: p for k, (p, _, _) in programs.items()},
                         {k: (a, kw) for k, (_, a, kw) in programs.items()}))
    # only the saved form travels (the programs' names are data in it): no closures, nothing
    # of this module, no user function for the unpickler to import
    assert b"_restore" in blob and b"test_pickle" not in blob and b"__main__" not in blob
    code, out, err = _in_another_process(blob)
    assert code == 0, err
    remote = pickle.loads(out)
    for name, (program, args, kwargs) in programs.items():
        payload, value = remote[name]
        assert payload == program.to_dict(), name
        local = program(*args, **kwargs)
        for a, b in zip(ad.pytree.tree_leaves(value), ad.pytree.tree_leaves(local)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", ["base", "grad", "value_and_grad", "vjp_program"])
def test_pickled_copied_and_deep_copied_programs_behave_as_the_original(name):
    program, args, kwargs = _programs()[name]
    restored = pickle.loads(pickle.dumps(program))
    assert type(restored) is ad.StagedProgram and restored.to_dict() == program.to_dict()
    assert restored.constants == program.constants
    assert copy.copy(program) is program and copy.deepcopy(program) is program  # immutable
    assert copy.deepcopy({"p": program})["p"] is program
    for a, b in zip(ad.pytree.tree_leaves(restored(*args, **kwargs)),
                    ad.pytree.tree_leaves(program(*args, **kwargs))):
        np.testing.assert_array_equal(a, b)


_PRIMITIVE_MODULE = textwrap.dedent("""
    import numpy as np
    import advect as ad

    @ad.primitive
    def cube(x):
        return x ** 3

    @cube.def_abstract
    def _(x):
        return x.spec

    @cube.def_jvp
    def _(output, primals, tangents):
        return 3 * primals[0] ** 2 * tangents[0]
""")


@pytest.fixture
def primitive_module(tmp_path):
    name = f"pickle_primitives_{os.getpid()}"
    (tmp_path / f"{name}.py").write_text(_PRIMITIVE_MODULE)
    sys.path.insert(0, str(tmp_path))
    try:
        yield importlib.import_module(name), str(tmp_path)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)


def test_programs_with_custom_primitives_travel_where_their_module_imports(primitive_module):
    module, folder = primitive_module
    program = ad.stage(lambda x: np.sum(module.cube(x)), X)
    gradient = ad.grad(program)
    blob = pickle.dumps(({"program": program, "gradient": gradient},
                         {"program": ((X,), {}), "gradient": ((X,), {})}))
    code, out, err = _in_another_process(blob, pythonpath=folder)
    assert code == 0, err
    remote = pickle.loads(out)
    np.testing.assert_allclose(remote["program"][1], np.sum(X ** 3), rtol=1e-14)
    np.testing.assert_allclose(remote["gradient"][1], 3 * X ** 2, rtol=1e-14)
    assert remote["gradient"][0] == gradient.to_dict()
    # without the module on the path, the error names the primitive, the module and the fix
    code, _, err = _in_another_process(blob)
    assert code != 0
    assert "UnregisteredOpError" in err and module.__name__ in err and "importable" in err
    assert module.cube.name in err


def test_a_primitive_of_an_unimportable_module_is_a_clear_error_on_unpickling():
    from advect.staging.program import _restore

    payload = ad.stage(lambda x: x * 2, X).to_dict()
    with pytest.raises(ad.errors.UnregisteredOpError, match="no_such_module.*importable"):
        _restore(payload, (("no_such_module.cube", "no_such_module_for_advect_tests"),))
    payload["graph"]["nodes"][0][0] = "elsewhere.cube"
    with pytest.raises(ad.errors.UnregisteredOpError, match="__main__"):
        _restore(payload, (("elsewhere.cube", "__main__"),))

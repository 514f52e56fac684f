"""The command line for saved programs: ``advect inspect | check | run | dot PROGRAM.json``.

A saved program is the JSON text of :meth:`StagedProgram.to_dict`. Every command loads it
through :meth:`StagedProgram.from_dict`, which validates every field and never imports or
evaluates anything named in the file; ``--import MODULE`` imports a module you name first (one
that registers the custom primitives a program uses).

Inputs and outputs are named by their place in the signature, with dots: positional arguments
are ``arg0``, ``arg1``, ..., keyword arguments by their name, and leaves inside a container add
their key or index (``arg1.w``, ``options.0``). ``advect inspect`` lists the names.

Exit status: 0 success, 1 an invalid program, input file or call (the reason is printed on
standard error, without a traceback), 2 a usage error.

Example:
    >>> import json, os, tempfile, numpy as np, advect as ad
    >>> from advect.cli import main
    >>> program = ad.stage(lambda x: 2 * x, np.ones(2))
    >>> path = os.path.join(tempfile.mkdtemp(), "double.json")
    >>> with open(path, "w") as f:
    ...     json.dump(program.to_dict(), f)
    >>> main(["check", path])
    ok: <lambda>, 1 node, schema 3, Array API ...
    0
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .errors import UnregisteredOpError
from .pytree import tree_flatten_with_paths, tree_unflatten
from .staging.program import StagedProgram
from .staging.specs import PYTHON_SCALAR, ArraySpec, StaticSpec, is_spec

__all__ = ["main", "leaf_names"]


class CommandError(Exception):
    """A failure to report in one line: ``status`` 1 (invalid data) or 2 (usage)."""

    def __init__(self, message: str, status: int = 1):
        super().__init__(message)
        self.status = status


# --- names of leaves ---------------------------------------------------------------------------

def _dotted(path: tuple) -> str:
    return ".".join(str(k) for k in path)


def leaf_names(signature: tuple[tuple, dict]) -> list[tuple[str, Any]]:
    """``(name, spec)`` for every leaf of a program's signature, in call order.

    Example:
        >>> import numpy as np, advect as ad
        >>> program = ad.stage(lambda x, p: x * p["w"], np.ones(2), {"w": np.ones(2)})
        >>> [name for name, _ in leaf_names(program.signature)]
        ['arg0', 'arg1.w']
    """
    pos, kw = signature
    out = []
    for path, spec in tree_flatten_with_paths((tuple(pos), dict(kw)), is_leaf=is_spec)[0]:
        head = f"arg{path[1]}" if path[0] == 0 else str(path[1])
        out.append((_dotted((head, *path[2:])), spec))
    return out


def _spec_text(spec) -> str:
    if isinstance(spec, StaticSpec):
        return f"static {spec.value!r}"
    if spec.weak:
        return f"Python {PYTHON_SCALAR[spec.dtype.kind].__name__}"
    dims = ",".join(map(str, spec.shape))
    return f"{spec.dtype.name}[{dims}]" + ("" if spec.device is None else f" on {spec.device}")


# --- loading -----------------------------------------------------------------------------------

def _load(path: str, modules: Sequence[str]) -> tuple[StagedProgram, dict]:
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as exc:  # the module's own failure, reported in one line
            raise CommandError(f"--import {name}: {type(exc).__name__}: {exc}", 2) from None
    file = Path(path)
    if not file.is_file():
        raise CommandError(f"{path}: no such file", 2)
    try:
        payload = json.loads(file.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise CommandError(f"{path}: not a saved program (not UTF-8 text)") from None
    except RecursionError:
        raise CommandError(f"{path}: not a saved program (JSON nested too deeply)") from None
    except ValueError as exc:  # invalid JSON, or an int literal of thousands of digits
        raise CommandError(f"{path}: not a saved program (invalid JSON: {exc})") from None
    try:
        return StagedProgram.from_dict(payload), payload
    except UnregisteredOpError as exc:
        raise CommandError(f"{path}: {exc} (from the command line: --import MODULE, the "
                           "module that defines it)") from None
    except (ValueError, TypeError) as exc:  # PayloadError and its kinds are ValueErrors
        raise CommandError(f"{path}: {exc}") from None


# --- commands ----------------------------------------------------------------------------------

def _inspect(args) -> None:
    program, payload = _load(args.program, args.modules)
    graph = program.graph
    print(f"program: {payload['name']}")
    print(f"saved by: advect {payload['advect_version']}, schema {payload['schema_version']}")
    print(f"Array API revision: {program.array_api_version}")
    print("inputs:")
    for name, spec in leaf_names(program.signature):
        print(f"  {name}: {_spec_text(spec)}")
    print("outputs:")
    outputs = tree_flatten_with_paths(program.output_specs, is_leaf=is_spec)[0]
    for path, spec in outputs:
        print(f"  {_dotted(('output', *path))}: {_spec_text(spec)}")
    report = program.optimization
    print(f"optimization: {report.nodes_before} -> {report.nodes_after} nodes")
    for p in report.passes:
        print(f"  {p.name}: {p.nodes_before} -> {p.nodes_after}")
    print(f"constants: {len(program.constants)}")
    for c in program.constants:
        dims = ",".join(map(str, c.shape))
        print(f"  %{c.value_id}: {c.dtype.name}[{dims}] ({c.origin}, {c.value.nbytes} bytes)")
    print(f"graph ({len(graph.nodes)} nodes):")
    for line in str(program).splitlines():
        print(f"  {line}")


def _check(args) -> None:
    program, payload = _load(args.program, args.modules)
    nodes = len(program.graph.nodes)
    print(f"ok: {payload['name']}, {nodes} node{'s' * (nodes != 1)}, "
          f"schema {payload['schema_version']}, Array API {program.array_api_version}")


def _dot(args) -> None:
    text = _load(args.program, args.modules)[0].to_dot()
    if args.output is None:
        sys.stdout.write(text)
    else:
        try:
            Path(args.output).write_text(text, encoding="utf-8", errors="backslashreplace")
        except OSError as exc:
            raise CommandError(f"-o {args.output}: cannot write ({exc.strerror or exc})"
                               ) from None


def _read_inputs(entries: Sequence[str]) -> dict[str, np.ndarray]:
    """Arrays by leaf name from ``NAME=FILE.npy``, ``NAME=FILE.npz`` (its keys are names below
    NAME) and ``FILE.npz`` (its keys are full names)."""
    found: dict[str, np.ndarray] = {}

    def put(name: str, array: np.ndarray, where: str) -> None:
        if name in found:
            raise CommandError(f"--input: {name!r} is given twice (again by {where})", 2)
        found[name] = array

    for entry in entries:
        name, sep, file = entry.partition("=")
        if not sep:
            name, file = "", entry
        if not Path(file).is_file():
            raise CommandError(f"--input {entry}: no such file {file!r}", 2)
        try:
            data = np.load(file, allow_pickle=False)
        except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
            raise CommandError(f"--input {entry}: {file!r} is not a .npy or .npz file of "
                               f"plain arrays ({exc})") from None
        if isinstance(data, np.ndarray):
            if not name:
                raise CommandError(f"--input {entry}: a .npy file needs a name: "
                                   f"--input NAME={file}", 2)
            put(name, data, entry)
            continue
        with data:
            for key in data.files:
                put(f"{name}.{key}" if name else key, data[key], entry)
    return found


def _argument(name: str, spec, array: np.ndarray):
    if not spec.weak:
        return array
    if array.shape != ():
        raise CommandError(f"input {name!r}: the program takes a Python "
                           f"{PYTHON_SCALAR[spec.dtype.kind].__name__}; give a 0-d array, "
                           f"not one of shape {array.shape}")
    kind = PYTHON_SCALAR[spec.dtype.kind]
    if array.dtype.kind not in _WEAK_SOURCES[spec.dtype.kind]:
        # as a Python call: an int fits a float slot, but a float is never truncated to an int
        raise CommandError(f"input {name!r}: the program takes a Python {kind.__name__}; a "
                           f"0-d {array.dtype} array does not convert to one exactly")
    return kind(array.item())


# the .npy dtype kinds a weak (Python scalar) slot of each kind takes, as the call contract does
_WEAK_SOURCES = {"b": "b", "i": "iu", "u": "iu", "f": "fiu", "c": "cfiu"}


def _run(args) -> None:
    program = _load(args.program, args.modules)[0]
    arrays = _read_inputs(args.inputs)
    names = leaf_names(program.signature)
    known = [n for n, s in names if isinstance(s, ArraySpec)]
    twice = sorted({n for n in known if known.count(n) > 1}) if len(set(known)) < len(known) \
        else []
    if twice:  # a dict key with a dot: {"a.b": x} and {"a": {"b": y}} are both `arg0.a.b`
        raise CommandError(f"the input name {twice[0]!r} stands for several leaves (a dict key "
                           "holds a dot), so they cannot be given separately here; call the "
                           "program from Python")
    unknown = sorted(set(arrays) - set(known))
    if unknown:  # before the missing ones: `arg1=FILE.npy` for a container is named as such
        raise CommandError(f"unknown input {unknown[0]!r}; the program's inputs are: "
                           f"{', '.join(known) or 'none'}", 2)
    leaves = []
    for name, spec in names:
        if isinstance(spec, StaticSpec):
            leaves.append(spec.value)  # compile-time values are part of the program
            continue
        if name not in arrays:
            raise CommandError(f"missing input {name!r} ({_spec_text(spec)}); pass "
                               f"--input {name}=FILE.npy", 2)
        leaves.append(_argument(name, spec, arrays[name]))
    pos, kw = tree_unflatten(_signature_def(program), leaves)
    try:
        result = program(*pos, **kw)
    except (ValueError, TypeError) as exc:  # the call contract's message names the leaf
        raise CommandError(f"the inputs do not fit the program: {exc}") from None
    except Exception as exc:  # a failure inside the provider's kernels, in one line
        raise CommandError(f"running the program failed: {type(exc).__name__}: {exc}") from None
    outputs = {_dotted(("output", *path)): np.asarray(leaf)
               for path, leaf in tree_flatten_with_paths(result)[0]}
    if args.output is None:
        with np.printoptions(threshold=20):
            for name, value in outputs.items():
                print(f"{name} = {value!r}")
        return
    try:
        with open(args.output, "wb") as file:  # this very path (np.savez(name) appends .npz)
            np.savez(file, **outputs)
    except OSError as exc:
        raise CommandError(f"--output {args.output}: cannot write ({exc.strerror or exc})"
                           ) from None
    print(f"wrote {', '.join(outputs) or 'no outputs'} to {args.output}")


def _signature_def(program: StagedProgram):
    pos, kw = program.signature
    return tree_flatten_with_paths((tuple(pos), dict(kw)), is_leaf=is_spec)[1]


# --- the parser --------------------------------------------------------------------------------

def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="advect", description="Inspect, check, run and draw saved Advect programs "
        "(the JSON text of StagedProgram.to_dict()).",
        epilog="Exit status: 0 success, 1 an invalid program, input or call, 2 a usage error.")
    commands = parser.add_subparsers(dest="command", metavar="inspect|check|run|dot", required=True)

    def command(name: str, help_text: str, handler) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument("program", metavar="PROGRAM.json", help="a saved program")
        sub.add_argument("--import", dest="modules", metavar="MODULE", action="append",
                         default=[], help="import MODULE first (one that registers the custom "
                         "primitives the program uses); repeatable")
        sub.set_defaults(handler=handler)
        return sub

    command("inspect", "Print the signature (input names), output specs, schema and Array API "
            "revision, optimization report, constants and the SSA listing.", _inspect)
    command("check", "Validate a saved program: exit status 0 and 'ok', or 1 and the reason.",
            _check)
    run = command("run", "Run a saved program on .npy/.npz inputs; print the outputs or save "
                  "them to an .npz file.", _run)
    run.add_argument("--input", dest="inputs", action="append", default=[],
                     metavar="NAME=FILE.npy", help="an input by its name (see 'advect inspect'):"
                     " NAME=FILE.npy, NAME=FILE.npz (its keys name the leaves below NAME) or "
                     "FILE.npz (its keys are full names); repeatable")
    run.add_argument("--output", metavar="OUT.npz", help="save the outputs here (keys "
                     "'output', 'output.0', 'output.loss', ...) instead of printing them")
    dot = command("dot", "Write the Graphviz DOT text of the program's graph (render it with "
                  "'dot -Tsvg').", _dot)
    dot.add_argument("-o", "--output", metavar="FILE.dot", help="write to FILE instead of "
                     "standard output")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); return the exit status.

    Errors are one line on standard error; the status is 0, 1 (invalid data) or 2 (usage).

    Example:
        >>> main(["check", "no-such-program.json"])  # prints the reason on stderr
        2
    """
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exit_:  # usage errors and --help: the status, as from the shell
        return exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    # a saved name or dict key may hold a lone surrogate ("\\ud800" in the JSON text), which
    # strict UTF-8 output cannot encode: such characters are written escaped instead
    stdout = sys.stdout
    errors = getattr(stdout, "errors", None)
    escape = errors in ("strict", "surrogateescape") and hasattr(stdout, "reconfigure")
    if escape:
        stdout.reconfigure(errors="backslashreplace")
    try:
        args.handler(args)
    except CommandError as exc:
        print(f"advect {args.command}: {exc}", file=sys.stderr)
        return exc.status
    except BrokenPipeError:  # `advect inspect p.json | head`
        return 0
    finally:
        if escape:
            stdout.reconfigure(errors=errors)
    return 0

"""Sphinx extension for Advect's site: run every ```python block of a page, show its output.

The pages stay plain Markdown that reads well anywhere and that ``tests/test_docs.py`` runs the
same way: the python blocks of one page share a namespace and run in order, like a reader
pasting them into one session. At build time each block's standard output is shown below it,
and any figure a block leaves open (matplotlib) is embedded as an image. A block that raises
fails the build (a warning, and the build runs with ``-W``).

Directives:

- ``advect-plot``: Python code run in the page's namespace whose figures are shown, without
  showing the code (plots of tables the page already shows).
- ``advect-example``: ``examples/NAME.py`` of the repository: its docstring as text, the source,
  what it prints and the figures it saves (it runs with ``ADVECT_FIGURES`` set to a temporary
  folder).
- ``advect-api``: the API reference of a module's public names (``__all__``), through autodoc;
  each name's docstring examples run as doctests during the build.
- ``advect-pages``: a toctree of the pages that exist among those listed (integration pages
  are written by other work and may be missing).
"""

from __future__ import annotations

import base64
import contextlib
import doctest
import importlib
import inspect
import io
import os
import runpy
import sys
import tempfile
import traceback
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.transforms import SphinxTransform
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

LOGGER = logging.getLogger(__name__)
ROOT = Path(__file__).resolve().parents[2]


class pending_plot(nodes.General, nodes.Element):  # noqa: N801 - docutils names nodes so
    """Code of an ``advect-plot`` directive, run by :class:`ExecutePages` in page order."""


def _figures_html() -> list[nodes.Node]:
    """Every open matplotlib figure as an embedded PNG; the figures are closed."""
    if "matplotlib.pyplot" not in sys.modules:
        return []
    plt = sys.modules["matplotlib.pyplot"]
    out = []
    for number in plt.get_fignums():
        buffer = io.BytesIO()
        plt.figure(number).savefig(buffer, format="png", dpi=110, bbox_inches="tight")
        out.append(_image_html(buffer.getvalue(), "png"))
    plt.close("all")
    return out


def _image_html(data: bytes, kind: str) -> nodes.raw:
    mime = "image/svg+xml" if kind == "svg" else f"image/{kind}"
    encoded = base64.b64encode(data).decode("ascii")
    return nodes.raw("", f'<img class="advect-figure" alt="figure" '
                         f'src="data:{mime};base64,{encoded}"/>', format="html")


def _output_block(text: str) -> nodes.literal_block:
    block = nodes.literal_block(text, text, classes=["advect-output"])
    block["language"] = "none"
    return block


class PageSkipped(Exception):
    """A block called ``pytest.importorskip`` (or ``pytest.skip``) for a missing dependency."""


def _run(code: str, namespace: dict, name: str) -> tuple[str, str | None]:
    """Run ``code``; return (stdout, the traceback text or None)."""
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        try:
            exec(compile(code, name, "exec", dont_inherit=True), namespace)
        except Exception:  # reported as a build warning with the page and block
            return stdout.getvalue(), traceback.format_exc(limit=-3)
        except BaseException as exc:
            # pytest's skip outcome is a BaseException: the rest of the page is not run, as in
            # tests/test_docs.py, and the page says so
            pytest = sys.modules.get("pytest")
            if pytest is not None and isinstance(exc, pytest.skip.Exception):
                raise PageSkipped(getattr(exc, "msg", None) or str(exc)) from None
            raise
    return stdout.getvalue(), None


class ExecutePages(SphinxTransform):
    """Run the python blocks (and plots) of every Markdown page, in order, in one namespace."""

    default_priority = 300  # before Sphinx gives unmarked literal blocks a language

    def apply(self) -> None:
        source = self.document.get("source", "")
        if not source.endswith(".md"):
            return
        namespace = {"__name__": "__docs__"}
        os.environ.setdefault("MPLBACKEND", "Agg")
        number, skipped = 0, None
        for node in list(self.document.findall(
                lambda n: isinstance(n, pending_plot) or (
                    isinstance(n, nodes.literal_block) and n.get("language") == "python"
                    and not n.get("advect_source")))):
            code = node["code"] if isinstance(node, pending_plot) else node.astext()
            where = f"{Path(source).name}[block {number}]"
            number += 1
            if skipped is not None:
                if isinstance(node, pending_plot):
                    node.replace_self(nodes.paragraph())
                continue
            try:
                with _in_temporary_folder():
                    output, error = _run(code, namespace, where)
            except PageSkipped as exc:
                skipped = str(exc)
                LOGGER.info("%s: the rest of the page is not run (%s)", where, skipped)
                note = nodes.note("", nodes.paragraph(
                    "", f"This example and the ones after it on this page were not run when "
                    f"the site was built ({skipped})."))
                if isinstance(node, pending_plot):
                    node.replace_self(note)
                else:
                    node.parent.insert(node.parent.index(node), note)
                continue
            if error is not None:
                LOGGER.warning("%s raised:\n%s", where, error, location=node)
            shown: list[nodes.Node] = []
            if output.strip() and not isinstance(node, pending_plot):
                shown.append(_output_block(output.rstrip("\n")))
            shown.extend(_figures_html())
            if isinstance(node, pending_plot):
                node.replace_self(shown or [nodes.paragraph()])
            elif shown:
                parent = node.parent
                index = parent.index(node)
                for k, extra in enumerate(shown):
                    parent.insert(index + 1 + k, extra)


@contextlib.contextmanager
def _in_temporary_folder():
    # a page that writes files (saved programs, say) writes them outside the repository
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as folder:
        os.chdir(folder)
        try:
            yield folder
        finally:
            os.chdir(here)


class PlotDirective(SphinxDirective):
    has_content = True

    def run(self) -> list[nodes.Node]:
        node = pending_plot()
        node["code"] = "\n".join(self.content)
        return [node]


class ExampleDirective(SphinxDirective):
    """Docstring, source, output and figures of one script of ``examples/``."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        path = ROOT / self.arguments[0]
        self.env.note_dependency(str(path))
        source = path.read_text()
        module_doc = inspect.cleandoc(
            (compile(source, str(path), "exec").co_consts[0] or "")
            if source.lstrip().startswith('"""') else "")
        out: list[nodes.Node] = []
        if module_doc:
            _, _, body = module_doc.partition("\n")
            out.extend(self.parse_text_to_nodes(body.strip()))
        with tempfile.TemporaryDirectory() as folder:
            stdout, error = self._execute(path, folder)
            images = sorted(Path(folder).glob("*.png")) + sorted(Path(folder).glob("*.svg"))
            if error is not None:
                LOGGER.warning("%s raised:\n%s", path.name, error, location=self.get_location())
            if not images and error is None:
                LOGGER.warning("%s saved no figure", path.name, location=self.get_location())
            out.extend(_image_html(p.read_bytes(), p.suffix[1:]) for p in images)
        if stdout.strip():
            out.append(nodes.rubric("", "What it prints"))
            out.append(_output_block(stdout.rstrip("\n")))
        out.append(nodes.rubric("", f"The script: {self.arguments[0]}"))
        code = nodes.literal_block(source, source)
        code["language"] = "python"
        code["advect_source"] = True  # shown, not run again by ExecutePages
        out.append(code)
        return out

    @staticmethod
    def _execute(path: Path, folder: str) -> tuple[str, str | None]:
        previous = os.environ.get("ADVECT_FIGURES")
        os.environ["ADVECT_FIGURES"] = folder
        os.environ.setdefault("MPLBACKEND", "Agg")
        stdout = io.StringIO()
        try:
            with contextlib.redirect_stdout(stdout):
                runpy.run_path(str(path), run_name="__main__")
        except Exception:
            return stdout.getvalue(), traceback.format_exc(limit=-3)
        finally:
            if previous is None:
                os.environ.pop("ADVECT_FIGURES", None)
            else:
                os.environ["ADVECT_FIGURES"] = previous
            if "matplotlib.pyplot" in sys.modules:
                sys.modules["matplotlib.pyplot"].close("all")
        return stdout.getvalue(), None


class ApiDirective(SphinxDirective):
    """autodoc entries for a module's public names; each name's docstring examples run.

    Options: ``:names:`` (these, in this order; default ``__all__``), ``:rest:`` (the names of
    ``__all__`` not documented earlier on the page, so a new public name is never left out),
    ``:optional:`` (nothing if the module cannot be imported: an integration whose dependency
    is missing), ``:title:`` (a heading above the entries).
    """

    required_arguments = 1
    option_spec = {"names": directives.unchanged, "rest": directives.flag,
                   "optional": directives.flag, "title": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            if "optional" in self.options:
                return []
            raise self.error(f"advect-api: cannot import {name}: {exc}") from None
        documented = self.env.temp_data.setdefault("advect_api_documented", {}).setdefault(
            (self.env.docname, name), set())
        public = [n for n in getattr(module, "__all__", []) if not n.startswith("__")]
        if "names" in self.options:
            names = self.options["names"].split()
        elif "rest" in self.options:
            names = [n for n in public if n not in documented]
        else:
            names = public
        lines = []
        for public_name in names:
            obj = getattr(module, public_name)
            documented.add(public_name)
            if inspect.ismodule(obj):
                continue  # documented on its own
            self._doctest(f"{name}.{public_name}", obj)
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                lines.append(f".. autoexception:: {name}.{public_name}")
            elif inspect.isclass(obj):
                lines += [f".. autoclass:: {name}.{public_name}", "   :members:"]
            elif callable(obj):
                lines.append(f".. autofunction:: {name}.{public_name}")
            else:
                lines.append(f".. autodata:: {name}.{public_name}")
            lines.append("")
        out: list[nodes.Node] = []
        if "title" in self.options and lines:
            out.append(nodes.rubric("", self.options["title"]))
        return out + self._parse_rst(lines)

    def _parse_rst(self, lines: list[str]) -> list[nodes.Node]:
        return _parse_rst(self, lines)

    def _doctest(self, qualified: str, obj) -> None:
        finder = doctest.DocTestFinder(recurse=inspect.isclass(obj))
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS
                                       | doctest.NORMALIZE_WHITESPACE)
        module = inspect.getmodule(obj)
        for test in finder.find(obj, qualified, module=module,
                                globs=dict(vars(module)) if module else {}):
            report = io.StringIO()
            with _in_temporary_folder():
                result = runner.run(test, out=report.write)
            if result.failed and "No module named" not in report.getvalue():
                # (an example that imports a missing optional dependency is skipped, as
                # tests/test_docstrings.py skips its module)
                LOGGER.warning("docstring example of %s failed:\n%s", test.name,
                               report.getvalue(), location=self.get_location())


class PagesDirective(SphinxDirective):
    """A toctree of the listed pages that exist (``caption`` as the argument)."""

    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {"maxdepth": directives.positive_int}

    def run(self) -> list[nodes.Node]:
        here = Path(self.env.doc2path(self.env.docname)).parent
        present = [entry for entry in self.content
                   if entry.strip() and (here / f"{entry.strip()}.md").is_file()]
        lines = [".. toctree::", f"   :maxdepth: {self.options.get('maxdepth', 1)}"]
        if self.arguments:
            lines.append(f"   :caption: {self.arguments[0]}")
        lines.append("")
        lines += [f"   {entry.strip()}" for entry in present]
        return _parse_rst(self, lines)


def _parse_rst(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    """reStructuredText generated by a directive, parsed in a Markdown page (MyST's eval-rst)."""
    if not lines:
        return []
    container = nodes.section()
    container.document = directive.state.document
    fenced = ["````{eval-rst}", *lines, "````"]
    directive.state.nested_parse(StringList(fenced, source=directive.get_source_info()[0]),
                                 directive.content_offset, container)
    return container.children


def setup(app):
    app.add_node(pending_plot)
    app.add_transform(ExecutePages)
    app.add_directive("advect-plot", PlotDirective)
    app.add_directive("advect-example", ExampleDirective)
    app.add_directive("advect-api", ApiDirective)
    app.add_directive("advect-pages", PagesDirective)
    return {"parallel_read_safe": False, "parallel_write_safe": True}

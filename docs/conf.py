"""Sphinx configuration of Advect's documentation site (build: ``bash .ci/docs``)."""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import advect  # noqa: E402

project = "Advect"
author = "the Advect developers"
copyright = "2026, the Advect developers"  # noqa: A001 - Sphinx's name
release = version = advect.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.graphviz",
    "advect_docs",
]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "README.md"]
myst_enable_extensions = ["colon_fence", "dollarmath"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # contributor pages start at level-2 headings in places

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"undoc-members": False}
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_custom_sections = [("Example", "examples_style")]

graphviz_output_format = "svg"

html_theme = "furo"
html_title = f"Advect {release}"
html_static_path = ["_static"]
html_css_files = ["advect.css"]

# Type hints name classes documented elsewhere (the standard library, NumPy, xarray) or private
# to Advect; -n still reports every broken reference to a documented name and every bad link.
nitpick_ignore_regex = [
    ("py:class", r"(collections\.abc|typing|numpy|np|xarray|xr|types)\..*"),
    ("py:class", r"advect\.(staging|dtypes|catalog|primitive|pytree|core|ops)\.[\w.]+"),
    ("py:class", r"Graph|Aval|Plan|T"),
]

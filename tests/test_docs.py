"""Every ```python block of the README and of docs/*.md runs (blocks of one page share a
namespace, in order, like a reader pasting them into one session)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page):
    namespace = {"__name__": "__docs__"}
    for number, block in enumerate(BLOCK.findall(page.read_text())):
        try:
            exec(compile(block, f"{page.name}[block {number}]", "exec"), namespace)
        except ModuleNotFoundError as e:  # a page about an optional integration (scipy, ...)
            if e.name is None or e.name.split(".")[0] == "advect":
                raise
            pytest.skip(f"{page.name} needs {e.name}, which is not installed")
        except Exception as e:  # re-raise with the page and block for a readable failure
            raise AssertionError(f"{page.name}, python block {number} failed: {e!r}") from e

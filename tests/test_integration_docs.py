"""The integration pages' examples run as written (``docs/integrations/*.md``).

Every ```` ```python ```` block whose first line is ``# example: run`` is a complete program. Each
one is executed in a fresh child interpreter (this interpreter's ``sys.executable``, a temporary
working directory) and must exit 0. The examples assert what they claim: the oracle's answer
earns the env's full reward and a wrong one less, for example. So a page fails here the moment
the API it documents changes. Other ```` ```python ```` blocks are snippets that are not run
(training, a cluster); they must still compile. Every page but the index and "Scaling out" has
at least one runnable example, and the index lists every page.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs" / "integrations"
PAGES = sorted(p.name for p in DOCS.glob("*.md"))
#: pages that need not carry a runnable example
NO_EXAMPLE_NEEDED = {"README.md", "scaling.md"}
#: pages whose examples need an optional package: (module, why the page is skipped without it)
NEEDS = {"ray.md": ("ray", "the ray extra is not installed (pip install -e '.[ray]'): ray.md's examples need Ray")}
MARK = "# example: run"
BLOCK = re.compile(r"^```python\n(.*?)^```[ \t]*$", re.S | re.M)
#: a hang guard only: every example takes seconds
TIMEOUT_S = 600


def _blocks(page: str) -> list[tuple[int, str]]:
    """``(line, code)`` of every ```` ```python ```` block of ``page``."""
    text = (DOCS / page).read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 2, m.group(1)) for m in BLOCK.finditer(text)]


def _examples(page: str) -> list[tuple[int, str]]:
    return [(line, code) for line, code in _blocks(page) if code.startswith(MARK + "\n")]


def test_the_pages_are_there():
    expected = {"README.md", "trl.md", "verl.md", "openenv.md", "reasoning_gym.md", "ray.md", "scaling.md"}
    assert expected <= set(PAGES), sorted(expected - set(PAGES))


@pytest.mark.parametrize("page", [p for p in PAGES if p != "README.md"])
def test_the_index_lists_the_page(page):
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    assert f"]({page})" in index, f"docs/integrations/README.md has no link to {page}"


@pytest.mark.parametrize("page", PAGES)
def test_the_page_has_its_runnable_examples(page):
    if page not in NO_EXAMPLE_NEEDED:
        assert _examples(page), f"{page} has no ```python block starting with {MARK!r}"
    for line, code in _blocks(page):  # run or not, every Python block is Python
        compile(code, f"{page}:{line}", "exec")


@pytest.mark.parametrize("page", [p for p in PAGES if _examples(p)])
def test_the_pages_examples_run(page, tmp_path):
    if page in NEEDS:
        module, why = NEEDS[page]
        pytest.importorskip(module, reason=why)
    for i, (line, code) in enumerate(_examples(page)):
        script = tmp_path / f"{Path(page).stem}_{i}_line{line}.py"
        script.write_text(code, encoding="utf-8")
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True,
                              timeout=TIMEOUT_S)
        assert done.returncode == 0, (f"{page}:{line}: the example exited {done.returncode}\n"
                                      f"--- stdout\n{done.stdout[-3000:]}\n--- stderr\n{done.stderr[-5000:]}")

"""The README's Python runs as written: every ```` ```python ```` block is a complete program.

The README marks fragments (a line that names an object the block does not define) as
```` ```py ````; every ```` ```python ```` block is executed here, as it stands, in a fresh
namespace with a temporary working directory, and what it prints is checked against what the
README says it prints. So the three uses the README opens with (``gym.make`` in one's own loop,
one's own agent in that loop and in ``run_eval``, stepwise evaluation of reasoning traces) fail
here the moment an API they use changes.
"""
from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[int, str]]:
    text = README.read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 1, m.group(1)) for m in BLOCK.finditer(text)]


BLOCKS = _blocks()


def _run(code: str, line: int, tmp_path: Path, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md:{line}", "exec"), {"__name__": "__readme__"})
    return out.getvalue()


def test_the_readme_has_its_runnable_blocks():
    starts = [code.split("\n", 3)[:3] for _, code in BLOCKS]
    assert len(BLOCKS) >= 3, starts
    joined = "\n".join(code for _, code in BLOCKS)
    for use in ("gym.make(", "def act(self, observations, envs)", "run_eval(", "check_trace("):
        assert use in joined, f"no runnable README block shows {use!r}"


@pytest.mark.parametrize("line,code", BLOCKS, ids=[f"line{line}" for line, _ in BLOCKS])
def test_readme_block_runs(line, code, tmp_path, monkeypatch):
    printed = _run(code, line, tmp_path, monkeypatch)
    # what the README's comments say a block prints
    if "class BruteForceSAT" in code:
        assert printed.split() == ["1.0", "1.0"], printed
    if "check_trace(" in code:
        lines = printed.splitlines()
        assert [line.split(" (")[0] for line in lines[:4]] == ["S1: novel", "S2: novel", "S3: redundant", "S4: novel"]
        assert lines[4] == "1.45 True", printed

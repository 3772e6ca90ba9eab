"""Every ``solvergym`` command line the README shows is one the real parser accepts.

The command lines are read from README.md as it is now: the lines of its fenced code blocks that
start with ``solvergym`` (continuation backslashes joined, ``#`` comments dropped; also
``accelerate launch -m solvergym.cli ...``), and its inline code spans that start with
``solvergym``. Each is parsed by :func:`solvergym.cli.main.build_parser`, nothing run, so a flag
or subcommand that is renamed or removed fails here. Inline spans are of three kinds: a command
line (parsed like the fenced ones), a synopsis with placeholders (``eval compare RUN_DIR...
[--out DIR]``: its subcommand, the words before the first option or placeholder, must have a
``--help``), or a bare command
name in prose (``solvergym plot``: it must have a ``--help``).

The cheap ones also run: ``list``, ``sample``, the Spring Knights split (into ``tmp_path``) and
the ``--help`` of every subcommand the README names.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from solvergym.cli import main
from solvergym.cli.main import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^\s*```[\w-]*\s*$")
INLINE = re.compile(r"`(solvergym\s[^`]+)`")
#: dataset builds quick enough to run in a test (about a second on 2 cores)
CHEAP_DATASETS = {"spring-knights"}


def _fenced_commands(text: str) -> list[list[str]]:
    """The ``solvergym`` command lines of the fenced blocks, as argument lists (without ``solvergym``)."""
    out, inside, block = [], False, []
    for line in text.splitlines():
        if FENCE.match(line):
            if inside:
                for joined in "\n".join(block).replace("\\\n", " ").splitlines():
                    stripped = joined.strip()
                    if stripped.startswith("solvergym ") or " -m solvergym.cli " in stripped:
                        tokens = shlex.split(stripped, comments=True)
                        start = tokens.index("solvergym.cli") + 1 if "solvergym.cli" in tokens else 1
                        out.append(tokens[start:])
            inside, block = not inside, []
        elif inside:
            block.append(line)
    return out


def _inline_spans(text: str) -> list[list[str]]:
    """The inline code spans that start with ``solvergym``, outside the fenced blocks."""
    prose, inside = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            inside = not inside
        elif not inside:
            prose.append(line)
    return [span.split()[1:] for span in INLINE.findall("\n".join(prose))]


def _is_placeholder(token: str) -> bool:
    return "..." in token or token.startswith("[") or (token.isupper() and len(token) > 1)


TEXT = README.read_text(encoding="utf-8")
FENCED = _fenced_commands(TEXT)
INLINE_SPANS = _inline_spans(TEXT)
COMMAND_LINES = FENCED + [s for s in INLINE_SPANS if len(s) > 1 and not any(map(_is_placeholder, s))]
SYNOPSES = [s for s in INLINE_SPANS if any(map(_is_placeholder, s))]
NAMES = sorted({s[0] for s in INLINE_SPANS if len(s) == 1} | {s[0] for s in FENCED + INLINE_SPANS})


def _exit_code(argv: list[str]) -> int:
    """0 when ``argv`` parses; argparse's exit status (2, with the reason on stderr) when not."""
    try:
        build_parser().parse_args(argv)
    except SystemExit as e:
        return e.code
    return 0


def test_the_readme_shows_command_lines():
    # the extraction itself works: the README's dataset, train, eval and sample lines are found
    assert len(FENCED) >= 10 and {"dataset", "train", "eval", "plot", "sft"} <= {c[0] for c in FENCED}
    assert any(c[0] == "sample" for c in COMMAND_LINES) and SYNOPSES


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=[" ".join(c)[:80] for c in COMMAND_LINES])
def test_each_readme_command_line_parses(argv, capsys):
    code = _exit_code(argv)
    assert code == 0, f"solvergym {' '.join(argv)}: {capsys.readouterr().err}"


@pytest.mark.parametrize("synopsis", SYNOPSES, ids=[" ".join(s)[:80] for s in SYNOPSES])
def test_each_readme_synopsis_names_a_command_with_help(synopsis, capsys):
    command = []  # the subcommand words, up to the first option or placeholder
    for token in synopsis:
        if _is_placeholder(token) or token.startswith("-"):
            break
        command.append(token)
    assert _exit_code([*command, "--help"]) == 0, capsys.readouterr().err
    assert "usage: solvergym " + " ".join(command) in capsys.readouterr().out


@pytest.mark.parametrize("name", NAMES)
def test_each_command_the_readme_names_has_help(name, capsys):
    assert _exit_code([name, "--help"]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.startswith(f"usage: solvergym {name}")


def test_the_cheap_readme_commands_run(tmp_path, capsys):
    ran = set()
    # `solvergym list` appears as a bare name in the prose: it takes no arguments
    for argv in COMMAND_LINES + [[name] for name in NAMES if name == "list"]:
        if argv[0] in ("list", "sample"):
            assert main(argv) == 0, argv
            ran.add(argv[0])
        elif argv[0] == "dataset" and argv[1] in CHEAP_DATASETS:
            out = tmp_path / argv[1]
            argv = [str(out) if prev == "--out" else a for prev, a in zip(["", *argv], argv)]
            assert main(argv) == 0, argv
            assert (out / "train.jsonl").stat().st_size > 0 and (out / "manifest.json").exists()
            ran.add("dataset")
    assert ran == {"list", "sample", "dataset"}
    printed = capsys.readouterr().out
    assert "SolverSAT-v0" in printed and "--- solution ---" in printed and "train.jsonl:" in printed

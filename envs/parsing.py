"""Answer extraction shared by every environment.

Every helper here runs in time linear in the length of its input, whatever the input is: a model
that emits ten thousand unclosed ``\\boxed{`` or fences must not make the reward function slow.
No regular expression with nested or unbounded backtracking is used; scanning is done with
``str.find`` / ``str.rfind`` and one pass over the brace characters.

Helpers return ``None`` when nothing was found; they never raise on any ``str`` input.

The formats (all from the seed papers):

- ``\\boxed{...}``: SATURN §2.4 (the last box counts; braces inside are balanced).
- fenced blocks ```` ```answer ... ``` ```` and ```` ```idk ``` ````: SAT-RL §3.4; for a yes/no
  question also the bare ```` ```yes``` ```` / ```` ```no``` ```` that SAT-RL's own transcripts
  end with (App. E.1), when the caller asks for them (``bare=DECISION_WORDS``).
- ``<answer>...</answer>`` and other tag sections (``<think>``, ``<tool_call>``, ``<model>``...):
  Spring App. E, SIRL.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "DEFAULT_MAX_ACTION_CHARS",
    "DECISION_WORDS",
    "Fenced",
    "Section",
    "last_boxed",
    "all_boxed",
    "fenced_blocks",
    "last_fenced",
    "final_answer_block",
    "is_final_answer",
    "tag_sections",
    "last_tag",
]

#: Default bound on an action's length in characters (64 Ki). Longer actions are a format failure.
DEFAULT_MAX_ACTION_CHARS = 64 * 1024

_BOXED = "\\boxed{"
# Braces not preceded by a backslash: ``\{`` and ``\}`` are literal braces in LaTeX.
_BRACE = re.compile(r"(?<!\\)[{}]")


def _brace_matches(text: str) -> dict[int, int]:
    """Map the index of every ``{`` that is closed to the index of its ``}`` (one pass)."""
    stack: list[int] = []
    match: dict[int, int] = {}
    for m in _BRACE.finditer(text):
        if m.group() == "{":
            stack.append(m.start())
        elif stack:
            match[stack.pop()] = m.start()
    return match


def all_boxed(text: str) -> list[str]:
    """Contents of every complete ``\\boxed{...}`` in order of appearance (balanced braces)."""
    if _BOXED not in text:
        return []
    match = _brace_matches(text)
    out = []
    pos = text.find(_BOXED)
    while pos != -1:
        open_idx = pos + len(_BOXED) - 1
        close = match.get(open_idx)
        if close is not None:
            out.append(text[open_idx + 1 : close])
        pos = text.find(_BOXED, pos + 1)
    return out


def last_boxed(text: str) -> str | None:
    """Content of the last complete ``\\boxed{...}``; ``None`` if there is none.

    A trailing box that was never closed (a truncated generation) is skipped, and the last
    complete one before it counts, as in SATURN's reward (``re.findall(...)[-1]``), but with
    balanced braces so that ``\\boxed{\\{1,2\\}}`` and ``\\boxed{f(x^{2})}`` are read whole.
    """
    boxes = all_boxed(text)
    return boxes[-1] if boxes else None


@dataclass(frozen=True)
class Fenced:
    """A fenced code block: its info string (``answer``, ``idk``, ``python``...) and its body."""

    info: str
    body: str
    start: int  # index of the opening fence
    end: int  # index just past the closing fence


def fenced_blocks(text: str) -> list[Fenced]:
    """Every closed ```` ``` ```` fenced block, in order.

    Fences pair up left to right (as Markdown does); an unclosed last fence is ignored. The info
    string is the first word after the opening fence, lower-cased; the body is the rest, so both
    ```` ```answer\\nyes\\n``` ```` and ```` ```answer yes``` ```` give ``("answer", "yes")``.
    """
    out = []
    pos = 0
    while True:
        open_ = text.find("```", pos)
        if open_ == -1:
            break
        close = text.find("```", open_ + 3)
        if close == -1:
            break
        inner = text[open_ + 3 : close]
        stripped = inner.lstrip(" \t")
        head, sep, rest = stripped.partition("\n")
        words = head.split(None, 1)
        info = words[0].lower() if words else ""
        body = ((words[1] if len(words) > 1 else "") + sep + rest).strip()
        out.append(Fenced(info=info, body=body, start=open_, end=close + 3))
        pos = close + 3
    return out


def last_fenced(text: str, infos: tuple[str, ...] | str) -> Fenced | None:
    """The last fenced block whose info string is one of ``infos``."""
    if isinstance(infos, str):
        infos = (infos,)
    found = None
    for block in fenced_blocks(text):
        if block.info in infos:
            found = block
    return found


#: The bare final answers of a yes/no question: SAT-RL App. E.1's transcript ends with ```yes```.
DECISION_WORDS: tuple[str, ...] = ("yes", "no")


def is_final_answer(block: Fenced, bare: tuple[str, ...] = ()) -> bool:
    """Whether ``block`` is a final answer: ```` ```answer ...``` ````, ```` ```idk``` ````, or a
    fence holding one word of ``bare`` and nothing else (```` ```yes``` ````, ```` ```No\n``` ````).

    A fence with no info string (```` ```\nyes\n``` ````) or with more after the word
    (```` ```yes it is``` ````, ```` ```yes.``` ````) is an ordinary code block."""
    return block.info in ("answer", "idk") or (block.info in bare and not block.body)


def final_answer_block(text: str, *, bare: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """SAT-RL's final answer (§3.4): the last ```` ```answer ...``` ```` or ```` ```idk``` ```` (or
    bare ```` ```<word>``` ```` for a word of ``bare``, see :func:`is_final_answer`).

    Returns ``("answer", body)`` (a bare fence gives ``("answer", word)``) or ``("idk", "")``;
    ``("idk", "")`` too for an answer block whose body is just ``idk``. ``None`` when none
    appears. Fences pair left to right (:func:`fenced_blocks`), so a fence inside a code block
    is part of that block, and of several final answers the last one counts.
    """
    block = None
    for b in fenced_blocks(text):
        if is_final_answer(b, bare):
            block = b
    if block is None:
        return None
    if block.info == "idk" or block.body.strip().strip("`'\"").lower() == "idk":
        return ("idk", "")
    if block.info != "answer":
        return ("answer", block.info)
    return ("answer", block.body)


@dataclass(frozen=True)
class Section:
    """One ``<tag>...</tag>`` section; offsets are character indices into the searched text."""

    tag: str
    start: int  # index of ``<tag>``
    end: int  # index just past ``</tag>``
    content_start: int
    content_end: int
    content: str


def tag_sections(text: str, tag: str) -> list[Section]:
    """Every closed ``<tag>...</tag>`` section, in order (non-nested; an unclosed one is ignored).

    The offsets let a trainer turn sections into token masks (``<think>``, ``<model>``,
    ``<python>`` for SIRL's Partial KL).
    """
    open_t, close_t = f"<{tag}>", f"</{tag}>"
    out = []
    pos = 0
    while True:
        s = text.find(open_t, pos)
        if s == -1:
            break
        cs = s + len(open_t)
        ce = text.find(close_t, cs)
        if ce == -1:
            break
        e = ce + len(close_t)
        out.append(Section(tag, s, e, cs, ce, text[cs:ce]))
        pos = e
    return out


def last_tag(text: str, tag: str) -> str | None:
    """Content of the last closed ``<tag>...</tag>`` (stripped), or ``None``."""
    close_t = f"</{tag}>"
    ce = text.rfind(close_t)
    if ce == -1:
        return None
    s = text.rfind(f"<{tag}>", 0, ce)
    if s == -1:
        return None
    return text[s + len(tag) + 2 : ce].strip()

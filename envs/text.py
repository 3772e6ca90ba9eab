"""Text as the envs exchange it: the observation/action space and the check every action passes.

Observations and actions are ``str``. :class:`TextSpace` accepts any text a model writes (not
Gymnasium's alphanumeric default charset); :func:`validate_action` turns any action (``str``,
``bytes``, anything else) into safe text or a reason it is not text, in time linear in its
length; :func:`clean_text` makes any string (a program's output) observation text.
"""
from __future__ import annotations

import re
from typing import Any

from gymnasium import spaces

__all__ = ["TextSpace", "validate_action", "clean_text", "NOT_TEXT", "DEFAULT_MAX_OBSERVATION_CHARS"]

DEFAULT_MAX_OBSERVATION_CHARS = 1 << 20

# Characters a text may not hold: C0/C1 control characters other than tab, newlines, vertical tab
# and form feed, and lone surrogates (what ``errors="surrogateescape"`` makes of non-UTF-8 bytes).
# Everything else, including non-ASCII spaces, zero-width joiners and unassigned code points, is
# text: ``str.isprintable`` would reject U+00A0 and the ZWJ in emoji sequences, which models emit.
NOT_TEXT = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff]")

# What ``TextSpace.sample`` draws from: printable ASCII, whitespace and the logic/maths symbols the
# envs print. Membership is wider than this (any text character, see ``NOT_TEXT``).
_SAMPLE_CHARSET = (
    "".join(chr(c) for c in range(0x20, 0x7F))
    + "\n\t"
    + "¬∧∨→↔⊕≠≤≥∀∃∈∉⊆∅×·−±√πλθεαβγδ…‘’“”éüñçßøåæ中文日本語한국어→←⇒⇔⊤⊥✓✗"
)


class TextSpace(spaces.Text):
    """A Gymnasium text space whose members are any text up to ``max_length`` characters.

    ``spaces.Text`` checks membership against a finite charset (alphanumerics by default, which
    rejects ``"hello world"``); LLM input and output is arbitrary Unicode. This space accepts every
    ``str`` of ``min_length..max_length`` characters that holds no control character other than
    whitespace and no lone surrogate, so every observation an env emits and every action it
    accepts is a member. ``sample()`` draws from a representative charset (ASCII, whitespace,
    logic symbols, a few scripts); batching and ``make_vec(vectorization_mode="sync")`` work as
    for ``spaces.Text``. ``flatten`` is not supported (it needs a finite charset).
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None):
        super().__init__(max_length, min_length=min_length, charset=_SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return (
            isinstance(x, str)
            and self.min_length <= len(x) <= self.max_length
            and NOT_TEXT.search(x) is None
        )

    def __repr__(self) -> str:
        return f"TextSpace(min_length={self.min_length}, max_length={self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, TextSpace)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash((TextSpace, self.min_length, self.max_length))


def validate_action(action: Any, max_chars: int) -> tuple[str, str | None]:
    """Turn any action into ``(text, error)``; ``error`` is ``None`` for a valid action.

    ``bytes`` are decoded as UTF-8. ``text`` is always a ``str`` safe to log (invalid characters
    replaced, cut to ``max_chars``), so a failed action can still go into ``info["messages"]``.
    Cost is linear in the input and bounded: a huge action is rejected on its length first.
    """
    if isinstance(action, (bytes, bytearray, memoryview)):
        raw = bytes(action)
        if len(raw) > 4 * max_chars:  # a UTF-8 character is at most 4 bytes
            return _preview(raw[: 4 * max_chars].decode("utf-8", "replace"), max_chars), (
                f"action is {len(raw)} bytes; the limit is {max_chars} characters"
            )
        try:
            action = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            return _preview(raw.decode("utf-8", "replace"), max_chars), (
                f"action is not valid UTF-8: {e.reason} at byte {e.start}"
            )
    if not isinstance(action, str):
        return "", f"action must be a str, got {type(action).__name__}"
    if len(action) > max_chars:
        return _preview(action, max_chars), (
            f"action is {len(action)} characters; the limit is {max_chars}"
        )
    bad = NOT_TEXT.search(action)
    if bad is not None:
        return _preview(action, max_chars), (
            f"action holds the non-text character U+{ord(bad.group()):04X} at index {bad.start()}"
        )
    return action, None


def _preview(text: str, max_chars: int) -> str:
    return NOT_TEXT.sub("\ufffd", text[:max_chars])


def clean_text(text: str, limit: int) -> str:
    """Any string (a program's output) as observation text: non-text characters replaced, at
    most ``limit`` characters, the tail kept (where a traceback ends)."""
    text = NOT_TEXT.sub("\ufffd", text)
    if len(text) > limit:
        text = f"[... {len(text) - limit} characters truncated ...]\n" + text[-limit:]
    return text

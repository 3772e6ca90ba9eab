import pytest
from hypothesis import given, strategies as st

from solvergym.envs.parsing import (
    DECISION_WORDS, all_boxed, fenced_blocks, final_answer_block, last_boxed, last_fenced, last_tag, tag_sections,
)


@pytest.mark.parametrize("text, want", [
    ("\\boxed{101}", "101"),
    ("a \\boxed{1} then \\boxed{0110}", "0110"),
    ("\\boxed{f(x^{2})}", "f(x^{2})"),
    ("\\boxed{\\{1,2\\}}", "\\{1,2\\}"),
    ("\\boxed{11} and a truncated \\boxed{10", "11"),  # the unclosed last box is skipped
    ("\\boxed{}", ""),
    ("no box here", None),
    ("\\boxed{", None),
    ("}}}{{{\\boxed{1}", "1"),
])
def test_last_boxed(text, want):
    assert last_boxed(text) == want


def test_all_boxed_in_order():
    assert all_boxed("\\boxed{a} x \\boxed{b{c}} \\boxed{d") == ["a", "b{c}"]


@pytest.mark.parametrize("text, want", [
    ("```answer\nyes\n```", ("answer", "yes")),
    ("```answer yes```", ("answer", "yes")),
    ("```idk```", ("idk", "")),
    ("```answer idk```", ("idk", "")),
    ("```answer no``` then ```answer yes```", ("answer", "yes")),
    ("```python\nprint(1)\n``` ```answer no```", ("answer", "no")),
    ("```answer yes", None),  # never closed
    ("plain text", None),
])
def test_final_answer_block(text, want):
    assert final_answer_block(text) == want


@pytest.mark.parametrize("text, want", [
    # SAT-RL's own transcripts (App. E.1) end with a bare fence
    ("```yes```", ("answer", "yes")),
    ("```no```", ("answer", "no")),
    ("```No\n```", ("answer", "no")),
    ("```idk```", ("idk", "")),
    # several final blocks: the last one counts, bare or not
    ("```yes``` then ```answer no```", ("answer", "no")),
    ("```answer no``` then ```yes```", ("answer", "yes")),
    ("```no``` ```idk```", ("idk", "")),
    # a fence with more in it is not a bare answer: ```yes it is``` or an unlabelled block
    ("```answer no``` ```yes it is```", ("answer", "no")),
    ("```\nyes\n```", None),
    ("```yes.```", None),
    # fences pair left to right, so a bare fence inside a code block is code, not an answer
    ("```python\nprint('```yes```')\n```", None),
    ("```python\nprint('```yes```')\n``` ```no```", ("answer", "no")),
])
def test_final_answer_block_bare_decisions(text, want):
    assert final_answer_block(text, bare=DECISION_WORDS) == want


def test_bare_words_are_opt_in():
    # a task whose answer is not yes/no (SATURN's bits) keeps reading only ```answer``` / ```idk```
    for text in ("```yes```", "```no```", "```No\n```"):
        assert final_answer_block(text) is None
    assert final_answer_block("```answer no``` then ```yes```") == ("answer", "no")


def test_fenced_blocks_pair_left_to_right():
    blocks = fenced_blocks("```python\nx=1\n``` mid ```answer\nno\n``` tail ```")
    assert [(b.info, b.body) for b in blocks] == [("python", "x=1"), ("answer", "no")]
    assert last_fenced("```python\nx\n```", "answer") is None


def test_tag_sections_offsets():
    text = "<think>a</think> x <tool_call>print(1)</tool_call><think>b</think><think>open"
    secs = tag_sections(text, "think")
    assert [s.content for s in secs] == ["a", "b"]
    for s in secs:
        assert text[s.start:s.end] == f"<think>{s.content}</think>"
        assert text[s.content_start:s.content_end] == s.content
    assert last_tag(text, "tool_call") == "print(1)"
    assert last_tag("<answer> 42 </answer>", "answer") == "42"
    assert last_tag("</answer><answer>", "answer") is None


@pytest.mark.timeout(20)
@pytest.mark.parametrize("unit", ["\\boxed{", "```", "<answer>", "{", "```answer "])
def test_hostile_repetition_is_handled(unit):
    # 64 KiB of an opener that never closes: all helpers must finish (linear scans, no backtracking).
    text = unit * (65536 // len(unit))
    assert last_boxed(text) is None
    assert final_answer_block(text) is None or unit.startswith("```")
    assert last_tag(text, "answer") is None
    assert tag_sections(text, "answer") == []


@given(st.text(max_size=3000))
def test_helpers_never_raise(text):
    for fn in (last_boxed, all_boxed, fenced_blocks, final_answer_block):
        fn(text)
    tag_sections(text, "think")
    b = last_boxed(text)
    assert b is None or ("\\boxed{" + b + "}") in text

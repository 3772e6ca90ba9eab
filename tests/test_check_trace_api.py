"""Stepwise evaluation from Python and the check-trace table (issue 24, items 6 and 12).

``check_trace(env_id, traces)`` takes a JSONL path or records in memory and returns per-step
verdicts; the command's table names its columns once, cuts nothing unless asked, and reports
Parsed/Formal beside Table 2's Parsed/Total. ``accept="deductions"`` keeps a restated premise
out of P^nc, so the deduction after it stays novel; the fraction aggregation pays two gold steps
as much as a full derivation (both documented in the README with these numbers).
"""
from __future__ import annotations

import json

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.cli import main
from solvergym.envs.logic_steps import check_trace
from solvergym.envs.logic_steps.problem import format_answer


def _setup(env_id, seed=0, **kwargs):
    env = gym.make(env_id, **kwargs)
    env.reset(seed=seed)
    problem, inst = env.unwrapped.problem, env.unwrapped.instance
    return problem, inst, problem.family.gold_answer(inst)


def _trace(gold, steps):
    reasoning = []
    for k, (sentence, formula) in enumerate(steps, 1):
        reasoning += [sentence, f"S{k}: {formula}."]
    return format_answer({**gold, "reasoning": reasoning})


def _knights():
    problem, inst, gold = _setup("SolverKnights-v0", world="natural")  # the puzzle these traces were written for
    steps = problem.gold_steps(inst)
    restated = [("Tina's statement.", gold["syntactic_statements"][0].split(": ", 1)[1].rstrip("."))] + steps
    return inst, {"gold": _trace(gold, steps), "restated": _trace(gold, restated)}


def test_check_trace_takes_records_in_memory_and_gives_per_step_verdicts(tmp_path):
    inst, traces = _knights()
    records = [{"id": k, "instance": inst.to_dict(), "output": v} for k, v in traces.items()]
    report = check_trace("SolverKnights-v0", records)
    gold = report["traces"][0]
    assert [s["label"] for s in gold["steps"]] == ["novel"] * 3 and gold["reward"] == pytest.approx(1.55)
    assert gold["steps"][0]["reason"].startswith("the step is valid and new")
    # the instance object itself, JSON text of a record, and a record that cannot be checked
    mixed = [{"instance": inst, "output": traces["gold"]}, json.dumps(records[1]), {"output": "x"}, "", 7]
    report2 = check_trace("SolverKnights-v0", mixed)
    assert report2["n"] == 2 and report2["bad_lines"] == 2 and report2["path"] is None
    assert [t.get("reward") for t in report2["traces"][:2]] == [t["reward"] for t in report["traces"]]
    assert "no \"instance\"" in report2["traces"][2]["error"] and report2["traces"][3]["line"] == 5
    # the same records in a file give the same verdicts
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    from_file = check_trace("SolverKnights-v0", path)
    assert from_file["traces"] == report["traces"] and from_file["path"] == str(path)
    with pytest.raises(TypeError, match="JSONL path or an iterable of records"):
        check_trace("SolverKnights-v0", 3)
    with pytest.raises(TypeError):
        check_trace("SolverKnights-v0", records[0])  # one record is not a list of them


def test_the_check_trace_table_reads_right(tmp_path, capsys):
    inst, traces = _knights()
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({"id": k, "instance": inst.to_dict(), "output": v}) + "\n"
                            for k, v in traces.items()))
    assert main(["check-trace", "SolverKnights-v0", str(path)]) == 0
    out = capsys.readouterr().out
    assert "traces traces" not in out.replace("  ", " ").replace("| ", "")
    header = next(line for line in out.splitlines() if line.split()[:1] == ["group"])
    assert header.split()[:2] == ["group", "traces"] and "Parsed/Formal" in header
    row = next(line for line in out.splitlines() if line.startswith("solved"))
    cells = row.split()
    # a perfect interleaved trace: Table 2's Parsed/Total is 0.5, the formal steps all parse
    assert cells[header.split().index("Parsed/Total")] == "0.500"
    assert cells[header.split().index("Parsed/Formal")] == "1.000"
    assert "the step is equivalent to premise C1 (Knight(Tina) == Knave(Nora))" in out  # not cut at 60
    assert main(["check-trace", "SolverKnights-v0", str(path), "--max-chars", "20"]) == 0
    cut = capsys.readouterr().out
    assert "the step is equiv..." in cut and "premise C1 (" not in cut


def test_accept_deductions_keeps_restatements_out_of_the_accepted_steps():
    inst, traces = _knights()
    records = [{"id": k, "instance": inst.to_dict(), "output": v} for k, v in traces.items()]
    spring = {t["id"]: t for t in check_trace("SolverKnights-v0", records)["traces"]}
    ded = {t["id"]: t for t in check_trace("SolverKnights-v0", records, env_kwargs={"accept": "deductions"})["traces"]}
    # the default: the restated premise enters P^nc and the deduction it gives is then redundant
    assert [s["label"] for s in spring["restated"]["steps"]] == ["restates_premise", "novel", "novel", "redundant"]
    assert spring["restated"]["reward"] == pytest.approx(1.35)
    assert [s["label"] for s in ded["restated"]["steps"]] == ["restates_premise", "novel", "novel", "novel"]
    assert ded["restated"]["reward"] == pytest.approx(1.45)
    assert ded["gold"]["reward"] == spring["gold"]["reward"] == pytest.approx(1.55)
    with pytest.raises(ValueError, match="deductions"):
        gym.make("SolverKnights-v0", accept="restatements")


def test_the_fraction_pays_two_steps_as_much_as_a_full_derivation():
    problem, inst, gold = _setup("SolverZebra-v0")
    steps = problem.gold_steps(inst)
    cells = [(f"{name} is in house {house}.", f"{name} == {house}") for name, house in inst.houses().items()]
    records = [{"id": k, "instance": inst.to_dict(), "output": _trace(gold, s)}
               for k, s in (("gold", steps), ("every_cell", cells), ("two", steps[:2]))]
    got = {t["id"]: t for t in check_trace("SolverZebra-v0", records)["traces"]}
    assert all(t["correct"] for t in got.values()) and len(cells) == 9
    assert got["two"]["reward"] == got["gold"]["reward"] == pytest.approx(1.55)
    assert got["every_cell"]["reward"] == pytest.approx(0.85 + 0.4 * 5 / 9 + 0.3)  # 5 of 9 novel: 1.372
    capped = {t["id"]: t for t in check_trace("SolverZebra-v0", records, env_kwargs={"aggregation": "capped"})["traces"]}
    assert capped["two"]["reward"] < capped["gold"]["reward"]  # capped pays each novel step (up to 10)


def test_check_trace_takes_gymnasiums_module_form(tmp_path, monkeypatch):
    """``module:Env-v0`` imports the module first, as ``gym.make`` does: a user's step family."""
    from pathlib import Path

    src = (Path(__file__).parent / "data" / "newcomer" / "mymod.py").read_text()
    (tmp_path / "ctmod.py").write_text(src.replace('name = "twocolor"', 'name = "ct-twocolor"')
                                       .replace('"TwoColor-v0"', '"CtTwoColor-v0"')
                                       .replace('"MyKnights-v0"', '"CtKnights-v0"')
                                       .replace('name = "my-knights"', 'name = "ct-knights"'))
    monkeypatch.syspath_prepend(str(tmp_path))
    inst, traces = _knights()
    report = check_trace("ctmod:CtKnights-v0", [{"instance": inst.to_dict(), "output": traces["gold"]}])
    assert report["n"] == 1 and [s["label"] for s in report["traces"][0]["steps"]] == ["novel"] * 3
    with pytest.raises(ModuleNotFoundError):
        check_trace("no_such_module_xyz:CtKnights-v0", [])


DEEP = 100_000  # far past the parser's recursion limit, as a hostile or broken writer makes them


def _deep(depth: int) -> dict:
    """``{"a": {"a": ...}}`` ``depth`` levels deep, built without recursion."""
    top = cur = {}
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]
    return top


def test_a_record_nested_too_deep_is_a_reported_bad_line(tmp_path, capsys):
    """Issue 43, item 10: a line nested 100,000 deep made ``json.loads`` raise ``RecursionError``
    out of ``check_trace`` (and ``solvergym check-trace`` exit 1 with a traceback), though the
    docstring promises a bad line is "reported, not fatal". Now it is a bad line with its number
    and reason, the traces around it are scored, and the command exits 0 as for any bad line."""
    inst, traces = _knights()
    good = json.dumps({"id": "gold", "instance": inst.to_dict(), "output": traces["gold"]})
    deep_line = '{"id": "deep", "instance": ' + "[" * DEEP + "]" * DEEP + ', "output": "x"}'
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join([good, deep_line, "", good]) + "\n")
    report = check_trace("SolverKnights-v0", path)
    assert report["n"] == 2 and report["bad_lines"] == 1
    assert [t.get("line") for t in report["traces"]] == [1, 2, 4]
    assert report["traces"][1] == {"id": 2, "line": 2, "error": "ValueError: the line is not usable JSON: "
                                                               "nested deeper than 32 levels"}
    assert [report["traces"][i]["reward"] for i in (0, 2)] == [pytest.approx(1.55)] * 2

    # in memory: the same line as text, and records whose values nest that deep (the report,
    # which carries a record's id, must still be writable as JSON)
    records = [deep_line, {"id": _deep(DEEP), "instance": inst.to_dict(), "output": traces["gold"]},
               {"id": "deep-instance", "instance": _deep(DEEP), "output": traces["gold"]},
               {"id": "ok", "instance": inst, "output": traces["gold"]}]
    mem = check_trace("SolverKnights-v0", records, tmp_path / "mem.json")
    assert mem["n"] == 1 and mem["bad_lines"] == 3 and mem["traces"][3]["reward"] == pytest.approx(1.55)
    assert [t["error"] for t in mem["traces"][:3]] == [
        "ValueError: the line is not usable JSON: nested deeper than 32 levels",
        "ValueError: the record is nested deeper than 32 levels",
        "ValueError: the record is nested deeper than 32 levels"]
    assert [t["id"] for t in mem["traces"]] == [1, 2, 3, "ok"]  # a refused record is named by its position
    assert json.loads((tmp_path / "mem.json").read_text())["bad_lines"] == 3

    out = tmp_path / "t.report.json"
    assert main(["check-trace", "SolverKnights-v0", str(path), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "1 line(s) could not be checked" in printed and "nested deeper than 32 levels" in printed
    written = json.loads(out.read_text())
    assert written["bad_lines"] == 1 and written["traces"][1]["line"] == 2

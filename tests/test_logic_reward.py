"""Spring §4.3's reward, the §5.1 / §5.3 presets, trace scoring and the Table 2 metrics."""
import copy
import json
from pathlib import Path

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action
from solvergym.envs.knights.verify import KNIGHTS
from solvergym.cli import main as check_main
from solvergym.cli.check_trace import add_parser as add_cli, run as check_and_print
from solvergym.envs.logic_steps.check_trace import check_trace
from solvergym.envs.logic_steps.problem import format_answer, gold_steps, gold_trace
from solvergym.envs.logic_steps.metrics import summarize, trace_row
from solvergym.envs.logic_steps.reward import PRESETS, RewardConfig, aggregate, get_preset, spring_reward
from solvergym.envs.logic_steps.trace import extract_answer, score_trace, split_step_action
from solvergym.envs.zebra.generator import ZebraInstance
from solvergym.envs.zebra.verify import ZEBRA

DATA = Path(__file__).parent / "data" / "logic_traces_zebra_app_a.jsonl"
RECORDS = {json.loads(line)["id"]: json.loads(line) for line in DATA.read_text().splitlines()}
ABC = ZebraInstance.from_dict(RECORDS["gold"]["instance"])
SPRING = get_preset("spring")


def score(text, preset="spring", **kw):
    return score_trace(ZEBRA, ABC, text, get_preset(preset, **kw))


def test_reward_formula_exact_weights():
    # s_sat = 1: r_base + (0.5 + 0.5 r_acc)(0.40 r_novel + 0.30 r_cons - 0.15 r_contra)
    c = spring_reward(r_parsed=1, r_format=0, r_accuracy=1, s_sat=True, n_novel=3, n_contra=1, n_formal=4,
                      r_consistency=1, config=SPRING)
    assert c == pytest.approx({"parsed": 0.15, "format": 0.0, "accuracy": 0.6, "novel": 0.3, "consistency": 0.3,
                               "contra": -0.0375})
    c = spring_reward(r_parsed=1, r_format=1, r_accuracy=0, s_sat=True, n_novel=2, n_contra=2, n_formal=4,
                      r_consistency=0, config=SPRING)
    assert sum(c.values()) == pytest.approx(0.25 + 0.5 * (0.4 * 0.5 - 0.15 * 0.5))
    # s_sat = 0: only r_base, whatever the steps
    c = spring_reward(r_parsed=1, r_format=1, r_accuracy=1, s_sat=False, n_novel=4, n_contra=0, n_formal=4,
                      r_consistency=1, config=SPRING)
    assert sum(c.values()) == pytest.approx(0.85) and c["novel"] == 0.0 and c["contra"] == 0.0


def test_presets_match_the_paper():
    kw = dict(r_parsed=1, r_format=1, r_accuracy=1, s_sat=True, n_novel=2, n_contra=1, n_formal=4, r_consistency=1)
    total = {name: sum(spring_reward(config=cfg, **kw).values()) for name, cfg in PRESETS.items()}
    assert total["spring"] == pytest.approx(0.85 + 0.4 * 0.5 + 0.3 - 0.15 * 0.25)
    assert total["or_int"] == pytest.approx(0.15 + 0.6)  # §5.1: 0.15 r_parsed + 0.6 r_accuracy
    assert total["or_nl"] == pytest.approx(0.15 + 0.6)
    assert total["minus_n"] == pytest.approx(0.85 + 0.3 - 0.15 * 0.25)  # §5.3 -N: no novelty reward
    assert total["minus_nc"] == pytest.approx(0.85 + 0.3)  # -NC: no novelty, no contradiction penalty
    assert set(spring_reward(config=PRESETS["or_int"], **kw)) == {"parsed", "format", "accuracy"}
    with pytest.raises(ValueError, match="unknown reward preset"):
        get_preset("nope")
    with pytest.raises(ValueError, match="aggregation"):
        RewardConfig(aggregation="mean")


def test_aggregation_choices():
    assert aggregate(3, 4, SPRING) == 0.75
    assert aggregate(0, 0, SPRING) == 0.0
    assert aggregate(3, 4, get_preset("spring", aggregation="any")) == 1.0
    assert aggregate(3, 40, get_preset("spring", aggregation="capped", cap=10)) == 0.3
    assert aggregate(30, 40, get_preset("spring", aggregation="capped", cap=10)) == 1.0


def test_gold_trace_gets_the_maximum():
    res = score(RECORDS["gold"]["output"])
    assert res.reward == pytest.approx(1.55) and res.correct
    assert res.metrics == {"puzzle_acc": 1.0, "cell_acc": 1.0, "cells_right": 9, "cells_total": 9}
    assert (res.r_parsed, res.r_format, res.r_accuracy, res.r_consistency, res.r_novel, res.r_contra) == (1, 1, 1, 1, 1, 0)
    assert res.n_entries == 10 and res.n_parsed == 5 and res.error_type == "correct"
    assert [v.formula for v in res.steps] == ["Alice == 1", "dog == 1", "coffee == 1", "Bob == 2", "cat == 2"]


def test_contradictory_step_lowers_the_reward():
    res = score(RECORDS["contradictory_step"]["output"])
    assert res.correct and res.n_contra == 1 and res.steps[-1].label == "contradictory"
    assert res.consistent is False  # Def. 6 over every extracted step
    assert res.reward == pytest.approx(0.85 + 0.4 * 5 / 6 - 0.15 / 6)
    assert "1 contradictory" in res.reason
    loose = score_trace(ZEBRA, ABC, RECORDS["contradictory_step"]["output"], SPRING, consistency_over="accepted")
    assert loose.reward == pytest.approx(0.85 + 0.4 * 5 / 6 + 0.3 - 0.15 / 6)


def test_duplicated_assignment_is_solver_consistent_error():
    res = score(RECORDS["duplicated_assignment"]["output"])
    assert not res.correct and res.s_sat and res.error_type == "solver_consistent"
    assert res.consistent is False  # the table puts the cat in two houses
    assert "cat is assigned to houses 1 and 2" in res.reason
    assert res.metrics["cell_acc"] == pytest.approx(8 / 9)
    assert res.reward == pytest.approx(0.15 + 0.10 + 0.5 * 0.40)


def test_header_mismatch():
    res = score(RECORDS["header_mismatch"]["output"])
    assert res.error_type == "header_mismatch" and not res.correct
    assert res.r_format == 0 and res.r_parsed == 0
    assert any("header mismatch" in i for i in res.format_issues)
    assert res.metrics["cell_acc"] == pytest.approx(6 / 9)  # the Pet column is not there
    assert res.reward == pytest.approx(0.5 * (0.4 + 0.3))


def test_malformed_json_and_missing_output_are_format_failures():
    res = score(RECORDS["malformed_json"]["output"])
    assert not res.answered and "not valid JSON" in res.error and res.reward == 0.0
    assert res.error_type == "format_failure"
    res = score(RECORDS["no_answer"]["output"])
    assert not res.answered and res.error_type == "missing_output" and res.reward == 0.0
    for text in ["<answer>[1, 2]</answer>", "<answer>" + "[" * 100000 + "</answer>", "<answer>{\"a\": NaN}</answer>x"]:
        obj, err, _ = extract_answer(text)
        assert obj is None or isinstance(obj, dict)


def test_format_rules():
    gold = json.loads(extract_answer(RECORDS["gold"]["output"])[0] and RECORDS["gold"]["output"][8:-9])
    cases = {
        "no_prefix": lambda o: o["syntactic_clues"].__setitem__(0, "Alice + 1 == cat."),
        "no_period": lambda o: o["reasoning"].__setitem__(1, "S1: Alice == 1"),
        "not_interleaved": lambda o: o["reasoning"].insert(0, "S0: Alice == 1."),
        "wrong_k": lambda o: o["reasoning"].__setitem__(3, "S7: dog == 1."),
        "extra_key": lambda o: o.__setitem__("notes", "x"),
        "attribute_values_changed": lambda o: o["attribute_values"]["Pet"].reverse(),
        "n_houses": lambda o: o.__setitem__("n_houses", 4),
    }
    for name, edit in cases.items():
        o = copy.deepcopy(gold)
        edit(o)
        res = score(format_answer(o))
        assert res.r_format == 0 and res.format_issues, name
    res = score("<think>let me think</think>\n" + RECORDS["gold"]["output"])
    assert res.r_format == 1  # a leading think block is allowed
    res = score("Here is my answer: " + RECORDS["gold"]["output"])
    assert res.r_format == 0 and "text outside" in res.format_issues[0]
    o = copy.deepcopy(gold)
    o["reasoning"][1] = "S1: Alice == one."
    res = score(format_answer(o))
    assert res.r_parsed == 0 and res.steps[0].label == "parse_error" and res.n_parsed == 4


def test_unsat_premises_remove_the_process_terms():
    o = json.loads(RECORDS["gold"]["output"][8:-9])
    o["syntactic_clues"].append("C7: Alice == 3.")
    res = score(format_answer(o))
    assert res.base_sat is False and not res.s_sat and res.error_type == "correct"
    assert all(v.label == "unverified" for v in res.steps)
    assert res.reward == pytest.approx(0.85) and res.components["novel"] == 0.0


def test_or_nl_asks_for_the_solution_only():
    only = format_answer({"solution": json.loads(RECORDS["gold"]["output"][8:-9])["solution"]})
    res = score(only, "or_nl")
    assert res.reward == pytest.approx(0.75) and res.r_parsed == 1
    assert score(only).r_parsed == 0  # the interleaved presets want premises and steps


def test_metrics_table2():
    rows = [trace_row(score(r["output"])) for r in RECORDS.values()]
    s = summarize(rows)
    assert s["all"]["n"] == 6 and s["solved"]["n"] == 2 and s["failed"]["n"] == 4
    assert s["solved"]["puzzle_acc"] == 1.0 and s["all"]["puzzle_acc"] == pytest.approx(2 / 6)
    assert s["solved"]["parsed_per_total"] == pytest.approx(0.5)
    assert s["solved"]["valid_per_parsed"] == pytest.approx((1.0 + 5 / 6) / 2)
    assert s["solved"]["contradictions_per_100"] == pytest.approx(100 * 1 / 22)
    assert s["all"]["sat_rate"] == pytest.approx(4 / 6)
    assert s["all"]["error_types"] == {"correct": 2, "solver_consistent": 1, "header_mismatch": 1,
                                       "format_failure": 1, "missing_output": 1}


def test_check_trace_prints_and_writes(tmp_path, capsys):
    out = tmp_path / "report.json"
    bad = tmp_path / "traces.jsonl"
    bad.write_text(DATA.read_text() + "not json\n" + json.dumps({"instance": {"n_houses": 3}, "output": "x"}) + "\n")
    report = check_and_print("SolverZebra-v0", bad, out)
    printed = capsys.readouterr().out
    assert "contradictory" in printed and "Contra/100 steps" in printed and "wrote" in printed
    saved = json.loads(out.read_text())
    # the scoring module itself prints nothing and writes the same report
    check_trace("SolverZebra-v0", bad, tmp_path / "quiet.json")
    assert capsys.readouterr().out == ""
    assert json.loads((tmp_path / "quiet.json").read_text()) == saved
    assert saved["n"] == 6 and saved["bad_lines"] == 2 and report["summary"]["all"]["n"] == 6
    gold = next(t for t in saved["traces"] if t["id"] == "gold")
    assert gold["reward"] == pytest.approx(1.55) and len(gold["steps"]) == 5
    # the subcommand, as solvergym.cli will expose it
    import argparse

    parser = argparse.ArgumentParser()
    add_cli(parser.add_subparsers(dest="cmd"))
    args = parser.parse_args(["check-trace", "SolverZebra-v0", str(DATA), "--out", str(tmp_path / "r2.json")])
    assert args.fn(args) == 0
    assert json.loads((tmp_path / "r2.json").read_text())["summary"]["solved"]["n"] == 2
    assert check_main(["check-trace", "NoSuchEnv-v0", str(DATA)]) == 2


def test_split_step_action():
    assert split_step_action("Bob lives in house 2. S1: Bob == 2.") == ("Bob lives in house 2.", 1, "Bob == 2")
    assert split_step_action("Since S2: fails, S3: And(a == 1, b == 2).") == ("Since S2: fails,", 3, "And(a == 1, b == 2)")
    assert split_step_action("no step here") is None


def test_gold_steps_are_novel_and_replayable():
    steps = gold_steps(ZEBRA, ABC)
    assert steps and all(isinstance(s, str) and isinstance(f, str) for s, f in steps)
    res = score(format_answer(gold_trace(ZEBRA, ABC, steps)))
    assert res.n_novel == len(steps) == res.n_formal


# ------------------------------------------------------------------ App. B.2: micro-averaged accuracies
def test_cell_acc_is_over_all_cells_of_all_puzzles(tmp_path, capsys):
    """Spring App. B.2 (b): Cell Acc = sum_i right cells_i / sum_i M_i, so a solved 2x2 and a 6x6
    with no cell right is 4/40 = 0.10 (the mean of the per-puzzle ratios would say 0.50)."""
    small = gym.make("SolverZebra-v0", n_houses=2, n_attributes=2).unwrapped
    small.reset(seed=0)
    big = gym.make("SolverZebra-v0", n_houses=6, n_attributes=6).unwrapped
    big.reset(seed=0)
    wrong = ZEBRA.gold_answer(big.instance)
    rows = wrong["solution"]["rows"]
    # every house gets the next house's values: all 36 cells wrong, the table still well formed
    wrong["solution"]["rows"] = [[r[0]] + rows[(h + 1) % 6][1:] for h, r in enumerate(rows)]
    traces = tmp_path / "mixed.jsonl"
    traces.write_text("".join(json.dumps(rec) + "\n" for rec in (
        {"id": "2x2", "instance": small.instance.to_dict(), "output": oracle_action(small)},
        {"id": "6x6", "instance": big.instance.to_dict(), "output": format_answer(wrong)})))
    report = check_and_print("SolverZebra-v0", traces, tmp_path / "mixed.report.json")
    summary = report["summary"]
    assert summary["all"]["cell_acc"] == pytest.approx(4 / 40)
    by_id = {t["id"]: t for t in report["traces"]}
    assert (by_id["2x2"]["cells_right"], by_id["2x2"]["cells_total"]) == (4, 4)
    assert (by_id["6x6"]["cells_right"], by_id["6x6"]["cells_total"]) == (0, 36)
    assert by_id["6x6"]["cell_acc"] == 0.0 and by_id["2x2"]["cell_acc"] == 1.0
    assert summary["all"]["cell_acc_macro"] == pytest.approx(0.5)
    assert summary["all"]["puzzle_acc"] == pytest.approx(0.5)
    assert summary["solved"]["cell_acc"] == 1.0 and summary["failed"]["cell_acc"] == 0.0
    printed = capsys.readouterr().out
    header = next(line for line in printed.splitlines() if line.startswith("group") and "cell_acc" in line)
    row = next(line for line in printed.splitlines() if line.startswith("all "))
    col = header.split().index("cell_acc")
    assert row.split()[col] == "0.100"
    # a trace without a usable solution still counts its puzzle's cells (Table 8: Cell Acc = 0)
    missing = score("no answer at all")
    assert (missing.metrics["cells_right"], missing.metrics["cells_total"]) == (0, 9)


def test_person_acc_is_over_all_persons_of_all_puzzles():
    """Spring App. B.2 (e): Person Acc = sum_i right identities_i / sum_i M_i."""
    two = gym.make("SolverKnights-v0", n_people=2).unwrapped
    two.reset(seed=0)
    eight = gym.make("SolverKnights-v0", n_people=8).unwrapped
    eight.reset(seed=0)
    flipped = KNIGHTS.gold_answer(eight.instance)
    flipped["solution"] = {n: ("knave" if r == "knight" else "knight") for n, r in flipped["solution"].items()}
    rows = [trace_row(two.problem.score_trace(two.instance, oracle_action(two))), trace_row(eight.problem.score_trace(eight.instance, format_answer(flipped)))]
    s = summarize(rows)["all"]
    assert s["person_acc"] == pytest.approx(2 / 10) and s["person_acc_macro"] == pytest.approx(0.5)
    assert (rows[0]["persons_right"], rows[0]["persons_total"]) == (2, 2)
    assert (rows[1]["persons_right"], rows[1]["persons_total"]) == (0, 8)
    assert s["puzzle_acc"] == pytest.approx(0.5)

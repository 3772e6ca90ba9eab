"""The public OR benchmark format (or-modelling.md §1, SIRL ``test_data/``): loading each release's
shape from small hand-written files in ``tests/data/or/``, the answer rules (exponents, zero,
infeasible markers), bad and hostile records reported rather than raised, benchmark records
scored by ``SolverOR-v0`` through the real sandbox, and the ``or-convert`` / ``or-sft`` dataset
commands (same seed, same bytes)."""
import hashlib
import json
from pathlib import Path

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.or_sft import OR_SFT_FULL_MARKS, build_or_sft
from solvergym.cli import main
from solvergym.envs.opt.datasets import (MAX_QUESTION_CHARS, as_benchmark_record, iter_records, load_benchmark,
                                         parse_answer, record_to_instance)
from solvergym.envs.opt.generator import ORInstance
from solvergym.sandbox import SandboxPool

DATA = Path(__file__).parent / "data" / "or"
FULL = {"format": 0.5, "execution": 1.0, "accuracy": 2.0, "bonus": 0.0}
NO_ORACLE = "a benchmark record has no reference model: no oracle"

# file -> (format, records read, good, infeasible, answers in order)
FILES = {
    "nl4opt.jsonl": ("jsonl", 4, 4, 1, [12.0, 4500.0, None, 1750.0]),
    "mamo_easylp_fixed.jsonl": ("jsonl", 5, 5, 1, [700.0, 1.2, 1e-05, None, 40.0]),
    "mamo_complexlp_fixed.json": ("jsonl", 4, 4, 1, [80.0, None, 7.0, 12.0]),
    "industryor.json": ("json-array", 3, 3, 0, [3300.0, -700.0, 260.0]),
    "optmath.jsonl": ("jsonl", 4, 4, 0, [0.0, -13.0, 0.027692307692307693, 30.0]),
    "optibench.jsonl": ("jsonl", 3, 3, 0, [0.0, 31.0, 12.0]),
    "bad.jsonl": ("jsonl", 6, 2, 0, [100.0, 20.0]),
}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=1) as p:
        yield p


def answer(program: str) -> str:
    return f"<think>t</think>\n<model>m</model>\n<python>\n{program}\n</python>"


def gurobi(objective: str, sense: str, constraints: list[str]) -> str:
    rows = "\n".join(f"m.addConstr({c})" for c in constraints)
    return ("import gurobipy as gp\nfrom gurobipy import GRB\nm = gp.Model(); m.Params.OutputFlag = 0\n"
            "x = m.addVar(name='x'); y = m.addVar(name='y')\n"
            f"m.setObjective({objective}, GRB.{sense})\n{rows}\nm.optimize()\n")


# -- loading ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(FILES))
def test_every_release_shape_loads_with_the_right_counts(name):
    fmt, n_read, n_ok, n_inf, answers = FILES[name]
    insts, report = load_benchmark(DATA / name)
    assert report["format"] == fmt and report["source"] == Path(name).stem
    assert (report["n_read"], report["n_ok"], report["n_bad"], report["n_infeasible"]) == \
        (n_read, n_ok, n_read - n_ok, n_inf)
    assert [i.answer for i in insts] == answers  # exact: "1e-05" is 1e-05, not SIRL's 1.0
    for inst in insts:
        assert inst.family == "benchmark" and inst.sense == "" and inst.model == {} and inst.features == {}
        assert inst.data == {} and inst.source == Path(name).stem
        assert inst.status == ("infeasible" if inst.answer is None else "optimal")
        assert ORInstance.from_json(inst.to_json()) == inst  # JSON round trip, validated again
    assert len({i.instance_id for i in insts}) == len(insts)


def test_extra_fields_are_kept():
    easy, _ = load_benchmark(DATA / "mamo_easylp_fixed.jsonl")
    assert easy[1].extra == {"is_checked": 1, "original_answer": "1.5", "source_index": 1}
    assert easy[3].extra["original_answer"] == "60" and easy[3].answer is None  # the "-9999" record
    complex_, _ = load_benchmark(DATA / "mamo_complexlp_fixed.json", source="MAMO_ComplexLP_fixed")
    assert complex_[2].extra == {"is_checked": 1, "orginal_answer": "5", "source_index": 2}  # SIRL's misspelling
    assert complex_[1].answer is None and all(i.source == "MAMO_ComplexLP_fixed" for i in complex_)
    ind, _ = load_benchmark(DATA / "industryor.json")
    assert [(i.extra["id"], i.extra["difficulty"]) for i in ind] == [(1, "Easy"), (2, "Medium"), (3, "Hard")]
    # the optimal-objective integers of OptiBench become floats (0 stays a real answer)
    opti, _ = load_benchmark(DATA / "optibench.jsonl")
    assert opti[0].answer == 0.0 and isinstance(opti[0].answer, float) and opti[0].status == "optimal"


def test_bad_lines_are_reported_with_line_numbers_and_reasons():
    insts, report = load_benchmark(DATA / "bad.jsonl")
    assert [i.question.split()[1] for i in insts] == ["kiosk", "stall"]
    assert [i.extra["source_index"] for i in insts] == [0, 5]  # positions among the records read
    lines = {b["line"]: b["reason"] for b in report["bad"]}
    assert sorted(lines) == [2, 3, 5, 6]  # line 4 is blank: not a record
    assert lines[2].startswith("not JSON") and "no en_answer" in lines[3]
    assert "'nan'" in lines[5] and "'abc'" in lines[6]


def test_a_json_array_reports_the_line_each_item_starts_on(tmp_path):
    text = (DATA / "industryor.json").read_text()
    fmt, items = iter_records(text)
    assert fmt == "json-array" and [line for line, _, _ in items] == [2, 8, 14]
    p = tmp_path / "arr.json"
    p.write_text(json.dumps([{"en_question": "q one", "en_answer": "1"}, 7, {"en_question": "q", "en_answer": []}],
                            indent=1))
    insts, report = load_benchmark(p)
    assert len(insts) == 1 and [b["line"] for b in report["bad"]] == [6, 7]
    assert "JSON object" in report["bad"][0]["reason"]
    broken = tmp_path / "broken.json"  # starts as an array but is not one: its lines are reported
    broken.write_text('[{"en_question": "a", "en_answer": 1},\n')
    insts, report = load_benchmark(broken)
    assert insts == [] and report["format"] == "jsonl" and report["n_bad"] == 1
    empty = tmp_path / "empty.json"
    empty.write_text("[]\n")
    assert load_benchmark(empty)[1]["n_read"] == 0


@pytest.mark.parametrize("value,expected", [
    ("1160.0", 1160.0), ("-162", -162.0), ("1e-05", 1e-05), ("1.5e+16", 1.5e16), ("1.2345678901234568e+17",
     1.2345678901234568e17), (" 42 ", 42.0), (0, 0.0), ("0", 0.0), (-3.25, -3.25),
    ("No Best Solution", None), ("  no best SOLUTION ", None), ("-9999", None), ("-9999.0", None),
    ("-99999", None), (-9999, None), (-9999.0, None), ("-99990", -99990.0), ("-9999.5", -9999.5)])
def test_answers_are_read_with_exponents_and_markers(value, expected):
    assert parse_answer(value) == expected


@pytest.mark.parametrize("value", ["", "  ", "nan", "NaN", "inf", "-Infinity", "abc", "1,160", "1_000", "1e999",
                                   "12.5%", True, None, [], {}, float("nan"), float("inf"), 10 ** 400, "9" * 100])
def test_unreadable_answers_are_errors(value):
    with pytest.raises(ValueError):
        parse_answer(value)


def test_hostile_records_are_refused_with_a_reason(tmp_path):
    ok = {"en_question": "q", "en_answer": "1"}
    cases = [
        ([1, 2], "JSON object"),
        ({"en_answer": "1"}, "no en_question"),
        ({"en_question": 5, "en_answer": "1"}, "must be a string"),
        ({"en_question": "   ", "en_answer": "1"}, "empty"),
        ({"en_question": "x" * (MAX_QUESTION_CHARS + 1), "en_answer": "1"}, "limit"),
        ({"en_question": "a\x00b", "en_answer": "1"}, "non-text"),
        ({**ok, "note": float("nan")}, "plain JSON"),
        ({**ok, "note": (1, 2)}, "plain JSON"),
        ({**ok, 3: "x"}, "field names"),
    ]
    for record, why in cases:
        with pytest.raises(ValueError, match=why):
            record_to_instance(record)
    with pytest.raises(ValueError, match="other than 'generated'"):
        record_to_instance(ok, source="generated")
    with pytest.raises(ValueError, match="source_index"):
        record_to_instance({**ok, "source_index": 3}, index=0)
    assert record_to_instance({**ok, "source_index": 3}).extra == {"source_index": 3}
    assert record_to_instance(ok, index=4).extra == {"source_index": 4}
    # in a file: a line far too long is reported unparsed; NaN in a record's field is refused
    p = tmp_path / "hostile.jsonl"
    p.write_text(json.dumps({"en_question": "y" * 1_200_000, "en_answer": 1}) + "\n"
                 + '{"en_question": "q", "en_answer": 1, "x": NaN}\n' + "[" * 100_000 + "\n"
                 + json.dumps(ok) + "\n")
    insts, report = load_benchmark(p)
    assert len(insts) == 1 and [b["line"] for b in report["bad"]] == [1, 2, 3]
    assert "limit" in report["bad"][0]["reason"] and "plain JSON" in report["bad"][1]["reason"]
    # only the generator's own instances must carry a model
    inst = record_to_instance(ok)
    with pytest.raises(ValueError):
        ORInstance.from_dict({**inst.to_dict(), "source": "generated", "family": "product_mix"})
    with pytest.raises(ValueError, match="features"):
        ORInstance.from_dict({**inst.to_dict(), "features": {"num_vars": 2}})


def test_as_benchmark_record_tells_records_from_instances():
    rec = {"en_question": "q", "en_answer": 3}
    assert as_benchmark_record(rec) is rec and as_benchmark_record(json.dumps(rec)) == rec
    inst = record_to_instance(rec)
    assert as_benchmark_record(inst) is None and as_benchmark_record(inst.to_dict()) is None
    assert as_benchmark_record(inst.to_json()) is None and as_benchmark_record('{"en_question": ') is None


# -- scoring through the env ------------------------------------------------------------------------
def test_a_record_is_scored_through_the_sandbox(pool):
    env = gym.make("SolverOR-v0", pool=pool).unwrapped
    record = {"en_question": "Maximise 3x + 2y subject to x + y <= 4 and x + 3y <= 6, x, y >= 0.",
              "en_answer": "12.0", "id": 9}
    obs, info = env.reset(options={"instance": record})
    assert record["en_question"] in obs and info["difficulty"]["family"] == "benchmark"
    assert env.instance.extra == {"id": 9}
    right = gurobi("3 * x + 2 * y", "MAXIMIZE", ["x + y <= 4", "x + 3 * y <= 6"])
    obs, r, term, trunc, info = env.step(answer(right))
    assert term and info["reward_components"] == FULL and r == pytest.approx(3.5) and info["correct"]
    # the same record as JSON text; a wrong model runs (execution) but earns no accuracy
    env.reset(options={"instance": json.dumps(record)})
    wrong = gurobi("3 * x + 2 * y", "MAXIMIZE", ["x + y <= 5", "x + 3 * y <= 6"])
    _, r, _, _, info = env.step(answer(wrong))
    assert info["reward_components"]["execution"] == 1.0 and info["reward_components"]["accuracy"] == 0.0
    # no oracle for a record
    with pytest.raises(ValueError, match=NO_ORACLE):
        env.gold()
    with pytest.raises(ValueError, match=NO_ORACLE):
        env.sample_answer(None)
    # an instance read from a file, and its dict, are accepted as well
    insts, _ = load_benchmark(DATA / "nl4opt.jsonl")
    env.reset(options={"instance": insts[0].to_dict()})
    assert env.instance == insts[0]
    _, r, _, _, info = env.step(answer(right))
    assert info["reward_components"] == FULL
    env.close()


def test_zero_and_infeasible_ground_truths_from_files(pool):
    env = gym.make("SolverOR-v0", pool=pool).unwrapped
    opti, _ = load_benchmark(DATA / "optibench.jsonl")  # record 0: min 2x + 3y, x + y <= 5 -> 0
    env.reset(options={"instance": opti[0]})
    _, r, _, _, info = env.step(answer(gurobi("2 * x + 3 * y", "MINIMIZE", ["x + y <= 5"])))
    assert info["objective"] == 0.0 and info["reward_components"] == FULL, info["reason"]
    nl, _ = load_benchmark(DATA / "nl4opt.jsonl")  # record 2: "No Best Solution" (10 vans, 4 owned)
    env.reset(options={"instance": nl[2]})
    infeasible = gurobi("80 * x", "MINIMIZE", ["x >= 10", "x <= 4"])
    _, r, _, _, info = env.step(answer(infeasible))
    assert info["solver_status"] in ("infeasible", "inf_or_unbd") and info["reward_components"] == FULL
    # a model with an optimum does not match an infeasible ground truth
    env.reset(options={"instance": nl[2]})
    _, r, _, _, info = env.step(answer(gurobi("80 * x", "MINIMIZE", ["x >= 4"])))
    assert info["reward_components"]["accuracy"] == 0.0
    env.close()


# -- the dataset commands ---------------------------------------------------------------------------
def test_or_convert_writes_instances_and_manifest(tmp_path, capsys):
    out = tmp_path / "conv"
    assert main(["dataset", "or-convert", "--input", str(DATA / "bad.jsonl"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "6 records read, 2 kept (0 infeasible), 4 bad" in printed and "line 2: not JSON" in printed
    insts, report = load_benchmark(DATA / "bad.jsonl")
    data = (out / "bad.jsonl").read_bytes()
    assert data.decode().splitlines() == [i.to_json() for i in insts]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"]["bad.jsonl"] == {"count": 2, "infeasible": 0, "sha256": hashlib.sha256(data).hexdigest()}
    assert manifest["counts"] == {"n_read": 6, "n_ok": 2, "n_bad": 4, "n_infeasible": 0}
    assert manifest["bad"] == report["bad"] and manifest["source"] == "bad"
    assert manifest["input_sha256"] == hashlib.sha256((DATA / "bad.jsonl").read_bytes()).hexdigest()
    # the converted file loads back as the same instances (ORInstance dicts are read as such)
    again, rep2 = load_benchmark(out / "bad.jsonl")
    assert again == insts and rep2["n_bad"] == 0
    # an infeasible-carrying JSON array
    assert main(["dataset", "or-convert", "--input", str(DATA / "mamo_complexlp_fixed.json"), "--out", str(out)]) == 0
    lines = (out / "mamo_complexlp_fixed.jsonl").read_text().splitlines()
    assert len(lines) == 4 and json.loads(lines[1])["status"] == "infeasible"
    with pytest.raises(SystemExit):
        main(["dataset", "or-convert", "--out", str(out)])
    with pytest.raises(SystemExit, match="or-convert"):
        main(["dataset", "or-convert", "--input", str(tmp_path / "missing.jsonl"), "--out", str(out)])


def test_or_sft_keeps_full_reward_traces_and_is_deterministic(tmp_path, pool, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["dataset", "or-sft", "--out", str(a), "--n", "4", "--seed", "3"]) == 0
    assert "train.jsonl: 4 records" in capsys.readouterr().out
    build_or_sft(b, n=4, seed=3, pool=pool, progress=False)  # another pool: the same bytes
    for name in ("train.jsonl", "test.jsonl", "manifest.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    recs = [json.loads(x) for x in (a / "train.jsonl").read_text().splitlines()]
    assert (a / "test.jsonl").read_text() == ""  # round(4 * 0.1) = 0 test records
    assert len(recs) == 4 and [r["id"] for r in recs] == [0, 1, 2, 3]
    assert [r["family"] for r in recs] == ["product_mix", "diet", "transportation", "assignment"]
    for r in recs:
        assert set(r) >= {"id", "split", "family", "solver", "instance_id", "messages", "reward", "reward_components"}
        assert r["reward"] == 3.5 and r["reward_components"] == OR_SFT_FULL_MARKS and r["solver"] == "gurobipy"
        assert [m["role"] for m in r["messages"]] == ["user", "assistant"]
        assert "<python>" in r["messages"][1]["content"] and "gurobipy" in r["messages"][1]["content"]
    manifest = json.loads((a / "manifest.json").read_text())
    assert manifest["dropped"] == 0 and manifest["files"]["train.jsonl"]["sha256"] == \
        hashlib.sha256((a / "train.jsonl").read_bytes()).hexdigest()
    # a test split, another solver (no QP family for OR-Tools), bad settings
    m = build_or_sft(tmp_path / "c", n=3, seed=0, solver="ortools", test_fraction=0.34, pool=pool, progress=False)
    assert m["files"]["train.jsonl"]["count"] == 2 and m["files"]["test.jsonl"]["count"] == 1
    assert "portfolio" not in m["families"]
    for bad in ({"n": 0}, {"solver": "copt"}, {"test_fraction": 1.0}):
        with pytest.raises(ValueError):
            build_or_sft(tmp_path / "d", pool=pool, progress=False, **bad)

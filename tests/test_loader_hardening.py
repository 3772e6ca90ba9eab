"""Loaders and resets refuse bad data (issue 23, items 13-15): one validation path for a dataset
file's records and for ``reset(options={"instance": ...})``; regular files only, bounded in size
and depth; a bad record is a ``ValueError`` naming ``path:line`` (a file) or what is wrong (a
reset); and a SATURN record's ``model_count``, which sets the chance penalty, is recounted or
checked, never trusted."""
import json
import os
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import solvergym  # noqa: F401
from solvergym.cli import main
from solvergym.envs.modes.tool import SolverToolEnv
from solvergym.envs.opt.datasets import (MAX_MODEL_CONSTRAINTS, MAX_MODEL_NONZEROS, MAX_MODEL_VARIABLES,
                                         check_model_size, load_benchmark, record_to_instance)
from solvergym.envs.opt.generator import FAMILIES, ORInstance
from solvergym.envs.records import MAX_DEPTH, read_regular
from solvergym.envs.sat.cnf import DEFAULT_MODEL_LIMIT, first_violated
from solvergym.envs.sat.datasets import load_sat_bench_jsonl, load_saturn_jsonl
from solvergym.envs.sat.generator import RECOUNT_MAX_WORK, SATInstance
from solvergym.envs.sat.problem import SATProblem
from solvergym.envs.sat.tool import SATTool

BENCH = {"en_question": "Maximise x subject to x <= 3.", "en_answer": 3}
# k = 5: each clause rules out 4 of the 32 assignments and they rule out different ones: 24 models
SATURN = {"n_sat": 3, "k": 5, "solution": "11000", "clause": "!A!B!C & !AB!D"}
SATURN_MODELS = [format(i, "05b") for i in range(32) if first_violated([[-1, -2, -3], [-1, 2, -4]],
                                                                          format(i, "05b")) is None]


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def or_env():
    return gym.make("SolverOR-v0").unwrapped  # a reset needs no sandbox


def sat_tool_env():
    return SolverToolEnv("sat", tool_sampling=False, solver="z3")


# -- item 13: files are regular and bounded --------------------------------------------------------
@pytest.mark.parametrize("target", ["/dev/null", "dir", "fifo", "/dev/zero"])
def test_loaders_read_regular_files_only(tmp_path, target):
    """A device (``/dev/zero`` never ends), a FIFO (opening it waits for a writer) or a directory
    behind a dataset-looking symlink is refused before anything is read."""
    if target == "dir":
        (tmp_path / "d").mkdir()
        target = tmp_path / "d"
    elif target == "fifo":
        os.mkfifo(tmp_path / "pipe")
        target = tmp_path / "pipe"
    link = tmp_path / "bench.jsonl"
    link.symlink_to(target)
    for load in (load_benchmark, load_saturn_jsonl, load_sat_bench_jsonl):
        with pytest.raises(ValueError, match=r"bench\.jsonl \(-> .*\): .*not a regular file"):
            load(link)
    with pytest.raises(SystemExit, match=r"or-convert: .*not a regular file"):
        main(["dataset", "or-convert", "--input", str(link), "--out", str(tmp_path / "out")])
    assert not (tmp_path / "out").exists()


def test_a_file_is_read_only_up_to_its_bound(tmp_path):
    """``/proc`` files are regular and report 0 bytes: the read itself stops at the bound."""
    assert os.stat("/proc/self/status").st_size == 0
    with pytest.raises(ValueError, match="more than 64 bytes"):
        read_regular("/proc/self/status", max_bytes=64)
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"x" * 65)
    with pytest.raises(ValueError, match="65 bytes; the limit is 64"):
        read_regular(p, max_bytes=64)
    assert read_regular(p, max_bytes=65) == b"x" * 65


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 200, 980])
def test_a_deeply_nested_field_is_refused_by_the_loader(tmp_path, depth):
    p = tmp_path / "deep.jsonl"
    p.write_text(json.dumps(BENCH) + "\n" + json.dumps(BENCH)[:-1] + f', "x": {nested(depth)}}}\n')
    insts, report = load_benchmark(p)
    assert len(insts) == 1 and [b["line"] for b in report["bad"]] == [2]
    assert "nested deeper than" in report["bad"][0]["reason"]
    within = tmp_path / "ok.jsonl"  # nesting up to the bound is a record like any other
    within.write_text(json.dumps(BENCH)[:-1] + f', "x": {nested(MAX_DEPTH - 1)}}}\n')
    assert load_benchmark(within)[1]["n_ok"] == 1


def test_a_deeply_nested_instance_is_refused_at_reset():
    env = or_env()
    record = json.loads(json.dumps(BENCH)[:-1] + f', "x": {nested(200)}}}')
    inst = record_to_instance(BENCH).to_dict()
    deep_instance = {**inst, "extra": {"x": json.loads(nested(200))}}
    for given in (record, json.dumps(record), deep_instance, json.dumps(deep_instance)):
        with pytest.raises(ValueError, match="nested deeper than"):
            env.reset(options={"instance": given})
    env.reset(options={"instance": inst})  # the env still works
    assert env.instance.question == BENCH["en_question"]


@pytest.mark.parametrize("question,why", [("\x00\x1b[31m" + "x" * 3_000_000, "characters; the limit"),
                                          ("Maximise x.\x1b[2J", "non-text"), ("y" * 200_000, "limit")])
def test_reset_refuses_the_question_the_loader_refuses(tmp_path, question, why):
    """An ORInstance (its dict, its JSON, the dataclass) obeys a benchmark record's question rules."""
    hostile = {**record_to_instance(BENCH).to_dict(), "question": question}
    env = or_env()
    for given in (hostile, json.dumps(hostile), ORInstance(**hostile), {**BENCH, "en_question": question}):
        with pytest.raises(ValueError, match=why):
            env.reset(options={"instance": given})
    if len(question) < 1_000_000:  # a converted file's line holding it is refused with its line
        p = tmp_path / "conv.jsonl"
        p.write_text(record_to_instance(BENCH).to_json() + "\n" + json.dumps(hostile) + "\n")
        insts, report = load_benchmark(p)
        assert len(insts) == 1 and report["bad"][0]["line"] == 2 and "question" in report["bad"][0]["reason"]


def one_row_model(n: int) -> dict:
    """An ORInstance dict whose model has one row over ``n`` binaries (its features written out)."""
    names = [f"b{i}" for i in range(n)]
    model = {"sense": "max", "variables": [{"name": v, "lb": 0.0, "ub": 1.0, "kind": "B"} for v in names],
             "constraints": [{"name": "r", "coefs": dict.fromkeys(names, 1.0), "lo": None, "hi": 5.0}],
             "objective": {"b0": 1.0}, "quadratic": [], "constant": 0.0}
    features = {"sense": "max", "num_vars": n, "num_continuous": 0, "num_int": 0, "num_bin": n, "num_constrs": 1,
                "num_q_obj_terms": 0, "big_m": False}
    return {"family": "knapsack", "question": "Choose items.", "answer": 5.0, "status": "optimal", "sense": "max",
            "model": model, "data": {}, "features": features, "source": "generated", "extra": {}}


def test_a_model_over_the_size_bounds_is_refused_before_it_is_analysed(tmp_path):
    """One row over 12,000 binaries (a 700 kB line) cost 16-22 s of feature analysis per record;
    the record is refused by its size before any of it runs."""
    big = one_row_model(12_000)
    p = tmp_path / "big.jsonl"
    p.write_text(json.dumps(big) + "\n")
    assert p.stat().st_size < 1_000_000  # under the line bound: only the model bound stops it
    insts, report = load_benchmark(p)
    assert insts == [] and report["bad"] == [
        {"line": 1, "reason": f"the model has 12000 variables; the limit is {MAX_MODEL_VARIABLES}"}]
    with pytest.raises(ValueError, match="12000 variables"):
        or_env().reset(options={"instance": big})
    dense = one_row_model(200)  # 300 rows over 200 columns: 60,000 nonzeros
    dense["model"]["constraints"] = [{"name": f"r{i}", "coefs": dict.fromkeys([f"b{j}" for j in range(200)], 1.0),
                                      "lo": None, "hi": 5.0} for i in range(300)]
    with pytest.raises(ValueError, match=f"60001 nonzeros; the limit is {MAX_MODEL_NONZEROS}"):
        or_env().reset(options={"instance": dense})


def test_the_size_bounds_admit_every_family_at_its_largest_size():
    rng = np.random.default_rng(0)
    for name, fam in FAMILIES.items():
        data = fam.make_data(rng, fam.max_size, None, 4)
        _, model = fam.finish(data)
        d = model.to_dict()
        assert check_model_size(d) is None  # raises if a generated model were over a bound
        nonzeros = sum(len(c["coefs"]) for c in d["constraints"])
        assert len(d["variables"]) <= MAX_MODEL_VARIABLES and len(d["constraints"]) <= MAX_MODEL_CONSTRAINTS, name
        assert 0 < nonzeros <= MAX_MODEL_NONZEROS, name


# -- item 14: wrong types name the line, garbage says what is wrong -------------------------------
@pytest.mark.parametrize("line,why", [
    ({**SATURN, "n_sat": [3]}, "n_sat"), ({**SATURN, "n_sat": "3"}, "n_sat"), ({**SATURN, "k": None}, "k must"),
    ({**SATURN, "k": 5.5}, "k must"), ({**SATURN, "clause": ["A"]}, "clause must"),
    ({**SATURN, "solution": 11000}, "solution must"), ({**SATURN, "model_count": "24"}, "model_count"),
    ({**SATURN, "model_count_exact": "yes"}, "model_count_exact"), ([1, 2], "JSON object"),
    ("text", "JSON object"), ({**SATURN, "x": json.loads(nested(50))}, "nested deeper")])
def test_saturn_records_with_wrong_types_name_the_line(tmp_path, line, why):
    p = tmp_path / "saturn.jsonl"
    p.write_text(json.dumps(SATURN) + "\n\n" + json.dumps(line) + "\n")
    with pytest.raises(ValueError, match=rf"saturn\.jsonl:3: .*{why}") as e:
        load_saturn_jsonl(p)
    assert type(e.value) is ValueError and str(e.value).startswith(str(p))


def test_sat_bench_records_that_are_not_objects_name_the_line(tmp_path):
    p = tmp_path / "bench.jsonl"
    p.write_text("[1, 2]\n")
    with pytest.raises(ValueError, match=r"bench\.jsonl:1: .*JSON object"):
        load_sat_bench_jsonl(p)


@pytest.mark.parametrize("env_id", ["SolverSAT-v0", "SolverSATBench-v0", "SolverOR-v0", "SolverTool-v0"])
@pytest.mark.parametrize("given,why", [("garbage", "is not JSON: Expecting value"), ("[1, 2]", "JSON object, got list"),
                                       ("null", "JSON object, got NoneType"), ('"text"', "JSON object, got str"),
                                       ("[" * 100_000, "nested deeper"), ("{", "is not JSON")])
def test_reset_with_text_that_is_no_instance_says_what_is_wrong(env_id, given, why):
    env = gym.make(env_id).unwrapped
    with pytest.raises(ValueError, match=why) as e:
        env.reset(options={"instance": given})
    assert type(e.value) is ValueError  # not json's JSONDecodeError, nor a TypeError
    env.reset(seed=0)  # the env still works
    env.close()


def test_a_saturn_dict_with_wrong_types_is_a_value_error_at_reset():
    env = gym.make("SolverSAT-v0").unwrapped
    for bad in ({**SATURN, "n_sat": [3]}, {**SATURN, "k": None}, {**SATURN, "solution": 11000}):
        with pytest.raises(ValueError) as e:
            env.reset(options={"instance": bad})
        assert type(e.value) is ValueError


# -- item 15: a record's model count is recounted or checked --------------------------------------
@pytest.mark.parametrize("count", [1, 23, 25, 64, 33, -3, 0, "24", True, 24.0])
@pytest.mark.parametrize("make", [sat_tool_env, lambda: gym.make("SolverSAT-v0").unwrapped], ids=["tool", "single"])
def test_a_false_or_malformed_model_count_is_refused_at_reset(make, count):
    """24 of the 32 assignments satisfy the record: a count claimed lower let a uniform guess
    average +0.817 in tool mode; one above 2^5, negative or a string made ``step`` raise."""
    env = make()
    assert len(SATURN_MODELS) == 24
    with pytest.raises(ValueError, match="model_count") as e:
        env.reset(options={"instance": {**SATURN, "model_count": count}})
    assert type(e.value) is ValueError
    inst = SATInstance(n=3, k=5, clauses=[[-1, -2, -3], [-1, 2, -4]], solution="11000", model_count=count)
    with pytest.raises(ValueError, match="model_count"):  # the dataclass itself is checked as well
        env.reset(options={"instance": inst})
    env.close()


@pytest.mark.parametrize("record", [{**SATURN, "model_count": 24}, SATURN,
                                    {**SATURN, "model_count": 3, "model_count_exact": False}],
                         ids=["true count", "no count", "lower bound"])
def test_a_uniform_guess_does_not_pay_on_an_accepted_record(record):
    """Over all 32 assignments, the mean reward is 0.1 - (1 - p) * 0.1 = 0.075 (p = 24/32); a
    record whose count is a lower bound charges a wrong guess eq. 1's -1.1, so it pays still less."""
    env = sat_tool_env()
    total = 0.0
    for i in range(32):
        env.reset(options={"instance": record})
        _, r, term, _, _ = env.step(f"```answer {i:05b}```")
        assert term
        total += r
    want = 0.075 if record.get("model_count_exact", True) else 0.1 + (24 - 8 * 1.1) / 32
    assert total / 32 == pytest.approx(want)
    env.close()


def test_above_k20_a_count_is_checked_as_far_as_enumeration_reaches():
    """k = 21: no exact recount; an exact claim is checked by enumerating one model past it (and
    refused when too large to check), a lower bound is only range-checked (the scorer then charges
    -1 - eps)."""
    k, clauses = 21, [[1, 2, 3]]
    solution = "1" + "0" * 20
    true_count = 7 * 2 ** 18

    def inst(count, exact=True):
        return SATInstance(n=3, k=k, clauses=clauses, solution=solution, model_count=count, model_count_exact=exact)

    for count, exact, why in ((1, True, "at least 2"), (DEFAULT_MODEL_LIMIT, True, "cannot be checked"),
                              (2 ** 21 + 1, False, r"not in \[1, 2\^21\]"), (0, False, r"not in \[1, 2\^21\]")):
        with pytest.raises(ValueError, match=why):
            inst(count, exact).validate()
    inst(2 ** 21, exact=False).validate()  # the range's ends are in it
    lower = inst(1, exact=False)
    lower.validate()  # a lower bound, checked only for its range
    wrong = "0" * 21
    assert SATTool(SATProblem()).score(lower, f"```answer {wrong}```").components["correct"] == pytest.approx(-1.1)
    assert true_count > DEFAULT_MODEL_LIMIT
    # k = 20 but 1,100 clauses: a recount would take 1,100 x 2^20 clause checks, over the bound
    heavy = dict(n=3, k=20, clauses=[[1, 2, 3]] * 1100, solution="1" + "0" * 19)
    assert 1100 << 20 > RECOUNT_MAX_WORK
    with pytest.raises(ValueError, match="cannot be checked"):
        SATInstance(**heavy, model_count=1).validate()
    SATInstance(**heavy, model_count=1, model_count_exact=False).validate()


def test_step_never_raises_on_an_unchecked_count():
    """An instance built by hand and scored directly (no reset, so never validated) with a count
    out of range is recounted, not trusted: its penalty is the true one."""
    tool = SATTool(SATProblem())
    clauses = [[-1, -2, -3], [-1, 2, -4]]
    wrong = next(format(i, "05b") for i in range(32) if format(i, "05b") not in SATURN_MODELS)
    p = 24 / 32
    for count in (64, -3, "24", None, True):
        inst = SATInstance(n=3, k=5, clauses=clauses, solution="11000", model_count=count)
        assert tool.score(inst, f"```answer {wrong}```").components["correct"] == pytest.approx(-p / (1 - p) - 0.1)


def test_released_and_built_saturn_files_still_load():
    insts = load_saturn_jsonl(Path(__file__).parent / "data" / "saturn_released_sample.jsonl")
    assert insts and all(i.model_count == sum(first_violated(i.clauses, format(b, f"0{i.k}b")) is None
                                              for b in range(2 ** i.k)) for i in insts)

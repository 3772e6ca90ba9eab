"""Synthetic-Logic (issue 26; SAT-RL §3.1-3.2, App. B.1): every family as decision / solving /
counting on the problem contract, its ground-truth programs run in the real sandbox for every
solver that fits and agree with the truth and with each other, its witness verifier (written
without a solver) accepts the oracle and rejects one changed element, counts equal brute force,
decisions are balanced, and the oracle earns the full reward single-turn and in tool mode."""
from __future__ import annotations

import json
import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from hypothesis import HealthCheck, given, settings, strategies as st

import solvergym  # noqa: F401
from solvergym.agents.scripted import OracleAgent, play_episode
from solvergym.envs.logic import FAMILIES, QUERIES
from solvergym.envs.logic.family import LogicInstance, family_class
from solvergym.envs.logic.model import brute_force_count
from solvergym.envs.logic.programs import LOGIC_SOLVERS, logic_program, read_output
from solvergym.sandbox import SandboxPool

PAIRS = [(f, q) for f in FAMILIES for q in QUERIES]
#: knobs small enough to enumerate every assignment (at most 20 variables)
SMALL = {
    "clique": {"n": 8, "k": 3},
    "feedback-vertex-set": {"n": 7, "k": 2},
    "graph-coloring": {"n": 5, "k": 3},
    "max-cut": {"n": 5},
    "partition": {"n": 10},
    "subset-sum": {"n": 10},
    "tsp": {"n": 3, "max_weight": 9},
    "set-cover": {"u": 8, "m": 6, "k": 2},
    "set-packing": {"u": 8, "m": 6, "k": 2},
    "nfa-path": {"states": 2, "alphabet": 2, "length": 3},
    "bnn-robustness": {"n_in": 8, "hidden": 3, "eps": 3},
    "n-queens": {"n": 4, "pre": 1},
    "sudoku": {"n": 2, "given": 13},
    "magic-square": {"n": 3, "givens": 6},
    "latin-square": {"n": 2, "given": 0},
    "futoshiki": {"n": 2, "given": 0, "inequalities": 2},
}


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=2) as p:
        yield p


def _instance(family: str, query: str, seed: int, **knobs) -> tuple[gym.Env, LogicInstance]:
    env = gym.make("SolverLogic-v0", family=family, query=query, **knobs)
    env.reset(seed=seed)
    return env, env.unwrapped.instance


def test_every_family_is_registered_with_its_category_and_solvers():
    from solvergym import registry

    assert set(FAMILIES) <= set(registry.tool_tasks())
    for name, (_, category) in FAMILIES.items():
        cls = family_class(name)
        assert cls.category == category and category in ("puzzle", "program verification", "integer programming", "graph")
        # every solver of §3.1 either fits or the family says why not
        assert set(cls.solvers) | set(cls.unfit) == set(LOGIC_SOLVERS) and not set(cls.solvers) & set(cls.unfit)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_instance_fits_the_solvers_the_family_names(family):
    cls = family_class(family)
    for seed in range(10):
        _, inst = _instance(family, "counting", seed)
        model = cls.encode(inst.data)
        assert all(model.fits(s) for s in cls.solvers)
        assert all(not model.fits(s) for s in cls.unfit)


@pytest.mark.parametrize("family,query", PAIRS)
def test_programs_of_every_fitting_solver_agree_with_the_truth(pool, family, query):
    cls = family_class(family)
    for seed in range(2):
        env, inst = _instance(family, query, seed)
        model = cls.encode(inst.data)
        answers = {}
        for solver in cls.solvers:
            r = pool.run(logic_program(solver, model, query))
            assert r.ok and r.called(solver), (solver, r.status, r.stderr[-500:])
            out = read_output(r.stdout, query)
            assert out is not None, (solver, r.stdout[-300:])
            if query == "solving":  # any witness will do; each is checked without a solver
                witness = env.unwrapped.problem.witness_from_true(inst.data, set(out["true"]))
                assert cls.check_witness(inst.data, witness) is None, (solver, witness)
                out = {"sat": out["sat"]}
            answers[solver] = out
        truth = {"count": inst.count} if query == "counting" else {"sat": inst.satisfiable}
        assert all(a == truth for a in answers.values()), (answers, truth)


def _one_changed(witness):
    """Every witness that differs from ``witness`` in one element by +-1."""
    if isinstance(witness[0], list):
        for i, row in enumerate(witness):
            for j in range(len(row)):
                for d in (-1, 1):
                    yield [r if k != i else [*r[:j], r[j] + d, *r[j + 1:]] for k, r in enumerate(witness)]
    else:
        for i in range(len(witness)):
            for d in (-1, 1):
                yield [*witness[:i], witness[i] + d, *witness[i + 1:]]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_verifier_accepts_the_witness_and_rejects_one_changed_element(family):
    cls = family_class(family)
    rejected = 0
    for seed in range(10):
        env, inst = _instance(family, "solving", seed)
        problem = env.unwrapped.problem
        model = cls.encode(inst.data)
        assert cls.check_witness(inst.data, inst.witness) is None
        for bad in _one_changed(inst.witness):
            # the verifier, written without a solver, agrees with the encoding on every neighbour
            verdict = cls.check_witness(inst.data, bad)
            in_range = all(0 <= v for v in np.ravel(bad)) and problem.parse_witness(
                inst.data, problem.format_witness(inst.data, bad))[0] is not None
            true = problem.true_from_witness(inst.data, bad) if in_range else set()
            # a witness the encoding can state (it decodes back to itself) that satisfies every constraint
            holds = (in_range and true <= set(model.names) and problem.witness_from_true(inst.data, true) == bad
                     and model.holds([n in true for n in model.names]))
            assert (verdict is None) == holds, (seed, bad, verdict)
            if verdict is not None:
                rejected += 1
                wrong = "```answer\n" + problem.format_witness(inst.data, bad) + "\n```" if in_range else None
                if wrong:  # charged -1 - eps through the env's score
                    assert problem.score(inst, wrong).components == {"format": 0.1, "correct": -1.1}
        assert problem.score(inst, problem.final_answer(inst)).components == {"format": 0.1, "correct": 1.0}
    assert rejected > 0


@pytest.mark.parametrize("family", list(FAMILIES))
def test_counts_equal_brute_force(family):
    cls = family_class(family)
    counts = []
    for seed in range(10):
        knobs = {**SMALL[family], **({"given": seed % 2} if family == "latin-square" else {})}
        _, inst = _instance(family, "counting", seed, **knobs)
        model = cls.encode(inst.data)
        assert len(model.names) <= 20
        assert brute_force_count(model) == inst.count
        counts.append(inst.count)
    assert len(set(counts)) > 1, counts  # the instances differ in what they count


def test_both_in_process_counters_equal_brute_force_on_random_models():
    from solvergym.envs.logic.model import BoolModel, cpsat_count, pysat_count

    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(2, 9))
        m = BoolModel([f"v{i}" for i in range(n)])
        for _ in range(int(rng.integers(0, 5))):
            m.clause([int(rng.integers(1, n + 1)) * int(rng.choice([-1, 1])) for _ in range(int(rng.integers(1, 4)))])
        for _ in range(int(rng.integers(0, 3))):  # bounds 0 .. len+1: the edge cases included
            lits = [int(v + 1) * int(rng.choice([-1, 1])) for v in rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False)]
            m.card(lits, str(rng.choice(["<=", ">=", "=="])), int(rng.integers(0, len(lits) + 2)))
        want = brute_force_count(m)
        for counter in (pysat_count(m, None), cpsat_count(m, None, 10.0)):
            count, first, exact = counter
            assert (count, exact) == (want, True), (trial, m)
            assert (first is None) == (want == 0) and (first is None or m.holds(first))
        assert pysat_count(m, 1)[0] == min(want, 1)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_every_dataset_level_has_both_labels(family):
    for level in family_class(family).levels or [{}]:
        for ratio in (0.0, 1.0):  # the dataset asks each level for a yes and a no
            env = gym.make("SolverLogic-v0", family=family, query="decision", sat_ratio=ratio, **level)
            assert {env.reset(seed=s)[0] is not None and env.unwrapped.instance.satisfiable
                    for s in range(3)} == {bool(ratio)}, level


@pytest.mark.parametrize("family", list(FAMILIES))
def test_decisions_are_balanced_over_200_seeds(family):
    # the label is the seed's stratum (a Weyl sequence), then met (planted or rejected): within one
    # instance of the ratio over consecutive seeds, in both modes and over unseeded resets
    env = gym.make("SolverLogic-v0", family=family, query="decision")
    sat = []
    for seed in range(200):
        env.reset(seed=seed)
        sat.append(env.unwrapped.instance.satisfiable)
    assert abs(np.mean(sat) - 0.5) <= 1 / 200, np.mean(sat)
    skewed = gym.make("SolverLogic-v0", family=family, query="decision", sat_ratio=0.2)
    share = np.mean([skewed.reset(seed=s)[0] is not None and skewed.unwrapped.instance.satisfiable
                     for s in range(1000, 1200)])
    assert abs(share - 0.2) <= 1.5 / 200, share
    tool = gym.make("SolverTool-v0", task=family, query="decision").unwrapped
    tool.reset(seed=5)
    stream = [tool.problem_instance().satisfiable] + [tool.reset()[0] is not None and tool.problem_instance().satisfiable
                                                      for _ in range(199)]
    assert abs(np.mean(stream) - 0.5) <= 1 / 200, np.mean(stream)


def test_a_seed_stratum_is_low_discrepancy_and_a_coin_is_not():
    from gymnasium.utils import seeding

    from solvergym.envs.problem import seed_stratum

    for start in (0, 17, 10**6, 2**40):
        for n in (10, 200, 1000):
            u = np.array([seed_stratum(start + i) for i in range(n)])
            assert ((0 <= u) & (u < 1)).all()
            for ratio in (0.2, 0.5, 0.9):
                assert abs((u < ratio).sum() - ratio * n) <= 2, (start, n, ratio)
    assert seed_stratum(3, 4) == seed_stratum(7) and seed_stratum(3) != seed_stratum(4)
    # what the stratum replaces: each seed's first draw, which seeds 0-199 split 83 / 117
    assert sum(seeding.np_random(s)[0].random() < 0.5 for s in range(200)) == 83


@pytest.mark.parametrize("family,query", PAIRS)
def test_the_oracle_earns_the_full_reward_single_turn(family, query):
    env = gym.make("SolverLogic-v0", family=family, query=query)
    for seed in range(3):
        played = play_episode(env.unwrapped, OracleAgent(), seed=seed)
        assert played["reward_components"] == {"format": 0.1, "correct": 1.0}


@pytest.mark.parametrize("family,query", PAIRS)
def test_the_oracle_earns_the_full_reward_in_tool_mode_with_every_solver(pool, family, query):
    for solver in family_class(family).solvers:
        env = gym.make("SolverTool-v0", task=family, query=query, solver=solver, pool=pool)
        played = play_episode(env.unwrapped, OracleAgent(), seed=0)
        full = {"format": 0.1, "correct": 1.0, "tool": 0.1, **({} if query == "counting" else {"equivalence": 1.0})}
        assert played["reward_components"] == full, (solver, played["info"])
        response = played["messages"][2]["content"]
        out = read_output(response.split("stdout:", 1)[-1].split("</tool_response>")[0], query)
        inst = env.unwrapped.problem_instance()
        assert out is not None and (out.get("count") == inst.count if query == "counting" else out["sat"] == inst.satisfiable)
        env.close()


_STATES_A_CONSTRAINT = {  # a line of the oracle's program that states one constraint, per solver
    "z3": lambda line: line.startswith("solver.add("), "python-sat": lambda line: line.startswith("cnf."),
    "ortools": lambda line: line.startswith("model.Add"),
    "pysmt": lambda line: line.startswith("    ") and line.endswith("),"),  # an item of constraints = [...]
    "sympy": lambda line: line.startswith("    ") and line.endswith(",")}  # an argument of And(...)


@pytest.mark.parametrize("family", ["clique", "sudoku", "bnn-robustness", "subset-sum"])
def test_equivalence_pays_the_instances_formula_and_not_one_constraint_less(pool, family):
    # the oracle's program minus one constraint (the first line that states one; a sudoku's
    # constraints imply each other, so none is cut there), or with one name changed, states another
    # formula: 0; auxiliaries of an encoding are quantified (python-sat). The seed's instance must
    # have a first constraint the others do not imply: clique's at seed 2 is vertex 0's first
    # non-edge clause, and vertex 0 has too few edges to be in any 4-clique, so that is seed 1
    seed = 1 if family == "clique" else 2
    for solver in family_class(family).solvers:
        env = gym.make("SolverTool-v0", task=family, query="solving", solver=solver, pool=pool,
                       reward_timing="per_call").unwrapped  # info explains each call as it is made
        env.reset(seed=seed)
        program = env.gold().program(solver)
        lines = program.splitlines()
        cut = min(i for i, line in enumerate(lines) if _STATES_A_CONSTRAINT[solver](line))
        name = env.problem.encode(env.problem_instance().data).names[0]
        quoted = f'symbols("{name}' if solver == "sympy" else f'"{name}"'  # where the program names it
        wrongs = [program.replace(quoted, quoted.replace(name, f"{name}_renamed"), 1)]
        assert wrongs[0] != program
        if family != "sudoku":
            wrongs.append("\n".join(lines[:cut] + lines[cut + 1:]) + "\n")
        for wrong in wrongs:
            _, _, _, _, info = env.step(f"<tool_call>\n{wrong}</tool_call>")
            assert info["equivalence"]["status"] == "not_equivalent", (solver, info["equivalence"])
            assert info["call_components"]["equivalence"] == 0.0
            env.reset(seed=seed)
        _, _, _, _, info = env.step(f"<tool_call>\n{program}</tool_call>")
        assert info["equivalence"]["status"] == "equivalent", (solver, info["equivalence"])
        assert info["call_components"]["equivalence"] == 1.0
    counting = gym.make("SolverTool-v0", task=family, query="counting", pool=pool).unwrapped
    assert "equivalence" not in counting.components and counting.tool.truth(counting.reset(seed=0) and
                                                                             counting.problem_instance()) is None


@pytest.mark.parametrize("family,query", PAIRS)
def test_check_env(family, query):
    env = gym.make("SolverLogic-v0", family=family, query=query)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


_TEXT = st.one_of(st.text(max_size=120), st.sampled_from(
    ["```answer yes```", "```no```", "```idk```", "```answer\n0 1 2\n```", "```answer 99999999```",
     "```answer -3```", "```answer\n" + "1 " * 5000 + "\n```", "```answer 1.5```", "\x00"]))


@pytest.mark.parametrize("family,query", PAIRS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=_TEXT, seed=st.integers(0, 50))
def test_fuzz_any_text_is_scored_within_the_bounds(family, query, text, seed):
    env = gym.make("SolverLogic-v0", family=family, query=query)
    env.reset(seed=seed)
    _, reward, terminated, _, info = env.step(text)
    assert terminated and -1.1 - 1e-9 <= reward <= 1.1 + 1e-9
    assert set(info["reward_components"]) == {"format", "correct"}
    assert info["correct"] == (reward > 1.0)


def test_a_bad_family_or_query_is_an_error_that_lists_the_valid_ones():
    with pytest.raises(ValueError, match="the families are .*clique"):
        gym.make("SolverLogic-v0", family="cliques")
    with pytest.raises(ValueError, match=r"the queries are \['decision', 'solving', 'counting'\]"):
        gym.make("SolverLogic-v0", family="clique", query="count")
    with pytest.raises(ValueError, match="the queries are"):
        gym.make("SolverTool-v0", task="clique", query="optimise")


def test_a_record_cannot_carry_a_wrong_truth():
    env, inst = _instance("clique", "counting", 0)
    forged = {**inst.to_dict(), "count": inst.count + 1}
    with pytest.raises(ValueError, match="models"):
        env.reset(options={"instance": forged})
    flipped = {**_instance("clique", "decision", 1)[1].to_dict()}
    flipped["satisfiable"] = not flipped["satisfiable"]
    with pytest.raises(ValueError, match="satisfiable"):
        gym.make("SolverLogic-v0", family="clique").reset(options={"instance": flipped})
    # the true record is accepted and scores as the generated one
    obs, _ = env.reset(options={"instance": inst.to_dict()})
    assert env.unwrapped.instance == inst


def test_the_dataset_is_balanced_split_and_the_same_seed_writes_the_same_bytes(pool, tmp_path):
    from solvergym.agents.logic_sft import build_synthetic_logic, logic_combinations

    families = ["clique", "subset-sum"]
    m1 = build_synthetic_logic(tmp_path / "a", seed=3, per_combo=2, families=families, progress=False, pool=pool)
    m2 = build_synthetic_logic(tmp_path / "b", seed=3, per_combo=2, families=families, progress=False, pool=pool)
    for name in ("train.jsonl", "test.jsonl"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    combos = logic_combinations(families)
    assert len(combos) == 3 * (4 + 3) and m1["episodes"] == 2 * len(combos) == m1["kept"] + len(m1["discarded"])
    files = m1["files"]
    assert files["train.jsonl"]["count"] + files["test.jsonl"]["count"] == m1["kept"]
    assert files["test.jsonl"]["count"] == round(0.1 * m1["kept"]) and m1 == m2
    import json
    rows = [json.loads(x) for n in ("train.jsonl", "test.jsonl") for x in (tmp_path / "a" / n).read_text().splitlines()]
    assert {r["reward_components"]["correct"] for r in rows} == {1.0}
    decisions = [r for r in rows if r["query"] == "decision"]
    answers = [r["messages"][-1]["content"].rsplit("```answer", 1)[1].split("```")[0].strip() for r in decisions]
    assert answers.count("yes") == answers.count("no")  # labels alternate within each combination
    assert all("<tool_call>" in r["messages"][1]["content"] for r in rows)
    # a trajectory whose program printed something other than the truth is not SFT data
    from solvergym.agents.logic_sft import output_agrees

    env, inst = _instance("clique", "counting", 0)
    said = lambda out: [{"role": "user", "content": f"<tool_response>\nstdout:\n{out}\n</tool_response>"}]  # noqa: E731
    assert output_agrees(env.unwrapped.problem, inst, said(f"count: {inst.count}"))
    assert not output_agrees(env.unwrapped.problem, inst, said(f"count: {inst.count + 1}"))
    assert not output_agrees(env.unwrapped.problem, inst, said("Traceback ..."))


def test_the_readme_table_lists_every_family_with_its_category_knobs_and_solvers():
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for name, (_, category) in FAMILIES.items():
        cls = family_class(name)
        row = next((line for line in readme.splitlines() if line.startswith(f"| `{name}` | {category} |")), None)
        assert row is not None, name
        assert row.rstrip().endswith(f"| {', '.join(cls.solvers)} |"), row
        assert all(f"`{k}`={v}" in row for k, v in cls.Knobs.defaults().items()), row


class _Says:
    """A blind agent: the same answer to every instance, whatever it says."""

    def __init__(self, text: str):
        self.name, self.text = f"says {text!r}", text

    def act(self, observations, envs):
        return [self.text] * len(observations)


def test_every_suite_cell_shows_its_blind_baseline(tmp_path):
    """Issue 43 item 3: beside pass@1, each cell's chance line and best constant answer on the
    cell's own instances, in the JSON and the Markdown; an agent that answers every instance
    alike is right no more often than that constant, and exactly as often when it is that one."""
    from solvergym.evaluation.blind import constant_baseline, draw
    from solvergym.evaluation.logic_suite import run_logic_suite

    summary = run_logic_suite("says", tmp_path / "yes", instances=8, families=["clique", "n-queens"],
                              queries=["decision", "counting"], progress=False,
                              agent_object=_Says("```answer\nyes\n```"))
    for row in summary["cells"]:
        p = family_class(row["family"])(query=row["query"])
        base = constant_baseline(p, draw(p, p.Knobs.make(), range(8)))
        assert (row["constant_answer"], row["constant_accuracy"], row["constant_reward"], row["chance_reward"]) == (
            base.answer, base.share, pytest.approx(base.reward), pytest.approx(base.chance))
        assert row["accuracy"] <= row["constant_accuracy"]
        if row["query"] == "decision":  # (a count of "yes" does not parse: 0, more than a wrong count)
            assert row["reward"] <= row["constant_reward"] + 1e-9
            assert row["chance_reward"] == pytest.approx(0.05)  # yes / no at even odds: 0.1 + 0.5 - 0.55
            if row["constant_answer"] == "```answer\nyes\n```":
                assert row["accuracy"] == row["constant_accuracy"]  # the blind agent is the best constant
    md = (tmp_path / "yes" / "logic_suite.md").read_text()
    assert "chance reward" in md and "best constant acc / reward" in md and "has not shown that it reads" in md


def test_the_suite_report_gives_a_cell_per_family_query_and_solver(pool, tmp_path):
    from solvergym.cli.main import main
    from solvergym.evaluation.logic_suite import run_logic_suite

    oracle = run_logic_suite("oracle", tmp_path / "o", instances=3, families=["clique", "futoshiki"], progress=False)
    assert [(r["family"], r["query"]) for r in oracle["cells"]] == [(f, q) for f in ("clique", "futoshiki") for q in QUERIES]
    assert all(r["accuracy"] == 1.0 and r["reward"] == pytest.approx(1.1) for r in oracle["cells"])
    assert oracle["categories"] == {"graph": 1.0, "puzzle": 1.0}
    random = run_logic_suite("random", tmp_path / "r", instances=8, families=["clique"], queries=["solving", "counting"],
                             progress=False)
    assert all(r["accuracy"] < 1.0 for r in random["cells"])  # a guess is not the oracle
    # tool mode: one cell per fitting solver, each a resumable eval run under the suite's directory
    assert main(["eval", "logic-suite", "--agent", "oracle", "--mode", "tool", "--out", str(tmp_path / "t"),
                 "--instances", "1", "--families", "subset-sum", "--queries", "counting", "--no-progress"]) == 0
    tool = json.loads((tmp_path / "t" / "logic_suite.json").read_text())
    assert [r["solver"] for r in tool["cells"]] == list(family_class("subset-sum").solvers)
    assert all(r["reward"] == pytest.approx(1.2) for r in tool["cells"])
    assert (tmp_path / "t" / "subset-sum" / "counting" / "z3" / "records.jsonl").exists()
    only = run_logic_suite("oracle", tmp_path / "s", mode="tool", instances=1, families=["subset-sum", "sudoku"],
                           queries=["decision"], solvers=["z3", "sympy"], progress=False)
    assert [(r["family"], r["solver"]) for r in only["cells"]] == [
        (f, s) for f in ("subset-sum", "sudoku") for s in ("z3", "sympy") if s in family_class(f).solvers]
    with pytest.raises(ValueError, match="unknown families"):
        run_logic_suite("oracle", tmp_path / "x", families=["cliq"])
    with pytest.raises(ValueError, match="unknown solvers .'z4'.; the solvers are"):
        run_logic_suite("oracle", tmp_path / "x", mode="tool", solvers=["z4"])
    with pytest.raises(ValueError, match="single turn has no solver"):
        run_logic_suite("oracle", tmp_path / "x", solvers=["z3"])

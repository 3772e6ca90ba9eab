"""Instance-enhanced self-consistency (SIRL §3.1 eq. 2-3) against value voting (Table 2): the pure
scores on constructed feature sets, then real candidate programs run in the sandbox, and the
agent wrapper acting with the kept answer."""
import math

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.consistency import SelfConsistentAgent, vote
from solvergym.envs.opt.consistency import scores, select, value_vote
from solvergym.sandbox import SandboxPool


def cand(objective, sense="max", num_bin=0, num_int=0, status="optimal"):
    return {"objective": objective, "sense": sense, "num_bin": num_bin, "num_int": num_int, "status": status}


#: value voting keeps 10 (three votes); the structure of the two 12s agrees with most candidates
DISAGREE = [cand(10.0, "max", 3, 0), cand(10.0, "max", 0, 2), cand(10.0, "min", 1, 1),
            cand(12.0, "max", 0, 0), cand(12.0, "max", 0, 0)]


def test_scores_follow_eq_3():
    s = scores(DISAGREE)
    r2, r3 = math.sqrt(2), math.sqrt(3)
    # candidate 0: objective shared by 3, max by 4, 3 binaries by 1, 0 integers by 3
    assert s[0] == pytest.approx(r3 + 2 + 1 + r3)
    # candidate 3: objective by 2, max by 4, 0 binaries by 3, 0 integers by 3
    assert s[3] == pytest.approx(r2 + 2 + r3 + r3)
    assert value_vote(DISAGREE) == 0 and select(DISAGREE) == 3
    # weights: the objective alone is value voting
    assert select(DISAGREE, weights=(1, 0, 0, 0)) == 0


def test_failures_ties_infeasible_and_tolerance():
    assert select([None, cand(5.0, status="error"), cand(7.0)]) == 2  # only one solved
    assert select([None, None]) == 0 and value_vote([None]) == 0
    assert select([cand(1.0), cand(2.0)]) == 0  # a tie goes to the earliest
    inf = [cand(None, status="infeasible"), cand(None, status="inf_or_unbd"), cand(3.0)]
    assert select(inf) == 0 and value_vote(inf) == 0  # two programs agree the problem is infeasible
    near = [cand(100.0), cand(100.0 + 1e-5), cand(100.0 + 1e-5), cand(101.0)]
    assert value_vote(near) == 0  # within 1e-6 relative: one value
    assert value_vote(near, rel_tol=1e-9) == 1
    with pytest.raises(ValueError):
        select([])


def program(sense: str, value: float, n_bin: int, n_int: int) -> str:
    """A gurobipy model whose optimum is ``value``, with the given sense and unused binaries /
    integers (they change the structure, not the optimum)."""
    op = ("<=", "GRB.MAXIMIZE") if sense == "max" else (">=", "GRB.MINIMIZE")
    return (f"<think>t</think><model>m</model><python>\nimport gurobipy as gp\nfrom gurobipy import GRB\n"
            f"m = gp.Model(); m.Params.OutputFlag = 0\nx = m.addVar(name='x', ub=1000)\n"
            f"b = m.addVars({n_bin}, vtype=GRB.BINARY, name='b')\n"
            f"z = m.addVars({n_int}, vtype=GRB.INTEGER, lb=0, ub=5, name='z')\n"
            f"m.setObjective(x, {op[1]})\nm.addConstr(x {op[0]} {value})\nm.optimize()\n</python>")


@pytest.fixture(scope="module")
def pool():
    with SandboxPool(size=2) as p:
        yield p


def test_vote_runs_the_candidates_and_keeps_the_consensus(pool):
    env = gym.make("SolverOR-v0", pool=pool).unwrapped
    texts = [program("max", 10, 3, 0), program("max", 10, 0, 2), program("min", 10, 1, 1),
             program("max", 12, 0, 0), program("max", 12, 0, 0), "no program at all"]
    best, optima = vote(env.problem, texts)
    assert best == 3 and optima[5] is None
    assert [o["objective"] for o in optima[:5]] == [10.0, 10.0, 10.0, 12.0, 12.0]
    assert [(o["num_bin"], o["num_int"]) for o in optima[:5]] == [(3, 0), (0, 2), (1, 1), (0, 0), (0, 0)]
    assert vote(env.problem, texts, method="value")[0] == 0


class Candidates:
    """A scripted agent that answers each observation with the next of a fixed list (K samples)."""

    name = "candidates"

    def __init__(self, texts):
        self.texts = list(texts)

    def act(self, observations, envs=None):
        return self.texts[:len(observations)]


def test_the_wrapper_acts_with_the_kept_answer(pool):
    env = gym.make("SolverOR-v0", pool=pool, family="knapsack").unwrapped
    obs, _ = env.reset(seed=0)
    right = env.gold().answer
    wrong = right.replace("m.optimize()", "m.addConstr(gp.quicksum(x.values()) <= 0)\nm.optimize()", 1)
    assert wrong != right
    agent = SelfConsistentAgent(Candidates([wrong, right, right, wrong, right, right, right, wrong]), k=8)
    [action] = agent.act([obs], [env])
    assert action == right and agent.last_votes[0][0] == 1
    *_, info = env.step(action)
    assert info["reward_components"]["accuracy"] == 2.0
    with pytest.raises(ValueError):
        agent.act([obs])

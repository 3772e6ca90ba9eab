"""The Logic-LM baseline (agents/logic_lm.py): Z3 solves the model's formulas, the solver's
complaints go back to the model, nothing reads the ground truth.

The model here is a scripted formaliser (it writes the formulas it is given, the way a model
would write them); the parser, the solver, the refinement loop and the env's scoring are real.
"""
import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.logic_lm import FORMULATE, LogicLMAgent
from solvergym.envs.lsat.generator import QUESTION_TYPES
from solvergym.envs.logic_steps.problem import format_answer
from solvergym.evaluation import EvalConfig, load_records, run_eval, write_report
from solvergym.evaluation.agents import make_agent, reseed

LOGIC_ENVS = ("SolverZebra-v0", "SolverKnights-v0", "SolverLSAT-v0")


class _Reply:
    def __init__(self, text):
        self.text = text


class Formaliser:
    """A chat model whose outputs are given: ``script(env, round) -> answer object`` per call."""

    name = "formaliser"

    def __init__(self, script):
        self.script, self.conversations, self.envs = script, [], []

    def chat(self, messages):
        self.conversations.append([dict(m) for m in messages])
        env = self.envs[0]
        round_ = sum(m["role"] == "assistant" for m in messages)
        return _Reply(format_answer(self.script(env, round_)))


def _translation(env):
    """The instance's formulas as a faithful formaliser writes them (no solution)."""
    u = env.unwrapped
    ans = u.problem.family.gold_answer(u.instance)
    ans["solution"] = None
    return ans


def _episode(env_id, seed, script, **kw):
    env = gym.make(env_id)
    obs, _ = env.reset(seed=seed)
    model = Formaliser(script)
    model.envs.append(env)
    agent = LogicLMAgent(model, **kw)
    action = agent.act([obs], [env])[0]
    _, _, _, _, info = env.step(action)
    return info, agent, model, action


@pytest.mark.parametrize("env_id", LOGIC_ENVS)
def test_faithful_formulas_solve_every_instance_in_one_round(env_id, monkeypatch):
    # the solver stage has no access to the answer: the gold is made unreadable once the
    # formaliser has written its formulas
    for seed in range(6):
        env = gym.make(env_id)
        obs, _ = env.reset(seed=seed)
        u = env.unwrapped
        text = _translation(env)
        model = Formaliser(lambda e, r: text)
        model.envs.append(env)
        fam = type(u.problem.family)
        with monkeypatch.context() as m:
            for name in ("gold_answer", "true_premises", "gold_step_candidates"):
                m.setattr(fam, name, lambda *a, **k: (_ for _ in ()).throw(AssertionError("read the gold")))
            agent = LogicLMAgent(model)
            action = agent.act([obs], [env])[0]
        _, _, _, _, info = env.step(action)
        assert info["correct"], (env_id, seed, agent.last_rounds, info.get("reason"))
        assert agent.last_rounds == [{"rounds": 1, "problems": []}]
        assert model.conversations[0][0]["content"] == obs + FORMULATE
        assert '"reasoning": []' in action


def test_lsat_picks_the_option_each_question_type_selects():
    seen = set()
    for seed in range(40):
        env = gym.make("SolverLSAT-v0")
        env.reset(seed=seed)
        qt = env.unwrapped.instance.question_type
        if qt in seen:
            continue
        seen.add(qt)
        info, agent, _, action = _episode("SolverLSAT-v0", seed, lambda e, r: _translation(e))
        assert info["correct"] and agent.last_rounds[0]["rounds"] == 1, (qt, info.get("reason"))
    assert seen == set(QUESTION_TYPES)


def test_a_formula_that_does_not_parse_goes_back_to_the_model():
    def script(env, round_):
        ans = _translation(env)
        if round_ == 0:
            ans["syntactic_statements"][0] = "C1: Knight(Nobody) == Knave(Nobody)."
        return ans

    info, agent, model, _ = _episode("SolverKnights-v0", 0, script)
    assert info["correct"]
    assert agent.last_rounds[0]["rounds"] == 2
    complaint = agent.last_rounds[0]["problems"][0]
    assert "unknown character 'Nobody'" in complaint
    # the second call is the whole conversation: prompt, first answer, the solver's message
    second = model.conversations[1]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert complaint in second[2]["content"]


def test_under_determined_formulas_are_refined_then_answered_with_the_first_model():
    def weak(env, round_):
        ans = _translation(env)
        ans["syntactic_clues"] = ans["syntactic_clues"][:-1]  # a minimal clue set: now ambiguous
        return ans

    info, agent, model, action = _episode("SolverZebra-v0", 3, weak, refinements=2)
    assert agent.last_rounds[0]["rounds"] == 3 and len(model.conversations) == 3
    assert all("more than one solution" in p for p in agent.last_rounds[0]["problems"])
    assert '"solution": {"header"' in action  # a candidate, scored as any answer (right or wrong)


@pytest.mark.parametrize("backup", ["random", "none"])
def test_contradictory_formulas_fall_back_to_the_backup(backup):
    def contradictory(env, round_):
        ans = _translation(env)
        first = ans["syntactic_clues"][0].split(": ", 1)[1].rstrip(".")
        ans["syntactic_clues"].append(f"C{len(ans['syntactic_clues']) + 1}: Not({first}).")
        return ans

    info, agent, _, action = _episode("SolverZebra-v0", 1, contradictory, refinements=1, backup=backup)
    assert agent.last_rounds[0]["rounds"] == 2
    assert all("contradict" in p for p in agent.last_rounds[0]["problems"])
    if backup == "none":
        assert '"solution"' not in action and not info["correct"]
    else:
        assert '"solution": {"header"' in action


def test_no_answer_block_at_all_is_refined_and_guessed():
    class Mute(Formaliser):
        def chat(self, messages):
            self.conversations.append(messages)
            return _Reply("I think the knight is Alice.")

    env = gym.make("SolverKnights-v0")
    obs, _ = env.reset(seed=2)
    agent = LogicLMAgent(Mute(None), refinements=1, seed=5)
    action = agent.act([obs], [env])[0]
    assert agent.last_rounds[0]["problems"] == ["no <answer>...</answer> block found"] * 2
    _, _, _, _, info = env.step(action)
    # the guess is a well-formed answer: every character's identity is scored
    names = env.unwrapped.instance.names
    assert all(f'"{n}": "kn' in action for n in names)
    assert info["metrics"]["persons_total"] == len(names) and "persons_right" in info["metrics"]


def test_step_mode_and_other_envs_are_refused():
    agent = LogicLMAgent(Formaliser(lambda e, r: {}))
    for env in (gym.make("SolverZebra-v0", mode="step"), gym.make("SolverSAT-v0")):
        obs, _ = env.reset(seed=0)
        with pytest.raises(TypeError, match="trace mode"):
            agent.act([obs], [env])
    with pytest.raises(TypeError, match="chat model"):
        LogicLMAgent(object())
    with pytest.raises(ValueError, match="refinements"):
        LogicLMAgent(Formaliser(None), refinements=-1)


def test_the_spec_and_the_eval_run_it(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="names the model"):
        make_agent("logic-lm")
    with pytest.raises(TypeError, match="chat model"):
        make_agent("logic-lm:random")
    # a batch of episodes: one model call per round for all of them, reseeding the backup
    model = Formaliser(None)
    calls = []

    def chat(messages):
        calls.append(messages)
        return _Reply("no formulas today")

    model.chat = chat
    agent = LogicLMAgent(model, refinements=0)
    reseed(agent, 7)
    a = agent.rng.integers(1 << 30)
    reseed(agent, 7)
    assert agent.rng.integers(1 << 30) == a
    cfg = EvalConfig("SolverKnights-v0", agent="logic-lm", instances=3, n_samples=2, ks=[1, 2])
    rep = write_report(run_eval(cfg, tmp_path / "run", agent=agent, progress=False), png=False)
    assert len(calls) == 6 and rep["overall"]["episodes"] == 6
    # every episode answered with the backup guess: a solution, never a missing output
    assert all(r["info"]["metrics"]["persons_total"] == 3 for r in load_records(tmp_path / "run"))
    assert rep["overall"]["traces"]["all"]["error_types"].get("missing_output", 0) == 0

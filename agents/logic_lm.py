"""Logic-LM as an agent: the model formalises, Z3 solves (Pan et al. 2023; Spring Table 1's baseline).

Logic-LM answers a logic problem in three stages, and this agent runs them on the step-verified
logic envs (``SolverZebra-v0``, ``SolverKnights-v0``, ``SolverLSAT-v0``, trace mode):

1. *Problem formulator* (Logic-LM §3.1): the model gets the env's prompt with one change — write
   the premises (and, for AR-LSAT, the options) as formulas and leave the solution to the solver
   (:data:`FORMULATE`);
2. *Symbolic reasoner* (§3.2): the answer's formulas are parsed against the family's vocabulary
   (:func:`~solvergym.envs.logic_steps.trace.read_premises`) and solved with Z3 under Γ_dom
   (:meth:`~solvergym.envs.logic_steps.family.Family.solve_premises`): the one solution, or the
   one option the question type selects;
3. *Self-refiner* (§3.3): when a formula does not parse, the formulas contradict each other or
   leave several solutions, the solver's message goes back to the model, up to ``refinements``
   times (Logic-LM's default, 3).

The agent then answers with the model's own object, ``reasoning`` left empty (Logic-LM writes no
steps, so the interleaved format's process terms are not its to earn: Spring's Table 1 reports
its accuracy only) and ``solution`` filled in by the solver. When no round gave a solution,
Logic-LM's backup answer is a random guess (``backup="random"``, drawn from the family's answer
sampler, seeded) or none (``backup="none"``: the answer has no ``solution``, a wrong answer).
When the formulas still leave several solutions after the last round, the first model's solution
is the answer. Nothing reads the ground truth: the vocabulary (values, characters, options) is
what the prompt shows, the solver sees only the model's formulas, and the backup guess is the
family's uniform answer sampler.

Every round of a batch goes to the model in one call (``generate`` of a chat model, or
``chat`` of :class:`~solvergym.agents.OpenAIAgent` per conversation). ``last_rounds`` keeps,
per episode of the last batch, the rounds used and why each refinement was asked for.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..envs.logic_steps.problem import StepProblem
from ..envs.logic_steps.trace import format_answer
from ..envs.logic_steps.trace import extract_answer, read_premises
from .base import ChatPolicy

__all__ = ["LogicLMAgent", "FORMULATE", "REFINE"]

#: appended to the env's prompt (stage 1): formalise, do not solve
FORMULATE = (
    "\n\nDo not solve the problem yourself. Translate it: write the answer object with every key as "
    "described, but leave \"reasoning\" as [] and \"solution\" as null. A symbolic solver (Z3) reads your "
    "formulas and computes the solution, so translate every clue, statement, rule, fact and option exactly, "
    "in the formula language given."
)
#: the self-refiner's message (stage 3): the solver's complaint, then the same request
REFINE = (
    "The solver could not use your formulas: {problems}\n"
    "Correct the formulas and answer again with the whole JSON object in <answer>...</answer> "
    "(\"reasoning\": [], \"solution\": null)."
)


def _step_problem(env: Any) -> tuple[StepProblem, Any]:
    env = getattr(env, "unwrapped", env)
    problem = getattr(env, "problem", None)
    if not isinstance(problem, StepProblem) or getattr(env, "mode", "single") != "single":
        raise TypeError("LogicLMAgent answers the step-verified logic envs in trace mode (SolverZebra-v0, "
                        f"SolverKnights-v0, SolverLSAT-v0), not {type(env).__name__}")
    return problem, env.instance


class LogicLMAgent:
    """Logic-LM over a chat model (see the module docstring).

    ``model``: a chat policy (:class:`~solvergym.agents.HFAgent`, :class:`~solvergym.agents.VLLMAgent`)
    or anything with ``chat(messages) -> .text`` (:class:`~solvergym.agents.OpenAIAgent`);
    ``refinements``: self-refinement rounds after the first; ``backup``: ``"random"`` or ``"none"``.
    """

    name = "logic-lm"

    def __init__(self, model: Any, *, refinements: int = 3, backup: str = "random", seed: int = 0):
        if not (isinstance(model, ChatPolicy) or callable(getattr(model, "chat", None))):
            raise TypeError(f"LogicLMAgent needs a chat model (generate or chat), got {type(model).__name__}")
        if not isinstance(refinements, int) or refinements < 0:
            raise ValueError(f"refinements must be an int >= 0, got {refinements!r}")
        if backup not in ("random", "none"):
            raise ValueError(f"backup must be 'random' or 'none', got {backup!r}")
        self.model, self.refinements, self.backup = model, refinements, backup
        self.name = f"logic-lm({getattr(model, 'name', type(model).__name__)})"
        self.rng = np.random.default_rng(seed)
        self.last_rounds: list[dict[str, Any]] = []

    def act(self, observations: Sequence[str], envs: Sequence[Any] | None = None) -> list[str]:
        if envs is None or len(envs) != len(observations):
            raise ValueError("LogicLMAgent needs the env of every observation (envs=...)")
        tasks = [_step_problem(e) for e in envs]
        chats = [[{"role": "user", "content": o + FORMULATE}] for o in observations]
        answers: list[dict[str, Any] | None] = [None] * len(chats)
        solutions: list[Any] = [None] * len(chats)
        self.last_rounds = [{"rounds": 0, "problems": []} for _ in chats]
        pending = list(range(len(chats)))
        for _ in range(self.refinements + 1):
            if not pending:
                break
            texts = self._complete([chats[i] for i in pending])
            still = []
            for i, text in zip(pending, texts):
                chats[i].append({"role": "assistant", "content": text})
                self.last_rounds[i]["rounds"] += 1
                obj, solution, problem = self._reason(text, *tasks[i])
                if obj is not None:
                    answers[i] = obj
                if solution is not None:
                    solutions[i] = solution
                if problem is None:
                    continue
                self.last_rounds[i]["problems"].append(problem)
                chats[i].append({"role": "user", "content": REFINE.format(problems=problem)})
                still.append(i)
            pending = still
        return [self._answer(answers[i], solutions[i], *tasks[i]) for i in range(len(chats))]

    # -- the three stages --------------------------------------------------------------------------
    def _complete(self, conversations: list[list[dict[str, str]]]) -> list[str]:
        if isinstance(self.model, ChatPolicy):
            return [c.text for c in self.model.generate([self.model.chat_ids(c) for c in conversations])]
        if callable(getattr(self.model, "chat_many", None)):  # OpenAIAgent: concurrent requests
            return [r.text for r in self.model.chat_many(conversations)]
        return [self.model.chat(c).text for c in conversations]

    @staticmethod
    def _reason(text: str, problem: StepProblem, instance: Any) -> tuple[dict | None, Any, str | None]:
        """``(the answer object, the solver's solution, what to refine)`` for one model output."""
        obj, error, _ = extract_answer(text)
        if obj is None:
            return None, None, error
        family = problem.family
        theory = family.theory(instance)
        _, exprs, _, problems = read_premises(family, theory, instance, obj, [])
        if problems:
            return obj, None, "; ".join(problems[:5])
        solution, why = family.solve_premises(theory, exprs, instance)
        return obj, solution, why

    def _answer(self, obj: dict | None, solution: Any, problem: StepProblem, instance: Any) -> str:
        out = dict(obj) if obj is not None else {}
        out["reasoning"] = []
        if solution is None and self.backup == "random":
            solution = problem.family.random_answer(instance, self.rng)["solution"]
        if solution is None:
            out.pop("solution", None)
        else:
            out["solution"] = solution
        return format_answer(out)

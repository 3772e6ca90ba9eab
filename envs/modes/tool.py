"""``SolverTool-v0``: SAT-RL's multi-turn solver tool use (``sat-rl.txt`` §3.4, App. C, E.1), the
tool mode of any problem with a ``tool`` capability (:class:`~solvergym.envs.capabilities.ToolCapability`;
``task=`` names the problem).

An episode: the App. C prompt names the sampled solver and gives the variable mapping and the
problem; each action is one model turn. A turn holding a ``<tool_call>code</tool_call>`` (after
any ``<think>...</think>``) runs the code in the sandbox and the next observation is
``<tool_response>\\nstdout: ...\\nstderr: ...\\n</tool_response>`` (each stream capped, the tail
kept). A turn holding a final ```` ```answer ...``` ```` or ```` ```idk``` ```` ends the episode
(for ``sat-bench`` also a bare ```` ```yes``` ```` / ```` ```no``` ````, how SAT-RL's own transcript
in App. E.1 ends, with the same rewards as ```` ```answer yes``` ```` / ```` ```answer no``` ````; a
capability lists its bare words in ``bare_answers``); ``max_turns`` truncates it. The last
final-answer block of a turn is its answer; fences pair left to right, so a fence inside a
program or code block is part of it, and a turn whose last answer block lies inside or before a
``<tool_call>`` is a tool call. A turn with neither is a format failure (an explanatory
observation and ``info["error"]``; the agent may retry).

Rewards (§3.4, all components start at 0 and, with ``reward_timing="end"`` (default, the
paper's), are paid when the episode ends, by an answer or by the turn budget; every earlier step
pays 0):

- the capability's components for the final answer (SAT: ``format`` 0.1 when it parses;
  ``correct`` 1 correct / 0 ``idk`` / ``-1 - eps`` wrong, eq. 1; a k-bit assignment's wrong
  answer ``-p/(1-p) - eps``, eq. 1 extended to 2^k answers, p the chance a guess has);
- ``tool`` 0.1 when the *last* tool call exited without error (status ``ok``) and made a
  solve/check call of the sampled solver that returned; importing it is not enough (the §4.3
  reward hack ``from z3 import *; print('z3 imported')`` earns 0). The evidence is recorded in
  the program's own process: writing a record to the report descriptor, calling the capture's
  functions by name, or calling a solver method with a fake object earns nothing (the record
  must carry the run's secret), but a program that digs the capture out of its interpreter's
  objects can forge it (the sandbox's capture, "Trust"); it then claims only
  a formula it could have handed the solver honestly;
- ``equivalence`` 1 when the formula the last tool call handed its solver (its last solve call)
  is equivalent to the ground truth (:mod:`solvergym.envs.equivalence`, with the capability's
  ``equivalence_timeout_ms`` and ``auxiliary``); the verdict and its reason are in
  ``info["equivalence"]``. ``equivalence_rule="partial"`` (a deviation from SAT-RL, for small
  models) pays instead the share of true clauses the formula implies minus the share of its
  parts the truth does not imply, in [-1, 1], 1 only when equivalent (:mod:`~solvergym.envs.equivalence.check`). A capability whose problem states no Boolean truth takes ``tool``
  only (its ``rewards``: SolverOR-v0's programs solve LPs).

``reward_timing="per_call"`` pays the same return as it accrues: each step pays the change in
``tool`` and ``equivalence`` as they would stand were its call the last (so a clean solver call
pays 0.1 and 1 on its own step, and a later call that raises pays -0.1 and -1 back: §3.4 rewards
the last call), and the step that ends the episode pays the final answer's components and what
its own call changed. The episode's sum is the end-of-episode reward (to rounding), and an
episode that a ``TimeLimit`` wrapper (``gym.make(..., max_episode_steps=n)``) cuts short keeps
what its calls earned; under ``"end"`` such an episode pays nothing, so ``max_turns`` is the turn
budget to use (the ids are registered without a Gymnasium step limit). Each tool-call step's
``info`` then says why: ``tool_reward_reason``, ``equivalence`` and ``call_components`` (the
standing values). The equivalence check runs once per call instead of once per episode.

Keywords: the problem's knobs and settings, the capability's settings (``sat``: ``eps`` and
``wrong_penalty``), and the mode's own (:class:`SolverToolEnv`).

Tool sampling (§3.4, the default): per instance one solver of ``solvers`` is drawn uniformly from
the episode's seeded generator and named in the prompt; ``solver="z3"`` fixes one (no sampling);
``tool_sampling=False`` without a solver names none (any of the five earns ``tool``).

A turn that holds both tool calls and a final answer after them (a model that answered without
waiting) runs its last tool call, then is scored: with one turn left the oracle does exactly that.

Programs run in the process-wide sandbox pool (a lease taken on the first tool call and given back
by :meth:`~SolverToolEnv.close`; ``pool=`` runs them in the caller's, ``executor="ray"`` (or a Ray
address) in Ray actors across a cluster); the servers never see the instance.
"""
from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..instance import Instance, canonical_json
from ..parsing import tag_sections
from ..problem import PROBLEMS, Problem
from ..records import parse_json
from ...sandbox import REHEARSABLE, SOLVER_FAMILIES, Limits, SandboxPool, SandboxResult, shared_pool
from ..equivalence import EquivalenceVerdict
from ..text import clean_text
from ..payout import Payout
from .base import Outcome, ProblemEnv, check_reward_timing

__all__ = ["ToolInstance", "SolverToolEnv", "REWARD_TOOL", "REWARD_EQUIVALENCE", "TOOL_REWARDS", "TOOL_SOLVERS",
           "tool_prompt"]

#: what earns r_tool: "sat-rl" (§3.4: the last call ran cleanly and made a solve/check call of the
#: solver the prompt names) or "retool" (§4's ReTool baseline: "format, correctness, and
#: successful compilation of tools", no solver incentive: any clean run, and r_equiv computed but
#: not paid unless ``reward_weights`` says otherwise)
TOOL_REWARDS = ("sat-rl", "retool")
#: SAT-RL §3.4: r_tool = 0.1, r_equiv = 1.
REWARD_TOOL = 0.1
REWARD_EQUIVALENCE = 1.0
#: the solver families a tool-mode program may be asked to use: SAT-RL's five, then the
#: optimisation libraries the sandbox also captures
TOOL_SOLVERS = (*SOLVER_FAMILIES, "gurobipy", "highspy")


@dataclass
class ToolInstance(Instance):
    """A problem instance plus the solver sampled for it (``None``: any solver).

    ``task`` names the problem; ``problem`` is its instance as a dict (``to_dict()``). The env
    keeps the validated problem instance it was made from on the object (``_problem_instance``,
    not a field), so an env reset with this object reuses it while it still matches ``problem``.
    """

    task: str
    solver: str | None
    problem: dict

    def validate(self) -> None:
        if self.task not in PROBLEMS:
            raise ValueError(f"unknown tool task {self.task!r}; known: {sorted(PROBLEMS)}")
        if self.solver is not None and self.solver not in TOOL_SOLVERS:
            raise ValueError(f"solver must be one of {list(TOOL_SOLVERS)} or None, got {self.solver!r}")
        if not isinstance(self.problem, dict):
            raise ValueError("problem must be the task instance as a dict")


def tool_prompt(tool: Any, inst: Instance, solver: str | None) -> str:
    """SAT-RL App. C's SAT-Bench training template, with the tool protocol spelled out
    (``tool``: the problem's :class:`~solvergym.envs.capabilities.ToolCapability`)."""
    head = f"Solve the problem step by step and put your final answer in the format {tool.answer_hint(inst)}."
    if tool.allows_idk:
        head += " If the evidence is genuinely insufficient after using the tool, you may output ```idk```."
    if solver is not None:
        head += f" For this instance, you must import and use the `{solver}` as the solver/tool call."
    tools = (
        "Think inside <think>...</think>. To run Python, write the program inside <tool_call>...</tool_call> "
        f"and stop; it runs in a sandbox with {tool.sandbox_text}, and its "
        "stdout and stderr come back inside <tool_response>...</tool_response>."
    )
    hint = tool.naming_hint(inst)
    if hint:
        tools += " " + hint
    parts = [head, "", tools, ""]
    mapping = tool.variable_mapping(inst)
    if mapping:
        parts += ["Variable Mapping:", mapping, ""]
    parts += ["Problem Statement:", tool.statement(inst)]
    return "\n".join(parts) + "\n"


class SolverToolEnv(ProblemEnv):
    """Multi-turn solver tool use with SAT-RL's rewards (see the module docstring).

    ``task``: ``"sat-bench"`` (default), ``"sat"``, ``"or"``, or any problem given to
    :func:`~solvergym.envs.problem.register_problem` that has a ``tool`` capability (or a Problem
    class); the problem's knobs (``dims``, ``num_clauses`` / ``n``, ``k``, ``l``), settings
    (``widths``, ``sat_ratio``...) and its tool capability's settings (``eps``, ``wrong_penalty``
    for ``sat``: how eq. 1's penalty extends to a k-bit answer; ``equivalence_timeout_ms``,
    ``auxiliary`` where the ``equivalence`` reward applies) are keyword arguments, and its knobs
    are this env's difficulty knobs. ``limits``: the sandbox limits per program (a
    :class:`~solvergym.sandbox.Limits` or its dict). ``pool``: a
    :class:`~solvergym.sandbox.SandboxPool` to use instead of the shared one; ``executor``:
    ``"ray"`` or a Ray address, to run the programs in Ray actors (the executor's shared pool,
    ``solvergym.sandbox.executor``; nothing else changes); ``lease`` is the
    :class:`~solvergym.sandbox.PoolLease` programs run under (the shared pool, taken on the first
    tool call and given back by :meth:`close`). ``reward_timing``: ``"end"`` (the paper's) or
    ``"per_call"`` (the same return, paid as each call changes it; the module docstring).
    """

    mode = "tool"  # the scripted oracle drives this mode with tool calls (``agents/scripted.py``)
    capability_name = "tool"

    def __init__(
        self,
        task: str | Callable[..., Problem] = "sat-bench",
        *,
        tool_sampling: bool | None = None,
        solver: str | None = None,
        solvers: tuple[str, ...] | list[str] | None = None,
        max_turns: int = 4,
        limits: Limits | dict | None = None,
        max_tool_output_chars: int = 4000,
        pool: SandboxPool | None = None,
        executor: str | None = None,
        tool_reward: str = "sat-rl",
        reward_timing: str = "end",
        max_action_chars: int | None = None,
        render_mode: str | None = None,
        reward_weights: dict[str, float] | None = None,
        **task_kwargs: Any,
    ):
        if tool_reward not in TOOL_REWARDS:
            raise ValueError(f"tool_reward must be one of {TOOL_REWARDS}, got {tool_reward!r}")
        self.reward_timing = check_reward_timing(reward_timing)
        self.payout = Payout()
        if tool_reward == "retool" and reward_weights is None:
            reward_weights = {"equivalence": 0.0}  # ReTool pays no solver incentive
        super().__init__(task, (), max_turns=max_turns, max_action_chars=max_action_chars, render_mode=render_mode,
                         reward_weights=reward_weights, **task_kwargs)
        self.tool = self.capability
        self.tool_reward = tool_reward
        self.task_name = task if isinstance(task, str) else self.problem.name
        if not self.tool.solvers:
            raise ValueError(f"problem {self.task_name!r} has no solvers: it has no tool mode")
        fits = tuple(s for s in TOOL_SOLVERS if s in self.tool.solvers)
        solvers = fits if solvers is None else tuple(solvers)
        bad = [s for s in solvers + ((solver,) if solver else ()) if s not in fits]
        if bad or not solvers:
            raise ValueError(f"solvers must be among {list(fits)}, got {bad or 'none'}")
        if tool_sampling and solver is not None:
            raise ValueError("give either tool_sampling=True or a fixed solver, not both")
        if tool_sampling is None:  # sampling unless a solver is fixed
            tool_sampling = solver is None
        self.tool_sampling, self.fixed_solver, self.solvers = bool(tool_sampling), solver, solvers
        if isinstance(limits, dict):
            limits = Limits(**limits)
        self.limits = limits or Limits()
        self.max_tool_output_chars = int(max_tool_output_chars)
        self.lease = shared_pool(pool, executor)
        self._problem: Instance | None = None
        self._last_tool: SandboxResult | None = None
        self._tool_calls = 0
        self._standing: tuple[int, dict[str, float], dict[str, Any]] | None = None

    @classmethod
    def kwargs_defaults(cls, problem: str | Callable[..., Problem] | None = None) -> dict[str, Any]:
        """Every keyword argument posing ``problem`` (default: the default task) takes."""
        return super().kwargs_defaults(problem if problem is not None else cls.own_kwargs()["task"])

    @property
    def components(self) -> tuple[str, ...]:
        return (*self.capability.components, *self.capability.rewards)

    @property
    def concurrent_steps(self) -> bool:
        """Every turn may wait on the sandbox; threads are safe when the posed problem's score is
        (the equivalence check builds its formulas in a Z3 context per thread)."""
        return self.problem.thread_safe

    # -- the episode's instance --------------------------------------------------------------------
    def generate(self, rng):
        problem = self.generate_problem(rng)
        problem.mark_validated()  # the problem's generator made it: valid by construction
        return self._wrap(problem, rng)

    def _wrap(self, problem: Instance, rng: np.random.Generator) -> ToolInstance:
        if self.tool_sampling:
            solver = self.solvers[int(rng.integers(len(self.solvers)))]
        else:
            solver = self.fixed_solver
        self._problem = problem
        inst = ToolInstance(task=self.task_name, solver=solver, problem=problem.to_dict())
        inst._problem_instance = problem
        return inst

    def _problem_from(self, inst: ToolInstance) -> Instance:
        """The problem instance of ``inst.problem``: the validated one it was made from or coerced
        to before, if it still matches, else a newly coerced (and so validated) one."""
        # A group follower gets the leader's ToolInstance, whose problem is a dict: coercing it
        # anew would validate it (SAT-Bench: check its DRUP proof) once per group member.
        cached = getattr(inst, "_problem_instance", None)
        if cached is not None and cached.validated_json() == canonical_json(inst.problem):
            return cached
        problem = self.problem.coerce(inst.problem)
        inst._problem_instance = problem
        return problem

    def coerce_instance(self, obj: Any) -> ToolInstance:
        if isinstance(obj, str):  # bounded in length and depth, as every loader reads (envs/records.py)
            obj = parse_json(obj, what="options['instance']")
            if not isinstance(obj, dict):
                raise ValueError(f"options['instance'] must be a JSON object, got {type(obj).__name__}")
        if isinstance(obj, ToolInstance):
            inst = ToolInstance.coerce(obj)
        elif isinstance(obj, dict) and set(obj) == {f.name for f in dataclasses.fields(ToolInstance)}:
            inst = ToolInstance.from_dict(obj)
        elif isinstance(obj, (dict, Instance)):
            # a bare task instance (or a dataset record): the solver is drawn for it
            return self._wrap(self.problem.coerce(obj), self.np_random)
        else:
            raise TypeError(f"options['instance'] must be a ToolInstance, a task instance, a dict or JSON "
                            f"text, got {type(obj).__name__}")
        if inst.task != self.task_name:
            raise ValueError(f"this env poses {self.task_name!r} instances, got one of {inst.task!r}")
        self._problem = self._problem_from(inst)
        return inst

    def reset(self, *, seed=None, options=None):
        self._last_tool = None
        self._tool_calls = 0
        self._standing = None
        self.payout.reset()
        self._problem = None
        return super().reset(seed=seed, options=options)

    def problem_instance(self) -> Instance:
        """The current episode's problem instance (the dataclass ``self.instance.problem`` holds)."""
        if self._problem is None:
            self._problem = self._problem_from(self.instance)
        return self._problem

    def first_observation(self, instance):
        return tool_prompt(self.tool, self._problem_of(instance), instance.solver)

    def describe(self, instance):
        return self.problem.describe(self._problem_of(instance))

    def _problem_of(self, instance: ToolInstance) -> Instance:
        return self.problem_instance() if instance is self.instance else self.problem.coerce(instance.problem)

    def reset_info(self, instance):
        info = {"task": instance.task, "solver": instance.solver}
        info.update(self.tool.reset_info(self.problem_instance()))
        return info

    # -- turns ---------------------------------------------------------------------------------------
    def respond(self, text: str) -> Outcome:
        calls = tag_sections(text, "tool_call")
        final = self.tool.final_answer_span(text)
        if final is not None and all(c.end <= final[0] for c in calls):
            tool_obs = ""
            if calls:  # answered without waiting: the last call still runs, then the answer counts
                tool_obs = self._run_tool(calls[-1].content)
            return self._finish(text, tool_obs)
        if calls:
            return self._tool_step(calls, final)
        if self.tool.allows_idk:
            reason = "no <tool_call>...</tool_call> and no final ```answer ...``` or ```idk``` block found"
        else:
            reason = f"no <tool_call>...</tool_call> and no final answer ({self.tool.answer_hint(self.problem_instance())})"
        return self.refuse(reason)

    def refuse(self, reason: str) -> Outcome:
        last_turn = self._turn + 1 >= self.max_turns
        obs = (f"Format error: {reason}. Call the tool with <tool_call>code</tool_call> or end with "
               f"{self.tool.answer_hint(self.problem_instance())}" + (" (or ```idk```)." if self.tool.allows_idk else "."))
        info = {"correct": False, "answer": None, "reason": reason}
        if last_turn:  # the episode ends here: pay what the tool calls earned
            components, extra = self._end_components(self._no_answer())
            info.update(extra)
            return Outcome(components, False, obs, info, error=reason)
        return Outcome(self._pay_call(info), False, obs, info, error=reason)

    def _no_answer(self) -> dict[str, float]:
        """The capability's components for an episode that ends without a final answer."""
        return dict(self.tool.unanswered(self.problem_instance(), "no final answer").components)

    def _zero(self) -> dict[str, float]:
        return dict.fromkeys(self.components, 0.0)

    # -- steps -----------------------------------------------------------------------------------
    def _tool_step(self, calls, final) -> Outcome:
        obs = self._run_tool(calls[0].content)
        info = {"tool_result": self._tool_summary(self._last_tool), "ignored_tool_calls": len(calls) - 1}
        if self._turn + 1 >= self.max_turns:  # the turn budget ends the episode on this call
            components, extra = self._end_components(self._no_answer())
            info.update(extra)
            info.update(correct=False, answer=None, reason="the turn budget ended the episode before an answer")
            return Outcome(components, False, obs, info)
        return Outcome(self._pay_call(info), False, obs, info)

    def _finish(self, text: str, tool_obs: str) -> Outcome:
        score = self.tool.score(self.problem_instance(), text)
        if not score.answered:
            out = self.refuse(score.reason)
            if tool_obs:
                out.observation = tool_obs + "\n" + out.observation
            return out
        components, extra = self._end_components(dict(score.components))
        verdict = {True: "Correct.", False: "Incorrect."}[score.correct] if score.answer != "idk" else "Abstained."
        obs = (tool_obs + "\n" if tool_obs else "") + verdict
        info = {"correct": score.correct, "answer": score.answer, "reason": score.reason, **extra}
        return Outcome(components, True, obs, info)

    def _run_tool(self, code: str) -> str:
        # the next child rehearses the solver this episode asks for (its next program's)
        solver = self.instance.solver if self.instance is not None else None
        rehearse = (solver,) if solver in REHEARSABLE else self.tool.rehearse
        result = self.lease.run(code, self.limits, rehearse=rehearse)  # never raises: no sandbox is a result
        self._last_tool = result
        self._tool_calls += 1
        return self._tool_response(result)

    def _tool_response(self, r: SandboxResult) -> str:
        limit = self.max_tool_output_chars
        stderr = r.stderr
        if r.status not in ("ok", "error"):
            stderr = (stderr + ("\n" if stderr and not stderr.endswith("\n") else "")
                      + f"[sandbox: {r.status}: {r.reason}]")
        out = clean_text(r.stdout.removesuffix("\n"), limit)
        err = clean_text(stderr.removesuffix("\n"), limit)
        return f"<tool_response>\nstdout: {out}\nstderr: {err}\n</tool_response>"

    @staticmethod
    def _tool_summary(r: SandboxResult | None) -> dict[str, Any] | None:
        if r is None:
            return None
        return {"status": r.status, "reason": r.reason, "exit_code": r.exit_code, "duration_s": r.duration_s,
                "solvers_imported": list(r.solvers_imported), "solver_calls": [list(c) for c in r.solver_calls],
                "formula_kind": (r.formula or {}).get("kind"), "formula_solver": (r.formula or {}).get("solver"),
                "formula_error": r.formula_error}

    def _pay_call(self, info: dict[str, Any]) -> dict[str, float]:
        """What a step that does not end the episode pays: nothing with ``"end"`` timing; with
        ``"per_call"`` the change in the tool rewards as the last call leaves them (its ``info``
        says why)."""
        if self.reward_timing == "end":
            return self._zero()
        standing, extra = self._tool_components()
        info.update(extra, call_components=dict(standing))
        return self.payout.pay({**dict.fromkeys(self.tool.components, 0.0), **standing})

    def _end_components(self, answer_components: dict[str, float]) -> tuple[dict[str, float], dict[str, Any]]:
        """What the step that ends an episode pays (the problem's components, ``tool``,
        ``equivalence``: all of them with ``"end"`` timing, what is not paid yet with
        ``"per_call"``), and the info that explains them."""
        standing, info = self._tool_components()
        components = {k: float(answer_components.get(k, 0.0)) for k in self.tool.components}
        components.update(standing)
        return self.payout.pay(components), info

    def _tool_components(self) -> tuple[dict[str, float], dict[str, Any]]:
        """``tool`` (and ``equivalence``) as the last tool call leaves them (§3.4: the reward reads
        the last call), and the info that explains them; worked out once per call."""
        if self._standing is not None and self._standing[0] == self._tool_calls:
            return dict(self._standing[1]), copy.deepcopy(self._standing[2])
        r = self._last_tool
        solver = self.instance.solver
        wanted = (solver,) if solver is not None else self.solvers
        if r is None:
            tool_ok, tool_reason = False, "no tool call was made"
        elif r.status != "ok":
            tool_ok, tool_reason = False, f"the last tool call did not run cleanly ({r.status}: {r.reason})"
        elif self.tool_reward == "retool":
            tool_ok, tool_reason = True, "the last tool call ran cleanly (ReTool: any program)"
        elif not any(r.called(s) for s in wanted):
            called = sorted({f for f, _ in r.solver_calls})
            tool_ok = False
            tool_reason = (f"the last tool call made no solve/check call of {' or '.join(wanted)}"
                           + (f" (it called {', '.join(called)})" if called else
                              " (importing a solver is not using it)"))
        else:
            tool_ok, tool_reason = True, f"the last tool call ran and called {' or '.join(s for s in wanted if r.called(s))}"
        components = {"tool": REWARD_TOOL if tool_ok else 0.0}
        info = {"tool_reward_reason": tool_reason, "tool_calls": self._tool_calls,
                "last_tool_result": self._tool_summary(r)}
        if "equivalence" in self.tool.rewards:
            verdict = self._equivalence(r)
            components["equivalence"] = REWARD_EQUIVALENCE * verdict.score  # 1 / 0, or the shares (partial)
            info["equivalence"] = verdict.to_dict()
        self._standing = (self._tool_calls, components, info)
        return dict(components), copy.deepcopy(info)

    def _equivalence(self, r: SandboxResult | None) -> EquivalenceVerdict:
        if r is None:
            return EquivalenceVerdict("no_formula", "no tool call was made")
        if r.formula is None:
            why = r.formula_error or "the last tool call made no solve/check call"
            return EquivalenceVerdict("no_formula", f"no formula was captured from the last tool call: {why}")
        return self.tool.equivalence(self.problem_instance(), r.formula)

    # -- for agents ------------------------------------------------------------------------------
    def gold(self):
        return self.tool.gold(self.problem_instance())

    def sample_answer(self, rng) -> str:
        return self.tool.sample_answer(self.problem_instance(), rng)

    def close(self):
        self.lease.close()
        super().close()


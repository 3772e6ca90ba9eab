"""The optimisation-modelling problem (``"or"``, ``SolverOR-v0``): a word problem in, a model and a
solver program out, scored by running the program and re-solving the model it built (SIRL §3.2-3.3).

The policy answers ``<think>...</think><model>...</model><python>...</python>``; the program runs
in the sandbox (gurobipy with its size-limited pip licence, OR-Tools, HiGHS). The program runs in
the same process as the capture, so every number its solver reports can be forged; the reward
trusts none of them for accuracy or the bonus. The capture exports the model of the last solve
(MPS); the host reads it (:func:`~.audit.audit_mps`: presolve-style reductions, the structure that
survives them) and re-solves it (:func:`~.resolve.resolve`, time limited), and the rewards are
:mod:`.verify`'s (SIRL eq. 6) on that re-solve:

- ``execution`` is SIRL's (the program ran and its last solve reported a status, read from the
  capture) and, with ``execution_rule="model"`` (default), the solved model has a variable and a
  row or an objective term (from the exported model; without one, the captured variable count);
  ``"paper"`` pays any solve that reported a status.
- ``accuracy``: no exported model (none came back, it did not read, it was over the analysis
  budget) earns none, with the reason; nor does an objective that is a constant once fixed
  variables, singleton rows and negligible coefficients are removed. A feasible ground truth is
  matched by the re-solved optimum, or by its negation when the model is the problem's written in
  the other sense (``min -f``; a benchmark record states no sense, so there it is not accepted).
  An infeasible ground truth is matched only by a *proven* infeasible re-solve (presolve off: an
  unbounded model that GLOP or a presolve calls infeasible does not pay) of a model that is the
  problem's (:func:`~.audit.same_problem` against the reference model; a benchmark record has
  none, so there the proof alone pays).
- ``bonus``: the stage-2 kinds of the exported model that survive the reductions.

Unlike the SAT and logic problems, :meth:`ORProblem.score` is not pure: it runs a program (bounded
by ``limits``), in the process-wide sandbox pool unless a pool is given, and a re-solve on the host
(bounded by ``resolve_time_limit_s``). It never raises: any captured value gives a verdict with a
reason.

Settings: ``stage`` (1: format + execution + accuracy; 2: plus the bonus, SIRL §3.3),
``bonus_weight`` (the paper does not state it), ``tolerance`` ("relative" 1e-6, §11, default;
"absolute" 0.01, §3.3), ``format_rule`` ("paper" binary 0.5, or "sirl_code" graded),
``execution_rule`` ("model", default, or "paper", SIRL §10), ``solver`` (the library the prompt
asks for: "gurobipy" as in SIRL, "highspy", "ortools", or None for any), ``limits`` (the sandbox's
per-program limits; default 10 s wall clock, 2 GiB), ``resolve_time_limit_s`` (the host re-solve's
limit, default 5 s), ``pool`` (a :class:`~solvergym.sandbox.SandboxPool` to use instead of the
shared one), ``executor`` (``"ray"`` or a Ray address: the programs run in that executor's shared
pool, Ray actors across a cluster; ``solvergym.sandbox.executor``).

Private ``info`` keys (:data:`PRIVATE_INFO`): ``ground_truth`` (the optimum, ``None`` when
infeasible), ``reference`` (the reference model's status and size) and ``host`` (the re-solve's
status, objective and cost: ``audit_s``, ``resolve_s``). Only the step that ends an episode
carries them, for logging; a step that sends an answer back for revision drops them, and no
observation states the ground truth of an answer that does not match it.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..problem import Gold, Knobs, Problem, Verdict
from ..text import DEFAULT_MAX_OBSERVATION_CHARS, clean_text
from ...sandbox import Limits, SandboxPool, SandboxResult, shared_pool
from .audit import ModelAudit, audit_mps, reference_objective_free, same_problem
from .datasets import as_benchmark_record, record_to_instance
from .generator import FAMILIES, ORInstance, generate
from .model import Constraint, LinearModel, Var
from .programs import oracle_program
from .resolve import resolve
from .tool import ANSWER_HINT, OR_SOLVERS, ORTool
from .verify import (EXECUTION_RULES, FORMAT_RULES, OK_STATUSES, TOLERANCES, empty_model, extract_program,
                     format_reward, judge_objective)

__all__ = ["ORKnobs", "ORProblem", "OR_SOLVERS", "COMPONENTS", "PRIVATE_INFO", "render_model", "blind_program"]

#: SIRL eq. 6's terms, in order
COMPONENTS = ("format", "execution", "accuracy", "bonus")
#: SIRL §10's weights (the bonus weight is not stated: a setting)
W_FORMAT, W_EXECUTION, W_ACCURACY = 0.5, 1.0, 2.0
DEFAULT_LIMITS = Limits(timeout_s=10.0, memory_mb=2048)
DEFAULT_RESOLVE_S = 5.0
#: ``info`` keys only the step that ends an episode carries (see the module docstring)
PRIVATE_INFO = ("ground_truth", "reference", "host")
_STDERR_TAIL = 2000
_COUNTS = ("num_vars", "num_int", "num_bin", "num_constrs", "num_qconstrs", "num_q_obj_terms", "num_gen_constrs")


@dataclass(frozen=True)
class ORKnobs(Knobs):
    """``family`` (None draws one of :data:`~.generator.FAMILIES` at each reset), ``size`` (1-10:
    products, items, facilities...), ``integer`` (None: the family's own; True/False forces it
    where the family allows), ``side_constraints`` (0-4 extra stated constraints),
    ``infeasible_ratio`` (the share of infeasible instances, as public benchmarks have "No Best
    Solution" items), ``irrelevant_facts`` (true sentences the model must ignore)."""

    family: str | None = None
    size: int = 3
    integer: bool | None = None
    side_constraints: int = 0
    infeasible_ratio: float = 0.0
    irrelevant_facts: bool = False

    def normalise(self) -> dict[str, Any]:
        out = {}
        if isinstance(self.size, np.integer):
            out["size"] = int(self.size)
        if isinstance(self.side_constraints, np.integer):
            out["side_constraints"] = int(self.side_constraints)
        if isinstance(self.infeasible_ratio, (int, np.floating)) and not isinstance(self.infeasible_ratio, bool):
            out["infeasible_ratio"] = float(self.infeasible_ratio)
        return out

    def validate(self) -> None:
        if self.family is not None and self.family not in FAMILIES:
            raise ValueError(f"family must be one of {sorted(FAMILIES)} or None, got {self.family!r}")
        for name, v, lo, hi in (("size", self.size, 1, 10), ("side_constraints", self.side_constraints, 0, 4)):
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise ValueError(f"{name} must be an int in {lo}..{hi}, got {v!r}")
        r = self.infeasible_ratio
        if not isinstance(r, float) or not 0.0 <= r <= 1.0:
            raise ValueError(f"infeasible_ratio must be a number in [0, 1], got {r!r}")
        if self.integer not in (None, True, False):
            raise ValueError(f"integer must be True, False or None, got {self.integer!r}")
        if not isinstance(self.irrelevant_facts, bool):
            raise ValueError(f"irrelevant_facts must be True or False, got {self.irrelevant_facts!r}")


class ORProblem(Problem):
    """SIRL's optimisation-modelling task (see the module docstring)."""

    name = "or"
    instance_cls = ORInstance
    Knobs = ORKnobs
    components = COMPONENTS
    tool = ORTool
    #: the score waits on the sandbox; the MPS is read and checked in pure Python, the re-solve
    #: uses a solver instance of its own
    thread_safe = sandboxed = True
    private_info = PRIVATE_INFO

    def __init__(self, *, stage: int = 1, bonus_weight: float = 1.0, tolerance: str = "relative",
                 format_rule: str = "paper", execution_rule: str = "model", solver: str | None = "gurobipy",
                 limits: Limits | None = None, resolve_time_limit_s: float = DEFAULT_RESOLVE_S,
                 pool: SandboxPool | None = None, executor: str | None = None):
        if stage not in (1, 2):
            raise ValueError(f"stage must be 1 or 2, got {stage!r}")
        if tolerance not in TOLERANCES:
            raise ValueError(f"tolerance must be one of {TOLERANCES}, got {tolerance!r}")
        if format_rule not in FORMAT_RULES:
            raise ValueError(f"format_rule must be one of {FORMAT_RULES}, got {format_rule!r}")
        if execution_rule not in EXECUTION_RULES:
            raise ValueError(f"execution_rule must be one of {EXECUTION_RULES}, got {execution_rule!r}")
        if isinstance(resolve_time_limit_s, bool) or not isinstance(resolve_time_limit_s, (int, float)) \
                or not math.isfinite(resolve_time_limit_s) or resolve_time_limit_s <= 0:
            raise ValueError(f"resolve_time_limit_s must be a finite number > 0, got {resolve_time_limit_s!r}")
        if solver is not None and solver not in OR_SOLVERS:
            raise ValueError(f"solver must be one of {OR_SOLVERS} or None, got {solver!r}")
        if not (isinstance(bonus_weight, (int, float)) and math.isfinite(bonus_weight) and bonus_weight >= 0):
            raise ValueError(f"bonus_weight must be a finite number >= 0, got {bonus_weight!r}")
        self.stage, self.bonus_weight, self.tolerance = stage, float(bonus_weight), tolerance
        self.format_rule, self.execution_rule, self.solver = format_rule, execution_rule, solver
        self.resolve_time_limit_s = float(resolve_time_limit_s)
        self.limits = DEFAULT_LIMITS if limits is None else limits
        self.lease = shared_pool(pool, executor)

    def set_stage(self, stage: int) -> None:
        """Switch SIRL's reward stage (§3.3): 1 without the bonus, 2 with it (a trainer's schedule:
        ``TrainConfig.bonus_from_step``)."""
        if stage not in (1, 2):
            raise ValueError(f"stage must be 1 or 2, got {stage!r}")
        self.stage = stage

    # -- instances ---------------------------------------------------------------------------------
    def generate(self, knobs: ORKnobs, rng: np.random.Generator) -> ORInstance:
        return generate(knobs.family, rng, size=knobs.size, integer=knobs.integer,
                        side_constraints=knobs.side_constraints, infeasible_ratio=knobs.infeasible_ratio,
                        irrelevant_facts=knobs.irrelevant_facts)

    def coerce(self, obj: Any) -> ORInstance:
        """An :class:`ORInstance` (validated once), its ``dict`` or its JSON text, or a public
        benchmark record ``{"en_question", "en_answer", ...}`` (a dict or its JSON text, the format
        of SIRL's ``test_data/``, or-modelling.md §1) -> an instance. A record becomes a
        model-less instance (:func:`~.datasets.record_to_instance`, ``source="benchmark"``), so
        ``env.reset(options={"instance": record})`` evaluates one benchmark item; ``ValueError``
        says why a record is unusable."""
        record = as_benchmark_record(obj)
        if record is not None:
            return record_to_instance(record)
        return super().coerce(obj)

    def describe(self, instance: ORInstance) -> dict[str, Any]:
        # every step's info carries this: the instance's status (its ground truth when infeasible)
        # and the reference model's size are the final step's "reference" instead
        return {"family": instance.family, "source": instance.source}

    def reset_info(self, instance: ORInstance) -> dict[str, Any]:
        # "library", not "solver": the tool mode reports its sampled solver as info["solver"]
        return {"family": instance.family, "stage": self.stage, "library": self.solver,
                "tolerance": self.tolerance}

    # -- text --------------------------------------------------------------------------------------
    def answer_hint(self, instance: ORInstance) -> str:
        return ANSWER_HINT

    def prompt(self, instance: ORInstance) -> str:
        lib = {"gurobipy": "gurobipy (Gurobi's Python API; a size-limited licence: at most 2,000 variables "
                           "and 2,000 constraints)", "highspy": "highspy (HiGHS)",
               "ortools": "OR-Tools (pywraplp, MathOpt or CP-SAT)",
               None: "gurobipy, highspy or OR-Tools"}[self.solver]
        return (
            "Formulate the following problem as an optimisation model and solve it with a solver.\n\n"
            f"Problem:\n{instance.question.strip()}\n\n"
            "Answer in three parts, in this order:\n"
            "<think>your reasoning: the decisions, the objective and every constraint</think>\n"
            "<model>the mathematical model: variables, objective, constraints</model>\n"
            f"<python>a complete Python program that builds the model with {lib} and solves it</python>\n"
            "The program is run; its objective value and status are read from the solver after it solves, "
            "so printing them is for you, not for scoring. If the problem has no feasible solution, the "
            "solver should report it infeasible."
        )

    # -- scoring -----------------------------------------------------------------------------------
    def run(self, program: str) -> SandboxResult:
        """Run ``program`` in the sandbox (never raises: an unavailable sandbox is a ``killed`` result)."""
        return self.run_many([program])[0]

    def run_many(self, programs: list[str]) -> list[SandboxResult]:
        """Run several programs at once (one per pool slot), results in order; never raises."""
        return self.lease.run_many(programs, self.limits, rehearse=OR_SOLVERS)

    def score(self, instance: ORInstance, text: str) -> Verdict:
        program = extract_program(text)
        if program is None:
            comps = dict.fromkeys(COMPONENTS, 0.0)
            comps["format"] = format_reward(text, self.format_rule)
            return Verdict(comps, False, False, "no <python> program in the answer",
                           info=self._info(instance, None, None, [], None))
        return self.score_run(instance, text, self.run(program))

    def score_run(self, instance: ORInstance, text: str, result: SandboxResult) -> Verdict:
        """The verdict on ``text``, whose program ran as ``result`` (what :meth:`score` does once the
        program ran). Never raises: any captured value gives a verdict with a reason."""
        comps = dict.fromkeys(COMPONENTS, 0.0)
        comps["format"] = format_reward(text, self.format_rule)
        try:
            return self._judge(instance, comps, result)
        except Exception as e:  # a failure here must not end a training run (the fuzz test never reaches it)
            return Verdict(comps, True, False, f"the answer could not be scored ({type(e).__name__}: {e})"[:500],
                           info={"ground_truth": instance.answer, "advanced": []})

    def _judge(self, instance: ORInstance, comps: dict[str, float], result: SandboxResult) -> Verdict:
        opt = result.optimum if isinstance(result.optimum, dict) else None
        executed, why = _executed(result, opt)
        host: dict[str, Any] | None = None
        audit = None
        if executed:  # SIRL's rule held; what was solved is read from the export, not the capture
            mps = opt.get("mps")
            start = time.perf_counter()
            audit = audit_mps(mps if isinstance(mps, str) else None, truncated=opt.get("mps_truncated") is True)
            host = {"audit_s": time.perf_counter() - start, "resolve_s": 0.0, "status": None, "objective": None,
                    "solver": None, "export": audit.reason or "read"}
            if self.execution_rule == "model":
                empty = _empty(audit, opt)
                if empty:
                    executed = False
                    why = f"{empty}: an empty model is not an execution (execution_rule='paper' pays it)"
        correct = False
        if executed:
            correct, why = self._accuracy(instance, opt, audit, host)
        comps["execution"] = W_EXECUTION if executed else 0.0
        comps["accuracy"] = W_ACCURACY if correct else 0.0
        kinds = list(audit.structure) if correct else []
        if self.stage == 2 and kinds:
            comps["bonus"] = self.bonus_weight
        answer = None if host is None else host["objective"]
        return Verdict(comps, True, correct, why, answer=answer, info=self._info(instance, result, opt, kinds, host))

    def _accuracy(self, instance: ORInstance, opt: dict, audit: ModelAudit, host: dict) -> tuple[bool, str]:
        """Whether the exported model, re-solved on the host, answers the instance, and why."""
        if audit.model is None:
            return False, (f"no model to re-solve ({audit.reason or 'none came back'}): the solver's own report "
                           "is not trusted")
        truth = instance.answer
        if truth is not None and not audit.objective_free and not self._determined_problem(instance, audit):
            return False, ("the solved model's objective is a constant once fixed variables, singleton rows and "
                           "negligible coefficients are removed: it has no free decision variable")
        mps = opt.get("mps")
        start = time.perf_counter()
        res = resolve(audit.model, general=audit.general,
                      mps_text=mps if isinstance(mps, str) else None, time_limit_s=self.resolve_time_limit_s)
        host.update(resolve_s=time.perf_counter() - start, status=res.status, objective=res.objective,
                    solver=res.solver)
        said = f" ({res.reason})" if res.reason else ""
        if truth is None:
            if res.status != "infeasible":
                return False, f"the problem is infeasible, but the host re-solve finds the model {res.status}{said}"
            if not instance.model:
                return True, ("the host re-solve proves the model infeasible, as the benchmark's answer says "
                              "(no reference model to compare it with)")
            same, how = same_problem(audit.model, LinearModel.from_dict(instance.model))
            host["same_problem"] = how  # private: it compares with the reference model's size
            if not same:
                return False, ("the model is proven infeasible, but it is not the problem's: its size or its "
                               "numbers are not the statement's")
            return True, "the host re-solve proves the model infeasible, as the problem is"
        if res.status != "optimal" or res.objective is None or not math.isfinite(res.objective):
            return False, f"the host re-solve finds the model {res.status}{said}, not an optimum"
        return judge_objective(res.objective, truth, self.tolerance, audit.model.sense, instance.sense or None)

    @staticmethod
    def _determined_problem(instance: ORInstance, audit: ModelAudit) -> bool:
        """A constant objective is the right model of a problem whose own objective is fixed by its
        constraints (:func:`~.audit.reference_objective_free`), when the model is the problem's."""
        if not instance.model:
            return False
        reference = LinearModel.from_dict(instance.model)
        return not reference_objective_free(reference) and same_problem(audit.model, reference)[0]

    def _info(self, instance: ORInstance, result: SandboxResult | None, opt: dict | None, kinds: list[str],
              host: dict | None) -> dict[str, Any]:
        status = None if opt is None else opt.get("status")
        objective = None if opt is None else opt.get("objective")
        info: dict[str, Any] = {
            "solver_status": status if isinstance(status, str) else None,
            "objective": objective if isinstance(objective, float) else None,
            "ground_truth": instance.answer, "advanced": kinds,
            "reference": {"status": instance.status, "num_vars": instance.features.get("num_vars"),
                          "num_constrs": instance.features.get("num_constrs")}}
        if opt is not None:
            feats = {k: opt.get(k) if type(opt.get(k)) is int else None for k in _COUNTS}
            for k in ("solver", "call", "sense"):
                feats[k] = opt.get(k) if isinstance(opt.get(k), str) else None
            info["features"] = feats
        if result is not None:
            info["sandbox"] = {"status": result.status, "reason": result.reason, "exit_code": result.exit_code,
                               "duration_s": result.duration_s, "stdout": result.stdout[-_STDERR_TAIL:],
                               "stderr": result.stderr[-_STDERR_TAIL:]}
        if host is not None:
            info["host"] = host
        return info

    def feedback(self, instance: ORInstance, verdict: Verdict) -> str:
        if not verdict.answered:
            return _observation(f"Format error: {verdict.reason}. Answer as {self.answer_hint(instance)}.")
        head = "Correct: " if verdict.correct else "Incorrect: "
        sandbox = verdict.info.get("sandbox") or {}
        tail = ""
        if sandbox.get("status") not in (None, "ok") and sandbox.get("stderr"):
            tail = "\n" + sandbox["stderr"][-1000:]
        return _observation(head + verdict.reason + "." + tail)

    def revise(self, instance: ORInstance, verdict: Verdict) -> str | None:
        """Multi-turn (``max_turns > 1``, beyond SIRL): a program that did not execute (it raised,
        timed out, never solved, solved an empty model) comes back with its output and traceback to
        be revised; one that ran is scored. Whether it is correct is never shown."""
        if not verdict.answered or verdict.components.get("execution", 0.0) > 0:
            return None
        sandbox = verdict.info.get("sandbox") or {}
        out = [f"Your program did not solve the model: {verdict.reason}."]
        for stream in ("stdout", "stderr"):
            if sandbox.get(stream):
                out.append(f"{stream}:\n" + sandbox[stream][-_STDERR_TAIL:])
        out.append("Fix the program and answer again as " + self.answer_hint(instance) + ".")
        return _observation("\n".join(out))

    def close(self) -> None:
        self.lease.close()

    # -- for agents --------------------------------------------------------------------------------
    def gold(self, instance: ORInstance) -> Gold:
        if not instance.model:  # a benchmark record (envs/opt/datasets.py): nothing to write a program from
            raise ValueError("a benchmark record has no reference model: no oracle")
        model = LinearModel.from_dict(instance.model)

        def program(solver: str | None) -> str:
            solver = solver or "gurobipy"
            return oracle_program(model, "gurobipy" if model.quadratic and solver == "ortools" else solver)

        solver = self.solver or "gurobipy"
        text = (f"<think>I model the decisions as variables, then state the objective and the constraints "
                f"of the problem, and solve it with {solver}.</think>\n<model>\n{render_model(model)}\n</model>\n"
                f"<python>\n{program(solver)}</python>")
        return Gold(text, program=program, plan="I will build the model with {solver} and run it.")

    # -- what a policy earns without reading (solvergym.evaluation.blind) ---------------------------
    extract_program = staticmethod(extract_program)

    def blind_candidates(self, instance: ORInstance) -> list[str]:
        """The constant answer that would be right on ``instance``: a program that solves a model of
        its own whose optimum is the instance's (:func:`blind_program`), or one whose model is
        infeasible where the instance is. Neither reads the problem, so it is the same text on
        every instance with that answer."""
        return [blind_program(instance.answer, self.solver or "gurobipy")]

    def chance_reward(self, instance: ORInstance) -> float:
        """The chance line: a well-formed answer whose program runs and solves a model of its own
        (format, execution: 1.5 with the default rules) and whose optimum is a guess. An optimum
        is a real number, which a guess matches with probability 0, unless the family's optimum
        is a count drawn uniformly from a few values (:attr:`~.families.common.Family.count_support`:
        bin packing's bins), which a guess matches 1 in that many. "Infeasible" is never right
        by chance: a proven infeasible model pays only when it is the problem's own
        (:func:`~.audit.same_problem`), which needs its numbers. Stage 2's bonus is not counted
        (it needs the right answer and a model with binaries, big-M or a quadratic term)."""
        text = blind_program(0.0, self.solver or "gurobipy")
        q = 0.0
        fam, size = FAMILIES.get(instance.family), instance.extra.get("size")
        generated = fam is not None and instance.source == "generated" and isinstance(size, int)
        support = fam.answer_support(size) if generated and instance.answer is not None else None
        if support:
            q = 1.0 / len(support)
        return format_reward(text, self.format_rule) + W_EXECUTION + q * W_ACCURACY

    def sample_answer(self, instance: ORInstance, rng: np.random.Generator) -> str:
        """The reference model with every objective coefficient redrawn: a well-formed answer whose
        program runs (format and execution) but whose objective is chance."""
        if not instance.model:  # a benchmark record (envs/opt/datasets.py): no model to perturb
            raise ValueError("a benchmark record has no reference model: no oracle")
        model = LinearModel.from_dict(instance.model)
        model.objective = {k: float(rng.integers(-9, 10)) for k in model.objective}
        model.quadratic = []
        program = oracle_program(model, "highspy")
        return f"<think>A guess.</think>\n<model>\n{render_model(model)}\n</model>\n<python>\n{program}</python>"


def blind_program(answer: float | None, solver: str = "gurobipy") -> str:
    """An answer that reads nothing: ``<think>``, ``<model>`` and a ``<python>`` program (the
    oracle writer's, for ``solver``) solving ``min x + y`` subject to ``x + y >= answer`` (x, y
    free), whose optimum is ``answer``; for ``None``, a model with ``x + y >= 2`` and ``x + y <=
    1``, proven infeasible. Its objective is no constant (a two-term row bounds it), so only the
    number it states decides its accuracy."""
    rows = ([Constraint("floor", {"x": 1.0, "y": 1.0}, lo=2.0), Constraint("ceiling", {"x": 1.0, "y": 1.0}, hi=1.0)]
            if answer is None else [Constraint("floor", {"x": 1.0, "y": 1.0}, lo=float(answer))])
    model = LinearModel("min", [Var("x", None, None, "C"), Var("y", None, None, "C")], rows, {"x": 1.0, "y": 1.0})
    model.validate()
    claim = "the problem is infeasible" if answer is None else f"the optimum is {answer!r}"
    return (f"<think>Without reading: {claim}.</think>\n<model>\n{render_model(model)}\n</model>\n"
            f"<python>\n{oracle_program(model, solver)}</python>")


def _observation(text: str) -> str:
    """Program output (and reasons quoting it) as observation text: NUL, terminal escapes and other
    control characters replaced, as the tool mode does."""
    return clean_text(text, DEFAULT_MAX_OBSERVATION_CHARS)


def _executed(result: SandboxResult, opt: dict | None) -> tuple[bool, str]:
    """SIRL's execution term: the program ran to a clean exit and its last solve reported a status."""
    status = None if opt is None else opt.get("status")
    if status == "error":
        err = opt.get("error")
        err = err if isinstance(err, str) and err else "the solve failed"
        if "10010" in err:
            return False, ("the model is too large for gurobipy's size-limited licence (2,000 variables or "
                           f"constraints; 200 variables with a quadratic objective): {err}")
        return False, f"the solve failed: {err}"
    if result.status != "ok":
        return False, f"the program did not run cleanly ({result.status}: {result.reason or 'exit code ' + str(result.exit_code)})"
    if result.optimum is None:
        return False, "the program made no solve call (its output is not read)"
    if opt is None:
        return False, "the capture's optimum is not a record"
    if not isinstance(status, str) or status not in OK_STATUSES:
        raw = opt.get("raw_status")
        return False, f"the solver reported no solution status ({str(raw if raw else status)[:100]})"
    return True, ""


def _empty(audit: ModelAudit, opt: dict) -> str:
    """Why the solved model is no model (``execution_rule="model"``); "" when it is one. Read from the
    exported model; without one, from the captured variable count (execution is SIRL's evidence from
    the program's process in any case; accuracy has no model to re-solve)."""
    if audit.model is not None:
        return empty_model(audit.model, extra_rows=audit.num_qconstrs + int(audit.general))
    n = opt.get("num_vars")
    return "" if type(n) is int and n > 0 else "the solved model has no variable"


def render_model(model: LinearModel) -> str:
    """The model as text for the ``<model>`` section (objective, constraints, domains)."""
    def terms(coefs: dict[str, float]) -> str:
        parts = [f"{c:+g} {v}" for v, c in coefs.items() if c != 0]
        return " ".join(parts).lstrip("+").strip() or "0"

    obj = terms(model.objective)
    if model.quadratic:
        obj += " " + " ".join(f"{c:+g} {a}*{b}" for a, b, c in model.quadratic)
    lines = [f"{'maximise' if model.sense == 'max' else 'minimise'} {obj}", "subject to"]
    for c in model.constraints:
        body = terms(c.coefs)
        if c.lo is not None and c.hi is not None and c.lo == c.hi:
            lines.append(f"  {c.name}: {body} = {c.hi:g}")
        else:
            if c.lo is not None:
                lines.append(f"  {c.name}: {body} >= {c.lo:g}")
            if c.hi is not None:
                lines.append(f"  {c.name}: {body} <= {c.hi:g}")
    kinds = {"C": "continuous", "I": "integer", "B": "binary"}
    for kind in ("C", "I", "B"):
        names = [v.name for v in model.variables if v.kind == kind]
        if names:
            lines.append(f"{kinds[kind]}: {', '.join(names[:50])}" + (" ..." if len(names) > 50 else ""))
    return "\n".join(lines)

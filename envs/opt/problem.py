"""The optimisation-modelling problem (``"or"``, ``SolverOR-v0``): a word problem in, a model and a
solver program out, scored by running the program (SIRL §3.2-3.3).

The policy answers ``<think>...</think><model>...</model><python>...</python>``; the program runs
in the sandbox (gurobipy with its size-limited pip licence, OR-Tools, HiGHS), and the objective,
status and model statistics of its last solve are captured from the solver object
(:attr:`~solvergym.sandbox.SandboxResult.optimum`), never parsed from its output: a program
that prints the right number without solving earns no ``execution`` or ``accuracy``. The rewards
are :mod:`.verify`'s (SIRL eq. 6). Unlike the SAT and logic problems, :meth:`ORProblem.score` is
not pure: it runs a program (bounded by ``limits``), in the process-wide sandbox pool unless a
pool is given.

Settings: ``stage`` (1: format + execution + accuracy; 2: plus the bonus, SIRL §3.3),
``bonus_weight`` (the paper does not state it), ``tolerance`` ("relative" 1e-6, §11, default;
"absolute" 0.01, §3.3), ``format_rule`` ("paper" binary 0.5, or "sirl_code" graded), ``solver``
(the library the prompt asks for: "gurobipy" as in SIRL, "highspy", "ortools", or None for any),
``limits`` (the sandbox's per-program limits; default 10 s wall clock, 2 GiB), ``pool`` (a
:class:`~solvergym.sandbox.SandboxPool` to use instead of the shared one).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..problem import Gold, Knobs, Problem, Verdict
from ...sandbox import Limits, SandboxPool, SandboxResult, shared_pool
from .datasets import as_benchmark_record, record_to_instance
from .generator import FAMILIES, ORInstance, generate
from .model import LinearModel
from .mps import MPSError, read_mps
from .programs import oracle_program
from .tool import ANSWER_HINT, OR_SOLVERS, ORTool
from .verify import FORMAT_RULES, OK_STATUSES, TOLERANCES, advanced, extract_program, format_reward, objective_matches

__all__ = ["ORKnobs", "ORProblem", "OR_SOLVERS", "COMPONENTS", "render_model"]

#: SIRL eq. 6's terms, in order
COMPONENTS = ("format", "execution", "accuracy", "bonus")
#: SIRL §10's weights (the bonus weight is not stated: a setting)
W_FORMAT, W_EXECUTION, W_ACCURACY = 0.5, 1.0, 2.0
DEFAULT_LIMITS = Limits(timeout_s=10.0, memory_mb=2048)
_STDERR_TAIL = 2000


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
    #: the score waits on the sandbox; the MPS is read and checked in pure Python
    thread_safe = sandboxed = True

    def __init__(self, *, stage: int = 1, bonus_weight: float = 1.0, tolerance: str = "relative",
                 format_rule: str = "paper", solver: str | None = "gurobipy", limits: Limits | None = None,
                 pool: SandboxPool | None = None):
        if stage not in (1, 2):
            raise ValueError(f"stage must be 1 or 2, got {stage!r}")
        if tolerance not in TOLERANCES:
            raise ValueError(f"tolerance must be one of {TOLERANCES}, got {tolerance!r}")
        if format_rule not in FORMAT_RULES:
            raise ValueError(f"format_rule must be one of {FORMAT_RULES}, got {format_rule!r}")
        if solver is not None and solver not in OR_SOLVERS:
            raise ValueError(f"solver must be one of {OR_SOLVERS} or None, got {solver!r}")
        if not (isinstance(bonus_weight, (int, float)) and math.isfinite(bonus_weight) and bonus_weight >= 0):
            raise ValueError(f"bonus_weight must be a finite number >= 0, got {bonus_weight!r}")
        self.stage, self.bonus_weight, self.tolerance = stage, float(bonus_weight), tolerance
        self.format_rule, self.solver = format_rule, solver
        self.limits = DEFAULT_LIMITS if limits is None else limits
        self.lease = shared_pool(pool)

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
        return {"family": instance.family, "status": instance.status, "source": instance.source,
                "num_vars": instance.features.get("num_vars"), "num_constrs": instance.features.get("num_constrs")}

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
        comps = dict.fromkeys(COMPONENTS, 0.0)
        comps["format"] = format_reward(text, self.format_rule)
        program = extract_program(text)
        if program is None:
            return Verdict(comps, False, False, "no <python> program in the answer",
                           info=self._info(instance, None, None, []))
        result = self.run(program)
        opt = result.optimum
        executed, why = _executed(result)
        solved = _solved_model(opt) if executed else None  # read once: the hack check and big-M use it
        correct = False
        if executed:
            if instance.answer is None:  # the ground truth is infeasible
                correct = opt["status"] in ("infeasible", "inf_or_unbd")
                why = ("the solver reports the model infeasible, as it is" if correct else
                       f"the problem is infeasible but the solver reports {opt['status']}")
            elif opt["status"] != "optimal":
                why = f"the solver reports {opt['status']}, not an optimum of {instance.answer:g}"
            elif _constant_objective(opt, solved):
                why = "the solved model's objective is a constant: it has no decision variable"
            else:
                correct = objective_matches(opt["objective"], instance.answer, self.tolerance)
                why = (f"objective {opt['objective']:.10g} " + ("matches" if correct else "does not match")
                       + f" {instance.answer:.10g} ({self.tolerance} tolerance)")
        comps["execution"] = W_EXECUTION if executed else 0.0
        comps["accuracy"] = W_ACCURACY if correct else 0.0
        kinds: list[str] = []
        if correct and opt is not None:
            kinds = advanced(opt, bool(solved is not None and solved.features().get("big_m")))
            if self.stage == 2 and kinds:
                comps["bonus"] = self.bonus_weight
        answer = None if opt is None else opt.get("objective")
        return Verdict(comps, True, correct, why, answer=answer, info=self._info(instance, result, opt, kinds))

    def _info(self, instance: ORInstance, result: SandboxResult | None, opt: dict | None,
              kinds: list[str]) -> dict[str, Any]:
        info: dict[str, Any] = {"solver_status": None if opt is None else opt.get("status"),
                                "objective": None if opt is None else opt.get("objective"),
                                "ground_truth": instance.answer, "advanced": kinds}
        if opt is not None:
            info["features"] = {k: opt.get(k) for k in ("solver", "call", "sense", "num_vars", "num_int", "num_bin",
                                                        "num_constrs", "num_qconstrs", "num_q_obj_terms",
                                                        "num_gen_constrs")}
        if result is not None:
            info["sandbox"] = {"status": result.status, "reason": result.reason, "exit_code": result.exit_code,
                               "duration_s": result.duration_s, "stdout": result.stdout[-_STDERR_TAIL:],
                               "stderr": result.stderr[-_STDERR_TAIL:]}
        return info

    def feedback(self, instance: ORInstance, verdict: Verdict) -> str:
        if not verdict.answered:
            return f"Format error: {verdict.reason}. Answer as {self.answer_hint(instance)}."
        head = "Correct: " if verdict.correct else "Incorrect: "
        sandbox = verdict.info.get("sandbox") or {}
        tail = ""
        if sandbox.get("status") not in (None, "ok") and sandbox.get("stderr"):
            tail = "\n" + sandbox["stderr"][-1000:]
        return head + verdict.reason + "." + tail

    def revise(self, instance: ORInstance, verdict: Verdict) -> str | None:
        """Multi-turn (``max_turns > 1``, beyond SIRL): a program that did not execute (it raised,
        timed out, never solved) comes back with its output and traceback to be revised; one that
        ran is scored. Whether it is correct is never shown."""
        if not verdict.answered or verdict.components.get("execution", 0.0) > 0:
            return None
        sandbox = verdict.info.get("sandbox") or {}
        out = [f"Your program did not solve the model: {verdict.reason}."]
        for stream in ("stdout", "stderr"):
            if sandbox.get(stream):
                out.append(f"{stream}:\n" + sandbox[stream][-_STDERR_TAIL:])
        out.append("Fix the program and answer again as " + self.answer_hint(instance) + ".")
        return "\n".join(out)

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


def _executed(result: SandboxResult) -> tuple[bool, str]:
    """SIRL's execution term: the program ran to a clean exit and its last solve reported a status."""
    opt = result.optimum
    if opt is not None and opt.get("status") == "error":
        err = opt.get("error") or "the solve failed"
        if "10010" in err:
            return False, ("the model is too large for gurobipy's size-limited licence (2,000 variables or "
                           f"constraints; 200 variables with a quadratic objective): {err}")
        return False, f"the solve failed: {err}"
    if result.status != "ok":
        return False, f"the program did not run cleanly ({result.status}: {result.reason or 'exit code ' + str(result.exit_code)})"
    if opt is None:
        return False, "the program made no solve call (its output is not read)"
    if opt.get("status") not in OK_STATUSES:
        return False, f"the solver reported no solution status ({opt.get('raw_status') or opt.get('status')})"
    return True, ""


def _solved_model(opt: dict[str, Any]) -> LinearModel | None:
    """The model the program solved, read from the MPS the capture exported (None when none came
    back or it does not read)."""
    text = opt.get("mps")
    if not text:
        return None
    try:
        return read_mps(text).model
    except (MPSError, ValueError):
        return None


def _constant_objective(opt: dict[str, Any], solved: LinearModel | None) -> bool:
    """A model whose objective names no variable states its answer instead of computing it (a
    reward hack: ``m.setObjective(1160)``); read from the exported model when it came back."""
    if opt.get("num_vars", 0) == 0:
        return True
    return solved is not None and not any(c != 0 for c in solved.objective.values()) and not solved.quadratic


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

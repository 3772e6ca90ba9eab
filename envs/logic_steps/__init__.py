"""Step-verified logic shared by Zebra, Knights & Knaves and AR-LSAT (Spring, ``spring.txt``).

``formula`` (the formal step language of App. E, parsed safely), ``theory`` (vocabulary, Γ_dom,
compilation to Z3), ``facts`` (the atomic facts of the default novelty rule), ``sample`` (formulas
on a sample of Γ_dom worlds, a cheap filter before Z3), ``verifier`` (Definitions 1-6 and §4.2),
``solver`` (the one incremental Z3 solver per trace it checks on), ``verdict`` (the accept and
novelty policies, step labels and verdicts), ``budget`` (the time budget per env action),
``trace`` (reading App. E's JSON output and scoring it), ``reward`` (§4.3, the §5.1 baselines and
the §5.3 ablations as presets), ``metrics`` (App. B.2, Table 2), ``family`` (what a family gives
the pipeline), ``problem`` (a family as a :class:`~solvergym.envs.problem.Problem`: its trace
mode), ``steps`` (its ``steps`` capability: Spring's protocol, one step per action),
``splits`` (Spring's split builder), ``rand`` (fast seeded draws for the generators),
``check_trace`` (offline checking, ``solvergym check-trace``).
"""
from .budget import VerifyBudget
from .check_trace import check_trace
from .formula import FormulaError, Language, parse_formula, to_text
from .metrics import summarize, trace_row
from .reward import PRESETS, RewardConfig, get_preset, spring_reward
from .theory import MetaStep, Theory
from .trace import TraceResult, TraceSession, extract_answer, score_trace
from .verdict import LABELS, NOVELTY_RULES, BaseStatus, StepVerdict
from .verifier import StepVerifier, strongly_implies

__all__ = [
    "BaseStatus", "FormulaError", "LABELS", "Language", "MetaStep", "NOVELTY_RULES", "PRESETS", "RewardConfig",
    "StepVerdict", "StepVerifier", "Theory", "TraceResult", "TraceSession", "VerifyBudget",
    "check_trace", "extract_answer", "get_preset", "parse_formula", "score_trace", "spring_reward",
    "strongly_implies", "summarize", "to_text", "trace_row",
]

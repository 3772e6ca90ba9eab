"""Step-verified logic shared by Zebra, Knights & Knaves and AR-LSAT (Spring, ``spring.txt``).

``formula`` (the formal step language of App. E, parsed safely), ``theory`` (vocabulary, Γ_dom,
compilation to Z3), ``facts`` (the atomic facts of the default novelty rule), ``verifier``
(Definitions 1-6 and §4.2 with one incremental Z3 solver per trace, a time budget per action),
``trace`` (reading App. E's JSON output and scoring it), ``reward`` (§4.3, the §5.1
baselines and the §5.3 ablations as presets), ``metrics`` (App. B.2, Table 2), ``problem`` (a family
as a :class:`~solvergym.envs.problem.Problem`: its trace mode), ``env`` (the step-verified mode:
the trace/step-mode env base class), ``check_trace`` (offline checking, ``solvergym check-trace``).
"""
from .check_trace import check_trace
from .formula import FormulaError, Language, parse_formula, to_text
from .metrics import summarize, trace_row
from .reward import PRESETS, RewardConfig, get_preset, spring_reward
from .theory import MetaStep, Theory
from .trace import TraceResult, TraceSession, extract_answer, score_trace
from .verifier import LABELS, NOVELTY_RULES, BaseStatus, StepVerdict, StepVerifier, VerifyBudget, strongly_implies

__all__ = [
    "BaseStatus", "FormulaError", "LABELS", "Language", "MetaStep", "NOVELTY_RULES", "PRESETS", "RewardConfig",
    "StepVerdict", "StepVerifier", "Theory", "TraceResult", "TraceSession", "VerifyBudget",
    "check_trace", "extract_answer", "get_preset", "parse_formula", "score_trace", "spring_reward",
    "strongly_implies", "summarize", "to_text", "trace_row",
]

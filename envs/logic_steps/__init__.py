"""Step-verified logic shared by Zebra, Knights & Knaves and AR-LSAT (Spring, ``spring.txt``).

``formula`` (the formal step language of App. E, parsed safely), ``theory`` (vocabulary, Γ_dom,
compilation to Z3), ``verifier`` (Definitions 1-6 and §4.2 with one incremental Z3 solver per
trace), ``trace`` (reading App. E's JSON output and scoring it), ``reward`` (§4.3, the §5.1
baselines and the §5.3 ablations as presets), ``metrics`` (App. B.2, Table 2), ``env`` (the
trace/step-mode env base class), ``check_trace`` (offline checking, ``solvergym check-trace``).
"""
from .check_trace import check_trace
from .formula import FormulaError, Language, parse_formula, to_text
from .metrics import summarize, trace_row
from .reward import PRESETS, RewardConfig, StepRewards, get_preset, spring_reward
from .theory import MetaStep, Theory
from .trace import TraceResult, TraceSession, extract_answer, score_trace
from .verifier import LABELS, BaseStatus, StepVerdict, StepVerifier, strongly_implies

__all__ = [
    "BaseStatus", "FormulaError", "LABELS", "Language", "MetaStep", "PRESETS", "RewardConfig",
    "StepRewards", "StepVerdict", "StepVerifier", "Theory", "TraceResult", "TraceSession",
    "check_trace", "extract_answer", "get_preset", "parse_formula", "score_trace", "spring_reward",
    "strongly_implies", "summarize", "to_text", "trace_row",
]

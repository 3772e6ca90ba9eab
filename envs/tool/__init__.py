"""``SolverTool-v0``: SAT-RL's multi-turn solver tool use (§3.4) over pluggable tasks.

``env`` (the env and its rewards), ``tasks`` (what it wraps: SAT-Bench decision, SATURN SAT, and
:func:`register_task` for more), ``programs`` (ground-truth solver programs for the oracle),
``datasets`` (the SFT warm-up data of §3.3).
"""
from .env import SolverToolEnv, ToolInstance, tool_prompt
from .programs import cnf_program, hack_program
from .tasks import TASKS, AnswerScore, SATBenchTask, SATTask, ToolTask, make_task, register_task

__all__ = [
    "SolverToolEnv",
    "ToolInstance",
    "tool_prompt",
    "cnf_program",
    "hack_program",
    "TASKS",
    "AnswerScore",
    "SATBenchTask",
    "SATTask",
    "ToolTask",
    "make_task",
    "register_task",
]

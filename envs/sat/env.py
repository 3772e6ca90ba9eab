"""``SolverSAT-v0`` (SATURN) and ``SolverSATBench-v0`` (SAT-Bench-style decision, SAT-RL rewards):
the single-turn mode (:class:`~solvergym.envs.modes.single.SingleTurnEnv`) of the SAT family's two
problems (:mod:`.problem`)."""
from __future__ import annotations

from ..modes.single import SingleTurnEnv
from .problem import SATBenchProblem, SATProblem

__all__ = ["SATEnv", "SATBenchEnv"]


class SATEnv(SingleTurnEnv):
    """SATURN's (n,k,l)-SAT task: find an assignment satisfying a planted random CNF.

    Observation: SATURN's prompt (clauses like ``!A!B!C & A!B!D``). Action: text whose last
    ``\\boxed{...}`` holds a bit string of length k (variable order A, B, C, ...). Reward, exactly
    SATURN §2.4: -1 without ``\\boxed{}``, 0 boxed but wrong, 1 correct; as components
    ``format`` (-1 or 0) and ``correct`` (0 or 1). Any satisfying assignment is correct.

    Difficulty knobs (:class:`~.problem.SATKnobs`): ``n`` literals per clause, ``k`` variables,
    ``l`` clauses (defaults (3,5,5), SATURN-1.5B's first level); D(n,k,l) of eq. 2 is in
    ``info["D"]``. ``max_chance_success`` rejects instances a uniformly random guess solves more
    often than that (``info`` reports ``chance_success`` for every instance). SATURN's own JSONL
    records are accepted as ``options["instance"]``.
    """

    problem_cls = SATProblem


class SATBenchEnv(SingleTurnEnv):
    """Natural-language SAT decision in the SAT-Bench style (``sat-rl.txt`` §3.2, App. C, E.1).

    A CNF over ``x(i,j,...)`` (``dims`` gives each index's range) is told as a scenario with one
    condition sentence per clause; the question is whether all conditions can hold at once.
    Labels are balanced (``sat_ratio``) and certified by a CDCL solver (a model, or a DRUP proof
    re-checked by unit propagation). ``show_mapping=True`` puts the variable mapping in the prompt
    (App. C template); it is always in ``info["mapping"]``.

    Answers: the last final-answer block counts (§3.4): ```` ```answer yes``` ```` /
    ```` ```answer no``` ```` (what the prompt asks for), ```` ```idk``` ````, or the bare
    ```` ```yes``` ```` / ```` ```no``` ```` that SAT-RL's own transcripts end with (App. E.1), read as
    ```` ```answer yes``` ```` / ```` ```answer no``` ```` with the same rewards. A fence with anything
    else in it is not an answer, and fences pair left to right, so one inside a code block is code
    (:func:`~solvergym.envs.parsing.final_answer_block`).

    Rewards (SAT-RL §3.4): ``format`` 0.1 when a final-answer block parses; ``correct`` 1 right,
    0 ``idk``, ``-1 - eps`` wrong (eq. 1). The ``tool`` and ``equivalence`` components come with
    ``SolverTool-v0``.

    An instance given as ``options["instance"]`` is validated (an UNSAT label's DRUP proof
    re-checked) once: the dataclass it becomes, or one this env generated, is not checked again
    while unchanged (:meth:`~solvergym.envs.base.Instance.coerce`), so the followers of a group
    reset with the leader's instance cost no proof check.
    """

    problem_cls = SATBenchProblem

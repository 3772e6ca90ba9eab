"""Optimisation-modelling word problems with solver-verified ground truth (``SolverOR-v0``, after
SIRL: Solver-Informed RL for optimisation modelling).

- :mod:`.model`: the reference model as plain data (:class:`LinearModel`, its features);
- :mod:`.solve`: HiGHS, OR-Tools and gurobipy back-ends and :func:`reference_solve`, the
  two-solver vote that labels every instance;
- :mod:`.families`: the seeded problem families (product mix, diet, transportation, assignment,
  knapsack, bin packing, facility location, shift scheduling, min-cost flow, lot sizing,
  portfolio), one module each;
- :mod:`.generator`: :class:`ORInstance` and :func:`generate`;
- :mod:`.programs`: oracle programs (gurobipy, highspy, OR-Tools source text) for a model.
"""
from .families import FAMILIES, FAMILY_KIND, FAMILY_NAMES, Family
from .generator import MAX_ATTEMPTS, ORInstance, generate, make_instance
from .model import Constraint, LinearModel, Var
from .programs import ORACLE_SOLVERS, oracle_program, parse_program_output
from .solve import SolveResult, reference_solve, solve_gurobi, solve_highs, solve_ortools

__all__ = ["FAMILIES", "FAMILY_KIND", "FAMILY_NAMES", "Family", "MAX_ATTEMPTS", "ORInstance", "generate",
           "make_instance", "Constraint", "LinearModel", "Var", "ORACLE_SOLVERS", "oracle_program",
           "parse_program_output", "SolveResult", "reference_solve", "solve_gurobi", "solve_highs", "solve_ortools"]

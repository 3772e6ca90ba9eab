"""Synthetic-Logic (SAT-RL §3.1-3.2, Tables 1-2, App. B.1): NP-hard families, each posed as a
decision, a solving and a counting question, with a ground-truth program for every solver that
fits (z3, pysmt, python-sat, ortools, sympy).

Layers: :mod:`.model` (the pseudo-Boolean constraint model a family encodes an instance in, its
brute-force count and the in-process ground truth) -> :mod:`.programs` (one program writer per
solver and query) -> :mod:`.family` (the problem contract every family keeps: generation with
balanced decision labels, the three queries' prompts and rewards, the oracle) -> :mod:`.tool`
(the tool capability, built once) -> :mod:`.families` (one module per family: its generator, its
encoding and its witness verifier, written without a solver). :data:`FAMILIES` names them with
Table 2's category; ``SolverLogic-v0`` (``family=``, ``query=``) poses any of them, and
``SolverTool-v0`` takes each as a ``task``.
"""
from __future__ import annotations

__all__ = ["FAMILIES", "CATEGORIES", "QUERIES"]

#: Table 2's four primary categories
CATEGORIES = ("puzzle", "program verification", "integer programming", "graph")
#: the three query types of §3.1
QUERIES = ("decision", "solving", "counting")

#: family name -> (``"module:class"`` of its problem, Table 2 category); App. B.1's order
FAMILIES: dict[str, tuple[str, str]] = {
    "clique": ("solvergym.envs.logic.families.clique:CliqueProblem", "graph"),
    "feedback-vertex-set": ("solvergym.envs.logic.families.fvs:FeedbackVertexSetProblem", "graph"),
    "graph-coloring": ("solvergym.envs.logic.families.coloring:ColoringProblem", "graph"),
    "max-cut": ("solvergym.envs.logic.families.maxcut:MaxCutProblem", "graph"),
    "partition": ("solvergym.envs.logic.families.partition:PartitionProblem", "integer programming"),
    "subset-sum": ("solvergym.envs.logic.families.subset_sum:SubsetSumProblem", "integer programming"),
    "tsp": ("solvergym.envs.logic.families.tsp:TSPProblem", "graph"),
    "set-cover": ("solvergym.envs.logic.families.set_cover:SetCoverProblem", "integer programming"),
    "set-packing": ("solvergym.envs.logic.families.set_packing:SetPackingProblem", "integer programming"),
    "nfa-path": ("solvergym.envs.logic.families.nfa:NFAPathProblem", "program verification"),
    "bnn-robustness": ("solvergym.envs.logic.families.bnn:BNNRobustnessProblem", "program verification"),
    "n-queens": ("solvergym.envs.logic.families.nqueens:NQueensProblem", "puzzle"),
    "sudoku": ("solvergym.envs.logic.families.sudoku:SudokuProblem", "puzzle"),
    "magic-square": ("solvergym.envs.logic.families.magic:MagicSquareProblem", "puzzle"),
    "latin-square": ("solvergym.envs.logic.families.latin:LatinSquareProblem", "puzzle"),
    "futoshiki": ("solvergym.envs.logic.families.futoshiki:FutoshikiProblem", "puzzle"),
}

"""Ground-truth solver programs for CNF tasks, one writer per solver of SAT-RL §3.1.

SAT-RL §3.2 pairs every instance with "a ground-truth solver program implementing the formal
constraint encoding"; these are the programs the oracle agent sends as its tool call (and so the
programs of the SFT warm-up data, §3.3). Each prints ``sat`` or ``unsat`` on its first line and,
when asked for a model, the assignment as a bit string (variables in the order given) on the
second. Variable names are Python identifiers derived from the instance's names
(``x(2,1,1)`` -> ``x_2_1_1``), which is also the name the solver sees, so the equivalence check
aligns them (rule 2 of :mod:`solvergym.envs.sat.truth`).
"""
from __future__ import annotations

import re
from typing import Sequence

__all__ = ["PROGRAM_SOLVERS", "identifier", "cnf_program", "hack_program"]

PROGRAM_SOLVERS = ("z3", "pysmt", "python-sat", "ortools", "sympy")
_NOT_IDENT = re.compile(r"\W+")


def identifier(name: str) -> str:
    """``x(2,1,1)`` -> ``x_2_1_1``; ``A1`` -> ``A1`` (a valid Python identifier)."""
    ident = _NOT_IDENT.sub("_", name).strip("_") or "v"
    return ident if not ident[0].isdigit() else "v_" + ident


def cnf_program(solver: str, clauses: Sequence[Sequence[int]], names: Sequence[str], *,
                model_of: Sequence[int] | None = None, comments: Sequence[str] | None = None) -> str:
    """A program that hands ``clauses`` (DIMACS literals over ``names[i-1]``) to ``solver``.

    ``model_of``: DIMACS variables whose values to print (as a bit string) when satisfiable.
    ``comments``: one comment per clause (e.g. the condition it encodes).
    """
    if solver not in _WRITERS:
        raise ValueError(f"no program writer for solver {solver!r}; known: {list(_WRITERS)}")
    used = sorted({abs(x) for c in clauses for x in c} | set(model_of or ()))
    ids = {v: identifier(names[v - 1]) for v in used}
    if len(set(ids.values())) != len(ids):
        raise ValueError("two variable names map to the same identifier")
    notes = list(comments) if comments is not None else [""] * len(clauses)
    return _WRITERS[solver]([list(c) for c in clauses], used, ids, list(model_of or ()), notes)


def _comment(note: str) -> str:
    note = " ".join(str(note).split())
    return f"  # {note}" if note else ""


def _z3(clauses, used, ids, model_of, notes) -> str:
    lines = ["from z3 import Bool, Not, Or, Solver, sat", ""]
    lines += [f'{ids[v]} = Bool("{ids[v]}")' for v in used]
    lines += ["", "solver = Solver()"]
    for c, note in zip(clauses, notes):
        lits = ", ".join(ids[x] if x > 0 else f"Not({ids[-x]})" for x in c)
        lines.append(f"solver.add(Or({lits})){_comment(note)}")
    lines += ["", "result = solver.check()", "print(result)"]
    if model_of:
        order = ", ".join(ids[v] for v in model_of)
        lines += ["if result == sat:", "    model = solver.model()",
                  f'    print("".join("1" if model.eval(v, model_completion=True) else "0" for v in [{order}]))']
    return "\n".join(lines) + "\n"


def _pysmt(clauses, used, ids, model_of, notes) -> str:
    lines = ["from pysmt.shortcuts import Not, Or, Solver, Symbol", "from pysmt.typing import BOOL", ""]
    lines += [f'{ids[v]} = Symbol("{ids[v]}", BOOL)' for v in used]
    lines += ["", "conditions = ["]
    for c, note in zip(clauses, notes):
        lits = ", ".join(ids[x] if x > 0 else f"Not({ids[-x]})" for x in c)
        lines.append(f"    Or({lits}),{_comment(note)}")
    lines += ["]", "", 'with Solver(name="z3") as solver:', "    for condition in conditions:",
              "        solver.add_assertion(condition)", "    result = solver.solve()",
              '    print("sat" if result else "unsat")']
    if model_of:
        order = ", ".join(ids[v] for v in model_of)
        lines += ["    if result:",
                  f'        print("".join("1" if solver.get_py_value(v) else "0" for v in [{order}]))']
    return "\n".join(lines) + "\n"


def _pysat(clauses, used, ids, model_of, notes) -> str:
    lines = ["from pysat.formula import CNF, IDPool", "from pysat.solvers import Solver", "",
             "pool = IDPool()"]
    lines += [f'{ids[v]} = pool.id("{ids[v]}")' for v in used]
    lines += ["", "cnf = CNF()"]
    for c, note in zip(clauses, notes):
        lits = ", ".join(ids[x] if x > 0 else f"-{ids[-x]}" for x in c)
        lines.append(f"cnf.append([{lits}]){_comment(note)}")
    lines += ["", 'with Solver(name="g3", bootstrap_with=cnf) as solver:', "    result = solver.solve()",
              '    print("sat" if result else "unsat")']
    if model_of:
        order = ", ".join(ids[v] for v in model_of)
        lines += ["    if result:", "        model = set(solver.get_model())",
                  f'        print("".join("1" if v in model else "0" for v in [{order}]))']
    return "\n".join(lines) + "\n"


def _ortools(clauses, used, ids, model_of, notes) -> str:
    lines = ["from ortools.sat.python import cp_model", "", "model = cp_model.CpModel()"]
    lines += [f'{ids[v]} = model.NewBoolVar("{ids[v]}")' for v in used]
    lines.append("")
    for c, note in zip(clauses, notes):
        lits = ", ".join(ids[x] if x > 0 else f"{ids[-x]}.Not()" for x in c)
        lines.append(f"model.AddBoolOr([{lits}]){_comment(note)}")
    lines += ["", "solver = cp_model.CpSolver()", "solver.parameters.num_workers = 1",
              "status = solver.Solve(model)", "result = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)",
              'print("sat" if result else "unsat")']
    if model_of:
        order = ", ".join(ids[v] for v in model_of)
        lines += ["if result:", f'    print("".join(str(solver.Value(v)) for v in [{order}]))']
    return "\n".join(lines) + "\n"


def _sympy(clauses, used, ids, model_of, notes) -> str:
    names = ", ".join(ids[v] for v in used)
    lines = ["from sympy import And, Not, Or, symbols", "from sympy.logic.inference import satisfiable", "",
             f'{names}{"," if len(used) == 1 else ""} = symbols("{" ".join(ids[v] for v in used)}", seq=True)',
             "", "formula = And("]
    for c, note in zip(clauses, notes):
        lits = ", ".join(ids[x] if x > 0 else f"Not({ids[-x]})" for x in c)
        lines.append(f"    Or({lits}),{_comment(note)}")
    lines += [")", "", "model = satisfiable(formula)", 'print("sat" if model else "unsat")']
    if model_of:
        order = ", ".join(ids[v] for v in model_of)
        lines += ["if model:", f'    print("".join("1" if model.get(v, False) else "0" for v in [{order}]))']
    return "\n".join(lines) + "\n"


_WRITERS = {"z3": _z3, "pysmt": _pysmt, "python-sat": _pysat, "ortools": _ortools, "sympy": _sympy}

_IMPORT = {"z3": "from z3 import *", "pysmt": "from pysmt.shortcuts import *",
           "python-sat": "from pysat.solvers import *", "ortools": "from ortools.sat.python import cp_model",
           "sympy": "from sympy import *"}


def hack_program(solver: str) -> str:
    """SAT-RL §4.3's reward hack for ``solver``: import it, call nothing."""
    return f"{_IMPORT[solver]}\nprint('{solver} imported')\n"

"""Ground-truth programs for a :class:`~.model.BoolModel`, one writer per solver of SAT-RL §3.1,
each for the three queries of §3.1 (SAT-RL §3.2: "for each combination of task type, query
type, and symbolic solver, ... a ground-truth solver program implementing the formal constraint
encoding").

What a program prints, whatever its solver (:func:`read_output` reads it back):

- decision: ``sat`` or ``unsat``;
- solving: ``sat`` and then ``true: <the names of the true variables>`` (or ``unsat``);
- counting: ``count: <the number of models over the model's variables>``.

Counting enumerates models over the model's own variables only: z3, pysmt and python-sat block
each model on them (python-sat's cardinality encodings add auxiliary variables, which blocking
on the decision variables projects away), OR-Tools enumerates with a solution callback and sympy
counts ``satisfiable(all_models=True)``. :meth:`~.model.BoolModel.fits` says which solvers a model
can be written for (python-sat states no weighted sum without an extra package; sympy no
cardinality bound above one).
"""
from __future__ import annotations

import re
from typing import Callable

from . import QUERIES
from .model import BoolModel

__all__ = ["QUERIES", "LOGIC_SOLVERS", "logic_program", "read_output"]

LOGIC_SOLVERS = ("z3", "pysmt", "python-sat", "ortools", "sympy")
_PY_OP = {"<=": "<=", ">=": ">=", "==": "=="}


def logic_program(solver: str, model: BoolModel, query: str) -> str:
    """The program that answers ``query`` about ``model`` with ``solver``."""
    if query not in QUERIES:
        raise ValueError(f"query must be one of {QUERIES}, got {query!r}")
    if solver not in _WRITERS:
        raise ValueError(f"no program writer for solver {solver!r}; known: {list(_WRITERS)}")
    if not model.fits(solver):
        raise ValueError(f"{solver} does not fit this model (weighted sums: {model.weighted}, "
                         f"cardinality bounds above one: {model.wide_cards}, threshold gates: {bool(model.thresholds)})")
    for name in model.names:
        if not name.isidentifier():
            raise ValueError(f"variable name {name!r} is not a Python identifier")
    return _WRITERS[solver](model, query)


_COUNT = re.compile(r"^count:\s*(\d{1,30})\s*$")


def read_output(stdout: str, query: str) -> dict | None:
    """What a program of :func:`logic_program` printed: ``{"sat": bool}`` (decision),
    ``{"sat": bool, "true": [names]}`` (solving) or ``{"count": int}``; ``None`` when the output
    is not in that form."""
    lines = [ln.strip() for ln in (stdout or "").splitlines() if ln.strip()]
    if query == "counting":
        for ln in lines:
            m = _COUNT.match(ln)
            if m:
                return {"count": int(m.group(1))}
        return None
    if not lines or lines[0] not in ("sat", "unsat"):
        return None
    out: dict = {"sat": lines[0] == "sat"}
    if query == "solving" and out["sat"]:
        true = next((ln for ln in lines[1:] if ln.startswith("true:")), None)
        if true is None:
            return None
        out["true"] = true[len("true:"):].split()
    return out


def _names(model: BoolModel, lits, neg: Callable[[str], str], pos: Callable[[str], str] = lambda n: n) -> list[str]:
    return [pos(model.names[x - 1]) if x > 0 else neg(model.names[-x - 1]) for x in lits]


def _var_list(model: BoolModel) -> str:
    return "variables = [" + ", ".join(model.names) + "]"


# ----------------------------------------------------------------------------- z3
def _z3(model: BoolModel, query: str) -> str:
    lines = ["from z3 import Bool, Not, Or, PbEq, PbGe, PbLe, Solver, is_true, sat", ""]
    lines += [f'{n} = Bool("{n}")' for n in model.names]
    lines += [_var_list(model), "", "solver = Solver()"]
    pb = {"<=": "PbLe", ">=": "PbGe", "==": "PbEq"}
    for c in model.clauses:
        lines.append(f"solver.add(Or({', '.join(_names(model, c.lits, lambda n: f'Not({n})'))}))")
    for c in model.cards:
        terms = ", ".join(f"({t}, 1)" for t in _names(model, c.lits, lambda n: f"Not({n})"))
        lines.append(f"solver.add({pb[c.op]}([{terms}], {c.k}))")
    for c in model.linears:
        terms = ", ".join(f"({model.names[v - 1]}, {a})" for a, v in zip(c.coefs, c.vars))
        lines.append(f"solver.add({pb[c.op]}([{terms}], {c.rhs}))")
    for g in model.thresholds:
        terms = ", ".join(f"({t}, 1)" for t in _names(model, g.lits, lambda n: f"Not({n})"))
        lines.append(f"solver.add({model.names[g.var - 1]} == PbGe([{terms}], {g.k}))")
    lines.append("")
    if query == "counting":
        lines += ["count = 0", "while solver.check() == sat:", "    model = solver.model()", "    count += 1",
                  "    solver.add(Or([v != model.eval(v, model_completion=True) for v in variables]))",
                  'print("count:", count)']
    else:
        lines += ["result = solver.check()", "print(result)"]
        if query == "solving":
            lines += ["if result == sat:", "    model = solver.model()",
                      '    print("true:", " ".join(str(v) for v in variables if is_true(model.eval(v, model_completion=True))))']
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- pysmt
def _pysmt(model: BoolModel, query: str) -> str:
    lines = ["from pysmt.shortcuts import GE, LE, Equals, Iff, Int, Ite, Not, Or, Plus, Solver, Symbol",
             "from pysmt.typing import BOOL", ""]
    lines += [f'{n} = Symbol("{n}", BOOL)' for n in model.names]
    lines += [_var_list(model), "", "constraints = ["]
    cmp = {"<=": "LE", ">=": "GE", "==": "Equals"}
    for c in model.clauses:
        lines.append(f"    Or({', '.join(_names(model, c.lits, lambda n: f'Not({n})'))}),")
    for c in model.cards:
        terms = ", ".join(f"Ite({t}, Int(1), Int(0))" for t in _names(model, c.lits, lambda n: f"Not({n})"))
        lines.append(f"    {cmp[c.op]}(Plus([{terms}]), Int({c.k})),")
    for c in model.linears:
        terms = ", ".join(f"Ite({model.names[v - 1]}, Int({a}), Int(0))" for a, v in zip(c.coefs, c.vars))
        lines.append(f"    {cmp[c.op]}(Plus([{terms}]), Int({c.rhs})),")
    for g in model.thresholds:
        terms = ", ".join(f"Ite({t}, Int(1), Int(0))" for t in _names(model, g.lits, lambda n: f"Not({n})"))
        lines.append(f"    Iff({model.names[g.var - 1]}, GE(Plus([{terms}]), Int({g.k}))),")
    lines += ["]", "", 'with Solver(name="z3") as solver:', "    for constraint in constraints:",
              "        solver.add_assertion(constraint)"]
    if query == "counting":
        lines += ["    count = 0", "    while solver.solve():", "        count += 1",
                  "        solver.add_assertion(Or([Not(v) if solver.get_py_value(v) else v for v in variables]))",
                  '    print("count:", count)']
    else:
        lines += ["    result = solver.solve()", '    print("sat" if result else "unsat")']
        if query == "solving":
            lines += ["    if result:",
                      '        print("true:", " ".join(v.symbol_name() for v in variables if solver.get_py_value(v)))']
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- python-sat
def _pysat(model: BoolModel, query: str) -> str:
    lines = ["from pysat.card import CardEnc, EncType", "from pysat.formula import CNF, IDPool",
             "from pysat.solvers import Solver", "", "pool = IDPool()"]
    lines += [f'{n} = pool.id("{n}")' for n in model.names]
    lines += [_var_list(model), "", "cnf = CNF()"]
    enc = {"<=": "atmost", ">=": "atleast", "==": "equals"}
    for c in model.clauses:
        lines.append(f"cnf.append([{', '.join(_names(model, c.lits, lambda n: f'-{n}'))}])")
    for c in model.cards:
        lits = ", ".join(_names(model, c.lits, lambda n: f"-{n}"))
        lines.append(f"cnf.extend(CardEnc.{enc[c.op]}(lits=[{lits}], bound={c.k}, vpool=pool, "
                     f"encoding=EncType.seqcounter).clauses)")
    lines += ["", 'with Solver(name="g3", bootstrap_with=cnf) as solver:']
    if query == "counting":
        lines += ["    count = 0", "    while solver.solve():", "        model = set(solver.get_model())",
                  "        count += 1", "        solver.add_clause([-v if v in model else v for v in variables])",
                  '    print("count:", count)']
    else:
        lines += ["    result = solver.solve()", '    print("sat" if result else "unsat")']
        if query == "solving":
            names = "[" + ", ".join(f'"{n}"' for n in model.names) + "]"
            lines += ["    if result:", "        model = set(solver.get_model())",
                      f'        print("true:", " ".join(n for n, v in zip({names}, variables) if v in model))']
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- ortools
def _ortools(model: BoolModel, query: str) -> str:
    lines = ["from ortools.sat.python import cp_model", "", "model = cp_model.CpModel()"]
    lines += [f'{n} = model.NewBoolVar("{n}")' for n in model.names]
    lines += [_var_list(model), ""]
    for c in model.clauses:
        lines.append(f"model.AddBoolOr([{', '.join(_names(model, c.lits, lambda n: f'{n}.Not()'))}])")
    for c in model.cards:
        terms = " + ".join(_names(model, c.lits, lambda n: f"(1 - {n})"))
        lines.append(f"model.Add({terms} {_PY_OP[c.op]} {c.k})")
    for c in model.linears:
        terms = " + ".join(f"{a} * {model.names[v - 1]}" for a, v in zip(c.coefs, c.vars))
        lines.append(f"model.Add({terms} {_PY_OP[c.op]} {c.rhs})")
    for g in model.thresholds:
        terms, out = " + ".join(_names(model, g.lits, lambda n: f"(1 - {n})")), model.names[g.var - 1]
        lines += [f"model.Add({terms} >= {g.k}).OnlyEnforceIf({out})",
                  f"model.Add({terms} <= {g.k - 1}).OnlyEnforceIf({out}.Not())"]
    lines += ["", "solver = cp_model.CpSolver()", "solver.parameters.num_workers = 1"]
    if query == "counting":
        lines += ["solver.parameters.enumerate_all_solutions = True", "",
                  "class Counter(cp_model.CpSolverSolutionCallback):", "    def __init__(self):",
                  "        super().__init__()", "        self.count = 0", "",
                  "    def on_solution_callback(self):", "        self.count += 1", "",
                  "counter = Counter()", "solver.Solve(model, counter)", 'print("count:", counter.count)']
    else:
        lines += ["status = solver.Solve(model)", "result = status in (cp_model.OPTIMAL, cp_model.FEASIBLE)",
                  'print("sat" if result else "unsat")']
        if query == "solving":
            lines += ["if result:",
                      '    print("true:", " ".join(v.Name() for v in variables if solver.Value(v)))']
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- sympy
def _sympy_card(model: BoolModel, c) -> list[str]:
    """At most / exactly / at least one (or none) as clauses."""
    lits = _names(model, c.lits, lambda n: f"Not({n})")
    negs = _names(model, c.lits, lambda n: n, pos=lambda n: f"Not({n})")
    out = []
    if c.k == 0 and c.op in ("<=", "=="):
        return [f"    {x}," for x in negs]
    if c.op in (">=", "==") and c.k == 1:
        out.append(f"    Or({', '.join(lits)}),")
    if c.op in ("<=", "==") and c.k == 1:
        out += [f"    Or({negs[i]}, {negs[j]})," for i in range(len(negs)) for j in range(i + 1, len(negs))]
    return out


def _sympy(model: BoolModel, query: str) -> str:
    names = " ".join(model.names)
    lines = ["from sympy import And, Not, Or, symbols", "from sympy.logic.inference import satisfiable", "",
             f'{", ".join(model.names)}{"," if len(model.names) == 1 else ""} = symbols("{names}")',
             _var_list(model), "", "formula = And("]
    for c in model.clauses:
        lines.append(f"    Or({', '.join(_names(model, c.lits, lambda n: f'Not({n})'))}),")
    for c in model.cards:
        lines += _sympy_card(model, c)
    lines += [")", ""]
    if query == "counting":
        lines += ["free = [v for v in variables if v not in formula.free_symbols]",
                  "count = sum(1 for m in satisfiable(formula, all_models=True) if m) * 2 ** len(free)",
                  'print("count:", count)']
    else:
        lines += ["model = satisfiable(formula)", 'print("sat" if model else "unsat")']
        if query == "solving":
            lines += ["if model:", '    print("true:", " ".join(str(v) for v in variables if model.get(v, False)))']
    return "\n".join(lines) + "\n"


_WRITERS = {"z3": _z3, "pysmt": _pysmt, "python-sat": _pysat, "ortools": _ortools, "sympy": _sympy}

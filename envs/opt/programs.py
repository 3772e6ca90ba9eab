"""Oracle programs: for a reference model, the complete standalone Python program that builds and
solves exactly that model with gurobipy, highspy or OR-Tools and prints its status and
objective.

They are what a perfect policy would write in SIRL's ``<python>`` section (SIRL §3.2: the answer
is the value the executed code prints), so they serve as gold programs for oracles and SFT, and
as an end-to-end check that executing a correct program in the sandbox reproduces the stored
answer. Every program sets a time limit and one thread (or-modelling.md §1.4), uses the model's
plain variable names as string keys (``x["x_1_2"]``), and prints two lines that
:func:`parse_program_output` reads::

    status: optimal        (or infeasible / unbounded / timeout / other ...)
    objective: 1234.5      (only when optimal)

Numbers are written with ``repr``, so the program holds the model's floats exactly. Long sums
are wrapped over several lines; nothing else is abbreviated.
"""
from __future__ import annotations

import json
import math
import re

from .model import LinearModel
from .solve import hessian_lower

__all__ = ["ORACLE_SOLVERS", "oracle_program", "parse_program_output"]

ORACLE_SOLVERS = ("gurobipy", "highspy", "ortools")

_TERMS_PER_LINE = 6


def _num(x: float) -> str:
    return repr(float(x))


def _key(name: str) -> str:
    return f"x[{json.dumps(name)}]"


def _expr(linear: dict[str, float], quadratic: list[list] = (), constant: float = 0.0,
          empty: str = "0.0", indent: str = "    ") -> str:
    """``c1 * x["a"] + c2 * x["b"] - ...``, wrapped in parentheses over several lines when long."""
    terms = [(c, _key(k)) for k, c in linear.items()]
    terms += [(q, f"{_key(i)} * {_key(j)}") for i, j, q in quadratic]
    parts = []
    for n, (c, v) in enumerate(terms):
        if n == 0:
            parts.append(f"{_num(c)} * {v}")
        else:
            parts.append(f"{'-' if c < 0 else '+'} {_num(abs(c))} * {v}")
    if constant and parts:
        parts.append(f"{'-' if constant < 0 else '+'} {_num(abs(constant))}")
    elif constant:
        parts.append(_num(constant))
    if not parts:
        return empty
    if len(parts) <= _TERMS_PER_LINE:
        return " ".join(parts)
    lines = [" ".join(parts[k:k + _TERMS_PER_LINE]) for k in range(0, len(parts), _TERMS_PER_LINE)]
    return "(\n" + "\n".join(indent + ln for ln in lines) + "\n)"


def _rows(model: LinearModel):
    """Each row as ``(name, coefs, op, rhs)`` with op in ``<=, >=, ==``; a ranged row is two."""
    for c in model.constraints:
        if c.lo is not None and c.hi is not None and c.lo == c.hi:
            yield c.name, c.coefs, "==", c.lo
            continue
        if c.lo is not None:
            yield (c.name if c.hi is None else f"{c.name}_lo"), c.coefs, ">=", c.lo
        if c.hi is not None:
            yield (c.name if c.lo is None else f"{c.name}_hi"), c.coefs, "<=", c.hi


def _header(solver: str, model: LinearModel) -> str:
    f = model.features()
    kind = "QP" if model.is_quadratic else ("MILP" if f["num_continuous"] and model.is_integer
                                            else "IP" if model.is_integer else "LP")
    return (f"# Oracle program ({solver}): {kind}, {model.sense}imise, {f['num_vars']} variables "
            f"({f['num_int']} integer, {f['num_bin']} binary), {f['num_constrs']} constraints.\n")


def _gurobipy(model: LinearModel, time_limit_s: float) -> str:
    out = [_header("gurobipy", model), "import gurobipy as gp", "from gurobipy import GRB", "",
           "env = gp.Env(empty=True)", 'env.setParam("OutputFlag", 0)', "env.start()",
           'm = gp.Model("oracle", env=env)', "m.Params.Threads = 1", f"m.Params.TimeLimit = {_num(time_limit_s)}"]
    if model.is_integer:
        out.append("m.Params.MIPGap = 0.0")
    out += ["", "x = {}"]
    for v in model.variables:
        lo, hi = v.bounds()
        if v.kind == "B" and (lo, hi) == (0.0, 1.0):
            out.append(f'{_key(v.name)} = m.addVar(vtype=GRB.BINARY, name={json.dumps(v.name)})')
            continue
        vt = {"C": "GRB.CONTINUOUS", "I": "GRB.INTEGER", "B": "GRB.BINARY"}[v.kind]
        lb = "-GRB.INFINITY" if lo == -math.inf else _num(lo)
        ub = "GRB.INFINITY" if hi == math.inf else _num(hi)
        out.append(f'{_key(v.name)} = m.addVar(lb={lb}, ub={ub}, vtype={vt}, name={json.dumps(v.name)})')
    out.append("")
    for name, coefs, op, rhs in _rows(model):
        out.append(f"m.addConstr({_expr(coefs, empty='gp.LinExpr()')} {op} {_num(rhs)}, name={json.dumps(name)})")
    sense = "GRB.MAXIMIZE" if model.sense == "max" else "GRB.MINIMIZE"
    out += ["", f"m.setObjective({_expr(model.objective, model.quadratic, model.constant, empty='gp.LinExpr()')}, {sense})",
            "m.optimize()",
            "if m.Status == GRB.INF_OR_UNBD:  # presolve could not tell: decide without dual reductions",
            "    m.reset()",
            "    m.Params.DualReductions = 0",
            "    m.optimize()",
            "if m.Status == GRB.OPTIMAL:",
            '    print("status: optimal")',
            '    print("objective:", m.ObjVal)',
            "elif m.Status == GRB.INFEASIBLE:",
            '    print("status: infeasible")',
            "elif m.Status == GRB.UNBOUNDED:",
            '    print("status: unbounded")',
            "elif m.Status == GRB.TIME_LIMIT:",
            '    print("status: timeout")',
            "else:",
            '    print("status: other", m.Status)', ""]
    return "\n".join(out)


def _highspy(model: LinearModel, time_limit_s: float) -> str:
    if model.is_quadratic and model.is_integer:
        raise ValueError("highspy cannot solve a quadratic objective with integer variables (no MIQP in HiGHS)")
    first = _key(model.variables[0].name)
    out = [_header("highspy", model), "import highspy"]
    if model.is_quadratic:
        out.append("import numpy as np")
    out += ["", "h = highspy.Highs()", 'h.setOptionValue("output_flag", False)', 'h.setOptionValue("threads", 1)',
            f'h.setOptionValue("time_limit", {_num(time_limit_s)})']
    if model.is_integer:
        out += ['h.setOptionValue("mip_rel_gap", 0.0)', 'h.setOptionValue("mip_abs_gap", 1e-9)']
    out += ["inf = highspy.kHighsInf", "", "x = {}"]
    for v in model.variables:
        lo, hi = v.bounds()
        lb = "-inf" if lo == -math.inf else _num(lo)
        ub = "inf" if hi == math.inf else _num(hi)
        kind = "" if v.kind == "C" else ", type=highspy.HighsVarType.kInteger"
        out.append(f'{_key(v.name)} = h.addVariable(lb={lb}, ub={ub}{kind}, name={json.dumps(v.name)})')
    out.append("")
    for name, coefs, op, rhs in _rows(model):
        out.append(f"h.addConstr({_expr(coefs, empty=f'0.0 * {first}')} {op} {_num(rhs)}, name={json.dumps(name)})")
    negate = model.is_quadratic and model.sense == "max"
    sign = -1.0 if negate else 1.0
    if model.is_quadratic:
        start, rows, vals = hessian_lower(model, sign)
        out += ["",
                "# HiGHS minimises c'x + 1/2 x'Qx; Q is passed as its lower triangle, column by column"
                + (" (the maximisation is solved as the minimisation of its negation)" if negate else ""),
                f"h.passHessian({len(model.variables)}, {len(rows)}, highspy.HessianFormat.kTriangular,",
                f"              np.array({start}, dtype=np.int32),",
                f"              np.array({rows}, dtype=np.int32),",
                f"              np.array([{', '.join(_num(v) for v in vals)}], dtype=np.float64))"]
    linear = {k: sign * c for k, c in model.objective.items()}
    objective = _expr(linear, (), sign * model.constant, empty=f"0.0 * {first}")
    call = "h.minimize" if negate or model.sense == "min" else "h.maximize"
    value = "-h.getInfo().objective_function_value" if negate else "h.getInfo().objective_function_value"
    out += ["", f"{call}({objective})",
            "status = h.getModelStatus()",
            "if status == highspy.HighsModelStatus.kUnboundedOrInfeasible:  # presolve could not tell: decide without it",
            '    h.setOptionValue("presolve", "off")',
            "    h.run()",
            "    status = h.getModelStatus()",
            "if status == highspy.HighsModelStatus.kOptimal:",
            '    print("status: optimal")',
            f'    print("objective:", {value})',
            "elif status == highspy.HighsModelStatus.kInfeasible:",
            '    print("status: infeasible")',
            "elif status == highspy.HighsModelStatus.kUnbounded:",
            '    print("status: unbounded")',
            "elif status == highspy.HighsModelStatus.kTimeLimit:",
            '    print("status: timeout")',
            "else:",
            '    print("status: other", h.modelStatusToString(status))', ""]
    return "\n".join(out)


def _ortools(model: LinearModel, time_limit_s: float) -> str:
    if model.is_quadratic:
        raise ValueError("OR-Tools pywraplp (GLOP/SCIP) does not solve quadratic objectives; use gurobipy or highspy")
    backend = "SCIP" if model.is_integer else "GLOP"
    first = _key(model.variables[0].name)
    out = [_header("ortools", model), "from ortools.linear_solver import pywraplp", "",
           f'solver = pywraplp.Solver.CreateSolver("{backend}")',
           f"solver.SetTimeLimit({max(1, int(round(time_limit_s * 1000)))})  # milliseconds",
           "solver.SetNumThreads(1)", "inf = solver.infinity()", "", "x = {}"]
    for v in model.variables:
        lo, hi = v.bounds()
        lb = "-inf" if lo == -math.inf else _num(lo)
        ub = "inf" if hi == math.inf else _num(hi)
        if v.kind == "B" and (lo, hi) == (0.0, 1.0):
            out.append(f"{_key(v.name)} = solver.BoolVar({json.dumps(v.name)})")
        elif v.kind == "C":
            out.append(f"{_key(v.name)} = solver.NumVar({lb}, {ub}, {json.dumps(v.name)})")
        else:
            out.append(f"{_key(v.name)} = solver.IntVar({lb}, {ub}, {json.dumps(v.name)})")
    out.append("")
    for name, coefs, op, rhs in _rows(model):
        out.append(f"solver.Add({_expr(coefs, empty=f'0.0 * {first}')} {op} {_num(rhs)}, {json.dumps(name)})")
    call = "solver.Maximize" if model.sense == "max" else "solver.Minimize"
    out += ["", f"{call}({_expr(model.objective, (), model.constant, empty=f'0.0 * {first}')})",
            "params = pywraplp.MPSolverParameters()"]
    if model.is_integer:
        out.append("params.SetDoubleParam(params.RELATIVE_MIP_GAP, 0.0)")
    out += ["status = solver.Solve(params)",
            "if status == pywraplp.Solver.INFEASIBLE:  # presolve may call an unbounded model infeasible: confirm without it",
            "    params.SetIntegerParam(params.PRESOLVE, params.PRESOLVE_OFF)",
            "    status = solver.Solve(params)",
            "if status == pywraplp.Solver.OPTIMAL:",
            '    print("status: optimal")',
            '    print("objective:", solver.Objective().Value())',
            "elif status == pywraplp.Solver.INFEASIBLE:",
            '    print("status: infeasible")',
            "elif status == pywraplp.Solver.UNBOUNDED:",
            '    print("status: unbounded")',
            "elif status in (pywraplp.Solver.FEASIBLE, pywraplp.Solver.NOT_SOLVED):",
            '    print("status: timeout")',
            "else:",
            '    print("status: other", status)', ""]
    return "\n".join(out)


def oracle_program(model: LinearModel | dict, solver: str, time_limit_s: float = 10.0) -> str:
    """The source text of a standalone program that solves ``model`` with ``solver`` (one of
    :data:`ORACLE_SOLVERS`) and prints its status and objective (see the module docstring).

    ``ValueError`` for an unknown solver, for a quadratic model with ``"ortools"`` (pywraplp has
    no QP), for a quadratic integer model with ``"highspy"`` (HiGHS has no MIQP), and for a model
    without variables.
    """
    model = model if isinstance(model, LinearModel) else LinearModel.from_dict(model)
    if solver not in ORACLE_SOLVERS:
        raise ValueError(f"solver must be one of {ORACLE_SOLVERS}, got {solver!r}")
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, (int, float)) or not time_limit_s > 0:
        raise ValueError(f"time_limit_s must be a positive number, got {time_limit_s!r}")
    if not model.variables:
        raise ValueError("a model without variables has no program")
    return {"gurobipy": _gurobipy, "highspy": _highspy, "ortools": _ortools}[solver](model, float(time_limit_s))


_STATUS_RE = re.compile(r"^status:\s*(\w+)", re.MULTILINE)
_OBJECTIVE_RE = re.compile(r"^objective:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$", re.MULTILINE)


def parse_program_output(text: str) -> tuple[str | None, float | None]:
    """``(status, objective)`` from an oracle program's output (the last of each line printed;
    ``None`` where absent). Anything else printed, such as HiGHS's banner, is ignored."""
    statuses = _STATUS_RE.findall(text)
    objectives = _OBJECTIVE_RE.findall(text)
    return (statuses[-1] if statuses else None), (float(objectives[-1]) if objectives else None)

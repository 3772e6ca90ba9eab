"""OR-Tools' capture, one library with three solver APIs: CP-SAT (``CpSolver.Solve`` and its
variants: a copy of the model, serialised as a ``cpsat`` formula, and an optimum), the linear
solver wrapper ``pywraplp`` (``Solver.Solve``: the model's LP text as an ``lp`` formula, an optimum
and its MPS export) and MathOpt (``mathopt.solve``: an optimum).

Every optimum carries the solved model as MPS text, which the host re-solves (the reward trusts
no number the program's process reports). All three APIs' models are written here, in memory
(``optimum.free_mps``), from the model's proto:

- ``pywraplp``: its ``MPModelProto`` (OR-Tools' own MPS writer lists a column that is in no row
  in BOUNDS only, which HiGHS reads as a column, Gurobi drops and the host's reader refuses);
- CP-SAT: integer variables, linear constraints and the Boolean clauses ``bool_or``,
  ``bool_and``, ``at_most_one`` and ``exactly_one`` as rows over literals (``not x`` is
  ``1 - x``), one enforcement literal as an indicator, assumptions as fixed literals, and the
  objective with its offset and scaling (a maximisation is stored as a negated minimisation with
  a negative scaling factor);
- MathOpt: variables, linear and indicator constraints and the objective, its quadratic terms as
  QUADOBJ. OR-Tools' MathOpt converter (``math_opt.io.python.mps_converter``) is not used: it
  drops a quadratic objective without a word and has the BOUNDS-only columns above.

What MPS cannot state (a domain of several intervals, ``all_different``, a product, two
enforcement literals, quadratic or cone constraints, several objectives) gives no MPS, with the
reason in the optimum's ``error``.
"""
from __future__ import annotations

from .core import Capture, argument, is_wrapped, patch, wrap_call
from .optimum import (MAX_MPS, MIN_MPS_ENTRY_BYTES, OptimumReader, count, float_text, free_mps,
                      is_binary, too_large_for_mps)

MAX_PROTO_TEXT = 1 << 20


def install(cap: Capture) -> None:
    """Wrap CP-SAT's solves, MathOpt's ``solve`` and ``pywraplp``'s ``Solve`` (each optional)."""
    try:
        from ortools.sat.python import cp_model
    except ImportError:
        cp_model = None
    if cp_model is not None:

        def snap(self, model=None, *args, **kwargs):
            model = kwargs.get("model", model)
            clone = getattr(model, "clone", None) or getattr(model, "Clone", None)
            return clone() if clone is not None else model

        reader = _cpsat_reader(cp_model)
        for name in ("Solve", "solve", "SolveWithSolutionCallback", "solve_with_solution_callback",
                     "SearchForAllSolutions", "search_for_all_solutions"):
            patch(cap, cp_model.CpSolver, name, "ortools", f"CpSolver.{name}", "cpsat", snap, reader)
    try:
        _install_mathopt(cap)
    except Exception:  # MathOpt is optional: an OR-Tools without it (or changed) is still patched
        pass
    try:
        from ortools.linear_solver import pywraplp
    except ImportError:
        return

    def lp_snap(self, *args, **kwargs):
        return self.ExportModelAsLpFormat(False)

    patch(cap, pywraplp.Solver, "Solve", "ortools", "linear_solver.Solve", "lp", lp_snap, _pywraplp_reader(pywraplp))


#: pywraplp.Solver.ResultStatus values
_LP_STATUS = {0: ("OPTIMAL", "optimal"), 1: ("FEASIBLE", "feasible"), 2: ("INFEASIBLE", "infeasible"),
              3: ("UNBOUNDED", "unbounded"), 4: ("ABNORMAL", "error"), 5: ("MODEL_INVALID", "error"),
              6: ("NOT_SOLVED", "other")}


def _pywraplp_reader(pywraplp) -> OptimumReader:
    from ortools.linear_solver import linear_solver_pb2

    Solver, Objective = pywraplp.Solver, pywraplp.Objective
    objective_of, variables_of = Solver.Objective, Solver.variables
    value_of, maximises = Objective.Value, Objective.maximization
    num_constraints, export_proto = Solver.NumConstraints, Solver.ExportModelToProto
    ModelProto = linear_solver_pb2.MPModelProto

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], Solver)

    def status(opt, args, kwargs, out):
        code = int(out)
        opt["raw_status"], opt["status"] = _LP_STATUS.get(code, (str(code), "other"))
        if code in (0, 1):
            opt["objective"] = float_text(value_of(objective_of(args[0])))

    def model(opt, args, kwargs):
        solver = args[0]
        opt["sense"] = "max" if maximises(objective_of(solver)) else "min"
        n_vars = n_int = n_bin = 0
        for v in variables_of(solver):
            n_vars += 1
            if v.integer():
                if is_binary(v.lb(), v.ub()):
                    n_bin += 1
                else:
                    n_int += 1
        opt["num_vars"], opt["num_int"], opt["num_bin"] = n_vars, n_int, n_bin
        opt["num_constrs"] = count(num_constraints(solver))
        # pywraplp's Python API builds linear models only (no quadratic or general constraints)
        opt["num_qconstrs"] = opt["num_q_obj_terms"] = opt["num_gen_constrs"] = 0

    def export(cap, opt, args, kwargs):
        if too_large_for_mps(opt):
            return None
        proto = ModelProto()
        export_proto(args[0], proto)
        return _mp_model_mps(proto, opt)

    return OptimumReader("ortools", "linear_solver.Solve", owns, status, model, export)


#: CpSolverStatus values
_CP_STATUS = {0: ("UNKNOWN", "other"), 1: ("MODEL_INVALID", "error"), 2: ("FEASIBLE", "feasible"),
              3: ("INFEASIBLE", "infeasible"), 4: ("OPTIMAL", "optimal")}


def _cpsat_reader(cp_model) -> OptimumReader:
    CpSolver, CpModel = cp_model.CpSolver, cp_model.CpModel
    objective_value = CpSolver.__dict__.get("objective_value")
    objective_value = objective_value.fget if isinstance(objective_value, property) else CpSolver.ObjectiveValue
    # the proto as the base class holds it (a subclass's ``proto`` or ``model_proto`` is not read)
    held = next((k.__dict__["model_proto"] for k in CpModel.__mro__ if "model_proto" in k.__dict__), None)
    get_proto = held.fget if held is not None else CpModel.__dict__["proto"].fget

    def proto_of(args, kwargs):
        model = argument(args, kwargs, 1, "model")
        return get_proto(model) if isinstance(model, CpModel) else None

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], CpSolver) and proto_of(args, kwargs) is not None

    def has_objective(proto) -> bool:
        return _proto_has(proto, "objective") or _proto_has(proto, "floating_point_objective")

    def status(opt, args, kwargs, out):
        code = int(out)
        opt["raw_status"], opt["status"] = _CP_STATUS.get(code, (str(code), "other"))
        if code in (2, 4) and has_objective(proto_of(args, kwargs)):
            opt["objective"] = float_text(objective_value(args[0]))

    def model(opt, args, kwargs):
        proto = proto_of(args, kwargs)
        if _proto_has(proto, "objective"):  # a maximisation is stored negated
            opt["sense"] = "max" if float(proto.objective.scaling_factor) < 0 else "min"
        elif _proto_has(proto, "floating_point_objective"):
            opt["sense"] = "max" if proto.floating_point_objective.maximize else "min"
        n_vars = n_bin = 0
        for v in proto.variables:
            n_vars += 1
            dom = list(v.domain)
            if dom and min(dom) >= 0 and max(dom) <= 1:
                n_bin += 1
        # every CP-SAT variable is an integer; every constraint but a linear one is "general"
        opt["num_vars"], opt["num_bin"], opt["num_int"] = n_vars, n_bin, n_vars - n_bin
        n_lin = n_all = 0
        for c in proto.constraints:
            n_all += 1
            n_lin += _proto_has(c, "linear")
        opt["num_constrs"], opt["num_gen_constrs"] = n_lin, n_all - n_lin
        opt["num_qconstrs"] = opt["num_q_obj_terms"] = 0

    def export(cap, opt, args, kwargs):
        return _cpsat_mps(proto_of(args, kwargs), opt)

    return OptimumReader("ortools", "CpSolver.Solve", owns, status, model, export)


_INF = float("inf")
#: CP-SAT bounds at or beyond this are infinite (CP-SAT marks "none" with the int64 extremes)
_CP_INFINITE = 1 << 53
#: the constraint kinds of CpModelProto, to name one MPS cannot state
_CP_KINDS = ("bool_xor", "int_div", "int_mod", "int_prod", "lin_max", "element", "circuit", "routes", "inverse",
             "reservoir", "table", "automaton", "interval", "no_overlap", "no_overlap_2d", "cumulative",
             "all_diff", "dummy_constraint")


def _cp_interval(domain, what: str, k: int) -> tuple[float, float]:
    """A CP-SAT domain (flat ``[lo0, hi0, lo1, hi1, ...]``) as one interval; adjacent integer
    intervals are one. ``ValueError`` when it has holes (MPS bounds are one interval)."""
    n = len(domain)
    if n == 2:  # nearly always: one element access each (a pybind list is copied whole)
        lo, hi = int(domain[0]), int(domain[1])
    else:
        d = [int(x) for x in domain]
        if not d or n % 2:
            raise ValueError(f"{what} {k} has an empty domain")
        lo, hi = d[0], d[1]
        for j in range(2, n, 2):
            if d[j] > hi + 1:
                raise ValueError(f"{what} {k} has a domain of several intervals, which MPS cannot state")
            hi = max(hi, d[j + 1])
    return (-_INF if lo <= -_CP_INFINITE else float(lo)), (_INF if hi >= _CP_INFINITE else float(hi))


def _cp_terms(refs, coeffs, scale: float = 1.0) -> dict[int, float]:
    """Linear terms over CP-SAT references (a negative one, ``-i-1``, is ``-x_i``)."""
    out: dict[int, float] = {}
    for ref, a in zip(refs, coeffs):
        ref, a = int(ref), float(a) * scale
        if ref < 0:
            ref, a = -ref - 1, -a
        out[ref] = out.get(ref, 0.0) + a
    return out


def _cpsat_mps(proto, opt: dict) -> str | None:
    """The CP-SAT model as MPS text (see the module docstring); ``None`` when it is too large."""
    n_constraints = len(proto.constraints)
    if too_large_for_mps({**opt, "num_constrs": n_constraints}):
        return None
    limit = MAX_MPS // MIN_MPS_ENTRY_BYTES - len(proto.variables) - n_constraints
    columns = []
    for k, v in enumerate(proto.variables):
        lo, hi = _cp_interval(v.domain, "variable", k)
        columns.append([v.name, lo, hi, True])
    for ref in proto.assumptions:  # solved as fixed literals
        ref = int(ref)
        col = columns[ref if ref >= 0 else -ref - 1]
        if ref >= 0:
            col[1] = max(col[1], 1.0)
        else:
            col[2] = min(col[2], 0.0)
    rows, indicators = [], []
    for k, c in enumerate(proto.constraints):
        enforcement = c.enforcement_literal
        if len(enforcement) > 1:
            raise ValueError(f"constraint {k} has {len(enforcement)} enforcement literals (an MPS indicator has one)")
        if _proto_has(c, "linear"):
            lin = c.linear
            limit -= len(lin.vars)
            if limit < 0:
                return None
            terms = _cp_terms(lin.vars, lin.coeffs)
            lo, hi = _cp_interval(lin.domain, "linear constraint", k)
        else:
            kind = next((name for name in _CP_LITERAL_LISTS if _proto_has(c, name)), None)
            if kind is None or kind == "bool_xor":
                kind = kind or next((name for name in _CP_KINDS if _proto_has(c, name)), "unknown")
                raise ValueError(f"CP-SAT {kind} constraint {k} has no MPS form")
            literals = getattr(c, kind).literals
            limit -= len(literals)
            if limit < 0:
                return None
            terms, negated = {}, 0
            for ref in literals:  # not x is 1 - x: its 1 moves to the bounds
                ref = int(ref)
                if ref >= 0:
                    terms[ref] = terms.get(ref, 0.0) + 1.0
                else:
                    terms[-ref - 1] = terms.get(-ref - 1, 0.0) - 1.0
                    negated += 1
            lo, hi = _LITERAL_ROWS[kind](len(literals))
            lo, hi = lo - negated, hi - negated
        rows.append((c.name, lo, hi, terms))
        if len(enforcement):
            ref = int(enforcement[0])
            indicators.append((len(rows) - 1, ref if ref >= 0 else -ref - 1, 1 if ref >= 0 else 0))
    sense, objective, constant = "min", {}, 0.0
    for kind in ("objective", "floating_point_objective"):
        if _proto_has(proto, kind) and len(getattr(proto, kind).vars) > limit:
            return None
    if _proto_has(proto, "objective"):
        obj = proto.objective
        if len(obj.domain):
            raise ValueError("a CP-SAT objective domain has no MPS form")
        scale = float(obj.scaling_factor) or 1.0  # 0 means 1; a maximisation is stored negated, scaled by -1
        sense = "max" if scale < 0 else "min"
        objective, constant = _cp_terms(obj.vars, obj.coeffs, scale), scale * float(obj.offset)
    elif _proto_has(proto, "floating_point_objective"):
        obj = proto.floating_point_objective
        sense = "max" if obj.maximize else "min"
        objective, constant = _cp_terms(obj.vars, obj.coeffs), float(obj.offset)
    return free_mps(name=proto.name, sense=sense, columns=columns, rows=rows, objective=objective,
                    constant=constant, indicators=indicators)


#: each clause over n literals as lo <= sum(literals) <= hi
_LITERAL_ROWS = {"bool_or": lambda n: (1.0, _INF), "bool_and": lambda n: (float(n), _INF),
                 "at_most_one": lambda n: (-_INF, 1.0), "exactly_one": lambda n: (1.0, 1.0)}


#: MathOpt termination reasons that map directly
_MATHOPT_DIRECT = {"OPTIMAL": "optimal", "INFEASIBLE": "infeasible", "UNBOUNDED": "unbounded",
                   "INFEASIBLE_OR_UNBOUNDED": "inf_or_unbd", "FEASIBLE": "feasible",
                   "NUMERICAL_ERROR": "error", "OTHER_ERROR": "error", "IMPRECISE": "other"}


def _install_mathopt(cap: Capture) -> None:
    """``mathopt.solve`` is a module-level function (defined in ``ortools.math_opt.python.solve``
    and re-exported by ``mathopt``): it is replaced in every module that holds that function."""
    import ortools.math_opt.python.solve as solve_mod
    from ortools.math_opt.python import mathopt

    orig = solve_mod.solve
    if is_wrapped(orig):
        return
    Model = mathopt.Model
    export_model = Model.export_model
    Result = mathopt.SolveResult
    has_solution, objective_value = Result.has_primal_feasible_solution, Result.objective_value
    try:
        from ortools.math_opt.elemental.python import enums
        matrix_attr = enums.DoubleAttr2.LINEAR_CONSTRAINT_COEFFICIENT
    except (ImportError, AttributeError):
        matrix_attr = None

    def model_of(args, kwargs):
        m = argument(args, kwargs, 0, "opt_model")
        return m if isinstance(m, Model) else None

    def owns(args, kwargs):
        return model_of(args, kwargs) is not None

    def status(opt, args, kwargs, out):
        term = out.termination
        opt["raw_status"] = raw = term.reason.name
        if raw == "NO_SOLUTION_FOUND":
            limit = getattr(term.limit, "name", None)
            opt["status"] = "time_limit" if limit == "TIME" else "other"
        else:
            opt["status"] = _MATHOPT_DIRECT.get(raw, "other")
        if has_solution(out):
            opt["objective"] = float_text(objective_value(out))

    def model(opt, args, kwargs):
        m = model_of(args, kwargs)
        opt["sense"] = "max" if m.objective.is_maximize else "min"
        n_vars = n_int = n_bin = 0
        for v in m.variables():
            n_vars += 1
            if v.integer:
                if is_binary(v.lower_bound, v.upper_bound):
                    n_bin += 1
                else:
                    n_int += 1
        opt["num_vars"], opt["num_int"], opt["num_bin"] = n_vars, n_int, n_bin
        opt["num_constrs"] = count(m.get_num_linear_constraints())
        opt["num_qconstrs"] = count(m.get_num_quadratic_constraints())
        opt["num_gen_constrs"] = count(m.get_num_indicator_constraints())
        opt["num_q_obj_terms"] = count(sum(1 for _ in m.objective.quadratic_terms()))

    def snap(*args, **kwargs):
        return None

    def export(cap, opt, args, kwargs):
        m = model_of(args, kwargs)
        nonzeros = 0
        if matrix_attr is not None:  # the constraint matrix's size, before the proto copies it
            try:
                nonzeros = int(m._elemental.get_attr_num_non_defaults(matrix_attr))
            except Exception:
                nonzeros = 0
        if too_large_for_mps(opt, nonzeros):
            return None
        return _mathopt_mps(export_model(m), opt)

    reader = OptimumReader("ortools", "mathopt.solve", owns, status, model, export)
    wrapped = wrap_call(cap, "ortools", "mathopt.solve", "none", orig, snap, reader)
    for mod in (solve_mod, mathopt):
        if getattr(mod, "solve", None) is orig:
            mod.solve = wrapped


def _mp_model_mps(p, opt: dict) -> str | None:
    """A ``pywraplp`` model (its ``MPModelProto``) as MPS text. OR-Tools' own writer
    (``ExportModelAsMpsFormat``) lists a column that is in no row in BOUNDS only, which HiGHS
    reads as a column, Gurobi drops and the host's reader refuses; here every column is listed."""
    if len(p.general_constraint):
        raise ValueError("pywraplp general constraints: no MPS form is written for them")
    if too_large_for_mps(opt, sum(len(c.var_index) for c in p.constraint)):
        return None
    columns = [(v.name, v.lower_bound, v.upper_bound, v.is_integer) for v in p.variable]
    objective = {k: v.objective_coefficient for k, v in enumerate(p.variable) if v.objective_coefficient}
    rows = [(c.name, c.lower_bound, c.upper_bound, _sum_terms(c.var_index, c.coefficient)) for c in p.constraint]
    q = p.quadratic_objective
    quadratic = list(zip(q.qvar1_index, q.qvar2_index, q.coefficient))
    return free_mps(name=p.name, sense="max" if p.maximize else "min", columns=columns, rows=rows,
                    objective=objective, constant=p.objective_offset, quadratic=quadratic)


def _sum_terms(index, coefficients) -> dict[int, float]:
    out: dict[int, float] = {}
    for i, a in zip(index, coefficients):
        out[int(i)] = out.get(int(i), 0.0) + a
    return out


def _mathopt_mps(p, opt: dict) -> str | None:
    """A MathOpt ``ModelProto`` as MPS text (see the module docstring); ``None`` when too large."""
    for field, what in (("quadratic_constraints", "quadratic constraints"),
                        ("auxiliary_objectives", "several objectives"),
                        ("second_order_cone_constraints", "second-order cone constraints"),
                        ("sos1_constraints", "SOS1 constraints"), ("sos2_constraints", "SOS2 constraints")):
        if len(getattr(p, field)):
            raise ValueError(f"MathOpt {what}: no MPS form is written for them")
    vs = p.variables
    index = {int(i): k for k, i in enumerate(vs.ids)}
    names = list(vs.names) or [""] * len(index)
    columns = [(names[k], lb, ub, bool(t)) for k, (lb, ub, t) in
               enumerate(zip(vs.lower_bounds, vs.upper_bounds, vs.integers))]
    lc, mat = p.linear_constraints, p.linear_constraint_matrix
    if too_large_for_mps(opt, len(mat.row_ids)):
        return None
    row_of = {int(i): k for k, i in enumerate(lc.ids)}
    row_names = list(lc.names) or [""] * len(row_of)
    rows = [(row_names[k], lo, hi, {}) for k, (lo, hi) in enumerate(zip(lc.lower_bounds, lc.upper_bounds))]
    for r, c, a in zip(mat.row_ids, mat.column_ids, mat.coefficients):
        terms = rows[row_of[int(r)]][3]
        terms[index[int(c)]] = terms.get(index[int(c)], 0.0) + a
    indicators = []
    for _, ind in sorted(p.indicator_constraints.items()):
        if not ind.HasField("indicator_id"):
            continue  # MathOpt ignores an indicator constraint without its indicator
        e = ind.expression
        terms = {index[int(i)]: a for i, a in zip(e.ids, e.values)}
        rows.append((ind.name, ind.lower_bound, ind.upper_bound, terms))
        indicators.append((len(rows) - 1, index[int(ind.indicator_id)], 0 if ind.activate_on_zero else 1))
    obj = p.objective
    objective = {index[int(i)]: a for i, a in zip(obj.linear_coefficients.ids, obj.linear_coefficients.values)}
    q = obj.quadratic_coefficients
    quadratic = [(index[int(i)], index[int(j)], a) for i, j, a in zip(q.row_ids, q.column_ids, q.coefficients)]
    return free_mps(name=p.name, sense="max" if obj.maximize else "min", columns=columns, rows=rows,
                    objective=objective, constant=obj.offset, quadratic=quadratic, indicators=indicators)


_CP_LITERAL_LISTS = ("bool_or", "bool_and", "at_most_one", "exactly_one", "bool_xor")


def _proto_has(msg, field: str) -> bool:
    has = getattr(msg, "has_" + field, None)
    if has is not None:
        return bool(has())
    try:
        return msg.HasField(field)
    except (ValueError, AttributeError):
        return False


def _cpsat_formula(model, cap: Capture) -> dict:
    """A CP-SAT model's variables and constraints (the Boolean and linear ones in full)."""
    proto = model.proto if hasattr(model, "proto") else model.Proto()
    variables = [{"name": v.name, "domain": [int(d) for d in v.domain]} for v in proto.variables]
    constraints = []
    for c in proto.constraints:
        entry = {"enforcement": [int(x) for x in c.enforcement_literal]}
        for kind in _CP_LITERAL_LISTS:
            if _proto_has(c, kind):
                entry.update(type=kind, literals=[int(x) for x in getattr(c, kind).literals])
                break
        else:
            if _proto_has(c, "linear"):
                lin = c.linear
                entry.update(type="linear", vars=[int(x) for x in lin.vars],
                             coeffs=[int(x) for x in lin.coeffs], domain=[int(x) for x in lin.domain])
            elif _proto_has(c, "all_diff"):
                exprs = c.all_diff.exprs
                entry.update(type="all_diff", exprs=[
                    {"vars": [int(x) for x in e.vars], "coeffs": [int(x) for x in e.coeffs],
                     "offset": int(e.offset)} for e in exprs])
            else:
                text = str(c).strip().splitlines()
                entry.update(type="unsupported", text=" ".join(text[:3])[:200])
        constraints.append(entry)
    text = str(proto)
    # the proto itself (text format) rides along for consumers other than the equivalence check
    return {"kind": "cpsat", "variables": variables, "constraints": constraints,
            "proto_text": text if len(text) <= MAX_PROTO_TEXT else None}


def _lp_formula(text, cap: Capture) -> dict:
    """The LP text ``pywraplp`` exported at the call, as it is."""
    return {"kind": "lp", "text": text}


FORMULAS = {"cpsat": _cpsat_formula, "lp": _lp_formula}

"""OR-Tools' capture, one library with three solver APIs: CP-SAT (``CpSolver.Solve`` and its
variants: a copy of the model, serialised as a ``cpsat`` formula, and an optimum), the linear
solver wrapper ``pywraplp`` (``Solver.Solve``: the model's LP text as an ``lp`` formula, an optimum
and its MPS export) and MathOpt (``mathopt.solve``: an optimum)."""
from __future__ import annotations

from .core import Capture, argument, is_wrapped, patch, wrap_call
from .optimum import OptimumReader, count, float_text, is_binary, too_large_for_mps

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
    Solver = pywraplp.Solver
    objective_of, variables_of = Solver.Objective, Solver.variables
    num_constraints, export_mps = Solver.NumConstraints, Solver.ExportModelAsMpsFormat

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], Solver)

    def status(opt, args, kwargs, out):
        code = int(out)
        opt["raw_status"], opt["status"] = _LP_STATUS.get(code, (str(code), "other"))
        if code in (0, 1):
            opt["objective"] = float_text(objective_of(args[0]).Value())

    def model(opt, args, kwargs):
        solver = args[0]
        opt["sense"] = "max" if objective_of(solver).maximization() else "min"
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
        text = export_mps(args[0], False, False)  # free format, the model's own names
        if not text:
            raise RuntimeError("OR-Tools exported no MPS text")
        return text

    return OptimumReader("ortools", "linear_solver.Solve", owns, status, model, export)


#: CpSolverStatus values
_CP_STATUS = {0: ("UNKNOWN", "other"), 1: ("MODEL_INVALID", "error"), 2: ("FEASIBLE", "feasible"),
              3: ("INFEASIBLE", "infeasible"), 4: ("OPTIMAL", "optimal")}


def _cpsat_reader(cp_model) -> OptimumReader:
    CpSolver, CpModel = cp_model.CpSolver, cp_model.CpModel
    objective_value = CpSolver.__dict__.get("objective_value")
    objective_value = objective_value.fget if isinstance(objective_value, property) else CpSolver.ObjectiveValue

    def proto_of(args, kwargs):
        model = argument(args, kwargs, 1, "model")
        return model.proto if isinstance(model, CpModel) else None

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

    return OptimumReader("ortools", "CpSolver.Solve", owns, status, model)


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
        if out.has_primal_feasible_solution():
            opt["objective"] = float_text(out.objective_value())

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

    reader = OptimumReader("ortools", "mathopt.solve", owns, status, model)
    wrapped = wrap_call(cap, "ortools", "mathopt.solve", "none", orig, snap, reader)
    for mod in (solve_mod, mathopt):
        if getattr(mod, "solve", None) is orig:
            mod.solve = wrapped


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

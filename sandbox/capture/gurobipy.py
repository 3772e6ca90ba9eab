"""gurobipy's capture: ``Model.optimize``, an optimum read from the model's attributes after
the solve (status, objective, sense, counts) and its MPS written with ``Model.write``. No formula:
an optimisation solve is scored by its optimum (``optimum.py``)."""
from __future__ import annotations

from .core import Capture, patch
from .optimum import OptimumReader, count, float_text, is_binary, too_large_for_mps, write_and_read

#: Gurobi statuses that mean "stopped at a limit": with an incumbent the optimum is ``feasible``
_GRB_LIMITS = frozenset({"ITERATION_LIMIT", "NODE_LIMIT", "TIME_LIMIT", "SOLUTION_LIMIT", "INTERRUPTED",
                         "SUBOPTIMAL", "USER_OBJ_LIMIT", "WORK_LIMIT", "MEM_LIMIT", "LOCALLY_OPTIMAL"})
_GRB_DIRECT = {"OPTIMAL": "optimal", "INFEASIBLE": "infeasible", "UNBOUNDED": "unbounded",
               "INF_OR_UNBD": "inf_or_unbd", "NUMERIC": "error"}


def _gurobi_status(raw: str, incumbent: bool) -> str:
    if raw in _GRB_DIRECT:
        return _GRB_DIRECT[raw]
    if raw in _GRB_LIMITS:
        if incumbent:
            return "feasible"
        return "time_limit" if raw in ("TIME_LIMIT", "WORK_LIMIT") else "other"
    return "other"


def install(cap: Capture) -> None:
    """Wrap ``Model.optimize`` with an optimum reader."""
    import gurobipy

    def snap(self, *args, **kwargs):
        return None

    Model = gurobipy.Model
    get_attr, get_vars, write = Model.getAttr, Model.getVars, Model.write
    names = {getattr(gurobipy.GRB.Status, k): k for k in dir(gurobipy.GRB.Status) if k.isupper()}

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], Model)

    def status(opt, args, kwargs, out):
        m = args[0]
        code = int(get_attr(m, "Status"))
        opt["raw_status"] = raw = names.get(code, str(code))
        incumbent = int(get_attr(m, "SolCount")) > 0
        opt["status"] = _gurobi_status(raw, incumbent)
        if incumbent:
            opt["objective"] = float_text(get_attr(m, "ObjVal"))

    def model(opt, args, kwargs):
        m = args[0]
        opt["sense"] = "max" if int(get_attr(m, "ModelSense")) == -1 else "min"
        opt["num_vars"] = count(get_attr(m, "NumVars"))
        opt["num_constrs"] = count(get_attr(m, "NumConstrs"))
        opt["num_qconstrs"] = count(get_attr(m, "NumQConstrs"))
        opt["num_q_obj_terms"] = count(get_attr(m, "NumQNZs"))
        # indicator, max, and, ... constraints and SOS constraints are all "general" ones
        opt["num_gen_constrs"] = count(int(get_attr(m, "NumGenConstrs")) + int(get_attr(m, "NumSOS")))
        n_int, n_bin = int(get_attr(m, "NumIntVars")), int(get_attr(m, "NumBinVars"))
        if n_int > n_bin:  # Gurobi's NumBinVars counts type B only; an I in [0, 1] is binary too
            vs = get_vars(m)
            for t, lb, ub in zip(get_attr(m, "VType", vs), get_attr(m, "LB", vs), get_attr(m, "UB", vs)):
                if t == "I" and is_binary(lb, ub):
                    n_bin += 1
        opt["num_bin"], opt["num_int"] = count(n_bin), count(n_int - n_bin)

    def export(cap, opt, args, kwargs):
        m = args[0]
        if too_large_for_mps(opt, int(get_attr(m, "NumNZs"))):
            return None
        return write_and_read(cap, lambda path: write(m, path))

    reader = OptimumReader("gurobipy", "Model.optimize", owns, status, model, export)
    patch(cap, Model, "optimize", "gurobipy", "Model.optimize", "none", snap, reader)


FORMULAS: dict = {}

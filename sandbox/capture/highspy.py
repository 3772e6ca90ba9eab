"""highspy's capture: ``Highs.run`` (which ``solve``, ``minimize`` and ``maximize`` go through)
and ``Highs.solve``, an optimum read from the solver after the solve and its MPS written by a
copy of the model (the program's own instance must not change). No formula."""
from __future__ import annotations

from .core import Capture, patch
from .optimum import OptimumReader, count, float_text, is_binary, too_large_for_mps, write_and_read

_HIGHS_DIRECT = {"kOptimal": "optimal", "kInfeasible": "infeasible", "kUnbounded": "unbounded",
                 "kUnboundedOrInfeasible": "inf_or_unbd"}
_HIGHS_ERRORS = frozenset({"kLoadError", "kModelError", "kPresolveError", "kSolveError", "kPostsolveError"})
_HIGHS_LIMITS = frozenset({"kTimeLimit", "kIterationLimit", "kSolutionLimit", "kInterrupt", "kHighsInterrupt",
                           "kMemoryLimit", "kObjectiveBound", "kObjectiveTarget", "kUnknown"})
_HIGHS_FEASIBLE = 2  # kSolutionStatusFeasible: the primal solution is feasible
_HIGHS_INTEGER = frozenset({1, 3})  # kInteger, kSemiInteger


def _highs_status(raw: str, incumbent: bool) -> str:
    if raw in _HIGHS_DIRECT:
        return _HIGHS_DIRECT[raw]
    if raw in _HIGHS_ERRORS:
        return "error"
    if raw in _HIGHS_LIMITS:
        if incumbent:
            return "feasible"
        return "time_limit" if raw == "kTimeLimit" else "other"
    return "other"  # kNotset, kModelEmpty


def install(cap: Capture) -> None:
    """Wrap ``run`` on HiGHS's compiled base class and ``Highs.solve``, with an optimum reader."""
    import highspy

    Highs = highspy.Highs
    # ``run`` lives on the compiled base class (``_Highs``): patching it there catches every way
    # in (``Highs.solve`` calls ``super().run()``, from a helper thread when it handles Ctrl-C,
    # and ``minimize``/``maximize`` call ``solve``); the depth guard keeps solve -> run one call
    base = next(k for k in Highs.__mro__ if "run" in k.__dict__)
    get_status, get_info, get_lp = base.getModelStatus, base.getInfo, base.getLp
    get_model, get_nnz = base.getModel, base.getNumNz
    get_hessian_nnz = getattr(base, "getHessianNumNz", None)

    def snap(self, *args, **kwargs):
        return None

    def owns(args, kwargs):
        return bool(args) and isinstance(args[0], base)

    def status(opt, args, kwargs, out):
        h = args[0]
        st = get_status(h)
        opt["raw_status"] = raw = getattr(st, "name", None) or str(st)
        info = get_info(h)
        incumbent = int(info.primal_solution_status) == _HIGHS_FEASIBLE
        opt["status"] = _highs_status(raw, incumbent)
        if incumbent:
            opt["objective"] = float_text(info.objective_function_value)

    def model(opt, args, kwargs):
        h = args[0]
        lp = get_lp(h)
        opt["sense"] = "max" if int(lp.sense_) == -1 else "min"
        opt["num_vars"], opt["num_constrs"] = count(lp.num_col_), count(lp.num_row_)
        n_int = n_bin = 0
        integrality = list(lp.integrality_)  # empty for an LP
        if integrality:
            for t, lb, ub in zip(integrality, lp.col_lower_, lp.col_upper_):
                if int(t) in _HIGHS_INTEGER:
                    if int(t) == 1 and is_binary(lb, ub):
                        n_bin += 1
                    else:
                        n_int += 1
        opt["num_int"], opt["num_bin"] = n_int, n_bin
        opt["num_qconstrs"] = opt["num_gen_constrs"] = 0  # HiGHS has neither
        if get_hessian_nnz is not None:
            opt["num_q_obj_terms"] = count(get_hessian_nnz(h))
        else:
            opt["num_q_obj_terms"] = count(len(get_model(h).hessian_.index_))

    def export(cap, opt, args, kwargs):
        h = args[0]
        if too_large_for_mps(opt, int(get_nnz(h))):
            return None
        # A copy writes the file: writeModel gives an unnamed model names (c0, r0, ...) and logs
        # to the program's stdout, and the program's own instance must not change.
        copy = base()
        copy.setOptionValue("output_flag", False)
        copy.passModel(get_model(h))
        return write_and_read(cap, lambda path: _highs_write(copy, path))

    reader = OptimumReader("highspy", "Highs.run", owns, status, model, export)
    patch(cap, base, "run", "highspy", "Highs.run", "none", snap, reader)
    patch(cap, Highs, "solve", "highspy", "Highs.solve", "none", snap, reader)


def _highs_write(h, path: str) -> None:
    st = h.writeModel(path)
    if getattr(st, "name", "") == "kError":
        raise RuntimeError("HiGHS could not write the model")


FORMULAS: dict = {}

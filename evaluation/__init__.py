"""Evaluation: ``solvergym eval`` (``runner.py``), its metrics (``metrics.py``: unbiased pass@k,
pass^k, avg@k, maj@k, mean ± std over seeds), agents by spec (``agents.py``) and the report
(``report.py``: Markdown, JSON and a plot, per level).

    from solvergym.evaluation import EvalConfig, run_eval, write_report
    run = run_eval(EvalConfig("SolverSAT-v0", agent="random", instances=200, n_samples=8, ks=[1, 3, 5]), "runs/sat")
    write_report(run)["overall"]["metrics"]["pass@1"]
"""
from .agents import make_agent
from .metrics import avg_at_k, maj_at_k, mean_std, pass_at_k, pass_hat_k, standard_error
from .report import build_report, write_report
from .runner import EvalConfig, load_records, run_eval

__all__ = ["EvalConfig", "run_eval", "load_records", "build_report", "write_report", "make_agent", "pass_at_k",
           "pass_hat_k", "avg_at_k", "maj_at_k", "mean_std", "standard_error"]

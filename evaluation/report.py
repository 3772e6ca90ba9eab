"""The report of an evaluation run, from its records alone: Markdown, JSON and a PNG.

Per evaluation seed, every instance's ``n`` samples give pass@k, pass^k, avg@k and maj@k
(``metrics.py``); a seed's value is the mean over its instances, and the report gives the mean
and standard deviation over seeds (SAT-RL Table 4) and, over instances, the standard error. The
same table is broken down by level: the instance's ``difficulty`` (the env's knobs for it) and,
for a dataset, the file it came from. Every table says n, the seeds, the temperature and the
env's settings it was run with, the temperature being the one the agent sampled at (1.0 for a
model agent given none), not the option's default. Rates beside the metrics: format errors (an
action the env could not parse), episodes out of turns (Gymnasium's ``truncated``: the turn budget
``max_turns`` or a step limit ended them), the clipped ratio (TRL's ``clipped_ratio``: the share of
the agent's completions, one per turn, that the token limit ``max_new_tokens`` cut; over the turns
whose agent said, "-" where none did), and the mean reward and its components.

Estimators, one per column: ``pass@k`` and ``pass^k`` are the unbiased estimators over all n
samples of an instance; ``avg@k`` and ``maj@k`` read its first k samples only (``metrics.py``).
So with n > 1, ``pass@1`` (all n samples) and ``avg@1`` (the first) estimate the same accuracy
from different samples; the report's headers and ``compare``'s say which is which.

Where the instances carry SATURN's difficulty ``D`` (``SolverSAT-v0``), the report fits the
per-level pass@1 against D by least squares (SATURN Fig. 3 / Table 7: accuracy falls linearly in
D) and gives the slope, intercept and R^2.
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..envs.logic_steps.metrics import summarize as summarize_traces
from ..envs.opt.verify import TOLERANCE_RULES
from .agents import spec_temperature
from .metrics import avg_at_k, maj_at_k, mean_std, pass_at_k, pass_hat_k, standard_error, vote_key
from .records import read_records, read_run

__all__ = ["build_report", "write_report", "linear_fit", "compare", "metric_headers", "clipped_ratio", "or_outcome"]


def _key(d: Any) -> str:
    return json.dumps(d, sort_keys=True, default=str)


def _per_instance(records: list[dict]) -> dict[tuple[int, int], list[dict]]:
    by: dict[tuple[int, int], list[dict]] = defaultdict(list)
    for r in records:
        by[(r["seed"], r["instance"])].append(r)
    for rs in by.values():
        rs.sort(key=lambda r: r["sample"])
    return by


def _metrics(groups: dict[tuple[int, int], list[dict]], ks: list[int], seeds: list[int]) -> dict[str, Any]:
    """Mean over instances per seed, then mean ± std over seeds, of every metric at every k."""
    out: dict[str, Any] = {}
    per_seed: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (seed, _), rs in groups.items():
        correct = [bool(r["correct"]) for r in rs]
        n, c = len(correct), sum(correct)
        answers = [vote_key(r["info"].get("answer")) for r in rs]
        for k in ks:
            if k > n:
                continue
            per_seed[f"pass@{k}"][seed].append(pass_at_k(n, c, k))
            per_seed[f"pass^{k}"][seed].append(pass_hat_k(n, c, k))
            per_seed[f"avg@{k}"][seed].append(avg_at_k(correct, k))
            m = maj_at_k(answers, correct, k)
            if m is not None:
                per_seed[f"maj@{k}"][seed].append(m)
    for name, by_seed in per_seed.items():
        means = [sum(v) / len(v) for s, v in sorted(by_seed.items()) if v]
        mean, std = mean_std(means)
        pooled = [x for s in sorted(by_seed) for x in by_seed[s]]
        out[name] = {"mean": mean, "std_over_seeds": std, "se_over_instances": standard_error(pooled),
                     "per_seed": {str(s): sum(v) / len(v) for s, v in sorted(by_seed.items())}, "instances": len(pooled)}
    return out


def _traces(records: list[dict]) -> dict[str, Any] | None:
    """Spring's trace metrics (Table 2, App. B.2: SAT-rate, Parsed/Total, Valid/Parsed, contradictions
    per 100 steps, #Novel, Cell / Person Acc micro-averaged over all cells / characters, the error
    types of Tables 7-8) over all, solved and failed traces, where the env reports them."""
    rows = [r["info"]["metrics"] for r in records if isinstance(r["info"].get("metrics"), dict)]
    return summarize_traces(rows) if rows else None


#: the outcome of an optimisation-modelling answer, in the order it is decided (SIRL Table 13's
#: execution and accuracy, split by why a program earned nothing)
OR_OUTCOMES = ("correct", "no_program", "syntax_error", "timeout", "runtime_error", "no_solve", "infeasible",
               "unbounded", "infeasible_or_unbounded", "wrong_objective")


def or_outcome(r: dict) -> str:
    """Why one ``SolverOR-v0`` answer earned what it did (:data:`OR_OUTCOMES`). The program's
    solver status decides the last ones: ``infeasible``, ``unbounded``, and
    ``infeasible_or_unbounded`` where the solver itself could not tell (Gurobi's INF_OR_UNBD,
    HiGHS's kUnboundedOrInfeasible: presolve's answer); any other status that missed the
    ground truth is a wrong objective."""
    info = r["info"]
    if r["correct"]:
        return "correct"
    box = info.get("sandbox")
    if not isinstance(box, dict):
        return "no_program"
    status = box.get("status")
    if status == "timeout":
        return "timeout"
    if status != "ok":
        tail = box.get("stderr_tail") or ""
        return "syntax_error" if ("SyntaxError" in tail or "IndentationError" in tail) else "runtime_error"
    solved = info.get("solver_status")
    if solved is None:
        return "no_solve"
    if solved in ("infeasible", "unbounded"):
        return solved
    if solved == "inf_or_unbd":
        return "infeasible_or_unbounded"
    return "wrong_objective"


def _or_block(records: list[dict]) -> dict[str, Any] | None:
    if not any("ground_truth" in r["info"] for r in records):
        return None
    n = len(records)
    counts = {k: 0 for k in OR_OUTCOMES}
    for r in records:
        counts[or_outcome(r)] += 1
    executed = sum(1 for r in records if r["components"].get("execution", 0) > 0)
    return {"accuracy": counts["correct"] / n, "execution_rate": executed / n, "outcomes": counts,
            "outcome_rates": {k: v / n for k, v in counts.items()}}


def _tool_block(records: list[dict]) -> dict[str, Any] | None:
    """SAT-RL §4 / Fig. 4: how often the answer, the tool reward and the equivalence reward were
    earned, and which solvers the prompts asked for and the last tool calls actually called."""
    tool = [r for r in records if "tool_calls" in r["info"]]
    if not tool:
        return None
    n = len(tool)
    asked: dict[str, int] = defaultdict(int)
    called: dict[str, int] = defaultdict(int)
    for r in tool:
        asked[r["setting"].get("solver") or "none"] += 1
        last = r["info"].get("last_tool_result") or {}
        for fam in sorted({c[0] for c in last.get("solver_calls") or []}) or ["none"]:
            called[fam] += 1
    return {"correct_rate": sum(r["correct"] for r in tool) / n,
            "tool_rate": sum(r["components"].get("tool", 0) > 0 for r in tool) / n,
            "equivalence_rate": sum(r["components"].get("equivalence", 0) > 0 for r in tool) / n,
            "mean_tool_calls": sum(r["info"]["tool_calls"] for r in tool) / n,
            "solver_asked": dict(sorted(asked.items())), "solver_called": dict(sorted(called.items()))}


def _tolerance(records: list[dict], meta: dict) -> str | None:
    """The OR objective tolerance the records were scored with (their setting), with its rule."""
    names = sorted({r.get("setting", {}).get("tolerance") for r in records} - {None})
    if not names and "tolerance" in meta["env_kwargs"]:  # records without it: the run's own setting
        names = [meta["env_kwargs"]["tolerance"]]
    return ", ".join(f"{t} ({TOLERANCE_RULES.get(t, '?')})" for t in names) or None


def _family_blocks(records: list[dict]) -> dict[str, Any]:
    out = {}
    for name, fn in (("traces", _traces), ("or", _or_block), ("tool", _tool_block)):
        block = fn(records)
        if block is not None:
            out[name] = block
    return out


def clipped_ratio(records: list[dict]) -> tuple[float | None, int]:
    """TRL's ``clipped_ratio``: the share of the agent's completions (one per turn) that the token
    limit cut, over the turns whose agent said (``clipped`` True or False), and how many those
    were; ``(None, 0)`` where none did (records older than the flag, a user's agent returning
    strings)."""
    flags = [c for r in records for c in r.get("clipped") or () if c is not None]
    return (sum(flags) / len(flags) if flags else None), len(flags)


def _rates(records: list[dict]) -> dict[str, Any]:
    n = len(records)
    comps: dict[str, float] = defaultdict(float)
    for r in records:
        for k, v in r["components"].items():
            comps[k] += v
    clipped, known = clipped_ratio(records)
    return {"episodes": n, "accuracy": sum(r["correct"] for r in records) / n,
            "format_error_rate": sum(r["format_error"] for r in records) / n,
            # Gymnasium's truncated: the episode ran out of turns (max_turns) or hit a step limit
            "truncation_rate": sum(r["truncated"] for r in records) / n,
            "clipped_ratio": clipped, "clipped_turns_known": known,
            "mean_reward": sum(r["reward"] for r in records) / n,
            "mean_turns": sum(r["turns"] for r in records) / n,
            "components": {k: v / n for k, v in sorted(comps.items())}}


def linear_fit(xs: list[float], ys: list[float]) -> dict[str, float] | None:
    """Least-squares ``y = slope * x + intercept`` and R^2 (``None`` for fewer than two distinct x)."""
    if len(xs) < 2 or len(set(xs)) < 2:
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    slope = sxy / sxx
    intercept = my - slope * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (slope * x + intercept)) ** 2 for x, y in zip(xs, ys))
    return {"slope": slope, "intercept": intercept, "r2": 1.0 - ss_res / ss_tot if ss_tot > 0 else 1.0}


#: difficulty keys that describe one instance rather than a level (SolverOR-v0's model sizes)
INSTANCE_STATISTICS = ("num_vars", "num_constrs")


def _level_of(r: dict, by: list[str] | None) -> str:
    diff = dict(r["difficulty"] or {}) if isinstance(r["difficulty"], dict) else {"difficulty": r["difficulty"]}
    diff = {k: v for k, v in diff.items() if (k in by if by is not None else k not in INSTANCE_STATISTICS)}
    if r["source"]:
        diff["source"] = r["source"]
    return _key(diff)


def _temperature(run: dict[str, Any]) -> float | None:
    """The temperature the agent sampled at: as ``run.json`` recorded it from the agent, or, for a
    run written before that, what the spec makes of ``--temperature`` (``spec_temperature``)."""
    if "agent_temperature" in run:
        return run["agent_temperature"]
    return spec_temperature(run["config"]["agent"], run["config"]["temperature"])


def _temperature_text(rep: dict[str, Any]) -> str:
    t = rep["temperature"]
    if t is None:
        kind = str(rep["agent"]).partition(":")[0]
        return ("no sampling temperature (a scripted agent)" if kind in ("oracle", "random", "cdcl")
                else "temperature not known (the agent's own sampling)")
    return "temperature 0 (greedy)" if t == 0 else f"temperature {float(t)}"


def build_report(run_dir: str | Path, by: list[str] | None = None) -> dict[str, Any]:
    """Everything the report says, as JSON-ready data. Levels group instances by their
    ``difficulty`` (every key but :data:`INSTANCE_STATISTICS`, or the keys ``by`` names) and the
    dataset file they came from. Every record is checked against ``run.json`` first
    (:func:`~solvergym.evaluation.records.read_records`); exact repeats count once and are
    counted in ``duplicate_records``."""
    run_dir = Path(run_dir)
    run = read_run(run_dir)
    if run is None:
        raise ValueError(f"{run_dir} has no run.json: not a run directory of solvergym eval")
    meta = run["config"]
    records, repeats = read_records(run_dir)
    if not records:
        raise ValueError(f"{run_dir} has no records yet")
    ks, seeds = meta["ks"], meta["seeds"]
    groups = _per_instance(records)
    report: dict[str, Any] = {
        "env_id": meta["env_id"], "env_kwargs": meta["env_kwargs"], "agent": meta["agent"],
        "dataset": meta["dataset"], "n_samples": meta["n_samples"], "seeds": seeds, "ks": ks,
        "temperature": _temperature(run), "temperature_requested": meta["temperature"],
        "instances": len({i for _, i in groups}),
        "tolerance": _tolerance(records, meta), "duplicate_records": repeats,
        "overall": {**_rates(records), "metrics": _metrics(groups, ks, seeds)},
    }
    report["overall"].update(_family_blocks(records))
    levels: dict[str, dict] = {}
    for (seed, i), rs in groups.items():
        r0 = rs[0]
        label = _level_of(r0, by)
        lv = levels.setdefault(label, {"groups": {}, "records": [], "D": []})
        lv["groups"][(seed, i)] = rs
        lv["records"] += rs
        if "D" in r0["level"]:
            lv["D"].append(r0["level"]["D"])
    report["levels"] = []
    for label, lv in sorted(levels.items()):
        row = {"level": json.loads(label), "instances": len({i for _, i in lv["groups"]}), **_rates(lv["records"]),
               "metrics": _metrics(lv["groups"], ks, seeds)}
        if lv["D"]:
            row["D"] = sum(lv["D"]) / len(lv["D"])
        row.update(_family_blocks(lv["records"]))
        report["levels"].append(row)
    grid = heatmap(report["levels"])
    if grid is not None:
        report["heatmap"] = grid
    with_d = [row for row in report["levels"] if "D" in row]
    if len(with_d) >= 2:
        report["accuracy_vs_D"] = linear_fit([row["D"] for row in with_d],
                                             [row["metrics"]["pass@1"]["mean"] for row in with_d])
    return report


def heatmap(levels: list[dict]) -> dict[str, Any] | None:
    """pass@1 over two difficulty knobs, when exactly two numeric knobs vary across the levels
    (Zebra's houses x attributes): ``{"x", "y", "xs", "ys", "pass@1"}``, rows by ``ys``, ``None``
    for a cell no level has; levels that differ only in other keys are pooled over instances."""
    numeric = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)  # noqa: E731
    keys = sorted({k for lv in levels for k, v in lv["level"].items() if numeric(v)})
    varying = [k for k in keys if len({lv["level"].get(k) for lv in levels}) > 1]
    if len(varying) != 2 or not all(all(numeric(lv["level"].get(k)) for k in varying) for lv in levels):
        return None
    x, y = varying
    cells: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0.0])
    for lv in levels:
        c = cells[(lv["level"][x], lv["level"][y])]
        c[0] += lv["metrics"]["pass@1"]["mean"] * lv["instances"]
        c[1] += lv["instances"]
    xs, ys = sorted({a for a, _ in cells}), sorted({b for _, b in cells})
    grid = [[cells[(a, b)][0] / cells[(a, b)][1] if (a, b) in cells else None for a in xs] for b in ys]
    return {"x": x, "y": y, "xs": xs, "ys": ys, "pass@1": grid}


def _fmt(m: dict | None) -> str:
    if m is None:
        return "-"
    s = f"{m['mean']:.3f}"
    if len(m["per_seed"]) > 1:
        s += f" ± {m['std_over_seeds']:.3f}"
    return s


def _level_text(level: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in level.items()) or "all"


def to_markdown(rep: dict[str, Any]) -> str:
    ks = rep["ks"]
    names = [f"pass@{k}" for k in ks] + [f"avg@{ks[-1]}", f"maj@{ks[-1]}", f"pass^{ks[-1]}"]
    lines = [f"# {rep['env_id']} / {rep['agent']}", "",
             f"n = {rep['n_samples']} samples per instance, {rep['instances']} instances, seeds {rep['seeds']}, "
             + _temperature_text(rep)
             + (f", dataset {rep['dataset']}" if rep["dataset"] else "")
             + (f", env settings {json.dumps(rep['env_kwargs'], sort_keys=True)}" if rep["env_kwargs"] else ""),
             "", "Values: mean over instances" + (" (± std over seeds)" if len(rep["seeds"]) > 1 else "")
             + f"; pass@k and pass^k: unbiased estimators over the n = {rep['n_samples']} samples; "
             f"avg@{ks[-1]} and maj@{ks[-1]}: the {_first(ks[-1])}. Out of turns: episodes the turn "
             "budget ended (Gymnasium's truncated); clipped: completions the token limit cut (TRL's "
             "clipped_ratio; - where the agent did not say).", ""]
    header = ["level", "instances"] + names + ["format err", "out of turns", "clipped", "reward"]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def row(label, block, instances):
        m = block["metrics"]
        cells = [label, str(instances)] + [_fmt(m.get(n)) for n in names] + [
            f"{block['format_error_rate']:.1%}", f"{block['truncation_rate']:.1%}",
            "-" if block["clipped_ratio"] is None else f"{block['clipped_ratio']:.1%}", f"{block['mean_reward']:.3f}"]
        lines.append("| " + " | ".join(cells) + " |")

    row("**all**", rep["overall"], rep["instances"])
    for lv in rep["levels"]:
        label = _level_text(lv["level"]) + (f" (D={lv['D']:.2f})" if "D" in lv else "")
        row(label, lv, lv["instances"])
    fit = rep.get("accuracy_vs_D")
    if fit:
        lines += ["", f"pass@1 vs D (least squares over levels): slope {fit['slope']:.4f}, intercept "
                      f"{fit['intercept']:.3f}, R² {fit['r2']:.3f}"]
    if "traces" in rep["overall"]:
        cols = [("sat_rate", "SAT-rate", "{:.1%}"), ("parsed_per_total", "Parsed/Total", "{:.1%}"),
                ("valid_per_parsed", "Valid/Parsed", "{:.1%}"), ("contradictions_per_100", "Contra./100", "{:.2f}"),
                ("novel", "#Novel", "{:.2f}"), ("cell_acc", "Cell Acc", "{:.1%}"),
                ("person_acc", "Person Acc", "{:.1%}"), ("puzzle_acc", "Puzzle Acc", "{:.1%}"), ("acc", "Acc", "{:.1%}")]
        present = [c for c in cols if any(c[0] in b["traces"][g] for b in [rep["overall"], *rep["levels"]]
                                          if "traces" in b for g in ("all",))]
        lines += ["", "Trace metrics (Spring Table 2, App. B.2; Cell / Person Acc micro-averaged):", "",
                  "| level | traces | " + " | ".join(c[1] for c in present) + " |", "|" + "---|" * (len(present) + 2)]
        for label, block in [("**all**", rep["overall"])] + [(_level_text(lv["level"]), lv) for lv in rep["levels"]]:
            for group in ("all", "solved", "failed"):
                t = block["traces"][group]
                if not t["n"] or (group != "all" and label != "**all**"):
                    continue
                cells = [f"{label} ({group})" if group != "all" else label, str(t["n"])]
                cells += [c[2].format(t[c[0]]) if t.get(c[0]) is not None else "-" for c in present]
                lines.append("| " + " | ".join(cells) + " |")
        types = rep["overall"]["traces"]["all"].get("error_types") or {}
        lines += ["", "Error types (Tables 7-8): " + ", ".join(f"{k} {v}" for k, v in sorted(types.items()))]
    if "or" in rep["overall"]:
        tol = rep.get("tolerance") or "not recorded"
        lines += ["", f"Optimisation modelling (objective tolerance: {tol}):", "",
                  f"| level | accuracy ({tol.split(' ')[0]}) | execution | " + " | ".join(OR_OUTCOMES[1:]) + " |",
                  "|" + "---|" * (len(OR_OUTCOMES) + 2)]
        for label, block in [("**all**", rep["overall"])] + [(_level_text(lv["level"]), lv) for lv in rep["levels"]]:
            o = block["or"]
            lines.append("| " + " | ".join([label, f"{o['accuracy']:.1%}", f"{o['execution_rate']:.1%}"]
                                           + [str(o["outcomes"][k]) for k in OR_OUTCOMES[1:]]) + " |")
    if "tool" in rep["overall"]:
        t = rep["overall"]["tool"]
        lines += ["", f"Tool use (SAT-RL §4): correct {t['correct_rate']:.1%}, tool reward {t['tool_rate']:.1%}, "
                      f"equivalence {t['equivalence_rate']:.1%}, {t['mean_tool_calls']:.2f} tool calls per episode; "
                      "solver asked for: " + ", ".join(f"{k} {v}" for k, v in t["solver_asked"].items())
                  + "; solver the last call used: " + ", ".join(f"{k} {v}" for k, v in t["solver_called"].items())]
    grid = rep.get("heatmap")
    if grid:
        lines += ["", f"pass@1 by {grid['y']} (rows) and {grid['x']} (columns):", "",
                  f"| {grid['y']} \\ {grid['x']} | " + " | ".join(map(str, grid["xs"])) + " |",
                  "|" + "---|" * (len(grid["xs"]) + 1)]
        for b, row in zip(grid["ys"], grid["pass@1"]):
            lines.append(f"| {b} | " + " | ".join("-" if v is None else f"{v:.3f}" for v in row) + " |")
    if rep.get("duplicate_records"):
        lines += ["", f"{rep['duplicate_records']} exact repeats of records were counted once."]
    comps = rep["overall"]["components"]
    if comps:
        lines += ["", "Mean reward components: " + ", ".join(f"{k} {v:.3f}" for k, v in comps.items())]
    return "\n".join(lines) + "\n"


def plot(rep: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = rep.get("heatmap")
    fig, axes = plt.subplots(1, 3 if grid else 2, figsize=(14.5 if grid else 10, 3.8))
    ks = rep["ks"]
    m = rep["overall"]["metrics"]
    for name, style in (("pass@", "o-"), ("pass^", "s--")):
        ys = [m[f"{name}{k}"]["mean"] for k in ks]
        err = [m[f"{name}{k}"]["std_over_seeds"] for k in ks]
        axes[0].errorbar(ks, ys, yerr=err, fmt=style, capsize=3, label=f"{name}k")
    axes[0].set_xlabel("k")
    axes[0].set_ylabel("mean over instances")
    axes[0].set_ylim(-0.02, 1.02)
    axes[0].set_title(f"{rep['env_id']} / {rep['agent']} (n={rep['n_samples']})", fontsize=9)
    axes[0].legend(fontsize=8)
    levels = rep["levels"]
    with_d = [lv for lv in levels if "D" in lv]
    if with_d:
        xs = [lv["D"] for lv in with_d]
        ys = [lv["metrics"]["pass@1"]["mean"] for lv in with_d]
        axes[1].plot(xs, ys, "o", label="levels")
        fit = rep.get("accuracy_vs_D")
        if fit:
            lo, hi = min(xs), max(xs)
            axes[1].plot([lo, hi], [fit["slope"] * lo + fit["intercept"], fit["slope"] * hi + fit["intercept"]],
                         "-", label=f"fit, R²={fit['r2']:.2f}")
        axes[1].set_xlabel("D(n, k, l)")
        axes[1].legend(fontsize=8)
    else:
        labels = [_level_text(lv["level"])[:28] for lv in levels]
        axes[1].barh(range(len(levels)), [lv["metrics"]["pass@1"]["mean"] for lv in levels])
        axes[1].set_yticks(range(len(levels)), labels, fontsize=7)
        axes[1].set_xlim(0, 1)
        axes[1].set_xlabel("pass@1")
    axes[1].set_title("pass@1 by level", fontsize=9)
    if grid:
        values = [[float("nan") if v is None else v for v in row] for row in grid["pass@1"]]
        im = axes[2].imshow(values, origin="lower", vmin=0.0, vmax=1.0, cmap="viridis", aspect="auto")
        axes[2].set_xticks(range(len(grid["xs"])), [str(v) for v in grid["xs"]])
        axes[2].set_yticks(range(len(grid["ys"])), [str(v) for v in grid["ys"]])
        for r, row in enumerate(grid["pass@1"]):
            for c, v in enumerate(row):
                if v is not None:
                    axes[2].text(c, r, f"{v:.2f}", ha="center", va="center", fontsize=7,
                                 color="white" if v < 0.6 else "black")
        axes[2].set_xlabel(grid["x"])
        axes[2].set_ylabel(grid["y"])
        axes[2].set_title("pass@1", fontsize=9)
        fig.colorbar(im, ax=axes[2])
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_report(run_dir: str | Path, *, png: bool = True, by: list[str] | None = None) -> dict[str, Any]:
    """Write ``report.json``, ``report.md`` (and ``report.png``) into the run directory."""
    run_dir = Path(run_dir)
    rep = build_report(run_dir, by)
    (run_dir / "report.json").write_text(json.dumps(rep, indent=2, sort_keys=True, default=str) + "\n")
    (run_dir / "report.md").write_text(to_markdown(rep))
    if png:
        plot(rep, run_dir / "report.png")
    return rep



def _first(k: int) -> str:
    return "first sample" if k == 1 else f"first {k} samples"


def metric_headers(ks: list[int], ns: list[int]) -> dict[str, str]:
    """``compare``'s metric columns, each one estimator: metric name -> its header, e.g.
    ``"pass@1" -> "pass@1 (unbiased, n=4)"`` (``n=4/8`` when the runs' n differ) and
    ``"avg@1" -> "avg@1 (first sample)"``."""
    n_text = "n=" + "/".join(map(str, ns))
    k = ks[-1]
    first = _first(k)
    return {**{f"pass@{j}": f"pass@{j} (unbiased, {n_text})" for j in ks}, f"avg@{k}": f"avg@{k} ({first})",
            f"pass^{k}": f"pass^{k} (unbiased, {n_text})"}


def compare(run_dirs: list[str | Path], out: str | Path | None = None) -> tuple[str, dict[str, Any]]:
    """Several runs side by side (``solvergym eval compare``): one row per run with its env,
    agent, n, seeds, temperature and every metric the runs share at their common ks; a bar chart
    of pass@1 (± std over seeds) per run when ``out`` is given (``out``/compare.md, .json, .png).

    Each metric column is one estimator, named in its header (:func:`metric_headers`): pass@k
    and pass^k unbiased over all of a run's n samples, avg@K over its first K samples only, so
    that pass@1 and avg@1 side by side read as what they are (the same accuracy estimated from n
    samples and from one)."""
    reports = [build_report(d) for d in run_dirs]
    ks = sorted(set.intersection(*(set(r["ks"]) for r in reports)))
    if not ks:
        raise ValueError("the runs share no k")
    columns = metric_headers(ks, sorted({r["n_samples"] for r in reports}))
    names = list(columns)
    header = (["run", "env", "agent", "n", "seeds", "temperature", "instances"] + [columns[x] for x in names]
              + ["format err", "out of turns", "clipped", "reward"])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    rows = []
    for d, r in zip(run_dirs, reports):
        m, o = r["overall"]["metrics"], r["overall"]
        t = r["temperature"]
        lines.append("| " + " | ".join([Path(d).name, r["env_id"], r["agent"], str(r["n_samples"]), str(r["seeds"]),
                                        "-" if t is None else str(float(t)), str(r["instances"])]
                                       + [_fmt(m.get(x)) for x in names]
                                       + [f"{o['format_error_rate']:.1%}", f"{o['truncation_rate']:.1%}",
                                          "-" if o["clipped_ratio"] is None else f"{o['clipped_ratio']:.1%}",
                                          f"{o['mean_reward']:.3f}"]) + " |")
        rows.append({"run": str(d), "env_id": r["env_id"], "agent": r["agent"], "n_samples": r["n_samples"],
                     "seeds": r["seeds"], "temperature": t, "metrics": {x: m.get(x) for x in names},
                     "truncation_rate": o["truncation_rate"], "clipped_ratio": o["clipped_ratio"]})
    lines += ["", "pass@k, pass^k: unbiased estimators over all n samples of each instance; avg@k: the mean "
                  "correctness of its first k samples. Out of turns: episodes the turn budget ended; clipped: "
                  "completions the token limit cut (- where the agent did not say)."]
    text = "\n".join(lines) + "\n"
    data = {"ks": ks, "columns": columns, "runs": rows}
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.md").write_text(text)
        (out / "compare.json").write_text(json.dumps(data, indent=2, default=str) + "\n")
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(max(4.0, 1.2 * len(rows)), 3.6))
        p1 = [row["metrics"][f"pass@{ks[0]}"] for row in rows]
        ax.bar(range(len(rows)), [p["mean"] for p in p1], yerr=[p["std_over_seeds"] for p in p1], capsize=4)
        ax.set_xticks(range(len(rows)), [f"{Path(row['run']).name}\n{row['agent']}" for row in rows], fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"pass@{ks[0]}")
        fig.tight_layout()
        fig.savefig(out / "compare.png", dpi=110)
        plt.close(fig)
    return text, data

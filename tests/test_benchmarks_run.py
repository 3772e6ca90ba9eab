"""The benchmark scripts stay runnable: ``make bench`` runs every speed benchmark at its quick
size (one summary table of targets) and every ``benchmarks/*.py`` answers ``--help``. Nothing else runs them in the suite, which is how
``make bench`` broke unnoticed (issue 22: ``sat_generation.py`` called a removed env method)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the speed benchmarks make bench runs (benchmarks/bench.py's BENCHMARKS)
BENCHMARKS = {"sandbox", "sat_generation", "logic_generation", "logic_suite", "adapters", "step_verify",
              "eval_throughput", "train_speed", "env_share"}
FAST = BENCHMARKS - {"eval_throughput", "train_speed"}


def test_make_bench_names_every_speed_benchmark():
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import bench
    finally:
        sys.path.pop(0)
    assert {b.name for b in bench.BENCHMARKS} == BENCHMARKS
    assert all((ROOT / "benchmarks" / f"{name}.py").exists() for name in BENCHMARKS)
#: benchmarks/ holds scripts only (the product never imports it)
LIBRARY = {"__init__.py"}
SCRIPTS = sorted(p.name for p in (ROOT / "benchmarks").glob("*.py") if p.name not in LIBRARY)


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_answers_help(script):
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--help"], capture_output=True,
                         text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.startswith("usage:"), out.stdout[:200]


def test_make_bench_runs(tmp_path):
    # the venv this suite runs in; its install stamp is not remade (-o): this checks the target, not pip
    bin_dir = Path(sys.executable).parent
    # the quick sizes of the benchmarks that take seconds; eval_throughput and train_speed load the
    # model several times (about 5 min together at their quick sizes): `make bench` runs them
    out = subprocess.run(["make", "-o", ".venv/.solvergym-installed", "bench", f"BIN={bin_dir}",
                          f"BENCH_ARGS=--quick --only {','.join(sorted(FAST))} --out {tmp_path}"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    result = json.loads((tmp_path / "sat_generation.json").read_text())
    rates = {r["what"]: r["per_s"] for r in result["rates"]}
    assert rates["SolverSAT-v0 reset+step"] > 0 and rates["SolverSATBench-v0 reset+step"] > 0
    assert result["saturn_2_6k_build"]["seconds"] > 0
    # every speed benchmark ran at its quick size and its targets are in the one table
    summary = json.loads((tmp_path / "bench_summary.json").read_text())
    from_benchmarks = {r["benchmark"] for r in summary["rows"]}
    assert from_benchmarks == set(summary["seconds"]) == FAST, from_benchmarks
    assert not [r for r in summary["rows"] if r["measure"].startswith("FAILED")]
    assert {r["holds"] for r in summary["rows"]} <= {"yes", "NO", "-"}
    assert any(r["holds"] in ("yes", "NO") for r in summary["rows"])

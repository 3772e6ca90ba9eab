"""The benchmark scripts stay runnable: ``make bench`` runs (its quick size) and every
``benchmarks/*.py`` answers ``--help``. Nothing else runs them in the suite, which is how
``make bench`` broke unnoticed (issue 22: ``sat_generation.py`` called a removed env method)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
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
    out = subprocess.run(["make", "-o", ".venv/.solvergym-installed", "bench", f"BIN={bin_dir}",
                          f"BENCH_ARGS=--quick --out {tmp_path}"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    result = json.loads((tmp_path / "sat_generation.json").read_text())
    rates = {r["what"]: r["per_s"] for r in result["rates"]}
    assert rates["SolverSAT-v0 reset+step"] > 0 and rates["SolverSATBench-v0 reset+step"] > 0
    assert result["saturn_2_6k_build"]["seconds"] > 0

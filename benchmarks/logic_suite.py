"""Synthetic-Logic: instances per second per (family, query), ground truth included, against
reasoning-gym's generators of the families both suites have; and cross-solver agreement.

    python benchmarks/logic_suite.py [--count 100] [--repeat 2] [--agreement-seeds 50] [--quick]
        [--out benchmarks/results]

1. Rates: ``env.reset(seed)`` of ``SolverLogic-v0`` for ``count`` seeds (a reset draws the
   instance, plants or rejects it to its label and solves it in process: decision, witness or
   exact count), best of ``repeat``, per (family, query) at the family's default knobs.
2. Peers: where ``reasoning_gym`` is importable (the ``compare`` extra), its dataset items per
   second at the setting it shares with a family (graph colouring, N-queens, 4x4 sudoku,
   futoshiki), and ours at the same setting in the same run; the ratio is ours / theirs (target
   >= 10x). reasoning-gym's items carry one solution and no label or count. Beside them, the
   floor: ``env.reset(seed)`` of an env that only seeds Gymnasium's generator and returns an
   empty observation, through ``gym.make``'s wrappers as ours; a target under the floor's time per
   instance cannot be met by any env of this API (``10x needs`` gives the time per instance 10x
   means).
3. Agreement (``--agreement-seeds``, 0 to skip): every fitting solver's ground-truth program run
   in the sandbox on that many seeds per (family, query); the share of runs that answered as the
   in-process truth (solving: a model, whose witness passes the family's verifier), and the pairs
   of solvers that ever disagreed.

Prints the tables and writes ``logic_suite.json``.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import gymnasium as gym
from tqdm import tqdm

from solvergym.benchmarks.logic_generation import rate
from solvergym.envs.logic import FAMILIES, QUERIES
from solvergym.envs.logic.family import family_class
from solvergym.envs.logic.programs import logic_program, read_output
from solvergym.evaluation.tables import format_table
from solvergym.sandbox import SandboxPool

#: (family, our knobs, reasoning-gym dataset, its config): the settings both generate
PEERS = (
    ("graph-coloring", {"n": 10, "k": 3, "p": 0.1}, "graph_color",
     {"num_colors": 3, "min_num_vertices": 10, "max_num_vertices": 10, "edge_probability": 0.1}),
    ("n-queens", {"n": 8, "pre": 4}, "n_queens", {"n": 8, "min_remove": 4, "max_remove": 4}),
    ("sudoku", {"n": 2, "given": 6}, "mini_sudoku", {"min_empty": 10, "max_empty": 10}),
    ("futoshiki", {"n": 4}, "futoshiki", {"min_board_size": 4, "max_board_size": 4, "min_difficulty": 0,
                                          "max_difficulty": 0}),
)


EMPTY = "solvergym-bench/Empty-v0"


class _Empty(gym.Env):
    """The least a seeded text env's ``reset`` does: seed its generator, return a string."""

    observation_space = gym.spaces.Text(max_length=1, min_length=0)
    action_space = gym.spaces.Text(max_length=1, min_length=0)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return "", {}

    def step(self, action):
        return "", 0.0, True, False, {}


def floor(count: int, repeat: int) -> float:
    """Resets per second of :class:`_Empty` made by ``gym.make`` (the wrappers every env gets)."""
    if EMPTY not in gym.registry:
        gym.register(EMPTY, entry_point=_Empty)
    env = gym.make(EMPTY)
    return rate(lambda: [env.reset(seed=s) for s in range(count)], count, repeat)


def ours(family: str, query: str, count: int, repeat: int, **knobs) -> float:
    env = gym.make("SolverLogic-v0", family=family, query=query, **knobs)
    return rate(lambda: [env.reset(seed=s) for s in range(count)], count, repeat)


def rates(count: int, repeat: int) -> list[dict]:
    rows = []
    for family in tqdm(FAMILIES, desc="rates", unit="family"):
        row = {"family": family, "category": FAMILIES[family][1]}
        for query in QUERIES:
            row[query] = ours(family, query, count, repeat)
        rows.append(row)
    return rows


def peers(count: int, repeat: int) -> list[dict]:
    try:
        import reasoning_gym
    except ImportError:
        return []
    rows = []
    for family, knobs, name, config in PEERS:
        def theirs():
            ds = reasoning_gym.create_dataset(name, size=count, seed=0, **config)
            for i in range(count):
                ds[i]

        mine = ours(family, "solving", count, repeat, **knobs)
        other = rate(theirs, count, repeat)
        rows.append({"family": family, "ours": mine, "peer": f"reasoning-gym {name}", "theirs": other,
                     "ratio": mine / other, "setting": json.dumps(knobs), "needs_us": 1e6 / (10 * other)})
    return rows


def agreement(seeds: int) -> tuple[list[dict], int]:
    jobs = []
    for family in FAMILIES:
        cls = family_class(family)
        for query in QUERIES:
            env = gym.make("SolverLogic-v0", family=family, query=query)
            for seed in range(seeds):
                env.reset(seed=seed)
                inst = env.unwrapped.instance
                model = cls.encode(inst.data)
                truth = {"count": inst.count} if query == "counting" else {"sat": inst.satisfiable}
                if query == "solving":  # and the witness it printed passes the family's verifier
                    truth["witness_ok"] = True
                jobs += [(family, query, seed, s, logic_program(s, model, query), truth, inst.data) for s in cls.solvers]
    rows: dict[tuple[str, str], dict] = {}
    answers: dict[tuple, dict] = {}
    with SandboxPool() as pool, ThreadPoolExecutor(pool.size) as ex:
        problems = {f: family_class(f)(query="solving") for f in FAMILIES}

        def run(job):
            family, query, seed, solver, program, truth, data = job
            r = pool.run(program)
            out = read_output(r.stdout, query) if r.ok else None
            if out is not None and query == "solving":
                found = problems[family].witness_from_true(data, set(out.get("true", [])))
                out = {"sat": out["sat"], "witness_ok": problems[family].check_witness(data, found) is None}
            return job, r.status, out

        for (family, query, seed, solver, _, truth, _), status, out in tqdm(ex.map(run, jobs), total=len(jobs),
                                                                         desc="agreement", unit="run"):
            row = rows.setdefault((family, query), {"family": family, "query": query, "runs": 0, "agree": 0,
                                                    "timeouts": 0, "disagreeing_pairs": set()})
            row["runs"] += 1
            row["agree"] += out == truth
            row["timeouts"] += status == "timeout"
            answers[(family, query, seed, solver)] = out
    for (family, query, seed, solver), out in answers.items():
        for other in family_class(family).solvers:
            if other > solver and answers.get((family, query, seed, other)) not in (None, out) and out is not None:
                rows[family, query]["disagreeing_pairs"].add(f"{solver}/{other}")
    out = []
    for row in rows.values():
        out.append({**row, "share": row["agree"] / row["runs"],
                    "disagreeing_pairs": ", ".join(sorted(row["disagreeing_pairs"])) or "-"})
    return out, len(jobs)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=100, help="instances per rate")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--agreement-seeds", type=int, default=50, help="seeds per (family, query); 0: skip")
    p.add_argument("--quick", action="store_true", help="count 20, agreement 3 seeds")
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    a = p.parse_args(argv)
    count, seeds = (20, 3) if a.quick else (a.count, a.agreement_seeds)
    result = {"machine": platform.platform(), "python": platform.python_version(), "count": count, "repeat": a.repeat}
    result["rates"] = rates(count, a.repeat)
    print(format_table(result["rates"], [("family", "family", "s"), ("category", "category", "s"),
                                         *((q, f"{q} /s", ".0f") for q in QUERIES)]))
    result["peers"] = peers(count, a.repeat)
    if result["peers"]:
        print(format_table(result["peers"], [("family", "family", "s"), ("setting", "setting", "s"),
                                             ("ours", "ours /s", ".0f"), ("peer", "peer", "s"),
                                             ("theirs", "theirs /s", ".0f"), ("ratio", "ours / theirs", ".1f"),
                                             ("needs_us", "10x needs us/instance", ".1f")]))
        result["floor_per_s"] = floor(max(count, 1000), a.repeat)
        print(f"floor: an empty env's seeded reset through gym.make, {result['floor_per_s']:,.0f}/s = "
              f"{1e6 / result['floor_per_s']:.1f} us per instance")
    else:
        print("reasoning_gym is not installed (the compare extra): no peer rates")
    if seeds:
        result["agreement"], result["agreement_runs"] = agreement(seeds)
        print(format_table(result["agreement"], [("family", "family", "s"), ("query", "query", "s"),
                                                 ("runs", "runs", "d"), ("share", "as the truth", ".3f"),
                                                 ("timeouts", "timeouts", "d"),
                                                 ("disagreeing_pairs", "solver pairs that disagreed", "s")]))
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "logic_suite.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    print(f"wrote {a.out / 'logic_suite.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

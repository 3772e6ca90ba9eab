"""What a policy that never reads the problem earns, per Synthetic-Logic family, query and level.

    python benchmarks/blind_baselines.py [--families clique,tsp] [--queries decision,counting]
                                         [--seeds 400] [--quick] [--out benchmarks/results]

For every family at its default knobs and every dataset level (``levels``), on the instances the
env draws for seeds ``0..seeds-1`` (decision: ``4 x seeds``), two measurements
(:mod:`solvergym.evaluation.blind`), as ``tests/test_blind_policies.py`` makes them:

- decision: the held-out accuracy of a threshold on one counted quantity of the prompt and of a
  ridge classifier over those quantities and its bag of words (in each block of ``2 x seeds``
  prompts fitted on one half, scored on the other, both ways; two blocks), against the majority
  class. The issue's bar: within 0.05 of it.
- every query: the best constant answer (the most rewarding answer text given to every instance,
  picked on one half of the seeds and scored on the other, both ways), its share of right answers
  and mean reward, against the chance line (a uniform guess's mean
  reward) and abstaining (```` ```idk``` ````). The bar: no more than the chance line, less than
  abstaining.

Prints one table per query and writes ``blind_baselines.json`` (``--out``). ``--quick``: 100
seeds, the default knobs only.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

try:
    import solvergym  # noqa: F401
except ImportError:  # run from a checkout without installing: the root is the package
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from solvergym.envs.logic import FAMILIES, QUERIES
from solvergym.envs.logic.family import family_class
from solvergym.evaluation.blind import constant_baseline, draw, label_predictability
from solvergym.evaluation.tables import format_table


def measure(family: str, query: str, knobs, seeds: int) -> dict:
    problem = family_class(family)(query=query)
    t = time.perf_counter()
    instances = draw(problem, knobs, range(4 * seeds if query == "decision" else seeds))
    row = {"family": family, "query": query, "knobs": knobs.as_dict(), "generate_s": time.perf_counter() - t}
    if query == "decision":
        row.update(label_predictability([problem.prompt(i) for i in instances], [i.satisfiable for i in instances],
                                        block=2 * seeds).as_dict())
        instances = instances[:seeds]
    row.update({f"constant_{k}": v for k, v in constant_baseline(problem, instances, held_out=True).as_dict().items()})
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated families (default: all 16)")
    ap.add_argument("--queries", default=",".join(QUERIES), help="comma-separated queries (default: all three)")
    ap.add_argument("--seeds", type=int, default=400, help="instances per cell (decision: twice as many)")
    ap.add_argument("--quick", action="store_true", help="100 seeds, default knobs only")
    ap.add_argument("--out", default="benchmarks/results", help="folder for blind_baselines.json")
    args = ap.parse_args(argv)
    families, queries = args.families.split(","), args.queries.split(",")
    if bad := [f for f in families if f not in FAMILIES] + [q for q in queries if q not in QUERIES]:
        ap.error(f"unknown families or queries {bad}")
    seeds = 100 if args.quick else args.seeds
    rows = []
    for family in families:
        cls = family_class(family)
        for knobs in cls.knob_levels()[:1 if args.quick else None]:
            for query in queries:
                row = measure(family, query, knobs, seeds)
                rows.append(row)
                print(f"  {family} {query} {knobs.as_dict()}: {row['generate_s']:.1f} s", file=sys.stderr, flush=True)
    for query in queries:
        table = [{**r, "level": " ".join(f"{k}={v}" for k, v in r["knobs"].items()),
                  "chance": "-" if r["constant_chance"] is None else f"{r['constant_chance']:+.3f}",
                  "answer": r["constant_answer"].replace("```answer\n", "").replace("\n```", "").replace("\n", "/")[:18]}
                 for r in rows if r["query"] == query]
        cols = [("family", "family", "s"), ("level", "level", "s")]
        if query == "decision":
            cols += [("majority", "majority", ".3f"), ("threshold", "threshold acc", ".3f"), ("ridge", "ridge acc", ".3f"),
                     ("excess", "excess", "+.3f")]
        cols += [("answer", "best constant", "s"), ("constant_share", "right", ".3f"), ("constant_reward", "reward", "+.3f"),
                 ("chance", "chance line", "s"), ("constant_idk", "idk", "+.3f")]
        print(f"\n## {query} ({seeds} seeds{'; 4 x as many for the classifiers' if query == 'decision' else ''})\n")
        print(format_table(table, cols))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "blind_baselines.json").write_text(json.dumps({"seeds": seeds, "rows": rows}, indent=2) + "\n")
    print(f"\nwrote {out / 'blind_baselines.json'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

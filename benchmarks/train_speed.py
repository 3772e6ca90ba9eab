"""Training speed and memory: solvergym's trainer vs TRL's GRPOTrainer on the same workload.

    python benchmarks/train_speed.py [--prompts 2 --group 4 --tokens 64 --steps 3 --warmup 1]
                                     [--rounds 3 --gc-only]
    python benchmarks/train_speed.py --steps 2 --baseline REV [--rounds 2]
    python benchmarks/train_speed.py --profile [--presets grpo]   # where our step's time goes
    python benchmarks/train_speed.py --env-share [--rounds 3]     # env steps serial vs threaded

For each preset (grpo, dapo, reinforce_pp) one iteration of solvergym's trainer (rollout of
``prompts x group`` completions on SolverSAT-v0 + the update) and the closest TRL ``GRPOTrainer``
configuration run on the embedded model, on the CPU, in separate processes (so peak memory is each
run's own). Both generate exactly ``--tokens`` tokens per completion (EOS ignored, no stop strings)
so the work is equal; prompts are the same SATURN prompts. solvergym runs its default micro-batch
of 4 sequences (gradient accumulation inside the optimizer step: the same optimizer batch), TRL
its one forward over the whole batch. Reported per run: seconds per optimizer
step (median over ``--steps`` after ``--warmup``), policy tokens/s and peak RSS; the ratio
ours/TRL is computed in the same run. With ``--rounds N`` every side runs N times, in alternating
order (ours first in odd rounds, last in even ones), and each side's best round is compared (a slow
spell of a shared machine then hits both sides; the JSON keeps each round's own ratio too);
``--gc-only`` runs only ours as shipped and TRL with checkpointing. TRL is an optional dependency
(``pip install trl``); TRL runs are skipped with a note when it is missing.

TRL configurations (the mapping is printed too): grpo -> ``loss_type="grpo"``, beta 1e-3, eps 0.2;
dapo -> ``loss_type="dapo"``, beta 0, eps 0.2/0.28 (TRL has no dynamic sampling; ours runs
without it here so that the work is equal); reinforce_pp -> TRL has no REINFORCE++: compared
with its ``loss_type="dapo"`` at beta 5e-4 (KL in the loss). TRL runs twice: with its default
``gradient_checkpointing=True`` and with it off. Ours runs twice too: as shipped (a group's shared
prompt goes through the model once per forward, ``shared_prefix=True``) and with
``shared_prefix=False`` ("unshared": every sequence whole, as TRL does), to show what that saves.

``--baseline REV`` instead measures our trainer as shipped in this tree and in REV, an older
commit checked out in a temporary ``git worktree`` (removed afterwards): the same worker, run in a
fresh interpreter with REV's package on ``PYTHONPATH``, in alternating order (this tree first in
odd rounds, REV first in even ones) over ``--rounds`` rounds; each side keeps its best round
(shortest step, most tokens/s, least memory), and the table gives new/old ratios. On a shared
machine two runs of the same code differ by 10-30%, so the policy tokens per step are checked to
be equal (the same work) and more rounds narrow the noise. The worker may only use what both
versions have: it imports nothing this file's parent process needs alone.

``--profile`` runs the first preset's step once each side (ours, then TRL with checkpointing) and
splits ours into the trainer's logged phases (``time/<phase>_s``, ``algorithms/timing.py``), the
median step's. Each phase is set against its floor: the least time its work takes at this
machine's rates, measured in the same worker (a large fp32 product's FLOP rate, a sum's read
bandwidth; :func:`step_work` counts the work). TRL's step gets its own floor from its work (every
sequence whole, the forward recomputed), so the table says how much of the ratio is less work and
how much is doing it closer to the machine's rates. The 8-row product rate a decode step sees is
measured and printed beside them.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

import gymnasium as gym

import solvergym  # noqa: F401  (registers the env ids)
from solvergym.agents.models import load_model
from solvergym.algorithms.config import make_config

try:  # the parent's tables; a --baseline worker runs this file on an older commit's package, which
    # may not have them (a worker prints one JSON line, no table)
    from solvergym.evaluation.tables import format_table
except ImportError:
    format_table = None

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
TRL_SETTINGS = {
    "grpo": dict(loss_type="grpo", beta=1e-3, epsilon=0.2, epsilon_high=0.2, temperature=0.8),
    "dapo": dict(loss_type="dapo", beta=0.0, epsilon=0.2, epsilon_high=0.28, temperature=1.0),
    "reinforce_pp": dict(loss_type="dapo", beta=5e-3, epsilon=0.2, epsilon_high=0.28, temperature=0.5,
                         top_p=0.9, repetition_penalty=1.02),
}


def _peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def prompts(n: int, seed: int = 0) -> list[dict]:
    env = gym.make("SolverSAT-v0")
    out = []
    for i in range(n):
        obs, info = env.reset(seed=seed + i)
        out.append({"prompt": info["messages"], "instance": env.unwrapped.instance.to_json()})
    return out


def worker_ours(a) -> dict:
    import torch

    from solvergym.algorithms.trainer import Trainer  # lazy: torch; the parent process and the TRL worker do without it

    total = a.warmup + a.steps
    with tempfile.TemporaryDirectory() as d:
        cfg = make_config(a.preset, env="SolverSAT-v0", prompts_per_step=a.prompts, group_size=a.group,
                          max_new_tokens=a.tokens, max_total_tokens=4096, micro_batch_size=min(4, a.prompts * a.group),
                          steps=total, lr=1e-6, dynamic_sampling=False, overlong=False, progress=False, out_dir=d,
                          gradient_checkpointing=a.gc, shared_prefix=not a.no_share)
        t = Trainer(cfg)
        t.sampling.stop, t.sampling.stop_at_answer_block, t.sampling.ignore_eos = (), False, True
        rows = [t.train_step() for _ in range(total)][a.warmup:]
        out = {"step_s": statistics.median(s["step_s"] for s in rows),
               "tokens_per_s": sum(s.get("policy_tokens", 0.0) for s in rows) / sum(s["step_s"] for s in rows),
               "rollout_s": rows[-1]["rollout_s"], "peak_gib": _peak_gib(), "threads": torch.get_num_threads(),
               "policy_tokens": [s.get("policy_tokens", 0.0) for s in rows],
               "package": str(Path(solvergym.__file__).parent)}
        if a.profile:  # this tree's worker only: the median step's phases (algorithms/timing.py)
            mid = sorted(rows, key=lambda s: s["step_s"])[(len(rows) - 1) // 2]
            out["phases"] = {k[len("time/"):-len("_s")]: v for k, v in mid.items() if k.startswith("time/")}
            out.update({k: mid[k] for k in ("step_s", "rollout_s", "update_s", "prompt_length", "response_length")})
            out["model"] = model_sizes(t.unwrapped)
            out["rates"] = machine_rates(int(out["prompt_length"]) + a.group * a.tokens, out["model"],
                                         a.prompts * a.group)
    return out


def model_sizes(model) -> dict:
    """Parameters a token passes through: the linear layers of the blocks ("body"), the LM head
    (tied to the embedding in the embedded model), and the bytes a decode step reads."""
    import torch

    head = model.get_output_embeddings().weight
    body = sum(m.weight.numel() for m in model.modules()
               if isinstance(m, torch.nn.Linear) and m.weight is not head)
    params = list(model.parameters())  # a tied weight once
    hidden = model.config.hidden_size
    return {"body_params": body, "head_params": head.numel(), "params": sum(p.numel() for p in params),
            "param_bytes": sum(p.numel() * p.element_size() for p in params), "hidden": hidden,
            "intermediate": getattr(model.config, "intermediate_size", None) or 4 * hidden}


def machine_rates(rows: int, model: dict, decode_rows: int) -> dict:
    """This machine's fp32 rates, measured now with the trainer's threads (best of several tries):
    ``matmul_gflops``, a training forward's MLP product (``rows`` tokens x hidden x intermediate:
    576 x 1536 for the embedded model); ``read_gb_s``, a sum over a tensor the size of the weights;
    ``decode_gflops``, what a decode step's products reach: ``decode_rows`` rows through as many
    MLP weights as the model holds, weight-first (``agents/decode_linears.py``), from memory."""
    import torch

    d, f = model["hidden"], model["intermediate"]
    x, w = torch.randn(rows, d), torch.randn(d, f)
    best_mm = min(timeit.repeat(lambda: x @ w, number=1, repeat=20))
    weights = torch.ones(model["param_bytes"] // 4)
    best_read = min(timeit.repeat(weights.sum, number=1, repeat=5))
    stack = weights[: (weights.numel() // (d * f)) * d * f].view(-1, f, d)  # the same bytes, as MLP weights
    xs = torch.randn(decode_rows, d)
    best_decode = min(timeit.repeat(lambda: [(m @ xs.T) for m in stack], number=1, repeat=3))
    return {"matmul_gflops": 2 * rows * d * f / best_mm / 1e9, "read_gb_s": model["param_bytes"] / best_read / 1e9,
            "decode_gflops": 2 * decode_rows * stack.numel() / best_decode / 1e9}


def worker_trl(a) -> dict:
    from datasets import Dataset
    from transformers import TrainerCallback
    from trl import GRPOConfig, GRPOTrainer

    total = a.warmup + a.steps
    rows = prompts(a.prompts * total)
    env = gym.make("SolverSAT-v0").unwrapped

    def reward(prompts, completions, instance, **kwargs):
        out = []
        for comp, inst in zip(completions, instance):
            env.reset(options={"instance": inst})
            text = comp[-1]["content"] if isinstance(comp, list) else comp
            out.append(env.step(text)[1])
        return out

    stamps: list[float] = []

    class Clock(TrainerCallback):
        def on_step_begin(self, args, state, control, **kw):
            stamps.append(time.perf_counter())

        def on_step_end(self, args, state, control, **kw):
            stamps.append(time.perf_counter())

    model, tok = load_model("default")
    with tempfile.TemporaryDirectory() as d:
        args = GRPOConfig(
            output_dir=d, per_device_train_batch_size=a.prompts * a.group, num_generations=a.group,
            max_completion_length=a.tokens, learning_rate=1e-6, max_steps=total, logging_steps=1, report_to="none",
            save_strategy="no", use_cpu=True, bf16=False, gradient_checkpointing=a.gc, shuffle_dataset=False,
            generation_kwargs={"min_new_tokens": a.tokens}, scale_rewards="group", num_iterations=1, seed=0,
            **TRL_SETTINGS[a.preset])
        trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=Dataset.from_list(rows),
                              processing_class=tok, callbacks=[Clock()])
        trainer.train()
    steps = [stamps[i + 1] - stamps[i] for i in range(0, len(stamps) - 1, 2)]
    tokens = a.prompts * a.group * a.tokens
    return {"step_s": statistics.median(steps[a.warmup:]), "tokens_per_s": tokens / statistics.median(steps[a.warmup:]),
            "peak_gib": _peak_gib()}


def step_work(side: str, *, prompts: int, group: int, prompt_len: float, response_len: float, model: dict,
              old_logprobs: bool, ref: bool, gc: bool = False) -> dict[str, dict[str, float]]:
    """What one GRPO step computes, per phase: the FLOPs of its linear layers (2 per weight per
    token; attention's products, ~5% here, are left out, so the floor is a lower bound) and the bytes
    it must read (a decode step reads every weight once; AdamW reads parameter, gradient and two
    moments and writes three of them, the norm clip reads the gradient: 8 passes). Decode's
    FLOPs: every sampled row through every weight.

    ``side="ours"``: a group's prompt goes through the model once, in the rollout's prefill and in
    each training forward (``shared_prefix``); ``"trl"``: every sequence whole, and with ``gc`` the
    backward recomputes the forward. Both: logits only for the completion's positions; the first
    token comes from the prefill, each later one from a decode step.
    """
    n = prompts * group
    body, head = model["body_params"], model["head_params"]
    prompt_tokens = (prompts if side == "ours" else n) * prompt_len
    forward = 2 * (body * (prompt_tokens + n * response_len) + head * n * response_len)
    decode_steps = max(0.0, response_len - 1)
    return {"generate": {"flops": 2 * body * prompt_tokens + 2 * (body + head) * n * decode_steps,
                         "bytes": decode_steps * model["param_bytes"]},
            "old_logprobs": {"flops": forward if old_logprobs else 0.0, "bytes": 0.0},
            "ref": {"flops": forward if ref else 0.0, "bytes": 0.0},
            "forward": {"flops": forward, "bytes": 0.0},
            "backward": {"flops": (3 if gc else 2) * forward, "bytes": 0.0},
            "optimizer": {"flops": 0.0, "bytes": 8.0 * model["param_bytes"]}}


def floor_s(work: dict[str, float], rates: dict) -> float:
    """A lower bound on the time ``work`` takes at this machine's measured rates: its FLOPs at the
    large matrix product's rate or its bytes at the read bandwidth, whichever takes longer."""
    return max(work["flops"] / (rates["matmul_gflops"] * 1e9), work["bytes"] / (rates["read_gb_s"] * 1e9))


def profile(a, have_trl: bool) -> int:
    """``--profile``: one step of ours split into phases, each against the least time its work takes
    here, and TRL's step (with checkpointing) against its own floor, measured in the same run."""
    a.preset = a.presets[0]
    ours = run_worker("ours", a, gc=False, profile=True)
    if "error" in ours:
        raise SystemExit(f"ours: {ours['error']}")
    trl_res = run_worker("trl", a, gc=True) if have_trl else {"error": "TRL is not installed (pip install trl)"}
    ph, rates = ours["phases"], ours["rates"]
    shape = dict(prompts=a.prompts, group=a.group, prompt_len=ours["prompt_length"],
                 response_len=ours["response_length"], model=ours["model"])
    mine = step_work("ours", old_logprobs=ph["old_logprobs"] > 0, ref=ph["ref"] > 0, **shape)  # 0.0: not run
    theirs = step_work("trl", old_logprobs=False, ref=TRL_SETTINGS[a.preset]["beta"] > 0, gc=True, **shape)
    rows = []
    for phase in ph:  # the trainer's phases in step order (algorithms/timing.py); env has no floor
        w = mine.get(phase)
        lo = floor_s(w, rates) if w else None
        rows.append({"phase": phase, "s": ph[phase], "share": ph[phase] / ours["step_s"],
                     "gflop": w["flops"] / 1e9 if w else None, "gb": w["bytes"] / 1e9 if w else None,
                     "floor_s": lo, "of_floor": lo / ph[phase] if lo and ph[phase] else None})
    rest = ours["step_s"] - sum(ph.values())
    rows.append({"phase": "other", "s": rest, "share": rest / ours["step_s"]})
    ours_floor = sum(floor_s(w, rates) for w in mine.values())
    trl_floor = sum(floor_s(w, rates) for w in theirs.values())
    rows.append({"phase": "step", "s": ours["step_s"], "share": 1.0, "floor_s": ours_floor,
                 "of_floor": ours_floor / ours["step_s"]})
    columns = [("s", "s", ".2f"), ("share", "share", ".0%"), ("gflop", "GFLOP", ".0f"), ("gb", "GB read", ".1f"),
               ("floor_s", "floor s", ".2f"), ("of_floor", "floor/s", ".0%")]
    shown = [{"phase": r["phase"], **{k: "-" if r.get(k) is None else format(r[k], spec) for k, _, spec in columns}}
             for r in rows]
    print(format_table(shown, [("phase", "phase", "s")] + [(k, head, "s") for k, head, _ in columns]))
    rate = (f"{rates['matmul_gflops']:.0f} GFLOPS fp32 matmul ({rates['decode_gflops']:.0f} with "
            f"{a.prompts * a.group} rows, as in decoding), {rates['read_gb_s']:.1f} GB/s read")
    print(f"\nfloors at this machine's rates, measured in the worker: {rate}; prompt {ours['prompt_length']:.0f} "
          f"tokens, {ours['response_length']:.0f} sampled per completion")
    summary = {"ours_step_s": ours["step_s"], "ours_floor_s": ours_floor, "trl_gc_floor_s": trl_floor,
               "floor_ratio": ours_floor / trl_floor}
    print(f"ours: {ours['step_s']:.2f} s/step, floor {ours_floor:.2f} s ({ours_floor / ours['step_s']:.0%} of it)")
    if trl_res.get("step_s"):
        t = trl_res["step_s"]
        summary.update(trl_gc_step_s=t, ratio_vs_trl_gc=ours["step_s"] / t, target_s=0.3 * t,
                       needed_of_floor=ours_floor / (0.3 * t))
        print(f"TRL (GC): {t:.2f} s/step, floor {trl_floor:.2f} s ({trl_floor / t:.0%} of it)")
        print(f"ours/TRL(GC) {ours['step_s'] / t:.2f}x measured, {ours_floor / trl_floor:.2f}x floor to floor; "
              f"0.3x TRL's step is {0.3 * t:.2f} s: ours at {ours_floor / (0.3 * t):.0%} of its floor rates")
    else:
        print(f"TRL (GC): {trl_res.get('error')}; its floor {trl_floor:.2f} s")
    a.out.mkdir(parents=True, exist_ok=True)
    result = {"preset": a.preset, "workload": {"env": "SolverSAT-v0", "prompts": a.prompts, "group": a.group,
                                               "tokens": a.tokens, "steps": a.steps, "warmup": a.warmup},
              "rates": rates, "model": ours["model"], "rows": rows, "summary": summary, "ours": ours, "trl_gc": trl_res,
              "work": {"ours": mine, "trl_gc": theirs}}
    (a.out / "train_speed_profile.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {a.out / 'train_speed_profile.json'}")
    return 0


def run_worker(kind: str, a, gc: bool, share: bool = True, package: str | None = None, profile: bool = False) -> dict:
    """One worker in a fresh interpreter; ``package``: a folder holding another ``solvergym`` to
    import instead of this tree's (``--baseline``)."""
    cmd = [sys.executable, str(HERE), "--worker", kind, "--preset", a.preset, "--prompts", str(a.prompts),
           "--group", str(a.group), "--tokens", str(a.tokens), "--steps", str(a.steps), "--warmup", str(a.warmup)]
    if gc:
        cmd.append("--gc")
    if not share:
        cmd.append("--no-share")
    if profile:
        cmd.append("--profile")
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    if package is not None:
        env["PYTHONPATH"] = package
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--presets", nargs="*", default=["grpo", "dapo", "reinforce_pp"])
    p.add_argument("--prompts", type=int, default=2)
    p.add_argument("--group", type=int, default=4)
    p.add_argument("--tokens", type=int, default=64)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--out", type=Path, default=HERE.parent / "results")
    p.add_argument("--baseline", metavar="REV", help="measure this tree against the git revision REV instead")
    p.add_argument("--rounds", type=int, default=None,
                   help="rounds, each side once per preset and round, in alternating order; each side's best round "
                        "is reported (default: 2 with --baseline, else 1)")
    p.add_argument("--gc-only", action="store_true",
                   help="against TRL: only ours as shipped and TRL with gradient checkpointing (no unshared, no TRL "
                        "without GC)")
    p.add_argument("--profile", action="store_true",
                   help="only the first preset: our step split into phases (generate, env, old log-probs, reference, "
                        "forward, backward, optimizer), each against the least time its work takes at this machine's "
                        "measured matmul rate and bandwidth, and TRL's step (GC) against its own")
    p.add_argument("--env-share", action="store_true",
                   help="instead: the env steps of a SolverTool-v0 rollout (8 groups x 8, a sandboxed program each), "
                        "serial against env_threads, in alternating rounds (benchmarks/env_share.py)")
    p.add_argument("--worker", choices=["ours", "trl"], help=argparse.SUPPRESS)
    p.add_argument("--quick", action="store_true",
                   help="grpo only, 2 prompts x 2, 16 tokens, 1 step, no warm-up (a smoke run)")
    p.add_argument("--preset", help=argparse.SUPPRESS)
    p.add_argument("--gc", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--no-share", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.quick and not a.worker:
        a.presets, a.prompts, a.group, a.tokens, a.steps, a.warmup = ["grpo"], 2, 2, 16, 1, 0
    if a.worker:
        res = worker_ours(a) if a.worker == "ours" else worker_trl(a)
        print(json.dumps(res))
        return 0
    if a.baseline:
        a.rounds = a.rounds or 2
        return compare(a)
    if a.env_share:
        sys.path.insert(0, str(HERE.parent))
        import env_share

        env_share.report(env_share.measure(rounds=a.rounds or 3), a.out)
        return 0

    try:
        import trl  # noqa: F401
        have_trl = True
    except ImportError:
        have_trl = False
    if a.profile:
        return profile(a, have_trl)

    # (side, worker kind, gradient checkpointing, shared prefix)
    sides = [("ours", "ours", False, True), ("plain", "ours", False, False), ("trl_gc", "trl", True, True),
             ("trl", "trl", False, True)]
    if a.gc_only:
        sides = [x for x in sides if x[0] in ("ours", "trl_gc")]
    if not have_trl:
        sides = [x for x in sides if x[1] == "ours"]
    rounds = a.rounds or 1
    runs: dict[tuple[str, str], list[dict]] = {}
    for r in range(rounds):
        for preset in a.presets:
            a.preset = preset
            for side, kind, gc, share in (sides if r % 2 == 0 else sides[::-1]):
                res = run_worker(kind, a, gc=gc, share=share)
                runs.setdefault((preset, side), []).append(res)
                if rounds > 1:
                    took = f"{res['step_s']:.2f} s/step" if res.get("step_s") else res.get("error")
                    print(f"round {r + 1}/{rounds} {preset} {side}: {took}", file=sys.stderr)

    def best(preset: str, side: str) -> dict:
        """The side's best round (shortest step; its memory and tokens/s with it), or its error."""
        done = [x for x in runs.get((preset, side), []) if x.get("step_s")]
        if not done:
            errors = [x.get("error") for x in runs.get((preset, side), [])]
            return {"error": errors[0] if errors else None}
        return min(done, key=lambda x: x["step_s"])

    rows = []
    for preset in a.presets:
        ours, plain = best(preset, "ours"), best(preset, "plain")
        row = {"preset": preset, "ours_step_s": ours.get("step_s"), "ours_tok_s": ours.get("tokens_per_s"),
               "ours_peak_gib": ours.get("peak_gib"), "ours_rollout_s": ours.get("rollout_s"),
               "ours_error": ours.get("error"), "plain_step_s": plain.get("step_s"),
               "plain_peak_gib": plain.get("peak_gib"), "plain_error": plain.get("error")}
        for tag in [x[0] for x in sides if x[1] == "trl"]:
            trl_res = best(preset, tag)
            row.update({f"{tag}_step_s": trl_res.get("step_s"), f"{tag}_peak_gib": trl_res.get("peak_gib"),
                        f"{tag}_error": trl_res.get("error")})
            if trl_res.get("step_s") and ours.get("step_s"):
                row[f"ratio_vs_{tag}"] = ours["step_s"] / trl_res["step_s"]
            if trl_res.get("step_s") and plain.get("step_s"):
                row[f"plain_ratio_vs_{tag}"] = plain["step_s"] / trl_res["step_s"]
        if rounds > 1:  # each round's own ratio: how far the noise moves it
            row["round_ratios_vs_trl_gc"] = [o["step_s"] / t["step_s"] for o, t in zip(
                runs.get((preset, "ours"), []), runs.get((preset, "trl_gc"), [])) if o.get("step_s") and t.get("step_s")]
        rows.append(row)
        print(json.dumps(row), flush=True)

    def f(v, spec):
        return format(v, spec) if isinstance(v, (int, float)) else "-"
    table = [{"preset": r["preset"], "ours": f(r["ours_step_s"], ".1f"), "ours_mem": f(r["ours_peak_gib"], ".2f"),
              "tok_s": f(r["ours_tok_s"], ".1f"), "plain": f(r.get("plain_step_s"), ".1f"),
              "plain_mem": f(r.get("plain_peak_gib"), ".2f"), "r_plain": f(r.get("plain_ratio_vs_trl_gc"), ".2f"),
              "trl_gc": f(r.get("trl_gc_step_s"), ".1f"),
              "trl_gc_mem": f(r.get("trl_gc_peak_gib"), ".2f"), "trl": f(r.get("trl_step_s"), ".1f"),
              "trl_mem": f(r.get("trl_peak_gib"), ".2f"), "r_gc": f(r.get("ratio_vs_trl_gc"), ".2f"),
              "r": f(r.get("ratio_vs_trl"), ".2f")} for r in rows]
    print()
    print(format_table(table, [("preset", "preset", "s"), ("ours", "ours s/step", "s"), ("tok_s", "ours tok/s", "s"),
                               ("ours_mem", "ours GiB", "s"), ("plain", "unshared s/step", "s"),
                               ("plain_mem", "unshared GiB", "s"), ("trl_gc", "TRL s/step (GC)", "s"),
                               ("trl_gc_mem", "TRL GiB (GC)", "s"), ("trl", "TRL s/step", "s"),
                               ("trl_mem", "TRL GiB", "s"), ("r_gc", "ours/TRL(GC)", "s"), ("r", "ours/TRL", "s"),
                               ("r_plain", "unshared/TRL(GC)", "s")]))
    if not have_trl:
        print("\nTRL is not installed (pip install trl): only solvergym was measured.")
    a.out.mkdir(parents=True, exist_ok=True)
    result = {"workload": {"env": "SolverSAT-v0", "prompts": a.prompts, "group": a.group, "tokens": a.tokens,
                           "steps": a.steps, "warmup": a.warmup, "rounds": rounds}, "trl_settings": TRL_SETTINGS,
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count()}, "rows": rows}
    (a.out / "train_speed.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {a.out / 'train_speed.json'}")
    return 0


def _worktree(rev: str) -> Path:
    """REV checked out in a temporary git worktree, as ``<folder>/solvergym``; returns the folder."""
    folder = Path(tempfile.mkdtemp(prefix=f"sg-train-speed-{rev}-"))
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder / "solvergym"), rev],
                   check=True, capture_output=True)
    return folder


def compare(a) -> int:
    """``--baseline REV``: our trainer here and in REV, alternating rounds (module docstring)."""
    old = _worktree(a.baseline)
    runs: dict[tuple[str, str], list[dict]] = {}
    try:
        for r in range(a.rounds):
            for preset in a.presets:
                a.preset = preset
                for side in (("new", "old") if r % 2 == 0 else ("old", "new")):
                    res = run_worker("ours", a, gc=False, package=str(old) if side == "old" else None)
                    if "error" in res:
                        raise SystemExit(f"{preset} ({side}): {res['error']}")
                    if (side == "old") != Path(res["package"]).is_relative_to(old):
                        raise SystemExit(f"the {side} worker imported {res['package']}")
                    runs.setdefault((preset, side), []).append(res)
                    print(f"round {r + 1}/{a.rounds} {preset} {side}: {res['step_s']:.2f} s/step", file=sys.stderr)
    finally:
        done = subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(old / "solvergym")],
                              capture_output=True, text=True)
        if done.returncode:
            print(f"could not remove the worktree {old / 'solvergym'}: {done.stderr.strip()}", file=sys.stderr)
        else:
            shutil.rmtree(old, ignore_errors=True)
    best = {"step_s": min, "tokens_per_s": max, "rollout_s": min, "peak_gib": min}
    rows = []
    for preset in a.presets:
        row: dict = {"preset": preset}
        for side in ("new", "old"):
            for key, pick in best.items():
                row[f"{key}_{side}"] = pick(x[key] for x in runs[(preset, side)])
        for key in best:
            row[f"{key}_ratio"] = row[f"{key}_new"] / row[f"{key}_old"]
        tokens = {side: {tuple(x["policy_tokens"]) for x in runs[(preset, side)]} for side in ("new", "old")}
        row["same_work"] = "yes" if tokens["new"] == tokens["old"] and len(tokens["new"]) == 1 else "NO"
        rows.append(row)
    columns = [("preset", "preset", "s")]
    for key, head in (("step_s", "s/step"), ("tokens_per_s", "tok/s"), ("rollout_s", "rollout s"),
                      ("peak_gib", "GiB")):
        columns += [(f"{key}_new", f"{head} here", ".2f"), (f"{key}_old", f"{head} {a.baseline}", ".2f"),
                    (f"{key}_ratio", "new/old", ".2f")]
    columns.append(("same_work", "same tokens", "s"))
    print()
    print(format_table(rows, columns))
    a.out.mkdir(parents=True, exist_ok=True)
    result = {"baseline": a.baseline, "rounds": a.rounds,
              "workload": {"env": "SolverSAT-v0", "prompts": a.prompts, "group": a.group, "tokens": a.tokens,
                           "steps": a.steps, "warmup": a.warmup},
              "machine": {"python": platform.python_version(), "cpus": os.cpu_count()}, "rows": rows,
              "runs": {f"{p} {s}": v for (p, s), v in runs.items()}}
    (a.out / "train_speed_baseline.json").write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwrote {a.out / 'train_speed_baseline.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``solvergym eval``'s engine: every (seed, instance, sample) of a run as one episode, episodes
stepped in lockstep batches, one JSONL record each, resumable.

A run is a directory. ``run.json`` holds its configuration (an existing run is only resumed
with the same one), ``records.jsonl`` one record per episode, ``timings.jsonl`` what each batch
took (kept apart, so that a run repeated or resumed writes byte-identical records), and the
report (``report.py``) reads the records alone.

Instances come from the env's generator (instance ``i`` is the one ``env.reset(seed=
instance_seed + i)`` draws, generated once and posed to all of its samples) or from a dataset
(JSONL files of instances in any form ``options={"instance": ...}`` accepts; a directory means
every ``*.jsonl`` in it, the file name becoming the record's ``source``). A batch is
``batch_instances`` instances times ``n_samples`` samples, for one evaluation seed: all of its
episodes go to the agent together, one turn at a time (multi-turn episodes in lockstep; finished
ones leave the batch); sandbox-bound episodes (SolverOR-v0, SolverTool-v0) are stepped in
threads, so their programs run concurrently (``workers``). The
agent is reseeded at the start of every batch from ``(seed, batch)``; a batch's records are
appended and flushed together once it is complete, so a killed run leaves whole batches, and the
run resumed skips them and redoes the rest, with the same seeds.
"""
from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from .agents import act, make_agent, reseed

__all__ = ["EvalConfig", "run_eval", "load_records", "read_dataset", "RECORDS", "TIMINGS", "CONFIG"]

RECORDS, TIMINGS, CONFIG = "records.jsonl", "timings.jsonl", "run.json"
#: threads stepping a batch of sandbox-bound episodes when ``EvalConfig.workers`` is None (the
#: shared sandbox pool runs this many programs at once; on 2 cores more only queue)
AUTO_WORKERS = 8
#: the final ``info`` keys a record keeps (besides the reward components and the conversation)
INFO_KEYS = ("correct", "answer", "reason", "error", "D", "chance_success", "status", "objective", "features",
             "library", "solver", "family", "bucket", "problem_type", "question_type", "error_type", "metrics",
             "solver_status", "ground_truth", "advanced", "tool_calls")
#: the reset ``info`` keys that say how an episode was set up (the sampled solver, the mode, ...)
SETTING_KEYS = ("task", "solver", "family", "library", "mode", "stage", "reward_preset", "tolerance")
STDERR_TAIL = 2000


def _trim_run(r: Any) -> Any:
    """A sandbox result in ``info`` as a record keeps it: the status and its evidence, a stderr tail."""
    if not isinstance(r, dict):
        return r
    out = {k: r[k] for k in ("status", "reason", "exit_code", "solvers_imported") if k in r}
    if "solver_calls" in r:
        out["solver_calls"] = list(r["solver_calls"])[:20]
    if isinstance(r.get("stderr"), str):
        out["stderr_tail"] = r["stderr"][-STDERR_TAIL:]
    return out


@dataclass
class EvalConfig:
    """One evaluation run (``solvergym eval``'s arguments).

    ``env_id`` and ``env_kwargs``: what ``gym.make`` gets; ``agent``: a spec
    (:func:`~solvergym.evaluation.agents.make_agent`); ``dataset``: a JSONL file or a directory of
    them (``None``: ``instances`` generated ones from ``instance_seed``); ``n_samples`` episodes
    per instance and seed; ``seeds``: evaluation seeds (the agent's sampling; the instances are the
    same for every seed); ``ks``: the k of pass@k etc. (each ``<= n_samples``); ``temperature``
    and ``max_new_tokens`` for model agents; ``batch_instances`` instances per batch;
    ``workers`` threads stepping a batch's envs: ``None`` (the default) uses up to
    :data:`AUTO_WORKERS` where the env's steps wait on the sandbox and are thread-safe
    (``env.concurrent_steps``: SolverOR-v0, SolverTool-v0), else 1; 1 steps them one after the
    other, which every env allows; more is an error for an env whose problem is not thread-safe
    (the step-verified logic envs share Z3's main context)."""

    env_id: str
    agent: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    dataset: str | None = None
    instances: int = 100
    instance_seed: int = 0
    n_samples: int = 1
    seeds: list[int] = field(default_factory=lambda: [0])
    ks: list[int] = field(default_factory=lambda: [1])
    temperature: float | None = None
    max_new_tokens: int = 256
    batch_instances: int = 16
    workers: int | None = None

    def __post_init__(self):
        self.seeds = [int(s) for s in self.seeds]
        self.ks = sorted({int(k) for k in self.ks})
        if self.n_samples < 1 or not self.seeds or not self.ks:
            raise ValueError("need n_samples >= 1, at least one seed and one k")
        if self.ks[0] < 1 or self.ks[-1] > self.n_samples:
            raise ValueError(f"every k must be in 1..n_samples={self.n_samples} (unbiased estimators draw k of "
                             f"the n samples), got {self.ks}")
        if len(set(self.seeds)) != len(self.seeds):
            raise ValueError(f"seeds repeat: {self.seeds}")
        if self.dataset is None and self.instances < 1:
            raise ValueError("instances must be >= 1")
        if self.batch_instances < 1 or (self.workers is not None and self.workers < 1):
            raise ValueError("batch_instances and workers must be >= 1")

    def identity(self) -> dict[str, Any]:
        """What must match for a run directory to be resumed (everything but the speed settings)."""
        d = asdict(self)
        for k in ("batch_instances", "workers"):
            d.pop(k)
        return d


# ----------------------------------------------------------------------------- instances
def read_dataset(path: str) -> list[tuple[str, Any]]:
    """``(file name, record)`` for every record of a JSONL file or of every ``*.jsonl`` in a
    directory (sorted), as ``--dataset`` and training splits read them."""
    return list(_dataset_items(path))


def _dataset_items(path: str) -> Iterator[tuple[str, Any]]:
    p = Path(path)
    files = sorted(p.glob("*.jsonl")) if p.is_dir() else [p]
    if not files:
        raise ValueError(f"no *.jsonl files in {path}")
    for f in files:
        with open(f) as fh:
            for n, line in enumerate(fh, 1):
                if line.strip():
                    try:
                        yield f.name, json.loads(line)
                    except json.JSONDecodeError as e:
                        raise ValueError(f"{f}:{n}: not JSON ({e})") from None


def _instances(cfg: EvalConfig, env: Any) -> list[tuple[str | None, Any]]:
    """(source, instance) for every instance of the run, in order."""
    if cfg.dataset is not None:
        return read_dataset(cfg.dataset)
    out = []
    for i in range(cfg.instances):
        env.reset(seed=cfg.instance_seed + i)
        out.append((None, env.unwrapped.instance))
    return out


# ----------------------------------------------------------------------------- records
def load_records(run_dir: str | Path) -> list[dict[str, Any]]:
    """The complete records of a run (a trailing line cut off by a kill is ignored)."""
    path = Path(run_dir) / RECORDS
    if not path.exists():
        return []
    out = []
    with open(path) as f:
        for line in f:
            if not line.endswith("\n"):
                break  # the half-written last line of a killed run
            out.append(json.loads(line))
    return out


def _truncate_partial(path: Path) -> None:
    """Drop a half-written last line, so that appending continues the file cleanly."""
    if not path.exists():
        return
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        path.write_bytes(data[:data.rfind(b"\n") + 1])


def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def _record(key: dict, reset_info: dict, info: dict, reward: float, components: dict, turns: int,
            truncated: bool, messages: list) -> dict[str, Any]:
    kept = {k: info[k] for k in INFO_KEYS if k in info}
    for k in ("sandbox", "last_tool_result"):
        if k in info:
            kept[k] = _trim_run(info[k])
    if isinstance(info.get("equivalence"), dict):
        kept["equivalence"] = {k: info["equivalence"].get(k) for k in ("status", "equivalent")}
    rec = {**key, "instance_id": reset_info.get("instance_id"), "difficulty": reset_info.get("difficulty"),
           "level": {k: reset_info[k] for k in ("D", "chance_success") if k in reset_info},
           "setting": {k: reset_info[k] for k in SETTING_KEYS if k in reset_info},
           "reward": reward, "components": components, "correct": bool(info.get("correct", False)),
           "format_error": "error" in info, "truncated": bool(truncated), "turns": turns,
           "info": kept, "messages": messages}
    return _jsonable(rec)


# ----------------------------------------------------------------------------- the run
def _batches(cfg: EvalConfig, n_instances: int) -> list[tuple[int, int, list[int]]]:
    """(batch number, seed, instance indices) in run order: seed-major, then instances."""
    out, b = [], 0
    for seed in cfg.seeds:
        for start in range(0, n_instances, cfg.batch_instances):
            out.append((b, seed, list(range(start, min(start + cfg.batch_instances, n_instances)))))
            b += 1
    return out


def _open_run(cfg: EvalConfig, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    path = out / CONFIG
    if path.exists():
        old = json.loads(path.read_text())
        if old.get("identity") != _jsonable(cfg.identity()):
            raise ValueError(f"{out} holds a run with another configuration ({path}); use a new --out")
    else:
        path.write_text(json.dumps({"identity": cfg.identity(), "config": asdict(cfg)}, indent=2) + "\n")


def _workers(cfg: EvalConfig, env: Any) -> int:
    """The threads that step a batch (``EvalConfig.workers``)."""
    if cfg.workers is None:
        return AUTO_WORKERS if getattr(env, "concurrent_steps", False) else 1
    if cfg.workers > 1 and not getattr(getattr(env, "problem", None), "thread_safe", False):
        raise ValueError(f"{cfg.env_id} cannot be stepped in threads (its problem is not thread-safe); "
                         f"use workers=1")
    return cfg.workers


def run_eval(cfg: EvalConfig, out: str | Path, *, agent: Any = None, progress: bool = True) -> Path:
    """Run (or resume) the evaluation ``cfg`` into the directory ``out``; returns it.

    ``agent`` overrides ``cfg.agent`` with an agent object (the spec then only names it)."""
    out = Path(out)
    _open_run(cfg, out)
    _truncate_partial(out / RECORDS)
    existing = load_records(out)
    done = {(r["seed"], r["instance"], r["sample"]) for r in existing}
    probe = gym.make(cfg.env_id, **cfg.env_kwargs)
    try:
        items = _instances(cfg, probe)
        workers = _workers(cfg, probe.unwrapped)
    finally:
        probe.close()
    batches = _batches(cfg, len(items))
    todo = [b for b in batches if any((b[1], i, j) not in done for i in b[2] for j in range(cfg.n_samples))]
    if not todo:
        return out
    agent = agent if agent is not None else make_agent(cfg.agent, temperature=cfg.temperature,
                                                       max_new_tokens=cfg.max_new_tokens, seed=cfg.seeds[0])
    size = cfg.batch_instances * cfg.n_samples
    envs = [gym.make(cfg.env_id, **cfg.env_kwargs) for _ in range(min(size, len(items) * cfg.n_samples))]
    total = sum(len(b[2]) * cfg.n_samples for b in batches)
    bar = tqdm(total=total, initial=len(done), desc=f"eval {cfg.env_id} / {cfg.agent}", disable=not progress)
    correct = sum(1 for r in existing if r["correct"])
    pool = ThreadPoolExecutor(workers) if workers > 1 else None
    try:
        with open(out / RECORDS, "a") as rec_f, open(out / TIMINGS, "a") as tim_f:
            for number, seed, idx in todo:
                t0 = time.perf_counter()
                records, timing = _run_batch(cfg, agent, envs, pool, items, number, seed, idx, done)
                rec_f.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
                rec_f.flush()
                os.fsync(rec_f.fileno())
                timing["batch_s"] = time.perf_counter() - t0
                tim_f.write(json.dumps({"batch": number, "seed": seed, **timing}) + "\n")
                tim_f.flush()
                correct += sum(r["correct"] for r in records)
                bar.update(len(records))
                bar.set_postfix(acc=f"{correct / max(bar.n, 1):.3f}")
    finally:
        bar.close()
        if pool is not None:
            pool.shutdown()
        for e in envs:
            e.close()
    return out


def _run_batch(cfg: EvalConfig, agent: Any, envs: list, pool: ThreadPoolExecutor | None, items: list, number: int,
               seed: int, idx: list[int], done: set) -> tuple[list[dict], dict]:
    """Every pending episode of one batch, stepped in lockstep; records in (instance, sample) order."""
    # a batch redone after a kill is redone whole (the same agent calls, so the same samples),
    # and only its missing records are kept
    full = [(i, j) for i in idx for j in range(cfg.n_samples)]
    wanted = {(i, j) for i, j in full if (seed, i, j) not in done}
    reseed(agent, int(np.random.SeedSequence([seed, number]).generate_state(1)[0]))
    slots = envs[:len(full)]
    t_env = t_agent = 0.0
    t = time.perf_counter()
    states = []
    for env, (i, j) in zip(slots, full):
        source, inst = items[i]
        obs, info = env.reset(seed=int(np.random.SeedSequence([seed, i, j]).generate_state(1)[0]),
                              options={"instance": inst})
        states.append({"obs": obs, "reset_info": info, "messages": info["messages"], "reward": 0.0,
                       "components": {}, "turns": 0, "done": False, "truncated": False, "info": info,
                       "source": source})
    t_env += time.perf_counter() - t
    while True:
        live = [s for s in range(len(full)) if not states[s]["done"]]
        if not live:
            break
        t = time.perf_counter()
        actions = act(agent, [states[s]["obs"] for s in live], [slots[s] for s in live],
                      [states[s]["messages"] for s in live])
        t_agent += time.perf_counter() - t
        t = time.perf_counter()
        if pool is not None:
            results = list(pool.map(lambda sa: slots[sa[0]].step(sa[1]), zip(live, actions)))
        else:
            results = [slots[s].step(a) for s, a in zip(live, actions)]
        t_env += time.perf_counter() - t
        for s, (obs, reward, terminated, truncated, info) in zip(live, results):
            st = states[s]
            st["obs"], st["info"], st["messages"] = obs, info, info["messages"]
            st["reward"] += float(reward)
            for k, v in info.get("reward_components_computed", info.get("reward_components", {})).items():
                st["components"][k] = st["components"].get(k, 0.0) + float(v)
            st["turns"] += 1
            st["done"] = bool(terminated or truncated)
            st["truncated"] = bool(truncated)
    records = []
    for (i, j), st in zip(full, states):
        if (i, j) not in wanted:
            continue
        key = {"seed": seed, "instance": i, "sample": j, "source": st["source"]}
        records.append(_record(key, st["reset_info"], st["info"], st["reward"], st["components"], st["turns"],
                               st["truncated"], st["messages"]))
    return records, {"episodes": len(records), "agent_s": t_agent, "env_s": t_env}

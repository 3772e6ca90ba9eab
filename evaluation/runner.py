"""``solvergym eval``'s engine: every (seed, instance, sample) of a run as one episode, episodes
stepped in lockstep batches, one JSONL record each, resumable.

A run is a directory. ``run.json`` holds its identity (every setting that decides what its
records hold: the config but ``workers``, with the dataset's content hash; an existing run is
only resumed with the same one, and ``run.json`` is written only once the agent and the envs are
up, so a run that failed to start claims nothing), ``records.jsonl`` one record per episode,
``timings.jsonl`` what each batch took (kept apart, so that a run repeated or resumed writes
byte-identical records), and the report (``report.py``) reads the records alone, each one checked
against ``run.json`` (``records.py``). A run holds its directory's lock from start to end, so a
second run on it fails at once.

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

import hashlib
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

from ..sandbox import parse_executor
from .agents import act, make_agent, reseed, sampling_temperature
from .records import (CONFIG, RECORDS, TIMINGS, has_results, hold_run, identity_diff, load_records, read_run,
                      truncate_partial, write_run)

__all__ = ["EvalConfig", "run_eval", "load_records", "read_dataset", "run_identity", "RECORDS", "TIMINGS", "CONFIG"]
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
    (the step-verified logic envs share Z3's main context). ``executor``: where the env's
    programs run (``"ray"`` or a Ray address: Ray actors; ``None``: the env's default, this
    machine), for the envs that run programs (SolverTool-v0, SolverOR-v0); like ``workers`` it
    changes no record."""

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
    executor: str | None = None

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
        if self.executor is not None:
            parse_executor(self.executor)
            if "executor" in self.env_kwargs:
                raise ValueError("give the executor once: as executor= or in env_kwargs, not both")

    def make_env(self) -> gym.Env:
        """``gym.make(env_id, **env_kwargs)``, with ``executor`` where one is given (a clear error
        for an env that runs no programs)."""
        if self.executor is None:
            return gym.make(self.env_id, **self.env_kwargs)
        try:
            return gym.make(self.env_id, **self.env_kwargs, executor=self.executor)
        except TypeError as e:
            if "executor" not in str(e):
                raise
            raise ValueError(f"{self.env_id} runs no programs, so it takes no executor (SolverTool-v0 and "
                             f"SolverOR-v0 do)") from None

    def identity(self) -> dict[str, Any]:
        """What must match for a run directory to be resumed: everything but ``workers`` (threads
        stepping envs change no record), ``executor`` (nor does where programs run).
        ``batch_instances`` is in: the agent is reseeded per
        batch, and a model agent samples a batch together, so the batching decides the samples;
        seeding per episode instead would need every backend to sample each row of a batch
        from its own generator, which batched decoding does not offer."""
        d = asdict(self)
        d.pop("workers")
        d.pop("executor")
        return d


# ----------------------------------------------------------------------------- instances
def read_dataset(path: str) -> list[tuple[str, Any]]:
    """``(file name, record)`` for every record of a JSONL file or of every ``*.jsonl`` in a
    directory (sorted), as ``--dataset`` and training splits read them."""
    return _read_dataset(path)[0]


def _read_dataset(path: str) -> tuple[list[tuple[str, Any]], str]:
    """The records and the dataset's sha256: of the file, or of its files' names and hashes in
    order. Each file is read once, so the hash is of the very bytes the run poses."""
    p = Path(path)
    files = sorted(p.glob("*.jsonl")) if p.is_dir() else [p]
    if not files:
        raise ValueError(f"no *.jsonl files in {path}")
    items, whole = [], hashlib.sha256()
    for f in files:
        data = f.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if not p.is_dir():
            return list(_parse_jsonl(f, data)), digest
        whole.update(f"{f.name}\0{digest}\n".encode())
        items += _parse_jsonl(f, data)
    return items, whole.hexdigest()


def _parse_jsonl(f: Path, data: bytes) -> Iterator[tuple[str, Any]]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{f}: not UTF-8 ({e})") from None
    for n, line in enumerate(text.split("\n"), 1):
        if line.strip():
            try:
                yield f.name, json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{f}:{n}: not JSON ({e})") from None


def _instances(cfg: EvalConfig, env: Any) -> tuple[list[tuple[str | None, Any]], str | None]:
    """(source, instance) for every instance of the run, in order, and the dataset's hash."""
    if cfg.dataset is not None:
        return _read_dataset(cfg.dataset)
    out = []
    for i in range(cfg.instances):
        env.reset(seed=cfg.instance_seed + i)
        out.append((None, env.unwrapped.instance))
    return out, None


def run_identity(cfg: EvalConfig, dataset_sha256: str | None) -> dict[str, Any]:
    """``run.json``'s identity: the config's (:meth:`EvalConfig.identity`) and the dataset's
    content hash, so a dataset replaced at the same path is another run."""
    return _jsonable({**cfg.identity(), "dataset_sha256": dataset_sha256})


# ----------------------------------------------------------------------------- records
def _jsonable(x: Any) -> Any:
    return json.loads(json.dumps(x, default=str))


def _record(key: dict, reset_info: dict, info: dict, reward: float, components: dict, turns: int,
            truncated: bool, messages: list, clipped: list) -> dict[str, Any]:
    """One episode's record. ``truncated``: Gymnasium's flag, the episode ended by its turn budget
    (``max_turns``) or a step limit rather than terminating; ``clipped``: per turn, whether the
    token limit (``max_new_tokens``) cut the agent's completion (``None``: the agent did not say)."""
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
           "format_error": "error" in info, "truncated": bool(truncated), "turns": turns, "clipped": list(clipped),
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


def _check_resume(out: Path, run: dict | None, identity: dict) -> dict | None:
    """The run this one resumes (``None``: a new one). A ``run.json`` of another identity is
    refused where it has records and replaced where it has none (a run that started and wrote
    nothing leaves nothing to mix)."""
    if run is None:
        return None
    if run["identity"] != identity:
        if has_results(out):
            raise ValueError(f"{out} holds a run with another configuration ({out / CONFIG}: "
                             f"{identity_diff(run['identity'], identity)}); use a new --out")
        return None
    return run


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

    ``agent`` overrides ``cfg.agent`` with an agent object (the spec then only names it). The
    directory is held for the whole run (:func:`~solvergym.evaluation.records.hold_run`: a
    second run on it raises ``RunLocked``)."""
    out = Path(out)
    with hold_run(out):
        return _run_held(cfg, out, agent, progress)


def _run_held(cfg: EvalConfig, out: Path, agent: Any, progress: bool) -> Path:
    run = read_run(out)
    if run is None and has_results(out):
        raise ValueError(f"{out} holds {RECORDS} but no run.json: what produced them is unknown, so no run "
                         f"adopts them; use a new --out")
    probe = cfg.make_env()
    try:
        items, digest = _instances(cfg, probe)
        workers = _workers(cfg, probe.unwrapped)
        weights = dict(getattr(probe.unwrapped, "reward_weights", None) or {})
    finally:
        probe.close()
    identity = run_identity(cfg, digest)
    run = _check_resume(out, run, identity)
    existing = []
    if run is not None:
        truncate_partial(out / RECORDS)
        existing = load_records(out)
    done = {(r["seed"], r["instance"], r["sample"]) for r in existing}
    batches = _batches(cfg, len(items))
    todo = [b for b in batches if any((b[1], i, j) not in done for i in b[2] for j in range(cfg.n_samples))]
    if not todo:
        return out
    agent = agent if agent is not None else make_agent(cfg.agent, temperature=cfg.temperature,
                                                       max_new_tokens=cfg.max_new_tokens, seed=cfg.seeds[0])
    envs: list = []
    bar, pool = None, None
    try:
        for _ in range(min(cfg.batch_instances * cfg.n_samples, len(items) * cfg.n_samples)):
            envs.append(cfg.make_env())
        if run is None:  # the run has started: only now does the directory become this run's
            for name in (RECORDS, TIMINGS):
                (out / name).unlink(missing_ok=True)
            write_run(out, {"identity": identity, "config": _jsonable(asdict(cfg)), "n_instances": len(items),
                            "reward_weights": weights, "agent_temperature": sampling_temperature(agent)})
        total = sum(len(b[2]) * cfg.n_samples for b in batches)
        bar = tqdm(total=total, initial=len(done), desc=f"eval {cfg.env_id} / {cfg.agent}", disable=not progress)
        correct = sum(1 for r in existing if r["correct"])
        pool = ThreadPoolExecutor(workers) if workers > 1 else None
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
        if bar is not None:
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
                       "source": source, "clipped": []})
    t_env += time.perf_counter() - t
    while True:
        live = [s for s in range(len(full)) if not states[s]["done"]]
        if not live:
            break
        t = time.perf_counter()
        actions, clipped = act(agent, [states[s]["obs"] for s in live], [slots[s] for s in live],
                               [states[s]["messages"] for s in live])
        for s, c in zip(live, clipped):
            states[s]["clipped"].append(c)
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
                               st["truncated"], st["messages"], st["clipped"]))
    return records, {"episodes": len(records), "agent_s": t_agent, "env_s": t_env}

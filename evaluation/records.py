"""A run directory of ``solvergym eval``, read and held: ``run.json`` (its identity), the lock that
lets one run at a time write it, and ``records.jsonl`` read back with every line checked.

The records are what the report counts, so nothing in them is taken on trust: a record that is
not the runner's shape, whose (seed, instance, sample) the run's identity does not have, whose
reward is not its components' weighted sum, or that contradicts an earlier record of the same
episode is a ``ValueError`` naming ``records.jsonl:LINE``. An exact repeat of a record (what two
writers of one directory, before the lock, or a batch written twice leave) is one episode and is
counted in ``duplicate_records``. Only a cut *last* line is tolerated: a killed run's
half-written record, dropped on reading and truncated on resume. Keys added later (``clipped``,
per turn, whether the token limit cut the completion) are checked where present; records
written before them still read.
"""
from __future__ import annotations

import fcntl
import json
import math
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import gymnasium as gym

__all__ = ["RECORDS", "TIMINGS", "CONFIG", "LOCK", "RunLocked", "hold_run", "read_run", "write_run", "read_records",
           "load_records", "check_record", "truncate_partial", "has_results", "identity_diff", "REWARD_TOLERANCE"]

RECORDS, TIMINGS, CONFIG, LOCK = "records.jsonl", "timings.jsonl", "run.json", "run.lock"
#: |reward - sum(weight * component)| allowed, relative to max(1, |reward|): the runner sums the
#: same floats in another order (per step, then per component)
REWARD_TOLERANCE = 1e-9
#: every key the runner writes into a record, with the check a report relies on
_FIELDS: dict[str, tuple[str, Any]] = {
    "seed": ("an integer", lambda v: _is_int(v)),
    "instance": ("an integer", lambda v: _is_int(v)),
    "sample": ("an integer", lambda v: _is_int(v)),
    "source": ("a string or null", lambda v: v is None or isinstance(v, str)),
    "instance_id": ("present", lambda v: True),
    "difficulty": ("present", lambda v: True),
    "level": ("an object of numbers", lambda v: isinstance(v, dict) and all(_is_num(x) for x in v.values())),
    "setting": ("an object", lambda v: isinstance(v, dict)),
    "reward": ("a finite number", lambda v: _is_num(v)),
    "components": ("an object of finite numbers",
                   lambda v: isinstance(v, dict) and all(_is_num(x) for x in v.values())),
    "correct": ("true or false", lambda v: isinstance(v, bool)),
    "format_error": ("true or false", lambda v: isinstance(v, bool)),
    "truncated": ("true or false", lambda v: isinstance(v, bool)),
    "turns": ("a non-negative integer", lambda v: _is_int(v) and v >= 0),
    "info": ("an object", lambda v: isinstance(v, dict)),
    "messages": ("a list", lambda v: isinstance(v, list)),
}
#: keys a record has only since they were added (older records lack them and still read), with
#: the check: ``clipped``, per turn, whether the token limit cut the agent's completion
_OPTIONAL: dict[str, tuple[str, Any]] = {
    "clipped": ("a list of true, false or null, one per turn",
                lambda v: isinstance(v, list) and all(x is None or isinstance(x, bool) for x in v)),
}
#: the parts of ``info`` and ``setting`` the report computes with, to the depth it reads them
_NESTED: dict[str, tuple[str, Any]] = {
    "info.tool_calls": ("a non-negative integer", lambda v: _is_int(v) and v >= 0),
    "info.metrics": ("a trace's metrics (Spring App. B.2: numbers, flags, error_type)", lambda v: _trace_ok(v)),
    "info.sandbox": ("an object whose stderr_tail is a string", lambda v: not isinstance(v, dict) or isinstance(
        v.get("stderr_tail", ""), (str, type(None)))),
    "info.last_tool_result": ("null or an object whose solver_calls are [family, ...] lists", lambda v: v is None or (
        isinstance(v, dict) and isinstance(v.get("solver_calls", []), (list, type(None))) and all(
            isinstance(c, list) and c and isinstance(c[0], str) for c in v.get("solver_calls") or []))),
    "setting.solver": ("a string or null", lambda v: v is None or isinstance(v, str)),
    "setting.tolerance": ("a string or null", lambda v: v is None or isinstance(v, str)),
}
#: what every trace row carries (``envs/logic_steps/metrics.py``'s ``trace_row``)
_TRACE_NUMBERS = ("reward", "steps", "parsed", "valid", "novel", "contradictions")
_TRACE_FLAGS = ("correct", "sat", "premises_sat")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_flag(v: Any) -> bool:
    return isinstance(v, bool) or _is_num(v)


def _trace_ok(m: Any) -> bool:
    if not isinstance(m, dict):
        return False
    scalar = all(v is None or isinstance(v, (bool, str)) or _is_num(v) for v in m.values())
    accs = all(_is_num(v) for k, v in m.items() if k == "acc" or k.endswith(("_acc", "_right", "_total")))
    return (scalar and accs and all(_is_num(m.get(k)) for k in _TRACE_NUMBERS)
            and all(_is_flag(m.get(k)) for k in _TRACE_FLAGS) and isinstance(m.get("error_type", 0), (str, type(None)))
            and isinstance(m.get("game", ""), str) and _is_flag(m.get("gate", True))
            and (m.get("premises_equivalent") is None or _is_flag(m["premises_equivalent"])))


class RunLocked(RuntimeError):
    """Another process (or another run in this one) holds the run directory."""


@contextmanager
def hold_run(run_dir: str | Path) -> Iterator[Path]:
    """Hold ``run_dir`` exclusively while the block runs (``flock`` on its ``run.lock``, never
    waiting): a second run on the same directory raises :class:`RunLocked` at once instead of
    appending a second copy of every episode. The lock goes with the process, so a killed run
    leaves the directory free."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    fh = open(run_dir / LOCK, "a")
    try:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLocked(f"another run holds {run_dir} (its lock {run_dir / LOCK}); wait for it to finish "
                            f"or use another --out") from None
        yield run_dir
    finally:
        fh.close()


def read_run(run_dir: str | Path) -> dict[str, Any] | None:
    """``run.json`` checked to be a run's (``identity`` and ``config`` objects, the config's
    seeds, samples and ks); ``None`` where there is none."""
    path = Path(run_dir) / CONFIG
    if not path.exists():
        return None
    try:
        run = json.loads(path.read_text())
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    if not (isinstance(run, dict) and isinstance(run.get("identity"), dict) and isinstance(run.get("config"), dict)):
        raise ValueError(f"{path}: not a run's configuration (an object with 'identity' and 'config')")
    cfg = run["config"]
    ok = (isinstance(cfg.get("env_id"), str) and isinstance(cfg.get("env_kwargs"), dict)
          and _is_int(cfg.get("n_samples")) and cfg["n_samples"] >= 1
          and isinstance(cfg.get("seeds"), list) and cfg["seeds"] and all(_is_int(s) for s in cfg["seeds"])
          and isinstance(cfg.get("ks"), list) and cfg["ks"] and all(_is_int(k) for k in cfg["ks"])
          and all(k in cfg for k in ("agent", "dataset", "instances", "temperature")))
    if not ok:
        raise ValueError(f"{path}: its config lacks or mistypes env_id, env_kwargs, agent, dataset, instances, "
                         f"n_samples, seeds, ks or temperature")
    for key, check in (("n_instances", _is_int), ("reward_weights", lambda w: isinstance(w, dict) and all(
            _is_num(x) for x in w.values())), ("agent_temperature", lambda t: t is None or _is_num(t))):
        if key in run and not check(run[key]):
            raise ValueError(f"{path}: {key} is mistyped ({run[key]!r})")
    return run


def write_run(run_dir: Path, run: dict[str, Any]) -> None:
    """Write ``run.json`` whole or not at all (a kill mid-write must not leave half an identity)."""
    tmp = run_dir / (CONFIG + ".tmp")
    tmp.write_text(json.dumps(run, indent=2) + "\n")
    os.replace(tmp, run_dir / CONFIG)


def has_results(run_dir: str | Path) -> bool:
    """Whether the directory holds anything a run wrote (records or timings), even a cut line."""
    return any((Path(run_dir) / name).exists() and (Path(run_dir) / name).stat().st_size > 0
               for name in (RECORDS, TIMINGS))


def identity_diff(old: dict[str, Any], new: dict[str, Any]) -> str:
    """The keys two identities differ in, as ``key old -> new``."""
    keys = sorted(set(old) | set(new))
    return ", ".join(f"{k} {_short(old.get(k))} -> {_short(new.get(k))}" for k in keys if old.get(k) != new.get(k))


def _short(v: Any) -> str:
    text = json.dumps(v, sort_keys=True, default=str)
    return text if len(text) <= 80 else text[:77] + "..."


def truncate_partial(path: Path) -> None:
    """Drop a half-written last line, so that appending continues the file cleanly."""
    if not path.exists():
        return
    with open(path, "rb+") as f:
        size = f.seek(0, os.SEEK_END)
        if not size:
            return
        f.seek(size - 1)
        if f.read(1) == b"\n":
            return
        # walk back to the last newline in blocks: a records file may be large
        end = size
        while end > 0:
            start = max(0, end - 65536)
            f.seek(start)
            block = f.read(end - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                f.truncate(start + cut + 1)
                return
            end = start
        f.truncate(0)


def _weights(run: dict[str, Any]) -> dict[str, float]:
    """The weights the env paid its components with: ``run.json``'s, or, for a run written before
    they were kept there, those of the env its config makes (a mode's own defaults included)."""
    if "reward_weights" in run:
        return run["reward_weights"]
    env = gym.make(run["config"]["env_id"], **run["config"]["env_kwargs"])
    try:
        return dict(getattr(env.unwrapped, "reward_weights", None) or {})
    finally:
        env.close()


def _n_instances(run: dict[str, Any]) -> int | None:
    if "n_instances" in run:
        return run["n_instances"]
    cfg = run["config"]
    return cfg["instances"] if cfg.get("dataset") is None and _is_int(cfg.get("instances")) else None


def check_record(rec: Any, where: str, run: dict[str, Any], weights: dict[str, float]) -> None:
    """Raise ``ValueError`` (prefixed ``where``) unless ``rec`` is a record this run wrote."""
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: a record is a JSON object, not {type(rec).__name__}")
    missing = [k for k in _FIELDS if k not in rec]
    if missing:
        raise ValueError(f"{where}: the record misses {', '.join(missing)}")
    for k, (what, ok) in _FIELDS.items():
        if not ok(rec[k]):
            raise ValueError(f"{where}: {k} must be {what}, got {_short(rec[k])}")
    for k, (what, ok) in _OPTIONAL.items():
        if k in rec and not ok(rec[k]):
            raise ValueError(f"{where}: {k} must be {what}, got {_short(rec[k])}")
    if "clipped" in rec and len(rec["clipped"]) != rec["turns"]:
        raise ValueError(f"{where}: clipped has {len(rec['clipped'])} entries for {rec['turns']} turns "
                         f"(one per turn)")
    for name, (what, ok) in _NESTED.items():
        part, k = name.split(".")
        if k in rec[part] and not ok(rec[part][k]):
            raise ValueError(f"{where}: {name} must be {what}, got {_short(rec[part][k])}")
    cfg = run["config"]
    if rec["seed"] not in cfg["seeds"]:
        raise ValueError(f"{where}: seed {rec['seed']} is not one of the run's seeds {cfg['seeds']}")
    n = _n_instances(run)
    if rec["instance"] < 0 or (n is not None and rec["instance"] >= n):
        raise ValueError(f"{where}: instance {rec['instance']} is outside 0..{'' if n is None else n - 1} "
                         f"(the run's instances)")
    if not 0 <= rec["sample"] < cfg["n_samples"]:
        raise ValueError(f"{where}: sample {rec['sample']} is outside 0..{cfg['n_samples'] - 1} (n_samples)")
    # every env pays sum(weight * component) (envs/modes/base.py); records keep the components
    # as computed, before the weights
    paid = sum(float(v) * float(weights.get(k, 1.0)) for k, v in rec["components"].items())
    if abs(rec["reward"] - paid) > REWARD_TOLERANCE * max(1.0, abs(rec["reward"])):
        raise ValueError(f"{where}: reward {rec['reward']!r} is not the weighted sum of its components ({paid!r}, "
                         f"weights {weights or 'all 1'})")


def read_records(run_dir: str | Path) -> tuple[list[dict[str, Any]], int]:
    """The complete records of a run, every line checked (module docstring), and how many exact
    repeats were dropped. No ``run.json`` beside records is an error: they cannot be checked."""
    run_dir = Path(run_dir)
    path = run_dir / RECORDS
    run = read_run(run_dir)
    if run is None:
        if has_results(run_dir):
            raise ValueError(f"{run_dir} holds {RECORDS} but no run.json: what produced them is unknown, so no run "
                             f"adopts or reports them; use a new --out")
        return [], 0
    if not path.exists():
        return [], 0
    weights = _weights(run)
    out: list[dict[str, Any]] = []
    first: dict[tuple[int, int, int], tuple[int, dict]] = {}
    repeats = 0
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                break  # the half-written last line of a killed run
            where = f"{path}:{n}"
            try:
                rec = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                raise ValueError(f"{where}: not UTF-8") from None
            except (ValueError, RecursionError) as e:
                raise ValueError(f"{where}: not JSON ({str(e)[:200]})") from None
            check_record(rec, where, run, weights)
            key = (rec["seed"], rec["instance"], rec["sample"])
            if key in first:
                line, seen = first[key]
                if seen != rec:
                    raise ValueError(f"{where}: a second record of seed {key[0]}, instance {key[1]}, sample {key[2]} "
                                     f"that differs from the one at line {line}: records of two runs are mixed")
                repeats += 1
                continue
            first[key] = (n, rec)
            out.append(rec)
    return out, repeats


def load_records(run_dir: str | Path) -> list[dict[str, Any]]:
    """The complete, checked records of a run, each episode once (:func:`read_records`)."""
    return read_records(run_dir)[0]

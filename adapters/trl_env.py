"""TRL's ``environment_factory``: a solvergym multi-turn env whose solver tools run in solvergym's sandbox.

    from solvergym.adapters.trl import trl_dataset
    from solvergym.adapters.trl_env import environment_factory

    SatTools = environment_factory("SolverTool-v0", task="sat-bench", solver="z3")
    trainer = GRPOTrainer(model=..., environment_factory=SatTools,
                          train_dataset=trl_dataset("SolverTool-v0", 256, task="sat-bench", solver="z3"), ...)

TRL makes one instance per rollout (no-argument ``__init__``), calls ``reset(**row)`` with the
dataset row, offers every other public method as a tool (typed arguments, a docstring with
``Args:``) and calls ``get_reward()`` when the rollout ends. Here:

- ``reset(**row)`` poses the row's instance (the ``solvergym_instance`` column :func:`~.trl.trl_rows`
  writes; without one, the row's ``seed``: every member of a group then gets the same instance, the
  shared key TRL's docs ask for); it returns nothing when the row already holds the prompt, else
  the env's first observation. A row whose instance cannot be posed (not JSON, nested 100,000
  levels deep, refused by the env: :func:`~.scoring.pose`, the adapters' shared reader) ends the
  episode at once: ``reset`` returns the reason, kept in ``error``; every tool answers it and
  ``get_reward()`` is 0.0.
- ``run_<solver>(code)`` (one per solver the env offers: ``run_z3``, ``run_python_sat``, ...) is
  one ``<tool_call>`` turn of the env: the program runs in the sandbox (isolated, time- and
  memory-limited, never in the trainer's process, which is where TRL runs its own tools) and
  the tool response is what the env's observation says.
- ``answer(answer)`` ends the episode with the final answer, scored by the env.
- ``get_reward()`` is the episode's return (every reward the env paid); an episode the model left
  without an answer is ended as the env ends one that runs out of turns.

A tool called after the episode ended, or with an argument that is not text, gets a message back
and changes nothing; nothing a model does here raises into the trainer.
"""
from __future__ import annotations

from typing import Any

import gymnasium as gym

from ..registry import resolve_env_id
from .scoring import INSTANCE_COLUMN, BadRow, pose, reads_row

__all__ = ["environment_factory"]

_ENDED = "The episode has ended; nothing was run."


def _tool_method(solver: str):
    def run(self, code: str) -> str:
        return self._call(f"<tool_call>\n{code}\n</tool_call>", code)

    run.__name__ = f"run_{solver.replace('-', '_')}"
    run.__doc__ = (f"Run a Python program that uses {solver} in the sandbox and return its output.\n\n"
                   f"Args:\n    code: the complete Python program; it must print what it finds.\n")
    return run


def environment_factory(env_id: str = "SolverTool-v0", **env_kwargs: Any) -> type:
    """A class for ``GRPOTrainer(environment_factory=...)`` posing ``env_id`` (a multi-turn env
    with solver tools, ``SolverTool-v0`` or ``SolverLogic-v0`` with ``mode="tool"``); see the module
    docstring. The env is checked here, so a bad id or keyword fails before training starts."""
    env_id = resolve_env_id(env_id)
    probe = gym.make(env_id, **env_kwargs).unwrapped
    fixed = getattr(probe, "fixed_solver", None)
    solvers = (fixed,) if fixed else tuple(getattr(probe, "solvers", ()) or ())  # the prompt names one of these
    probe.close()
    if not solvers:
        raise ValueError(f"{env_id} with {env_kwargs} offers no solver tools (a tool-mode env does: SolverTool-v0)")

    def __init__(self) -> None:
        self.env = gym.make(env_id, **env_kwargs).unwrapped
        self.done, self.total, self.last, self.error = True, 0.0, "", ""

    def reset(self, **row: Any) -> str | None:
        instance = row.get(INSTANCE_COLUMN)
        seed = row.get("seed")
        self.done, self.total, self.error = False, 0.0, ""
        try:
            if instance is not None:
                obs, _ = pose(self.env, instance)
            else:  # the group's shared seed (or the env's own draw); a seed the env refuses is the row's fault
                seed = seed if isinstance(seed, int) and not isinstance(seed, bool) else None
                obs, _ = reads_row("the row's seed")(self.env.reset)(seed=seed)
        except BadRow as e:  # the row's fault: this episode pays 0.0 and says why, the run goes on
            self.done, self.error = True, str(e)
            self.last = f"The row cannot be posed: {self.error}"
            return self.last
        self.last = obs
        return None if row.get("prompt") else obs

    def _call(self, action: str, argument: Any) -> str:
        if self.error:
            return f"The row cannot be posed: {self.error}"
        if self.done:
            return _ENDED
        if not isinstance(argument, str):
            return f"The argument must be text, got {type(argument).__name__}; nothing was run."
        obs, reward, terminated, truncated, _ = self.env.step(action)
        self.total += float(reward)
        self.done = bool(terminated or truncated)
        self.last = obs
        return obs

    def answer(self, answer: str) -> str:
        """Give the final answer and end the episode.

        Args:
            answer: the final answer in the format the problem asks for (for example ```answer yes```).
        """
        if isinstance(answer, str) and "```" not in answer:
            answer = f"```answer\n{answer}\n```"
        out = self._call(answer, answer)
        return out if self.done else "That is not a final answer: " + out

    def get_reward(self) -> float:
        """The episode's return; an unanswered episode is ended as one that ran out of turns."""
        while not self.done:
            self._call("", "")  # a turn without a tool call or an answer: refused, until the budget ends it
        return self.total

    def close(self) -> None:
        self.env.close()

    namespace: dict[str, Any] = {"__init__": __init__, "reset": reset, "_call": _call, "answer": answer,
                                 "get_reward": get_reward, "_close": close, "__module__": __name__,
                                 "__doc__": f"{env_id} {env_kwargs} for TRL's environment_factory (solvergym)."}
    for solver in solvers:
        method = _tool_method(solver)
        namespace[method.__name__] = method
    return type(f"{env_id.replace('-', '_')}Environment", (), namespace)

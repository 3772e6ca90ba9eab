"""solvergym in the trainers people already use: thin layers over an env's own ``step``.

- :mod:`.scoring`: :class:`~.scoring.EnvScorer`, a completion scored by the env it came from
  (``reset(options={"instance": ...})`` then ``step(completion)``), never a second
  implementation of a reward; and :func:`~.scoring.task_rows`, the rows every exporter writes.
- :mod:`.trl`: TRL's reward-function signature (:func:`~.trl.reward_fn`) and its dataset rows
  (:func:`~.trl.trl_rows`, ``{"prompt": [...], ...}``).
- :mod:`.trl_env`: TRL's ``environment_factory`` (:func:`~.trl_env.environment_factory`): a tool
  env's solver tools as typed methods whose programs run in solvergym's sandbox, and ``get_reward``.
- :mod:`.reasoning_gym`: the single-turn envs registered as reasoning-gym datasets
  (:func:`~.reasoning_gym.register`), ``score_answer`` the env's reward.
- :mod:`.openenv`: any env as an OpenEnv server (``solvergym serve``) and its client.
- :mod:`.verl`: verl's ``compute_score`` (sync and async) and its parquet rows
  (:func:`~.verl.write_verl_parquet`).
- :mod:`.verl_tool`: verl's multi-turn tool form (:class:`~.verl_tool.SolverGymTool`, a ``BaseTool``
  whose programs run in solvergym's sandbox), its tool YAML, rows with ``tools_kwargs`` and the
  episode's return as ``compute_score``.

Each adapter imports its peer package only where it needs it (the dataset builders), so scoring
works with the peer installed or not.
"""
from .scoring import EnvScorer, Score, task_rows

__all__ = ["EnvScorer", "Score", "task_rows"]

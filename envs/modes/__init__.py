"""The modes: env classes built once on any :class:`~solvergym.envs.problem.Problem`.

- :class:`~.single.SingleTurnEnv`: one prompt, one answer, scored by the problem
  (``SolverSAT-v0``, ``SolverSATBench-v0``, any registered problem).
- :class:`~.tool.SolverToolEnv`: SAT-RL's multi-turn solver tool use over any problem with
  solvers (``SolverTool-v0(task=name)``).

The step-verified mode of the Spring families is :class:`~solvergym.envs.logic_steps.env.StepVerifiedEnv`,
a single-turn env over a :class:`~solvergym.envs.logic_steps.problem.StepProblem` whose
``mode="step"`` verifies one step per action (the step verifier keeps the ``Family`` interface);
its trace mode is the single-turn mode posing that problem.
"""

"""Training: rollouts with token masks, advantage estimators, losses and KL (GRPO, DAPO,
REINFORCE++), the Accelerate trainer and its schedules, the papers' presets, the configuration,
SFT and plots of a run. Nothing in ``envs/`` imports from here; each module imports torch itself,
so that ``import solvergym.algorithms.config`` does not."""

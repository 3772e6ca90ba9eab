"""Rollouts with token masks, advantage estimators, losses and the Accelerate trainer.

Empty for now: the "agents and trainer" issue fills it (GRPO, DAPO, REINFORCE++). Nothing in
``envs/`` imports from here.
"""

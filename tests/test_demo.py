"""``solvergym demo``'s training recipe has something to learn from (issue #24 item 7): the
embedded model alone never writes an answer within the demo's budget, so every reward was -1,
every group's rewards equal and the gradient 0; after the demo's SFT warm-up the first GRPO step
sees groups whose rewards differ and takes a nonzero gradient step. One GRPO step, the demo's
configuration otherwise (cli/demo.py)."""
import pytest

from solvergym.cli.demo import DEMO_GRPO, demo_trainer, validate, warm_up


@pytest.mark.slow
def test_the_demo_recipe_gives_grpo_unequal_rewards_and_a_gradient(tmp_path):
    trainer = demo_trainer(tmp_path / "demo", steps=1, progress=False)
    assert trainer.cfg.group_size == DEMO_GRPO["group_size"] and trainer.cfg.save_every == 0
    sft = warm_up(trainer, progress=False)
    assert len(sft) == 2 and sft[-1]["loss"] < sft[0]["loss"]
    # greedy, the warmed-up model now answers in the required form (the model as loaded: never)
    assert validate(trainer, "warm", instances=4)["answered"] > 0
    assert (tmp_path / "demo" / "validation" / "warm" / "records.jsonl").exists()  # the evaluation runner's
    step = trainer.train_step()
    assert step["frac_reward_zero_std"] < 1.0 and step["grad_norm"] > 0 and step["groups_trained"] == 2
    assert not (tmp_path / "demo" / "final").exists() and not (tmp_path / "demo" / "checkpoints").exists()

"""What a TRL or verl user reaches for in the trainer: TRL's config names, Accelerate's trackers
(TensorBoard for real), the warning when no group has a signal, and the update skipped then."""
import json
import sys
import warnings
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
import toy_env  # noqa: E402

from solvergym.algorithms.config import make_config  # noqa: E402
from solvergym.algorithms.tracking import tracker_names  # noqa: E402
from solvergym.algorithms.trainer import Trainer  # noqa: E402
from solvergym.cli.main import main  # noqa: E402

toy_env.register()
TINY = dict(env="TestLetter-v0", env_kwargs={"turns": 1}, prompts_per_step=2, group_size=2, max_new_tokens=6,
            max_total_tokens=256, micro_batch_size=8, lr=1e-4, progress=False, save_final=False)


# ------------------------------------------------------------------ TRL's names
def test_trl_names_set_the_fields_they_name_in_a_file_as_keywords_and_as_overrides(tmp_path):
    cfg_file = tmp_path / "trl.yaml"
    cfg_file.write_text("learning_rate: 3.0e-6\nnum_generations: 4\nmax_completion_length: 512\nbeta: 0.04\n"
                        "epsilon: 0.2\nepsilon_high: 0.28\nnum_iterations: 2\nuse_vllm: true\nbf16: true\n"
                        "loss_type: dr_grpo\nscale_rewards: false\nadam_beta2: 0.95\nlr_scheduler_type: cosine\n")
    cfg = make_config("grpo", file=cfg_file)
    assert (cfg.lr, cfg.group_size, cfg.max_new_tokens, cfg.kl_coef, cfg.eps_low, cfg.eps_high, cfg.ppo_epochs) == \
        (3e-6, 4, 512, 0.04, 0.2, 0.28, 2)
    assert (cfg.rollout_backend, cfg.mixed_precision, cfg.loss_agg, cfg.adv_std, cfg.adam_betas, cfg.lr_schedule) == \
        ("vllm", "bf16", "seq-mean-token-sum-norm", "none", (0.9, 0.95), "cosine")
    # --set's text values, translated where TRL's value differs from the field's
    over = make_config("grpo", overrides={"learning_rate": "2e-5", "loss_type": "dapo", "use_vllm": "false",
                                          "epsilon": "0.3", "adam_beta1": "0.8"})
    assert (over.lr, over.loss_agg, over.rollout_backend, over.adam_betas) == (2e-5, "token-mean", "hf", (0.8, 0.999))
    assert over.eps_low == over.eps_high == 0.3  # TRL: epsilon_high defaults to epsilon
    assert make_config("grpo", num_generations=6).group_size == 6


def test_trl_names_refused_with_the_reason_and_did_you_mean(tmp_path):
    with pytest.raises(ValueError, match=r"did you mean 'num_generations' \(TRL's name for group_size\)"):
        make_config("grpo", overrides={"num_generaions": "4"})
    bad = tmp_path / "bad.yaml"
    bad.write_text("learning_rte: 1.0e-6\n")
    with pytest.raises(ValueError, match=r"config file key: .*'learning_rte'.*'learning_rate' \(TRL's name for lr\)"):
        make_config("grpo", file=bad)
    with pytest.raises(ValueError, match="lr is given twice: as lr and as learning_rate"):
        make_config("grpo", overrides={"lr": "1e-5", "learning_rate": "2e-5"})
    with pytest.raises(ValueError, match="per_device_train_batch_size has no one field here: .*micro_batch_size"):
        make_config("grpo", overrides={"per_device_train_batch_size": "4"})
    with pytest.raises(ValueError, match="loss_type='bnpo' has no counterpart here"):
        make_config("grpo", overrides={"loss_type": "bnpo"})


def test_train_cli_takes_trl_names_in_set_and_says_one_line_for_a_typo(capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", "--set", "num_generation=4", "--steps", "1"])
    assert "did you mean 'num_generations' (TRL's name for group_size)" in str(e.value)
    with pytest.raises(SystemExit) as e:  # a TRL name with a bad value: the translation's message, one line
        main(["train", "--set", "use_vllm=maybe"])
    assert "TRL's use_vllm is true or false" in str(e.value) and "\n" not in str(e.value)


# ------------------------------------------------------------------ trackers
def test_report_to_names_are_checked_before_a_run():
    assert tracker_names("none") == [] and tracker_names([]) == []
    assert tracker_names("tensorboard") == ["tensorboard"] == tracker_names("auto")
    assert tracker_names("tensorboard,tensorboard") == ["tensorboard"]
    with pytest.raises(ValueError, match="did you mean 'tensorboard'"):
        tracker_names("tensorbord")
    for name in ("wandb", "mlflow"):
        try:
            __import__(name)
        except ImportError:
            with pytest.raises(ValueError, match=f"{name!r} is not installed"):
                tracker_names(name)


@pytest.mark.slow
def test_tensorboard_event_files_hold_the_json_log_scalars(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    trainer = Trainer(make_config("grpo", out_dir=str(tmp_path), steps=2, report_to="tensorboard", **TINY))
    trainer.train()
    rows = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in rows] == [0, 1] and all(r["update_skipped"] == 0.0 for r in rows)
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    for key in ("reward", "loss", "step_s", "frac_reward_zero_std"):
        logged = [(e.step, e.value) for e in events.Scalars(key)]
        assert logged == [(r["step"], pytest.approx(r[key], rel=1e-6)) for r in rows], key
    assert "tb" in {p.name for p in tmp_path.iterdir()} and not (tmp_path / "mlruns").exists()


# ------------------------------------------------------------------ no learning signal
@pytest.mark.slow
def test_steps_without_signal_warn_once_and_skip_the_update(tmp_path):
    # the letter is never written: every reward 0, every group equal, every advantage 0
    kw = {**TINY, "env_kwargs": {"turns": 1, "letter": "\u00a7"}, "weight_decay": 0.5, "zero_signal_steps": 2,
          "report_to": "none", "warmup_steps": 8, "kl_coef": 0.0}
    ends = {}
    for skip in (True, False):
        trainer = Trainer(make_config("grpo", out_dir=str(tmp_path / str(skip)), steps=2, skip_zero_signal=skip, **kw))
        before = {k: v.detach().clone() for k, v in trainer.unwrapped.state_dict().items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rows = trainer.train()
        said = [str(w.message) for w in caught if "rewards have been equal for" in str(w.message)]
        assert len(said) == 1 and said[0].startswith("step 1: ") and "solvergym sft" in said[0]
        assert all(r["frac_reward_zero_std"] == 1.0 for r in rows)
        # the learning-rate warm-up advances by the optimizer steps skipped or taken alike
        assert [r["lr"] for r in rows] == pytest.approx([1e-4 * (s + 2) / 8 for s in range(2)])
        after = trainer.unwrapped.state_dict()
        ends[skip] = (rows, max((after[k] - before[k]).abs().max().item() for k in before))
    (skipped, moved_skip), (stepped, moved_step) = ends[True], ends[False]
    assert [r["update_skipped"] for r in skipped] == [1.0] * 2 and [r["update_skipped"] for r in stepped] == [0.0] * 2
    assert all(r["time/backward_s"] == 0.0 and r["time/forward_s"] == 0.0 for r in skipped)
    assert all(r["time/backward_s"] > 0.0 for r in stepped)
    # skipped: the weights as loaded; stepped with a zero gradient: AdamW's weight decay moved them
    assert moved_skip == 0.0 and moved_step > 0.0


def test_a_kl_term_in_the_loss_is_a_gradient_even_without_advantages():
    from solvergym.algorithms.zero_signal import no_gradient

    zero = torch.zeros(4, 6)
    assert no_gradient(zero, kl_in_loss=False, reduce=lambda x: x)
    assert not no_gradient(zero, kl_in_loss=True, reduce=lambda x: x)
    assert not no_gradient(zero.index_fill(1, torch.tensor([3]), 0.5), kl_in_loss=False, reduce=lambda x: x)
    # another process's advantages count: the sum over processes decides for all of them
    assert not no_gradient(zero, kl_in_loss=False, reduce=lambda x: x + 1)

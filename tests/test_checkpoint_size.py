"""What a short run writes: no checkpoint with ``save_every=0``, the final model at about the size of
its parameters, nothing heavy with ``save_final=False`` (issue #24 item 8: a 1-step run used to
write a 1.6 GB checkpoint beside the 540 MB model). Resume from a checkpoint: tests/test_trainer.py."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import toy_env  # noqa: E402

from solvergym.algorithms.config import make_config  # noqa: E402
from solvergym.algorithms.trainer import Trainer  # noqa: E402

toy_env.register()
TINY = dict(env="TestLetter-v0", env_kwargs={"turns": 1}, steps=1, prompts_per_step=2, group_size=2,
            max_new_tokens=4, max_total_tokens=512, micro_batch_size=8, lr=1e-4, progress=False)


def _bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


@pytest.mark.slow
def test_a_one_step_run_writes_its_model_once_and_no_checkpoint(tmp_path):
    trainer = Trainer(make_config("grpo", out_dir=str(tmp_path / "run"), **TINY))  # save_every=0: the default
    trainer.train()
    params = trainer.unwrapped.parameters()  # tied weights are one parameter
    param_bytes = sum(p.numel() * p.element_size() for p in params)
    run = tmp_path / "run"
    assert not (run / "checkpoints").exists()
    final = _bytes(run / "final")
    assert param_bytes <= final < 1.2 * param_bytes  # the weights once, in their dtype, no optimizer state
    assert _bytes(run) < 1.2 * param_bytes  # before: 2,156,127,643 bytes (checkpoint 1,614,454,041)

    bare = Trainer(make_config("grpo", out_dir=str(tmp_path / "bare"), save_final=False, **TINY))
    bare.train()
    # the metrics, and TensorBoard's log where it is installed (report_to="auto")
    written = sorted(p.name for p in (tmp_path / "bare").iterdir())
    assert written in (["metrics.jsonl"], ["metrics.jsonl", "tb"])
    assert "tb" not in written or _bytes(tmp_path / "bare" / "tb") < 1_000_000

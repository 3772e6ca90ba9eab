"""SolverOR-v0's wording does not say whether an instance is feasible (issue 23, item 4).

A policy trained on generated problems learns any shortcut to the "infeasible" answer, and a
sentence or a word that only infeasible instances contain is one: before this check, product
mix's "Management insists that at least ..." appeared in half of the infeasible prompts and in no
feasible one, and every infeasible prompt had one requirement more than a feasible one with the
same knobs. So, for every family:

- a bag-of-words classifier (multinomial naive Bayes on which words occur, and L2 logistic
  regression on how often, numpy only)
  over 400 seeded prompts at ``infeasible_ratio=0.5`` predicts feasibility, under 5-fold
  cross-validation, no better than the majority class plus 5 points. Its tokens are the
  lowercase words of the question with every number dropped, so only the wording counts: the
  numbers are what a solver, or a reader who models the problem, must use to tell (run this
  file as a script for the same table with number tokens kept, a report rather than a check);
- an infeasible instance and a feasible one drawn from the same seed and knobs state the same
  number of requirements and the same text once their numbers (and the names of the items a
  requirement names) are blanked out.

``nice -n 19 python tests/test_or_text_tell.py`` prints the accuracy table for both token sets.
"""
from __future__ import annotations

import functools
import re
import sys

import numpy as np
import pytest

from solvergym.envs.opt import FAMILIES, generate

NAMES = list(FAMILIES)
#: prompts per family, the share of infeasible ones, the cross-validation folds
N, RATIO, FOLDS = 400, 0.5, 5
#: how far above the majority-class rate a classifier may score by chance (about two standard
#: errors of an accuracy measured on 400 prompts)
MARGIN = 0.05
#: a ratio above 0 whose draw is (all but) never infeasible: the feasible twin of a ratio-1 draw
TINY = 1e-12
RULES_LEAD = "The following requirements also apply:"
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def knobs(seed: int) -> dict:
    """The generator settings of prompt ``seed``: the default size, 0-2 side requirements and
    irrelevant facts on every other prompt, so that every knob the env varies is represented."""
    return {"size": 3, "side_constraints": seed % 3, "irrelevant_facts": seed % 2 == 1}


@functools.lru_cache(maxsize=None)
def corpus(family: str) -> tuple[tuple[str, ...], np.ndarray]:
    """The questions of ``N`` seeded instances and whether each is infeasible (1) or not (0)."""
    texts, labels = [], []
    for seed in range(N):
        inst = generate(family, np.random.default_rng(seed), infeasible_ratio=RATIO, **knobs(seed))
        texts.append(inst.question)
        labels.append(int(inst.status == "infeasible"))
    return tuple(texts), np.array(labels)


def tokens(text: str, numbers: bool = False) -> list[str]:
    """Lowercase word tokens; with ``numbers`` also every number as a token of its own."""
    return re.findall(r"[a-z]+|\d+(?:\.\d+)?" if numbers else r"[a-z]+", text.lower())


def count_matrix(texts, numbers: bool = False) -> np.ndarray:
    docs = [tokens(t, numbers) for t in texts]
    vocab = {w: k for k, w in enumerate(sorted({w for d in docs for w in d}))}
    X = np.zeros((len(docs), len(vocab)))
    for i, d in enumerate(docs):
        for w in d:
            X[i, vocab[w]] += 1
    return X


def naive_bayes(Xtr, ytr, Xte) -> np.ndarray:
    """Multinomial naive Bayes with add-one smoothing over binarised counts (whether a word
    occurs: on raw counts one telling word drowns in the long prompts' other words, and the
    counts are the logistic regression's)."""
    Xtr, Xte = np.minimum(Xtr, 1), np.minimum(Xte, 1)
    scores = []
    for c in (0, 1):
        rows = Xtr[ytr == c]
        prior = np.log(max(len(rows), 1) / len(Xtr))
        theta = np.log((rows.sum(0) + 1.0) / (rows.sum() + Xtr.shape[1]))
        scores.append(prior + Xte @ theta)
    return (scores[1] > scores[0]).astype(int)


def logistic(Xtr, ytr, Xte, l2: float = 1.0, iters: int = 25) -> np.ndarray:
    """L2-regularised logistic regression on standardised log counts, fitted by Newton steps."""
    F = np.log1p(Xtr)
    mu, sd = F.mean(0), F.std(0) + 1e-9
    A = np.hstack([(F - mu) / sd, np.ones((len(F), 1))])
    B = np.hstack([(np.log1p(Xte) - mu) / sd, np.ones((len(Xte), 1))])
    w = np.zeros(A.shape[1])
    reg = np.full(A.shape[1], l2)
    reg[-1] = 0.0  # no penalty on the intercept
    for _ in range(iters):
        p = 1.0 / (1.0 + np.exp(-np.clip(A @ w, -30, 30)))
        grad = A.T @ (p - ytr) + reg * w
        hess = (A * (p * (1 - p))[:, None]).T @ A + np.diag(reg + 1e-9)
        w -= np.linalg.solve(hess, grad)
    return (B @ w > 0).astype(int)


CLASSIFIERS = {"naive Bayes": naive_bayes, "logistic": logistic}


def cv_accuracy(X: np.ndarray, y: np.ndarray, fit_predict) -> float:
    """Accuracy over ``FOLDS``-fold cross-validation (each prompt tested once, folds fixed)."""
    order = np.random.default_rng(0).permutation(len(y))
    right = 0
    for fold in np.array_split(order, FOLDS):
        train = np.setdiff1d(order, fold)
        right += int((fit_predict(X[train], y[train], X[fold]) == y[fold]).sum())
    return right / len(y)


def report(family: str, numbers: bool = False) -> dict:
    texts, y = corpus(family)
    X = count_matrix(texts, numbers)
    out = {"base": max(y.mean(), 1 - y.mean()), "infeasible": int(y.sum())}
    out.update({name: cv_accuracy(X, y, f) for name, f in CLASSIFIERS.items()})
    return out


def names(obj) -> set[str]:
    """The named items of a family's data: every string inside its lists (products, agents,
    arcs' ends...), which a requirement may name."""
    if isinstance(obj, dict):
        return set().union(*(names(v) for v in obj.values()))
    if isinstance(obj, list):
        return set().union(*(names(v) if not isinstance(v, str) else {v} for v in obj))
    return set()


def shape(question: str, data: dict) -> str:
    """``question`` with its named items blanked to ``@`` and its numbers to ``#``."""
    for name in sorted(names(data), key=len, reverse=True):
        question = re.sub(re.escape(name), "@", question, flags=re.IGNORECASE)
    return NUMBER.sub("#", question)


def requirement_lines(question: str) -> list[str]:
    """The stated side requirements: the list under :data:`RULES_LEAD` (none without it)."""
    if RULES_LEAD not in question:
        return []
    block = question.split(RULES_LEAD, 1)[1].split("\n\n", 1)[0]
    return [line for line in block.splitlines() if line.startswith("- ")]


# --------------------------------------------------------------------------- the checks
def test_the_classifiers_find_a_planted_tell():
    """The detector works: one word added to the infeasible half is found almost surely."""
    texts, y = corpus("product_mix")
    planted = [t + (" Note this." if label else " Mind this.") for t, label in zip(texts, y)]
    X = count_matrix(planted)
    for name, f in CLASSIFIERS.items():
        assert cv_accuracy(X, y, f) >= 0.95, name


@pytest.mark.slow
@pytest.mark.parametrize("family", NAMES)
def test_a_bag_of_words_classifier_cannot_tell_feasibility(family):
    """Wording only (numbers dropped): both classifiers within MARGIN of the majority class."""
    texts, y = corpus(family)
    assert 0.4 <= y.mean() <= 0.6  # the ratio is honoured, so the base rate is near a half
    r = report(family)
    for name in CLASSIFIERS:
        assert r[name] <= r["base"] + MARGIN, (family, name, r)


@pytest.mark.parametrize("family", NAMES)
def test_infeasible_and_feasible_twins_differ_only_in_numbers(family):
    """Same seed and knobs, one drawn infeasible (ratio 1) and one feasible (a ratio above 0 that
    draws feasible): the same number of stated requirements and, numbers and named items blanked
    (assignment's requirements have no number: its two versions differ in whom they name), the
    same text."""
    twins = 0
    for seed in range(12):
        for sides in (0, 2):
            bad = generate(family, np.random.default_rng(seed), side_constraints=sides, infeasible_ratio=1.0)
            good = generate(family, np.random.default_rng(seed), side_constraints=sides, infeasible_ratio=TINY)
            assert bad.status == "infeasible" and good.status == "optimal"
            if bad.extra["attempt"] != good.extra["attempt"]:
                continue  # one of the two discarded a draw the other kept: not the same base problem
            twins += 1
            assert len(requirement_lines(bad.question)) == len(requirement_lines(good.question)), (seed, sides)
            assert shape(bad.question, bad.data) == shape(good.question, good.data), (seed, sides)
    assert twins >= 12, twins  # most pairs share their draw, so the check is not vacuous


def test_the_pivot_knob():
    """``pivot=True`` states the feasible pivot at ratio 0 too (for pipelines that mix ratios);
    ``pivot=False`` is the earlier shape, where a contradiction is one requirement more and so
    the sentence count tells; anything else is refused."""
    compared = 0
    for family in NAMES:
        rng = np.random.default_rng
        plain = generate(family, rng(3), side_constraints=1)
        always = generate(family, rng(3), side_constraints=1, pivot=True)
        twin = generate(family, rng(3), side_constraints=1, infeasible_ratio=TINY)
        assert always.to_json() == twin.to_json(), family  # pivot=True at ratio 0 is any ratio above 0
        legacy = generate(family, rng(3), side_constraints=1, infeasible_ratio=1.0, pivot=False)
        assert legacy.status == "infeasible"
        if legacy.extra["attempt"] == plain.extra["attempt"] == 1:  # the same draw, one contradiction more
            assert len(requirement_lines(legacy.question)) == len(requirement_lines(plain.question)) + 1, family
            compared += 1
    assert compared >= 8, compared
    for bad in ("yes", 1, 0.0):
        with pytest.raises(ValueError, match="pivot"):
            generate("product_mix", np.random.default_rng(0), pivot=bad)


def main() -> int:
    print("Feasibility predicted from the question's bag of words: 5-fold CV accuracy on "
          f"{N} prompts per family (infeasible_ratio={RATIO}), against the majority-class rate.\n")
    print("| family | infeasible | base | NB words | LR words | NB +numbers | LR +numbers |")
    print("|---|---|---|---|---|---|---|")
    for family in NAMES:
        w, n = report(family), report(family, numbers=True)
        print(f"| {family} | {w['infeasible']} | {w['base']:.3f} | {w['naive Bayes']:.3f} | {w['logistic']:.3f} "
              f"| {n['naive Bayes']:.3f} | {n['logistic']:.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The puzzle families of Synthetic-Logic (n-queens, sudoku, magic square, latin square, futoshiki)
after issue 43: the solution lists they are generated and looked up from, the shape a prompt shows
(the same whatever the label), the chance line of the solving query, and the knobs that have no
critical window. ``tests/test_blind_policies.py`` measures what the shapes are for (no classifier
over the prompt predicts a label, no constant answer beats a guess); here their pieces."""
from __future__ import annotations

import math
import re
from collections import Counter

import numpy as np
import pytest

from solvergym.envs.logic.family import family_class
from solvergym.envs.logic.families.futoshiki import FutoshikiProblem
from solvergym.envs.logic.families.latin import latin_index, latin_squares, latin_violation
from solvergym.envs.logic.families.magic import MagicSquareProblem, magic_squares
from solvergym.envs.logic.families.nqueens import queens_solutions
from solvergym.envs.logic.families.sudoku import SudokuProblem, sudoku_grids
from solvergym.envs.logic.model import solve_count

PUZZLES = ["n-queens", "sudoku", "magic-square", "latin-square", "futoshiki"]


def _rows(flat, n):
    return [[int(v) for v in flat[r * n:(r + 1) * n]] for r in range(n)]


# -- the solution lists (built without a solver) ---------------------------------------------------
def test_latin_squares_are_all_the_latin_squares():
    # OEIS A002860: 1, 2, 12, 576, 161280
    for n, total in [(1, 1), (2, 2), (3, 12), (4, 576), (5, 161280)]:
        table = latin_squares(n)
        assert table.shape == (total, n * n) and len({row.tobytes() for row in table}) == total
        step = max(1, total // 500)
        assert all(latin_violation(_rows(row, n)) is None for row in table[::step])


def test_sudoku_grids_are_the_288_four_by_four_grids():
    grids = sudoku_grids(2)
    assert grids.shape == (288, 16) and len({g.tobytes() for g in grids}) == 288
    empty = {"n": 2, "grid": [[0] * 4 for _ in range(4)]}
    assert all(SudokuProblem.check_witness(empty, _rows(g, 4)) is None for g in grids)


def test_magic_squares_are_8_of_order_3_and_7040_of_order_4():
    for n, total in [(3, 8), (4, 7040)]:
        table = magic_squares(n)
        assert table.shape == (total, n * n) and len({row.tobytes() for row in table}) == total
        assert all(MagicSquareProblem.check_witness({"n": n, "givens": []}, _rows(row, n)) is None for row in table)


def test_queens_solutions_are_the_known_counts():
    assert [len(queens_solutions(n)) for n in range(4, 11)] == [2, 10, 4, 40, 92, 352, 724]


@pytest.mark.parametrize("family,knobs", [("latin-square", {"n": 4, "given": 6}), ("latin-square", {"n": 5, "given": 10}),
                                          ("sudoku", {"n": 2, "given": 5}),
                                          ("futoshiki", {"n": 4, "given": 2, "inequalities": 5}),
                                          ("futoshiki", {"n": 5, "given": 5, "inequalities": 7}),
                                          ("magic-square", {"n": 3, "givens": 2}), ("magic-square", {"n": 4, "givens": 6})])
def test_the_lookups_that_place_a_shape_agree_with_the_solver(family, knobs):
    """The window is measured by looking labels up among the listed solutions: the same labels
    the solver gives (both labels occur among the draws)."""
    cls = family_class(family)
    problem, k = cls(query="counting"), cls.Knobs.make(**knobs)
    rng = np.random.default_rng(7)
    labels = Counter()
    for i in range(60):
        data = problem.planted_data(k, rng) if i % 3 == 0 else problem.random_data(k, rng, problem.draw_shape(k, rng))
        truth = solve_count(cls.encode(data), limit=1)[0] > 0
        if family in ("futoshiki", "magic-square"):
            looked_up = problem._completes_data(data)
        else:
            looked_up = problem._completes(k, [v for row in data["grid"] for v in row])
        assert looked_up == truth, data
        labels[truth] += 1
    assert labels[True] and labels[False]


def test_the_futoshiki_lookup_reads_the_clues():
    index = latin_index(3)
    # 1 2 3 / 2 3 1 / 3 1 2 and its relabellings: a clue cell 0 < cell 1 holds in half of the 12 squares
    assert index.completes([0] * 9)
    assert index.completes([1] + [0] * 8, [(0, 1)]) and not index.completes([3] + [0] * 8, [(0, 1)])
    assert not index.completes([0] * 9, [(0, 1), (1, 2), (2, 0)])  # a cycle of clues


# -- the shape: what the prompt shows, whatever the label -------------------------------------------
def _tokens(problem, data) -> Counter:
    """The prompt's bag of words (what the classifiers of evaluation.blind read)."""
    return Counter(re.findall(r"\w+", problem.statement(data).lower()))


@pytest.mark.parametrize("family", PUZZLES)
def test_every_draw_at_a_shape_shows_the_same_words(family):
    """A shape fixes the prompt's bag of words (so its length and numbers too): the random draws
    at it, of either label, and the planted one read alike; only the arrangement differs."""
    cls = family_class(family)
    problem = cls(query="decision")
    knobs = cls.Knobs.make()
    rng = np.random.default_rng(3)
    for _ in range(5):
        shape = problem.draw_shape(knobs, rng)
        draws = [problem.random_data(knobs, rng, shape) for _ in range(12)] + [problem.planted_data(knobs, rng, shape)]
        labels = {solve_count(cls.encode(d), limit=1)[0] > 0 for d in draws}
        assert {True} <= labels  # the planted draw completes
        words = [_tokens(problem, d) for d in draws]
        assert all(w == words[0] for w in words), family
        texts = [problem.statement(d) for d in draws]
        assert len({len(t) for t in texts}) == 1


@pytest.mark.parametrize("family", PUZZLES)
def test_the_decision_draws_shapes_where_both_labels_are_common(family):
    cls = family_class(family)
    problem = cls(query="decision")
    for knobs in cls.knob_levels():
        rng = np.random.default_rng(11)
        shape = problem.draw_shape(knobs, rng)
        labels = [solve_count(cls.encode(problem.random_data(knobs, rng, shape)), limit=1)[0] > 0 for _ in range(40)]
        assert 0.05 <= np.mean(labels) <= 0.95, (knobs, np.mean(labels))


# -- the solving query's chance line ---------------------------------------------------------------
@pytest.mark.parametrize("family,knobs,space", [("n-queens", {"n": 5, "pre": 2}, 10), ("magic-square", {"n": 3, "givens": 2}, 8),
                                                ("latin-square", {"n": 3, "given": 3}, 12), ("sudoku", {"n": 2, "given": 6}, 288),
                                                ("futoshiki", {"n": 3, "given": 1, "inequalities": 3}, 12)])
def test_the_uniform_guess_draws_from_exactly_its_witness_space(family, knobs, space):
    """``random_witness`` is uniform over ``witness_space`` answers, each a solution of the empty
    puzzle (a guess that knows the rules and not the instance), written as the parser reads it."""
    cls = family_class(family)
    problem = cls(query="solving")
    inst = problem.generate(cls.Knobs.make(**knobs), np.random.default_rng(0))
    assert problem.witness_space(inst.data) == space
    rng = np.random.default_rng(1)
    seen = Counter(problem.random_witness(inst.data, rng) for _ in range(60 * space))
    assert len(seen) == space
    # uniform: every answer within 5 standard deviations of its expected 60 draws
    assert all(abs(k - 60) <= 5 * math.sqrt(60) for k in seen.values()), seen.most_common(3)
    for text in seen:
        witness, why = problem.parse_witness(inst.data, text)
        assert witness is not None and problem.format_witness(inst.data, witness) == text, why
    right = sum(problem.check_witness(inst.data, problem.parse_witness(inst.data, t)[0]) is None for t in seen)
    count = solve_count(cls.encode(inst.data), limit=None)[0]
    assert right == count  # every right answer is one the guess can draw
    assert problem.chance_reward(inst) == pytest.approx(0.1 + count / space - (1 - count / space) * 1.1)


def test_large_orders_fall_back_to_the_format_space():
    latin = family_class("latin-square")(query="solving")
    assert latin.witness_space({"n": 6, "grid": [[0] * 6 for _ in range(6)]}) == 6 ** 36
    sudoku = family_class("sudoku")(query="solving")
    assert sudoku.witness_space({"n": 3, "grid": [[0] * 9 for _ in range(9)]}) == 9 ** 81


# -- knobs without a critical window ---------------------------------------------------------------
@pytest.mark.parametrize("family,knobs,why", [
    ("n-queens", {"n": 8, "pre": 1}, "the cell decides"),
    ("latin-square", {"n": 2, "given": 1}, "every arrangement"),
    ("sudoku", {"n": 2, "given": 0}, "every arrangement"),
    ("sudoku", {"n": 2, "given": 15}, "every arrangement"),
    ("magic-square", {"n": 4, "givens": 1}, "every placement completes"),
    ("futoshiki", {"n": 3, "given": 0, "inequalities": 0}, "both answers"),
])
def test_a_decision_without_a_critical_window_is_a_clear_error(family, knobs, why):
    cls = family_class(family)
    with pytest.raises(RuntimeError, match=why):
        cls(query="decision").generate(cls.Knobs.make(**knobs), np.random.default_rng(0), stratum=0.1)
    # the other queries still pose them
    inst = cls(query="solving").generate(cls.Knobs.make(**knobs), np.random.default_rng(0))
    assert inst.satisfiable and cls.check_witness(inst.data, inst.witness) is None

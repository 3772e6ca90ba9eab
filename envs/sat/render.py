"""Template rendering of a CNF over indexed variables x(i,j,...) as a SAT-Bench-style scenario.

SAT-Bench (``sat-rl.txt`` §3.2, App. E.1) has an LLM verbalise each clause; here templates do it,
so generation is offline, seeded and exact: every condition sentence states precisely its clause
(an ``Either ..., or ...`` disjunction, an ``If ..., then ...`` for a clause with one negative
and one positive literal, or ``At least one of the following is true: ...``).

Variable ``x(i,j,k)`` means: entity ``i`` has value ``j`` of the first attribute and value ``k``
of the second (as many indices as the instance has dimensions, 1 to 3). The mapping from each
variable to its sentence is returned with the text, as SAT-Bench's built-in mapping.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

__all__ = ["THEMES", "Theme", "render", "variable_names", "MAX_DIMS"]

MAX_DIMS = 3


@dataclass(frozen=True)
class Theme:
    name: str
    entity: str  # singular noun
    entities: tuple[str, ...]
    intro: str  # "{n}" and "{names}" are filled in
    attrs: tuple[tuple[str, str, tuple[str, ...]], ...]  # (singular, plural, values)
    pos: tuple[str, str, str]  # by number of dimensions 1, 2, 3: "{e}", "{a}", "{b}"
    neg: tuple[str, str, str]
    decision: tuple[str, str, str]  # "for each ..., we decide whether ..."


THEMES: tuple[Theme, ...] = (
    Theme(
        "research", "scientist",
        ("Anna", "Ben", "Clara", "David", "Emma", "Felix", "Grace", "Henry"),
        "A team of {n} scientists ({names}) is planning experiments",
        (("phenomenon", "phenomena", ("gravitational waves", "dark matter", "neutrinos", "cosmic rays")),
         ("environment", "environments", ("laboratory", "field", "observatory", "space station"))),
        ("{e} runs an experiment", "{e} runs an experiment on {a}", "{e} runs an experiment on {a} in the {b}"),
        ("{e} does not run an experiment", "{e} does not run an experiment on {a}",
         "{e} does not run an experiment on {a} in the {b}"),
        ("the scientist runs an experiment", "the scientist runs an experiment on that phenomenon",
         "the scientist runs an experiment on that phenomenon in that environment"),
    ),
    Theme(
        "kitchen", "chef",
        ("Marco", "Yuki", "Amara", "Lars", "Priya", "Tomas", "Ines", "Kwame"),
        "A restaurant has {n} chefs ({names}) preparing a tasting menu",
        (("dish", "dishes", ("risotto", "ramen", "tagine", "paella")),
         ("course", "courses", ("lunch", "dinner", "brunch", "late-night"))),
        ("{e} cooks tonight", "{e} cooks the {a}", "{e} cooks the {a} for the {b} service"),
        ("{e} does not cook tonight", "{e} does not cook the {a}",
         "{e} does not cook the {a} for the {b} service"),
        ("the chef cooks", "the chef cooks that dish", "the chef cooks that dish for that service"),
    ),
    Theme(
        "mission", "astronaut",
        ("Ortiz", "Nakamura", "Volkova", "Okafor", "Lindqvist", "Haddad", "Chen", "Moreau"),
        "A space station crew of {n} astronauts ({names}) is scheduling work",
        (("task", "tasks", ("repairs", "sampling", "imaging", "docking")),
         ("module", "modules", ("lab module", "airlock", "cupola", "habitat"))),
        ("{e} is on duty", "{e} performs {a}", "{e} performs {a} in the {b}"),
        ("{e} is not on duty", "{e} does not perform {a}", "{e} does not perform {a} in the {b}"),
        ("the astronaut is on duty", "the astronaut performs that task",
         "the astronaut performs that task in that module"),
    ),
    Theme(
        "festival", "musician",
        ("Iris", "Jonah", "Keiko", "Leon", "Mira", "Nico", "Olga", "Pablo"),
        "A music festival books {n} musicians ({names})",
        (("instrument", "instruments", ("piano", "violin", "drums", "guitar")),
         ("stage", "stages", ("main stage", "tent", "garden", "club"))),
        ("{e} performs", "{e} plays the {a}", "{e} plays the {a} on the {b}"),
        ("{e} does not perform", "{e} does not play the {a}", "{e} does not play the {a} on the {b}"),
        ("the musician performs", "the musician plays that instrument",
         "the musician plays that instrument on that stage"),
    ),
    Theme(
        "garden", "gardener",
        ("Rosa", "Sam", "Tariq", "Uma", "Victor", "Wen", "Xenia", "Yusuf"),
        "A community garden has {n} gardeners ({names})",
        (("plant", "plants", ("tomatoes", "beans", "lettuce", "herbs")),
         ("plot", "plots", ("north plot", "south plot", "greenhouse", "terrace"))),
        ("{e} works this season", "{e} grows {a}", "{e} grows {a} in the {b}"),
        ("{e} does not work this season", "{e} does not grow {a}", "{e} does not grow {a} in the {b}"),
        ("the gardener works", "the gardener grows that plant", "the gardener grows that plant in that plot"),
    ),
    Theme(
        "tournament", "player",
        ("Ada", "Boris", "Chloe", "Dmitri", "Elif", "Farid", "Gina", "Hugo"),
        "A chess club enters {n} players ({names}) in a tournament",
        (("opening", "openings", ("Sicilian", "French", "Caro-Kann", "English")),
         ("round", "rounds", ("morning round", "afternoon round", "evening round", "final round"))),
        ("{e} plays", "{e} plays the {a}", "{e} plays the {a} in the {b}"),
        ("{e} does not play", "{e} does not play the {a}", "{e} does not play the {a} in the {b}"),
        ("the player plays", "the player plays that opening", "the player plays that opening in that round"),
    ),
)


def variable_names(dims: list[int]) -> list[str]:
    """``x(i,j,...)`` names in variable order (row-major over ``dims``)."""
    return ["x(" + ",".join(map(str, idx)) + ")" for idx in itertools.product(*(range(d) for d in dims))]


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def render(dims: list[int], clauses: list[list[int]], rng: np.random.Generator):
    """Render a CNF as ``(scenario, conditions, question, mapping)``; the theme and names are drawn
    from ``rng``. ``mapping`` maps each variable name to the sentence its truth states."""
    if not 1 <= len(dims) <= MAX_DIMS:
        raise ValueError(f"dims must have 1 to {MAX_DIMS} entries, got {dims}")
    fits = [t for t in THEMES if dims[0] <= len(t.entities) and all(
        d <= len(t.attrs[i][2]) for i, d in enumerate(dims[1:]))]
    if not fits:
        raise ValueError(f"no theme has room for dims {dims} (at most 8 entities and 4 values)")
    theme = fits[rng.integers(len(fits))]
    names = [theme.entities[i] for i in sorted(rng.choice(len(theme.entities), dims[0], replace=False))]
    values = [
        [theme.attrs[a][2][i] for i in sorted(rng.choice(len(theme.attrs[a][2]), d, replace=False))]
        for a, d in enumerate(dims[1:])
    ]
    arity = len(dims) - 1

    def sentence(idx: tuple[int, ...], positive: bool) -> str:
        fields = {"e": names[idx[0]]}
        for a, letter in zip(range(arity), "ab"):
            fields[letter] = values[a][idx[a + 1]]
        return (theme.pos if positive else theme.neg)[arity].format(**fields)

    index = list(itertools.product(*(range(d) for d in dims)))
    var_names = variable_names(dims)
    mapping = {var_names[v]: sentence(index[v], True) for v in range(len(index))}

    parts = [theme.intro.format(n=dims[0], names=_join(names)) + "."]
    for a, vals in enumerate(values):
        singular, plural, _ = theme.attrs[a]
        legend = ", ".join(f"{i} = {v}" for i, v in enumerate(vals))
        parts.append(f"There {'is' if len(vals) == 1 else 'are'} {len(vals)} "
                     f"{singular if len(vals) == 1 else plural} to consider ({legend}).")
    over = [theme.entity] + [theme.attrs[a][0] for a in range(arity)]
    parts.append(f"For each {_join(over)}, we decide whether {theme.decision[arity]}. "
                 "Each decision is independent.")
    scenario = " ".join(parts)

    conditions = []
    for clause in clauses:
        lits = [sentence(index[abs(x) - 1], x > 0) for x in clause]
        if len(clause) == 1:
            text = lits[0][0].upper() + lits[0][1:] + "."
        elif len(clause) == 2 and (clause[0] < 0) != (clause[1] < 0) and rng.random() < 0.5:
            neg, pos = (clause[0], clause[1]) if clause[0] < 0 else (clause[1], clause[0])
            text = f"If {sentence(index[abs(neg) - 1], True)}, then {sentence(index[pos - 1], True)}."
        elif len(clause) == 2:
            text = f"Either {lits[0]}, or {lits[1]}."
        else:
            text = "At least one of the following is true: " + ", ".join(lits[:-1]) + f", or {lits[-1]}."
        conditions.append(text)
    question = "Can all these conditions be satisfied at the same time?"
    return scenario, conditions, question, mapping

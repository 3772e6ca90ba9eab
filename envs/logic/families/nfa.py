"""NFA Path (App. B.1, program verification): given an NFA as an explicit transition relation, find
an accepted run of exactly L transitions, from the start state to an accepting state.
Hyper-parameters: states S, alphabet size A, path length L, the start state, the accepting set
(``accepting`` states) and the transition list ``[(s, a, t)]``.

A run is its L + 1 states and its L symbols, so the count is the number of accepted runs (two
runs that read the same word through different states count twice). The encoding is one-hot:
``st_t_q`` (after t transitions the run is in q) and ``sy_t_a`` (transition t reads a), the start
fixed, the last state accepting, and each (state, symbol, next state) triple that is not a
transition forbidden at every step.

Generation (issue 43). What a reader counts without reading is how many transitions the
automaton lists; that number is the **shape**, drawn before the label uniformly from the knobs'
*critical window*, the counts at which a uniform automaton of the kind below has an accepted run
between 20% and 80% of the time (:meth:`NFAPathProblem.window`, measured once per knobs on a
fixed seed: at the defaults 0.14 with 4 transitions, 0.34 (5), 0.57 (6), 0.71 (7), 0.79 (8), 0.91
(9)). The label is then decided by where the transitions go. The automaton (:meth:`NFAPathProblem.random_data`):
a uniform start state, ``accepting`` other states, and that many distinct triples, uniform among
those where a transition leaves the start and one enters an accepting state, every state is
named, and no transition loops on the start or on an accepting state. The measurements behind
it (800 prompts, seeds 0-799, majority class 0.50, unless said):

- The earlier generator kept each triple with probability ``p`` and planted a run into the "yes"
  instances, which so listed more transitions: a threshold on one counted quantity predicted the
  label with accuracy 0.62-0.64 and a ridge classifier 0.63-0.64 at the three levels. ``p`` is
  no knob any more: the density is the window's.
- With the count fixed but states free to go unnamed, "yes" automata named fewer states (their
  transitions bunched on the states a run uses; 4.92 distinct numbers in the prompt against 4.97)
  and the ridge classifier scored 0.54 on 2000 prompts of other seeds. Every state named: 0.48-0.51.
- The start is not accepting: an accepting start made "yes" a walk out and back, and the constant
  run through a 2-cycle at the start (``2 1 0 0 2 1 0 0 2``) was right on 1.1% of the solving
  instances (1600 seeds), the best of a few hundred such runs on 1.3-2.3% of 400 seeds. With S = 3
  the accepting start with a loop on it ``2 1 2 1 2 1 2`` was right on 7%.
- A loop on the start or on an accepting state lets a run wait there, so "exactly L transitions"
  reads as "at most L" and a run that steps into an accepting state and waits (``2 0 1 1 1 1 1 1
  1``) was the commonest answer. Without those loops no run of 2 distinct transitions is accepted
  at even L, and the best constant run is right on 0.4-0.5% of 1600 seeds (1% of 400). The
  dataset's levels keep S >= 4: with 3 states a constant run was right on 2.8-3.8% whatever the
  rules.

The solving query draws "yes" instances of the same distribution (:meth:`NFAPathProblem.planted_data`),
the counting query counts draws of it (a fresh shape each).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel, Clause
from ..witness import format_ints, parse_ints
from .graphs import int_knob
from .set_cover import PLANT_TRIES, WINDOW_FLOOR, WINDOW_LAST, critical_window, sat_share

__all__ = ["NFAKnobs", "NFAPathProblem"]

#: batches of :data:`MOVE_BATCH` transition lists drawn before a shape whose lists rarely leave
#: the start state, enter an accepting one and name every state is an error (:meth:`NFAPathProblem.random_data`)
MOVE_TRIES, MOVE_BATCH = 200, 32
#: the least share of transition lists that meet that, for a number of transitions to be in a window
#: (so :data:`MOVE_TRIES` batches miss with probability 0.98^6400, about 1e-56)
MIN_MET = 0.02
#: the seed of :meth:`NFAPathProblem._met_share`'s draws
_MET_SEED = 20261209
#: (family class, knobs) -> its critical window, measured once per process
_WINDOWS: dict[tuple[type, Knobs], tuple[int, ...]] = {}


@lru_cache(maxsize=64)
def _step_clauses(s: int, a: int, n: int) -> tuple[tuple[Clause, ...], ...]:
    """Per step t, per triple index (q*A + b)*S + r, the clause "step t is not from q on b to r":
    ¬st_t_q ∨ ¬sy_t_b ∨ ¬st_{t+1}_r, over :meth:`NFAPathProblem.encode`'s variable order."""
    st = lambda t, q: t * s + q + 1  # noqa: E731 (the DIMACS index of st_t_q)
    sy = lambda t, b: (n + 1) * s + t * a + b + 1  # noqa: E731
    return tuple(tuple(Clause((-st(t, q), -sy(t, b), -st(t + 1, r))) for q in range(s) for b in range(a)
                       for r in range(s)) for t in range(n))


@dataclass(frozen=True)
class NFAKnobs(Knobs):
    """``states`` S, ``alphabet`` A, run ``length`` L, ``accepting`` states (SAT-RL App. B.1's S, A,
    L and the accepting set's size; the start state is never among them, so at most S - 1: the
    module docstring says why). How many transitions the automaton has is not a knob: it is
    drawn from the knobs' critical window (the module docstring), where an accepted run of length
    L is neither rare nor certain."""

    states: int = 4
    alphabet: int = 2
    length: int = 4
    accepting: int = 1

    def validate(self) -> None:
        int_knob("states", self.states, 2, 8)
        int_knob("alphabet", self.alphabet, 1, 4)
        int_knob("length", self.length, 1, 8)
        int_knob("accepting", self.accepting, 1, self.states - 1)  # the start is not accepting


def _triple_list(value, s: int, a: int) -> None:
    if not isinstance(value, list) or len(value) > s * a * s:
        raise ValueError("transitions must be a list of [state, symbol, next state] triples")
    seen = set()
    for t in value:
        if not (isinstance(t, list) and len(t) == 3 and all(isinstance(x, int) and not isinstance(x, bool) for x in t)):
            raise ValueError(f"a transition is [state, symbol, next state], got {t!r}")
        if not (0 <= t[0] < s and 0 <= t[1] < a and 0 <= t[2] < s):
            raise ValueError(f"transition {t} names a state outside [0, {s}) or a symbol outside [0, {a})")
        if tuple(t) in seen:
            raise ValueError(f"transition {t} is listed twice")
        seen.add(tuple(t))


class NFAPathProblem(LogicProblem):
    """NFA Path as decision / solving / counting (``SolverLogic-v0(family="nfa-path")``)."""

    name = "nfa-path"
    category = "program verification"
    Knobs = NFAKnobs
    # the dataset's levels (§3.2): S = 3 is gone, its automata too small for a constant run not to be
    # right on 3% of them (the module docstring)
    levels = ({"states": 4, "length": 4}, {"states": 5, "length": 4}, {"states": 5, "alphabet": 3, "length": 5})
    # every cardinality bound is one and no sum is weighted: all five solvers state it
    solvers = ("z3", "pysmt", "python-sat", "ortools", "sympy")
    witness_noun = "an accepted run of exactly L transitions (from the start state, ending in an accepting state)"
    count_noun = ("accepted runs of exactly L transitions (a run is its sequence of states together with its sequence "
                  "of symbols)")

    # -- shape ---------------------------------------------------------------------------------------
    def window(self, knobs) -> tuple[int, ...]:
        """The transition counts in the knobs' critical window: from the fewest whose lists meet
        :meth:`random_data`'s conditions in :data:`MIN_MET` of draws, upwards while they do, until
        an accepted run is in more than 1 - :data:`~.set_cover.WINDOW_FLOOR` of the uniform draws
        (:data:`~.set_cover.WINDOW_DRAWS`, decided by :meth:`has_run`) twice running; then
        :func:`~.set_cover.critical_window` over the counts looked at. Measured once per process;
        ``ValueError`` where there is none."""
        key = (type(self), knobs)
        if key not in _WINDOWS:
            s, a = knobs.states, knobs.alphabet
            shares: dict[int, float] = {}
            over = 0
            for e in range(1, s * a * s + 1):
                if self._met_share(knobs, e) < MIN_MET:
                    if shares:
                        break  # too many transitions to avoid a waiting loop
                    continue  # too few to name every state
                shares[e] = sat_share((s, a, knobs.length, knobs.accepting, e),
                                      lambda rng: self.has_run(self.random_data(knobs, rng, (e,))))
                over = over + 1 if shares[e] > 1.0 - WINDOW_FLOOR else 0
                if over == 2:
                    break
            window = critical_window(shares.__getitem__, min(shares), max(shares)) if shares else ()
            if not window:
                raise ValueError(f"nfa-path: no number of transitions at {knobs.as_dict()} makes an accepted run of "
                                 f"length {knobs.length} neither rare nor certain (each has one in fewer than "
                                 f"{WINDOW_LAST:.0%} or more than {1 - WINDOW_LAST:.0%} of uniform draws); change "
                                 "states, alphabet, length or accepting")
            _WINDOWS[key] = window
        return _WINDOWS[key]

    def _met_share(self, knobs, n_moves: int) -> float:
        """The share of uniform lists of ``n_moves`` transitions that meet :meth:`random_data`'s
        conditions (16 batches on a fixed seed; which states are the start and the accepting ones
        does not matter)."""
        s, a = knobs.states, knobs.alphabet
        rng = np.random.default_rng([_MET_SEED, s, a, knobs.accepting, n_moves])
        accepts = list(range(1, 1 + knobs.accepting))
        return float(np.mean([self._candidates(s, a, n_moves, 0, accepts, rng)[0].mean() for _ in range(16)]))

    def draw_shape(self, knobs, rng):
        """``(transitions,)``: how many transitions the automaton lists (what a reader counts at a
        glance), uniform over the knobs' critical window."""
        counts = self.window(knobs)
        return (int(counts[int(rng.integers(len(counts)))]),)

    def random_data(self, knobs, rng, shape=None):
        """A uniform automaton at the shape: the start state, ``accepting`` other states, and
        exactly that many distinct transitions, redrawn (:meth:`_candidates`) until

        - one leaves the start state and one enters an accepting state (no instance is answered
          "no" at sight, whatever its label);
        - none loops on the start state or on an accepting state: a run could wait there, so
          "exactly L" would read as "at most L", answered at sight (the module docstring);
        - every state is named, by a transition or as the start or an accepting state (how many
          distinct state numbers the prompt shows is then the same for both labels; left free,
          "yes" automata named fewer, their transitions bunched on the states a run uses, and a
          ridge classifier over the prompt's counted quantities scored 0.54 against 0.50).

        ``RuntimeError`` where :data:`MOVE_TRIES` batches meet none (a count far outside the
        window: :meth:`window` keeps to counts met in :data:`MIN_MET` of draws or more)."""
        s, a = knobs.states, knobs.alphabet
        (n_moves,) = shape or self.draw_shape(knobs, rng)
        start = int(rng.integers(s))
        accepts = sorted(int(q) for q in rng.choice([q for q in range(s) if q != start], size=knobs.accepting,
                                                     replace=False))
        for _ in range(MOVE_TRIES):
            ok, picked = self._candidates(s, a, n_moves, start, accepts, rng)
            if ok.any():
                first = picked[int(np.argmax(ok))]  # the first that meets them: one uniform draw, conditioned
                triples = sorted((int(i) // (a * s), int(i) // s % a, int(i) % s) for i in first)
                return {"states": s, "alphabet": a, "length": knobs.length, "start": start, "accepts": accepts,
                        "transitions": [list(t) for t in triples]}
        raise RuntimeError(f"nfa-path: {n_moves} transitions at {knobs.as_dict()} rarely meet the generator's "
                           "conditions; this count is outside the window")

    @staticmethod
    def _candidates(s: int, a: int, n_moves: int, start: int, accepts: list[int],
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """:data:`MOVE_BATCH` uniform lists of ``n_moves`` distinct triples (as indices q*A*S + b*S +
        r), and which of them meet :meth:`random_data`'s conditions."""
        picked = np.argsort(rng.random((MOVE_BATCH, s * a * s)), axis=1)[:, :n_moves]
        src, dst = picked // (a * s), picked % s
        named = np.zeros((MOVE_BATCH, s), dtype=bool)
        rows = np.arange(MOVE_BATCH)[:, None]
        named[rows, src] = True
        named[rows, dst] = True
        named[:, [start, *accepts]] = True
        accepting = np.zeros(s, dtype=bool)
        accepting[accepts] = True
        waits = (src == dst) & ((src == start) | accepting[src])
        ok = (src == start).any(axis=1) & accepting[dst].any(axis=1) & named.all(axis=1) & ~waits.any(axis=1)
        return ok, picked

    def planted_data(self, knobs, rng, shape=None):
        """An automaton with an accepted run at the shape: uniform draws at it (:meth:`random_data`)
        until one has a run (:meth:`has_run`), which the window makes at least a fifth of them; so a
        solving instance is a "yes" instance of the decision's distribution. (A planted run would
        add its own transitions, and a blind answer could look for what planting leaves.)"""
        shape = shape or self.draw_shape(knobs, rng)
        for _ in range(PLANT_TRIES):
            data = self.random_data(knobs, rng, shape)
            if self.has_run(data):
                return data
        raise RuntimeError(f"nfa-path: no automaton with an accepted run at {knobs.as_dict()} (shape {shape}) in "
                           f"{PLANT_TRIES} draws")

    @staticmethod
    def has_run(data: dict) -> bool:
        """Whether an accepted run of exactly L transitions exists: the states reachable from the
        start in t transitions, t = 1..L, meet the accepting set (no solver: the window's and the
        planting's check, held against the encoding's count by the tests)."""
        reach = {data["start"]}
        for _ in range(data["length"]):
            reach = {r for q, _, r in data["transitions"] if q in reach}
        return bool(reach & set(data["accepts"]))

    @classmethod
    def check_data(cls, data):
        if set(data) != {"states", "alphabet", "length", "start", "accepts", "transitions"}:
            raise ValueError("an nfa-path instance has the keys states, alphabet, length, start, accepts, transitions; "
                             f"got {sorted(data)}")
        int_knob("states", data["states"], 2, 8)
        int_knob("alphabet", data["alphabet"], 1, 4)
        int_knob("length", data["length"], 1, 8)
        s = data["states"]
        int_knob("start", data["start"], 0, s - 1)
        acc = data["accepts"]
        if not (isinstance(acc, list) and 1 <= len(acc) <= s):
            raise ValueError(f"accepts must be a list of 1 to {s} distinct states")
        for q in acc:
            int_knob("an accepting state", q, 0, s - 1)
        if len(set(acc)) != len(acc):
            raise ValueError(f"accepts lists a state twice: {acc}")
        _triple_list(data["transitions"], s, data["alphabet"])

    @classmethod
    def encode(cls, data):
        s, a, n = data["states"], data["alphabet"], data["length"]
        m = BoolModel([f"st_{t}_{q}" for t in range(n + 1) for q in range(s)]
                      + [f"sy_{t}_{b}" for t in range(n) for b in range(a)])
        # DIMACS indices by position (the names' order above), not by name lookup
        st = {(t, q): t * s + q + 1 for t in range(n + 1) for q in range(s)}
        sy = {(t, b): (n + 1) * s + t * a + b + 1 for t in range(n) for b in range(a)}
        for t in range(n + 1):
            m.card([st[t, q] for q in range(s)], "==", 1)  # one state after t transitions
        for t in range(n):
            m.card([sy[t, b] for b in range(a)], "==", 1)  # transition t reads one symbol
        m.clause([st[0, data["start"]]])
        m.clause([st[n, q] for q in data["accepts"]])
        delta = {(q * a + b) * s + r for q, b, r in data["transitions"]}
        banned = [i for i in range(s * a * s) if i not in delta]
        # no step t from q on b to r: the bulk of the model, its clauses shared by every instance of
        # these sizes (a Clause is immutable), so a draw the generator rejects costs little to state
        steps = _step_clauses(s, a, n)
        for t in range(n):
            m.clauses.extend(steps[t][i] for i in banned)
        return m

    def statement(self, data):
        s, a, n = data["states"], data["alphabet"], data["length"]
        moves = ", ".join(f"{q} -{b}-> {r}" for q, b, r in data["transitions"]) or "none"
        return (f"A nondeterministic finite automaton has {s} states, numbered 0 to {s - 1}, and the input symbols "
                f"0 to {a - 1}. Its start state is {data['start']}; its accepting states are "
                f"{', '.join(map(str, data['accepts']))}. Its transitions (state -symbol-> next state) are: {moves}. "
                f"A run of length {n} is a sequence of {n} transitions, the first from the start state and each "
                f"next one from the state the previous one reached; it is accepted when its last state is accepting. "
                f"L = {n}.")

    def mapping(self, data):
        s, a, n = data["states"], data["alphabet"], data["length"]
        return {**{f"st_{t}_{q}": f"after {t} transitions the run is in state {q}" for t in range(n + 1) for q in range(s)},
                **{f"sy_{t}_{b}": f"transition {t} (counting from 0) reads symbol {b}" for t in range(n) for b in range(a)}}

    def describe_data(self, data):
        return {"states": data["states"], "alphabet": data["alphabet"], "length": data["length"],
                "accepting": len(data["accepts"]), "transitions": len(data["transitions"])}

    @classmethod
    def check_witness(cls, data, witness):
        s, a, n = data["states"], data["alphabet"], data["length"]
        if not isinstance(witness, list) or len(witness) != 2 * n + 1 or any(not isinstance(v, int) for v in witness):
            return f"a run here is {2 * n + 1} whole numbers: state, symbol, state, ..., symbol, state"
        states, word = witness[0::2], witness[1::2]
        if any(not 0 <= q < s for q in states):
            return f"states are numbered 0 to {s - 1}"
        if any(not 0 <= b < a for b in word):
            return f"symbols are numbered 0 to {a - 1}"
        if states[0] != data["start"]:
            return f"the run starts in state {states[0]}, not in the start state {data['start']}"
        delta = {tuple(x) for x in data["transitions"]}
        for t in range(n):
            if (states[t], word[t], states[t + 1]) not in delta:
                return f"transition {t}, {states[t]} -{word[t]}-> {states[t + 1]}, is not one of the automaton's"
        if states[n] not in data["accepts"]:
            return f"the run ends in state {states[n]}, which is not accepting"
        return None

    def witness_from_true(self, data, true):
        s, a, n = data["states"], data["alphabet"], data["length"]
        states = [next((q for q in range(s) if f"st_{t}_{q}" in true), -1) for t in range(n + 1)]
        word = [next((b for b in range(a) if f"sy_{t}_{b}" in true), -1) for t in range(n)]
        return [v for t in range(n) for v in (states[t], word[t])] + [states[n]]

    def true_from_witness(self, data, witness):
        return ({f"st_{t}_{q}" for t, q in enumerate(witness[0::2])}
                | {f"sy_{t}_{b}" for t, b in enumerate(witness[1::2])})

    def parse_witness(self, data, text):
        return parse_ints(text, length=2 * data["length"] + 1)

    def format_witness(self, data, witness):
        return format_ints(witness)

    def witness_hint(self, data):
        n = data["length"]
        return (f"```answer <the run as {2 * n + 1} numbers separated by spaces, states and symbols alternating: the "
                f"start state, the symbol transition 0 reads, the state it reaches, ..., the symbol transition "
                f"{n - 1} reads, the last state>```")

    def witness_space(self, data):
        return data["states"] ** (data["length"] + 1) * data["alphabet"] ** data["length"]

    def random_witness(self, data, rng):
        """A state, a symbol, a state, ... (2L + 1 numbers), each uniform: one of :meth:`witness_space`'s
        S^(L+1) A^L."""
        s, a, n = data["states"], data["alphabet"], data["length"]
        return format_ints([int(rng.integers(s if i % 2 == 0 else a)) for i in range(2 * n + 1)])

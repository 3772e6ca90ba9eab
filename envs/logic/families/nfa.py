"""NFA Path (App. B.1, program verification): given an NFA as an explicit transition relation, find
an accepted run of exactly L transitions, from the start state to an accepting state.
Hyper-parameters: states S, alphabet size A, path length L, the start state, the accepting set
(``accepting`` states of it) and the transition list ``[(s, a, t)]`` (each triple present with
probability ``p``).

A run is its L + 1 states and its L symbols, so the count is the number of accepted runs (two
runs that read the same word through different states count twice). The encoding is one-hot:
``st_t_q`` (after t transitions the run is in q) and ``sy_t_a`` (transition t reads a), the start
fixed, the last state accepting, and each (state, symbol, next state) triple that is not a
transition forbidden at every step."""
from __future__ import annotations

from dataclasses import dataclass

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["NFAKnobs", "NFAPathProblem"]


@dataclass(frozen=True)
class NFAKnobs(Knobs):
    """``states`` S, ``alphabet`` A, run ``length`` L, ``accepting`` states, transition density ``p``."""

    states: int = 4
    alphabet: int = 2
    length: int = 4
    accepting: int = 1
    p: float = 0.15

    def validate(self) -> None:
        int_knob("states", self.states, 2, 8)
        int_knob("alphabet", self.alphabet, 1, 4)
        int_knob("length", self.length, 1, 8)
        int_knob("accepting", self.accepting, 1, self.states)
        if not 0.0 < float(self.p) < 1.0:
            raise ValueError(f"p must be in (0, 1), got {self.p}")


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
    levels = ({"states": 3, "length": 3}, {"states": 4, "length": 4}, {"states": 5, "alphabet": 3, "length": 5, "p": 0.1})
    # every cardinality bound is one and no sum is weighted: all five solvers state it
    solvers = ("z3", "pysmt", "python-sat", "ortools", "sympy")
    witness_noun = "an accepted run of exactly L transitions (from the start state, ending in an accepting state)"
    count_noun = ("accepted runs of exactly L transitions (a run is its sequence of states together with its sequence "
                  "of symbols)")

    def random_data(self, knobs, rng, shape=None):
        s, a = knobs.states, knobs.alphabet
        keep = rng.random(s * a * s) < float(knobs.p)
        triples = {(i // (a * s), i // s % a, i % s) for i in range(s * a * s) if keep[i]}
        accepts = sorted(int(q) for q in rng.choice(s, size=knobs.accepting, replace=False))
        start = int(rng.integers(s))
        # a run can leave the start and enter an accepting state: no instance is unsatisfiable at sight
        if not any(q == start for q, _, _ in triples):
            triples.add((start, int(rng.integers(a)), int(rng.integers(s))))
        if not any(r in accepts for _, _, r in triples):
            triples.add((int(rng.integers(s)), int(rng.integers(a)), int(rng.choice(accepts))))
        return {"states": s, "alphabet": a, "length": knobs.length, "start": start, "accepts": accepts,
                "transitions": [list(t) for t in sorted(triples)]}

    def planted_data(self, knobs, rng, shape=None):
        data = self.random_data(knobs, rng)
        s, a, n = knobs.states, knobs.alphabet, knobs.length
        run = [data["start"], *(int(q) for q in rng.integers(s, size=n - 1)), int(rng.choice(data["accepts"]))]
        word = rng.integers(a, size=n)
        triples = {tuple(t) for t in data["transitions"]} | {(run[t], int(word[t]), run[t + 1]) for t in range(n)}
        return {**data, "transitions": [list(t) for t in sorted(triples)]}

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
        st = {(t, q): m.var(f"st_{t}_{q}") for t in range(n + 1) for q in range(s)}
        sy = {(t, b): m.var(f"sy_{t}_{b}") for t in range(n) for b in range(a)}
        for t in range(n + 1):
            m.card([st[t, q] for q in range(s)], "==", 1)  # one state after t transitions
        for t in range(n):
            m.card([sy[t, b] for b in range(a)], "==", 1)  # transition t reads one symbol
        m.clause([st[0, data["start"]]])
        m.clause([st[n, q] for q in data["accepts"]])
        delta = {tuple(x) for x in data["transitions"]}
        for t in range(n):
            for q in range(s):
                for b in range(a):
                    for r in range(s):
                        if (q, b, r) not in delta:  # no step t from q on b to r
                            m.clause([-st[t, q], -sy[t, b], -st[t + 1, r]])
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

    def random_witness(self, data, rng):
        s, a, n = data["states"], data["alphabet"], data["length"]
        return format_ints([int(rng.integers(s if i % 2 == 0 else a)) for i in range(2 * n + 1)])

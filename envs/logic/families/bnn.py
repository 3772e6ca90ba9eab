"""Binarised neural network robustness (App. B.1, program verification): given a network of
threshold gates and a seed input, find an input within Hamming distance eps of the seed that
flips the network's output. Hyper-parameters: input dimension ``n_in``, the layers (neurons with
a threshold k and signed literals over the previous layer), and the property (seed, radius eps,
y_seed). Every neuron's output is a function of the input, so counting the flipping inputs counts
models (the neurons' variables are determined by the inputs).

Issue 43: the decision's answer must not be readable off the prompt's surface. A random network
and seed for "no", and a network redrawn until a random nearby input flips it for "yes", let a
ridge classifier over the prompt's counted quantities and words predict the label on 58-67% of
held-out prompts (against 50%): the two constructions keep different networks. Now an instance's
**shape** (:meth:`BNNRobustnessProblem.draw_shape`, drawn before its label) is the network, the
number of ones in the seed and the network's output on it; both labels draw the seed uniformly
among the inputs with that many ones and that output, and the label is whether the seed lies
within eps of an input with the other output. Everything the prompt shows but the order of the
seed's bits, so every number and word it holds, is then the same for either answer. The network's
outputs on all 2^n_in inputs and each input's distance to the other output are computed once per
shape (a breadth-first pass over the bit flips, no solver); a shape is kept when between 20% and
80% of its seeds have a flipping input within eps, so both answers are met in a few draws, and
the solving query draws among those (the decision's "yes" distribution).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...problem import Knobs
from ..family import LogicProblem
from ..model import BoolModel
from ..witness import format_ints, parse_ints
from .graphs import int_knob

__all__ = ["BNNKnobs", "BNNRobustnessProblem", "forward", "truth_table", "flippable"]

#: the share of a shape's seeds with a flipping input within eps it must hold (either answer met
#: in a few draws)
_SHARE = (0.2, 0.8)
#: networks tried before the knobs are declared to have none with both answers
_SHAPE_TRIES = 200
#: random inputs whose (ones, output) class a network is tried with before it is redrawn (at
#: n_in = 10, eps = 3 a random network flips 98% of its inputs within eps in the median, and
#: one class in ten is balanced enough)
_SEED_TRIES = 4


@dataclass(frozen=True)
class BNNKnobs(Knobs):
    """``n_in`` inputs, one hidden layer of ``hidden`` neurons, ``fan_in`` literals per neuron,
    radius ``eps``."""

    n_in: int = 8
    hidden: int = 3
    fan_in: int = 3
    eps: int = 2

    def validate(self) -> None:
        int_knob("n_in", self.n_in, 2, 16)
        int_knob("hidden", self.hidden, 1, 8)
        int_knob("fan_in", self.fan_in, 1, self.n_in)
        int_knob("eps", self.eps, 1, self.n_in)


def forward(layers: list[list[dict]], x: list[int]) -> list[list[int]]:
    """Every layer's outputs for input bits ``x`` (a neuron fires when at least ``k`` of its
    literals hold; literal +i / -i is the i-th output of the layer below, 1-based, or its negation)."""
    outs, below = [], list(x)
    for layer in layers:
        below = [int(sum((below[abs(l) - 1] == 1) == (l > 0) for l in n["lits"]) >= n["k"]) for n in layer]
        outs.append(below)
    return outs


def _layer(width: int, below: int, fan_in: int, rng) -> list[dict]:
    out = []
    for _ in range(width):
        src = rng.choice(below, size=min(fan_in, below), replace=False)
        lits = sorted(int(i + 1) * (1 if rng.random() < 0.5 else -1) for i in src)
        out.append({"lits": lits, "k": int(rng.integers(1, len(lits) + 1))})
    return out


def truth_table(layers: list[list[dict]], n_in: int) -> np.ndarray:
    """The network's output on every input, indexed by the input's code (bit i: x_i), as
    :func:`forward` computes it one input at a time."""
    codes = np.arange(1 << n_in)
    below = (codes[:, None] >> np.arange(n_in)) & 1
    for layer in layers:
        held = [[below[:, abs(l) - 1] if l > 0 else 1 - below[:, abs(l) - 1] for l in n["lits"]] for n in layer]
        below = np.stack([(sum(h) >= n["k"]).astype(np.int64) for h, n in zip(held, layer)], axis=1)
    return below[:, 0]


def flippable(table: np.ndarray, n_in: int, eps: int) -> np.ndarray:
    """For every input code, whether some input within Hamming distance ``eps`` has the other
    output: the inputs within ``eps`` of each output, grown one bit flip at a time."""
    codes = np.arange(len(table))
    near = [table == 0, table == 1]  # near[y]: within the distance grown so far of an input with output y
    for _ in range(min(eps, n_in)):
        near = [z | np.logical_or.reduce([z[codes ^ (1 << i)] for i in range(n_in)]) for z in near]
    return np.where(table == 1, near[0], near[1])


class BNNRobustnessProblem(LogicProblem):
    """BNN robustness as decision / solving / counting (``SolverLogic-v0(family="bnn-robustness")``)."""

    name = "bnn-robustness"
    category = "program verification"
    Knobs = BNNKnobs
    levels = ({"n_in": 6, "eps": 1}, {"n_in": 8, "eps": 2}, {"n_in": 10, "eps": 3})
    solvers = ("z3", "pysmt", "ortools")
    unfit = {"python-sat": "a neuron is an equivalence with a cardinality bound, which python-sat's cardinality "
                           "encodings state in one direction only",
             "sympy": "a neuron's threshold above one has no compact form in sympy's Boolean algebra"}
    witness_noun = "an input within Hamming distance eps of the seed whose output differs from the seed's"
    count_noun = "inputs within Hamming distance eps of the seed whose output differs from the seed's"

    # SAT-RL App. B.1: n_in, the layers (threshold k, signed literals), the property (seed, eps, y_seed)
    def draw_shape(self, knobs, rng) -> dict:
        """The network, the seed's number of ones w and the network's output y on it (those of a
        uniform random input), and the inputs with w ones and output y, split into those within
        eps of an input with the other output (the seeds that answer yes) and the rest. Another
        input's (w, y), then another network (label-free) until between 20% and 80% answer yes."""
        for _ in range(_SHAPE_TRIES):
            layers = [_layer(knobs.hidden, knobs.n_in, knobs.fan_in, rng), _layer(1, knobs.hidden, knobs.hidden, rng)]
            table = truth_table(layers, knobs.n_in)
            flips = flippable(table, knobs.n_in, knobs.eps)
            ones = ((np.arange(len(table))[:, None] >> np.arange(knobs.n_in)) & 1).sum(axis=1)
            for _ in range(_SEED_TRIES):
                first = int(rng.integers(len(table)))
                seeds = np.flatnonzero((ones == ones[first]) & (table == table[first]))
                yes = seeds[flips[seeds]]
                if _SHARE[0] <= len(yes) / len(seeds) <= _SHARE[1]:
                    return {"layers": layers, "seeds": seeds.tolist(), "yes": yes.tolist()}
        raise RuntimeError(f"{self.name}: no network at {knobs.as_dict()} of whose seeds between {_SHARE[0]:.0%} and "
                           f"{_SHARE[1]:.0%} have an input within eps = {knobs.eps} with the other output in "
                           f"{_SHAPE_TRIES} draws")

    def _data(self, knobs, layers, code: int) -> dict:
        seed = [(code >> i) & 1 for i in range(knobs.n_in)]
        return {"n_in": knobs.n_in, "layers": layers, "seed": seed, "eps": knobs.eps,
                "y_seed": forward(layers, seed)[-1][0]}

    def random_data(self, knobs, rng, shape=None):
        shape = shape or self.draw_shape(knobs, rng)
        return self._data(knobs, shape["layers"], shape["seeds"][int(rng.integers(len(shape["seeds"])))])

    def planted_data(self, knobs, rng, shape=None):
        shape = shape or self.draw_shape(knobs, rng)
        return self._data(knobs, shape["layers"], shape["yes"][int(rng.integers(len(shape["yes"])))])

    @classmethod
    def check_data(cls, data):
        if set(data) != {"n_in", "layers", "seed", "eps", "y_seed"}:
            raise ValueError(f"a bnn-robustness instance has the keys n_in, layers, seed, eps, y_seed; got {sorted(data)}")
        int_knob("n_in", data["n_in"], 2, 16)
        int_knob("eps", data["eps"], 1, data["n_in"])
        layers = data["layers"]
        if not isinstance(layers, list) or not 1 <= len(layers) <= 4 or len(layers[-1]) != 1:
            raise ValueError("layers: 1 to 4 layers, the last one a single output neuron")
        below = data["n_in"]
        for layer in layers:
            if not isinstance(layer, list) or not 1 <= len(layer) <= 16:
                raise ValueError("a layer is a list of 1 to 16 neurons")
            for n in layer:
                if not (isinstance(n, dict) and set(n) == {"lits", "k"} and isinstance(n["lits"], list)):
                    raise ValueError(f"a neuron is {{'lits': [...], 'k': int}}, got {n!r}")
                if any(not isinstance(l, int) or not 1 <= abs(l) <= below for l in n["lits"]) or not n["lits"]:
                    raise ValueError(f"a neuron's literals are +-1 to +-{below}, got {n['lits']!r}")
                int_knob("a neuron's k", n["k"], 0, len(n["lits"]))
            below = len(layer)
        if not (isinstance(data["seed"], list) and len(data["seed"]) == data["n_in"] and set(data["seed"]) <= {0, 1}):
            raise ValueError(f"seed must be {data['n_in']} bits")
        if data["y_seed"] != forward(layers, data["seed"])[-1][0]:
            raise ValueError("y_seed is not the network's output on the seed")

    @classmethod
    def _names(cls, data) -> list[str]:
        names = [f"x_{i}" for i in range(data["n_in"])]
        for li, layer in enumerate(data["layers"][:-1]):
            names += [f"h_{li}_{j}" for j in range(len(layer))]
        return names + ["out"]

    @classmethod
    def encode(cls, data):
        m = BoolModel(cls._names(data))
        base = 0  # the index (0-based) of the first variable of the layer below
        below = data["n_in"]
        for layer in data["layers"]:
            first = base + below
            for j, n in enumerate(layer):
                lits = [(base + abs(l)) * (1 if l > 0 else -1) for l in n["lits"]]
                m.threshold(first + j + 1, lits, n["k"])
            base, below = first, len(layer)
        # within the ball: at most eps inputs differ from the seed
        m.card([-(i + 1) if b else (i + 1) for i, b in enumerate(data["seed"])], "<=", data["eps"])
        m.clause([-len(m.names) if data["y_seed"] else len(m.names)])  # the output flips
        return m

    def statement(self, data):
        parts = [f"A binarised network reads {data['n_in']} input bits x0 .. x{data['n_in'] - 1}. Each neuron fires "
                 "(outputs 1) when at least k of its literals hold; a literal names an output of the layer below "
                 "(+i: it is 1, -i: it is 0; i counts from 1)."]
        for li, layer in enumerate(data["layers"]):
            what = "output neuron" if li == len(data["layers"]) - 1 else f"layer {li} neurons"
            parts.append(f"The {what}: " + "; ".join(f"neuron {j}: literals {n['lits']}, k = {n['k']}" for j, n in enumerate(layer)) + ".")
        parts.append(f"The seed input is {format_ints(data['seed'])} and the network outputs {data['y_seed']} on it. "
                     f"eps = {data['eps']}.")
        return "\n".join(parts)

    def mapping(self, data):
        out = {f"x_{i}": f"input bit {i} is 1" for i in range(data["n_in"])}
        for li, layer in enumerate(data["layers"][:-1]):
            out.update({f"h_{li}_{j}": f"neuron {j} of layer {li} fires" for j in range(len(layer))})
        return {**out, "out": "the output neuron fires"}

    def describe_data(self, data):
        return {"n_in": data["n_in"], "hidden": len(data["layers"][0]), "eps": data["eps"]}

    @classmethod
    def check_witness(cls, data, witness):
        if not isinstance(witness, list) or len(witness) != data["n_in"] or any(b not in (0, 1) for b in witness):
            return f"an input here is {data['n_in']} bits"
        dist = sum(a != b for a, b in zip(witness, data["seed"]))
        if dist > data["eps"]:
            return f"the input differs from the seed in {dist} bits, more than eps = {data['eps']}"
        if forward(data["layers"], witness)[-1][0] == data["y_seed"]:
            return f"the network outputs {data['y_seed']} on it, as on the seed"
        return None

    def witness_from_true(self, data, true):
        return [int(f"x_{i}" in true) for i in range(data["n_in"])]

    def true_from_witness(self, data, witness):
        outs = forward(data["layers"], witness)
        true = {f"x_{i}" for i, b in enumerate(witness) if b == 1}
        for li, layer in enumerate(outs[:-1]):
            true |= {f"h_{li}_{j}" for j, b in enumerate(layer) if b}
        return true | ({"out"} if outs[-1][0] else set())

    def parse_witness(self, data, text):
        return parse_ints(text, length=data["n_in"])

    def format_witness(self, data, witness):
        return format_ints(witness)

    def witness_hint(self, data):
        return f"```answer <the {data['n_in']} input bits x0 .. x{data['n_in'] - 1}, separated by spaces>```"

    def witness_space(self, data):
        """Every input (:meth:`random_witness` draws one uniformly)."""
        return 2 ** data["n_in"]

    def random_witness(self, data, rng):
        return format_ints(rng.integers(2, size=data["n_in"]))

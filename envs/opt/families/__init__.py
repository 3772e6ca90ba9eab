"""The problem families of ``SolverOR-v0``, one module each (see :mod:`.common` for the contract
every family keeps). ``FAMILIES`` maps a name to its :class:`~.common.Family`, which is the
seeded generator ``(rng, size, integer, side_constraints) -> (question, data, model)``;
``FAMILY_KIND`` gives each family's natural kind ("LP", "IP", "MILP" or "QP": what it is with
``integer=None``).
"""
from . import (assignment, bin_packing, diet, facility_location, inventory_setup, knapsack, min_cost_flow,
               portfolio, product_mix, shift_scheduling, transportation)
from .common import Family, fmt

__all__ = ["FAMILIES", "FAMILY_KIND", "FAMILY_NAMES", "Family", "fmt"]

#: name -> family, in a fixed order (``generate(None, rng)`` draws uniformly from this order)
FAMILIES: dict[str, Family] = {
    m.FAMILY.name: m.FAMILY
    for m in (product_mix, diet, transportation, assignment, knapsack, bin_packing, facility_location,
              shift_scheduling, min_cost_flow, inventory_setup, portfolio)
}
FAMILY_NAMES: tuple[str, ...] = tuple(FAMILIES)
FAMILY_KIND: dict[str, str] = {name: f.kind for name, f in FAMILIES.items()}

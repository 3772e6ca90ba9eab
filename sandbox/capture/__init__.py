"""Solver-call capture that runs inside every sandbox child (SAT-RL §3.4).

SAT-RL pays ``r_tool`` when "the final tool call executes without compilation errors and uses the
sampled solver", and ``r_equiv`` when "the proposed formula extracted from the last tool call" is
equivalent to the ground truth. Both need to know what the program *did* with a solver, not what
it imported: the reward hack of §4.3 (``from z3 import *; print('z3 imported')``) imports z3 and
never calls it. This package patches the solve/check entry points of the five solvers of §3.1
(and Gurobi's ``optimize``, HiGHS's ``run``/``solve``, MathOpt's ``solve``) and records, at every
call, which solver family and function was called (``z3`` ``Solver.check``, ``python-sat``
``Glucose3.solve``, ``ortools`` ``CpSolver.Solve``, ...) and a snapshot of what the solver was
handed at that moment; at exit, the formula of the *last* call and the optimum of the last
optimisation solve go into the program's record (``core.py``, ``optimum.py``).

One module per captured library, each with ``install(capture)`` (patch the library, in the
zygote, once) and ``FORMULAS`` (snapshot kind -> the function serialising it): ``z3``,
``pysmt``, ``pysat`` (python-sat), ``ortools`` (CP-SAT, ``pywraplp``, MathOpt), ``sympy``,
``gurobipy``, ``highspy``. :func:`install` installs them all.

This package runs in the sandbox's zygote and children: it uses only the standard library and
the solvers, each optional, and is loaded with the rest of the sandbox before the server's
file-system view shrinks (nothing here imports lazily but the solvers). The patches are installed
once in the zygote (before it forks any child) and are inert there; ``Capture.begin`` arms them
in a child.

Trust (what the ``tool`` reward can and cannot prove): the capture runs inside the program's own
process, so it is evidence, not proof. What the sandbox guarantees:

- a call counts only once the patched solver entry point *returned* (calling the wrapper with a
  fake object that makes the real solver raise records nothing);
- the capture's state lives in a ``Capture`` object reachable only through the closures of
  the patched methods (no module-level state, and none of the sandbox's modules is in the
  program's ``sys.modules``), and the record carries a per-run secret the server sent with the
  program and checks before it believes a word of it: one write to the report descriptor, or
  one call of a function found by name, earns nothing;
- only the process that armed the capture reports (a forked helper that exits writes nothing).

The optimum is held to the same rules: it is read off a real solver object (the wrapper records
none for a call on anything else) right after the real solver returned, with solver methods
looked up when the patch was installed (a program that replaces ``Model.write`` afterwards, or
subclasses the model, does not change what is read); a solve that raised gives an optimum of
status ``error``, which earns nothing.

What it cannot prove: a program that walks the interpreter's objects (``gc``, closure cells,
``ctypes`` reads of its own memory) can find the capture and its secret and forge a record; such
a record can claim only a formula the program could have handed to a solver anyway, so the
``equivalence`` reward it buys is the reward of writing that program honestly, and ``tool`` is
0.1. A forged optimum can claim an objective value the program never solved for, so a reward
built on it should re-solve the model it carries (``mps``) outside the sandbox where it matters.
Nothing in the process can make in-process evidence unforgeable.
"""
from __future__ import annotations

from . import core, gurobipy, highspy, optimum, ortools, pysat, pysmt, sympy, z3
from .core import Capture

#: the capture of each library, by the name the server's hello reports it under
LIBRARIES = {"z3": z3, "pysmt": pysmt, "pysat": pysat, "ortools": ortools, "sympy": sympy,
             "gurobipy": gurobipy, "highspy": highspy}
#: the capture's own files: their frames (wrappers, the import hook) are not the program's
SOURCE_FILES = frozenset(m.__file__ for m in (core, optimum, *LIBRARIES.values()))
_FORMULAS = {kind: fn for lib in LIBRARIES.values() for kind, fn in lib.FORMULAS.items()}


def install(libraries=tuple(LIBRARIES)) -> tuple[Capture, dict[str, str]]:
    """Patch every available solver (in the zygote, once, before it forks). Returns the
    capture the patches record into (inert until ``Capture.begin``) and, per library, "ok"
    or the reason it is not instrumented. Nothing module-level refers to the capture."""
    cap = Capture(_FORMULAS, SOURCE_FILES)
    out = {}
    for name in libraries:
        try:
            LIBRARIES[name].install(cap)
            out[name] = "ok"
        except Exception as e:  # a solver that is missing or changed its API
            out[name] = f"{type(e).__name__}: {e}"
    return cap, out

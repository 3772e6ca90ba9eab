"""python-sat's capture: ``solve``, ``solve_limited`` and ``enum_models`` of every solver backend,
with the clauses each solver was given (the constructor's ``bootstrap_with``, ``add_clause``,
``append_formula``, native ``add_atmost``; assumptions become unit clauses) and the names of
every ``IDPool`` the program created, serialised as a ``cnf`` formula.

pysat's solvers keep their clauses in C; the capture remembers them in the solver object as
they are added (at most :data:`MAX_CLAUSES` per solver; past that the formula says
``truncated``).
"""
from __future__ import annotations

import functools

from .core import Capture, is_wrapped, mark_wrapped, patch

MAX_CLAUSES = 200_000  # clauses remembered per pysat solver


def install(cap: Capture) -> None:
    """Wrap every solver backend's entry points, and ``IDPool`` (whose names the formula
    carries)."""
    from pysat import formula as pf
    from pysat import solvers as ps

    orig_init = pf.IDPool.__init__
    if not is_wrapped(orig_init):

        @functools.wraps(orig_init)
        def init(self, *args, **kwargs):
            orig_init(self, *args, **kwargs)
            if cap.active:
                cap.pools.append(self)

        mark_wrapped(init, orig_init)
        pf.IDPool.__init__ = init

    backend = getattr(ps, "_SolverBackend", None)
    for cls in vars(ps).values():
        if not isinstance(cls, type) or cls is ps.Solver or "solve" not in cls.__dict__:
            continue
        if backend is not None and not issubclass(cls, backend):
            continue
        _patch_pysat_backend(cap, cls)


def _clauses_of(solver) -> list:
    return solver.__dict__.setdefault("_sandbox_clauses", [])


def _patch_pysat_backend(cap: Capture, cls) -> None:
    name = cls.__name__
    add = cls.__dict__.get("add_clause")
    if add is not None and not is_wrapped(add):

        @functools.wraps(add)
        def add_clause(self, clause, *args, **kwargs):
            if cap.active and not cap.depth:
                store = _clauses_of(self)
                if len(store) < MAX_CLAUSES:
                    try:
                        store.append([int(x) for x in clause])
                    except (TypeError, ValueError):
                        pass  # the solver itself will reject it
                else:
                    self.__dict__["_sandbox_overflow"] = True
            return add(self, clause, *args, **kwargs)

        mark_wrapped(add_clause, add)
        cls.add_clause = add_clause

    atmost = cls.__dict__.get("add_atmost")
    if atmost is not None and not is_wrapped(atmost):

        @functools.wraps(atmost)
        def add_atmost(self, lits, k, *args, **kwargs):
            if cap.active and not cap.depth:
                try:
                    _clauses_of(self).append({"atmost": [int(x) for x in lits], "k": int(k)})
                except (TypeError, ValueError):
                    pass
            return atmost(self, lits, k, *args, **kwargs)

        mark_wrapped(add_atmost, atmost)
        cls.add_atmost = add_atmost

    def snap(self, assumptions=(), *args, **kwargs):
        return (list(_clauses_of(self)), [int(x) for x in (assumptions or ())],
                bool(self.__dict__.get("_sandbox_overflow")))

    patch(cap, cls, "solve", "python-sat", f"{name}.solve", "pysat", snap)
    patch(cap, cls, "solve_limited", "python-sat", f"{name}.solve_limited", "pysat", snap)

    enum = cls.__dict__.get("enum_models") or getattr(cls, "enum_models", None)
    if enum is not None and not is_wrapped(enum):

        @functools.wraps(enum)
        def enum_models(self, assumptions=(), *args, **kwargs):
            if not cap.active or cap.depth:
                return enum(self, assumptions, *args, **kwargs)
            before = snap(self, assumptions)
            inner = enum(self, assumptions, *args, **kwargs)
            cap.record("python-sat", f"{name}.enum_models", "pysat", before)

            def iterate():
                # the blocking clauses enum_models adds are the library's, not the program's
                while True:
                    cap.depth += 1
                    try:
                        model = next(inner)
                    except StopIteration:
                        return
                    finally:
                        cap.depth -= 1
                    yield model

            return iterate()

        mark_wrapped(enum_models, enum)
        cls.enum_models = enum_models


def formula(snapshot, cap: Capture) -> dict:
    """The clauses and cardinality constraints a solver held, with the names the program's
    pools gave the variables they use."""
    clauses, assumptions, overflow = snapshot
    plain = [c for c in clauses if isinstance(c, list)]
    atmost = [[c["atmost"], c["k"]] for c in clauses if isinstance(c, dict)]
    plain += [[a] for a in assumptions]
    used = {abs(x) for c in plain for x in c} | {abs(x) for lits, _ in atmost for x in lits}
    names: dict[str, str] = {}
    pools = list(cap.pools)
    try:
        from pysat.formula import Formula

        pools += [p for p in getattr(Formula, "_vpool", {}).values() if p not in pools]
    except Exception:
        pass
    for pool in pools:
        for vid, obj in list(getattr(pool, "id2obj", {}).items()):
            if isinstance(vid, int) and vid > 0 and vid in used and str(vid) not in names:
                names[str(vid)] = obj if isinstance(obj, str) else repr(obj)
    out = {"kind": "cnf", "clauses": plain, "atmost": atmost, "names": names}
    if overflow:
        out["truncated"] = True
    return out


FORMULAS = {"pysat": formula}

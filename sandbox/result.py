"""What a run gives back: a typed :class:`SandboxResult` for every program, whatever it did,
:class:`SandboxError` only when the sandbox cannot be started at all, and
:class:`ExecutorUnavailable` when the executor a caller named cannot run programs (Ray not
installed, its cluster unreachable or unable to host a slot).

A server's answer is checked field by field before it becomes a result
(:meth:`SandboxResult.from_response`): the answer carries what a hostile program produced, and a
malformed one is that program's failure, never the caller's exception.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from . import record

#: every status a result can have
STATUSES = ("ok", "error", "timeout", "memory", "killed", "output_limit")
#: solver families as SAT-RL §3.1 names them (python-sat is imported as pysat)
SOLVER_FAMILIES = ("z3", "pysmt", "python-sat", "ortools", "sympy")


#: how the reason of a ``killed`` result ends when the program's server died under it or stopped
#: answering (the sandbox's failure, not the program's: :func:`server_lost`)
LOST = "it has been replaced"


def server_lost(result: "SandboxResult") -> bool:
    """Whether ``result`` is a program's server dying under it (a pool may run it again)."""
    return result.status == "killed" and result.reason.endswith(LOST)


class SandboxError(RuntimeError):
    """The sandbox could not be started at all (a program's failure is a result, never this)."""


class ExecutorUnavailable(SandboxError):
    """The executor a caller named (``executor="ray"`` or a Ray address) cannot run programs: Ray
    cannot be imported, its cluster cannot be reached, or it cannot host a pool's slot.

    A lease (``shared.PoolLease``) turns a :class:`SandboxError` into a ``killed`` result, so that
    an env on a machine where the local sandbox cannot start still steps; this subclass is never
    turned into one. The executor is the caller's setting, not the machine's limits: turned into
    results, it paid every program as killed (``solvergym eval --executor ray`` without Ray exited
    0 with the oracle's return halved), so it is raised where the setting is used instead: at the
    lease (``gym.make``) for a missing Ray, at the first program for a cluster that cannot run it."""


@dataclass
class SandboxResult:
    """What one program did (see :data:`STATUSES`).

    ``solvers_imported``: solver families the program imported itself; ``solver_calls``:
    ``(family, function)`` of every solve/check call, outermost only, in order (the first 200;
    ``n_solver_calls`` counts all); ``formula``: what the *last* solve call was handed
    (``kind`` ``smt2``/``cnf``/``cpsat``/``sympy``/``lp``, with ``solver`` and ``call``), or
    ``None`` with ``formula_error`` saying why when serialising failed.

    ``optimum``: the result of the program's *last* optimisation solve (gurobipy
    ``Model.optimize``, highspy ``Highs.run``/``solve``, OR-Tools ``pywraplp`` ``Solve``, CP-SAT
    ``CpSolver.Solve``/``solve``, MathOpt ``mathopt.solve``), read from the solver object right
    after the call returned; ``None`` when the program made no such solve (printing an objective
    is not solving). A dict::

        {"solver": "gurobipy" | "highspy" | "ortools",
         "call": "Model.optimize" | "Highs.run" | "linear_solver.Solve" | "CpSolver.Solve" | "mathopt.solve",
         "status": "optimal" | "infeasible" | "unbounded" | "inf_or_unbd" | "time_limit"
                   | "feasible" (a limit hit with an incumbent) | "error" | "other",
         "raw_status": str,          # the solver's own status name ("OPTIMAL", "kOptimal", ...)
         "objective": float | None,  # the incumbent's objective value (finite or +-inf)
         "sense": "min" | "max" | None,
         "num_vars", "num_int", "num_bin", "num_constrs", "num_qconstrs", "num_q_obj_terms",
         "num_gen_constrs": int,     # -1 where the solver cannot tell
         "mps": str | None,          # the solved model as free MPS text (gurobipy, highspy,
                                     # pywraplp; at most 1 MiB)
         "mps_truncated": bool,      # the MPS was left out for its size
         "error": str | None}        # e.g. "GurobiError 10010: Model too large for size-limited license; ..."

    ``num_int`` counts general integers and ``num_bin`` binaries (an integer variable bounded to
    [0, 1] is binary); general constraints are Gurobi's general constraints plus SOS (MathOpt:
    indicators; CP-SAT: every non-linear constraint). A solve that raised is the last optimum too,
    with status ``error`` (the program saw the exception). Like the call list it is evidence from
    inside the program's process (``capture/``, "Trust").
    """

    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    duration_s: float
    reason: str = ""
    signal: str | None = None
    cpu_s: float = 0.0
    stdout_bytes: int = 0
    stderr_bytes: int = 0
    solvers_imported: list[str] = field(default_factory=list)
    solver_calls: list[tuple[str, str]] = field(default_factory=list)
    n_solver_calls: int = 0
    formula: dict | None = None
    formula_error: str | None = None
    optimum: dict | None = None
    server_pid: int | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def stdout_truncated(self) -> bool:
        return self.stdout.startswith("[... ") and self.stdout_bytes > len(self.stdout.encode())

    def called(self, family: str | None = None) -> bool:
        """Whether the program made a solve/check call (of ``family``, when given)."""
        return any(f == family or family is None for f, _ in self.solver_calls)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_response(cls, resp: Any, server_pid: int | None) -> "SandboxResult":
        """The result a server sent, every field checked (a malformed one becomes ``killed`` or,
        for the program's record, ``error``, with the reason; this never raises)."""
        if not isinstance(resp, dict):
            return cls.failure("killed", "the sandbox server sent a malformed answer", pid=server_pid)
        status = resp.get("status")
        if status not in STATUSES:
            return cls.failure("killed", "the sandbox server sent an unknown status", pid=server_pid)
        reason = _text(resp.get("reason"))
        rep: dict = {}
        optimum = None
        if resp.get("report") is not None:
            try:
                rep = record.clean(resp["report"])
                optimum = rep.get("optimum")
                if optimum is not None:  # the record carries numbers as text (no floats)
                    optimum = {**optimum, "objective": record.objective_value(optimum["objective"])}
            except record.RecordError as e:
                status, reason = "error", f"the program's solver-call record was rejected: {e}"
                rep, optimum = {}, None
        code = resp.get("exit_code")
        return cls(
            status=status,
            exit_code=code if type(code) is int else None,
            stdout=_text(resp.get("stdout")),
            stderr=_text(resp.get("stderr")),
            duration_s=_number(resp.get("duration_s")),
            reason=reason,
            signal=resp.get("signal") if isinstance(resp.get("signal"), str) else None,
            cpu_s=_number(resp.get("cpu_s")),
            stdout_bytes=_count(resp.get("stdout_bytes")),
            stderr_bytes=_count(resp.get("stderr_bytes")),
            solvers_imported=list(rep.get("imported", [])),
            solver_calls=[(c[0], c[1]) for c in rep.get("calls", [])],
            n_solver_calls=rep.get("n_calls", 0),
            formula=rep.get("formula"),
            formula_error=rep.get("formula_error"),
            optimum=optimum,
            server_pid=server_pid,
        )

    @classmethod
    def failure(cls, status: str, reason: str, duration: float = 0.0, pid: int | None = None) -> "SandboxResult":
        """A result for a program that did not run to an answer (no output, no record)."""
        return cls(status=status, exit_code=None, stdout="", stderr="", duration_s=duration, reason=reason,
                   server_pid=pid)


def _text(x: Any) -> str:
    return x if isinstance(x, str) else ""


def _number(x: Any) -> float:
    return float(x) if type(x) in (int, float) and 0 <= x < 1e12 else 0.0


def _count(x: Any) -> int:
    return x if type(x) is int and x >= 0 else 0

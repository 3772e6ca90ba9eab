"""What the sandbox does to be fast must change nothing a program sees or is paid for.

Four things take work off a program's path (``docs/design.md``, "Sandbox"): a waiting child
rehearses the optimisation libraries before its program arrives (``rehearse=``), the server
answers once the program's output, record and exit status are final instead of after the kernel
has freed its memory (and does not wait for that before the next program either, where nothing
else of the program is left), the next child is forked while a program runs, and the zygote
backs its image with huge pages while idle. Each test here runs real programs in a real pool;
the first kind checks that a rehearsed child is a clean one, the second that an early answer is
the answer the slow path gives and that a program left behind is still taken down.
"""
import os
import time

import pytest

from solvergym.envs.opt.mps import read_mps
from solvergym.sandbox import REHEARSABLE, SOLVER_FAMILIES, Limits, SandboxPool, linux
from solvergym.envs.sat.decision import decision_instance
from solvergym.envs.sat.programs import cnf_program

LIMITS = Limits(timeout_s=20.0)
OPTIMISERS = ("gurobipy", "highspy", "ortools")
CNF = decision_instance([3, 2, 2], 8, 0, satisfiable=True)  # variables x(i,j,k), not the rehearsal's a, b, c
#: a small LP in each optimisation library, solved between two readings of the minor faults
SOLVES = {
    "gurobipy": """
import gurobipy as gp
m = gp.Model(); m.Params.OutputFlag = 0; m.Params.Threads = 1
x = m.addVar(name="x"); y = m.addVar(name="y")
m.addConstr(x + y <= 4); m.addConstr(x + 3 * y <= 6)
m.setObjective(3 * x + 2 * y, gp.GRB.MAXIMIZE)
m.optimize()
""",
    "highspy": """
import highspy
h = highspy.Highs(); h.setOptionValue("output_flag", False); h.setOptionValue("threads", 1)
x = h.addVariable(lb=0); y = h.addVariable(lb=0)
h.addConstr(x + y <= 4); h.addConstr(x + 3 * y <= 6)
h.maximize(3 * x + 2 * y)
""",
    "ortools": """
from ortools.linear_solver import pywraplp
s = pywraplp.Solver.CreateSolver("GLOP")
x = s.NumVar(0, s.infinity(), "x"); y = s.NumVar(0, s.infinity(), "y")
s.Add(x + y <= 4); s.Add(x + 3 * y <= 6)
s.Maximize(3 * x + 2 * y)
s.Solve()
""",
}
#: the SAT-RL oracle's program for each solver family (OR-Tools: CP-SAT)
CNF_PROGRAMS = {s: cnf_program(s, CNF.clauses, CNF.variables) for s in SOLVER_FAMILIES}
PROGRAMS = {lib: {**CNF_PROGRAMS, **SOLVES}[lib] for lib in REHEARSABLE}  # OR-Tools: the LP
FAULTS = "import resource\n_f = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n{solve}\n" \
         "print('faults', resource.getrusage(resource.RUSAGE_SELF).ru_minflt - _f)\n"


@pytest.fixture(scope="module")
def pool():
    p = SandboxPool(1).start()  # one server: each request's child is the one the last prepared
    yield p
    p.close()


def _rehearsed(pool, code: str):
    """Run ``code`` in a child that had the time to rehearse every library."""
    pool.run("pass", LIMITS, rehearse=REHEARSABLE)
    time.sleep(1.0)  # the rehearsal takes ~20-50 ms of one core; a loaded machine may need more
    return pool.run(code, LIMITS, rehearse=REHEARSABLE)


def test_a_rehearsed_child_holds_nothing_of_the_rehearsal(pool):
    r = _rehearsed(pool, "import os\nprint(sorted(os.listdir('.')))")
    # no call, no optimum, no import, no output of the rehearsal; its exported models are gone
    assert (r.status, r.stdout, r.stderr) == ("ok", "[]\n", "")
    assert (r.solver_calls, r.n_solver_calls, r.solvers_imported, r.optimum, r.formula) == ([], 0, [], None, None)
    # a printed objective is still not an optimum after a rehearsal
    r = _rehearsed(pool, "print('Just print the best obj: 12.0')")
    assert r.optimum is None and r.solver_calls == []


@pytest.mark.parametrize("lib", OPTIMISERS)
def test_a_rehearsed_child_captures_the_programs_own_solve(pool, lib):
    r = _rehearsed(pool, SOLVES[lib])
    assert r.status == "ok", r.stderr[-2000:]
    opt = r.optimum
    # the program's model (2 variables, 2 rows, max 12), not the rehearsal's (2 rows, a MIP of 7.5)
    assert (opt["solver"], opt["status"], opt["sense"], opt["num_vars"], opt["num_constrs"]) == \
        (lib, "optimal", "max", 2, 2)
    assert abs(opt["objective"] - 12.0) < 1e-9 and (opt["num_int"], opt["num_bin"]) == (0, 0)
    # the exported model is the program's: its right-hand sides 4 and 6, not the rehearsal's 4.5
    model = read_mps(opt["mps"]).model
    assert r.n_solver_calls == 1 and sorted(c.hi for c in model.constraints) == [4.0, 6.0]


@pytest.mark.parametrize("family", SOLVER_FAMILIES)
def test_a_rehearsed_child_captures_the_programs_own_formula(pool, family):
    r = _rehearsed(pool, CNF_PROGRAMS[family])
    assert r.status == "ok" and r.stdout.startswith("sat"), (r.stdout, r.stderr[-1000:])
    assert len(r.solver_calls) == 1 and r.solver_calls[0][0] == family
    # CP-SAT's solve is an optimum too: the program's 8 clauses, not the rehearsal's 3 and a row
    assert r.optimum is None if family != "ortools" else r.optimum["num_gen_constrs"] == len(CNF.clauses) == 8
    text = str(r.formula)
    assert "x_0_0_0" in text and "'a'" not in text and '"a"' not in text and "(declare-fun a " not in text


@pytest.mark.parametrize("lib", REHEARSABLE)
def test_rehearsal_takes_the_first_solves_page_copies_off_the_path(pool, lib):
    # Minor faults count the pages a process copies or maps on first touch (~5 us each on this
    # machine): the work a rehearsal exists to do before the program arrives (for z3 and pysmt,
    # the copies of the pages their probe wrote, and nothing else). A count, not a time.
    code = FAULTS.format(solve=PROGRAMS[lib])
    cold = pool.run("pass", LIMITS)  # the next child rehearses nothing
    time.sleep(0.5)
    cold = pool.run(code, LIMITS)
    warm = _rehearsed(pool, code)
    n_cold, n_warm = (int(r.stdout.split()[-1]) for r in (cold, warm))
    assert cold.status == warm.status == "ok"
    assert n_warm < 0.5 * n_cold, (lib, n_cold, n_warm)


def test_a_programs_output_does_not_depend_on_whether_its_child_rehearsed(pool):
    # whether a child had the time to rehearse depends on timing; what a program prints and what
    # the capture reports must not (z3 and pysmt only get their pages copied for this reason: a
    # rehearsed z3 context found another model; HiGHS's once-per-process banner is printed by the
    # zygote)
    cold = SandboxPool(1).start()
    try:
        programs = list(PROGRAMS.values()) + [cnf_program(s, CNF.clauses, CNF.variables) for s in ("z3", "pysmt")]
        for code in programs:
            a = cold.run(code, LIMITS)
            b = _rehearsed(pool, code)
            assert a.status == b.status == "ok"
            assert (a.stdout, a.stderr, a.formula, a.solver_calls) == (b.stdout, b.stderr, b.formula, b.solver_calls)
            assert (a.optimum or {}).get("mps") == (b.optimum or {}).get("mps")
    finally:
        cold.close()


def test_highs_in_a_rehearsed_child_takes_the_programs_thread_setting(pool):
    # the rehearsal stops HiGHS's scheduler (threads=1): a program asking for more, or for the
    # default, starts its own instead of meeting "kNotset"
    for threads in ("", 'h.setOptionValue("threads", 2)'):
        code = SOLVES["highspy"].replace('h.setOptionValue("threads", 1)', threads)
        r = _rehearsed(pool, code)
        assert r.status == "ok" and r.optimum["status"] == "optimal", (threads, r.stderr[-1000:], r.optimum)


def test_rehearse_takes_known_library_names(pool):
    with pytest.raises(ValueError, match="cannot rehearse"):
        pool.run("pass", LIMITS, rehearse=("cplex",))
    with pytest.raises(ValueError, match="cannot rehearse"):
        pool.run("pass", LIMITS, rehearse=("z3", "mosek"))
    with pytest.raises(TypeError):
        pool.run("pass", LIMITS, rehearse="gurobipy")


# ----------------------------------------------------------------------------- the early answer
@pytest.mark.parametrize("code, status, exit_code, stdout", [
    ("print('a')", "ok", 0, "a\n"),
    ("import sys\nprint('b')\nsys.exit(3)", "error", 3, "b\n"),
    ("import os\nprint('c', flush=True)\nos._exit(5)", "error", 5, "c\n"),
    ("import os\nos._exit(256 + 7)", "error", 7, ""),  # what the kernel keeps of it
    ("print('d')\nraise KeyError('k')", "error", 1, "d\n"),
    ("import os\nos._exit('no')", "error", 1, ""),  # a TypeError, as in any interpreter
])
def test_the_early_answer_has_the_kernels_exit_status(pool, code, status, exit_code, stdout):
    r = pool.run(code, LIMITS)
    assert (r.status, r.exit_code, r.signal, r.stdout) == (status, exit_code, None, stdout), r.stderr


def test_the_early_answer_counts_the_programs_cpu_time(pool):
    r = pool.run("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass", LIMITS)
    assert r.status == "ok" and 0.3 <= r.cpu_s < 1.5, r.cpu_s


def test_a_descendant_holding_the_output_is_still_waited_for(pool):
    # the program exits at once; a child it forked writes on for a while: its output is part of
    # the answer, which therefore cannot come before that child lets the pipe go (or is killed)
    code = ("import os, time\nif os.fork() == 0:\n    time.sleep(0.02); print('late', flush=True); os._exit(0)\n"
            "print('early', flush=True)")
    r = pool.run(code, LIMITS)
    assert r.status == "ok" and sorted(r.stdout.split()) == ["early", "late"]


def test_a_program_runs_no_more_code_once_the_next_one_is_answered(pool):
    # the answer may leave before the kernel has freed the program's memory, and the next
    # program may run while it does; but by then the program is gone or exiting (PF_EXITING: no
    # more user code), and the zygote reaps it
    pids = []
    for _ in range(5):
        a = pool.run("import os\nprint(os.getpid())", LIMITS)
        b = pool.run("print(1)", LIMITS)
        assert a.status == b.status == "ok"
        pid = int(a.stdout)
        assert linux.exit_state(pid) is not None or not os.path.exists(f"/proc/{pid}")  # in this order
        pids.append(pid)
    pool.run("print(2)", LIMITS)  # the exits reported and reaped by now, or soon
    deadline = time.monotonic() + 30
    while any(os.path.exists(f"/proc/{p}") for p in pids) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not any(os.path.exists(f"/proc/{p}") for p in pids)


def test_a_program_that_left_a_process_is_still_waited_for(pool):
    # the first process exits at once, but a child it forked lives on (in its own session, with
    # no pipe open): not exiting alone, so the clean-up takes both down (and waits) before the next
    # program gets its child
    code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    print('left', os.getpid(), flush=True)\n" \
           "    os.closerange(0, 1 << 16)\n    time.sleep(30)\nprint('first', os.getpid(), flush=True)"
    a = pool.run(code, LIMITS)
    assert a.status == "ok"
    pids = dict(line.split() for line in a.stdout.splitlines())
    left = int(pids["left"])
    assert left != int(pids["first"])
    b = pool.run("print(1)", LIMITS)
    assert b.status == "ok"
    assert linux.exit_state(left) is not None or not os.path.exists(f"/proc/{left}")
    server = pool._servers[0]
    zygote = server.hello["zygote_pid"]
    kids = [int(x) for t in os.listdir(f"/proc/{zygote}/task")
            for x in open(f"/proc/{zygote}/task/{t}/children").read().split()]
    running = [k for k in kids if linux.exit_state(k) is None]  # b's own may still be exiting
    # the child waiting for the next program, once the zygote has forked it (it may not have yet
    # under load), and nothing else
    assert left not in running and len(running) <= 1, kids


def test_a_leader_that_exits_alone_leaves_its_threads_waited_for(pool):
    # SYS_exit on the main thread ends that thread only: its process is not exiting while another
    # thread runs, so neither the answer nor the next program comes before the thread is done
    code = """
import ctypes, os, threading, time
def spin():
    time.sleep(0.3)
    print("thread alive", flush=True)
    os._exit(0)
threading.Thread(target=spin).start()
ctypes.CDLL(None).syscall(60, 0)
"""
    r = pool.run(code, LIMITS)
    assert (r.status, r.exit_code, r.stdout) == ("ok", 0, "thread alive\n"), (r.status, r.reason)
    assert pool.run("print(1)", LIMITS).stdout == "1\n"


def test_huge_page_chunks_are_reported(pool):
    # the image's private memory, in 2 MiB chunks the idle zygote backs with huge pages
    assert pool._servers[0].hello["huge_page_chunks"] > 10


def test_the_probes_note_the_pages_they_write_and_the_file_pages_they_read(pool):
    # what a waiting child asked to rehearse z3 or pysmt copies and maps ahead (zygote._rehearse)
    pages = pool._servers[0].hello["prefault_pages"]
    for lib in ("z3", "pysmt"):
        assert pages[lib]["write"] > 50 and pages[lib]["read"] > 500, pages


def test_rehearsal_maps_the_file_pages_a_z3_program_reads(pool):
    # Past the page copies, a rehearsed z3 program's first solve still mapped the code and
    # read-only data it read (a fork maps none of a file's pages), one fault each: the probe's
    # read pages, mapped ahead, leave it a fraction of those. A count, not a time.
    code = FAULTS.format(solve=PROGRAMS["z3"])
    cold = pool.run("pass", LIMITS)
    time.sleep(0.5)
    cold = pool.run(code, LIMITS)
    warm = _rehearsed(pool, code)
    n_cold, n_warm = (int(r.stdout.split()[-1]) for r in (cold, warm))
    assert n_warm < 0.15 * n_cold, (n_cold, n_warm)  # ~5%; ~25% with the page copies alone


def test_the_latency_profile_accounts_for_the_run_and_changes_nothing(pool):
    """``SandboxPool.profile`` (``benchmarks/sandbox.py --profile``): the phases of one program's
    latency, measured on one clock in both processes; the result is the program's own."""
    code = "import time\ntime.sleep(0.2)\nprint('profiled')"
    pool.run("print('warm')")
    result, phases = pool.profile(code, LIMITS)
    assert (result.status, result.stdout) == ("ok", "profiled\n")
    path = ("send", "child_wait", "handoff", "run", "collect", "answer", "receive")
    assert all(phases[k] >= 0 for k in path)
    assert phases["run"] >= 200.0  # the program's own sleep is in the run phase, not elsewhere
    assert sum(phases[k] for k in path) == pytest.approx(phases["total"], rel=1e-6)
    assert max(phases[k] for k in path if k != "run") < phases["run"]
    _, again = pool.profile("print(2)", LIMITS)
    assert again["cleanup"] is not None and again["cleanup"] >= 0  # the previous program's, off the path

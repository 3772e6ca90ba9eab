"""The solver sandbox: real fork servers, real child processes, real solvers (no mocks).

Adversarial programs run only inside the sandbox, whose rlimits are set in the child before the
program starts (the machine is shared: a fork bomb or a 10 GB allocation must never run outside).
"""
import asyncio
import os
import signal
import socket
import time
import uuid
from pathlib import Path

import pytest
from conftest import executor_pool_fixture

from solvergym.sandbox import EXECUTORS, Limits, SandboxConfig, SandboxPool, SandboxResult
from solvergym.envs.sat.programs import cnf_program, hack_program

ROOT = Path(__file__).resolve().parents[1]
IS_ROOT = os.geteuid() == 0
FAST = Limits(timeout_s=5.0)


@pytest.fixture(scope="module", params=EXECUTORS)
def pool(request):
    # every hostile program behaves the same wherever the servers run (here: Ray actors on a
    # local cluster of 2 CPUs)
    p = executor_pool_fixture(request, 2)
    yield p
    p.close()


def _uid_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Uid:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def _processes_with_uid_in(lo: int, hi: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            uid = _uid_of(int(entry))
            if uid is not None and lo <= uid < hi:
                out.append(int(entry))
    return out


def _ppid_of(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _sandbox_processes(pool: SandboxPool) -> list[int]:
    """Processes of the pool's children uids, less the one child each server keeps forked and
    waiting for the next program."""
    out = []
    for s in pool._servers:
        if s.uid_base:
            procs = _processes_with_uid_in(s.uid_base, s.uid_base + 4096)
            waiting = [p for p in procs if _ppid_of(p) == s.hello.get("zygote_pid")]
            out += procs if len(waiting) > 1 else [p for p in procs if p not in waiting]
    return out


# ----------------------------------------------------------------------------- basics
def test_isolation_levels_are_reported(pool):
    iso = pool.isolation
    active = set(iso["active"])
    assert {"rlimits", "fresh-workdir", "clean-env", "subreaper"} <= active
    if IS_ROOT:
        assert "uid-drop" in active
        # this machine lets root unshare namespaces; a machine that does not says why
        assert {"netns", "mountns", "chroot", "hidepid", "private-tmp"} <= active or "namespaces" in iso["inactive"]
    assert iso["inactive"]["seccomp"].startswith("off")
    if "readonly-root" in active:  # Landlock is automatic only where the namespaces are missing
        assert iso["inactive"]["landlock"] == "off (the namespaces already confine writes)"
    assert iso["import_ms"]["z3"] != "unavailable" and iso["server_rss_kb"] > 10_000


def test_ok_error_exit_codes_and_streams(pool):
    r = pool.run("import sys\nprint('out')\nprint('err', file=sys.stderr)")
    assert (r.status, r.exit_code, r.stdout, r.stderr) == ("ok", 0, "out\n", "err\n")
    r = pool.run("raise ValueError('boom')")
    assert r.status == "error" and r.exit_code == 1
    assert r.stderr.startswith("Traceback") and "ValueError: boom" in r.stderr and 'File "<tool_call>", line 1' in r.stderr
    assert pool.run("import sys; sys.exit(3)").exit_code == 3
    assert pool.run("import sys; sys.exit(0)").status == "ok"
    r = pool.run("import sys; sys.exit('bye')")
    assert r.exit_code == 1 and r.stderr == "bye\n"
    r = pool.run("def f(:\n  pass")
    assert r.status == "error" and "SyntaxError" in r.stderr
    r = pool.run("x = input()")
    assert r.status == "error" and "EOFError" in r.stderr  # stdin is closed
    r = pool.run("import sys; sys.stdout.buffer.write(b'bad \\xff\\xfe bytes\\n'); sys.stdout.flush()")
    assert r.status == "ok" and r.stdout == "bad \ufffd\ufffd bytes\n"


def test_signals_are_killed_status(pool):
    r = pool.run("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert (r.status, r.signal, r.exit_code) == ("killed", "SIGSEGV", None)


def test_fresh_workdir_each_time_and_removed(pool):
    r1 = pool.run("import os\nopen('note.txt', 'w').write('x')\nprint(os.getcwd()); print(os.listdir('.'))")
    r2 = pool.run("import os\nprint(os.getcwd()); print(os.listdir('.'))")
    cwd1, files1 = r1.stdout.splitlines()
    cwd2, files2 = r2.stdout.splitlines()
    assert files1 == "['note.txt']" and files2 == "[]" and cwd1 != cwd2
    assert not os.path.exists(cwd1) or IS_ROOT  # under namespaces the path is not even ours to see
    r = pool.run(f"import os\nprint(os.path.exists({cwd1!r}))")
    assert r.stdout.strip() == "False"


def test_environment_is_clean(pool):
    os.environ["SOLVERGYM_TEST_SECRET"] = "seed=1234"
    try:
        fresh = SandboxPool(1)
        r = fresh.run("import os\nprint(sorted(os.environ))")
        fresh.close()
    finally:
        del os.environ["SOLVERGYM_TEST_SECRET"]
    assert r.stdout.strip() == "['HOME', 'LANG', 'PATH', 'PYTHONIOENCODING', 'TMPDIR']"


def test_run_many_and_async_keep_order(pool):
    codes = [f"print({i} * {i})" for i in range(12)]
    assert [r.stdout for r in pool.run_many(codes)] == [f"{i * i}\n" for i in range(12)]
    results = asyncio.run(pool.arun_many(codes[:4]))
    assert [r.stdout for r in results] == ["0\n", "1\n", "4\n", "9\n"]
    assert len({r.server_pid for r in pool.run_many(["import time; time.sleep(0.2)"] * 4)}) == 2


# ----------------------------------------------------------------------------- instrumentation
CLAUSES = [[1, -2], [2, 3], [-1, -3]]
NAMES = ["x(0,0)", "x(0,1)", "x(1,0)"]
KINDS = {"z3": "smt2", "pysmt": "smt2", "python-sat": "cnf", "ortools": "cpsat", "sympy": "sympy"}


@pytest.mark.parametrize("solver", list(KINDS))
def test_solver_call_and_formula_capture(pool, solver):
    r = pool.run(cnf_program(solver, CLAUSES, NAMES), FAST)
    assert r.status == "ok" and r.stdout.splitlines()[0] == "sat", r.stderr
    assert r.solvers_imported == [solver]
    assert {f for f, _ in r.solver_calls} == {solver} and r.n_solver_calls == 1
    f = r.formula
    assert f["kind"] == KINDS[solver] and f["solver"] == solver
    if f["kind"] == "smt2":
        assert f["text"].count("(assert") >= 1 and "x_0_1" in f["text"]
    elif f["kind"] == "cnf":
        assert f["clauses"] == CLAUSES and f["names"] == {"1": "x_0_0", "2": "x_0_1", "3": "x_1_0"}
    elif f["kind"] == "cpsat":
        assert [v["name"] for v in f["variables"]] == ["x_0_0", "x_0_1", "x_1_0"]
        assert [c["type"] for c in f["constraints"]] == ["bool_or"] * 3
        assert f["constraints"][0]["literals"] == [0, -2]  # x_0_0 or not x_0_1
        assert 'name: "x_0_0"' in f["proto_text"] and "bool_or" in f["proto_text"]
    else:
        assert f["tree"]["op"] == "And" and len(f["tree"]["args"]) == 3


@pytest.mark.parametrize("solver", list(KINDS))
def test_import_alone_is_not_a_solver_call(pool, solver):
    r = pool.run(hack_program(solver))
    assert r.status == "ok" and r.stdout == f"{solver} imported\n"
    assert r.solvers_imported == [solver]
    assert r.solver_calls == [] and r.formula is None and not r.called(solver)


def test_last_call_wins_and_snapshot_is_taken_at_call_time(pool):
    code = """
from z3 import Bools, Solver, Or
a, b, c = Bools('a b c')
s = Solver(); s.add(a); s.check()
t = Solver(); t.add(Or(b, c)); t.check()
t.add(a)   # after the last check: not part of what was handed to the solver
"""
    r = pool.run(code)
    assert [c for _, c in r.solver_calls] == ["Solver.check", "Solver.check"]
    text = r.formula["text"]
    assert "(or b c)" in text and "(declare-fun a " not in text and r.formula["assertions"] == 1


def test_pysat_clause_routes_assumptions_and_idpool_names(pool):
    code = """
from pysat.formula import CNF, IDPool
from pysat.solvers import Solver, Cadical195
pool = IDPool()
p, q, r = pool.id('p'), pool.id('q'), pool.id(('x', 1, 2))
cnf = CNF(from_clauses=[[p, q]])
with Solver(name='m22', bootstrap_with=cnf) as s:
    s.add_clause([-p, r])
    s.append_formula([[q, r], [-q]])
    print(s.solve(assumptions=[p]))
with Cadical195(bootstrap_with=[[p]]) as s2:
    print(list(s2.enum_models()))
"""
    r = pool.run(code)
    assert r.status == "ok", r.stderr
    assert [c for _, c in r.solver_calls] == ["Minisat22.solve", "Cadical195.enum_models"]
    # the last call is enum_models: its blocking clauses are the library's, not the program's
    assert r.formula["clauses"] == [[1]]
    r = pool.run(code.replace("with Cadical195", "if False:\n  pass\nwith Cadical195").split("with Cadical195")[0])
    assert r.formula["clauses"] == [[1, 2], [-1, 3], [2, 3], [-2], [1]]  # assumption p as a unit
    assert r.formula["names"] == {"1": "p", "2": "q", "3": "('x', 1, 2)"}


def test_nested_solver_calls_count_once(pool):
    r = pool.run(cnf_program("pysmt", CLAUSES, NAMES))  # pysmt runs z3 underneath
    assert r.solver_calls == [("pysmt", "Solver.solve")]
    r = pool.run("from z3 import *\nx = Bool('x')\nsolve(x)")
    assert r.solver_calls == [("z3", "Solver.check")] and r.stdout.strip() == "[x = True]"


def test_os_exit_still_reports_and_exceptions_after_a_call(pool):
    r = pool.run("from z3 import *\ns = Solver(); s.add(Bool('p')); s.check()\nimport os; os._exit(0)")
    assert r.status == "ok" and r.formula["kind"] == "smt2"
    r = pool.run("from z3 import *\ns = Solver(); s.add(Bool('p')); s.check()\n1/0")
    assert r.status == "error" and r.called("z3") and r.formula is not None


def test_other_solvers_are_recorded(pool):
    r = pool.run("from ortools.linear_solver import pywraplp\ns = pywraplp.Solver.CreateSolver('SCIP')\n"
                 "x = s.IntVar(0, 5, 'x'); s.Add(x >= 2); s.Minimize(x); print(s.Solve())")
    assert r.solver_calls == [("ortools", "linear_solver.Solve")] and r.formula["kind"] == "lp"
    r = pool.run("import gurobipy as gp\nm = gp.Model(); m.Params.OutputFlag = 0\nx = m.addVar(vtype='B')\n"
                 "m.addConstr(x >= 1); m.optimize(); print(m.Status)")
    assert r.status == "ok" and r.solver_calls == [("gurobipy", "Model.optimize")], r.stderr


# ----------------------------------------------------------------------------- limits
def test_infinite_loop_times_out(pool):
    t = time.perf_counter()
    r = pool.run("while True:\n    pass", Limits(timeout_s=1.0))
    assert r.status == "timeout" and "wall-clock" in r.reason
    assert 0.9 < r.duration_s < 6.0 and time.perf_counter() - t < 10.0  # enforced, not fast
    r = pool.run("import time\ntime.sleep(30)", Limits(timeout_s=0.5))  # no CPU used: wall clock
    assert r.status == "timeout" and r.duration_s < 6.0


def test_cpu_limit_is_a_timeout(pool):
    # the CPU limit, not the (much later) wall clock, ends it, however busy the machine is
    r = pool.run("while True:\n    pass", Limits(timeout_s=60.0, cpu_s=1))
    assert r.status == "timeout" and "CPU" in r.reason and 0.5 <= r.cpu_s < 2.5 and r.duration_s < 60


def test_ten_gigabytes_is_a_memory_error(pool):
    r = pool.run("x = bytearray(10 * 1024 ** 3)\nprint('allocated')", Limits(timeout_s=5.0, memory_mb=512))
    assert r.status == "memory" and "allocated" not in r.stdout
    r = pool.run("x = []\nwhile True:\n    x.append(bytearray(50 * 1024 ** 2))", Limits(timeout_s=10.0, memory_mb=256))
    assert r.status == "memory"
    assert pool.run("print('still fine')").stdout == "still fine\n"


def test_hundred_megabytes_of_output_is_capped(pool):
    t = time.perf_counter()
    r = pool.run("import sys\nfor _ in range(100):\n    sys.stdout.write('x' * (1 << 20))",
                 Limits(timeout_s=20.0, output_bytes=4 << 20, keep_bytes=1000))
    assert r.status == "output_limit" and r.stdout_bytes >= 4 << 20
    assert r.stdout.startswith("[... ") and "bytes truncated ...]" in r.stdout
    assert r.stdout.endswith("x" * 1000) and len(r.stdout) < 1100 and r.stdout_truncated
    assert time.perf_counter() - t < 20  # killed at the limit, not after 100 MB


def test_writing_a_big_file_hits_the_file_size_limit(pool):
    r = pool.run("open('big', 'wb').write(b'0' * (64 << 20))", Limits(fsize_mb=1))
    assert r.status in ("error", "killed") and r.status != "ok"
    assert "SIGXFSZ" in (r.signal or "") + r.reason or "File too large" in r.stderr


def test_fork_bomb_is_contained(pool):
    before = len(os.listdir("/proc"))
    code = "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    r = pool.run(code, Limits(timeout_s=2.0, nproc=32))
    assert r.status in ("timeout", "error", "killed")
    # every process of the child's uid is gone: killed at once, reaped by the zygote (its
    # subreaper) as it gets the CPU, which on a loaded 2-core machine took more than 0.2 s
    deadline = time.monotonic() + 5.0
    while _sandbox_processes(pool) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sandbox_processes(pool) == []
    assert len(os.listdir("/proc")) < before + 10
    assert pool.run("print('alive')").stdout == "alive\n"


def test_orphans_and_new_sessions_are_cleaned_up(pool):
    code = ("import os, time\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n        time.sleep(60)\n"
            "    os._exit(0)\nprint('parent done')")
    r = pool.run(code, FAST)
    assert r.status == "ok" and r.stdout == "parent done\n"
    time.sleep(0.2)
    assert _sandbox_processes(pool) == []


@pytest.mark.skipif(not IS_ROOT, reason="raising limits is only refused after the uid drop")
def test_raising_rlimits_is_refused(pool):
    code = """
import resource
for name in ('RLIMIT_AS', 'RLIMIT_NPROC', 'RLIMIT_CPU', 'RLIMIT_FSIZE'):
    lim = getattr(resource, name)
    try:
        resource.setrlimit(lim, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        print(name, 'RAISED')
    except (ValueError, OSError) as e:
        print(name, 'refused')
import os
try:
    os.setuid(0); print('root again')
except PermissionError:
    print('setuid refused')
"""
    r = pool.run(code)
    assert r.stdout.split("\n")[:5] == ["RLIMIT_AS refused", "RLIMIT_NPROC refused", "RLIMIT_CPU refused",
                                        "RLIMIT_FSIZE refused", "setuid refused"]


# ----------------------------------------------------------------------------- isolation
def _namespaced(pool) -> bool:
    return "netns" in pool.isolation["active"]


def test_no_network_to_the_host_loopback(pool):
    if not _namespaced(pool):
        pytest.skip("no network namespace on this machine: " + pool.isolation["inactive"].get("namespaces", ""))
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.5)
    port = srv.getsockname()[1]
    code = (f"import socket\ntry:\n    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n    print('CONNECTED')\n"
            "except OSError as e:\n    print('refused:', e)")
    r = pool.run(code)
    srv_got = None
    try:
        srv_got = srv.accept()
    except (socket.timeout, OSError):
        pass
    srv.close()
    assert r.stdout.startswith("refused:") and "unreachable" in r.stdout.lower() and srv_got is None


def test_writes_outside_the_workdir_are_refused_or_confined(pool):
    active = pool.isolation["active"]
    if "readonly-root" not in active and not any(a.startswith("landlock") for a in active):
        pytest.skip("neither namespaces nor Landlock on this machine: writes are not confined")
    tag = uuid.uuid4().hex
    targets = [str(ROOT / f"PWNED-{tag}"), f"/tmp/pwned-{tag}", f"/etc/pwned-{tag}", f"/var/tmp/pwned-{tag}",
               f"/dev/shm/pwned-{tag}", f"{os.path.expanduser('~')}/pwned-{tag}",
               str(ROOT / ".venv" / f"pwned-{tag}")]
    code = "\n".join([
        "import os",
        f"for path in {targets!r}:",
        "    try:",
        "        open(path, 'w').write('owned')",
        "        print('WROTE', path)",
        "    except OSError as e:",
        "        print('refused', type(e).__name__)",
    ])
    try:
        r = pool.run(code)
        assert r.status == "ok", r.stderr
        for path in targets:
            assert not os.path.exists(path), f"{path} was written on the host"
        wrote = [line.split()[1] for line in r.stdout.splitlines() if line.startswith("WROTE")]
        # a write that succeeded inside the sandbox landed in its private /tmp, which the host never sees
        assert all(p.startswith("/tmp/") for p in wrote), wrote
    finally:
        for path in targets:
            if os.path.exists(path):
                os.remove(path)


def test_ground_truth_is_out_of_reach(pool):
    """The server never held an instance; the trainer's /proc, environment and package are hidden."""
    me = os.getpid()
    code = f"""
import os, sys
print('environ', sorted(os.environ))
for path in ['/proc/{me}/environ', '/proc/{me}/cmdline', '/proc/{me}/mem', '/proc/{os.getppid()}/cmdline',
             '/proc/1/environ', '/proc/' + str(os.getppid()) + '/environ']:
    try:
        data = open(path, 'rb').read(4096)
        print('READ', path, len(data))
    except OSError as e:
        print('no', path, type(e).__name__)
print('pids', sorted(int(p) for p in os.listdir('/proc') if p.isdigit()) == [os.getpid()])
try:
    import solvergym
    print('IMPORTED solvergym')
except ImportError:
    print('no solvergym')
sys.path.insert(0, {str(ROOT.parent)!r})
try:
    import main.envs.sat.generator
    print('IMPORTED generator')
except ImportError:
    print('no generator')
print('source visible', os.path.exists({str(ROOT / 'envs' / 'sat' / 'generator.py')!r}))
"""
    r = pool.run(code)
    assert r.status == "ok", r.stderr
    out = r.stdout
    assert "environ ['HOME', 'LANG', 'PATH', 'PYTHONIOENCODING', 'TMPDIR']" in out
    assert "no solvergym" in out and "IMPORTED" not in out
    if _namespaced(pool):
        assert "READ" not in out  # hidepid: the trainer's and the server's /proc entries do not exist
        assert "pids True" in out and "source visible False" in out and "no generator" in out
    else:
        assert f"READ /proc/{me}/environ" not in out


def test_a_killed_server_is_replaced(pool):
    pid = pool.run("print(1)").server_pid
    os.kill(pid, signal.SIGKILL)
    time.sleep(0.1)
    results = [pool.run("print('after')") for _ in range(3)]
    assert all(r.status == "ok" and r.stdout == "after\n" for r in results)
    assert pid not in pool.server_pids()


def test_server_dying_mid_program_gives_killed_then_recovers():
    p = SandboxPool(1)
    try:
        first = p.run("print('up')")
        pid = first.server_pid
        import threading

        threading.Timer(0.5, lambda: os.kill(pid, signal.SIGKILL)).start()
        r = p.run("import time\ntime.sleep(5)\nprint('never')", Limits(timeout_s=8))
        assert r.status == "killed" and "died" in r.reason and r.stdout == ""
        assert p.run("print('back')").stdout == "back\n" and p.restarts >= 1
        time.sleep(0.2)
        assert _sandbox_processes(p) == []
    finally:
        p.close()


def test_closing_a_pool_ends_its_servers():
    p = SandboxPool(1)
    p.run("print(1)")
    pids = p.server_pids()
    p.close()
    time.sleep(0.2)
    assert all(not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"
               for pid in pids)


def test_landlock_and_seccomp_settings():
    with SandboxPool(1, SandboxConfig(landlock=True, seccomp=True)) as p:
        iso = p.isolation
        r = p.run("open('ok.txt', 'w').write('1'); print(open('ok.txt').read())")
        assert r.stdout == "1\n"
        if any(a.startswith("landlock") for a in iso["active"]):
            r = p.run("try:\n    open('/tmp/elsewhere', 'w')\n    print('WROTE')\nexcept OSError as e:\n    print('refused')")
            assert r.stdout == "refused\n"
        else:
            assert iso["inactive"]["landlock"].startswith("unavailable")
        if "seccomp" in iso["active"]:
            r = p.run("import socket\ntry:\n    socket.socket(socket.AF_INET)\n    print('SOCKET')\n"
                      "except OSError as e:\n    print('refused', e.errno)")
            assert r.stdout == "refused 1\n"
        else:
            assert iso["inactive"]["seccomp"].startswith("unavailable")


def test_basic_isolation_still_limits():
    with SandboxPool(1, SandboxConfig(isolation="basic")) as p:
        iso = p.isolation
        assert "netns" not in iso["active"] and "rlimits" in iso["active"]
        tag = uuid.uuid4().hex
        r = p.run(f"try:\n    open('/tmp/pwned-{tag}', 'w')\n    print('WROTE')\nexcept OSError:\n    print('refused')")
        try:
            if any(a.startswith("landlock") for a in iso["active"]):  # on by default without namespaces
                assert r.stdout == "refused\n" and not os.path.exists(f"/tmp/pwned-{tag}")
        finally:
            if os.path.exists(f"/tmp/pwned-{tag}"):
                os.remove(f"/tmp/pwned-{tag}")
        assert p.run("while True: pass", Limits(timeout_s=0.5)).status == "timeout"
        r = p.run("import solvergym")
        assert r.status == "error" and "No module named 'solvergym'" in r.stderr


def test_results_are_typed():
    r = SandboxResult.failure("killed", "why")
    assert not r.ok and r.to_dict()["reason"] == "why"
    with pytest.raises(ValueError):
        Limits(timeout_s=0)
    with pytest.raises(ValueError):
        SandboxConfig(isolation="none")


def test_bubblewrap_setting():
    import shutil

    with SandboxPool(1, SandboxConfig(bwrap=True)) as p:
        iso = p.isolation
        if shutil.which("bwrap") is None:
            assert iso["inactive"]["bwrap"] == "unavailable: bwrap is not installed"
            assert p.run("print(1)").stdout == "1\n"  # the built-in levels still apply
            return
        assert {"bwrap", "pidns", "netns", "hidden-package"} <= set(iso["active"])
        r = p.run(f"import os\nprint(os.getpid() < 100, os.path.exists({str(ROOT / 'envs' / 'sat')!r}))\n"
                  "from z3 import *\nx = Bool('x'); s = Solver(); s.add(x); print(s.check())")
        assert r.stdout == "True False\nsat\n" and r.called("z3")
        assert p.run("while True: pass", Limits(timeout_s=0.5)).status == "timeout"
        assert "No module named 'solvergym'" in p.run("import solvergym").stderr


def test_closing_its_pipes_does_not_end_a_program(pool):
    code = "import os, time\nprint('bye', flush=True)\nos.close(1); os.close(2)\ntime.sleep(0.3)\nopen('x', 'w')"
    r = pool.run(code, FAST)
    assert r.status == "ok" and r.stdout == "bye\n" and r.duration_s >= 0.3


def test_sandbox_root_is_staged_away_from_visible_trees():
    # a venv under /tmp (a checkout in /tmp) must stay visible: the staging tmpfs never covers it
    from solvergym.sandbox import isolation

    for visible in (["/usr", "/tmp/ckout/.venv"], ["/usr", "/mnt/venv"], ["/usr"]):
        stage = isolation.staging_dir(visible)
        assert not any(p == stage or p.startswith(stage + "/") or stage.startswith(p + "/") for p in visible)

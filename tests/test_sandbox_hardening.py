"""The adversarial review's findings against the sandbox, one regression test per finding.

Every program here is hostile and runs in real sandbox children of real servers (no mocks); each
test failed on the code the review broke (commit 40efca2) and passes now. Numbers in the
docstrings are the review's.
"""
import asyncio
import json
import os
import re
import secrets
import signal
import time
from pathlib import Path

import pytest
from conftest import executor_pool_fixture

from solvergym.sandbox import EXECUTORS, Limits, SandboxConfig, SandboxPool
from solvergym.sandbox import record as rec
from solvergym.envs.equivalence import Truth, check_equivalence
from solvergym.envs.sat.decision import DecisionInstance
from solvergym.envs.modes.tool import SolverToolEnv
from solvergym.envs.sat.programs import cnf_program

IS_ROOT = os.geteuid() == 0
E1 = DecisionInstance.from_dict(json.loads((Path(__file__).parent / "data" / "sat_rl_e1_instance.json").read_text()))
FULL = {"format": 0.1, "correct": 1.0, "tool": 0.1, "equivalence": 1.0}


@pytest.fixture(scope="module", params=EXECUTORS)
def pool(request):
    # every hostile program behaves the same wherever the servers run (here: Ray actors on a
    # local cluster of 2 CPUs); one server: every program below follows the previous one on it
    p = executor_pool_fixture(request, 1)
    yield p
    p.close()


def _procs_of_uids(lo: int, hi: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                uid = next(int(line.split()[1]) for line in f if line.startswith("Uid:"))
        except (OSError, StopIteration, ValueError):
            continue
        if lo <= uid < hi:
            out.append(int(entry))
    return out


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def _leftovers(pool: SandboxPool) -> list[int]:
    """Processes of the pool's program uids other than the one child waiting for the next program."""
    out = []
    for s in pool._servers:
        if s.uid_base:
            procs = _procs_of_uids(s.uid_base, s.uid_base + 4096)
            waiting = [p for p in procs if _ppid(p) in (s.pid, s.hello.get("zygote_pid"))]
            out += procs if len(waiting) > 1 else [p for p in procs if p not in waiting]
    return out


def _tool_call(code: str) -> str:
    return f"<think>\nsolve it\n</think>\n<tool_call>\n{code}</tool_call>"


def _episode(code: str, pool: SandboxPool) -> dict:
    """E1 with z3 as the sampled solver: one tool call, then the right answer; the components."""
    env = SolverToolEnv(tool_sampling=False, solver="z3", pool=pool)
    env.reset(seed=0, options={"instance": E1})
    env.step(_tool_call(code))
    info = env.step("```answer yes```")[4]
    env.close()
    return info


def _oracle_z3() -> str:
    return cnf_program("z3", E1.clauses, E1.variables)


# ----------------------------------------------------------------------------- items 1-2
MARK = "SGMARK"
SCAN = r'''
import ctypes, gc, os, re, sys
pat = re.compile(b"SGM" + b"ARK([0-9a-f]{32})")
found = set()
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE: /proc/self/mem is root's after the uid drop otherwise
# 1. this process's memory: the heap and every anonymous or writable mapping
with open("/proc/self/maps") as maps, open("/proc/self/mem", "rb", 0) as mem:
    for line in maps:
        parts = line.split()
        if "r" not in parts[1] or (len(parts) > 5 and parts[5] in ("[vvar]", "[vsyscall]", "[vdso]")):
            continue
        if len(parts) > 5 and parts[5].startswith("/") and "w" not in parts[1]:
            continue  # read-only file mappings: the libraries' text
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        try:
            mem.seek(lo)
            data = mem.read(hi - lo)
        except (OSError, ValueError, OverflowError):
            continue
        found.update(b"mem:" + m.group(1) for m in pat.finditer(data))
# 2. the frames below this one and every object the collector knows
f = sys._getframe()
while f is not None:
    for v in list(f.f_locals.values()):
        found.update(b"frame:" + m.group(1) for m in pat.finditer(repr(v).encode("utf-8", "replace")))
    f = f.f_back
for o in gc.get_objects():
    if isinstance(o, (str, bytes, bytearray)):
        b = o.encode("utf-8", "replace") if isinstance(o, str) else bytes(o)
        found.update(b"object:" + m.group(1) for m in pat.finditer(b))
# 3. System V shared memory left by anyone
libc.shmat.restype = ctypes.c_void_p
try:
    ids = [int(l.split()[1]) for l in open("/proc/sysvipc/shm").read().splitlines()[1:] if l.strip()]
except OSError:
    ids = []
print("segments", len(ids))
for shmid in ids:
    addr = libc.shmat(shmid, None, 0o10000)  # SHM_RDONLY
    if addr not in (None, ctypes.c_void_p(-1).value):
        data = ctypes.string_at(addr, 1 << 16)
        found.update(b"shm:" + m.group(1) for m in pat.finditer(data))
# 4. files anyone left in /tmp
for root, _, files in os.walk("/tmp"):
    for name in files:
        try:
            found.update(b"tmp:" + m.group(1) for m in pat.finditer(open(os.path.join(root, name), "rb").read(1 << 20)))
        except OSError:
            pass
print("found", sorted(x.decode() for x in found))
'''


def _leaky_program(tag: str) -> str:
    """A program whose code, stdout, solver record, shared memory and /tmp all hold the marker."""
    return f'''
import ctypes, os
from z3 import Bool, Solver
s = Solver(); s.add(Bool("{MARK}{tag}")); s.check()
print("{MARK}{tag}")
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
shmid = libc.shmget(0, 1 << 16, 0o1000 | 0o666)  # IPC_PRIVATE, IPC_CREAT, never removed
if shmid >= 0:
    addr = libc.shmat(shmid, None, 0)
    ctypes.memmove(addr, b"{MARK}{tag}", {len(MARK) + 32})
print("shm", shmid)
open("/tmp/note-{tag[:8]}", "w").write("{MARK}{tag}")
'''


def test_no_byte_of_an_earlier_program_reaches_the_next(pool):
    """Review: children forked from the server that handled earlier requests read the previous
    program's code, stdout and record (stack frames, heap scan), and its System V segments."""
    tags = [secrets.token_hex(16) for _ in range(3)]
    for tag in tags:
        r = pool.run(_leaky_program(tag))
        assert r.status == "ok" and f"{MARK}{tag}" in r.stdout, r.stderr
    r = pool.run(SCAN, Limits(timeout_s=60))
    assert r.status == "ok", r.stderr[-2000:]
    found = re.search(r"found \[(.*)\]", r.stdout).group(1)
    assert not any(tag in found for tag in tags), r.stdout
    if "sysv-ipc-off" in pool.isolation["active"]:
        assert "segments 0" in r.stdout


@pytest.mark.skipif(not IS_ROOT, reason="the server's own IPC namespace needs root")
def test_shared_memory_cannot_outlive_a_program_or_bypass_its_memory_limit(pool):
    """Review: three 256 MiB segments made under memory_mb=256 were held after the program
    ended, readable by the next program, freed only when the server died."""
    code = '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
made = [libc.shmget(0, 256 << 20, 0o1000 | 0o666) for _ in range(3)]
print("made", sum(m >= 0 for m in made), ctypes.get_errno())
'''
    r = pool.run(code, Limits(memory_mb=256))
    assert r.status == "ok" and r.stdout.startswith("made 0 "), r.stdout
    r = pool.run("print(len(open('/proc/sysvipc/shm').read().splitlines()) - 1)")
    assert r.stdout == "0\n"


# ----------------------------------------------------------------------------- item 3
FIVE_CHILDREN = '''
import os, time
kids = []
for _ in range(5):
    pid = os.fork()
    if pid == 0:
        x = bytearray(200 << 20)
        for i in range(0, len(x), 4096):
            x[i] = 1
        time.sleep(20)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)
print("all children done")
'''


def test_memory_budget_holds_over_all_of_a_programs_processes(pool):
    """Review: five forked children of 200 MiB each touched 1,000 MiB under memory_mb=256."""
    t = time.perf_counter()
    r = pool.run(FIVE_CHILDREN, Limits(memory_mb=256, timeout_s=30))
    assert r.status == "memory", (r.status, r.reason)
    assert "memory_mb=256" in r.reason and "all children done" not in r.stdout
    assert time.perf_counter() - t < 15  # killed at the budget, not at the 20 s sleep
    time.sleep(0.2)
    assert _leftovers(pool) == []
    assert "memory-budget" in pool.isolation["active"]
    # pages the program's processes share among themselves count too: five pairs of children
    # each sharing a 200 MiB MAP_SHARED region (a sum of private memory would see none of it)
    pairs = """
import mmap, os, time
for _ in range(5):
    m = mmap.mmap(-1, 200 << 20, flags=mmap.MAP_SHARED)
    for i in range(0, len(m), 4096):
        m[i] = 1
    for _ in range(2):
        if os.fork() == 0:
            time.sleep(20)
            os._exit(0)
    m.close()
time.sleep(20)
print("hidden")
"""
    r = pool.run(pairs, Limits(memory_mb=256, timeout_s=30))
    assert r.status == "memory" and "hidden" not in r.stdout, (r.status, r.reason)
    time.sleep(0.2)
    assert _leftovers(pool) == []
    # and memory held in memfds that no page table maps
    memfds = "import os, time\nfds = []\nfor i in range(40):\n    fd = os.memfd_create('x')\n" \
             "    os.write(fd, b'x' * (15 << 20))\n    fds.append(fd)\ntime.sleep(20)\nprint('hidden')"
    r = pool.run(memfds, Limits(memory_mb=256, timeout_s=30))
    assert r.status == "memory" and "hidden" not in r.stdout, (r.status, r.reason)
    # one process alone keeps its own limit: RLIMIT_AS
    r = pool.run("x = bytearray(400 << 20)", Limits(memory_mb=256))
    assert r.status == "memory"
    assert pool.run("print('fine')").stdout == "fine\n"


# ----------------------------------------------------------------------------- item 4
def test_a_malformed_record_neither_skips_the_clean_up_nor_shows_the_servers_traceback(pool):
    """Review: a daemon started before a malformed record survived 10 s (the clean-up was
    skipped by an exception), and the server's traceback came back as the program's stderr."""
    code = '''
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(60)
    os._exit(0)
os.write(1000, b"[1, 2, 3]")
os.close(1000)
print("wrote")
'''
    r = pool.run(code, Limits(timeout_s=5))
    assert r.status == "error" and "record was rejected" in r.reason, (r.status, r.reason)
    assert "Traceback" not in r.stderr and "server.py" not in r.stderr + r.reason
    time.sleep(0.2)
    assert _leftovers(pool) == []
    assert pool.run("print('next')").stdout == "next\n"


def test_squatted_workdir_names_do_not_break_the_next_programs(pool):
    """Review: pre-created work-directory names (sg-<pid>-<counter>) made the next 5 honest
    programs fail with FileExistsError."""
    code = '''
import os, re
cwd = os.getcwd()
m = re.match(r"(.*/sg-\\d+-)(\\d+)$", cwd)
names = [m.group(1) + str(int(m.group(2)) + i) for i in range(1, 11)] if m else []
names += [os.path.join(os.path.dirname(cwd), "sg-%d" % i) for i in range(50)]
for n in names:
    try:
        os.makedirs(n)
    except OSError:
        pass
print("squatted", len(names))
'''
    assert pool.run(code).status == "ok"
    results = [pool.run("import os\nprint(os.listdir('.'))") for _ in range(5)]
    assert [(r.status, r.stdout) for r in results] == [("ok", "[]\n")] * 5, [r.stderr for r in results]


def test_filling_tmp_does_not_starve_the_next_program(pool):
    """Review: filling the server's 256 MiB /tmp outside the work directory gave the next
    program ENOSPC."""
    fill = '''
import os
n = 0
try:
    while n < 400:
        with open(f"/tmp/fill-{n}", "wb") as f:
            f.write(b"x" * (1 << 20))
        n += 1
except OSError as e:
    print("stopped", n, e.errno)
'''
    pool.run(fill, Limits(timeout_s=20, memory_mb=512))
    r = pool.run("open('/tmp/mine', 'wb').write(b'y' * (4 << 20))\nopen('here', 'wb').write(b'z' * (4 << 20))\n"
                 "print('ok')")
    assert (r.status, r.stdout) == ("ok", "ok\n"), r.stderr


@pytest.mark.skipif(not IS_ROOT, reason="a fresh /tmp per program needs the namespaces (root)")
def test_a_tree_under_tmp_stays_readable_under_every_fresh_tmp():
    """A venv of a checkout in /tmp must stay visible although each program gets a new /tmp."""
    import tempfile

    tree = Path(tempfile.mkdtemp(prefix="sg-visible-", dir="/tmp"))
    tree.chmod(0o755)
    (tree / "data.txt").write_text("seen\n")
    try:
        with SandboxPool(1, SandboxConfig(extra_ro=(str(tree),))) as p:
            if "fresh-tmp-per-program" not in p.isolation["active"]:
                pytest.skip("no namespaces on this machine")
            code = (f"print(open({str(tree / 'data.txt')!r}).read().strip())\n"
                    f"try:\n    open({str(tree / 'x')!r}, 'w')\n    print('WROTE')\nexcept OSError:\n    print('read-only')\n"
                    "open('/tmp/scratch', 'w').write('mine')")
            results = [p.run(code) for _ in range(3)]
            assert [r.stdout for r in results] == ["seen\nread-only\n"] * 3, [r.stderr for r in results]
            assert not (tree / "x").exists()
    finally:
        for f in tree.iterdir():
            f.unlink()
        tree.rmdir()


# ----------------------------------------------------------------------------- item 5
BAD_RECORDS = [
    b'{"n_calls": "x", "calls": [["z3", "Solver.check"]]}',
    b'{"n_calls": 1e400}',
    b"[" * 980 + b"]" * 980,
    b'{"imported": ' + b"[" * 980 + b"]" * 980 + b"}",
    b"not json at all",
    b'{"formula": {"kind": "smt2", "text": 7}, "calls": [["z3", "Solver.check"]], "n_calls": 1}',
    b'{"n_calls": ' + b"9" * 5000 + b"}",
    b"\xff\xfe\x00",
    b'{"calls": [["z3", "Solver.check"]], "n_calls": 1, "formula": {"kind": "cnf", "clauses": [[1]], '
    b'"solver": "z3", "call": "Solver.check"}, "extra": {"a": 1}}',
    b'{"memory_error": "yes"}',
]


def _bad_record_program(payload: bytes) -> str:
    return f"import os\nos.write(1000, {payload!r})\nos.close(1000)\nprint('done')"


def test_a_batch_with_malformed_records_returns_every_result():
    """Review: wrong types (n_calls "x", 1e400) raised ValueError/TypeError/OverflowError, a
    record nested ~980 deep raised RecursionError, and one bad record in run_many / arun_many
    of 200 lost all 200 results."""
    codes = ["print(1)"] * 190 + [_bad_record_program(b) for b in BAD_RECORDS]
    order = list(range(200))
    import random

    random.Random(0).shuffle(order)
    codes = [codes[i] for i in order]
    with SandboxPool(2) as p:
        results = p.run_many(codes)
        assert len(results) == 200
        statuses = [r.status for r in results]
        assert statuses.count("ok") == 190 and statuses.count("error") == 10
        bad = [r for r, i in zip(results, order) if i >= 190]
        assert all(r.status == "error" and "record was rejected" in r.reason and r.stdout == "done\n" for r in bad)
        assert all(r.solver_calls == [] and r.formula is None for r in bad)
        more = asyncio.run(p.arun_many(codes[:40]))
        assert [r.status for r in more] == statuses[:40]
    # and through an env: a tool call with a malformed record is a failed tool call, not a crash
    with SandboxPool(1) as p:
        info = _episode(_bad_record_program(BAD_RECORDS[1]), p)
        assert info["reward_components"] == {**FULL, "tool": 0.0, "equivalence": 0.0}
        assert "record was rejected" in info["tool_reward_reason"]


def test_record_validation_names_what_is_wrong():
    s = "ab" * 16
    good = {"imported": ["z3"], "calls": [["z3", "Solver.check"]], "n_calls": 1, "formula": None,
            "formula_error": None, "memory_error": False}
    assert rec.parse(json.dumps({**good, "secret": s}).encode(), s) == good
    assert rec.parse(b"", s) is None
    cases = {
        "secret": json.dumps(good).encode(),
        "n_calls": json.dumps({**good, "n_calls": "x", "secret": s}).encode(),
        "integers": json.dumps({**good, "secret": s}).replace('"n_calls": 1', '"n_calls": 1e400').encode(),
        "nests": json.dumps({**good, "imported": [[[[]]]], "secret": s}).replace("[[[[]]]]", "[" * 300 + "]" * 300).encode(),
        "JSON": b"[" * 5000 + b"]" * 5000,
        "unknown fields": json.dumps({**good, "x": 1, "secret": s}).encode(),
        "formula": json.dumps({**good, "formula": {"kind": "cnf", "solver": "z3", "call": "c", "clauses": 3},
                               "secret": s}).encode(),
    }
    for word, raw in cases.items():
        with pytest.raises(rec.RecordError, match=word):
            rec.parse(raw, s)


# ----------------------------------------------------------------------------- item 6
def test_a_forked_helper_that_exits_does_not_cost_the_record(pool):
    """Review: an oracle program that forks a helper calling os._exit lost its record (tool 0,
    equivalence 0): the helper inherited the patched exit and wrote a record of its own."""
    helper = "import os\npid = os.fork()\nif pid == 0:\n    os._exit(0)\nos.waitpid(pid, 0)\n"
    info = _episode(_oracle_z3() + helper, pool)
    assert info["reward_components"] == FULL, info["equivalence"]
    # a helper that runs to the end of the program (and so through the normal exit) neither
    info = _episode(_oracle_z3() + "import os\nif os.fork():\n    os.wait()\n", pool)
    assert info["reward_components"] == FULL


# ----------------------------------------------------------------------------- item 7
def _forged_record(pool) -> bytes:
    honest = pool.run(_oracle_z3())
    assert honest.formula is not None
    return json.dumps({"imported": ["z3"], "calls": [["z3", "Solver.check"]], "n_calls": 1,
                       "formula": honest.formula, "formula_error": None, "memory_error": False}).encode()


def test_forged_evidence_earns_no_tool_or_equivalence_reward(pool):
    """Review: writing one's own record to the report descriptor, or calling the capture's
    recording function, earned tool 0.1 (and equivalence with the right formula) without a
    solver call."""
    forged = _forged_record(pool)
    write_fd = f"import os\nos.write(1000, {forged!r})\nos.close(1000)\nprint('sat')\n"
    call_record = f'''
import json, sys
formula = json.loads({json.dumps(json.loads(forged)["formula"])!r})
from z3 import parse_smt2_string, Solver
asserts = list(parse_smt2_string(formula["text"]))
tried = []
for get in (lambda: sys.modules["_sandbox_server.capture.core"]._record,
            lambda: Solver.check.__globals__["_record"],
            lambda: Solver.check.__globals__["STATE"].__class__):
    try:
        fn = get()
        fn("z3", "Solver.check", "z3", (asserts, []))
        tried.append("called")
    except Exception as e:
        tried.append(type(e).__name__)
class Fake:  # the wrapper with an object the real solver rejects
    def assertions(self):
        return asserts
try:
    Solver.check(Fake())
except Exception as e:
    tried.append(type(e).__name__)
print("sat", tried)
'''
    for code in (write_fd, call_record):
        info = _episode(code, pool)
        assert info["reward_components"]["tool"] == 0.0 and info["reward_components"]["equivalence"] == 0.0, code
    r = pool.run(call_record)
    assert r.solver_calls == [] and r.formula is None and "called" not in r.stdout


# ----------------------------------------------------------------------------- item 8
def test_equivalence_is_bounded_in_size_and_time():
    """Review: a formula of a million nested Nots took 20 s in the Python walk before Z3's
    timeout started."""
    truth = Truth([[1]], ["x"], lambda n: n if n == "x" else None)
    n = 1_000_000
    deep = {"kind": "smt2", "solver": "z3", "text": "(declare-fun x () Bool)(assert " + "(not " * n + "x" + ")" * n + ")"}
    t = time.perf_counter()
    v = check_equivalence(deep, truth, timeout_ms=2000)
    assert v.status == "too_large" and not v.equivalent and "levels" in v.reason
    assert time.perf_counter() - t < 5
    # quoted symbols cannot hide the nesting
    k = 6000  # under MAX_NODES, over MAX_DEPTH; each level's "(" is matched by a ")" inside |...|
    hidden = {"kind": "smt2", "solver": "z3", "text": "(declare-fun x () Bool)(declare-fun |)| () Bool)(assert "
              + "(or |)| (not " * k + "x" + "))" * k + ")"}
    assert check_equivalence(hidden, truth).status == "too_large"
    wide = {"kind": "cnf", "solver": "python-sat", "clauses": [[1, -1]] * 300_000, "names": {"1": "x"}}
    assert check_equivalence(wide, truth).status == "too_large"
    tree = {"op": "Not", "args": [{"var": "x"}]}
    for _ in range(6000):
        tree = {"op": "Not", "args": [tree]}
    assert check_equivalence({"kind": "sympy", "solver": "sympy", "tree": tree}, truth).status == "too_large"
    # within the caps the time budget covers the walk too, not only Z3
    k = 4000
    just = {"kind": "smt2", "solver": "z3", "text": "(declare-fun x () Bool)(assert " + "(not " * k + "x" + ")" * k + ")"}
    assert check_equivalence(just, truth, timeout_ms=5000).status == "equivalent"
    assert check_equivalence(just, truth, timeout_ms=1).status == "timeout"


# ----------------------------------------------------------------------------- item 9
def test_one_server_death_counts_one_restart():
    """Review: pool.restarts counted one server death twice."""
    with SandboxPool(1) as p:
        pid = p.run("print(1)").server_pid
        os.kill(pid, signal.SIGKILL)
        time.sleep(0.1)
        assert p.run("print(2)").stdout == "2\n" and p.restarts == 1
        # death in the middle of a program: that program is killed, the next one gets a new server
        pid = p.run("print(3)").server_pid
        import threading

        threading.Timer(0.5, lambda: os.kill(pid, signal.SIGKILL)).start()
        r = p.run("import time\ntime.sleep(5)", Limits(timeout_s=8))
        assert r.status == "killed" and p.restarts == 1
        assert p.run("print(4)").stdout == "4\n" and p.restarts == 2

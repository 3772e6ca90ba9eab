"""The sandbox as a package of its own: what it offers its hosts and what it needs of them.

It imports nothing of solvergym (checked on its sources, and by running a copy of the folder alone,
with solvergym unimportable); solvergym tells it what to hide through the default config; and
its callers share the process-wide pool through one lease (``shared_pool``). Real pools, real
servers, no mocks.
"""
import ast
import copy
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import solvergym
from solvergym import sandbox
from solvergym.sandbox import Limits, SandboxConfig, SandboxPool, default_pool, shared_pool, shutdown_default_pool

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "sandbox"
Z3 = "from z3 import *\nx = Bool('x'); s = Solver(); s.add(x); print(s.check())"
FAST = Limits(timeout_s=30.0)


# ----------------------------------------------------------------------------- its own distribution
def _imports(path: Path):
    """``(module name or None, level)`` of every import in a file."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from ((alias.name, 0) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield node.module, node.level


def test_no_module_imports_outside_the_package():
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 10
    for path in files:
        depth = len(path.relative_to(PACKAGE).parts) - 1  # packages between the file and sandbox/
        for name, level in _imports(path):
            assert level == 0 and not (name or "").startswith("solvergym") or 0 < level <= depth + 1, \
                (path, name, level)


def test_the_folder_alone_runs_programs(tmp_path):
    """A copy of ``sandbox/`` as a top-level package, in an interpreter without site-packages
    (no editable finder: solvergym cannot be imported) and without the checkout on its path."""
    shutil.copytree(PACKAGE, tmp_path / "sandbox", ignore=shutil.ignore_patterns("__pycache__"))
    code = textwrap.dedent(f"""
        import json, sys
        assert not any(p.startswith({str(ROOT)!r}) for p in sys.path if p), sys.path
        try:
            import solvergym
            raise SystemExit("solvergym is importable")
        except ImportError:
            pass
        import sandbox
        with sandbox.SandboxPool(1) as pool:
            r = pool.run({Z3!r}, sandbox.Limits(timeout_s=30.0))
            mods = pool.run("import sys\\nprint(sorted(m for m in sys.modules if m.startswith('solvergym')))")
        print(json.dumps({{"file": sandbox.__file__, "hide": list(sandbox.default_config().hide),
                          "status": r.status, "stdout": r.stdout, "stderr": r.stderr, "calls": r.solver_calls,
                          "formula": r.formula["kind"], "child_modules": mods.stdout,
                          "host_modules": sorted(m for m in sys.modules if m.startswith("solvergym"))}}))
    """)
    out = subprocess.run([sys.executable, "-S", "-c", code], cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.splitlines()[-1])
    assert got["file"] == str(tmp_path / "sandbox" / "__init__.py") and got["hide"] == []
    assert (got["status"], got["stdout"], got["stderr"]) == ("ok", "sat\n", "")
    assert got["calls"] == [["z3", "Solver.check"]] and got["formula"] == "smt2"
    assert got["child_modules"] == "[]\n" and got["host_modules"] == []


# ----------------------------------------------------------------------------- the host's default config
def test_solvergym_hides_its_package_from_every_pool():
    root = solvergym.__path__[0]
    assert sandbox.default_config().hide == (root,)
    assert SandboxPool(1).config.hide == (root,)  # no config: the default
    given = SandboxConfig(isolation="basic", hide=("/srv/data",))
    pool = SandboxPool(1, given)
    assert pool.config.hide == (root, "/srv/data") and pool.config.isolation == "basic"
    assert SandboxPool(1, SandboxConfig(hide=(root,))).config.hide == (root,)
    with pytest.raises(TypeError):
        sandbox.set_default_config({"hide": ()})


# ----------------------------------------------------------------------------- the lease
@pytest.fixture
def one_server(monkeypatch):
    """The process-wide pool, one server, shut down after the test."""
    monkeypatch.setenv("SOLVERGYM_SANDBOX_SERVERS", "1")
    shutdown_default_pool()
    yield
    shutdown_default_pool()


def test_a_lease_on_a_given_pool_uses_it_and_leaves_it_open():
    with SandboxPool(1) as pool:
        with shared_pool(pool) as lease:
            r = lease.run(Z3, FAST)
            assert lease.pool is pool and r.status == "ok" and r.server_pid in pool.server_pids()
            assert [x.stdout for x in lease.run_many(["print(1)", "print(2)"], FAST)] == ["1\n", "2\n"]
        assert not pool.closed and pool.run("print(3)", FAST).stdout == "3\n"


def test_a_lease_takes_the_shared_pool_on_first_use_and_gives_it_back(one_server):
    lease, other = shared_pool(), shared_pool()
    assert sandbox.shared._default_refs == 0  # nothing taken before a run
    r = lease.run(Z3, FAST)
    assert r.status == "ok" and r.solver_calls == [("z3", "Solver.check")]
    assert other.run("print(1)", FAST).stdout == "1\n"
    assert lease.pool is other.pool is default_pool() and sandbox.shared._default_refs == 2
    lease.close()
    lease.close()  # closing twice gives back one reference
    assert sandbox.shared._default_refs == 1
    other.close()
    assert sandbox.shared._default_refs == 0
    assert lease.run("print(4)", FAST).stdout == "4\n" and sandbox.shared._default_refs == 1  # taken again
    twin = copy.deepcopy(lease)  # a new holder: it has taken nothing yet
    assert twin.run("print(5)", FAST).stdout == "5\n" and sandbox.shared._default_refs == 2
    twin.close()
    lease.close()
    assert sandbox.shared._default_refs == 0


def test_a_lease_takes_a_fresh_pool_after_a_shutdown(one_server):
    with shared_pool() as lease:
        first = lease.pool
        assert lease.run("print(1)", FAST).status == "ok"
        shutdown_default_pool()
        r = lease.run("print(2)", FAST)
        assert first.closed and lease.pool is not first and not lease.pool.closed
        assert (r.status, r.stdout) == ("ok", "2\n") and sandbox.shared._default_refs == 1
    assert sandbox.shared._default_refs == 0


def test_a_lease_never_raises_for_want_of_a_sandbox():
    pool = SandboxPool(1)
    pool.close()
    lease = shared_pool(pool)
    r = lease.run("print(1)", FAST)
    assert (r.status, r.stdout, r.reason) == ("killed", "", "the sandbox is unavailable: this sandbox pool is closed")
    many = lease.run_many(["print(1)", "print(2)"], FAST)
    assert [(x.status, x.reason) for x in many] == [("killed", r.reason)] * 2
    with pytest.raises(TypeError):  # a caller's mistake is still an exception
        lease.run(b"print(1)", FAST)

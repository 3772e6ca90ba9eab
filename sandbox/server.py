"""The sandbox server's entry point: ``python -I server.py CONFIG_JSON``, one per pool slot.

The pool (``process.py``) starts it with an empty environment: a fresh interpreter that never
held an instance, a seed or a ground truth (``docs/design.md``, "Sandbox"; the SAT-RL rollouts
of §3.4 run thousands of model-written programs per step). It speaks length-prefixed JSON over
its stdin and stdout (the requests carry only code and limits). It imports nothing of the
program that uses the sandbox: it loads this directory as a package of its own, under the
private name :data:`PACKAGE` (its modules use relative imports only), from the files next to
this one, with the standard library and the solvers. All of it is loaded before the
file-system view shrinks (``isolation.py``): the files are not visible afterwards.

Three processes:

- the **supervisor** (``supervisor.py``) reads requests, hands each program to a waiting child,
  supervises it and answers; it never forks a program;
- the **zygote** (``zygote.py``), forked once at start-up before any request, imports the
  solvers, installs the capture (``capture/``) and forks the children; it never sees a program;
- the **reaper** (``reaper.py``), forked while the supervisor is small, kills every process of a
  uid.

Start-up, in this order:

1. the protocol pipes move to high descriptors; 0/1/2 point at ``/dev/null`` so a solver's banner
   (Gurobi prints one) cannot corrupt the protocol;
2. ``PR_SET_CHILD_SUBREAPER`` (the zygote is one too): every process a program spawns stays a
   descendant, so none can escape the clean-up by double-forking;
3. the reaper is forked;
4. isolation (``isolation.set_up``): namespaces and a minimal read-only root where allowed;
5. the zygote is forked; it imports and warms the solvers, installs the capture, freezes its
   heap and says hello;
6. a hello message reports the pid, the active isolation levels, import times and memory.

Every sandboxed program runs in a child of the zygote, which comes back here (the zygote's frames
unwound by ``zygote.Start``) and runs the program from the top of the stack.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import sys
import traceback
import types

#: the name this directory is loaded under in the server's processes (never the host's)
PACKAGE = "_sandbox_server"


def load_package() -> None:
    """Make this directory the package :data:`PACKAGE` (its ``__init__`` is the pool's, which the
    server does not need: the package is an empty module whose path is this directory)."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.machinery.ModuleSpec(PACKAGE, None, is_package=True)
    spec.submodule_search_locations = [here]
    pkg = types.ModuleType(PACKAGE)
    pkg.__spec__, pkg.__path__, pkg.__package__ = spec, [here], PACKAGE
    sys.modules[PACKAGE] = pkg


def main() -> None:
    cfg = json.loads(sys.argv[1]) if len(sys.argv) > 1 else {}
    in_fd = os.dup(0)
    out_fd = os.dup(1)
    os.set_inheritable(in_fd, False)
    os.set_inheritable(out_fd, False)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    load_package()
    supervisor = importlib.import_module(PACKAGE + ".supervisor")  # and the zygote, the capture, ...
    zygote = importlib.import_module(PACKAGE + ".zygote")
    server = supervisor.Server(cfg)
    job = None
    try:
        server.start(in_fd, out_fd)
    except zygote.Start as start:
        # a sandbox child: its program runs below, outside this handler, once every frame of the
        # zygote and of this server is gone (sys.exc_info() must not lead back to them)
        job = start.job
    except BaseException as e:
        os.write(2, f"sandbox server failed to start: {type(e).__name__}: {e}\n".encode())
        traceback.print_exc()
        os._exit(3)
    if job is not None:
        del server
        zygote.run_program(job)
    # start-up errors went to the client's stderr pipe; from now on nothing does
    os.dup2(devnull, 2)
    server.serve()
    os._exit(0)


if __name__ == "__main__":
    main()

"""Import layering (docs/design.md, "The house"), read from the source with ``ast``; nothing is imported.

- ``envs/`` imports nothing above it: not ``agents``, ``algorithms``, ``benchmarks``, ``cli`` or
  ``adapters``, at module level or inside a function.
- No cycle among folders either (each ``envs/<family>/`` and every other package folder one node,
  a root file its own, as ``../shared/tools/import_graph.py --folders`` draws them): a.x -> b.y and
  b.z -> a.w is a cycle the module check cannot see. The floors of that graph (each folder one
  above the highest it imports) are the ones docs/design.md lists.
- No private name (``_x``) is imported from another of the package's modules.
- No import cycle among the package's modules. Module-level and function-local imports are both
  edges, so a cycle hidden behind a function-local import is still one. A package ``__init__``
  importing its own submodules (re-exporting them) is not an edge of a cycle: Python always runs
  the package before any of its submodules.
- A function-local import of one of the package's own modules is allowed only in
  :data:`LOCAL_IMPORTS_ALLOWED`, each with its reason: it defers a heavy optional dependency.
  Anything else belongs at the top of the module.

Every ``.py`` under the repository root (which is the package) is read, except tests, build
output and hidden folders (``.venv``, ``.git``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "solvergym"
SKIP_DIRS = {"tests", "build", "dist", "docs", "__pycache__"}
UPPER = ("agents", "algorithms", "benchmarks", "cli", "adapters")

#: (importing module, imported module) -> why the import is inside a function.
LOCAL_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {
    ("solvergym.cli.serve", "solvergym.adapters.openenv"):
        "`solvergym serve` only: openenv-core (FastAPI, gradio) is an optional extra and must not load for other commands",
    ("solvergym.agents", "solvergym.agents.hf"):
        "PEP 562 lazy attribute: `import solvergym.agents` must not import torch (HFAgent, SamplingConfig)",
    ("solvergym.agents", "solvergym.agents.vllm"):
        "PEP 562 lazy attribute: `import solvergym.agents` must not import torch or vllm (VLLMAgent)",
    ("solvergym.cli.train", "solvergym.algorithms.trainer"):
        "`solvergym train` only: torch and accelerate must not load for `solvergym list` or `sample`",
    ("solvergym.cli.train", "solvergym.algorithms.sft"):
        "`solvergym sft` only: torch and accelerate, as for `train`",
    ("solvergym.cli.explore", "solvergym.cli.demo"):
        "`solvergym demo` with training steps only: the demo's trainer, torch and transformers, as for `train`",
    ("solvergym.benchmarks.train_speed", "solvergym.algorithms.trainer"):
        "torch only in the worker that runs solvergym's trainer: the parent process and the TRL worker do without it",
    ("solvergym.benchmarks.learning", "solvergym.algorithms.trainer"):
        "torch only when a preset still has steps to run (finished runs are read back without it)",
}


@dataclass(frozen=True)
class Edge:
    source: str  # importing module
    target: str  # imported module (the longest name that is one of the package's modules)
    raw: str  # the imported name as written, made absolute
    names: tuple[str, ...]  # every name the statement may import (`from a import b`: a and a.b)
    path: str
    line: int
    local: bool  # inside a function

    def __str__(self) -> str:
        return f"{self.path}:{self.line} {self.source} -> {self.raw}{' (function-local)' if self.local else ''}"


def _modules() -> dict[str, Path]:
    out = {}
    for f in sorted(ROOT.rglob("*.py")):
        rel = f.relative_to(ROOT)
        parts = rel.parts
        if parts[0] in SKIP_DIRS or any(p.startswith(".") or p in SKIP_DIRS or p.endswith(".egg-info") for p in parts):
            continue
        names = [p for p in rel.with_suffix("").parts if p != "__init__"]
        out[".".join([PACKAGE, *names])] = f
    return out


MODULES = _modules()


def _known(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _edges() -> list[Edge]:
    edges: dict[tuple, Edge] = {}
    for mod, f in MODULES.items():
        tree = ast.parse(f.read_text(encoding="utf-8"), filename=str(f))
        local = {
            id(n)
            for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            for n in ast.walk(fn) if n is not fn
        }
        package = mod if f.name == "__init__.py" else mod.rpartition(".")[0]
        rel = str(f.relative_to(ROOT))
        for node in ast.walk(tree):
            raws = []  # (the module imported, every name the statement may import)
            if isinstance(node, ast.Import):
                raws = [(a.name, (a.name,)) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    base = ".".join(base + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                # `from pkg import sub` imports the submodule pkg.sub; `from mod import name` imports mod
                raws = [(f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base, (base, f"{base}.{a.name}"))
                        for a in node.names]
            for raw, names in raws:
                if raw != PACKAGE and not raw.startswith(PACKAGE + "."):
                    continue
                target = _known(raw)
                if target == mod:
                    continue
                key = (mod, raw, node.lineno)
                if key in edges:  # `from m import a, b`: one edge
                    edges[key] = Edge(mod, edges[key].target, raw, tuple(dict.fromkeys(edges[key].names + names)),
                                      rel, node.lineno, edges[key].local)
                else:
                    edges[key] = Edge(mod, target or raw, raw, names, rel, node.lineno, id(node) in local)
    return list(edges.values())


EDGES = _edges()


def _is_package_export(e: Edge) -> bool:
    return MODULES[e.source].name == "__init__.py" and e.target.startswith(e.source + ".")


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for e in EDGES:
        if e.target in MODULES and not _is_package_export(e):
            graph[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(MODULES):
        if v not in index:
            visit(v)
    return found


def _folder(mod: str) -> str:
    """solvergym.envs.sat.cnf -> envs/sat; solvergym.agents.hf -> agents; solvergym.cli -> cli (a package)."""
    parts = mod.split(".")[1:]
    if MODULES[mod].name == "__init__.py":
        parts = parts + ["__init__"]
    if len(parts) == 1:
        return "__init__.py" if parts[0] == "__init__" else parts[0] + ".py"
    depth = 2 if parts[0] == "envs" and len(parts) > 2 else 1
    return "/".join(parts[:depth])


def _folder_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for mod in MODULES:
        graph.setdefault(_folder(mod), set())
    for e in EDGES:
        if e.target not in MODULES:
            continue
        a, b = _folder(e.source), _folder(e.target)
        if a != b and "__init__.py" not in (a, b):
            graph[a].add(b)
    return graph


def _floors(graph: dict[str, set[str]]) -> dict[str, int]:
    floors: dict[str, int] = {}

    def floor(v: str, seen: tuple = ()) -> int:
        if v not in floors:
            floors[v] = 1 + max((floor(w, seen + (v,)) for w in graph[v] if w not in seen), default=0)
        return floors[v]

    for v in graph:
        floor(v)
    return floors


def _reaches(graph: dict[str, set[str]], a: str, b: str) -> bool:
    todo, seen = [a], set()
    while todo:
        v = todo.pop()
        for w in graph[v]:
            if w == b:
                return True
            if w not in seen:
                seen.add(w)
                todo.append(w)
    return False


def test_no_folder_cycles():
    graph = _folder_graph()
    cycles = sorted({tuple(sorted((a, b))) for a in graph for b in graph[a] if _reaches(graph, b, a)})
    assert not cycles, f"folder cycles (a -> b and b ->* a): {cycles}"


def test_the_design_doc_lists_the_floors():
    """docs/design.md's "The house" has a fenced ``floors`` block: ``<floor>  <folder>  ...`` per line."""
    text = (ROOT / "docs" / "design.md").read_text(encoding="utf-8")
    block = text.split("```floors\n", 1)[1].split("```", 1)[0]
    listed = {}
    for line in block.splitlines():
        fields = line.split()
        if len(fields) >= 2 and fields[0].isdigit():
            listed[fields[1]] = int(fields[0])
    floors = {f: n for f, n in _floors(_folder_graph()).items() if f != "__init__.py"}
    assert listed == floors, {"in the doc, not the code": {k: v for k, v in listed.items() if floors.get(k) != v},
                              "in the code, not the doc": {k: v for k, v in floors.items() if listed.get(k) != v}}


def test_no_private_name_is_imported_across_modules():
    bad = [f"{e.path}:{e.line} {e.raw} ({', '.join(n.rsplit('.', 1)[-1] for n in e.names if _private(n))})"
           for e in EDGES if any(_private(n) for n in e.names)]
    assert not bad, "private names imported from another module:\n" + "\n".join(bad)


def _private(name: str) -> bool:
    last = name.rsplit(".", 1)[-1]
    return last.startswith("_") and not last.startswith("__")


def test_the_walk_sees_the_package():
    assert {"solvergym", "solvergym.cli", "solvergym.envs.problem", "solvergym.envs.sat.cnf"} <= set(MODULES)
    assert not any(m.startswith(("solvergym.tests", "solvergym.build")) for m in MODULES)
    # both kinds of edge are read: a module-level one and a function-local one
    assert any(e.source == "solvergym.envs.sat.verify" and e.target == "solvergym.envs.sat.cnf" for e in EDGES)
    assert any(e.local for e in EDGES)


def test_envs_import_nothing_above_them():
    def upward(name: str) -> bool:
        return name.split(".")[1:2] != [] and name.split(".")[1] in UPPER

    up = [str(e) if upward(e.raw) else f"{e} (imports {next(n for n in e.names if upward(n))})"
          for e in EDGES if e.source.startswith("solvergym.envs") and any(upward(n) for n in e.names)]
    assert not up, "envs/ imports upward:\n" + "\n".join(up)


def test_no_import_cycles():
    problems = []
    for comp in _cycles():
        members = set(comp)
        inside = [str(e) for e in EDGES if e.source in members and e.target in members and not _is_package_export(e)]
        problems.append(" <-> ".join(comp) + "\n    " + "\n    ".join(inside))
    assert not problems, "import cycles:\n" + "\n".join(problems)


def test_function_local_imports_are_only_the_allowed_ones():
    bad = [f"{e}" for e in EDGES if e.local and (e.source, e.target) not in LOCAL_IMPORTS_ALLOWED]
    assert not bad, (
        "function-local imports of the package's own modules (move them to the top of the module, or "
        "add them to LOCAL_IMPORTS_ALLOWED with the heavy optional dependency they defer):\n" + "\n".join(bad)
    )


def test_the_allow_list_has_no_stale_entries():
    used = {(e.source, e.target) for e in EDGES if e.local}
    stale = sorted(set(LOCAL_IMPORTS_ALLOWED) - used)
    assert not stale, f"LOCAL_IMPORTS_ALLOWED names imports that no longer exist: {stale}"


def test_no_module_over_600_lines_unless_it_says_why():
    """One idea per file: a module over 600 lines must say in its docstring why it is one idea."""
    long = []
    for mod, f in MODULES.items():
        lines = f.read_text(encoding="utf-8").count("\n")
        doc = ast.get_docstring(ast.parse(f.read_text(encoding="utf-8"))) or ""
        if lines > 600 and "one idea" not in doc:
            long.append(f"{f.relative_to(ROOT)}: {lines} lines")
    assert not long, "split these or say in the docstring why each is one idea:\n" + "\n".join(long)

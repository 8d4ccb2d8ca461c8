"""The layers hold: front ends reach the engine only through the façade (`baton_tui/api/`),
and the engine never imports a front end — the import-linter contracts in pyproject.toml; no
two files import each other, even through others; ruff finds nothing; the façade's names are
the same to a checker as at run time."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import baton_tui.api

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_are_kept():
    lint = shutil.which("lint-imports", path=str(Path(sys.executable).parent))
    assert lint, "import-linter is part of the test extras (pip install -e '.[test]')"
    result = subprocess.run([lint, "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_no_sql_outside_the_store():
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "baton_tui").rglob("*.py")
                 if p.parent.name != "store" and ".execute(" in p.read_text()]
    assert offenders == []


def test_ruff_finds_no_problem():
    """`ruff check baton_tui` (configured in pyproject.toml) reports nothing. mypy runs as its
    own step of .ci/run: too slow for the suite."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent))
    assert ruff, "ruff is part of the test extras (pip install -e '.[test]')"
    result = subprocess.run([ruff, "check", "--no-cache", "baton_tui"], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_baton_never_imports_the_mcp_package():
    """`mcp` is a test extra (the reference client the tests drive `baton mcp` with): Baton's
    own MCP server is the standard library's."""
    users = []
    for path in (ROOT / "baton_tui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                     else [])
            users += [str(path.relative_to(ROOT)) for name in names if name.split(".")[0] == "mcp"]
    assert users == []


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING"


def test_the_facade_declares_to_checkers_every_name_it_looks_up():
    """`api/__init__.py` looks its names up lazily (`_PROVIDERS`); checkers read them from its
    `if TYPE_CHECKING:` block instead. The two lists are the same, module by module."""
    tree = ast.parse((ROOT / "baton_tui" / "api" / "__init__.py").read_text())
    declared: dict[str, list[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module != "typing":
                    assert all(a.asname == a.name for a in stmt.names), "re-export as `X as X`"
                    declared.setdefault(stmt.module or "", []).extend(a.name for a in stmt.names)
    providers = {module: list(names) for module, names in baton_tui.api._PROVIDERS.items()}
    assert declared == providers


# Circles in code others are taking apart now; each entry goes once it is broken.
KNOWN_CIRCLES: list[list[str]] = []


def import_graph() -> dict[str, set[str]]:
    """Module -> the Baton modules it imports anywhere in it: at the top, inside functions,
    under `if TYPE_CHECKING:` (a type is a dependency too)."""
    files = {}
    for path in (ROOT / "baton_tui").rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        files[".".join(parts)] = path

    def known(name: str) -> str | None:  # the module itself, or the package holding the name
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {known(a.name) for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([node.module] if node.module else []))
                found |= {known(f"{base}.{a.name}") if f"{base}.{a.name}" in files else known(base)
                          for a in node.names}
        graph[module] = {m for m in found if m and m != module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of two modules or more (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return sorted(found)


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [["a", "b", "c"]]


def test_no_two_modules_import_each_other():
    """No circle across files, through any number of modules: the floors (import-linter)
    hold between packages; this holds inside them."""
    graph = import_graph()
    assert {"baton_tui.core.payloads", "baton_tui.gitops.refs"} <= set(graph)
    assert "baton_tui.core.events" in graph["baton_tui.core.payloads"]
    assert [c for c in circles(graph) if c not in KNOWN_CIRCLES] == []

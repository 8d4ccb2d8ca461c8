"""The closed vocabularies — task states (`core.events.State`), autonomy levels and modes
(`core.words`) — are spelled in `baton_tui/core/` and nowhere else in the package.

Elsewhere a word of theirs used *as* a state, level or mode is a string that drifts (a typo
compares false for ever; a renamed state leaves a dead branch), so code names the enum
member instead. The scan reads every module's syntax tree and flags a string constant
equal to one of the words where it stands for one:

- compared (`==`, `!=`, `in`, `not in`, or a `match` case) with an expression whose last
  name is `state`, `mode`, `autonomy` or `level` (`t.state`, `mode`, `row["state"]`), or
  inside a tuple, list or set literal on the other side of such an `in`;
- a key of a dict literal with two or more keys, all of them such words (a table by state);
- an element of a tuple, list or set literal with two or more elements, all of them words
  of one vocabulary (a list of levels);
- the default or value of a parameter, keyword argument, assignment or dict key named like
  one (`mode: str = "build"`, `f(state="draft")`, `self.autonomy = "watch"`,
  `{"mode": "research"}`).

The same words in prose, messages, JSON payload keys and the plan prompt's example are
not flagged: they are text, not a state.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from baton_tui.core.events import State
from baton_tui.core.words import Autonomy, Mode

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "baton_tui"

VOCABULARIES = {"state": frozenset(State), "autonomy": frozenset(Autonomy),
                "mode": frozenset(Mode)}
WORDS = frozenset().union(*VOCABULARIES.values())
NAMES = frozenset({"state", "mode", "autonomy", "level"})  # what such a value is called

# Every part of the package outside core/, scanned one by one (a new one must be listed:
# `test_every_part_of_the_package_is_scanned`).
PARTS = [
    "api", "channel", "commands", "demo", "doctor", "gitops", "handoff", "native_agent",
    "plan", "planner", "players", "run", "runners", "serve", "store", "tui",
    "__init__.py", "__main__.py", "cli.py", "config.py", "config_files.py",
    "killpoints.py", "runners_config.py", "pydantic_plugins.py",
    "layout.py", "paths.py", "procs.py", "readiness.py", "redact.py", "skills.py",
    "trust.py", "validation.py", "workspace.py", "frozen.py", "version.py",
    "acp", "mcp_front.py", "web",
]


def last_name(node: ast.AST) -> str | None:
    """`t.state` -> state, `mode` -> mode, `row["state"]` -> state; else None."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return node.slice.value if isinstance(node.slice.value, str) else None
    return None


def is_word(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in WORDS


def named_like(node: ast.AST) -> bool:
    return last_name(node) in NAMES


def elements(node: ast.AST) -> list[ast.expr]:
    """The elements of a tuple, list or set literal (or `frozenset({...})`); else none."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("frozenset", "set", "tuple") and len(node.args) == 1):
        node = node.args[0]
    return list(node.elts) if isinstance(node, (ast.Tuple, ast.List, ast.Set)) else []


class Scanner(ast.NodeVisitor):
    """Collects (line, word, why) for each word spelled where it stands for a state."""

    def __init__(self) -> None:
        self.found: list[tuple[int, str, str]] = []
        self._seen: set[int] = set()

    def flag(self, node: ast.AST, why: str) -> None:
        if id(node) not in self._seen:
            self._seen.add(id(node))
            self.found.append((node.lineno, node.value, why))

    def visit_Compare(self, node: ast.Compare) -> None:
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            for mine, other in ((left, right), (right, left)):
                if not named_like(other):
                    continue
                if isinstance(op, (ast.Eq, ast.NotEq)) and is_word(mine):
                    self.flag(mine, f"compared with {last_name(other)}")
                if isinstance(op, (ast.In, ast.NotIn)) and mine is right:
                    for element in elements(mine):
                        if is_word(element):
                            self.flag(element, f"in a literal {last_name(other)} is tested against")
            left = right
        self.generic_visit(node)

    def visit_Match(self, node: ast.Match) -> None:
        if named_like(node.subject):
            for case in node.cases:
                for pattern in ast.walk(case.pattern):
                    if isinstance(pattern, ast.MatchValue) and is_word(pattern.value):
                        self.flag(pattern.value, f"a case of {last_name(node.subject)}")
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        if len(node.keys) >= 2 and all(is_word(k) for k in node.keys):
            for key in node.keys:
                self.flag(key, "a key of a table by state, level or mode")
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and key.value in NAMES and is_word(value):
                self.flag(value, f"the value of {key.value!r}")
        self.generic_visit(node)

    def _collection(self, node: ast.Tuple | ast.List | ast.Set) -> None:
        values = [e.value for e in node.elts if is_word(e)]
        if len(node.elts) >= 2 and len(values) == len(node.elts) and any(
                set(values) <= vocabulary for vocabulary in VOCABULARIES.values()):
            for element in node.elts:
                self.flag(element, "a list of states, levels or modes")
        self.generic_visit(node)

    visit_Tuple = visit_List = visit_Set = _collection

    def _defaults(self, args: ast.arguments) -> None:
        positional = [*args.posonlyargs, *args.args]
        pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults),
                 *zip(args.kwonlyargs, args.kw_defaults)]
        for arg, default in pairs:
            if arg.arg in NAMES and is_word(default):
                self.flag(default, f"the default of {arg.arg}")

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._defaults(node.args)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self._defaults(node.args)
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg in NAMES and is_word(node.value):
            self.flag(node.value, f"the argument {node.arg}=")
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        if is_word(node.value) and any(named_like(t) for t in node.targets):
            self.flag(node.value, "assigned to a state, level or mode")
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if is_word(node.value) and named_like(node.target):
            self.flag(node.value, f"the default of {last_name(node.target)}")
        self.generic_visit(node)


def scan_source(source: str, name: str = "<source>") -> list[str]:
    """`name:line: 'word' (why)` for each word spelled where it stands for one."""
    scanner = Scanner()
    scanner.visit(ast.parse(source, name))
    return [f"{name}:{line}: {word!r} ({why})" for line, word, why in sorted(scanner.found)]


def scan(part: Path) -> list[str]:
    files = sorted(part.rglob("*.py")) if part.is_dir() else [part]
    return [hit for path in files
            for hit in scan_source(path.read_text(), str(path.relative_to(ROOT)))]


@pytest.mark.parametrize("part", PARTS)
def test_no_state_level_or_mode_is_spelled_outside_core(part):
    offenders = scan(PACKAGE / part)
    assert offenders == [], "spell these with State / Autonomy / Mode:\n" + "\n".join(offenders)


def test_every_part_of_the_package_is_scanned():
    present = {p.name for p in PACKAGE.iterdir()
               if p.name not in ("core", "__pycache__") and (p.suffix == ".py" or (
                   p.is_dir() and (p / "__init__.py").exists()))}
    assert present == set(PARTS)


PLANTED = '''
def f(task, row, mode="research", *, autonomy="watch"):
    if task.state == "merged" or "paused" != task.state:
        pass
    if row["state"] in ("landed", "merged") and task.mode not in {"manual", "build"}:
        pass
    GLYPH = {"draft": "o", "queued": "."}
    LEVELS = ("guarded", "watch", "autopilot")
    start(state="queued")
    task.mode = "build"
    level: str = "autopilot"
    plan = {"autonomy": "guarded", "tasks": []}
    match task.state:
        case "failed" | "parked":
            pass
'''

CLEAN = '''
def g(task, status="done", field="checkpoint"):
    """A docstring may say merged, and so may messages: "merged"."""
    print("merged" if ok else "skipped")
    payload = {"merged": 3}
    reply = {"status": "done", "summary": "ok"}
    if task.state == State.MERGED and status == "done" and kind in ("build", "check"):
        pass
    fast = first in ("status", "report", "checkpoint")
    task_cmd("checkpoint", "checkpoint flag")
'''


def test_the_scan_catches_a_planted_spelling_of_each_kind():
    found = scan_source(PLANTED, "planted.py")
    words = [hit.split(": ", 1)[1].split(" ", 1)[0] for hit in found]
    assert sorted(words) == sorted(repr(w) for w in [
        "research", "watch", "merged", "paused", "landed", "merged", "manual", "build",
        "draft", "queued", "guarded", "watch", "autopilot", "queued", "build", "autopilot",
        "guarded", "failed", "parked"])
    assert "planted.py:3: 'merged' (compared with state)" in found
    assert "planted.py:5: 'landed' (in a literal state is tested against)" in found


def test_the_scan_leaves_prose_payloads_and_other_words_alone():
    assert scan_source(CLEAN, "clean.py") == []

"""The runner that is this machine (`LOCAL_RUNNER`) and the statuses of a report
(`ReportStatus`) are spelled in `baton_tui/core/words.py`; the engine's parts name them
instead of comparing with a literal that drifts (a typo compares false for ever).

The scan reads each module's syntax tree and flags a string constant where it stands for one:
`"local"` compared with anything, and a report status compared with (or `in` a literal
tested against) an expression whose last name is `status` (`status`, `report["status"]`,
`report.get("status")`), or given as the value of a `"status"` key. The same words in
messages, help text and payload keys are text, not flagged."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from baton_tui.core.words import FINAL_REPORTS, LOCAL_RUNNER, ReportStatus

PACKAGE = Path(__file__).resolve().parents[1] / "baton_tui"
PARTS = ["api", "channel", "store", "plan", "handoff", "run", "runners", "runners_config.py",
         "serve", "tui", "players/outcome.py", "players/steps.py"]
STATUSES = frozenset(ReportStatus)


def _last_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
        return str(node.slice.value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "get" and node.args and isinstance(node.args[0], ast.Constant):
        return str(node.args[0].value)
    return None


def _text(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def scan_source(source: str, name: str = "<source>") -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(source, name)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            for left, op, right in zip(sides, node.ops, sides[1:]):
                for mine, other in ((left, right), (right, left)):
                    words = [mine] if not isinstance(op, (ast.In, ast.NotIn)) or mine is left \
                        else list(getattr(mine, "elts", []))
                    for word in words:
                        if _text(word) == LOCAL_RUNNER:
                            found.append(f"{name}:{word.lineno}: 'local' compared")
                        elif _text(word) in STATUSES and _last_name(other) == "status":
                            found.append(f"{name}:{word.lineno}: {_text(word)!r} compared "
                                         "with a status")
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if key is not None and _text(key) == "status" and _text(value) in STATUSES:
                    found.append(f"{name}:{value.lineno}: {_text(value)!r} as a status")
    return found


@pytest.mark.parametrize("part", PARTS)
def test_no_runner_name_or_report_status_is_spelled_as_a_literal(part):
    path = PACKAGE / part
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    offenders = [hit for file in files for hit in scan_source(file.read_text(), str(file))]
    assert offenders == [], "spell these with LOCAL_RUNNER / ReportStatus:\n" + "\n".join(offenders)


PLANTED = '''
def f(task, report, status):
    if task.runner != "local" or report.get("status") == "failed":
        pass
    if status in ("done", "limited") or report["status"] == "progress":
        return {"status": "done", "summary": "ok"}
    print("done", {"done": True}, status == "questions")
'''


def test_the_scan_finds_each_spelling_it_forbids():
    lines = [hit.split(": ", 1)[1] for hit in scan_source(PLANTED)]
    assert lines == ["'local' compared", "'failed' compared with a status",
                     "'done' compared with a status", "'limited' compared with a status",
                     "'progress' compared with a status", "'done' as a status"]


def test_the_words_are_the_plain_strings_the_store_and_the_cli_use():
    assert LOCAL_RUNNER == "local"
    assert [str(s) for s in ReportStatus] == ["done", "failed", "progress", "limited"]
    assert "progress" not in FINAL_REPORTS and {"done", "failed", "limited"} == set(FINAL_REPORTS)
    assert ["x"] not in FINAL_REPORTS  # a status read from a file may be any JSON value

"""Every plan edit: the pure document functions, and the rules the engine applies around
them — validated whole, voiding approval, frozen once a task has started (a paused or
failed task may still be reassigned)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from baton_tui.cli import main
from baton_tui.config import Config
from baton_tui.core.errors import BatonError
from baton_tui.plan import edits
from baton_tui.plan.model import parse_document
from baton_tui.players.registry import Catalog
from baton_tui.store.db import Store
from baton_tui.paths import find_repo

from conftest import write_plan

TASKS = [
    {"id": 1, "title": "Schema", "prompt": "add the schema", "player": "claude-code",
     "model": "sonnet", "effort": "high"},
    {"id": 2, "title": "API", "prompt": "add the api", "player": "codex", "depends_on": [1]},
    {"id": 3, "title": "Docs", "prompt": "write docs", "player": "claude-code", "mode": "research"},
]


# --- pure functions -------------------------------------------------------------------

def _doc():
    return parse_document({"version": 1, "goal": "g", "tasks": TASKS})


def test_parse_ids_and_lists():
    assert edits.parse_ids("1,2, 3") == [1, 2, 3]
    assert edits.parse_ids("") == []
    assert edits.parse_list(" a, b ,,c ") == ["a", "b", "c"]
    assert edits.parse_list("") == []
    for bad in ("x", "0", "-1", "1,a"):
        with pytest.raises(BatonError, match="is not a task id"):
            edits.parse_ids(bad)


def test_set_field_player_resets_to_new_players_defaults():
    catalog = Catalog.from_config(Config())
    catalog.players["codex"].default_model = "gpt-5-codex"   # as a filled catalog would say
    catalog.players["codex"].default_effort = "medium"
    new = edits.set_field(_doc(), 1, "player", "codex", catalog)
    t = new.task(1)
    assert (t.player, t.model, t.effort) == ("codex", "gpt-5-codex", "medium")
    new = edits.set_field(new, 1, "player", "gemini", catalog)
    assert (new.task(1).model, new.task(1).effort) == catalog.defaults("gemini")


def test_set_field_returns_a_new_document():
    doc = _doc()
    new = edits.set_field(doc, 2, "title", "Better API")
    assert new.task(2).title == "Better API" and doc.task(2).title == "API"


def test_set_field_unknown_player():
    catalog = Catalog.from_config(Config())
    with pytest.raises(BatonError, match="unknown player 'nobody'"):
        edits.set_field(_doc(), 1, "player", "nobody", catalog)


@pytest.mark.parametrize("field,value,message", [
    ("effort", "extreme", "effort 'extreme' is not one of low, medium, high"),
    ("mode", "deploy", "mode 'deploy' is not one of build, research, manual"),
    ("id", 5, "no editable field 'id'"),
    ("colour", "red", "no editable field 'colour'"),
    ("title", "two\nlines", "title must be one line"),
    ("scope", ["../x"], "inside the repository"),
])
def test_set_field_refusals(field, value, message):
    with pytest.raises(BatonError, match=message):
        edits.set_field(_doc(), 1, field, value)


def test_set_field_unknown_task():
    with pytest.raises(BatonError, match="no task 9"):
        edits.set_field(_doc(), 9, "title", "x")


def test_add_task_next_id_and_defaults():
    new, new_id = edits.add_task(_doc(), "Tests", "codex", "build", [1, 2], "write tests")
    assert new_id == 4
    t = new.task(4)
    assert (t.title, t.player, t.depends_on, t.prompt) == ("Tests", "codex", [1, 2], "write tests")
    _, explicit = edits.add_task(_doc(), "Later", "codex", next_id=7)
    assert explicit == 7


def test_add_task_prompt_defaults_to_title():
    new, new_id = edits.add_task(_doc(), "Tidy", "codex")
    assert new.task(new_id).prompt == "Tidy"


def test_remove_task():
    new = edits.remove_task(_doc(), 3)
    assert [t.id for t in new.tasks] == [1, 2]


# --- through the engine (in-process CLI, real git repo and SQLite store) -------------

def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def status(capsys) -> dict:
    code, out, err = run(capsys, "status", "--json")
    assert code == 0, err
    return json.loads(out)


def plan_doc(capsys) -> dict:
    code, out, err = run(capsys, "plan", "--json")
    assert code == 0, err
    return json.loads(out)


def event_kinds(capsys) -> list[str]:
    code, out, _ = run(capsys, "log", "--json")
    assert code == 0
    return [json.loads(line)["kind"] for line in out.splitlines()]


@pytest.fixture
def loaded(repo, capsys):
    write_plan(repo / "p.json", TASKS)
    code, _, err = run(capsys, "plan", "--from", "p.json")
    assert code == 0, err
    return repo


def append_event(task_id: int, kind: str, data: dict | None = None) -> None:
    """Record a task event the way the engine does: through Store.append."""
    store = Store(find_repo().store_path)
    try:
        plan = store.current_plan()
        store.append(plan.id, task_id, kind, data or {})
    finally:
        store.close()


EDITS = [
    (["task-player", "1", "codex"], lambda t: t["player"] == "codex" and t["model"] is None
     and t["effort"] is None),
    (["task-model", "1", "opus"], lambda t: t["model"] == "opus"),
    (["task-model", "1", "default"], lambda t: t["model"] is None),
    (["task-effort", "1", "low"], lambda t: t["effort"] == "low"),
    (["task-mode", "1", "manual"], lambda t: t["mode"] == "manual"),
    (["task-prompt", "1", "--text", "a whole new prompt\nover two lines"],
     lambda t: t["prompt"] == "a whole new prompt\nover two lines"),
    (["task-title", "1", "New schema"], lambda t: t["title"] == "New schema"),
    (["task-deps", "3", "1,2"], lambda t: t["depends_on"] == [1, 2]),
    (["task-deps", "2", ""], lambda t: t["depends_on"] == []),
    (["task-scope", "1", "src/*.py, docs/schema.md"],
     lambda t: t["scope"] == ["src/*.py", "docs/schema.md"]),
    (["task-check", "1", "pytest -q tests/test_schema.py"],
     lambda t: t["check"] == "pytest -q tests/test_schema.py"),
    (["task-checkpoint", "1", "on"], lambda t: t["checkpoint"] is True),
    (["task-skills", "1", "tdd,review"], lambda t: t["skills"] == ["tdd", "review"]),
]


@pytest.mark.parametrize("argv,check", EDITS, ids=[" ".join(a[:2]) for a, _ in EDITS])
def test_each_edit_applies_and_voids_approval(loaded, capsys, argv, check):
    assert run(capsys, "approve")[0] == 0
    assert status(capsys)["plan"]["approved"] is True
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    task_id = int(argv[1])
    task = next(t for t in plan_doc(capsys)["tasks"] if t["id"] == task_id)
    assert check(task), task
    assert status(capsys)["plan"]["approved"] is False
    kinds = event_kinds(capsys)
    assert kinds[-2:] == ["plan.edited", "plan.approval_voided"]


def test_task_add_and_remove_void_approval(loaded, capsys):
    run(capsys, "approve")
    code, out, err = run(capsys, "task-add", "--title", "Tests", "--player", "codex",
                         "--deps", "1,2", "--text", "write the tests")
    assert code == 0, err
    assert "task 4 added" in out
    doc = plan_doc(capsys)
    added = doc["tasks"][-1]
    assert (added["id"], added["depends_on"], added["prompt"]) == (4, [1, 2], "write the tests")
    assert status(capsys)["plan"]["approved"] is False
    assert event_kinds(capsys)[-1] == "plan.approval_voided"

    run(capsys, "approve")
    code, _, err = run(capsys, "task-remove", "4")
    assert code == 0, err
    assert [t["id"] for t in plan_doc(capsys)["tasks"]] == [1, 2, 3]
    assert status(capsys)["plan"]["approved"] is False
    # ids stay stable for the life of the plan: a removed id is not reused
    code, out, _ = run(capsys, "task-add", "--title", "Again", "--player", "codex")
    assert code == 0 and "task 5 added" in out


def test_task_remove_refused_when_depended_on(loaded, capsys):
    before = plan_doc(capsys)
    code, _, err = run(capsys, "task-remove", "1")
    assert code == 2
    assert "task 1 cannot be removed: task 2 depends on it" in err
    assert plan_doc(capsys) == before


def test_edit_without_approval_records_no_voiding(loaded, capsys):
    assert run(capsys, "task-title", "2", "Renamed")[0] == 0
    assert "plan.approval_voided" not in event_kinds(capsys)


def test_refused_edit_leaves_plan_and_approval(loaded, capsys):
    run(capsys, "approve")
    before = plan_doc(capsys)
    code, _, err = run(capsys, "task-deps", "1", "2")
    assert code == 2 and "form a cycle" in err
    assert plan_doc(capsys) == before
    assert status(capsys)["plan"]["approved"] is True


@pytest.mark.parametrize("argv", [
    ["task-title", "1", "Renamed"], ["task-prompt", "1", "--text", "new"],
    ["task-deps", "1", ""], ["task-mode", "1", "manual"], ["task-scope", "1", "x.py"],
    ["task-check", "1", "true"], ["task-checkpoint", "1", "on"], ["task-skills", "1", "tdd"],
    ["task-player", "1", "codex"], ["task-model", "1", "opus"], ["task-effort", "1", "low"],
    ["task-remove", "1"],
])
def test_edit_refused_on_started_task(loaded, capsys, argv):
    run(capsys, "task-deps", "2", "")  # nothing depends on 1, so remove is judged on state
    run(capsys, "approve")
    append_event(1, "task.started", {"attempt": 1})
    before = plan_doc(capsys)
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "task 1 has started (running)" in err and "frozen" in err
    assert "Traceback" not in err
    assert plan_doc(capsys) == before
    assert status(capsys)["plan"]["approved"] is True


def test_other_tasks_still_editable_while_one_runs(loaded, capsys):
    """Mid-run, an edit holds only the edited task for approval; the plan stays approved."""
    run(capsys, "approve")
    append_event(1, "task.started")
    code, _, err = run(capsys, "task-title", "3", "Docs, better")
    assert code == 0, err
    st = status(capsys)
    assert st["plan"]["approved"] is True
    edited = next(t for t in st["tasks"] if t["id"] == 3)
    assert edited["needs_approval"] and "waiting for your approval" in edited["words"]
    assert run(capsys, "approve")[0] == 0
    assert not next(t for t in status(capsys)["tasks"] if t["id"] == 3)["needs_approval"]


@pytest.mark.parametrize("state_event", ["task.failed", "task.paused"])
def test_failed_or_paused_task_may_be_reassigned_without_voiding(loaded, capsys, state_event):
    run(capsys, "approve")
    append_event(1, "task.started")
    append_event(1, state_event, {"reason": "agent crashed"})
    for argv in (["task-player", "1", "codex"], ["task-model", "1", "gpt-5"],
                 ["task-effort", "1", "medium"]):
        code, _, err = run(capsys, *argv)
        assert code == 0, err
    task = plan_doc(capsys)["tasks"][0]
    assert (task["player"], task["model"], task["effort"]) == ("codex", "gpt-5", "medium")
    st = status(capsys)
    assert st["plan"]["approved"] is True
    assert "plan.approval_voided" not in event_kinds(capsys)
    # ... but nothing else about it changes
    code, _, err = run(capsys, "task-title", "1", "Other")
    assert code == 2 and "frozen" in err


def test_done_task_cannot_be_reassigned(loaded, capsys):
    run(capsys, "approve")
    append_event(1, "task.started")
    append_event(1, "task.done", {"summary": "ok"})
    code, _, err = run(capsys, "task-player", "1", "codex")
    assert code == 2 and "task 1 has started (done)" in err


def test_task_prompt_from_stdin(loaded, capsys, monkeypatch):
    import io

    monkeypatch.setattr("sys.stdin", io.StringIO("prompt from stdin\n"))
    code, _, err = run(capsys, "task-prompt", "2")
    assert code == 0, err
    assert plan_doc(capsys)["tasks"][1]["prompt"] == "prompt from stdin\n"
    monkeypatch.setattr("sys.stdin", io.StringIO("   "))
    code, _, err = run(capsys, "task-prompt", "2")
    assert code == 2 and "prompt is empty" in err


def test_unknown_skill_refused(loaded, capsys):
    code, _, err = run(capsys, "task-skills", "1", "tdd,juggling")
    assert code == 2 and "unknown skill 'juggling'" in err
    assert plan_doc(capsys)["tasks"][0]["skills"] == []


def test_approve_twice_and_edit_then_reapprove(loaded, capsys):
    assert run(capsys, "approve")[0] == 0
    assert run(capsys, "task-title", "1", "x")[0] == 0
    assert status(capsys)["plan"]["approved"] is False
    assert run(capsys, "approve")[0] == 0
    assert status(capsys)["plan"]["approved"] is True


def test_the_current_plan_is_parsed_once_per_revision_and_afresh_after_anothers_edit(
        loaded, capsys, monkeypatch):
    # At 10,000 tasks a parse decodes 2 MB and validates it; one command asks for the
    # current plan several times. An edit keeps the document it stores; a revision another
    # process stored is parsed afresh.
    from baton_tui.plan import current as current_plan

    parsed: list[int] = []
    real = current_plan.parse_document
    monkeypatch.setattr(current_plan, "parse_document",
                        lambda raw, source, **kw: parsed.append(len(raw["tasks"]))
                        or real(raw, source, **kw))
    assert run(capsys, "approve")[0] == 0
    assert run(capsys, "task-title", "1", "Renamed")[0] == 0
    seen = parsed.copy()
    assert run(capsys, "task-add", "--title", "Extra", "--player", "codex")[0] == 0
    assert run(capsys, "approve")[0] == 0
    doc = plan_doc(capsys)
    assert [t["title"] for t in doc["tasks"]][::3] == ["Renamed", "Extra"]
    # Commands in one process parse the stored plan once: an edit keeps the document it
    # stored as that revision's, so the rename, task-add and approve parse nothing again.
    assert seen == [3] and parsed == [3]
    other = subprocess.run([sys.executable, "-m", "baton_tui", "task-title", "2", "Other"],
                           cwd=loaded, capture_output=True, text=True)
    assert other.returncode == 0, other.stderr
    assert plan_doc(capsys)["tasks"][1]["title"] == "Other"
    assert parsed == [3, 4]


def test_counts_read_as_a_person_writes_them():
    from baton_tui.core.words import counted

    assert [counted(n, "file") for n in (0, 1, 2)] == ["no files", "1 file", "2 files"]
    assert counted(0, "landed task", start=True) == "No landed tasks"

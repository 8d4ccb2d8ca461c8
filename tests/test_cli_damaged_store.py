"""A damaged store — one event row that is not JSON, a database file cut short — is one line
naming the file and what to do, never a traceback, for `status`, `log`, `logs` and `run`."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest

from baton_tui.paths import find_repo

from conftest import write_plan

COMMANDS = [["status"], ["status", "--json"], ["log"], ["log", "--json"], ["logs", "1"],
            ["run"], ["plan"]]


@pytest.fixture
def store(repo, baton):
    """A store with a plan and a few hundred events (pages enough to cut one off)."""
    write_plan(repo / "p.json", [{"id": i, "title": f"Task {i}", "player": "script",
                                  "check": "true"} for i in range(1, 41)])
    assert baton("plan", "--from", "p.json").returncode == 0
    for n in range(3):
        assert baton("task-title", "1", f"Task one, take {n} " + "x" * 150).returncode == 0
    from baton_tui.store.db import Store

    path = find_repo(repo).store_path
    log = repo.parent / "attempt.log"
    log.write_text("the agent's output\n")
    with Store(path) as writer:  # task 1 ran once (`baton logs 1` reads its attempt)
        writer.new_attempt(writer.current_plan_id(), 1, "nonce", "script", {}, str(log))
    return path


def damaged_line(result, store_path) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith(f"baton: Baton's store {store_path} is damaged"), line
    assert f"mv {store_path} {store_path}.damaged" in line  # what to do
    return line


@pytest.mark.parametrize("argv", [a for a in COMMANDS if a[0] != "logs"])
def test_an_event_that_is_not_json(store, baton, argv):
    db = sqlite3.connect(store)
    with db:
        db.execute("DELETE FROM meta")  # no cached fold: the events are read
        bad = db.execute("SELECT max(id) FROM events").fetchone()[0]
        db.execute("UPDATE events SET data = '{\"cut\": ' WHERE id = ?", (bad,))
    db.close()
    assert f"(event {bad} is not JSON)" in damaged_line(baton(*argv), store)


def test_an_attempt_that_is_not_json(store, baton):
    assert "the agent's output" in baton("logs", "1").stdout
    db = sqlite3.connect(store)
    with db:
        db.execute("UPDATE attempts SET spec = '[oops'")
    db.close()
    assert "(attempt 1's record is not JSON)" in damaged_line(baton("logs", "1"), store)


@pytest.mark.parametrize("argv", COMMANDS)
def test_a_database_cut_short(store, baton, argv):
    size = store.stat().st_size
    assert size > 3 * 4096
    os.truncate(store, size // 2)
    assert "database disk image is malformed" in damaged_line(baton(*argv), store)


def test_a_file_that_is_not_a_database(store, baton):
    for name in ("-wal", "-shm"):
        (store.parent / f"baton.db{name}").unlink(missing_ok=True)
    store.write_bytes(b"this is no database\n" * 500)
    for argv in (["status"], ["run"]):
        assert "file is not a database" in damaged_line(baton(*argv), store)


def test_moving_it_aside_as_told_starts_afresh(store, baton):
    os.truncate(store, store.stat().st_size // 2)
    damaged_line(baton("status"), store)
    shutil.move(store, f"{store}.damaged")
    result = baton("status")
    assert result.returncode == 0 and "no plan yet" in result.stdout, result.stderr


@pytest.mark.parametrize("argv", COMMANDS)
@pytest.mark.parametrize("table,value,said", [
    ("events", "[1, 2]", "data is not a JSON object"),
    ("plans", '{"version": 1, "goal": "no tasks"}', "document is not a plan"),
    ("plans", '{"version": 1, "goal": "g", "tasks": [1, 2]}', "document is not a plan"),
], ids=["event-list", "plan-without-tasks", "tasks-not-objects"])
def test_json_of_the_wrong_shape_is_damage_too(store, baton, argv, table, value, said):
    db = sqlite3.connect(store)
    with db:
        db.execute("DELETE FROM meta")  # no cached fold: the rows are read
        column = "data" if table == "events" else "doc"
        db.execute(f"UPDATE {table} SET {column} = ? WHERE id = (SELECT max(id) FROM {table})",
                   (value,))
    db.close()
    result = baton(*argv)
    if argv[0] == "logs" or (argv[0] == "log" and table == "plans"):  # (reads neither)
        assert "Traceback" not in result.stderr
        return
    assert said in damaged_line(result, store)

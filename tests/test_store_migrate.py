"""A store written by an older Baton opens under this one, losing nothing (issue 53).

Version 1 kept the plan's document as the third column of `plans`; every read of a later
column walked its overflow pages (2.4 MB at 10,000 tasks). Version 2 keeps the document and
the transcript last. These tests write stores in the old layout with real SQLite, open them
with today's code (the `Store`, and the CLI running a plan to its end), and compare every row.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from baton_tui.store import db
from baton_tui.store.rows import SCHEMA, SCHEMA_VERSION

from helpers.run_kit import load_plan, script_agent, states, task, write_config

# `plans` as Baton wrote it up to schema version 1 (pinned here: the code no longer has it).
OLD_PLANS = """
CREATE TABLE plans (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    doc TEXT NOT NULL,
    created REAL NOT NULL,
    revision INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    approved INTEGER NOT NULL DEFAULT 0,
    approved_at REAL,
    base_branch TEXT,
    base_commit TEXT,
    transcript TEXT NOT NULL DEFAULT '[]',
    options TEXT NOT NULL DEFAULT '{}'
);
"""
OLD_ORDER = ["id", "slug", "doc", "created", "revision", "archived", "approved", "approved_at",
             "base_branch", "base_commit", "transcript", "options"]
TABLES = ("meta", "plans", "events", "attempts", "trust", "conductor")


def columns(conn: sqlite3.Connection, table: str = "plans") -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def contents(path: Path) -> dict[str, list[dict]]:
    """Every row of every table, each as {column: value} (the columns' order left out)."""
    with sqlite3.connect(path) as conn:
        conn.row_factory = sqlite3.Row
        return {table: [dict(row) for row in conn.execute(f"SELECT * FROM {table} ORDER BY 1")]
                for table in TABLES}


def to_old_layout(path: Path) -> None:
    """Rewrite a store's `plans` as version 1 laid it out, and mark the store version 1."""
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("ALTER TABLE plans RENAME TO plans_new")
        conn.execute(OLD_PLANS)
        names = ", ".join(OLD_ORDER)
        conn.execute(f"INSERT INTO plans ({names}) SELECT {names} FROM plans_new")
        conn.execute("DROP TABLE plans_new")
        conn.execute("PRAGMA user_version = 1")
        conn.execute("COMMIT")
    conn.close()


def big_doc(n: int) -> dict:
    return {"version": 1, "goal": "migrate", "tasks": [
        {"id": i, "title": f"Task {i}", "prompt": "word " * 40, "player": "agent",
         "depends_on": [i - 1] if i > 1 else []} for i in range(1, n + 1)]}


def old_store(path: Path) -> None:
    """A version-1 store holding two plans (one archived, one approved with a big document,
    a transcript and options), events, an attempt, meta, trust, the conductor, and a column
    of `plans` this Baton never wrote."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with sqlite3.connect(path, isolation_level=None) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.executescript(SCHEMA.replace("CREATE TABLE IF NOT EXISTS plans", "CREATE TABLE old_"))
        conn.execute("DROP TABLE old_")
        conn.execute(OLD_PLANS)
        conn.execute("ALTER TABLE plans ADD COLUMN note TEXT")
        conn.execute("INSERT INTO plans (slug, doc, created, archived, transcript, note) VALUES "
                     "('first', ?, 1.5, 1, '[]', 'kept')", (json.dumps(big_doc(2)),))
        conn.execute(
            "INSERT INTO plans (slug, doc, created, revision, approved, approved_at, "
            "base_branch, base_commit, transcript, options) VALUES "
            "('second', ?, 2.5, 3, 1, 3.5, 'main', ?, ?, ?)",
            (json.dumps(big_doc(3000)), "a" * 40,
             json.dumps([{"role": "user", "content": "plan it"}]),
             json.dumps({"budget": {"cost": 5}, "auto_checkpoints": True})))
        conn.execute("INSERT INTO events (plan_id, task_id, kind, data, ts) VALUES "
                     "(2, 1, 'task.started', '{\"attempt\": 1}', 4.0)")
        conn.execute("INSERT INTO attempts (plan_id, task_id, nonce_hash, player, spec, "
                     "log_path, started, report, collected) VALUES "
                     "(2, 1, ?, 'agent', '{\"argv\": [\"x\"]}', '/tmp/log', 4.0, "
                     "'{\"status\": \"done\"}', 1)", (db.hash_nonce("bnc_x"),))
        conn.execute("INSERT INTO meta (key, value) VALUES ('planner', '{\"turns\": 2}')")
        conn.execute("INSERT INTO trust (path, sha256, trusted_at) VALUES ('baton.toml', "
                     "'abc', 5.0)")
        conn.execute("INSERT INTO conductor (id, pid, create_time, plan_id, started) VALUES "
                     "(1, 999999, 6.0, 2, 6.5)")
        conn.execute("PRAGMA user_version = 1")
    conn.close()


def test_an_old_store_keeps_every_row_and_puts_the_document_last(tmp_path):
    path = tmp_path / "state" / "baton.db"
    old_store(path)
    before = contents(path)
    assert len(before["plans"][1]["doc"]) > 500_000  # overflows many pages

    store = db.Store(path, create=False)
    plan = store.current_plan()
    assert plan is not None and plan.slug == "second"
    assert len(plan.doc["tasks"]) == 3000 and plan.options["auto_checkpoints"] is True
    assert plan.transcript == [{"role": "user", "content": "plan it"}]
    assert (plan.revision, plan.approved, plan.base_branch) == (3, True, "main")
    store.close()

    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert columns(conn)[-3:] == ["transcript", "doc", "note"]
        assert columns(conn).index("options") < columns(conn).index("doc")
        # the slug's uniqueness came along with the table
        with pytest.raises(sqlite3.IntegrityError):
            conn.execute("INSERT INTO plans (slug, doc, created) VALUES ('first', '{}', 1)")
    conn.close()
    assert contents(path) == before


def test_a_new_store_is_laid_out_new_and_opening_it_again_changes_nothing(tmp_path):
    path = tmp_path / "state" / "baton.db"
    store = db.Store(path)
    plan_id = store.insert_plan("fresh", big_doc(5))
    store.update_plan(plan_id, approved=True)
    store.close()
    before = contents(path)
    db.Store(path).close()
    with sqlite3.connect(path) as conn:
        assert columns(conn)[-2:] == ["transcript", "doc"]
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()
    assert contents(path) == before


def test_a_read_only_old_store_is_read_as_it_is(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root writes read-only files")
    path = tmp_path / "state" / "baton.db"
    old_store(path)
    with sqlite3.connect(path) as conn:  # its log folded back: the file alone holds it
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = contents(path)
    path.chmod(0o400)
    path.parent.chmod(0o500)
    try:
        store = db.Store(path, create=False)
        plan = store.current_plan()
        assert plan is not None and len(plan.doc["tasks"]) == 3000
        again = store.plan(plan.id, known=plan)
        assert again is not None and again.options == plan.options
        store.close()
        with sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True) as conn:
            assert columns(conn) == [*OLD_ORDER, "note"]
        conn.close()
    finally:
        path.parent.chmod(0o700)
        path.chmod(0o600)
    assert contents(path) == before


def test_a_plan_stored_by_the_old_layout_runs_to_its_end(repo, baton, tmp_path):
    """Planned and approved under version 1, run under this Baton: every task lands, and
    what the old store held is all there."""
    agent = script_agent(tmp_path, "agent", {"*": [{"write": "out.txt", "content": "x\n"},
                                                    {"report": "done", "summary": "ok"}]})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "One"), task(2, "Two", deps=[1])], approve=True)
    path = repo / ".git" / "baton" / "baton.db"
    to_old_layout(path)
    before = contents(path)
    with sqlite3.connect(path) as conn:
        assert columns(conn) == OLD_ORDER
    conn.close()

    result = baton("run", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert states(baton) == {1: "landed", 2: "landed"}
    after = contents(path)
    with sqlite3.connect(path) as conn:
        assert columns(conn)[-2:] == ["transcript", "doc"]
    conn.close()
    # the run writes only its options (that a run was asked for) into the plan's row
    assert [{**row, "options": None} for row in after["plans"]] == \
        [{**row, "options": None} for row in before["plans"]]
    assert after["events"][:len(before["events"])] == before["events"]
    assert after["trust"] == before["trust"]
    kept = [row for row in before["meta"] if not row["key"].startswith("fold:")]  # a cache
    assert [row for row in kept if row in after["meta"]] == kept

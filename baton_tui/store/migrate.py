"""Bringing a store written by an older Baton up to date, once, when it is opened.

Version 1 (issue 16): stores used to keep each attempt's nonce in the clear (any agent
could read another's and report for it) and the values of the person's `[players.*] env`
in `attempts.spec` (secrets in a world-readable file). Both are rewritten: the nonce
becomes its hash, the environment becomes the list of its names.

Version 2 (issue 53): the plan's document was the third column of `plans`; at 10,000 tasks
it is 2.4 MB, and every read of a later column (`revision`, `options`) walked its overflow
pages. The table is rebuilt with the document and the transcript last, every row and every
column kept (a column this Baton does not know is kept too, after them).
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

from baton_tui.store.rows import PLANS


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Apply every step between the store's `user_version` and `version` in one write
    transaction (a second process that raced here finds the work done). Freed pages are
    zeroed, so the old values do not linger in the file."""
    conn.execute("PRAGMA secure_delete = ON")
    conn.execute("BEGIN IMMEDIATE")
    try:
        if conn.execute("PRAGMA user_version").fetchone()[0] < 1:
            _hash_nonces(conn)
            _env_names(conn)
        _plan_document_last(conn)
        conn.execute(f"PRAGMA user_version = {int(version)}")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _hash_nonces(conn: sqlite3.Connection) -> None:
    columns = _columns(conn, "attempts")
    if "nonce" not in columns:
        return
    if "nonce_hash" not in columns:
        conn.execute("ALTER TABLE attempts ADD COLUMN nonce_hash TEXT NOT NULL DEFAULT ''")
    rows = conn.execute("SELECT id, nonce FROM attempts").fetchall()
    for attempt_id, nonce in rows:
        digest = hashlib.sha256(str(nonce).encode("utf-8", "surrogateescape")).hexdigest()
        conn.execute("UPDATE attempts SET nonce_hash = ? WHERE id = ?", (digest, attempt_id))
    conn.execute("ALTER TABLE attempts DROP COLUMN nonce")


def _env_names(conn: sqlite3.Connection) -> None:
    for attempt_id, text in conn.execute("SELECT id, spec FROM attempts").fetchall():
        try:
            spec = json.loads(text or "{}")
        except ValueError:
            continue
        if isinstance(spec, dict) and isinstance(spec.get("env"), dict):
            spec["env_names"] = sorted(spec.pop("env"))
            conn.execute("UPDATE attempts SET spec = ? WHERE id = ?",
                         (json.dumps(spec), attempt_id))


def _plan_document_last(conn: sqlite3.Connection) -> None:
    """`plans` rebuilt with its document and transcript as its last columns (`rows.PLANS`),
    unless they are already."""
    names = [row[1] for row in conn.execute("PRAGMA table_info(plans)")]
    if names[-2:] == ["transcript", "doc"]:
        return
    conn.execute("ALTER TABLE plans RENAME TO plans_before")
    conn.execute(PLANS)
    known = _columns(conn, "plans")
    for _cid, name, kind, _notnull, _default, _pk in conn.execute(
            "PRAGMA table_info(plans_before)").fetchall():
        if name not in known:  # not this Baton's: kept all the same
            conn.execute(f'ALTER TABLE plans ADD COLUMN "{name}" {kind}')
    kept = ", ".join(f'"{name}"' for name in names)
    conn.execute(f"INSERT INTO plans ({kept}) SELECT {kept} FROM plans_before")
    conn.execute("DROP TABLE plans_before")

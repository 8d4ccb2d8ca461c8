"""Bringing a store written by an older Baton up to date, once, when it is opened.

Version 1 (issue 16): stores used to keep each attempt's nonce in the clear (any agent
could read another's and report for it) and the values of the person's `[players.*] env`
in `attempts.spec` (secrets in a world-readable file). Both are rewritten: the nonce
becomes its hash, the environment becomes the list of its names.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3


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

"""The SQLite state store (WAL): plans, events, attempts, trust, the conductor.

Standard library only, so `baton status` and `baton report` load nothing heavy.
Every process (CLI, conductor, attempt shims, reports) opens its own
connection; WAL lets readers work while one writer appends.

Private by construction: the state directory is 0700 and the database 0600; an attempt's
nonce is kept only as a hash (its value lives in the agent's environment), so reading the
store never lets one agent report for another; what an agent says is redacted and its
control characters escaped on the way in (`redact.clean`). A store that does not exist yet
is created at its first write, never by a command that only reads.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from contextlib import contextmanager

from baton_tui import killpoints
from baton_tui.core.events import Event
from baton_tui.core.jsontext import dumps as to_json
from baton_tui.store.rows import (  # the records and helpers callers take from here too
    ATTEMPT_FIELDS, RESERVE, SCHEMA, SCHEMA_VERSION, AttemptRow, Damaged, PlanRow, Unwritable,
    clean,
    hash_nonce, make_private, nonce_matches,
)

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:  # nor `pathlib` on the report path (2 ms of `baton report`'s start)
    from pathlib import Path
    from typing import Any, Iterator

    from baton_tui.store.attempt_spec import AttemptSpec, SpecKey

__all__ = ["AttemptRow", "Damaged", "PlanRow", "SCHEMA", "Store", "Unwritable", "damaged",
           "hash_nonce", "nonce_matches"]

# Every store connection this process holds open, with its file, for `close_all` and `damaged`.
_connections: dict[sqlite3.Connection, str] = {}


def close_all() -> None:
    """Close every store connection this process still holds: a command's last step before
    it leaves without the interpreter's teardown (`cli._leave`). The last connection to a
    store to close folds its write-ahead log back, so the database file alone holds every
    change (a copy of it, or a reader that opens it immutable, sees them all)."""
    for conn in list(_connections):
        try:
            conn.close()
        except sqlite3.Error:  # opened on another thread: freed with it
            pass
    _connections.clear()


def damaged(exc: BaseException) -> Damaged | None:
    """sqlite's word for a damaged file ("database disk image is malformed", met on a page
    only when a query reaches it) as one line naming the store this process has open; None
    for any other error."""
    if type(exc) is not sqlite3.DatabaseError or not _connections:
        return None
    return Damaged(next(reversed(_connections.values())), str(exc))


def _is_json(text: str | None) -> bool:
    try:
        json.loads(text or "null")
    except (ValueError, TypeError):
        return False
    return True


def _inserted(cur: sqlite3.Cursor) -> int:
    """The id of the row an INSERT just wrote (sqlite sets it on every INSERT)."""
    assert cur.lastrowid is not None
    return cur.lastrowid


class Store:
    """A connection to one repository's store.

    `create=False` opens an existing store only (FileNotFoundError otherwise). With
    `create=True` a missing store reads as empty until the first write creates it.
    `any_thread`: used from several threads, one at a time (the caller holds a lock).
    """

    def __init__(self, path: Path | str, *, create: bool = True, any_thread: bool = False):
        self.file = os.fspath(path)  # its file's name; `path` is the same as a Path
        self._one_thread = not any_thread
        self._path: Path | None = None
        self._conn: sqlite3.Connection | None = None
        self._empty: sqlite3.Connection | None = None
        if os.path.exists(self.file):
            self._open(create)
        elif not create:
            raise FileNotFoundError(self.path)
        else:
            # Reads see an empty store (a query-only in-memory one, so a write that forgot
            # `_writable` fails loudly instead of vanishing).
            self._empty = sqlite3.connect(":memory:", isolation_level=None,
                                          check_same_thread=False)
            self._empty.row_factory = sqlite3.Row
            self._empty.executescript(SCHEMA)
            self._empty.execute("PRAGMA query_only = ON")

    @property
    def path(self) -> Path:
        """The store's file (`pathlib` loaded on first use: `baton report` never asks)."""
        if self._path is None:
            from pathlib import Path

            self._path = Path(self.file)
        return self._path

    @property
    def conn(self) -> sqlite3.Connection:
        if self._conn is None and os.path.exists(self.file):
            self._open(True)  # another process created it meanwhile
        return self._conn if self._conn is not None else self._empty  # type: ignore[return-value]

    def _writable(self) -> sqlite3.Connection:
        """The real connection, creating the store (0700 folder, 0600 file) on first write."""
        if self._conn is None:
            folder = self.path.parent
            folder.mkdir(parents=True, exist_ok=True)
            make_private(folder, 0o700)
            try:
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            except FileExistsError:
                pass
            self._open(True)
        assert self._conn is not None
        return self._conn

    def _open(self, create: bool) -> None:
        try:
            conn = self._connect(create)
        except sqlite3.OperationalError:
            if self._can_write():
                raise
            # A read-only store (its file, folder or file system): readable as it is, while
            # every write says so in one line (`Unwritable`). WAL needs a writable folder for
            # its index, so it is opened as an immutable file.
            conn = sqlite3.connect(f"{self.path.resolve().as_uri()}?immutable=1", uri=True,
                                   timeout=30.0, isolation_level=None,
                                   check_same_thread=self._one_thread)
            conn.row_factory = sqlite3.Row
        except sqlite3.DatabaseError as exc:  # not a database (any more): truncated, overwritten
            raise Damaged(self.path, str(exc)) from None
        self._conn = conn
        _connections[conn] = self.file
        if self._empty is not None:
            self._empty.close()
            self._empty = None
        if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
            self._migrate(conn)

    def _can_write(self) -> bool:
        return os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)

    def _connect(self, create: bool) -> sqlite3.Connection:
        conn = sqlite3.connect(self.file, timeout=30.0, isolation_level=None,
                               check_same_thread=self._one_thread)
        conn.row_factory = sqlite3.Row
        try:
            conn.execute("PRAGMA busy_timeout = 30000")
            # Per connection: the shim's and `baton report`'s too (the store is WAL: a commit
            # then survives a killed process without its own fsync).
            conn.execute("PRAGMA synchronous = NORMAL")
            if create:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
                if mode != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                conn.executescript(SCHEMA)
            conn.execute("PRAGMA user_version").fetchone()  # opens the file now, not later
        except sqlite3.DatabaseError:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        """Bring an older store up to SCHEMA_VERSION: hash its nonces, drop the environment
        values its attempt specs held, and make its files private."""
        # lazy: only an older store needs it (`baton status`, `report`)
        from baton_tui.store.migrate import migrate

        try:
            migrate(conn, SCHEMA_VERSION)
        except sqlite3.OperationalError:  # read-only file or folder: leave it to its owner
            return
        make_private(self.path.parent, 0o700)
        for suffix in ("", "-wal", "-shm"):
            make_private(f"{self.file}{suffix}", 0o600)

    def close(self) -> None:
        _connections.pop(self._conn, None)  # type: ignore[arg-type]  # first: a close that fails leaves it to its thread
        for conn in (self._conn, self._empty):
            if conn is not None:
                conn.close()

    def __del__(self) -> None:
        # Freed unclosed: closed now. Its connection, held in a cycle by its own statement
        # cache, would stay open until the cycle collector ran — never, at a command's fast
        # exit, which left the write-ahead log unfolded (`close_all`).
        try:
            self.close()
        except Exception:  # on another thread than it was made on, or at interpreter exit
            pass

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, sql: str, args: tuple[Any, ...] | list[Any] = ()) -> sqlite3.Cursor:
        """One write. A store that cannot be written (read-only, disk full) is one clear
        line (`Unwritable`), never a traceback."""
        try:
            return self._writable().execute(sql, args)
        except (sqlite3.OperationalError, OSError) as exc:
            raise Unwritable(self.path, exc) from None

    def check_writable(self) -> None:
        """Take the write lock and let it go, writing nothing: a command that would change
        the store asks first, so a refusal leaves it as it was."""
        with self.tx():
            pass

    def keep_reserve(self, size: int = RESERVE) -> None:
        """Hold a little disk space beside the store (best effort): on a full disk it is
        given back, so the conductor can still record why it stopped."""
        path = self.path.with_name("baton.reserve")
        try:
            if not path.exists() or path.stat().st_size < size:
                with open(path, "wb") as fh:
                    fh.write(bytes(size))
        except OSError:
            path.unlink(missing_ok=True)

    def release_reserve(self) -> None:
        self.path.with_name("baton.reserve").unlink(missing_ok=True)

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction taken up front (BEGIN IMMEDIATE), so writers queue cleanly."""
        try:
            conn = self._writable()
            conn.execute("BEGIN IMMEDIATE")
        except (sqlite3.OperationalError, OSError) as exc:
            raise Unwritable(self.path, exc) from None
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        try:
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:  # a full disk shows here, at the end
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise Unwritable(self.path, exc) from None
        held, self._held = getattr(self, "_held", 0), 0
        for _ in range(held):
            killpoints.reached("event")  # the events are written now, not before

    # events ---------------------------------------------------------------
    def append(self, plan_id: int | None, task_id: int | None, kind: str,
               data: dict[str, Any] | None = None) -> int:
        """Append one event (secrets redacted, control characters escaped); returns its id."""
        cur = self._write(
            "INSERT INTO events (plan_id, task_id, kind, data, ts) VALUES (?, ?, ?, ?, ?)",
            (plan_id, task_id, kind, to_json(clean(data or {})), time.time()),
        )
        if self._conn is not None and self._conn.in_transaction:
            self._held = getattr(self, "_held", 0) + 1  # a boundary once COMMIT writes it
        else:
            killpoints.reached("event")  # the crash tests' event boundary (conductor only)
        return _inserted(cur)

    def events(self, plan_id: int | None = None, after: int = 0,
               task_id: int | None = None, limit: int | None = None) -> list[Event]:
        """Events after the id `after` in order (only the first `limit`, when given)."""
        sql = "SELECT * FROM events WHERE id > ?"
        args: list[Any] = [after]
        if plan_id is not None:
            sql += " AND plan_id = ?"
            args.append(plan_id)
        if task_id is not None:
            sql += " AND task_id = ?"
            args.append(task_id)
        if limit is not None:
            sql += " ORDER BY id LIMIT ?"
            args.append(limit)
            return self._events(sql, args)
        return self._events(sql + " ORDER BY id", args)

    def history(self, plan_id: int, task_ids: list[int], upto: int) -> list[Event]:
        """The events up to `upto` that fold these tasks' views: their own and the plan's
        (an approval clears every task's `needs_approval`) — a few tasks' views, rebuilt
        without folding the whole plan."""
        # Two lookups in the task index, sorted after (`+id`): asked as one `task_id IS NULL
        # OR task_id IN (…)`, or ordered by the index's `id`, SQLite walks every event of the
        # plan instead (9 ms of a 10,000-task status, against 0.3).
        marks = ",".join("?" * len(task_ids))
        return self._events(
            "SELECT * FROM (SELECT * FROM events WHERE plan_id = ? AND id <= ? AND task_id IN "
            f"({marks}) UNION ALL SELECT * FROM events WHERE plan_id = ? AND id <= ? AND "
            "task_id IS NULL) ORDER BY +id", [plan_id, upto, *task_ids, plan_id, upto])

    def _events(self, sql: str, args: list[Any]) -> list[Event]:
        # Plain tuples, and no JSON decoding of the empty payload most events carry: a
        # 10,000-task plan's log is ~76,000 rows.
        cur = self.conn.cursor()
        cur.row_factory = None
        rows = cur.execute(sql.replace("*", "id, plan_id, task_id, kind, data, ts", 1),
                           args).fetchall()
        loads = json.loads
        try:
            events = [Event(i, p, t, k, loads(d) if d != "{}" else {}, ts)
                      for i, p, t, k, d, ts in rows]
        except ValueError:  # (json's error is one) a row written by something else than Baton
            bad = next(i for i, _p, _t, _k, d, _ts in rows if not _is_json(d))
            raise Damaged(self.path, f"event {bad} is not JSON") from None
        for event in events:  # JSON of another shape (`[1, 2]`): as damaged, never a traceback
            if type(event.data) is not dict:
                raise Damaged(self.path, f"event {event.id}'s data is not a JSON object")
        return events

    def task_base(self, plan_id: int, task_id: int) -> str | None:
        """The commit a task's branch was cut from (recorded when its worktree was made)."""
        # lazy: `baton status`, `baton log` and the shim never need it
        from baton_tui.core.views import Folder

        return Folder().feed(self.events(plan_id, task_id=task_id)).view(task_id).base

    def last_event_id(self) -> int:
        row = self.conn.execute("SELECT MAX(id) FROM events").fetchone()
        return int(row[0] or 0)

    # plans ----------------------------------------------------------------
    def _plan(self, row: sqlite3.Row) -> PlanRow:
        try:
            transcript, options = json.loads(row["transcript"]), json.loads(row["options"])
        except ValueError:
            raise Damaged(self.path, f"plan {row['id']}'s record is not JSON") from None
        if not isinstance(transcript, list) or not isinstance(options, dict):
            raise Damaged(self.path, f"plan {row['id']}'s record is JSON of the wrong shape")
        return PlanRow(
            id=row["id"], slug=row["slug"], doc_text=row["doc"], created=row["created"],
            revision=row["revision"], archived=bool(row["archived"]), approved=bool(row["approved"]),
            approved_at=row["approved_at"], base_branch=row["base_branch"],
            base_commit=row["base_commit"], transcript=transcript, options=options,
            store_path=self.path,
        )

    def current_plan_id(self) -> int | None:
        """The current plan's id, without reading (or decoding) the plan itself."""
        row = self.conn.execute(
            "SELECT id FROM plans WHERE archived = 0 ORDER BY id DESC LIMIT 1").fetchone()
        return row[0] if row else None

    def current_plan(self) -> PlanRow | None:
        row = self.conn.execute(
            "SELECT * FROM plans WHERE archived = 0 ORDER BY id DESC LIMIT 1").fetchone()
        return self._plan(row) if row else None

    def plan(self, plan_id: int, known: PlanRow | None = None) -> PlanRow | None:
        """The plan row. With `known` (this plan's row read earlier) its document and
        transcript are reused while the revision is the same, never read or decoded again:
        the conductor looks every tick, and a 10,000-task document takes a while to decode."""
        if known is None or known.id != plan_id:
            row = self.conn.execute("SELECT * FROM plans WHERE id = ?", (plan_id,)).fetchone()
            return self._plan(row) if row else None
        row = self.conn.execute(
            "SELECT id, slug, created, revision, archived, approved, approved_at, base_branch, "
            "base_commit, options, CASE WHEN revision = ? THEN NULL ELSE doc END AS doc, "
            "CASE WHEN revision = ? THEN NULL ELSE transcript END AS transcript "
            "FROM plans WHERE id = ?", (known.revision, known.revision, plan_id)).fetchone()
        if row is None:
            return None
        if row["doc"] is not None:
            return self._plan(row)
        return PlanRow(
            id=row["id"], slug=row["slug"], doc=known._doc, doc_text=known.doc_text,
            created=row["created"],
            revision=row["revision"], archived=bool(row["archived"]), approved=bool(row["approved"]),
            approved_at=row["approved_at"], base_branch=row["base_branch"],
            base_commit=row["base_commit"], transcript=known.transcript,
            options=self._options(row), store_path=self.path)

    def _options(self, row: sqlite3.Row) -> dict[str, Any]:
        try:
            options = json.loads(row["options"])
        except ValueError:
            raise Damaged(self.path, f"plan {row['id']}'s record is not JSON") from None
        if not isinstance(options, dict):
            raise Damaged(self.path, f"plan {row['id']}'s record is JSON of the wrong shape")
        return options

    def plan_ids(self) -> list[int]:
        """Every plan ever stored, archived ones included, oldest first."""
        return [r[0] for r in self.conn.execute("SELECT id FROM plans ORDER BY id")]

    def check_readable(self) -> None:
        """Touch the schema, so a damaged file fails now with sqlite's own words."""
        self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()

    # meta: small documents of Baton's own (the planner's session) ----------------
    def get_meta(self, key: str) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        try:
            return json.loads(row[0]) if row else None
        except ValueError:
            raise Damaged(self.path, f"its {key!r} record is not JSON") from None

    def set_meta(self, key: str, value: Any) -> None:
        """Store `value` as JSON under `key`; None deletes it."""
        if value is None:
            self._write("DELETE FROM meta WHERE key = ?", (key,))
        else:
            self._write("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                     (key, to_json(value)))

    def slugs(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT slug FROM plans")}

    def insert_plan(self, slug: str, doc: dict[str, Any], transcript: list[Any] | None = None) -> int:
        cur = self._write(
            "INSERT INTO plans (slug, doc, created, transcript) VALUES (?, ?, ?, ?)",
            (slug, to_json(doc), time.time(), to_json(clean(transcript or []))),
        )
        return _inserted(cur)

    def update_plan(self, plan_id: int, **fields: Any) -> None:
        """Update plan columns; `doc`, `transcript` and `options` are JSON-encoded here (the
        planner's transcript — model output — redacted)."""
        if "transcript" in fields:
            fields["transcript"] = clean(fields["transcript"])
        for key in ("doc", "transcript", "options"):
            if key in fields:
                fields[key] = to_json(fields[key])
        for key in ("approved", "archived"):
            if key in fields:
                fields[key] = int(bool(fields[key]))
        cols = ", ".join(f"{k} = ?" for k in fields)
        self._write(f"UPDATE plans SET {cols} WHERE id = ?",
                                 (*fields.values(), plan_id))

    # attempts -------------------------------------------------------------
    def _attempt(self, row: sqlite3.Row) -> AttemptRow:
        values = {k: row[k] for k in ATTEMPT_FIELDS}
        try:
            values["spec"] = json.loads(values["spec"] or "{}")
            values["report"] = json.loads(values["report"]) if values["report"] else None
        except ValueError:
            raise Damaged(self.path, f"attempt {values['id']}'s record is not JSON") from None
        if not isinstance(values["spec"], dict) or not isinstance(values["report"], (dict,
                                                                                     type(None))):
            raise Damaged(self.path, f"attempt {values['id']}'s record is JSON of the wrong shape")
        values["collected"] = bool(values["collected"])
        return AttemptRow(**values)

    def new_attempt(self, plan_id: int, task_id: int, nonce: str, player: str,
                    spec: AttemptSpec, log_path: str) -> int:
        """Record an attempt; of its nonce only the hash is kept (see `hash_nonce`)."""
        cur = self._write(
            "INSERT INTO attempts (plan_id, task_id, nonce_hash, player, spec, log_path) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (plan_id, task_id, hash_nonce(nonce), player, to_json(spec), log_path),
        )
        return _inserted(cur)

    def update_attempt(self, attempt_id: int, *, spec: AttemptSpec | None = None,
                       **fields: Any) -> None:
        if spec is not None:
            fields["spec"] = to_json(spec)
        if "report" in fields and fields["report"] is not None:
            fields["report"] = to_json(clean(fields["report"]))
        if "collected" in fields:
            fields["collected"] = int(bool(fields["collected"]))
        cols = ", ".join(f"{k} = ?" for k in fields)
        self._write(f"UPDATE attempts SET {cols} WHERE id = ?",
                                 (*fields.values(), attempt_id))

    def claim_attempt(self, attempt_id: int, shim_pid: int) -> bool:
        """The shim takes its attempt, once: False when a conductor gave it up first."""
        cur = self._write("UPDATE attempts SET shim_pid = ?, started = ? WHERE id = ? "
                          "AND started IS NULL AND collected = 0",
                          (shim_pid, time.time(), attempt_id))
        return cur.rowcount == 1

    def abandon_attempt(self, attempt_id: int) -> bool:
        """Give up an attempt its shim never claimed (the conductor died after recording it):
        True when it will never run; False when the shim claimed it — it runs."""
        cur = self._write("UPDATE attempts SET collected = 1 WHERE id = ? AND started IS NULL",
                          (attempt_id,))
        return cur.rowcount == 1

    def note_attempt(self, attempt_id: int, key: SpecKey, value: Any) -> None:
        """Set one key of an attempt's spec in place (the conductor may write others)."""
        self._write("UPDATE attempts SET spec = json_set(spec, ?, json(?)) WHERE id = ?",
                    (f"$.{key}", to_json(value), attempt_id))

    def attempt(self, attempt_id: int) -> AttemptRow | None:
        row = self.conn.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        return self._attempt(row) if row else None

    def attempts_by_id(self, ids: list[int]) -> dict[int, AttemptRow]:
        """Several attempts in one query (the conductor reads every live one each tick)."""
        found: dict[int, AttemptRow] = {}
        for at in range(0, len(ids), 500):
            chunk = ids[at:at + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.conn.execute(f"SELECT * FROM attempts WHERE id IN ({marks})", chunk):
                found[row["id"]] = self._attempt(row)
        return found

    def attempt_marks(self, ids: list[int]) -> dict[int, tuple[Any, ...]]:
        """A mark per attempt that changes whenever its record does (its spec and report by
        a hash of their text: neither is decoded)."""
        found: dict[int, tuple[Any, ...]] = {}
        for at in range(0, len(ids), 500):
            chunk = ids[at:at + 500]
            marks = ", ".join("?" * len(chunk))
            for row in self.conn.execute(
                    "SELECT id, shim_pid, pid, pgid, create_time, started, ended, exit_status, "
                    "session_id, collected, log_path, spec, report FROM attempts "
                    f"WHERE id IN ({marks})", chunk):
                found[row[0]] = (*tuple(row)[1:11], hash(row[11]), hash(row[12]))
        return found

    def attempts(self, plan_id: int, task_id: int | None = None) -> list[AttemptRow]:
        sql, args = "SELECT * FROM attempts WHERE plan_id = ?", [plan_id]
        if task_id is not None:
            sql += " AND task_id = ?"
            args.append(task_id)
        return [self._attempt(r) for r in self.conn.execute(sql + " ORDER BY id", args)]

    def prompts_live_since(self, plan_id: int, since: float) -> list[tuple[int, int, float, str]]:
        """(attempt id, task id, started, log path) of the plan's attempts that ran at some
        moment from `since` on (started, and not ended before it): what a later write could
        still have reached. Read after every attempt: no spec or report is decoded."""
        return [tuple(r) for r in self.conn.execute(
            "SELECT id, task_id, started, log_path FROM attempts WHERE plan_id = ? "
            "AND started IS NOT NULL AND log_path IS NOT NULL "
            "AND (ended IS NULL OR ended >= ?) ORDER BY id", (plan_id, since))]

    def last_event_at(self, plan_id: int, task_id: int, but: str) -> float | None:
        """When the task's latest event of any kind but `but` was written."""
        row = self.conn.execute("SELECT MAX(ts) FROM events WHERE plan_id = ? AND task_id = ? "
                                "AND kind != ?", (plan_id, task_id, but)).fetchone()
        return row[0] if row else None

    def latest_attempt(self, plan_id: int, task_id: int) -> AttemptRow | None:
        row = self.conn.execute(
            "SELECT * FROM attempts WHERE plan_id = ? AND task_id = ? ORDER BY id DESC LIMIT 1",
            (plan_id, task_id)).fetchone()
        return self._attempt(row) if row else None

    # trust ----------------------------------------------------------------
    def trusted_hash(self, path: str) -> str | None:
        row = self.conn.execute("SELECT sha256 FROM trust WHERE path = ?", (path,)).fetchone()
        return row[0] if row else None

    def set_trust(self, path: str, sha256: str) -> None:
        self._write(
            "INSERT INTO trust (path, sha256, trusted_at) VALUES (?, ?, ?) "
            "ON CONFLICT(path) DO UPDATE SET sha256 = excluded.sha256, trusted_at = excluded.trusted_at",
            (path, sha256, time.time()))

    # conductor --------------------------------------------------------------
    def conductor(self) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM conductor WHERE id = 1").fetchone()

    def set_conductor(self, pid: int, create_time: float | None, plan_id: int,
                      started: float | None = None) -> None:
        self._write(
            "INSERT OR REPLACE INTO conductor (id, pid, create_time, plan_id, started) "
            "VALUES (1, ?, ?, ?, ?)", (pid, create_time, plan_id, started or time.time()))

    def clear_conductor(self, pid: int) -> None:
        self._write("DELETE FROM conductor WHERE id = 1 AND pid = ?", (pid,))

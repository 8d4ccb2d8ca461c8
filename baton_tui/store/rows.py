"""The store's schema and the records it hands out (plans, attempts), with the helpers that
keep it private: nonces kept as hashes, file modes, text cleaned on the way in."""

from __future__ import annotations

import json
import os

from baton_tui.core.errors import BatonError

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:  # and `pathlib` on the report path (2 ms of `baton report`'s start)
    from pathlib import Path
    from collections.abc import Callable
    from typing import Any

    from baton_tui.store.attempt_spec import AttemptSpec

# The plan's document (2.4 MB at 10,000 tasks) and transcript come last in `plans`: a
# column after one that overflows its page is reached by walking the overflow chain, so
# with the document third every read of `options` or `revision` cost ~0.5 ms at that size.
PLANS = """
CREATE TABLE IF NOT EXISTS plans (
    id INTEGER PRIMARY KEY,
    slug TEXT NOT NULL UNIQUE,
    created REAL NOT NULL,
    revision INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0,
    approved INTEGER NOT NULL DEFAULT 0,
    approved_at REAL,
    base_branch TEXT,
    base_commit TEXT,
    options TEXT NOT NULL DEFAULT '{}',
    transcript TEXT NOT NULL DEFAULT '[]',
    doc TEXT NOT NULL
);
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
""" + PLANS + """
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY,
    plan_id INTEGER,
    task_id INTEGER,
    kind TEXT NOT NULL,
    data TEXT NOT NULL DEFAULT '{}',
    ts REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS events_plan ON events (plan_id, id);
CREATE INDEX IF NOT EXISTS events_task ON events (plan_id, task_id, id);
CREATE TABLE IF NOT EXISTS attempts (
    id INTEGER PRIMARY KEY,
    plan_id INTEGER NOT NULL,
    task_id INTEGER NOT NULL,
    nonce_hash TEXT NOT NULL,
    player TEXT NOT NULL,
    spec TEXT NOT NULL DEFAULT '{}',
    log_path TEXT,
    shim_pid INTEGER,
    pid INTEGER,
    pgid INTEGER,
    create_time REAL,
    started REAL,
    ended REAL,
    exit_status INTEGER,
    session_id TEXT,
    report TEXT,
    collected INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS attempts_task ON attempts (plan_id, task_id, id);
CREATE TABLE IF NOT EXISTS trust (path TEXT PRIMARY KEY, sha256 TEXT NOT NULL, trusted_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS conductor (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pid INTEGER NOT NULL,
    create_time REAL,
    plan_id INTEGER,
    started REAL NOT NULL
);
"""

SCHEMA_VERSION = 2  # 1: nonces hashed, spec.env reduced to names, private file modes;
#                     2: the plan's document and transcript at the end of its row

ATTEMPT_FIELDS = (
    "id", "plan_id", "task_id", "nonce_hash", "player", "spec", "log_path", "shim_pid", "pid", "pgid",
    "create_time", "started", "ended", "exit_status", "session_id", "report", "collected",
)


RESERVE = 1 << 20  # bytes kept free beside the store for a conductor's last words


class Unwritable(BatonError):
    """The store cannot be written: read-only, disk full, or gone. One line, exit 2."""

    def __init__(self, path: Path | str, exc: BaseException):
        text = str(exc)
        if "readonly" in text or "read-only" in text or getattr(exc, "errno", None) in (13, 30):
            why = "it is read-only"
        elif "full" in text or getattr(exc, "errno", None) == 28:
            why = "the disk is full"
        else:
            why = text
        self.full = why == "the disk is full"
        super().__init__(f"cannot write Baton's store {path}: {why}")


class Damaged(BatonError):
    """The store cannot be read: a truncated or overwritten file, a row that is not JSON.
    One line naming the file and what to do, exit 2 — never a traceback."""

    def __init__(self, path: Path | str, what: str):
        super().__init__(
            f"Baton's store {path} is damaged ({what}): to start afresh, move it aside "
            f"(`mv {path} {path}.damaged`, and its -wal and -shm files) — its plans and run "
            "history go with it; task branches and worktrees stay in git")


def clean(value: Any) -> Any:
    """Secrets redacted, control characters escaped (`redact.clean`), imported on the first
    write: a store opened to read, as `baton status` does, never loads the redaction rules."""
    # lazy: `baton status --json`, `baton log` and the spawner never need it
    from baton_tui.redact import clean as redacted

    return redacted(value)


class _Record:
    """A plain record built from keyword fields (no `dataclasses`: see `paths.RepoPaths`)."""

    __slots__: tuple[str, ...] = ()

    def __init__(self, **fields: Any):
        for name in self.__slots__:
            setattr(self, name, fields.pop(name))
        if fields:
            raise TypeError(f"unknown fields: {', '.join(fields)}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__)
        return f"{type(self).__name__}({shown})"


class PlanRow(_Record):
    """A stored plan: the v1 document plus what Baton recorded about it.

    The document is decoded when first read (`doc`), from its stored text (`doc_text`): at
    10,000 tasks decoding it took a tenth of a `baton status` that never needs it (the
    status of a big plan is read back from what the last reader kept, see
    `snapshot._kept`)."""

    __slots__ = ("id", "slug", "_doc", "doc_text", "created", "revision", "archived",
                 "approved", "approved_at", "base_branch", "base_commit", "transcript",
                 "options", "store_path")

    id: int
    slug: str
    _doc: dict[str, Any] | None  # decoded on first read
    doc_text: str | None  # the document as stored (None: given decoded)
    created: float
    revision: int
    archived: bool
    approved: bool
    approved_at: float | None
    base_branch: str | None
    base_commit: str | None
    transcript: list[Any]
    options: dict[str, Any]
    store_path: Path | None  # the store it was read from (named when its text is damaged)

    def __init__(self, doc: dict[str, Any] | None = None, doc_text: str | None = None,
                 store_path: Path | None = None, **fields: Any):
        super().__init__(_doc=doc, doc_text=doc_text, store_path=store_path, **fields)

    @property
    def doc(self) -> dict[str, Any]:
        if self._doc is None:
            try:
                self._doc = json.loads(self.doc_text or "{}")
            except ValueError:
                raise Damaged(self.store_path or "(unknown)",
                              f"plan {self.id}'s document is not JSON") from None
            tasks = self._doc.get("tasks") if isinstance(self._doc, dict) else None
            if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
                self._doc = None
                raise Damaged(self.store_path or "(unknown)",
                              f"plan {self.id}'s document is not a plan (no list of tasks)")
        return self._doc

    @property
    def integration_branch(self) -> str:
        return f"baton/{self.slug}/integration"


class AttemptRow(_Record):
    """One run of one agent on one task, as the shim and the conductor recorded it."""

    __slots__ = ATTEMPT_FIELDS

    id: int
    plan_id: int
    task_id: int
    nonce_hash: str
    player: str
    spec: AttemptSpec
    log_path: str | None
    shim_pid: int | None
    pid: int | None
    pgid: int | None
    create_time: float | None
    started: float | None
    ended: float | None
    exit_status: int | None
    session_id: str | None
    report: dict[str, Any] | None
    collected: bool


def hash_nonce(nonce: str) -> str:
    """What the store keeps of a nonce: enough to check one, never enough to present one."""
    return _sha256()(nonce.encode("utf-8", "surrogateescape")).hexdigest()


_SHA256: list[Callable[[bytes], Any]] = []  # found once: a failed import is tried again each time


def _sha256() -> Callable[[bytes], Any]:
    """SHA-256, from CPython's own module where it has one: `hashlib` loads OpenSSL first
    (~4 ms of every `baton report`, which hashes one nonce). The same digest either way."""
    if _SHA256:
        return _SHA256[0]
    # lazy: `baton report` (tests/test_import_hygiene.py): no hashlib, no OpenSSL
    try:
        from _sha2 import sha256  # type: ignore[import-not-found]  # Python 3.12+
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found]  # Python 3.11
        except ImportError:
            from hashlib import sha256
    _SHA256.append(sha256)
    return sha256


def nonce_matches(nonce: str, stored_hash: str) -> bool:
    """Whether `nonce` is the one whose hash the store keeps (compared in constant time)."""
    # lazy: `baton report` (tests/test_import_hygiene.py): no hmac, no OpenSSL
    try:
        from _operator import _compare_digest as same  # what `hmac` offers, without OpenSSL
    except ImportError:
        from hmac import compare_digest as same  # type: ignore[no-redef]

    return bool(stored_hash) and same(hash_nonce(nonce), stored_hash)


def make_private(path: Path | str, mode: int) -> None:
    """chmod a file or folder of Baton's own to `mode` when it is ours to change."""
    try:
        found = os.stat(path)
        if found.st_uid == os.getuid() and found.st_mode & 0o777 != mode:
            os.chmod(path, mode)
    except OSError:  # gone, or not ours to change
        pass



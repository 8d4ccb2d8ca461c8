"""A plan's folded events, cached in the store and keyed by the last event the fold covers.

Folding a 10,000-task plan's ~76,000 events takes the better part of a second, and every
`baton status`, every plan edit and the conductor's start would pay it again. Events never
change once written (ids only grow, in commit order), so a fold up to event N stays right:
`folded()` starts from the cached fold and feeds only the newer events. A reader that had to
fold many saves what it folded, best effort (a read-only or busy store just skips it).

The cache lives in the `meta` table as JSON — data, never code (no pickle) — under a key
that includes a hash of the code that folds and stores (`views.py`, `events.py`, this
module), so a Baton that folds differently never reads an older one's fold. Standard library only.
"""

from __future__ import annotations

import _thread  # built in: `threading` would cost the status path a millisecond
import json
from pathlib import Path

from baton_tui.core import events as _events
from baton_tui.core import views as _views
from baton_tui.core.events import State
from baton_tui.core.views import Folder, PlanView, TaskView

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar

    T = TypeVar("T")

SAVE_AFTER = 500       # new events folded by a reader before it saves the fold
_FOLDER_PARTS = ("tasks", "plan", "placed")  # placed: rebuilt from the tasks
_STATES = {state.value: state for state in State}
_version: str | None = None


def version() -> str:
    """A hash of the folding code: a fold made by other code is never read back."""
    global _version
    if _version is None:
        _version = fingerprint([_views.__file__, _events.__file__, __file__])  # and this format
    return _version


def fingerprint(paths: list[str | None]) -> str:
    """A fingerprint of these files' bytes (CRC-32 and Adler-32 of each: telling versions of
    Baton's own code apart needs no cryptographic hash, and hashlib would load OpenSSL — a
    twentieth of a small plan's `baton status`)."""
    import zlib  # lazy: a small plan's `baton status` never needs it (bench_status)

    parts = []
    for path in paths:
        data = Path(path or "").read_bytes()
        parts.append(f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}")
    return "-".join(parts)


def _key(plan_id: int) -> str:
    return f"fold:{plan_id}"


def _defaults() -> dict[str, Any]:
    return vars(TaskView())


def dump(folder: Folder) -> str | None:
    """The fold as JSON text, or None when it holds something JSON cannot carry back.

    Each task is `[id, [field positions], [values]]`, for the fields that differ from a
    fresh view's: most of a view's fifty fields are still at their defaults.
    """
    defaults = _defaults()
    fields = list(defaults)
    rows = []
    for task_id, view in folder.tasks.items():
        values = vars(view)
        if values.keys() != defaults.keys():  # set outside __init__: fold afresh instead
            return None
        at, changed = [], []
        for i, name in enumerate(fields):
            value, default = values[name], defaults[name]
            if value != default or type(value) is not type(default):
                at.append(i)
                changed.append(value)
        rows.append([task_id, at, changed])
    try:
        return json.dumps({
            "version": version(), "last": folder.last_id, "fields": fields, "tasks": rows,
            "plan": vars(folder.plan),
            "folder": {k: v for k, v in vars(folder).items() if k not in _FOLDER_PARTS}},
            separators=(",", ":"))
    except (TypeError, ValueError):
        return None


def load(text: str) -> Folder | None:
    """The fold `dump` wrote, or None when it is another version's or unreadable."""
    try:
        data: dict[str, Any] = json.loads(text)
        defaults = _defaults()
        fields = data["fields"]
        if data.get("version") != version() or fields != list(defaults):
            return None
        fresh = [name for name, value in defaults.items() if isinstance(value, (list, dict))]
        name_of = fields.__getitem__
        new = object.__new__
        folder = Folder()
        folder.__dict__.update(data["folder"])
        tasks = folder.tasks
        for task_id, at, changed in data["tasks"]:
            values = defaults.copy()
            for name in fresh:  # no two views share a default list
                values[name] = type(defaults[name])()
            values.update(zip(map(name_of, at), changed))
            state = values["state"]
            values["state"] = _STATES.get(state, state)
            view = new(TaskView)
            view.__dict__ = values
            tasks[task_id] = view
        plan = new(PlanView)
        plan.__dict__ = data["plan"]
        folder.plan = plan
        folder.last_id = int(data["last"])
        folder.index_placed()
        return folder
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def cached(store: Any, plan_id: int) -> Folder | None:
    try:
        row = store.conn.execute("SELECT value FROM meta WHERE key = ?",
                                 (_key(plan_id),)).fetchone()
    except Exception:  # sqlite3.Error: an unreadable cache is no cache
        return None
    return load(row[0]) if row else None


def save(store: Any, plan_id: int, folder: Folder) -> bool:
    """Keep `folder` as the plan's cached fold (other plans' folds go). Best effort."""
    text = dump(folder)
    if text is None:
        return False
    return keep_meta(store, _key(plan_id), "fold:", text)


def keep_meta(store: Any, key: str, kind: str, text: str) -> bool:
    """Store `text` under `key` in `meta`, dropping the other keys starting with `kind` (other
    plans' caches), as a reader helping the next one: best effort, never waiting long."""
    try:
        conn = store._writable()
        if conn.in_transaction:  # inside the caller's own write: not the moment
            return False
        conn.execute("PRAGMA busy_timeout = 200")  # a reader never waits long to help
        try:
            with store.tx():
                conn.execute("DELETE FROM meta WHERE key LIKE ? AND key != ?",
                             (kind + "%", key))
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                             (key, text))
        finally:
            conn.execute("PRAGMA busy_timeout = 30000")
    except Exception:  # read-only, busy or gone: the next reader builds again
        return False
    return True


def folded(store: Any, plan_id: int, save_after: int = SAVE_AFTER) -> Folder:
    """The plan's views folded up to its latest event: the cached fold plus the events after
    it. Saves the result when it had to fold `save_after` events or more."""
    folder = cached(store, plan_id) or Folder()
    new = store.events(plan_id, after=folder.last_id)
    folder.feed(new)
    if len(new) >= save_after:
        save(store, plan_id, folder)
    return folder


_kept: dict[tuple[str, int], Folder] = {}  # (store, plan) → its views, fed as events come
_kept_lock = _thread.allocate_lock()


def reading(store: Any, plan_id: int, read: "Callable[[Folder], T]") -> "T":
    """`read` of the plan's views as of its latest event. The fold is kept in this process
    and fed only the events written since, under a lock (a conductor asks after every
    attempt, from several threads: a thousand-task fold is not read back from the store each
    time). `read` neither keeps nor changes the folder it is given."""
    key = (str(store.path), plan_id)
    with _kept_lock:
        folder = _kept.get(key)
        if folder is None:
            folder = _kept[key] = folded(store, plan_id)
        else:
            folder.feed(store.events(plan_id, after=folder.last_id))
        return read(folder)

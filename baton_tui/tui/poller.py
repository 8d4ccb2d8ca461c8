"""Background readers: the store poller and the log tail, both run as thread workers.

Nothing here touches widgets. Each loop opens its own store connection, reads, and
hands results to the UI through a `post` callable (`App.post_message`, thread-safe),
only when something changed — so the event loop never waits on SQLite or a file.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Callable

from baton_tui import api
from baton_tui.api import Snapshot

# A full rebuild at least this often: running tasks' elapsed time, a conductor that died.
TICK = 1.0
# What running tasks change many times a second: what their agents last said, their tokens
# and cost, and their time so far (read with the clock). A board that changes only these is
# shown at most once a TICK (the detail view streams every line): eight agents talking would
# otherwise redraw every card four times a second, and a key pressed meanwhile waits for
# those frames.
CHATTER = frozenset({"progress", "tokens", "cost", "wall"})
# Of the board, what follows its tasks (the budget's spend is read with the clock too; a budget
# set by the person wakes the poller, and a woken read is posted at once).
BOARD_CHATTER = frozenset({"tasks", "rows", "by_id", "below", "summary", "budget"})


def changed_tasks(old: Snapshot | None, new: Snapshot) -> frozenset[int] | None:
    """Ids of the tasks whose rows differ between two boards; None when the plan or its list
    of tasks changed (every card is new). Run here, off the UI loop: O(tasks) compares."""
    if old is None or old.plan_id != new.plan_id or len(old.rows) != len(new.rows):
        return None
    changed = []
    for before, after in zip(old.rows, new.rows):
        if before is after:
            continue
        if before.id != after.id:
            return None
        if before != after:
            changed.append(after.id)
    return frozenset(changed)


def only_chatter(old: Snapshot, new: Snapshot, changed: frozenset[int] | None) -> bool:
    """Whether `new` differs from `old` in nothing but its tasks' CHATTER (`changed` names
    the tasks whose rows differ, as `changed_tasks` gives it)."""
    if not changed:  # None: the list changed; empty: the plan itself did
        return False
    for name, before, after in zip(old._fields, old, new):
        if name not in BOARD_CHATTER and before != after:
            return False
    for task_id in changed:
        before, after = old.task(task_id), new.task(task_id)
        if before is None or after is None or any(
                b != a for name, b, a in zip(before._fields, before, after)
                if name not in CHATTER):
            return False
    return True


KEY_FIELDS = ("state", "blocked_by", "player", "mode")  # of a task, what its keys depend on


def keys_changed(old: Snapshot, new: Snapshot, changed: frozenset[int] | None) -> bool:
    """Whether what the keys may do (besides the cursor) differs between two boards;
    `changed` names the tasks whose rows differ (None: any may)."""
    plan = (old.plan_id, old.approved, old.conductor_pid, len(old.tasks)) != (
        new.plan_id, new.approved, new.conductor_pid, len(new.tasks))
    if plan or changed is None:
        return plan or [tuple(getattr(t, f) for f in KEY_FIELDS) for t in old.tasks] != [
            tuple(getattr(t, f) for f in KEY_FIELDS) for t in new.tasks]
    return any(tuple(getattr(old.task(i), f) for f in KEY_FIELDS)
               != tuple(getattr(new.task(i), f) for f in KEY_FIELDS) for i in changed)


def first_board(store_path: Path, reader: Any, now: float) -> tuple[Snapshot, int]:
    """The board to paint first, read at once (the app shows the plan in its first frame,
    never a "no plan yet" that is not true), and the newest event id it covers."""
    store = api.store_at(store_path)
    try:
        newest = api.last_event_id(store)
        return reader.read(store, now=now), newest
    finally:
        store.close()


def poll_store(store_path: Path, clock: Callable[[], float],
               post: Callable[[Snapshot, Snapshot | None, frozenset[int] | None], object],
               cancelled: Callable[[], bool], wake: threading.Event,
               interval: float = 0.25, reader: Any = None,
               after: tuple[Snapshot, int] | None = None) -> None:
    """Post a new snapshot whenever the store's events (or the clock, while running) change it,
    with the board it follows and the ids of the tasks that changed since (`changed_tasks`).
    `reader` and `after` continue from `first_board`'s read."""
    store = api.store_at(store_path)
    reader = reader or api.snapshot_reader()
    last_board: Snapshot | None = after[0] if after else None
    last_event = after[1] if after else -1
    last_full = time.monotonic() if after else 0.0
    last_post = last_full
    try:
        while not cancelled():
            newest = api.last_event_id(store)
            mono = time.monotonic()
            if newest != last_event or mono - last_full >= TICK or wake.is_set():
                woken = wake.is_set()
                wake.clear()
                last_event, last_full = newest, mono
                board = reader.read(store, now=clock())
                if board is not last_board and board != last_board:
                    changed = changed_tasks(last_board, board)
                    if (woken or last_board is None or mono - last_post >= TICK
                            or not only_chatter(last_board, board, changed)):
                        post(board, last_board, changed)
                        last_board, last_post = board, mono
            wake.wait(interval)
    finally:
        store.close()


def tail_log(store_path: Path, plan_id: int, task_id: int,
             post: Callable[[list[str], bool, list], object],
             cancelled: Callable[[], bool], batch: float = 0.08, first_bytes: int = 64_000,
             max_batch_lines: int = 2_000, player: str | None = None) -> None:
    """Follow a task's newest attempt log, posting lines in batches of ~`batch` seconds.

    `post(lines, reset, steps)` — `reset` is True when a new attempt began (clear the view);
    `steps` are the readable steps of `player` read from the lines, here, off the UI loop.
    Only the tail of a long file is read at first; the whole log stays on disk.
    """
    reader = api.step_reader(player) if player else None
    path: str | None = None
    prints = None
    offset = 0
    pending = b""
    checked = 0.0
    while not cancelled():
        now = time.monotonic()
        if now - checked > 1.0:
            checked = now
            newest, wrote, found = api.latest_output(store_path, plan_id, task_id)
            if newest != path and newest:
                path, pending, prints = newest, b"", found
                offset = max(0, api.log_size(path) - first_bytes)
                name = wrote or player
                reader = api.step_reader(name) if name else None
                post([], True, [])
        if path:  # by the agent's own offset: a log whose middle was cut is followed exactly
            data, offset, _cut = api.read_log(path, offset, 4_000_000)
            if data:
                chunk = pending + data
                *lines, pending = chunk.split(b"\n")
                if lines:
                    text = [api.output_text(ln.decode("utf-8", "replace").rstrip("\r"), prints)
                            for ln in lines]
                    steps = [s for ln in text for s in reader.feed(ln)] if reader else []
                    post(text[-max_batch_lines:], False, steps[-max_batch_lines:])
        time.sleep(batch)

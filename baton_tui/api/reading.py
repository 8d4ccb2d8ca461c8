"""Opening a repository and reading its state: the store, the status snapshot, logs, a task's
detail. Standard library only on the status path (`baton status` answers at once)."""

from __future__ import annotations

from pathlib import Path

from baton_tui.core.errors import BatonError
from baton_tui.core.snapshot import Snapshot, empty
from baton_tui.paths import find_repo, personal_config_path
from baton_tui.store.db import Store

TYPE_CHECKING = False  # `typing` stays unimported on the status path (it costs 2.5 ms)
if TYPE_CHECKING:
    from typing import Any

    from baton_tui.core.events import Event
    from baton_tui.players.steps import StepReader
    from baton_tui.run.detail import DetailData
    from baton_tui.store.db import AttemptRow
    from baton_tui.store.snapshot import Reader
    from baton_tui.workspace import Workspace


def open_workspace(start: Path | str | None = None) -> "Workspace":
    """The repository containing `start` (default: the working directory)."""
    from baton_tui.workspace import Workspace  # lazy: `baton status` and `baton log` never need it

    return Workspace(start)


def state_dir(start: Path | str | None = None) -> Path:
    """Where Baton keeps the state of the folder holding `start` (default: the working
    directory), found without opening anything — before a command sets itself up."""
    return find_repo(start).state_dir


def folder_notice(start: Path | str | None = None) -> str | None:
    """What folder mode means, in one line, for a folder outside git where Baton has not made
    its state yet; None anywhere else. Every front end says it once, as it starts working
    there (the CLI when a command makes the state, the app as it opens)."""
    paths = find_repo(start)
    if paths.is_git or paths.state_dir.exists():
        return None
    root = paths.root
    return (f"{root} is not in a git repository, so Baton works here in folder mode: its state "
            f"is in {root}/.baton/, tasks run in this folder itself one at a time, with no "
            "branches and nothing to merge at handoff (`git init` first for worktrees and "
            "branches)")


def open_store(create: bool = False) -> "Store | None":
    """This repository's store for reading, or None when Baton never ran here."""
    paths = find_repo()
    if not create and (not paths.store_path.exists() or not paths.store_path.stat().st_size):
        return None  # (an empty file: a first write that had not begun, or cut to nothing)
    try:
        store = Store(paths.store_path, create=create)
        store.check_readable()
        return store
    except BatonError:  # damaged (`store.rows.Damaged`): its own line says what to do
        raise
    except Exception as exc:  # sqlite3.DatabaseError and friends
        raise BatonError(f"{paths.store_path}: cannot read Baton's store: {exc}") from None


def sibling(ws: "Workspace") -> "Workspace":
    """The same repository and settings with a store connection of its own (for a thread)."""
    return ws.sibling()


def check_config(ws: "Workspace") -> None:
    """Validate the whole configuration now: a broken one raises its one-line BatonError
    (the app reads its keys alone before its first frame, and calls this right after)."""
    ws.loaded


def store_at(path: Path | str) -> "Store":
    """A connection of its own (SQLite connections belong to the thread that opened them)."""
    return Store(path)


# status -------------------------------------------------------------------------------------
def snapshot(store: "Store", now: float | None = None) -> Snapshot:
    """The current plan's status snapshot (standard library only)."""
    # lazy: `baton log`, and `baton status` before any plan, never need it
    from baton_tui.store import snapshot as snapshots

    return snapshots.read(store, now)


def snapshot_json(store: "Store", now: float | None = None) -> str:
    """`status_json(snapshot(store, now))` — the same text — writing again only the tasks that
    changed since a big plan's tasks were kept (standard library only)."""
    # lazy: `baton log`, and `baton status` before any plan, never need it
    from baton_tui.store import snapshot as snapshots

    return snapshots.read_json(store, now)


def live_conductor(store: "Store") -> dict[str, Any] | None:
    """The conductor running now (pid, started, plan), or None."""
    # lazy: `baton log`, and `baton status` before any plan, never need it
    from baton_tui.store.snapshot import conductor_info

    return conductor_info(store)


def snapshot_reader() -> "Reader":
    """A reader that folds only new events on each `read(store, now)` (for pollers)."""
    # lazy: `baton log`, and `baton status` before any plan, never need it
    from baton_tui.store.snapshot import Reader

    return Reader()


def snapshot_empty() -> Snapshot:
    return empty()


def terminal_text(text: str, prints: "dict[str, Any] | None" = None) -> str:
    """Agent text as a terminal may show it: secrets redacted (the configured ones too, read
    once from this repository's and the person's config files, and those of the environment
    the agent ran with, by the `prints` its attempt recorded), control characters escaped."""
    from baton_tui import redact  # lazy: `status --json` and `log --json` never need it

    global _configured_read
    if not _configured_read:
        redact.remember_configured([find_repo().project_config, personal_config_path()])
        _configured_read = True
    return redact.escape_controls(redact.redact_known(redact.redact(text), prints))


def output_text(line: str, prints: "dict[str, Any] | None") -> str:
    """A line of an attempt's raw output with the secrets of the environment it ran with
    redacted (`prints`, from its attempt's record), for a view that escapes it itself."""
    from baton_tui import redact  # lazy: only the app's output view needs it

    return redact.redact_known(redact.redact(line), prints)


_configured_read = False


def fmt_duration(seconds: float) -> str:
    """A duration as every front end writes it: `42s`, `3m07s`, `2h05m`."""
    from baton_tui.store.render import fmt_secs  # lazy: `baton log` and `baton run` never need it

    return fmt_secs(seconds)


def status_text(status: dict[str, Any]) -> str:
    """`baton status` as a person reads it, from the snapshot's JSON."""
    from baton_tui.store.render import render_status  # lazy: `baton log` and `baton run` never need it

    return render_status(status)


def summary_lines(summary: dict[str, Any] | None) -> list[str]:
    """A run's totals and each player's use, as `baton status` ends with them."""
    from baton_tui.store.render import summary_lines as lines  # lazy, as status_text

    return lines(summary)


def status_json(status: "dict[str, Any] | Snapshot") -> str:
    """`baton status --json`'s text: one task to a line. From a `Snapshot` it is the same
    text as from its `as_json()`, written faster (10,000 tasks are many dictionaries)."""
    from baton_tui.store import render  # lazy: `baton log` and `baton run` never need it

    if isinstance(status, Snapshot):
        return render.snapshot_json(status)
    return render.status_json(status)


def events(store: "Store", plan_id: int | None = None, after: int = 0) -> "list[Event]":
    return store.events(plan_id, after=after)


def last_event_id(store: "Store") -> int:
    return store.last_event_id()


def attempts(store: "Store", plan_id: int, task_id: int) -> "list[AttemptRow]":
    return store.attempts(plan_id, task_id)


def attempt(store: "Store", attempt_id: int) -> "AttemptRow | None":
    return store.attempt(attempt_id)


def latest_log_path(store_path: Path | str, plan_id: int, task_id: int) -> str | None:
    """The newest attempt's log file for a task (its own short-lived connection)."""
    with store_at(store_path) as store:
        latest = store.latest_attempt(plan_id, task_id)
    return latest.log_path if latest else None


def latest_output(store_path: Path | str, plan_id: int, task_id: int
                  ) -> tuple[str | None, str | None, "dict[str, Any] | None"]:
    """The newest attempt's log file, the player that wrote it (a reassigned task's
    earlier attempts were another player's) and its secrets' fingerprints."""
    with store_at(store_path) as store:
        latest = store.latest_attempt(plan_id, task_id)
    if latest is None:
        return None, None, None
    return latest.log_path, latest.player, (latest.spec or {}).get("secret_prints")


def read_log(path: str | None, offset: int, limit: int = 1 << 20) -> tuple[bytes, int, int]:
    """Up to `limit` bytes of an attempt's output from `offset` (bytes the agent printed):
    (data, the offset after it, bytes cut from the log before it that were never read).
    A log keeps its head and tail only; nothing reads a whole one into memory."""
    from baton_tui.runners import logcap  # lazy: `baton status`, `log` and `run` never need it

    return logcap.read_from(path, offset, limit)


def log_size(path: str | None) -> int:
    """How many bytes an attempt's agent printed so far (cut ones included)."""
    from baton_tui.runners import logcap  # lazy: `baton status`, `log` and `run` never need it

    return logcap.logical_size(path)


def step_reader(player: str) -> "StepReader":
    """A reader turning `player`'s raw output lines into readable steps (`feed(line)`)."""
    from baton_tui.players.builtin import player_named  # lazy: `baton status` and `baton log` never need it

    return player_named(player).step_reader()


def task_detail(store_path: Path | str, root: Path, plan_id: int, task_id: int,
                base: str | None, branch: str | None) -> "DetailData":
    """Report, check output and diff of one task (runs git: call it off the UI loop)."""
    from baton_tui.run.detail import load_detail  # lazy: `baton status`, `log` and `run` never need it

    return load_detail(Path(store_path), root, plan_id, task_id, base, branch)

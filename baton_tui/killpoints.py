"""Kill points: where the crash tests kill the conductor, exactly, and the race tests hold it.

A crash test must kill Baton inside a narrow window (while `git worktree add` runs, while
Baton holds a worktree's `index.lock`, between spawning an agent and recording it) on every
run, not when a sleep happens to line up. The conductor calls `reached(point)` at each such
window; nothing happens unless it was started with

    BATON_KILL_AT=POINT[@N][:group][:when=FILE]

in its environment, in which case the N-th time (default: the first) it reaches POINT it
SIGKILLs itself — or, with `:group`, its whole process group (the git and set-up processes
it started die with it; the agents' shims, each in a session of its own, live on). With
`:when=FILE` it first waits (up to a minute) for FILE to exist: a wrapped git or set-up
command creates it once it is half way. With `:hold` (and `:when=FILE`) it does not die: it
creates FILE.held and waits there (up to a minute) for FILE, so a race test can act while the
conductor stands inside a window. `arm()` reads the variable once and removes it from the
environment, so nothing the conductor starts inherits it. The points:

    worktree-add   `git worktree add` is running (its folder half made)
    setup          the `[worktree] setup` command is running
    spawned        an agent's shim runs; `task.started` is not recorded yet
    commit         Baton holds the worktree's index.lock while committing the agent's work
    land           `task.done` is recorded; the integration branch has not moved yet
    landed         the integration branch moved; `task.landed` is not recorded yet
    event          an event was just appended to the store (`event@N`: the N-th)
    leaving        the run's outcome is decided; the conductor is still recorded as running
    gone           its record is cleared and nothing came in since; it still holds the lock
    collected      a remote attempt's work is home and its events are recorded; the finisher
                   has not run yet
    merge-files    `handoff merge` wrote a merge's files under the checkout's index.lock; the
                   branch has not moved yet (armed by `handoff merge` itself)
    merge-moved    `handoff merge` moved the branch; the new index is still the lock
"""

from __future__ import annotations

import os
import time

VARIABLE = "BATON_KILL_AT"
POINTS = ("worktree-add", "setup", "spawned", "commit", "land", "landed", "event", "leaving",
          "gone", "collected", "merge-files", "merge-moved")

_armed: tuple[str, int, bool, str, bool] | None = None
_count = 0
_lock = None  # made when armed: `baton status` never pays for threading


def arm() -> None:
    """Read (and remove) BATON_KILL_AT; called once by the conductor as it starts."""
    global _armed, _count, _lock
    import threading  # lazy: `baton status` and `baton report` load this module, never armed

    text = os.environ.pop(VARIABLE, "")
    if not text:
        return
    spec, *options = text.split(":")
    point, _, nth = spec.partition("@")
    when = next((o[5:] for o in options if o.startswith("when=")), "")
    hold = "hold" in options
    if point not in POINTS or (nth and not nth.isdigit()) or (hold and not when) \
            or any(o not in ("group", "hold") and not o.startswith("when=") for o in options):
        raise ValueError(f"{VARIABLE}={text!r}: want POINT[@N][:group][:when=FILE] or "
                         "POINT[@N]:hold:when=FILE, POINT one of " + ", ".join(POINTS))
    _armed = (point, int(nth or 1), "group" in options, when, hold)
    _count, _lock = 0, threading.Lock()


def reached(point: str) -> None:
    """Die (or hold) here when armed for this point and this is the N-th time; else nothing."""
    global _count
    if _armed is None or _armed[0] != point or _lock is None:
        return
    import signal  # lazy: `baton status` and `baton report` load this module, never armed

    with _lock:
        _count += 1
        if _count != _armed[1]:
            return
    if _armed[4]:
        open(_armed[3] + ".held", "w").close()
    if _armed[3]:
        deadline = time.monotonic() + 60
        while not os.path.exists(_armed[3]) and time.monotonic() < deadline:
            time.sleep(0.01)
    if _armed[4]:
        return
    if _armed[2]:
        os.killpg(os.getpgid(0), signal.SIGKILL)
    os.kill(os.getpid(), signal.SIGKILL)

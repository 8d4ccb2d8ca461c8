"""Refreshed copies of an index, so that git does not hash every racily clean file again.

git compares file times in whole seconds: a file written in the second its index entry was
recorded is "racily clean", and git reads and hashes it again at every look until an index
is written a second later. A worktree just checked out is all such files, and so is a
checkout just committed in: a task's commit (`add -A`) hashed every file of its new
worktree on the way to its dependents' start (1,900 files: 45-65 ms quiet, 200 ms under
load), and every look at the person's checkout (`git status`, which Baton runs without
writing the index back) hashed all of theirs.

So a copy of the index is refreshed beside it (`refresh`, a second or more after the
checkout) and named for the version of the index it was made from. The index itself is never
written here: an agent, or the person, may be using it. A commit starts from the copy
(`claim`), a look reads through it (`current`), a worktree no agent has been in takes it as
its index (`install`) — each only while the index is still the version the copy was made
from (git replaces an index, never edits it in place: a new inode and new times). What the
copy holds is what `git update-index --refresh` would write: the same entries, their stat
data checked against the files, and racily clean ones still marked so.
"""

from __future__ import annotations

import os
import shutil
import struct
import threading
import uuid
from pathlib import Path

from baton_tui import procs

from . import index_file
from .git import GitError, git_dir, git_dirs, run_git

__all__ = ["RACY_WORTH", "SETTLE", "index_of", "big_enough", "racy_entries", "refresh",
           "refresh_later", "claim", "install", "current"]

#: Racily clean entries below this many are hashed where they are met (a process is dearer).
RACY_WORTH = 64
#: Seconds to wait after a checkout before refreshing a copy of its index: git compares
#: file times in whole seconds, so any sooner its files are as racily clean as before.
SETTLE = 1.1
_FRESH = "index.baton-fresh-"


def index_of(worktree: str | os.PathLike) -> Path:
    """The index file of the worktree (or checkout) at `worktree`."""
    dirs = git_dirs(worktree)
    return (dirs[0] if dirs is not None else git_dir(worktree)) / "index"


def big_enough(worktree: str | os.PathLike) -> bool:
    """Whether the index of `worktree` holds enough entries for a refresh ever to be worth
    its process (its header says how many: nothing else is read)."""
    try:
        with open(index_of(worktree), "rb") as fh:
            head = fh.read(12)
    except OSError:
        return False
    return len(head) == 12 and head[:4] == b"DIRC" \
        and struct.unpack_from(">I", head, 8)[0] >= RACY_WORTH


def racy_entries(index: Path) -> int | None:
    """How many entries of a version 2 or 3 index git must hash again at its next look:
    recorded in the second the index was written or later, or smudged by git for that
    reason (size 0). None when the index cannot be read so."""
    try:
        data = index.read_bytes()
        written = int(os.stat(index).st_mtime)
    except OSError:
        return None
    racy = 0
    try:
        for fields, _flags, _path, _offset in index_file.stat_entries(data):
            if fields is not None and (
                    fields[2] >= written or (fields[9] == 0 and fields[6] & 0o170000 == 0o100000)):
                racy += 1
    except (struct.error, ValueError):
        return None
    return racy


def refresh(worktree: str | os.PathLike) -> bool:
    """Refresh a copy of the index of `worktree`, when enough of its entries are racily
    clean and no copy of it is there yet; True when a copy was made. Gives up while anyone
    holds the index's lock."""
    real = index_of(worktree)
    stamp = index_file.stamp(real)
    if stamp is None or real.with_name("index.lock").exists() \
            or real.with_name(_FRESH + stamp).exists():  # refreshed already
        return False
    racy = racy_entries(real)
    if racy is None or racy < RACY_WORTH:
        return False
    tmp = real.with_name(f"index.baton-refresh-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        shutil.copyfile(real, tmp)
        shutil.copystat(real, tmp)  # racy entries are judged by the index's own time
        if index_file.stamp(real) != stamp:  # replaced while it was copied
            return False
        try:
            proc = run_git(worktree, "update-index", "-q", "--refresh",
                           env={"GIT_INDEX_FILE": str(tmp), "GIT_OPTIONAL_LOCKS": "0"})
        except GitError:
            return False
        if proc.returncode != 0:
            return False
        for old in real.parent.glob(_FRESH + "*"):
            old.unlink(missing_ok=True)
        _drop_left(real.parent)
        os.replace(tmp, real.with_name(_FRESH + stamp))
        return True
    finally:
        tmp.unlink(missing_ok=True)


_pending: set[tuple[str, str | None]] = set()  # (folder, index version) waiting on a timer
_pending_lock = threading.Lock()


def refresh_later(worktree: str | os.PathLike) -> threading.Timer | None:
    """`refresh` a copy of the index of `worktree` once its files are `SETTLE` seconds old,
    on a timer thread — one at a time per version of the index (None when one waits for it
    already; an index replaced since gets its own). Nothing is lost if it fails: the next
    commit or look reads the index itself, as it would have."""
    key = (str(worktree), index_file.stamp(index_of(worktree)))
    with _pending_lock:
        if key in _pending:
            return None
        _pending.add(key)

    def work() -> None:
        try:
            refresh(worktree)
        except (GitError, OSError):
            pass
        finally:
            with _pending_lock:
                _pending.discard(key)

    timer = threading.Timer(SETTLE, work)
    timer.daemon = True
    timer.name = "baton-index-refresh"
    timer.start()
    return timer


def _drop_left(folder: Path) -> None:
    """Copies being refreshed by a process that was killed meanwhile."""
    for left in folder.glob("index.baton-refresh-*"):
        pid = left.name.split("-")[2]
        if pid.isdigit() and not procs.alive(int(pid)):
            left.unlink(missing_ok=True)


def _copies(real: Path) -> list[Path]:
    try:
        return list(real.parent.glob(_FRESH + "*"))
    except OSError:
        return []


def current(worktree: str | os.PathLike) -> Path | None:
    """The refreshed copy of the index as it is now, to read through (not to write); copies
    of an index since replaced are dropped."""
    real = index_of(worktree)
    stamp = index_file.stamp(real)
    found = None
    for copy in _copies(real):
        if stamp is not None and copy.name == _FRESH + stamp:
            found = copy
        else:
            copy.unlink(missing_ok=True)
    return found


def claim(real: Path, to: Path) -> bool:
    """Move the refreshed copy of the index `real` as it is now to `to` (a commit's private
    index, or `real` itself); copies of an index since replaced are dropped."""
    stamp = index_file.stamp(real)
    claimed = False
    for copy in _copies(real):
        if not claimed and stamp is not None and copy.name == _FRESH + stamp:
            try:
                os.replace(copy, to)
                claimed = True
                continue
            except OSError:
                pass
        copy.unlink(missing_ok=True)
    return claimed


def install(worktree: str | os.PathLike) -> bool:
    """Make the refreshed copy a worktree's index — only for one no agent has been in (made
    ahead of its task): its start's `reset --keep` then hashes nothing again."""
    real = index_of(worktree)
    return claim(real, real)

"""The refs an agent must not move: the run's integration branch, the person's branch and
the branches of the tasks that landed or wait.

Refs are shared by every worktree of a repository, so an agent running git in its own
worktree can move any branch (`git update-ref`, `git branch -f`, `git update-ref -d`).
Four kinds matter to a run: the integration branch, where tasks land and dependents are
cut from; the person's branch, where the work is merged at handoff; each landed task's
branch, which handoff merges home by name; and each waiting task's branch, which lands as
found once it goes on. Baton checks all of them.

- The integration branch must be where Baton's last landing left it (the approved commit
  before any landing): checked before a worktree is cut from it, before each landing and
  after each attempt. Baton's own landings move it under `LOCK`, and note the new tip.
- The person's branch (the one recorded at approval, and the one the checkout has out) is
  recorded before each attempt and compared after it. A move the checkout's own HEAD log
  holds since then (a commit, reset or pull in the checkout) is the person's, and stands.
- A landed task's branch must hold the commit that landed (`task.landed`'s `tip`); a
  waiting one (failed, parked, paused, held at a checkpoint, done before landing) the
  commit its event recorded (`tip`), until it starts again. A move its own worktree's HEAD
  log records since (`log`: the person's commit there, Baton's own refresh) stands. Checked
  after each attempt and before each landing pass, at a `stat` per branch
  (`refs.read_refs`) and per waiting task's HEAD log.

A move is put back with a compare-and-swap (`update-ref REF EXPECTED FOUND`: never over a
change made since it was read) and the attempts that ran meanwhile are flagged, naming the
ref — several attempts running at once cannot be told apart, so each of them is. No other
ref is watched: the person deleting or moving their own other branches is their business
(a running task's branch is its own).
"""

from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton_tui.core.events import EventKind, State
from baton_tui.core.slug import integration_branch
from baton_tui.gitops import git, refs
from baton_tui.gitops.onbranch import head_ref
from baton_tui.paths import write_private
from baton_tui.runners import readonly
from baton_tui.store import foldcache

if TYPE_CHECKING:
    from baton_tui.store.db import AttemptRow, PlanRow
    from baton_tui.workspace import Workspace

RECORD = "refs.json"
KEPT = 200  # moves remembered for the attempts still running when one was found
# Moves of the integration branch (landings, repairs, checks) happen one at a time.
LOCK = threading.RLock()


@dataclass(frozen=True)
class Move:
    """A watched ref found moved: where it should be, where it was, and whether it is back."""

    ref: str
    expected: str
    found: str | None
    restored: bool
    at: float

    def said(self) -> str:
        short = self.ref.removeprefix("refs/heads/")
        how = f"moved to {self.found[:12]}" if self.found else "deleted"
        back = (f"put back at {self.expected[:12]}" if self.restored
                else "could not be put back (it moved again)")
        return f"{short} was {how} while it ran: {back}"


_expected: dict[tuple[str, int], str] = {}  # (store, plan) → the integration tip Baton set
_found: list[Move] = []


def landed(ws: "Workspace", plan: "PlanRow", commit: str) -> None:
    """Baton moved the integration branch to `commit` (a landing or a repair, under LOCK)."""
    _expected[(str(ws.paths.store_path), plan.id)] = commit


def _note(move: Move) -> Move:
    _found.append(move)
    del _found[:-KEPT]
    return move


def _put_back(ws: "Workspace", ref: str, expected: str, found: str | None) -> Move:
    """`ref` back at `expected`, only if it still holds `found` (compare-and-swap)."""
    proc = git.run_git(ws.root, *git.NO_HOOKS, "update-ref", "-m", "baton: put back a ref "
                       "an agent moved", ref, expected, found or "")
    return _note(Move(ref, expected, found, proc.returncode == 0, time.time()))


def _store_tip(ws: "Workspace", plan: "PlanRow", found: str | None) -> str | None:
    """Where the store says the integration branch is: its last landing, or the approved
    commit. Landings whose record a crash cut off (one pass of them: merges made by Baton,
    each of the one before and a finished task's branch) are adopted."""
    folder = foldcache.folded(ws.store, plan.id)
    expected = folder.plan.landed_tip or plan.base_commit
    if found and expected and found != expected:
        done = {f"refs/heads/{view.branch}" for view in folder.tasks.values()
                if view.state == State.DONE and view.branch}
        if done and _landings_of(ws, expected, found, set(refs.resolve(ws.root, *sorted(done)))):
            expected = found
    return expected


def _landings_of(ws: "Workspace", expected: str, found: str, tips: set[str | None]) -> bool:
    """True when `found` is `expected` with merges on it, one after another, each of a
    finished task's branch (at most one per task): what one landing pass leaves."""
    proc = git.run_git(ws.root, "rev-list", "--first-parent", "--parents",
                       f"--max-count={len(tips) + 1}", found, f"^{expected}", "--")
    if proc.returncode != 0:
        return False
    below, landed = expected, set[str | None]()
    for line in reversed(proc.stdout.splitlines()):
        commit, *parents = line.split()
        if len(parents) != 2 or parents[0] != below or parents[1] not in tips - landed:
            return False
        below = commit
        landed.add(parents[1])
    return below == found


def check_integration(ws: "Workspace", plan: "PlanRow") -> str | None:
    """The integration tip Baton expects, read under LOCK (so never halfway through a
    landing): as found when nothing moved it; else it is put back there (compare-and-swap),
    the repair recorded and the move kept for the attempts that ran meanwhile. None when it
    was deleted (`integration.tip` makes it again from the record)."""
    key = (str(ws.paths.store_path), plan.id)
    ref = f"refs/heads/{integration_branch(plan.slug)}"
    expected = _expected.get(key)
    if expected is not None and refs.read_ref(ws.root, ref) == expected:
        # As Baton's last landing left it: nothing to repair, so no wait for LOCK (a start
        # reads the tip; it must not queue behind a landing or another attempt's check).
        # A landing under way has either not moved it yet (this tip is the one before it,
        # as good a base as any) or moved it before noting it: then they differ, and the
        # look below waits for the landing to finish.
        return expected
    with LOCK:
        found = refs.read_ref(ws.root, ref)  # again: a landing may have moved it since
        if found is None:
            return None
        expected = _expected.get(key)
        if expected is None or expected != found:
            expected = _store_tip(ws, plan, found)
        if expected is None:
            return found
        _expected[key] = expected
        if found == expected:
            return expected
        move = _put_back(ws, ref, expected, found)
        ws.store.append(plan.id, None, EventKind.RUN_REPAIRED, {
            "what": "ref", "ref": ref, "commit": expected, "detail": move.said()})
        return expected if move.restored else refs.read_ref(ws.root, ref)


@dataclass(frozen=True)
class Hold:
    """A task's branch held at `tip`: landed there, or waiting there (`log` set: the size of
    its worktree's HEAD log when the tip was recorded, in `workdir`)."""

    tip: str
    workdir: str | None = None
    log: int | None = None


def _holds(ws: "Workspace", plan: "PlanRow") -> dict[str, Hold]:
    """Each held task's branch (landed and not yet merged, or waiting: failed, parked, paused,
    held at a checkpoint, done before landing) and where it must be. The plan's fold is read
    once per process, then fed only the events written since (a thousand-task fold is not
    read back from the store after every attempt)."""
    return foldcache.reading(ws.store, plan.id, lambda folder: {
        f"refs/heads/{view.branch}": Hold(view.must_hold, view.workdir, view.must_hold_log)
        for _, view in folder.placed_views() if view.must_hold and view.branch})


def waiting_tip(ws: "Workspace", branch: str | None, workdir: str | None) -> dict[str, object]:
    """What a waiting task's event records (`tip`, `log`): its branch's commit now, and how
    long its worktree's HEAD log is — moves recorded there later are made in its worktree
    (the person's commit, Baton's own), and stand."""
    if not ws.paths.is_git or not branch:
        return {}
    tip = refs.read_ref(ws.root, f"refs/heads/{branch}")
    if tip is None:
        return {}
    found = _log_size(ws, workdir)
    return {"tip": tip, "log": found[1].st_size if found else 0}  # 0: no move recorded yet


_LOGS: dict[str, Path | None] = {}  # workdir → its HEAD log, as its `.git` file names it


def _worktree_log(ws: "Workspace", workdir: str | None, again: bool = False) -> Path | None:
    """The HEAD log of the linked worktree at `workdir` (what is done in it appends there),
    from its `.git` file: read once, and `again` when the log it named is gone (a worktree
    removed and made again). Only a folder of git's own `worktrees/` counts: a `.git` an
    agent pointed elsewhere names a log anyone may write."""
    if not workdir:
        return None
    if again or workdir not in _LOGS:
        if len(_LOGS) > 100_000:
            _LOGS.clear()
        admin = readonly.admin_dir(Path(workdir))
        common = ws.paths.git_common_dir
        ours = admin is not None and common is not None \
            and admin.parent == (common / "worktrees").resolve()
        _LOGS[workdir] = admin / "logs" / "HEAD" if admin and ours else None
    return _LOGS[workdir]


def _log_size(ws: "Workspace", workdir: str | None) -> tuple[Path, os.stat_result] | None:
    """The worktree's HEAD log and its `stat` (None: no log there yet)."""
    for again in (False, True):
        path = _worktree_log(ws, workdir, again)
        try:
            return (path, os.stat(path)) if path else None
        except OSError:
            continue
    return None


def _moves_since(path: Path, since: int) -> list[tuple[str, str, str]]:
    """The HEAD log's lines after byte `since`: (old, new, message)."""
    try:
        with open(path, "rb") as fh:
            fh.seek(since)
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return []
    moves = []
    for line in text.splitlines():
        head, _, message = line.partition("\t")
        fields = head.split(" ", 2)  # old, new, who and when: a line git wrote has all three
        if len(fields) > 2:
            moves.append((fields[0], fields[1], message))
    return moves


_CHAINS: dict[tuple[str, str, int, int, int], str] = {}  # a log as read → where it leaves


def _standing(ws: "Workspace", ref: str, hold: Hold) -> str:
    """Where a held branch must be: a landed one at its tip; a waiting one where the moves
    its worktree's HEAD log records since its tip was recorded leave it, while HEAD is on it
    there (the person's commits and resets in that worktree, Baton's own refresh). Inside
    the agents' read-only view a sibling's `worktrees/<name>/` is read-only: no agent can
    write that log. A `stat` of the log when it did not grow; read only when it changed."""
    found = _log_size(ws, hold.workdir) if hold.log is not None else None
    if found is None or hold.log is None or found[1].st_size <= hold.log:
        return hold.tip
    path, st = found
    key = (ref, str(path), hold.log, st.st_size, st.st_mtime_ns)
    if key not in _CHAINS:
        name, now, on = ref.removeprefix("refs/heads/"), hold.tip, True
        for old, new, message in _moves_since(path, hold.log):
            if message.startswith("checkout: moving from "):  # HEAD onto another branch, or back
                on = message.rpartition(" to ")[2] == name
            elif on and old == now:
                now = new
        if len(_CHAINS) > 10_000:
            _CHAINS.clear()
        _CHAINS[key] = now
    return _CHAINS[key]


def hold_branches(ws: "Workspace", plan: "PlanRow") -> list[Move]:
    """Landed and waiting tasks' branches put back where they must be (compare-and-swap; a
    deleted one made again), each repair recorded and kept for the attempts that ran
    meanwhile. A waiting task's branch moved in its own worktree (the person's commit there,
    Baton's own) stands, and is held there. A `stat` per branch (and per waiting task's
    HEAD log) when nothing moved. Under LOCK: Baton's landings record their tips before
    letting it go."""
    if not ws.paths.is_git:
        return []
    with LOCK:
        holds = _holds(ws, plan)
        if not holds:
            return []
        moves = []
        for ref, now in refs.read_refs(ws.root, sorted(holds)).items():
            expected = _standing(ws, ref, holds[ref])
            if now == expected:
                continue
            move = _put_back(ws, ref, expected, now)
            ws.store.append(plan.id, None, EventKind.RUN_REPAIRED, {
                "what": "ref", "ref": ref, "commit": expected, "detail": move.said()})
            moves.append(move)
        return moves


def held(ws: "Workspace", plan: "PlanRow", own: str | None = None) -> list[str]:
    """The refs an attempt about to start (on branch `own`) must not move, most important
    first: the integration branch, the person's, the waiting tasks' (they are still to
    land), then the landed tasks' (`readonly` locks their files where the OS allows)."""
    if not ws.paths.is_git:
        return []
    holds = _holds(ws, plan)
    waiting = sorted(ref for ref, hold in holds.items() if hold.log is not None)
    others = sorted(ref for ref, hold in holds.items() if hold.log is None)
    mine = f"refs/heads/{own}" if own else None
    return [f"refs/heads/{integration_branch(plan.slug)}", *_persons_refs(ws, plan),
            *(ref for ref in (*waiting, *others) if ref != mine)]


def _persons_refs(ws: "Workspace", plan: "PlanRow") -> list[str]:
    names = {f"refs/heads/{plan.base_branch}"} if plan.base_branch else set()
    out = head_ref(ws.root)
    if out and not out.startswith("refs/heads/baton/"):
        names.add(out)
    return sorted(names)


def _head_log(ws: "Workspace") -> Path | None:
    dirs = git.git_dirs(ws.root)
    return dirs[0] / "logs" / "HEAD" if dirs else None


def record(ws: "Workspace", plan: "PlanRow", attempt_dir: Path) -> None:
    """Before an attempt: where the person's branch is, and how long the checkout's HEAD
    log (what the person does in the checkout appends to it)."""
    if not ws.paths.is_git:
        return
    names = _persons_refs(ws, plan)
    log = _head_log(ws)
    try:
        size = log.stat().st_size if log else 0
    except OSError:
        size = 0
    found = {name: refs.read_ref(ws.root, name) for name in names}  # files: no process
    write_private(attempt_dir / RECORD, json.dumps({"refs": found, "head_log": size}))


def _by_person(ws: "Workspace", since: int, commit: str | None) -> bool:
    """True when the checkout's HEAD log moved to `commit` after byte `since`."""
    log = _head_log(ws)
    if log is None or commit is None:
        return False
    return any(new == commit for _old, new, _message in _moves_since(log, since))


def after(ws: "Workspace", plan: "PlanRow", attempt: "AttemptRow") -> list[Move]:
    """After `attempt`: the watched refs that moved while it ran, each put back where that is
    safe — found now, or by another check since it started (it ran then too)."""
    if not ws.paths.is_git or not attempt.log_path:
        return []
    folder = Path(attempt.log_path).parent
    try:
        start = json.loads((folder / RECORD).read_text())
    except (OSError, ValueError):
        start = {"refs": {}, "head_log": 0}
    began = attempt.started or time.time()
    with LOCK:
        seen = len(_found)
        if plan.base_commit:
            ref = f"refs/heads/{integration_branch(plan.slug)}"
            if refs.read_ref(ws.root, ref) is not None:
                check_integration(ws, plan)
            elif (landed := foldcache.folded(ws.store, plan.id).plan.landed_tip):
                _note(Move(ref, landed, None, True, time.time()))  # `integration.tip` rebuilds
        hold_branches(ws, plan)
        for ref, was in start["refs"].items():
            now = refs.read_ref(ws.root, ref)
            if was and now != was and not _by_person(ws, start["head_log"], now):
                _put_back(ws, ref, was, now)
        return [m for i, m in enumerate(_found) if i >= seen or m.at >= began]


def said(moves: list[Move]) -> str:
    """A flag's message for `moves`."""
    return "; ".join(dict.fromkeys(m.said() for m in moves))


def as_data(moves: list[Move]) -> list[dict[str, Any]]:
    return [asdict(m) for m in moves]

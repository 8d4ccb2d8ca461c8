"""Making a task's place before its agent starts, wherever the agent runs.

Every task's worktree is made on this machine (its landing is local): a build task's own
worktree and branch cut from the integration branch (reused on a retry, a landed task's
taken over where it may be, made ahead of its start while its dependencies still run), a
research task's detached one. The conductor makes it around the runner's start
(`starting.Starter`), in turn on the cores (`Turns`); the runner only starts the agent in it.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager as ContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from baton_tui import layout
from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.core.slug import task_branch
from baton_tui.core.words import Mode
from baton_tui.gitops import fresh_index, git, landing, making, recycling, refs, worktrees
from baton_tui.gitops.making import Making
from baton_tui.plan.model import Task
from baton_tui.run import integration, outside
from baton_tui.runners import launcher
from baton_tui.runners.base import StartFailed, Workdir
from baton_tui.store.rows import PlanRow
from baton_tui.trust import ensure_trusted
from baton_tui.workspace import Workspace


@dataclass(frozen=True)
class Spare:
    """A landed task's worktree that a starting task may take over instead of checking out
    one of its own (`gitops.recycling`), as far as the conductor knows."""

    task_id: int
    path: str
    branch: str
    landed: str | None                # the integration commit its landing made


SETUP_TIMEOUT = 900


class SetupFailed(Exception):
    """The worktree's `[worktree] setup` command failed; its output is attached to the task."""

    def __init__(self, message: str, output: str):
        super().__init__(message)
        self.output = output


def build_path(ws: Workspace, plan: PlanRow, task: Task) -> Path:
    """Where a build task's worktree lives."""
    return layout.worktree_path(ws.paths, plan.slug, task.id, task.title)


def git_mode(ws: Workspace) -> bool:
    """Whether tasks get worktrees of their own (else they work in the folder itself)."""
    return ws.paths.is_git and git.supports_worktrees()


def ensure_integration(ws: Workspace, plan: PlanRow) -> str:
    """Create `baton/<slug>/integration` at the approved commit; return its branch name."""
    return _integration_tip(ws, plan)[0]


def _integration_tip(ws: Workspace, plan: PlanRow) -> tuple[str, str | None]:
    """The integration branch's name and commit (see `integration.tip`: made at the approved
    commit, rebuilt from the last landing when deleted; None before approval)."""
    return integration.tip(ws, plan)


def _undo_unfinished(ws: Workspace, task: Task, path: Path) -> None:
    """A worktree whose making was cut short (Baton was killed) never held an agent's work:
    undo it, so it is made again, set-up included."""
    if making.pending(path):
        left = making.undo(ws.root, path)
        if left:
            raise BatonError(f"task {task.id}: its half-made worktree {path} is still used by "
                             f"processes Baton could not end ({', '.join(map(str, left))})")


def prepare_build(ws: Workspace, plan: PlanRow, task: Task, refresh: bool = False,
                  aside: Callable[[], ContextManager[object]] = nullcontext,
                  spare: Spare | None = None) -> Workdir:
    """The task's own worktree and branch, cut from the integration branch (reused on retry).

    `refresh` (a retry after a landing conflict) first brings the integration branch into
    the reused worktree; `Workdir.conflicts` then names the files the agent must resolve, and
    `Workdir.base` is the integration commit brought in (what the branch now carries). A
    worktree whose `.git` an agent deleted is repaired, its files kept. `aside`: entered
    while the `[worktree] setup` command runs (the conductor's starts step out of their
    turn for it, `Turns`). `spare`: a landed task's worktree to take over rather than
    check out a new one, when it may be (`_take_over`).
    """
    if not git_mode(ws):
        return Workdir(ws.root, None, None)
    path = build_path(ws, plan, task)
    branch = task_branch(plan.slug, task.id, task.title)
    made_at = making.held(path) if (path / ".git").is_file() else None  # made ahead
    if made_at is not None:
        why = outside.pinned(ws, path)
        if why:
            raise BatonError(f"task {task.id}: {why}")
        return _finish_making(ws, plan, path, branch, made_at, aside)
    _undo_unfinished(ws, task, path)
    if not (path / ".git").exists() and path.is_dir() and any(path.iterdir()):
        making.repair(ws.root, path, branch)
    if (path / ".git").exists():
        why = outside.pinned(ws, path)
        if why:  # reusing it would run git in whatever repository it now names
            raise BatonError(f"task {task.id}: {why}")
        conflicts, base = None, None
        if refresh:
            base = _integration_tip(ws, plan)[1]
            conflicts = landing.refresh(path, base) if base else None
        return Workdir(path, base, branch, conflicts=conflicts or [])
    _integration, base = _integration_tip(ws, plan)
    if spare is not None and base is not None:
        taken = _take_over(ws, plan, task, spare, path, branch, base, aside)
        if taken is not None:
            return taken
    # Two git processes here in the usual case: `worktree add --no-checkout`, then the
    # checkout (refs are read from their files).
    work = making.Making(path)
    work.begin()
    worktrees.add_worktree(ws.root, path, branch, base or "HEAD", making=work)
    return _set_up(ws, path, branch, base, work, aside)


def _take_over(ws: Workspace, plan: PlanRow, task: Task, spare: Spare, path: Path,
               branch: str, base: str, aside: Callable[[], ContextManager[object]]) -> Workdir | None:
    """The landed task's worktree `spare` taken over (`_recycle`), then set up; None when it
    may not be: the task's worktree is then made the usual way."""
    work = _recycle(ws, plan, task, spare, path, branch, base)
    return _set_up(ws, path, branch, base, work, aside) if work is not None else None


def _recycle(ws: Workspace, plan: PlanRow, task: Task, spare: Spare, path: Path,
             branch: str, base: str) -> Making | None:
    """The landed task's worktree `spare`, moved to this task's place `path` and switched to
    its new branch at `base` (`recycling.recycle`): the making under way, for the caller to
    finish or hold; None when it may not be (not clean, not landed, moved on) or git refused.
    The landed task's `task.recycled` says where its worktree went."""
    old = Path(spare.path)
    if not (old / ".git").is_file() or making.pending(old) or outside.pinned(ws, old) \
            or not recycling.recyclable(ws.root, old, spare.branch, spare.landed, base):
        return None
    work = making.Making(path)
    work.begin()
    done = recycling.recycle(ws.root, old, path, branch, base, work)
    if not old.exists():  # moved: whatever came of the switch, it is no longer the task's
        ws.store.append(plan.id, spare.task_id, EventKind.TASK_RECYCLED,
                        {"to": task.id, "workdir": str(old)})
    if not done:
        making.undo(ws.root, path)  # a clean tree on a landed branch: nothing is lost
        return None
    return work


def prepare_ahead(ws: Workspace, plan: PlanRow, task: Task, spare: Spare | None = None
                  ) -> bool:
    """Make a build task's worktree before it may start (its dependencies still run): a
    landed task's worktree `spare` taken over (`_recycle`: only the files that differ are
    written), else one `worktree add` at the integration tip now — held unfinished
    (`making.hold`). When the task starts, `prepare_build` brings it to the tip of then and
    sets it up. False when there is nothing to make ahead: folder mode, no integration
    branch yet, a folder or a branch of the task's already there (a retry, a resumed run:
    made the usual way)."""
    if task.mode != Mode.BUILD or not git_mode(ws):
        return False
    path = build_path(ws, plan, task)
    branch = task_branch(plan.slug, task.id, task.title)
    if path.exists() or making.pending(path) or refs.read_ref(ws.root, f"refs/heads/{branch}"):
        return False
    _integration, base = _integration_tip(ws, plan)
    if base is None:
        return False
    work = _recycle(ws, plan, task, spare, path, branch, base) if spare is not None else None
    if work is None:
        work = making.Making(path)
        work.begin()
        worktrees.add_worktree(ws.root, path, branch, base, making=work, whole=True)
    work.hold(base)
    return True


def drop_ahead(ws: Workspace, plan: PlanRow, task: Task) -> None:
    """A worktree made ahead for a task that did not start before its run ended: removed,
    with its branch, while both are as Baton made them (no file changed in the folder, the
    branch still where it was cut), so a run leaves nothing it never used."""
    path = build_path(ws, plan, task)
    made_at = making.held(path) if (path / ".git").is_file() else None
    if made_at is None or outside.pinned(ws, path) or not making.untouched(path):
        return
    if making.undo(ws.root, path):
        return  # something still runs in it
    ref = f"refs/heads/{task_branch(plan.slug, task.id, task.title)}"
    git.run_git(ws.root, *git.NO_HOOKS, "update-ref", "-d", ref, made_at)  # unless moved


def _finish_making(ws: Workspace, plan: PlanRow, path: Path, branch: str, made_at: str,
                   aside: Callable[[], ContextManager[object]]) -> Workdir:
    """A worktree made ahead (`prepare_ahead`), now its task starts: at the new tip, set up."""
    _integration, tip = _integration_tip(ws, plan)
    work = making.Making(path)
    work.begin()  # a kill from here on undoes it: it is made again, the usual way
    base = worktrees.move_ahead(path, made_at, tip, work)
    return _set_up(ws, path, branch, base, work, aside)


def _set_up(ws: Workspace, path: Path, branch: str, base: str | None, work: Making,
            aside: Callable[[], ContextManager[object]]) -> Workdir:
    """The rest of a build worktree's making: `[worktree] copy` and `setup`, then done."""
    config = ws.config
    if config.worktree.copy_:
        worktrees.copy_into(ws.root, path, config.worktree.copy_)
    if config.worktree.setup:
        ensure_trusted(ws, (), keys=("worktree.setup",))
        with aside():
            run_setup(config.worktree.setup, path, work)
    work.done()
    return Workdir(path, base, branch, fresh=True)


def run_setup(command: str, path: Path, work: Making) -> None:
    """`[worktree] setup` — a shell string the person approved by trusting baton.toml. A
    failed set-up leaves the worktree unfinished: the next attempt makes it again."""
    code, output = work.run(["sh", "-c", command], path, "setup", git_env=False,
                            timeout=SETUP_TIMEOUT)
    if code == 124:
        raise SetupFailed(f"worktree setup timed out after {SETUP_TIMEOUT}s", output[-4000:])
    if code != 0:
        raise SetupFailed(f"worktree setup `{command}` exited {code}", output[-4000:])


def prepare_research(ws: Workspace, plan: PlanRow, task: Task, attempt_no: int) -> Workdir:
    """A detached worktree of the integration branch (of HEAD before approval)."""
    if not git_mode(ws):
        return Workdir(ws.root, None, None)
    if plan.approved and plan.base_commit:
        base = _integration_tip(ws, plan)[1]
    else:
        base = git.rev_parse(ws.root, "HEAD")
    path = layout.worktree_path(ws.paths, plan.slug, task.id, task.title, f"-research-{attempt_no}")
    _undo_unfinished(ws, task, path)
    if not (path / ".git").exists():
        work = making.Making(path)
        work.begin()
        worktrees.add_detached_worktree(ws.root, path, base or "HEAD", making=work)
        work.done()
    return Workdir(path, base, None, fresh=True)


def refresh_index_later(worktree: Path) -> threading.Timer | None:
    """Refresh a copy of a just-checked-out worktree's index once its files are a second old
    (`fresh_index.refresh`), on a timer thread, so that the task's commit does not hash
    every file again on the way to its dependents' start. Nothing is lost if it fails.
    None: too few files for it to be worth a thread."""
    return fresh_index.refresh_later(worktree) if fresh_index.big_enough(worktree) else None


class Turns:
    """Starts take turns on the machine's cores for what is heavy in them, in the order they
    were asked for (the ready queue's rank): git making a worktree (a checkout) is CPU and
    disk, so eight begun at once on two cores share them and all end late together, the
    best-ranked with the rest; taking turns, the first ones start at once and the mean start
    comes about twice as early, for the same last one. Only the worktree is made in turn:
    the rest of a start (the prompt, the store's records, forking the shim) is light, and a
    turn held through it kept the others waiting (at 32 slots, 73 % of start time went to
    waiting for a turn). A start
    steps out of its turn while its `[worktree] setup` command runs (`aside`): a long
    install must not hold the others up. One turn more than there are cores: a start that
    waits in its turn (git's worktree lock, a landing's moment between moving the
    integration branch and noting it, `refguard.check_integration`) leaves the cores to the
    others instead of halving them (two turns on two cores, one landing stalled every
    queued start)."""

    def __init__(self, width: int | None = None):
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else os.cpu_count()
        self.width = width or max(2, cores or 2) + 1
        self._free = threading.Semaphore(self.width)  # waiters are woken first come, first served

    def __enter__(self) -> "Turns":
        self._free.acquire()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._free.release()

    @contextmanager
    def aside(self) -> Iterator[None]:
        self._free.release()
        try:
            yield
        finally:
            self._free.acquire()


def prepare(ws: Workspace, plan: PlanRow, task: Task, attempt_no: int, turns: Turns,
            refresh: bool = False, spare: Spare | None = None) -> Workdir:
    """The task's place for its next attempt, made in its turn on the cores (blocking)."""
    with turns:  # the checkout: the heavy part (the rest waits on locks, or forks)
        if task.mode == Mode.RESEARCH:
            workdir = prepare_research(ws, plan, task, attempt_no)
        else:
            workdir = prepare_build(ws, plan, task, refresh=refresh, aside=turns.aside,
                                    spare=spare)
    if workdir.fresh and workdir.branch:
        refresh_index_later(workdir.path)
    return workdir


def make_ahead(ws: Workspace, plan: PlanRow, task: Task, spare: Spare | None = None) -> bool:
    """`prepare_ahead`, its index refreshed for its start once its checkout is a second old
    (blocking: on a worker thread, with a workspace of its own)."""
    made = prepare_ahead(ws, plan, task, spare)
    if made:
        refresh_index_later(build_path(ws, plan, task))
    return made


@contextmanager
def start_failures() -> Iterator[None]:
    """What goes wrong while the conductor makes a task's place and records its attempt, as
    the task's failure (`StartFailed`): a failed set-up with its output, else "could not
    start: why"."""
    try:
        with launcher.start_failures(also=(NotImplementedError,)):
            yield
    except SetupFailed as exc:
        raise StartFailed(str(exc), exc.output) from exc

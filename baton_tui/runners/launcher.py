"""Start one attempt: prepare the task's directory, write its prompt, spawn the shim.

What an attempt is given — the nonce, the person's configured variables — reaches the
agent through the shim's environment only; `attempts.spec` records their names.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Iterator

from baton_tui import killpoints, procs
from baton_tui.core.errors import BatonError
from baton_tui.gitops import git, landing, making, recycling, refs, worktrees
from baton_tui.plan.model import PlanDocument, Task
from baton_tui.core.slug import task_branch
from baton_tui.players.base import AttemptContext
from baton_tui.paths import own_module, private_file, write_private
from baton_tui.redact import SECRETS_VAR, fingerprints
from baton_tui.run import outside, refguard
from baton_tui.runners import readonly
from baton_tui import layout
from baton_tui.run import integration
from baton_tui.runners import spawner
from baton_tui.run.prompt import compose
from baton_tui.runners.base import StartFailed
from baton_tui.skills import resolve
from baton_tui.store.db import PlanRow
from baton_tui.store.attempt_spec import AttemptSpec
from baton_tui.core.events import EventKind
from baton_tui.core.words import Mode
from baton_tui.trust import ensure_trusted
from baton_tui.channel import relay
from baton_tui.workspace import Workspace

if TYPE_CHECKING:
    from concurrent.futures import Future
    from typing import Callable, ContextManager

    from baton_tui.gitops.making import Making
    from baton_tui.runners.base import Spare
    from baton_tui.runners.spawner import Forked

SETUP_TIMEOUT = 900


class SetupFailed(Exception):
    """The worktree's `[worktree] setup` command failed; its output is attached to the task."""

    def __init__(self, message: str, output: str):
        super().__init__(message)
        self.output = output


@contextmanager
def start_failures(where: str = "",
                   also: tuple[type[Exception], ...] = ()) -> Iterator[None]:
    """What goes wrong while a runner makes a task's place, as the task's failure
    (`StartFailed`): a failed set-up with its output, else "could not start[ where]: why"."""
    caught: tuple[type[Exception], ...] = (BatonError, OSError, ValueError, *also)
    try:
        yield
    except SetupFailed as exc:
        raise StartFailed(str(exc), exc.output) from exc
    except caught as exc:
        message = exc.message if isinstance(exc, BatonError) else str(exc)
        raise StartFailed(f"could not start{where}: {message}") from exc


@dataclass
class Workdir:
    """Where an attempt runs, and what it started from."""

    path: Path
    base: str | None          # the commit the task's branch was cut from
    branch: str | None        # None for research (detached) and folder mode
    fresh: bool = False
    conflicts: list[str] = field(default_factory=list)  # left with markers for the agent


def build_path(ws: Workspace, plan: PlanRow, task: Task) -> Path:
    """Where a build task's worktree lives."""
    return layout.worktree_path(ws.paths, plan.slug, task.id, task.title)


def _git_mode(ws: Workspace) -> bool:
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
                  aside: "Callable[[], ContextManager]" = nullcontext,
                  spare: "Spare | None" = None) -> Workdir:
    """The task's own worktree and branch, cut from the integration branch (reused on retry).

    `refresh` (a retry after a landing conflict) first brings the integration branch into
    the reused worktree; `Workdir.conflicts` then names the files the agent must resolve, and
    `Workdir.base` is the integration commit brought in (what the branch now carries). A
    worktree whose `.git` an agent deleted is repaired, its files kept. `aside`: entered
    while the `[worktree] setup` command runs (the conductor's starts step out of their
    turn for it, `local.Turns`). `spare`: a landed task's worktree to take over rather than
    check out a new one, when it may be (`_take_over`).
    """
    if not _git_mode(ws):
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


def _take_over(ws: Workspace, plan: PlanRow, task: Task, spare: "Spare", path: Path,
               branch: str, base: str, aside: "Callable[[], ContextManager]") -> Workdir | None:
    """The landed task's worktree `spare` taken over (`_recycle`), then set up; None when it
    may not be: the task's worktree is then made the usual way."""
    work = _recycle(ws, plan, task, spare, path, branch, base)
    return _set_up(ws, path, branch, base, work, aside) if work is not None else None


def _recycle(ws: Workspace, plan: PlanRow, task: Task, spare: "Spare", path: Path,
             branch: str, base: str) -> "Making | None":
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


def prepare_ahead(ws: Workspace, plan: PlanRow, task: Task, spare: "Spare | None" = None
                  ) -> bool:
    """Make a build task's worktree before it may start (its dependencies still run): a
    landed task's worktree `spare` taken over (`_recycle`: only the files that differ are
    written), else one `worktree add` at the integration tip now — held unfinished
    (`making.hold`). When the task starts, `prepare_build` brings it to the tip of then and
    sets it up. False when there is nothing to make ahead: folder mode, no integration
    branch yet, a folder or a branch of the task's already there (a retry, a resumed run:
    made the usual way)."""
    if task.mode != Mode.BUILD or not _git_mode(ws):
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
                   aside: "Callable[[], ContextManager]") -> Workdir:
    """A worktree made ahead (`prepare_ahead`), now its task starts: at the new tip, set up."""
    _integration, tip = _integration_tip(ws, plan)
    work = making.Making(path)
    work.begin()  # a kill from here on undoes it: it is made again, the usual way
    base = worktrees.move_ahead(path, made_at, tip, work)
    return _set_up(ws, path, branch, base, work, aside)


def _set_up(ws: Workspace, path: Path, branch: str, base: str | None, work: "Making",
            aside: "Callable[[], ContextManager]") -> Workdir:
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


def run_setup(command: str, path: Path, work: "Making") -> None:
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
    if not _git_mode(ws):
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


def agent_env(ws: Workspace, plan: PlanRow, task: Task, attempt_id: int, nonce: str,
              secret_names: Sequence[str] = ()) -> dict[str, str]:
    """What Baton adds to the person's environment for an agent. `BATON_SECRETS` names the
    configured variables (never their values), so `baton report` redacts them too; a git
    identity where the person has none (`git.agent_identity_env`)."""
    env = {
        "BATON_TASK": str(task.id), "BATON_ATTEMPT": str(attempt_id), "BATON_NONCE": nonce,
        "BATON_STATE": str(ws.paths.store_path),
        "PATH": f"{layout.shim_dir()}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    if secret_names:
        env[SECRETS_VAR] = ",".join(sorted(secret_names))
    if ws.paths.is_git:  # no identity in a config file: given in the environment's config
        env.update(git.agent_identity_env(ws.root))
    return env


# Variables that send git to another repository (set in a git hook, or by a person who works
# with GIT_DIR): an agent's git must see its own worktree, so they never reach the shim or the
# agent. The same names Baton's own git calls drop (gitops/git.py).
GIT_REDIRECTS = frozenset({"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                           "GIT_PREFIX", "GIT_OBJECT_DIRECTORY",
                           "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE"})


def without_git_redirects(env) -> dict[str, str]:
    """`env` (a mapping such as os.environ) without the GIT_REDIRECTS variables."""
    return {k: v for k, v in env.items() if k not in GIT_REDIRECTS}


def new_nonce() -> str:
    """A fresh nonce, shaped so that redaction recognizes it wherever an agent echoes it."""
    return "bnc_" + secrets.token_hex(16)


def start_attempt(ws: Workspace, plan: PlanRow, doc: PlanDocument, task: Task, workdir: Workdir,
                  *, artifacts: dict[int, str], feedback: str | None = None,
                  resume_message: str | None = None, session_id: str | None = None,
                  ahead: "Future | None" = None, guard: Sequence[Path] = ()
                  ) -> tuple[int, "subprocess.Popen | Forked"]:
    """Record and spawn one attempt; returns its id and the shim's process (in a session of
    its own: it outlives the conductor; the conductor may wait on it while it lives) — forked
    by the spawner (`spawner.py`), or a fresh interpreter where there is none. `ahead`:
    the fingerprint of the places it must not write (`outside.ahead`), taken while its
    worktree was made. `guard`: more folders read-only to the agent (`readonly.layout`)."""
    player = ws.catalog.players.get(task.player)
    if player is None:
        raise BatonError(f"task {task.id}: unknown player {task.player!r}")
    skills = resolve(task.skills, ws.skills) if task.skills else []
    can_shell = player.reports_by_shell and (task.mode != Mode.RESEARCH or player.research_shell)
    in_output = player.reports_in_output or (task.mode == Mode.RESEARCH
                                             and player.research_reports_in_output)
    prompt = compose(doc, task, skills, artifacts, feedback, resume_message, can_shell=can_shell,
                     in_output=in_output)
    if player.runs_agent:  # a repo-supplied agent command runs only once trusted
        ensure_trusted(ws, {task.player}, keys=())
    nonce = new_nonce()
    store = ws.store
    attempt_id = store.new_attempt(plan.id, task.id, nonce, task.player, {}, "")
    folder = layout.attempt_dir(ws.paths, plan.slug, task.id, attempt_id)
    prompt_path = write_private(folder / "prompt.md", prompt)
    log_path = private_file(folder / "output.log")  # raw output: the person's eyes only
    env = agent_env(ws, plan, task, attempt_id, nonce, list(player.env))
    # Its report channel, which its shim serves (named here: MCP servers get BATON_* only).
    env[relay.ENV] = str(folder / relay.SOCKET)
    # The agent's PWD is its worktree, not the directory of the shell that started Baton:
    # some agents resolve relative paths and run commands in $PWD (OpenCode does).
    env["PWD"] = str(workdir.path)
    ctx = AttemptContext(task_id=task.id, mode=task.mode, prompt_path=prompt_path, prompt=prompt,
                         worktree=workdir.path, attempt_dir=folder, env=env, model=task.model,
                         effort=task.effort, session_id=session_id, resume_message=resume_message,
                         bin=player.bin)
    if player.check_is_task:
        launch_argv, launch_env, stdin_prompt = ["sh", "-c", task.check or "true"], {}, False
        stdin_path, named_session = prompt_path, None
    else:
        launch = (player.resume(ctx) if session_id or resume_message else None) or player.launch(ctx)
        launch_argv, launch_env, stdin_prompt = launch.argv, launch.env, launch.stdin_prompt
        stdin_path, named_session = launch.stdin_file or prompt_path, launch.session_id
    added = {**player.env, **launch_env, **env}
    # The store keeps the names of what the agent gets, never the values (secrets, the
    # nonce): the values reach the shim through its own environment only.
    spec: AttemptSpec = {"argv": launch_argv, "cwd": str(workdir.path), "env_names": sorted(added),
            "stdin_prompt": stdin_prompt,
            "prompt_path": str(stdin_path), "base": workdir.base, "branch": workdir.branch,
            "mode": task.mode, "resumed": bool(session_id or resume_message),
            "resume_message": resume_message,
            # the person's checkout and Baton's home (but its own task's places), read-only
            # to the agent where the OS allows it
            "readonly": readonly.layout(ws, workdir.path, folder.parent,
                                        refguard.held(ws, plan, workdir.branch), guard)
            if ws.config.worktree.protect_checkout else None,
            # its secrets' fingerprints: a terminal without them redacts its output all the same
            "secret_prints": fingerprints({**os.environ, **added})}
    store.update_attempt(attempt_id, spec=spec, log_path=str(log_path),
                         **({"session_id": named_session} if named_session else {}))
    outside.before(ws, folder, ahead)
    refguard.record(ws, plan, folder)
    shim_path = private_file(folder / "shim.log")
    shim_env = {**without_git_redirects(os.environ), **added}
    proc: subprocess.Popen[bytes] | Forked | None = spawner.spawn(
        attempt_id, str(ws.paths.store_path), str(workdir.path), shim_env, str(shim_path))
    if proc is None:  # no spawner here: the shim's own entry point, a fresh interpreter
        with open(shim_path, "ab") as shim_log:
            proc = subprocess.Popen(own_module("baton_tui.runners.shim", str(attempt_id),
                                               str(ws.paths.store_path)),
                                    stdin=subprocess.DEVNULL, stdout=shim_log,
                                    stderr=subprocess.STDOUT, start_new_session=True,
                                    cwd=str(workdir.path), env=shim_env)
    killpoints.reached("spawned")  # a kill here: the next conductor adopts or gives it up
    store.update_attempt(attempt_id, shim_pid=proc.pid)
    store.append(plan.id, task.id,
                 EventKind.TASK_RESUMED if spec["resumed"] else EventKind.TASK_STARTED,
                 {"attempt": attempt_id, "player": task.player, "workdir": str(workdir.path),
                  "base": workdir.base, "branch": workdir.branch,
                  "shim_token": procs.start_token(proc.pid)})
    return attempt_id, proc

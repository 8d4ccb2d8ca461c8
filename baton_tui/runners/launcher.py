"""Start one attempt's agent on this machine: its environment, its nonce, the shim spawned.

The conductor has made the attempt's place and composed its words (`StartRequest`); what an
attempt is given besides — the nonce, the person's configured variables — reaches the agent
through the shim's environment only; `attempts.spec` records their names.
"""

from __future__ import annotations

import os
import secrets
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from baton_tui import killpoints, layout, procs
from baton_tui.channel import relay
from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.gitops import git
from baton_tui.paths import own_module, private_file, write_private
from baton_tui.players.base import AttemptContext
from baton_tui.plan.model import Task
from baton_tui.redact import SECRETS_VAR, fingerprints
from baton_tui.runners import readonly, spawner
from baton_tui.runners.base import StartFailed, StartRequest, Workdir
from baton_tui.runners.spawner import Forked
from baton_tui.store.rows import PlanRow
from baton_tui.trust import ensure_trusted
from baton_tui.workspace import Workspace

__all__ = ["Workdir", "agent_env", "new_nonce", "record", "start_attempt", "start_failures"]


@contextmanager
def start_failures(where: str = "",
                   also: tuple[type[Exception], ...] = ()) -> Iterator[None]:
    """What goes wrong while a runner starts a task's agent, as the task's failure
    (`StartFailed`): "could not start[ where]: why"."""
    caught: tuple[type[Exception], ...] = (BatonError, OSError, ValueError, *also)
    try:
        yield
    except caught as exc:
        message = exc.message if isinstance(exc, BatonError) else str(exc)
        raise StartFailed(f"could not start{where}: {message}") from exc


def record(ws: Workspace, plan: PlanRow, task: Task) -> tuple[int, str, Path]:
    """Record a new attempt of `task` (not started): its id, its fresh nonce (the store
    keeps its hash only) and its own folder."""
    nonce = new_nonce()
    attempt_id = ws.store.new_attempt(plan.id, task.id, nonce, task.player, {}, "")
    return attempt_id, nonce, layout.attempt_dir(ws.paths, plan.slug, task.id, attempt_id)


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


def without_git_redirects(env: Mapping[str, str]) -> dict[str, str]:
    """`env` (a mapping such as os.environ) without the GIT_REDIRECTS variables."""
    return {k: v for k, v in env.items() if k not in GIT_REDIRECTS}


def new_nonce() -> str:
    """A fresh nonce, shaped so that redaction recognizes it wherever an agent echoes it."""
    return "bnc_" + secrets.token_hex(16)


def start_attempt(ws: Workspace, request: StartRequest, guard: Iterable[Path] = ()
                  ) -> "subprocess.Popen[bytes] | Forked":
    """Spawn the recorded attempt's shim; returns its process (in a session of its own: it
    outlives the conductor; the conductor may wait on it while it lives) — forked by the
    spawner (`spawner.py`), or a fresh interpreter where there is none. `guard`: more
    folders read-only to the agent (`readonly.layout`)."""
    task, plan, workdir, folder = request.task, request.plan, request.workdir, request.folder
    attempt_id = request.attempt_id
    player = ws.catalog.players.get(task.player)
    if player is None:
        raise BatonError(f"task {task.id}: unknown player {task.player!r}")
    if player.runs_agent:  # a repo-supplied agent command runs only once trusted
        ensure_trusted(ws, {task.player}, keys=())
    session_id, resume_message = request.session_id, request.resume_message
    store = ws.store
    prompt_path = write_private(folder / "prompt.md", request.prompt)
    log_path = private_file(folder / "output.log")  # raw output: the person's eyes only
    env = agent_env(ws, plan, task, attempt_id, request.nonce, list(player.env))
    # Its report channel, which its shim serves (named here: MCP servers get BATON_* only).
    env[relay.ENV] = str(folder / relay.SOCKET)
    # The agent's PWD is its worktree, not the directory of the shell that started Baton:
    # some agents resolve relative paths and run commands in $PWD (OpenCode does).
    env["PWD"] = str(workdir.path)
    ctx = AttemptContext(task_id=task.id, mode=task.mode, prompt_path=prompt_path,
                         prompt=request.prompt, worktree=workdir.path, attempt_dir=folder,
                         env=env, model=task.model, effort=task.effort, session_id=session_id,
                         resume_message=resume_message, bin=player.bin)
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
    spec = {"argv": launch_argv, "cwd": str(workdir.path), "env_names": sorted(added),
            "stdin_prompt": stdin_prompt,
            "prompt_path": str(stdin_path), "base": workdir.base, "branch": workdir.branch,
            "mode": task.mode, "resumed": bool(session_id or resume_message),
            "resume_message": resume_message,
            # the person's checkout and Baton's home (but its own task's places), read-only
            # to the agent where the OS allows it
            "readonly": readonly.layout(ws, workdir.path, folder.parent, list(request.held),
                                        list(guard))
            if ws.config.worktree.protect_checkout else None,
            # its secrets' fingerprints: a terminal without them redacts its output all the same
            "secret_prints": fingerprints({**os.environ, **added})}
    store.update_attempt(attempt_id, spec=spec, log_path=str(log_path),
                         **({"session_id": named_session} if named_session else {}))
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
    return proc

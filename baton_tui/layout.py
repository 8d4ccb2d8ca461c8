"""Where a run keeps its files: worktrees, prompts and logs under `$BATON_HOME`."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sys
import threading
from pathlib import Path

from baton_tui.core.errors import BatonError
from baton_tui.paths import RepoPaths, baton_home
from baton_tui.core.slug import slugify


def repo_key(paths: RepoPaths) -> str:
    """A stable, readable folder name per repository."""
    anchor = str(paths.git_common_dir or paths.root)
    return f"{slugify(paths.root.name, 30, 'repo')}-{hashlib.sha1(anchor.encode()).hexdigest()[:8]}"


def worktree_path(paths: RepoPaths, plan_slug: str, task_id: int, title: str,
                  suffix: str = "") -> Path:
    return (baton_home() / "worktrees" / repo_key(paths) / plan_slug /
            f"{task_id}-{slugify(title, 40, 'task')}{suffix}")


def attempt_dir(paths: RepoPaths, plan_slug: str, task_id: int, attempt_id: int) -> Path:
    path = baton_home() / "runs" / repo_key(paths) / plan_slug / f"task-{task_id}" / f"attempt-{attempt_id}"
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o700)
    return path


def conductor_log(paths: RepoPaths) -> Path:
    path = baton_home() / "runs" / repo_key(paths) / "conductor.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def shim_script() -> str:
    """The `baton` agents run: this Baton's own code, whatever their working directory holds
    — its folder first on sys.path, the working directory not on it (`-P`): in a worktree of
    a repository holding a `baton_tui` package (Baton's own, or one planted), `python -m
    baton_tui` imported the worktree's, which then answered for the agent's report. `report`
    and `checkpoint` need only the standard library: they run isolated and skip
    site-packages too (`-I -S`, a tenth of their start)."""
    # A JSON string is a Python string literal too, in double quotes.
    if getattr(sys, "frozen", False):  # the single-file binary: it is the whole of Baton
        return f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n'
    here = json.dumps(str(Path(__file__).resolve().parents[1]))  # the folder of baton_tui
    code = shlex.quote(f"import sys; sys.path.insert(0, {here}); "
                       "from baton_tui.cli import entry; entry()")
    python = shlex.quote(sys.executable)
    return ("#!/bin/sh\n"
            f'case "$1" in report|checkpoint) exec {python} -I -S -c {code} "$@" ;; esac\n'
            f'exec {python} -P -c {code} "$@"\n')


def shim_dir() -> Path:
    """A directory holding only `baton`, put first on agents' PATH (never a whole venv's bin)."""
    folder = baton_home() / "bin"
    target = folder / "baton"
    script = shim_script()
    if not target.exists() or target.read_text() != script:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = folder / f".baton.{os.getpid()}.{threading.get_ident()}"
        tmp.write_text(script)
        tmp.chmod(0o755)
        tmp.replace(target)
    return folder


def check_writable(paths: RepoPaths) -> None:
    """Refuse a run before it changes anything when `$BATON_HOME` cannot hold its worktrees
    and logs: one line naming the folder (BatonError, exit 2), not a traceback halfway."""
    home = baton_home()
    for folder in (home / "runs" / repo_key(paths), home / "worktrees" / repo_key(paths)):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            probe = folder / f".baton-probe-{os.getpid()}-{threading.get_ident()}"
            probe.touch()
            probe.unlink()
        except OSError as exc:
            raise BatonError(f"cannot write Baton's home {home}: {exc.strerror or exc} "
                             "(set BATON_HOME to a folder you can write)") from None

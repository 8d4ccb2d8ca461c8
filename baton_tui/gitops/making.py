"""Making a task's worktree so that a kill at any moment can be undone, and repairing one.

`git worktree add` in a large repository runs for seconds, and `[worktree] setup` for
minutes. Killed meanwhile — the conductor alone, or its whole process group — a worktree is
left half checked out, with git's `locked` file in its admin folder; when only the conductor
died, the orphaned git later dies of SIGPIPE on its closed output pipe and its clean-up
deletes the whole folder, whatever an agent has written there since. So:

- A marker beside the folder (`<name>.preparing`) is written before anything is made and
  removed only once the worktree is complete, set-up included. The agent starts after that,
  so a folder with a marker never held an agent's work: it is undone (the processes still
  working in it ended, the folder and git's record of it removed) and made again — set-up
  runs again too.
- A worktree made ahead of its task (while the task's dependencies still run) is checked
  out and left unfinished, its marker naming the commit it was checked out at (`hold`):
  when the task starts, the making goes on from there — one `git reset --keep` to the new
  integration tip, then the set-up — instead of starting over.
- What runs while the marker stands writes to a file, never a pipe (an orphan cannot die of
  SIGPIPE), and is recorded in the marker (pid and start token) so the next conductor ends it.
- A worktree whose `.git` is gone (an agent deleted it) is repaired in place: git's record of
  it is made again and pointed at the folder, whose files are all kept.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from baton_tui import killpoints, procs

from .git import GitError, _env, git, run_git
from .worktrees import _WORKTREE_LOCK, admin_dirs, changed_paths

__all__ = ["Making", "pending", "held", "untouched", "undo", "repair"]


def _marker(path: Path) -> Path:
    return path.with_name(path.name + ".preparing")


def pending(path: str | os.PathLike) -> bool:
    """True when the worktree at `path` was begun and never finished."""
    return _marker(Path(path)).exists()


def held(path: str | os.PathLike) -> str | None:
    """The integration commit a worktree made ahead of its task was checked out at (see
    `Making.hold`), or None: not made ahead, or its making was cut short."""
    try:
        made = json.loads(_marker(Path(path)).read_text())
    except (OSError, ValueError):
        return None
    ahead = made.get("ahead") if isinstance(made, dict) else None
    return ahead if isinstance(ahead, str) else None


def untouched(path: str | os.PathLike) -> bool:
    """Made ahead (`held`) and not a file changed in it since: nothing in it is anyone's."""
    return held(path) is not None and not changed_paths(path)


class Making:
    """One worktree being made: `begin()`, then `run(…)` each step, then `done()`."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.marker = _marker(self.path)
        self.output = self.marker.with_name(self.marker.name + ".log")
        self.started: list[dict] = []

    def begin(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._write()

    def _write(self, **more: object) -> None:
        tmp = self.marker.with_name(self.marker.name + f".{os.getpid()}")
        tmp.write_text(json.dumps({"by": os.getpid(), "procs": self.started, **more}))
        os.replace(tmp, self.marker)

    def run(self, argv: list[str], cwd: str | os.PathLike, point: str, *, git_env: bool = True,
            timeout: float | None = None) -> tuple[int, str]:
        """Run one step (output to a file, pid recorded); returns (exit status, output's
        last 8000 characters). A step past `timeout` is ended, with status 124."""
        env = _env(None) if git_env else dict(os.environ)
        # 0600: a set-up's output may quote anything the person's environment holds.
        with open(os.open(self.output, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600),
                  "wb") as out:
            try:
                proc = subprocess.Popen(argv, cwd=os.fspath(cwd), stdin=subprocess.DEVNULL,
                                        stdout=out, stderr=subprocess.STDOUT, env=env)
            except FileNotFoundError as exc:
                raise GitError(argv[1:] if git_env else argv, str(exc), 127) from exc
            self.started.append({"pid": proc.pid, "token": procs.start_token(proc.pid)})
            self._write()
            killpoints.reached(point)
            try:
                code = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                procs.kill_tree(proc.pid, 9)
                proc.wait()
                code = 124
        with open(self.output, "rb") as fh:
            fh.seek(max(0, os.path.getsize(self.output) - 8000))
            text = fh.read().decode("utf-8", "replace")
        return code, text

    def hold(self, commit: str) -> None:
        """The worktree is checked out at `commit`, ahead of its task: it stays unfinished
        (no agent may work in it, and anything that meets it may undo it) until its task
        starts, brings it to the integration tip and finishes the making (`held`)."""
        self.started = []
        self._write(ahead=commit)
        self.output.unlink(missing_ok=True)

    def done(self) -> None:
        """The worktree is complete: an agent may work in it now."""
        self.output.unlink(missing_ok=True)
        self.marker.unlink(missing_ok=True)


def undo(repo: str | os.PathLike, path: str | os.PathLike) -> list[int]:
    """Undo a worktree whose making never finished: end what still works in it (recorded in
    its marker, or found working in the folder), remove the folder and git's record of it.
    Returns pids that could not be ended (the folder is then left for the next try)."""
    path = Path(path)
    marker = _marker(path)
    try:
        made = json.loads(marker.read_text())
    except (OSError, ValueError):
        made = {}
    tokens = {int(p["pid"]): p.get("token") for p in made.get("procs", []) if p.get("pid")}
    left = procs.end(list(tokens), tokens)
    by = made.get("by")  # the conductor that was making it: its group's strays, if it died
    if by and by != os.getpid() and not procs.alive(by):
        left += procs.end(procs.holding(path, by))
    if left:
        return left
    with _WORKTREE_LOCK:
        for admin in admin_dirs(repo, path):
            shutil.rmtree(admin, ignore_errors=True)
        shutil.rmtree(path, ignore_errors=True)
        run_git(repo, "worktree", "prune")
    marker.with_name(marker.name + ".log").unlink(missing_ok=True)
    marker.unlink(missing_ok=True)
    return []


def _point_back(path: Path) -> None:
    """Git's record of the worktree now at `path` points at it (what `git worktree repair
    PATH` does for it — that command also checks every other worktree, and gives up when an
    agent turned another one's `.git` into a folder)."""
    text = (path / ".git").read_text(encoding="utf-8").strip()
    admin = Path(text.removeprefix("gitdir:").strip())
    (admin / "gitdir").write_text(f"{path.resolve() / '.git'}\n", encoding="utf-8")


def repair(repo: str | os.PathLike, path: str | os.PathLike, branch: str) -> None:
    """Give the folder at `path` (an agent deleted its `.git`) back to git on `branch`,
    keeping every file in it: git's stale record is pruned, a new one is made beside it
    without a checkout, its `.git` moved into the folder, and the index read from the
    branch (the files are compared with it; none is rewritten)."""
    path = Path(path)
    spare = path.with_name(path.name + ".repair")
    with _WORKTREE_LOCK:
        run_git(repo, "worktree", "prune")
        kept = admin_dirs(repo, path)
        if kept:  # git still has its record (a locked one is never pruned): point at it
            (path / ".git").write_text(f"gitdir: {kept[0]}\n")
        else:
            if spare.exists():
                for admin in admin_dirs(repo, spare):
                    shutil.rmtree(admin, ignore_errors=True)
                shutil.rmtree(spare, ignore_errors=True)
                run_git(repo, "worktree", "prune")
            git(repo, "worktree", "add", "--no-checkout", "--", str(spare), branch)
            os.replace(spare / ".git", path / ".git")
            _point_back(path)
            shutil.rmtree(spare, ignore_errors=True)
    git(path, "reset", "-q")

"""The person's checkout, read-only to an agent — where the operating system allows it cheaply.

On Linux with unprivileged user namespaces the shim starts the agent in a mount namespace of
its own, in which the person's checkout, the repository's git config and hooks, the person's
Baton config and Baton's home (every task's worktree and attempt folder, the `baton` shim)
are bind-mounted read-only, while what the agent's own work needs stays writable: its own
worktree, its own task's folder of attempts (prompt, log, its player's settings, Aider's chat
history, its report channel's socket), git's objects, refs and logs, and its own worktree's
entry in git's `worktrees/`. Baton's store is read-only to it: `baton report` and the MCP
report tool reach it through the attempt's channel, which the shim serves from outside. A
second user namespace then locks those mounts, so the agent cannot remount them, even as
root. The agent sees the same paths and the same files; an ordinary write to the checkout or
to a sibling task's worktree or prompt fails with "Read-only file system".

The loose files of the refs an agent must not move — the integration branch, the person's
branch, the waiting and the landed tasks' branches (`refguard.held`, at most `HELD_MAX`) —
are bind-mounted read-only onto themselves: git moves a ref by renaming `X.lock` over `X`,
and a rename over (or an unlink of) a mount point fails with "Device or resource busy",
while the agent's own branch, another file in the same folder, stays writable. Such a mount
lasts until the file is replaced outside the namespace: a landing of Baton's (the
integration branch) or a commit of the person's (their branch, or a waiting task's in its
worktree) lifts it — the kernel detaches a mount whose file another namespace renamed
over — and the agent then sees, and could move, the new file (detected, and put back, by
`refguard`). A ref only in `packed-refs` has no file to mount: it is watched, not locked.

The agent's working directory is entered again once the mounts are made (`Popen` entered it
before, on the old mount, through whose `..` every sibling's worktree stayed writable).

What it does not stop: a process that reaches the checkout through another process's
`/proc/PID/root` or `/proc/PID/cwd`. Those writes are detected instead (`outside.py`). Where
namespaces are not available (containers that forbid them) the same plan is held with
Landlock where the kernel has it (`landlock.py`); elsewhere (macOS, older kernels) writes are
detected only.
Standard library only: it runs in the shim, between fork and exec.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from baton_tui.paths import baton_home, personal_config_path

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from baton_tui.workspace import Workspace

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 1, 32, 4096, 16384, 1 << 18
HELD_MAX = 200  # ref files bind-mounted read-only at most; beyond, detection alone
GIT_WRITES = ("objects", "refs", "logs/refs", "packed-refs", "lfs", "modules")
# Baton's store (`baton/` in the common dir) stays read-only: reports reach it through the
# attempt's channel (`channel/relay.py`), served by the shim outside the view.
# The checkout's own HEAD log (`logs/HEAD`) stays read-only: what it records is the person's
# doing (`refguard` reads it), so an agent must not write it. Without `logs/refs` yet, all of
# `logs` stays writable (the agent's branch needs a reflog).


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def admin_dir(workdir: Path) -> Path | None:
    """Git's own folder for the linked worktree at `workdir` (`worktrees/<name>` in the
    common dir), from its `.git` file; None for anything else."""
    try:
        text = (workdir / ".git").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return (workdir / text[len("gitdir:"):].strip()).resolve()


def layout(ws: "Workspace", workdir: Path, task_dir: Path | None = None,
           held: list[str] | None = None,
           also: "Sequence[Path]" = ()) -> dict[str, list[str]] | None:
    """What to make read-only for an agent working in `workdir` (its task's attempts in
    `task_dir`), and the holes to keep writable; None when there is nothing to protect
    (folder mode, or a checkout that holds the agent's own home or temp folder, which it
    must write). Baton's home is guarded on the same terms. The loose files of the `held`
    refs (full names, most important first) become read-only `files`, up to `HELD_MAX`.
    `also`: more folders read-only to the agent (a cluster node's scratch folders: every
    job's checkout and the node's shared object cache)."""
    common = ws.paths.git_common_dir
    root = _settled(ws.root)
    if common is None or workdir.resolve() == root or not sys.platform.startswith("linux"):
        return None
    home, temp = _settled(os.environ.get("HOME") or "/"), _settled(os.environ.get("TMPDIR")
                                                                  or "/tmp")
    guarded = [p for p in (root, _settled(baton_home()))
               if not (_inside(home, p) or _inside(temp, p))]
    guarded += [*also, common / "config", common / "hooks", common / "worktrees",
                personal_config_path(), baton_home() / "bin" / "baton"]
    fixed = [common / name for name in GIT_WRITES]
    if not (common / "logs" / "refs").exists():
        fixed.append(common / "logs")
    own = [workdir, *(p for p in (admin_dir(workdir), task_dir) if p is not None)]
    ro = [_settled(p) for p in guarded if p.exists()]  # the same folders at every start
    holes = [_settled(p) for p in fixed if p.exists()] + [p.resolve() for p in own if p.exists()]
    rw = [real for real in holes if any(_inside(real, r) for r in ro)]
    return {"ro": [str(p) for p in ro], "rw": [str(p) for p in rw],
            "files": _ref_files(common, held or [])} if ro else None


@functools.lru_cache(maxsize=256)
def _settled(path: str | os.PathLike[str]) -> Path:
    """`path` resolved, once per process: the checkout, Baton's home, the home and temp
    folders a run starts with, the git folders every attempt's layout guards or leaves
    writable (resolving walks each part of a path: tens of `lstat`s, at every start)."""
    return Path(path).resolve()


def _ref_files(common: Path, held: list[str]) -> list[str]:
    """The loose files of `held` (regular files, not links), at most `HELD_MAX`."""
    files: list[str] = []
    folders: dict[str, str] = {}  # each folder resolved once: hundreds of refs share a few
    for ref in dict.fromkeys(held):
        if len(files) >= HELD_MAX:
            break
        path = common / ref
        if ref.startswith("refs/heads/") and path.is_file() and not path.is_symlink():
            parent = str(path.parent)
            if parent not in folders:
                folders[parent] = os.path.realpath(parent)  # fresh: agents write refs/
            files.append(os.path.join(folders[parent], path.name))
    return files


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _own_user_namespace(libc: Any) -> None:
    uid, gid = os.getuid(), os.getgid()
    _call(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def _mount(libc: Any, source: str | None, target: str, flags: int) -> None:
    _call(libc.mount(source.encode() if source else None, target.encode(), None, flags, None),
          f"mount {target}")


@functools.cache
def available() -> str | None:
    """None when this machine lets an unprivileged process make such a namespace, else why
    not (tried once per process, in a throwaway child, so the caller's own namespaces never
    change; the spawner asks before it forks shims, which inherit the answer)."""
    if not sys.platform.startswith("linux"):
        return "not Linux"
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only reports through its exit status
        try:
            _own_user_namespace(_libc())
            os._exit(0)
        except BaseException:
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return None if os.waitstatus_to_exitcode(status) == 0 else "user namespaces not allowed here"


def enter(plan: dict[str, list[str]]) -> None:
    """Between fork and exec: make `plan["ro"]` read-only (but its `plan["rw"]` holes) for
    this process and its children, then lock the mounts. Raises OSError when it cannot."""
    libc = _libc()
    _own_user_namespace(libc)
    _mount(libc, None, "/", MS_REC | MS_PRIVATE)   # nothing of this leaks to the host
    for hole in plan["rw"]:
        _mount(libc, hole, hole, MS_BIND | MS_REC)
    for path in plan["ro"]:
        _mount(libc, path, path, MS_BIND | MS_REC)
        _mount(libc, None, path, MS_REMOUNT | MS_BIND | MS_RDONLY)
    for path in plan.get("masks", []):  # shown empty (`masked`: the planner's instruction files)
        try:
            _mount(libc, plan["empty"][0], path, MS_BIND)
        except OSError:  # gone meanwhile: nothing to hide
            continue
        _mount(libc, None, path, MS_REMOUNT | MS_BIND | MS_RDONLY)
    for path in plan.get("files", []):  # last: on top of the writable `refs` hole
        try:
            _mount(libc, path, path, MS_BIND)
        except OSError:  # gone since the layout was made (a landing replaced it): watched
            continue
        _mount(libc, None, path, MS_REMOUNT | MS_BIND | MS_RDONLY)
    _own_user_namespace(libc)  # mounts from a more privileged namespace are locked here
    # The working directory was entered (by `Popen(cwd=…)`) before these mounts existed: it
    # still stands on the old mount, whose `..` reaches every sibling worktree writable.
    # Entered again by its path, it stands on the mounts just made.
    try:
        os.chdir(os.getcwd())
    except OSError:  # its folder is gone: the agent fails to start there anyway
        pass


def preexec(plan: dict[str, list[str]] | None, env: dict[str, str] | None = None,
            folder: str | None = None) -> Any:
    """The shim's `preexec_fn` for this plan, or None (nothing to protect, or no namespaces
    here: said once in the shim's log). Without namespaces, Landlock holds the plan where the
    kernel has it (`landlock.py`); then, if the temp folder leads to a protected path (no new
    entry can be made in it), `env`'s `TMPDIR` becomes `tmp` in the attempt's `folder`. A
    failure between fork and exec leaves a line in the agent's log and lets the agent start
    anyway — detection still holds."""
    if not plan:
        return None
    why = available()
    if why:
        # lazy: only where the view cannot be made
        from baton_tui.runners import landlock

        hold = landlock.preexec(plan)
        if hold is not None:
            print(f"baton: no read-only view here ({why}); Landlock (ABI {landlock.abi()}) "
                  "holds the agent's writes to its own places", flush=True)
            if env is not None and folder is not None:
                env.update(landlock.own_temp(plan, env, folder))
            return _never_blocking(hold, "hold this agent's writes with Landlock")
        print(f"baton: the checkout and Baton's home stay writable for this agent ({why}; "
              f"{landlock.available()}); writes outside its worktree are detected, not "
              "prevented", flush=True)
        return None

    return _never_blocking(lambda: enter(plan), "make the checkout and Baton's home read-only")


def _never_blocking(step: Callable[[], None], what: str) -> Callable[[], None]:
    """`step` as a `preexec_fn` that never keeps the agent from starting: a failure between
    fork and exec is a line in the agent's log (`baton: could not WHAT: …`)."""

    def run() -> None:
        try:
            step()
        except BaseException as exc:  # never keep the agent from starting
            os.write(2, f"baton: could not {what}: {exc}\n".encode())

    return run

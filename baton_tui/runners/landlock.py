"""An agent's writes held to its own places with Landlock, where the read-only view cannot be
made (no unprivileged user namespaces: many containers, hardened kernels).

Landlock (Linux 5.13 and later) lets any process restrict itself and its children, without
privileges or namespaces; the restriction lasts until they exit and cannot be lifted. It is an
allow-list, and a right granted on a folder covers everything beneath it. So the view's plan
(`readonly.layout`: read-only paths and the writable holes in them) is turned into the
folders and files that stay writable: walking down from `/` towards each read-only path, every
entry beside that path is granted whole, and the holes are granted again inside it (the
deepest of a read-only path and a hole decides, as the view's mounts do). Baton's store,
Baton's home (every sibling's worktree and attempt folder), the person's checkout and config
cannot be written; the agent's worktree, its task's attempt folders, git's objects and refs,
and the rest of the machine — temp folders, `~/.cache`, `~/.config`, `~/.codex` … — can.

A folder on the way to a read-only path (`$HOME` when the checkout or Baton's home lies under
it) cannot be granted whole: what is already in it is granted entry by entry, so a file such
as `~/.claude.json` stays writable in place, but a new entry directly in that folder — or a
file replaced there by renaming another over it — is refused. (Claude Code writes
`~/.claude.json` in place when it cannot rename over it.) A temp folder that holds the
checkout or Baton's home has the same limit, so such an agent gets a `TMPDIR` of its own in
its attempt's folder (`own_temp`); a program that writes `/tmp` by name there is refused.

Only writes are restricted (reading, running programs and sockets are not); the agent runs
with no-new-privileges, so setuid programs do not raise its rights. The loose files of held
refs (`readonly.layout`'s `files`) are not locked — `refs/` is a hole and Landlock cannot
deny one file in a granted folder — so they stay watched (`refguard`). ABI 1 kernels are not
used: there every rename between two folders is refused, which git's object writes need.
From ABI 3 truncation is restricted too (before, `truncate(2)` on a read-only file passes).
Device ioctls (ABI 5) are left alone. Standard library only: it runs in the shim, between
fork and exec.
"""

from __future__ import annotations

import ctypes
import functools
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446  # the same on every architecture
CREATE_RULESET_VERSION, RULE_PATH_BENEATH, PR_SET_NO_NEW_PRIVS = 1, 1, 38
WRITE_FILE, REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 1, 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
MIN_ABI = 2
WRITES = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
          | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM | REFER)
FILE_RIGHTS = WRITE_FILE | TRUNCATE  # what a rule on a file (not a folder) may grant


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # packed in the kernel's header
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> Any:
    return ctypes.CDLL(None, use_errno=True)


@functools.cache
def abi() -> int:
    """The kernel's Landlock ABI version; 0 where there is none (not Linux, not built in,
    or not enabled at boot)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


def available() -> str | None:
    """None when Landlock can hold an agent's writes here, else why not."""
    version = abi()
    if version == 0:
        return "no Landlock in this kernel"
    if version < MIN_ABI:
        return f"Landlock ABI {version} refuses every rename between folders"
    return None


def handled() -> int:
    """The write rights this kernel's Landlock restricts (and so the ones to grant)."""
    return WRITES | (TRUNCATE if abi() >= 3 else 0)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def writable(plan: dict[str, list[str]]) -> list[tuple[str, bool]]:
    """The paths to grant (path, is a folder) so that everything stays writable but what
    `plan["ro"]` makes read-only outside its `plan["rw"]` holes (the deepest decides)."""
    marks = {os.path.normpath(p): False for p in plan["ro"]}
    marks.update({os.path.normpath(p): True for p in plan["rw"]})
    grants: list[tuple[str, bool]] = []

    def visit(folder: str, open_here: bool) -> None:
        below = [m for m in marks if m != folder and _inside(m, folder)]
        if not below:
            if open_here:
                grants.append((folder, True))
            return
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return
        for entry in entries:
            if entry.is_symlink():  # a write through it is judged where it leads
                continue
            path = entry.path
            state = marks.get(path, open_here)
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and (path in marks or any(_inside(m, path) for m in below)):
                visit(path, state)
            elif state:
                grants.append((path, is_dir))

    root_open = marks.get("/", True)
    visit("/", root_open)
    return grants


def own_temp(plan: dict[str, list[str]], env: dict[str, str], folder: str) -> dict[str, str]:
    """`TMPDIR` for an agent whose temp folder leads to a read-only path of `plan` (a checkout
    or Baton's home under `/tmp`): no new entry could be made in it, so its temp files go to
    `tmp` in its attempt's `folder` (made here, 0700). Empty when the temp folder is fine."""
    temp = os.path.realpath(env.get("TMPDIR") or "/tmp")
    if not any(_inside(os.path.normpath(p), temp) and os.path.normpath(p) != temp
               for p in plan["ro"]):
        return {}
    own = os.path.join(folder, "tmp")
    try:
        os.makedirs(own, mode=0o700, exist_ok=True)
    except OSError:  # the agent keeps its temp folder, and whatever it can write there
        return {}
    return {"TMPDIR": own}


def restrict(grants: list[tuple[str, bool]]) -> None:
    """Between fork and exec: from now on this process and its children may write only
    beneath `grants`. Raises OSError when it cannot."""
    libc = _libc()
    rights = handled()
    attr = _RulesetAttr(rights)
    fd = libc.syscall(CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                      ctypes.c_uint32(0))
    if fd < 0:
        err = ctypes.get_errno()
        raise OSError(err, f"landlock_create_ruleset: {os.strerror(err)}")
    try:
        for path, is_dir in grants:
            try:
                target = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:  # gone since the plan was made: nothing to grant
                continue
            try:
                rule = _PathBeneathAttr(rights if is_dir else rights & FILE_RIGHTS, target)
                if libc.syscall(ADD_RULE, fd, ctypes.c_int(RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"landlock_add_rule {path}: {os.strerror(err)}")
            finally:
                os.close(target)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"no_new_privs: {os.strerror(err)}")
        if libc.syscall(RESTRICT_SELF, fd, ctypes.c_uint32(0)) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"landlock_restrict_self: {os.strerror(err)}")
    finally:
        os.close(fd)


def preexec(plan: dict[str, list[str]]) -> Callable[[], None] | None:
    """What holds the agent's writes to what `plan` leaves writable, run between fork and
    exec, or None where Landlock cannot (the caller then says so). The walk is made here,
    before the fork: only the ruleset is built and applied in the child."""
    if available():
        return None
    grants = writable(plan)
    return lambda: restrict(grants)

"""A ref moved the way `git update-ref` moves it with the files backend, without its process.

A landing pass moves the integration branch once, compare-and-swap, verifying that every
landed task branch is still where it was read. Git does that by its lock protocol: each ref's
`<ref>.lock` created exclusively (a concurrent update fails or waits), the old values read and
checked under the locks, the new value written into the lock, a line appended to the ref's
log, the lock renamed over the ref. `swap` takes the same steps in this process when it can be
sure they are git's, and answers None — the caller asks git — otherwise: a reftable
repository, a shared one, a ref checked out in the repository (git logs HEAD's move too), a
log not there yet, a lock someone else holds, or a committer not yet learnt from a commit
git wrote (`commit_object`).
"""

from __future__ import annotations

import os
import re
import time

from .commit_object import committer, stamp, unshared
from .git import GitError, git_dirs, identity_env
from .onbranch import head_ref
from .refs import _HEX, read_ref, valid_ref_name

__all__ = ["swap"]

_SPACE = re.compile(r"[ \t\n\v\f\r]+")  # C's isspace: what git folds in a log message


def swap(repo: str | os.PathLike, ref: str, new: str, old: str,
         verify: dict[str, str], message: str) -> bool | None:
    """Move `ref` from `old` to `new` if every ref of `verify` still points where it says:
    True when done, None when git must do it. Raises GitError, nothing moved, when `ref` or a
    verified ref is elsewhere (as `update-ref --stdin` fails)."""
    dirs = git_dirs(repo)
    names = [ref, *verify]
    if dirs is None or not all(map(_HEX.fullmatch, [new, old, *verify.values()])) \
            or not all(n.startswith("refs/heads/") and valid_ref_name(n) for n in names) \
            or len(set(names)) != len(names) or identity_env(repo):
        return None
    common = dirs[1]
    if (common / "reftable").exists() or not unshared(repo) \
            or head_ref(repo) == ref or not (common / "logs" / ref).is_file():
        return None
    who = committer(repo, {})
    if who is None:
        return None
    locks: list[str] = []
    try:
        for name in names:
            lock = f"{common}/{name}.lock"
            try:
                os.close(os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            except OSError:  # someone's update under way (git waits for it, or fails)
                return None
            locks.append(lock)
        for name, expected in [(ref, old), *verify.items()]:
            found = read_ref(repo, name)
            if found != expected:
                raise GitError(["update-ref", "--stdin"], "", 1, f"cannot lock ref '{name}': "
                               f"is at {found or 'nothing'} but expected {expected}")
        text = _SPACE.sub(" ", message).strip(" ")
        line = f"{old} {new} {who.decode('utf-8', 'surrogateescape')} {stamp(time.time())}" \
            + (f"\t{text}" if text else "") + "\n"
        try:
            with open(locks[0], "w", encoding="ascii") as out:
                out.write(new + "\n")
            with open(common / "logs" / ref, "a", encoding="utf-8",
                      errors="surrogateescape") as log:
                log.write(line)
            os.replace(locks[0], f"{common}/{ref}")
        except OSError as exc:  # a full disk, say: the ref is where it was
            raise GitError(["update-ref", "--stdin"], "", 1,
                           f"cannot update ref '{ref}': {exc}") from exc
        locks.pop(0)
        return True
    finally:
        for lock in locks:
            try:
                os.unlink(lock)
            except OSError:
                pass


"""A landing's merge commit written into the object store without a `git commit-tree`.

Every landing records a merge commit whose tree and parents Baton already holds; only who
made it and when are git's to decide (the person's config, `author.*`/`committer.*`, the
GIT_AUTHOR_*/GIT_COMMITTER_* variables, git's trimming of names). So the first landing of a
process asks `commit-tree` and its commit is read back (`learn`): its author and committer
serve every later landing while git's config files and those variables are as they were,
the time set anew. The object is the one `commit-tree` would write (same bytes, so the same
id), as a loose object. The committer learnt also signs the log line of the ref move that
follows (`ref_update`). Anything unusual — a SHA-256 repository, a shared one, a set date, a commit with
headers beyond tree, parents, author and committer — leaves it to `commit-tree`.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
import zlib
from pathlib import Path

from .git import _config_stamp, git_dirs

__all__ = ["committer", "learn", "stamp", "unshared", "write"]

_ID = re.compile(r"[0-9a-f]{40}")
_IDENT = re.compile(rb"(.+ <[^<>\n]*>) (\d+) ([+-]\d{4})")
_PERSON = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
           "EMAIL")
_DATES = ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")

#: What git's identity depends on -> (author, committer) as `commit-tree` wrote them.
_LEARNT: dict[tuple, tuple[bytes, bytes]] = {}


def _key(repo: str | os.PathLike, env: dict[str, str]) -> tuple | None:
    if any(os.environ.get(k) or env.get(k) for k in _DATES) \
            or os.environ.get("GIT_OBJECT_DIRECTORY"):
        return None
    stamp = _config_stamp(repo)
    if stamp is None:
        return None
    return (stamp, tuple((k, env.get(k, os.environ.get(k))) for k in _PERSON))


def learn(repo: str | os.PathLike, commit: str, env: dict[str, str]) -> None:
    """Remember the author and committer of `commit`, which `commit-tree` just wrote with
    `env` (a loose object: read without a process), when it holds nothing else unusual."""
    key, objects = _key(repo, env), _objects(repo)
    if key is None or objects is None or not _ID.fullmatch(commit):
        return
    try:
        data = zlib.decompress((objects / commit[:2] / commit[2:]).read_bytes())
    except (OSError, zlib.error):
        return
    head, _, body = data.partition(b"\0")
    headers = body.split(b"\n\n", 1)[0].split(b"\n")
    if not head.startswith(b"commit "):
        return
    words = [line.partition(b" ")[0] for line in headers]
    if words[:1] != [b"tree"] or words[-2:] != [b"author", b"committer"] \
            or set(words[1:-2]) - {b"parent"}:
        return  # an encoding, a signature…: each commit asks git
    author = _IDENT.fullmatch(headers[-2].partition(b" ")[2])
    committer = _IDENT.fullmatch(headers[-1].partition(b" ")[2])
    if author and committer:
        _LEARNT[key] = (author.group(1), committer.group(1))


def stamp(now: float) -> str:
    """`now` as git writes a time after a name: seconds, then the local offset (`+0100`)."""
    offset = time.localtime(now).tm_gmtoff // 60
    return f"{int(now)} {'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"


def committer(repo: str | os.PathLike, env: dict[str, str]) -> bytes | None:
    """Who commits (`Name <email>`) in `repo` with `env`, as learnt from a commit git wrote;
    None when nothing was learnt for this identity (or git must be asked)."""
    key = _key(repo, env)
    who = _LEARNT.get(key) if key is not None else None
    return who[1] if who else None


def write(repo: str | os.PathLike, tree: str, parents: list[str], message: str,
          env: dict[str, str]) -> str | None:
    """The id of the commit of `tree` on `parents` with `message`, written as `commit-tree`
    would; None when git must write it (nothing learnt for this identity yet, or anything
    unusual about the repository)."""
    key, objects = _key(repo, env), _objects(repo)
    who = _LEARNT.get(key) if key is not None else None
    if who is None or objects is None or not all(map(_ID.fullmatch, [tree, *parents])):
        return None
    when = " " + stamp(time.time())
    body = b"".join([
        f"tree {tree}\n".encode(), *(f"parent {p}\n".encode() for p in parents),
        b"author " + who[0] + when.encode() + b"\n",
        b"committer " + who[1] + when.encode() + b"\n\n", message.encode("utf-8")])
    data = b"commit %d\0" % len(body) + body
    oid = hashlib.sha1(data).hexdigest()
    folder = objects / oid[:2]
    final = folder / oid[2:]
    if final.exists():
        return oid
    tmp = None
    try:
        folder.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)  # as git: pruned if left
        with os.fdopen(fd, "wb") as out:
            out.write(zlib.compress(data, 1))
        os.chmod(tmp, 0o444)
        os.replace(tmp, final)
    except OSError:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
        return None
    return oid


def _objects(repo: str | os.PathLike) -> Path | None:
    """The repository's object folder, when a loose object may be written there as git
    would: not a shared repository (its folders writable by a group, or setgid)."""
    dirs = git_dirs(repo)
    if dirs is None:
        return None
    objects = dirs[1] / "objects"
    try:
        mode = objects.stat().st_mode
    except OSError:
        return None
    return None if mode & 0o2020 else objects


def unshared(repo: str | os.PathLike) -> bool:
    """True when files may be written into `repo`'s git directory as git writes them for one
    person (not `core.sharedRepository`: its folders group-writable, or setgid)."""
    return _objects(repo) is not None

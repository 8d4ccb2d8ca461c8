"""Git refs without a process: ref names checked by git's own rules, and refs read from their
files (loose or packed) with `git rev-parse` whenever the files do not answer plainly.

Built on `git.py` (its process runner, and where a worktree's git directories are), which
never imports this module.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from baton_tui.gitops.git import GitError, _file_stamp, git, git_dirs, run_git

# ---- ref names ------------------------------------------------------------------------------

_BAD_REF_CHARS = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")


def valid_ref_name(name: str) -> bool:
    """True when ``name`` passes ``git check-ref-format`` (its default rules), checked here
    instead of in a git process.

    The rules: no ASCII control character, space, ``~ ^ : ? * [`` or backslash; no ``..`` and
    no ``@{``; not ``@`` alone; no empty component (so no leading, trailing or doubled
    ``/``); no component starting with ``.`` or ending with ``.lock``; not ending with
    ``.``; and at least two components (``refs/…``, ``heads/x``).
    """
    if not name or name == "@" or "/" not in name:
        return False
    if ".." in name or "@{" in name or name.endswith(".") or _BAD_REF_CHARS.search(name):
        return False
    return all(part and not part.startswith(".") and not part.endswith(".lock")
               for part in name.split("/"))


def valid_branch_name(name: str) -> bool:
    """True when ``name`` is acceptable to ``git check-ref-format --branch`` as a new branch
    (``refs/heads/<name>`` is a valid ref, it does not start with ``-`` and is not ``HEAD``).
    The ``@{-N}`` shorthand that command also expands is never a name Baton makes."""
    return (bool(name) and not name.startswith("-") and name != "HEAD"
            and valid_ref_name(f"refs/heads/{name}"))


# ---- reading refs without a process -----------------------------------------------------------
#
# A task's life reads a handful of refs (its branch, the integration branch, a worktree's
# HEAD). Git stores each as a "loose" file holding the object id, or as a line of the
# `packed-refs` file; both are written atomically (a lock file renamed into place), which is
# how git itself reads them. Anything else — the reftable backend, a symbolic ref we do not
# expect, an unreadable file — falls back to `git rev-parse`, so the answer is always git's.

_HEX = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
#: The empty tree's id under SHA-1 and SHA-256.
EMPTY_TREES = frozenset({
    "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
})


_PACKED: dict[str, tuple[tuple, dict[str, str]]] = {}


def _packed_refs(common: Path) -> dict[str, str] | None:
    path = common / "packed-refs"
    stamp = _file_stamp(path)
    if stamp is None:
        return {} if not path.exists() else None
    cached = _PACKED.get(str(path))
    if cached and cached[0] == stamp:
        return cached[1]
    refs: dict[str, str] = {}
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as fh:
            for line in fh:
                if line.startswith(("#", "^")):
                    continue
                oid, _, name = line.rstrip("\n").partition(" ")
                if _HEX.fullmatch(oid) and name:
                    refs[name] = oid
    except OSError:
        return None
    _PACKED[str(path)] = (stamp, refs)
    return refs


class _Unsure(Exception):
    """The files do not answer plainly: ask git."""


def _read_ref_files(gitdir: Path, common: Path, ref: str) -> str | None:
    if (common / "reftable").exists():
        raise _Unsure(ref)
    for _ in range(5):  # HEAD -> refs/heads/x, rarely more
        if ref == "HEAD":
            base = gitdir
        elif ref.startswith("refs/") and valid_ref_name(ref) and not ref.startswith(
                ("refs/worktree/", "refs/bisect/", "refs/rewritten/")):
            base = common
        else:
            raise _Unsure(ref)
        try:
            data = (base / ref).read_text(encoding="utf-8").strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            if ref == "HEAD":
                raise _Unsure(ref) from None
            packed = _packed_refs(common)
            if packed is None:
                raise _Unsure(ref) from None
            return packed.get(ref)
        except (OSError, UnicodeDecodeError):
            raise _Unsure(ref) from None
        if _HEX.fullmatch(data):
            return data
        if data.startswith("ref:"):
            ref = data[4:].strip()
            continue
        raise _Unsure(ref)
    raise _Unsure(ref)


def read_ref(repo: str | os.PathLike, ref: str) -> str | None:
    """The object id ``ref`` points at (``HEAD`` or a full ``refs/…`` name; not peeled), or
    None when it does not exist (an unborn HEAD included).

    Read from the ref files when they answer plainly, else from ``git rev-parse``; so it
    costs no process in the usual case, and it is always as fresh as git's own answer.
    """
    if ref != "HEAD" and not ref.startswith("refs/"):
        raise ValueError(f"read_ref wants HEAD or a full ref name, not {ref!r}")
    dirs = git_dirs(repo)
    if dirs is not None:
        try:
            return _read_ref_files(dirs[0], dirs[1], ref)
        except _Unsure:
            pass
    proc = run_git(repo, "rev-parse", "--verify", "-q", ref)
    if proc.returncode != 0:
        return None
    return proc.stdout.strip() or None


#: A loose ref file -> (its stamp, the id it held) when last read: `read_refs` reads it
#: again only when the stamp changed. Git replaces a ref file (a lock renamed over it: a new
#: inode and change time); any other write changes its change time, which no process can
#: set back.
_STAMPED: dict[str, tuple[tuple[int, int, int, int], str]] = {}
#: A stamp is trusted only once its change time is this far behind the clock: a write in
#: the same tick as the read could otherwise leave the stamp as it was (git's racy index).
RACY_NS = 2_000_000_000


def read_refs(repo: str | os.PathLike, names: list[str]) -> dict[str, str | None]:
    """What each of ``names`` (full ``refs/heads/…`` names) points at, as `read_ref` would
    answer — for many refs at once, checked often: a loose ref file whose stamp (inode,
    size, modification and change time) is as it was when it was last read costs one
    `stat`, not a read. Refs only in ``packed-refs`` come from its cached parse; a
    repository the files do not answer for (reftable) costs one `git cat-file` for all."""
    dirs = git_dirs(repo)
    if dirs is None or (dirs[1] / "reftable").exists():
        return dict(zip(names, resolve(repo, *names)))
    gitdir, common = dirs
    base = str(common)
    now = time.time_ns()
    found: dict[str, str | None] = {}
    for name in names:
        path = f"{base}/{name}"  # strings, not Paths: thousands of names, checked often
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            st = None
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns) if st else None
        known = _STAMPED.get(path)  # only valid names are ever kept
        if known is not None and known[0] == stamp:
            found[name] = known[1]
            continue
        if not name.startswith("refs/heads/") or not valid_ref_name(name):
            found[name] = read_ref(repo, name)
            continue
        try:  # read after the stat: the stamp is never newer than what is read
            with open(path, "rb") as fh:
                data = fh.read(66).decode("ascii").strip()
        except (OSError, UnicodeDecodeError):
            data = ""
        if stamp and _HEX.fullmatch(data):
            found[name] = data  # the usual loose file: an id
            if now - stamp[3] > RACY_NS:
                if len(_STAMPED) > 100_000:
                    _STAMPED.clear()
                _STAMPED[path] = (stamp, data)
            continue
        try:  # packed, symbolic, or odd: as `read_ref` reads it
            found[name] = _read_ref_files(gitdir, common, name)
        except _Unsure:
            found[name] = read_ref(repo, name)
    return found


def resolve(repo: str | os.PathLike, *names: str) -> list[str | None]:
    """Object ids for several revision expressions (``x^{commit}``, ``x^{tree}``…) in one
    ``git cat-file --batch-check``; None for each that names nothing. Names that look like
    options or hold a newline name nothing."""
    wanted = [n for n in names if n and not n.startswith("-") and "\n" not in n]
    answers: dict[str, str | None] = {}
    if wanted:
        out = git(repo, "cat-file", "--batch-check=%(objectname)",
                  input="".join(f"{n}\n" for n in wanted))
        for name, line in zip(wanted, out.split("\n")):
            answers[name] = line if _HEX.fullmatch(line) else None
    return [answers.get(n) for n in names]


#: Commit -> its tree. A commit's tree never changes (the id is a hash of both), so this
#: needs no invalidation; it only saves a process when Baton already knows the answer.
_TREES: dict[str, str] = {}


def remember_tree(commit: str, tree: str, parents: list[str] | None = None) -> None:
    if len(_TREES) > 50_000:
        _TREES.clear()
        _PARENTS.clear()
    _TREES[commit] = tree
    if parents is not None:
        _PARENTS[commit] = tuple(parents)


#: Commit -> its parents, for the commits Baton made itself (as fixed as its tree).
_PARENTS: dict[str, tuple[str, ...]] = {}


def known_parents(commit: str) -> tuple[str, ...] | None:
    """The parents of a commit Baton made in this process; None for any other."""
    return _PARENTS.get(commit)


#: Commit -> (its parent, the paths it changed), for commits Baton made itself whose changes
#: it read from the index (`worktrees.commit_all`): a scope check needs no `git diff` then.
_CHANGES: dict[str, tuple[str, tuple[str, ...]]] = {}


def remember_changes(commit: str, parent: str, paths: list[str]) -> None:
    if len(_CHANGES) > 50_000:
        _CHANGES.clear()
    _CHANGES[commit] = (parent, tuple(paths))


def known_changes(commit: str, parent: str) -> list[str] | None:
    """The paths ``commit`` changed since ``parent``, when Baton made it on ``parent`` in this
    process and read them then; None for any other pair."""
    known = _CHANGES.get(commit)
    return list(known[1]) if known is not None and known[0] == parent else None


def tree_of(repo: str | os.PathLike, commit: str) -> str:
    """The tree of ``commit`` (a full object id); raises GitError when it names no commit."""
    tree = _TREES.get(commit)
    if tree is None:
        tree = resolve(repo, f"{commit}^{{tree}}")[0]
        if tree is None:
            raise GitError(["cat-file", f"{commit}^{{tree}}"], "", 128, f"no such commit: {commit}")
        remember_tree(commit, tree)
    return tree


def loose_commit(repo: str | os.PathLike, commit: str) -> tuple[str, tuple[str, ...]] | None:
    """The tree and parents of ``commit`` read from its loose object file, as a commit git
    just wrote is stored (no process); None when it is not one (packed, elsewhere, not a
    commit), and the caller asks git."""
    import zlib  # lazy: only a commit of Baton's reads an object

    dirs = git_dirs(repo)
    if dirs is None or not re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", commit):
        return None
    try:
        data = zlib.decompress((dirs[1] / "objects" / commit[:2] / commit[2:]).read_bytes())
    except (OSError, zlib.error):
        return None
    head, _, body = data.partition(b"\0")
    if not head.startswith(b"commit "):
        return None
    tree, parents = None, []
    for line in body.split(b"\n"):
        word, _, value = line.partition(b" ")
        if word == b"tree" and tree is None:
            tree = value.decode("ascii", "replace")
        elif word == b"parent":
            parents.append(value.decode("ascii", "replace"))
        elif word != b"tree":
            break  # author, committer, …: the parents are all before them
    return (tree, tuple(parents)) if tree else None

"""`baton --version`: the version (CHANGELOG.md's newest release) and the commit it was built from.

The commit comes from a `_commit` file beside this module, which a built wheel and the
binary carry (scripts/hatch_build.py writes it at build time), or else, in a checkout (a
source or editable install), from the checkout's `.git` — read as files, with no `git`
process, so `--version` stays as quick as `--help`. Neither: the version alone.
"""

from __future__ import annotations

import os

from baton_tui import __version__

__all__ = ["describe", "commit"]


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read().strip()
    except (OSError, UnicodeDecodeError):
        return ""


def _is_hex(text: str) -> bool:
    return 7 <= len(text) <= 64 and all(c in "0123456789abcdef" for c in text)


def _from_git(checkout: str) -> str:
    """HEAD's commit in `checkout` (a `.git` folder, or a worktree's `.git` file), or ''."""
    dot_git = os.path.join(checkout, ".git")
    gitdir = dot_git
    if os.path.isfile(dot_git):  # a linked worktree: `gitdir: …`
        line = _read(dot_git)
        if not line.startswith("gitdir:"):
            return ""
        gitdir = os.path.join(checkout, line[len("gitdir:"):].strip())
    head = _read(os.path.join(gitdir, "HEAD"))
    if not head.startswith("ref:"):
        return head if _is_hex(head) else ""
    ref = head[len("ref:"):].strip()
    common = gitdir
    pointer = _read(os.path.join(gitdir, "commondir"))
    if pointer:
        common = os.path.join(gitdir, pointer)
    for folder in (gitdir, common):
        value = _read(os.path.join(folder, *ref.split("/")))
        if _is_hex(value):
            return value
    for line in _read(os.path.join(common, "packed-refs")).splitlines():
        value, _, name = line.partition(" ")
        if name == ref and _is_hex(value):
            return value
    return ""


def commit() -> str:
    """The commit this Baton was built from (12 hex digits, `-dirty` when the build's tree
    had changes), or '' when nobody recorded it."""
    here = os.path.dirname(os.path.abspath(__file__))
    recorded = _read(os.path.join(here, "_commit"))
    if recorded:
        return recorded.split()[0][:60]
    checkout = os.path.dirname(here)
    if os.path.exists(os.path.join(checkout, ".git")) and \
            os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        found = _from_git(checkout)
        return found[:12]
    return ""


def describe() -> str:
    """`baton 0.1.0 (commit 0123456789ab)`, or `baton 0.1.0`."""
    found = commit()
    return f"baton {__version__}" + (f" (commit {found})" if found else "")

"""Who wrote a line: `git blame` on the landed work, and the commits a task made itself."""

from __future__ import annotations

from pathlib import Path

from .git import run_git

__all__ = ["line_commit", "file_lines", "own_commits"]


def file_lines(repo: Path, rev: str, path: str) -> list[str] | None:
    """The file's lines at `rev`, or None when `rev` has no such file."""
    proc = run_git(repo, "cat-file", "blob", f"{rev}:{path}")
    return proc.stdout.splitlines() if proc.returncode == 0 else None


def line_commit(repo: Path, rev: str, path: str, line: int) -> str | None:
    """The commit that wrote line `line` (1-based) of `path` as `rev` has it."""
    proc = run_git(repo, "blame", "--porcelain", "-L", f"{line},{line}", rev, "--", path)
    if proc.returncode != 0 or not proc.stdout:
        return None
    return proc.stdout.split(" ", 1)[0]


def own_commits(repo: Path, base: str, tip: str) -> set[str]:
    """The commits on `tip` that `base` does not hold (a task's own, from the commit its
    branch was cut from)."""
    proc = run_git(repo, "rev-list", f"{base}..{tip}")
    return set(proc.stdout.split()) if proc.returncode == 0 else set()

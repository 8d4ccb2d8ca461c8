"""Files a fresh worktree needs from the person's checkout, and what a worktree weighs.

`[worktree] copy` brings ignored files (`.env`) into each new task worktree; `gc` reports
the size of what it removes. Neither needs git.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath

from baton_tui.core.errors import BatonError

__all__ = ["copy_into", "dir_size"]


def _pattern_escapes(pattern: str) -> bool:
    p = pattern.replace("\\", "/")
    if os.path.isabs(pattern) or p.startswith("/") or (len(p) > 1 and p[1] == ":"):
        return True
    return ".." in PurePosixPath(p).parts


def copy_into(repo: str | os.PathLike, worktree: str | os.PathLike,
              patterns: list[str]) -> list[str]:
    """Copy files matching ``patterns`` from the repo's working tree into ``worktree``.

    For ignored files a fresh worktree lacks (``.env``, ``config/*.local``): ``[worktree] copy``.
    Relative paths are kept; a matched directory is copied whole. Patterns that could reach
    outside the repository (absolute paths, ``..``) are refused with a BatonError, and so is
    any match that resolves outside it through a symlink. Files that already exist in the
    worktree are left alone (a tracked file there is the branch's version, not the person's
    uncommitted edit). ``.git`` is never copied. Returns the relative paths copied, sorted.
    """
    src_root = Path(repo).resolve()
    dst_root = Path(worktree).resolve()
    for pat in patterns:
        if not pat or _pattern_escapes(pat):
            raise BatonError(f"[worktree] copy pattern {pat!r} reaches outside the repository")
    copied: list[str] = []

    def copy_file(src: Path) -> None:
        rel = src.relative_to(src_root)
        if rel.parts and rel.parts[0] == ".git":
            return
        real = src.resolve()
        if not (real == src_root or real.is_relative_to(src_root)):
            raise BatonError(f"[worktree] copy: {rel.as_posix()} points outside the repository")
        dst = dst_root / rel
        if not dst.resolve().is_relative_to(dst_root):
            raise BatonError(f"[worktree] copy: {rel.as_posix()} would land outside the worktree")
        if dst.exists() or dst.is_symlink():
            return
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(real, dst)
        copied.append(rel.as_posix())

    for pat in patterns:
        for match in sorted(src_root.glob(pat.replace("\\", "/").rstrip("/"))):
            if match.is_dir():
                for dirpath, dirnames, filenames in os.walk(match):
                    dirnames[:] = [d for d in dirnames if d != ".git"]
                    for name in filenames:
                        copy_file(Path(dirpath) / name)
            elif match.is_file():
                copy_file(match)
    return sorted(set(copied))


def dir_size(path: str | os.PathLike) -> int:
    """Bytes used by files under ``path`` (symlinks not followed; 0 when missing), for gc."""
    root = os.fspath(path)
    try:
        if not os.path.isdir(root) or os.path.islink(root):
            return os.lstat(root).st_size
    except OSError:
        return 0
    total = 0
    stack = [root]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
        except OSError:
            continue
    return total

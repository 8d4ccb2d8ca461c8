"""Conflict markers among the lines a task added: what must never land.

After a retry that brought the integration branch into a task's worktree, conflicted files
hold git's markers for the agent to resolve; an agent that reports done without resolving
them would land `<<<<<<<`, `=======`, `>>>>>>>` on the integration branch. Only added lines
count (a file that documents markers, already on the branch it was cut from, is not the
task's doing), and a file counts only when one of its added lines opens or closes a
conflict (`<<<<<<< ` or `>>>>>>> `): a lone `=======` is a reStructuredText or Markdown
underline as often as a marker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .git import git

IN_FILE = re.compile(rb"^(?:<{7}|>{7})(?:[ \t\r]|$)", re.M)
SIDES = re.compile(r"^(<{7}|>{7})(?:[ \t]|$)")
MIDDLE = re.compile(r"^(={7}|\|{7})(?:[ \t]|$)")
HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")
SHOWN = 8  # places named in a failure's reason
READ_AT_MOST = 16 << 20  # bytes of a changed file read without git


@dataclass(frozen=True)
class Marker:
    path: str
    line: int
    text: str


def _unquoted(name: str) -> str:
    """A path as git's patch header prints it: C-quoted when it holds unusual bytes."""
    if not (name.startswith('"') and name.endswith('"')):
        return name
    raw = name[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
    return raw.encode("latin-1", "replace").decode("utf-8", "replace")


def maybe(workdir: Path, paths: list[str]) -> bool:
    """Whether any of `paths` in `workdir` (the task's worktree, as just committed) holds a
    line that opens or closes a conflict — read without git, so a task with none costs no
    process; only then are its added lines looked at (`added`). A file that cannot be read,
    or is larger than READ_AT_MOST, counts as maybe."""
    for name in paths:
        path = workdir / name
        try:
            if path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_size > READ_AT_MOST:
                return True  # git looks at its added lines instead
            with open(path, "rb") as fh:
                if IN_FILE.search(fh.read()):
                    return True
        except OSError:
            return True
    return False


def added(repo, base: str, tip: str) -> list[Marker]:
    """Conflict markers on the lines `tip` adds since its merge base with `base` (`git diff
    base...tip`), file by file in diff order."""
    out = git(repo, "-c", "core.quotePath=false", "diff", "-U0", "--no-color", "--no-ext-diff",
              "--no-textconv", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/",
              f"{base}...{tip}", "--")
    found: list[Marker] = []
    path, line, sides = "", 0, False
    mine: list[Marker] = []

    def close() -> None:
        if sides:
            found.extend(mine)

    for text in out.split("\n"):
        if text.startswith("+++ "):
            close()
            name = _unquoted(text[4:].rstrip("\t"))  # a tab ends a name with spaces
            path, mine, sides = name[2:] if name.startswith("b/") else name, [], False
        elif text.startswith("@@"):
            match = HUNK.match(text)
            line = int(match.group(1)) if match else 0
        elif text.startswith("+") and path:
            body = text[1:]
            if SIDES.match(body):
                sides = True
                mine.append(Marker(path, line, body[:60]))
            elif MIDDLE.match(body):
                mine.append(Marker(path, line, body[:60]))
            line += 1
    close()
    return found


def said(markers: list[Marker]) -> str:
    """The places for a failure's reason: `file:line` for the first SHOWN, and how many more."""
    places = ", ".join(f"{m.path}:{m.line}" for m in markers[:SHOWN])
    more = f" (+{len(markers) - SHOWN} more)" if len(markers) > SHOWN else ""
    return places + more

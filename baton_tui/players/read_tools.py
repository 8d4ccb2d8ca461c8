"""A read-only MCP server (`read_file`, `list_files`, `search`) confined to one folder.

Lent to agent CLIs whose tools cannot be made read-only for one run (Goose: its developer
extension's shell and editor are all or nothing). A research attempt then gets only these
tools and Baton's report tools, so it can study the worktree and report, and cannot write.
Paths are resolved inside the root; a path or link that leaves it is refused.

`python -m baton_tui.players.read_tools ROOT` serves it on stdio with the standard library only
(run/mcp_stdio.py), so it answers in milliseconds (on FastMCP, about 0.4 s after spawn).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

from baton_tui.run.jsonrpc import Server
from baton_tui.run.mcp_stdio import integer, result_schema, serve, string, tool_server

MAX_LINES = 2000
MAX_HITS = 200
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv"}


def _within(base: Path, target: Path) -> bool:
    return target == base or base in target.parents


def inside(root: Path, path: str) -> Path:
    """`path` (relative to root, or absolute) resolved; ValueError when it leaves the root."""
    base = root.resolve()
    target = (base / path).resolve()
    if not _within(base, target):
        raise ValueError(f"{path}: outside the folder this task may read")
    return target


def read_file(root: Path, path: str, offset: int = 0, limit: int = 400) -> str:
    target = inside(root, path)
    lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
    start, stop = max(0, offset), max(0, offset) + max(1, min(limit, MAX_LINES))
    shown = [f"{n + 1:>6}\t{line}" for n, line in enumerate(lines[start:stop], start)]
    more = f"\n… {len(lines) - stop} more lines (offset={stop})" if stop < len(lines) else ""
    return "\n".join(shown) + more


def _files(top: Path):
    for folder, dirs, names in os.walk(top):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(names):
            yield Path(folder) / name


def list_files(root: Path, path: str = ".") -> str:
    top, base = inside(root, path), root.resolve()
    found = [str(p.relative_to(base)) for p in _files(top)]
    return "\n".join(found[:MAX_HITS * 5]) or "(no files)"


def search(root: Path, pattern: str, path: str = ".") -> str:
    """Lines matching a regular expression, as `file:line: text`."""
    regex, base, hits = re.compile(pattern), root.resolve(), []
    for file in _files(inside(root, path)):
        try:
            if not _within(base, file.resolve()):
                continue        # a link out of the folder: read_file refuses it, so skip it here
        except (OSError, RuntimeError):                  # a link loop (RuntimeError before 3.13)
            continue
        try:
            text = file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if regex.search(line):
                hits.append(f"{file.relative_to(base)}:{n}: {line.strip()[:200]}")
                if len(hits) >= MAX_HITS:
                    return "\n".join(hits) + "\n… (more matches: narrow the search)"
    return "\n".join(hits) or "(no matches)"


def _guarded(fn, root: Path, *args) -> str:
    """A refusal or failure the agent can read and act on is an answer, not a tool error."""
    try:
        return fn(root, *args)
    except (OSError, ValueError, re.error) as exc:
        return f"error: {exc}"


# The tools exactly as FastMCP listed them (input and output schemas included).
TOOLS = [
    {"name": "read_file",
     "description": "Read a text file of the task's folder (numbered lines; `offset` and "
                    "`limit` page through a long one).",
     "inputSchema": {"properties": {"path": string("Path"),
                                    "offset": integer("Offset", default=0),
                                    "limit": integer("Limit", default=400)},
                     "required": ["path"], "title": "_readArguments", "type": "object"},
     "outputSchema": result_schema("_read")},
    {"name": "list_files",
     "description": "List the files under a folder of the task's folder (default: all of it).",
     "inputSchema": {"properties": {"path": string("Path", default=".")},
                     "title": "_listArguments", "type": "object"},
     "outputSchema": result_schema("_list")},
    {"name": "search",
     "description": "Search the task's folder for lines matching a regular expression.",
     "inputSchema": {"properties": {"pattern": string("Pattern"),
                                    "path": string("Path", default=".")},
                     "required": ["pattern"], "title": "_searchArguments", "type": "object"},
     "outputSchema": result_schema("_search")},
]


def build_server(root: Path) -> Server:
    def _read(path: str, offset: int = 0, limit: int = 400) -> str:
        return _guarded(read_file, root, path, offset, limit)

    def _list(path: str = ".") -> str:
        return _guarded(list_files, root, path)

    def _search(pattern: str, path: str = ".") -> str:
        return _guarded(search, root, pattern, path)

    return tool_server("baton-read", TOOLS,
                       {"read_file": _read, "list_files": _list, "search": _search})


if __name__ == "__main__":
    serve(build_server(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))

"""The tools of one attempt, confined to its worktree: `Toolbox` dispatches a model's call.

Every path is resolved (symlinks included) and must stay inside the worktree; `.git` is never
writable. Research mode does not offer the editing tools and refuses a call to one; it keeps the
shell unless it plans (`shell=False`: the person's own checkout). The shell is `shell.Shell`;
the report tools call `baton_tui.channel.agent_side` in-process.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path
from typing import Any

from baton_tui.channel import agent_side, report as channel
from baton_tui.core.errors import BatonError
from baton_tui.core.words import Mode
from baton_tui.native_agent.shell import Shell
from baton_tui.native_agent.specs import (
    READ_LIMIT,
    READ_TOOLS,
    SHELL_TOOL,
    WRITE_TOOLS,
    ToolError,
    clip,
)


class Toolbox:
    """The tools of one attempt, confined to its worktree."""

    def __init__(self, root: Path, mode: str, shell: bool = True):
        self.root = root.resolve()
        self.mode = mode
        research = READ_TOOLS + ((SHELL_TOOL,) if shell else ())
        self.names = research if mode == Mode.RESEARCH else READ_TOOLS + WRITE_TOOLS
        self.shell = Shell(self.root)

    # paths ------------------------------------------------------------------
    def path(self, raw: Any, *, write: bool = False) -> Path:
        if not isinstance(raw, str) or not raw.strip():
            raise ToolError("a `path` string is required")
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve()  # symlinks included
        if resolved != self.root and self.root not in resolved.parents:
            raise ToolError(f"refused: {raw} is outside your worktree ({self.root}); every "
                            "path must stay inside it")
        if write:
            rel = resolved.relative_to(self.root)
            if rel.parts and rel.parts[0] == ".git":
                raise ToolError("refused: Baton's git metadata is not yours to write")
        return resolved

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path != self.root else "."

    def _walk(self, start: Path):
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            for name in sorted(filenames):
                yield Path(dirpath) / name

    # dispatch ---------------------------------------------------------------
    def call(self, name: str, args: Any) -> str:
        if name not in self.names:
            if self.mode == Mode.RESEARCH and name in WRITE_TOOLS:
                raise ToolError(f"refused: {name} is not available in a read-only research task;"
                                " put your findings in your baton_report summary")
            raise ToolError(f"unknown tool {name!r} (tools: {', '.join(self.names)})")
        if not isinstance(args, dict):
            raise ToolError("tool arguments must be a JSON object")
        return getattr(self, f"t_{name}")(**{k: v for k, v in args.items()
                                             if isinstance(k, str)})

    def kill_child(self) -> None:
        self.shell.kill()

    # the file tools -----------------------------------------------------------
    def t_read_file(self, path: Any = None, offset: Any = None, limit: Any = None,
                    **_: Any) -> str:
        target = self.path(path)
        if not target.is_file():
            raise ToolError(f"{path}: no such file")
        text = target.read_text(encoding="utf-8", errors="replace")
        if offset or limit:
            lines = text.splitlines(keepends=True)
            start = max(int(offset or 1), 1) - 1
            end = start + int(limit) if limit else len(lines)
            text = "".join(lines[start:end])
        return clip(text, READ_LIMIT) if text else "(empty file)"

    def t_list_files(self, path: Any = ".", pattern: Any = None, **_: Any) -> str:
        start = self.path(path or ".")
        if start.is_file():
            return self.rel(start)
        if not start.is_dir():
            raise ToolError(f"{path}: no such directory")
        out = []
        for item in self._walk(start):
            rel = str(item.relative_to(self.root))
            if pattern and not (fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(item.name,
                                                                               str(pattern))):
                continue
            out.append(rel)
            if len(out) >= 1000:
                out.append("… (more files not listed)")
                break
        return "\n".join(out) or "(no files)"

    def t_grep(self, pattern: Any = None, path: Any = ".", glob: Any = None, **_: Any) -> str:
        if not isinstance(pattern, str) or not pattern:
            raise ToolError("a `pattern` (regular expression) is required")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"bad regular expression: {exc}") from None
        start = self.path(path or ".")
        files = [start] if start.is_file() else list(self._walk(start))
        hits: list[str] = []
        for item in files:
            if glob and not (fnmatch.fnmatch(item.name, str(glob))
                             or fnmatch.fnmatch(str(item.relative_to(self.root)), str(glob))):
                continue
            try:
                real = item.resolve()
                if self.root not in real.parents or real.stat().st_size > 2_000_000:
                    continue
                text = real.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{item.relative_to(self.root)}:{number}: {line[:300]}")
                    if len(hits) >= 300:
                        return "\n".join(hits) + "\n… (more matches not shown)"
        return "\n".join(hits) or "(no matches)"

    def t_write_file(self, path: Any = None, content: Any = None, **_: Any) -> str:
        if not isinstance(content, str):
            raise ToolError("a `content` string is required")
        target = self.path(path, write=True)
        if target.is_dir():
            raise ToolError(f"{path} is a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {self.rel(target)} ({len(content)} characters)"

    def t_edit_file(self, path: Any = None, old_string: Any = None, new_string: Any = None,
                    replace_all: Any = False, **_: Any) -> str:
        if not isinstance(old_string, str) or not isinstance(new_string, str) or not old_string:
            raise ToolError("`old_string` (not empty) and `new_string` strings are required")
        target = self.path(path, write=True)
        if not target.is_file():
            raise ToolError(f"{path}: no such file (use write_file to create one)")
        text = target.read_text(encoding="utf-8")
        count = text.count(old_string)
        if count == 0:
            raise ToolError(f"old_string not found in {path}")
        if count > 1 and not replace_all:
            raise ToolError(f"old_string occurs {count} times in {path}: give more context or "
                            "set replace_all")
        target.write_text(text.replace(old_string, new_string) if replace_all
                          else text.replace(old_string, new_string, 1), encoding="utf-8")
        return f"edited {self.rel(target)} ({count if replace_all else 1} replacement(s))"

    # the shell and the report channel -------------------------------------------
    def t_run_command(self, command: Any = None, timeout: Any = None, **_: Any) -> str:
        return self.shell.run(command, timeout)

    def t_baton_report(self, status: Any = None, summary: Any = None, **extra: Any) -> str:
        text = summary if summary is not None else extra.get("reason") or extra.get("message")
        try:
            # The environment read afresh on every call: a stale attempt is refused.
            return agent_side.report_from_env(str(status or ""), None if text is None
                                           else str(text))
        except BatonError as exc:
            raise ToolError(exc.message if hasattr(exc, "message") else str(exc)) from None

    def t_baton_checkpoint(self, what: Any = None, evidence: Any = None, **_: Any) -> str:
        if not isinstance(what, str) or not what.strip():
            raise ToolError("say `what` is about to happen")
        try:
            code, message = agent_side.checkpoint_from_env(what,
                                                        str(evidence) if evidence else None)
        except BatonError as exc:
            raise ToolError(exc.message if hasattr(exc, "message") else str(exc)) from None
        verdict = {channel.GO: "GO", channel.STOP: "STOP", channel.UNDECIDED: "WAIT"}[code]
        return f"{verdict}: {message}"


"""The tool surface the model is offered: names, descriptions, JSON schemas and limits.

Both providers build their tool lists from `TOOL_SPECS`, so a tool is described once. Research
mode offers `READ_TOOLS` and the shell (`SHELL_TOOL`: tests, linters in its throwaway worktree;
not to the planner, which reads the person's own checkout); build mode adds `WRITE_TOOLS`.
A `ToolError`'s message goes back to the model as the tool's (error) result, and `summarize`
is the one-line log form of a call.
"""

from __future__ import annotations

from typing import Any

TOOL_OUTPUT_LIMIT = 30_000
READ_LIMIT = 100_000
COMMAND_TIMEOUT = 120
COMMAND_TIMEOUT_MAX = 1800


class ToolError(Exception):
    """A tool call that cannot be carried out; its message goes back to the model."""


def clip(text: str, limit: int = TOOL_OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n… [{len(text) - limit} characters cut] …\n" + text[-half:]


TOOL_SPECS: dict[str, dict[str, Any]] = {
    "read_file": {
        "description": "Read a text file in your worktree. Paths are relative to the worktree "
                       "root. Optional 1-based `offset` (first line) and `limit` (line count).",
        "schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "offset": {"type": "integer"},
            "limit": {"type": "integer"}}, "required": ["path"]},
    },
    "list_files": {
        "description": "List files under a directory of your worktree (recursively; .git is "
                       "skipped). Optional glob `pattern` on the relative path, e.g. '*.py'.",
        "schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "pattern": {"type": "string"}}},
    },
    "grep": {
        "description": "Search files of your worktree for a regular expression. Returns "
                       "path:line: text. Optional `path` (file or directory) and `glob`.",
        "schema": {"type": "object", "properties": {
            "pattern": {"type": "string"}, "path": {"type": "string"},
            "glob": {"type": "string"}}, "required": ["pattern"]},
    },
    "write_file": {
        "description": "Create or replace a file in your worktree with `content`.",
        "schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"]},
    },
    "edit_file": {
        "description": "Replace `old_string` with `new_string` in a file of your worktree. "
                       "`old_string` must occur exactly once unless `replace_all` is true.",
        "schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "old_string": {"type": "string"},
            "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}},
            "required": ["path", "old_string", "new_string"]},
    },
    "run_command": {
        "description": "Run a command in your worktree: `command` is an argv list, or a string "
                       "run with `sh -c`. Returns the exit status and output. `timeout` in "
                       f"seconds (default {COMMAND_TIMEOUT}).",
        "schema": {"type": "object", "properties": {
            "command": {"anyOf": [{"type": "string"},
                                  {"type": "array", "items": {"type": "string"}}]},
            "timeout": {"type": "integer"}}, "required": ["command"]},
    },
    "baton_report": {
        "description": "Report to Baton: status `done` (with a summary of what you did), "
                       "`failed` (with the reason) or `progress` (a short note). Reporting done "
                       "or failed is the ONLY way your task counts as finished.",
        "schema": {"type": "object", "properties": {
            "status": {"type": "string", "enum": ["done", "failed", "progress", "limited"]},
            "summary": {"type": "string"}}, "required": ["status", "summary"]},
    },
    "baton_checkpoint": {
        "description": "Ask before an irreversible step (migration, deletion, dependency "
                       "change). Say what is about to happen, with a dry run's output as `evidence`. "
                       "The answer says go ahead, stop, or not decided yet (end your turn).",
        "schema": {"type": "object", "properties": {
            "what": {"type": "string"}, "evidence": {"type": "string"}}, "required": ["what"]},
    },
}
READ_TOOLS = ("read_file", "list_files", "grep", "baton_report", "baton_checkpoint")
WRITE_TOOLS = ("write_file", "edit_file", "run_command")
SHELL_TOOL = "run_command"


def summarize(name: str, args: Any) -> str:
    """A short human description of one tool call, for the log."""
    if not isinstance(args, dict):
        return ""
    if name == "run_command":
        command = args.get("command")
        return " ".join(command) if isinstance(command, list) else str(command or "")[:160]
    if name == "baton_report":
        return f"{args.get('status')}: {str(args.get('summary') or '')[:120]}"
    if name == "baton_checkpoint":
        return str(args.get("what") or "")[:160]
    if name == "grep":
        return f"{args.get('pattern')!r} in {args.get('path') or '.'}"
    return str(args.get("path") or "")[:160]

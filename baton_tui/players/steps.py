"""An agent's work as readable steps, from its decoded output: what it said, each tool call
with its arguments summarised, commands with their exit status, files touched.

A `StepReader` wraps one player's decoder (`Player.step_reader()`), so each output format is
read only by its adapter's decoder; this module only says how each event reads as a step.
The raw output stays on disk untouched; this is only a way to read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from baton_tui.core.words import ReportStatus
from baton_tui.players.cli_events import one_line
from baton_tui.players.decoding import (
    AgentStarted,
    CommandRun,
    Decoder,
    Event,
    Failed,
    FileChange,
    Finished,
    Note,
    Reported,
    Said,
    ToolCall,
    ToolResult,
)


@dataclass(frozen=True)
class Step:
    """One thing an agent did. `kind`: said, tool, command, file, result, error, note."""

    kind: str
    text: str
    detail: str = ""
    ok: bool | None = None


ARG_KEYS = ("command", "cmd", "file_path", "filePath", "path", "pattern", "query", "url",
            "summary", "what", "description", "prompt")
EDITS = {"write", "edit", "multiedit", "write_file", "edit_file", "replace", "notebookedit",
         "apply_patch", "create_file"}
SHELLS = {"bash", "shell", "run_command", "run_shell_command", "exec_command"}
BATON_PREFIXES = ("mcp__baton__", "mcp_baton_", "baton__", "baton_baton_")


def short_name(name: str) -> str:
    """A tool's own name without the MCP server's prefix (`mcp__baton__baton_report` →
    `baton_report`; Goose's `developer__shell` → `shell`)."""
    for prefix in BATON_PREFIXES:
        if name.startswith(prefix):
            return "baton_" + name.removeprefix(prefix) if prefix == "baton_baton_" else \
                name.removeprefix(prefix)
    return name.rsplit("__", 1)[-1]


def is_shell(name: str) -> bool:
    return short_name(name).lower() in SHELLS


def args_summary(args: Any, limit: int = 120) -> str:
    """A tool call's arguments in a few words: the telling key's value, else the key names."""
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return one_line(args, limit)
    if not isinstance(args, dict):
        return one_line(args, limit) if args else ""
    for key in ARG_KEYS:
        value = args.get(key)
        if value:
            value = " ".join(map(str, value)) if isinstance(value, list) else value
            return one_line(value, limit)
    return ", ".join(sorted(map(str, args)))[:limit]


def tool_step(name: str, args: Any, ok: bool | None = None) -> Step:
    """A call as a step: shells become commands, writes and edits become files."""
    short = short_name(name)
    what = args_summary(args)
    if short.lower() in SHELLS:
        return Step("command", f"$ {what}", ok=ok)
    if short.lower() in EDITS:
        return Step("file", f"{short} {what}", ok=ok)
    return Step("tool", f"{short} {what}".strip(), ok=ok)


def tool_line(name: str, args: Mapping[str, Any] | str) -> str:
    """A call as the card's progress line: Baton's own tools by what they say."""
    short = short_name(name)
    if short in ("baton_report", "baton_checkpoint") and isinstance(args, Mapping):
        said = args.get("status") or one_line(args.get("what") or args.get("summary"), 100)
        return f"{short} {said}".strip()
    return tool_step(name, args).text


def said_step(text: str) -> Step:
    """Text as a step: its first line, the rest as detail."""
    text = text.strip()
    first = one_line(text, 200)
    rest = text[len(first):].strip() if len(text) > len(first) else ""
    return Step("said", first, one_line(rest, 200) if rest else "")


def started_text(event: AgentStarted) -> str:
    if event.provider:
        return " ".join(["started ·", event.provider, event.model or "?"])
    return f"started · model {event.model}" if event.model else "started"


def finished_text(event: Finished) -> str:
    return f"finished ({event.summary})" if event.summary else "finished"


def failure_text(error: str | None, limit: int = 160) -> str:
    return "error: " + one_line(error or "error", limit)


def steps_of(event: Event) -> list[Step]:
    """How one decoded event reads in the task detail (most events: one step, or none)."""
    if isinstance(event, AgentStarted):
        return [Step("note", started_text(event))]
    if isinstance(event, Said):
        return [said_step(event.text)] if event.text.strip() else []
    if isinstance(event, ToolCall):
        step = tool_step(event.name, event.args, ok=event.ok)
        detail = one_line(event.output, 160) if event.ok is False or step.kind == "command" \
            else ""
        return [Step(step.kind, step.text, detail, step.ok)]
    if isinstance(event, ToolResult):
        if not event.ok:
            return [Step("error", f"{short_name(event.name)} failed: "
                         f"{one_line(event.output, 140)}", ok=False)]
        return [Step("result", "exit 0", one_line(event.output, 140), ok=True)] \
            if is_shell(event.name) else []
    if isinstance(event, CommandRun):
        if event.exit_code is None:
            return [Step("command", f"$ {one_line(event.command, 140)}", "running")]
        return [Step("result", f"$ {one_line(event.command, 100)} → exit {event.exit_code}",
                     one_line(event.output, 160), ok=event.exit_code == 0)]
    if isinstance(event, FileChange):
        return [Step("file", f"{kind} {path}") for kind, path in event.changes]
    if isinstance(event, Finished):
        return [Step("result", finished_text(event), ok=True) if event.ok else
                Step("error", failure_text(event.error), ok=False)]
    if isinstance(event, Failed):
        return [Step("error", f"{event.label}: {one_line(event.message, 160)}", ok=False)]
    if isinstance(event, Reported):
        return [Step("result", f"report: {event.status} {one_line(event.text, 160)}".strip(),
                     ok=event.status == ReportStatus.DONE)]
    if isinstance(event, Note):
        return [Step(event.kind, one_line(event.text, 200))] if event.text.strip() else []
    return []   # session ids, usage, limits: facts for the outcome, not steps


class StepReader:
    """Reads one output stream of one player, line by line, as steps."""

    def __init__(self, decoder: Decoder):
        self.decoder = decoder

    def feed(self, line: str) -> list[Step]:
        try:
            events = self.decoder.feed(line)
        except (AttributeError, TypeError, ValueError, KeyError):  # an odd shape: show it raw
            text = line.strip()
            return [Step("note", one_line(text, 200))] if text else []
        return [step for event in events for step in steps_of(event)]

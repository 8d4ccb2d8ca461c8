"""An agent's work as readable steps, from its own event stream: what it said, each tool call
with its arguments summarised, commands with their exit status, files touched.

One small dispatch by player name: `reader(player)` returns a fresh `StepReader` whose
`feed(line)` turns one raw output line into zero or more `Step`s. A player without a parser
of its own gets the generic one (common JSON keys, or the plain line as it is). Adapters add
theirs with `register(name, factory)`, the factory making one stateful parser per stream
(Claude Code's results name the call they answer, so the parser remembers the calls).
The raw output stays on disk untouched; this is only a way to read it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from baton_tui.players.cli_events import event_of, one_line


@dataclass(frozen=True)
class Step:
    """One thing an agent did. `kind`: said, tool, command, file, result, error, note."""

    kind: str
    text: str
    detail: str = ""
    ok: bool | None = None


Parser = Callable[[dict], list[Step]]
PARSERS: dict[str, Callable[[], Parser]] = {}
ARG_KEYS = ("command", "cmd", "file_path", "filePath", "path", "pattern", "query", "url",
            "summary", "what", "description", "prompt")
EDITS = {"write", "edit", "multiedit", "write_file", "edit_file", "replace", "notebookedit",
         "apply_patch", "create_file"}


def register(name: str, factory: Callable[[], Parser]) -> None:
    """Give player `name` its own parser (a factory: one parser per output stream)."""
    PARSERS[name] = factory


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
    short = name.removeprefix("mcp__baton__").removeprefix("mcp_baton_")
    what = args_summary(args)
    if short.lower() in ("bash", "shell", "run_command", "run_shell_command", "exec_command"):
        return Step("command", f"$ {what}", ok=ok)
    if short.lower() in EDITS:
        return Step("file", f"{short} {what}", ok=ok)
    return Step("tool", f"{short} {what}".strip(), ok=ok)


def _said(text: Any) -> list[Step]:
    text = str(text or "").strip()
    if not text:
        return []
    first = one_line(text, 200)
    rest = text[len(first):].strip() if len(text) > len(first) else ""
    return [Step("said", first, one_line(rest, 200) if rest else "")]


# Claude Code (and Amp): stream-json ----------------------------------------------------------
def claude() -> Parser:
    calls: dict[str, str] = {}

    def parse(event: dict) -> list[Step]:
        kind = event.get("type")
        message = event.get("message") if isinstance(event.get("message"), dict) else {}
        blocks = [b for b in message.get("content") or [] if isinstance(b, dict)] \
            if isinstance(message.get("content"), list) else []
        if kind == "system" and event.get("subtype") == "init":
            return [Step("note", f"started · model {event.get('model') or '?'}")]
        if kind == "system" and event.get("subtype") == "api_retry":
            return [Step("error", f"API retry {event.get('attempt')}/{event.get('max_retries')} "
                                  f"({event.get('error_status') or event.get('error')})")]
        if kind == "assistant":
            steps: list[Step] = []
            for block in blocks:
                if block.get("type") == "text":
                    steps += _said(block.get("text"))
                elif block.get("type") == "tool_use":
                    calls[str(block.get("id"))] = str(block.get("name") or "tool")
                    steps.append(tool_step(str(block.get("name") or "tool"),
                                           block.get("input") or {}))
            return steps
        if kind == "user":
            steps = []
            for block in blocks:
                if block.get("type") != "tool_result":
                    continue
                name = calls.get(str(block.get("tool_use_id")), "tool")
                content = block.get("content")
                if isinstance(content, list):
                    content = " ".join(str(c.get("text", "")) for c in content
                                       if isinstance(c, dict))
                if block.get("is_error"):
                    steps.append(Step("error", f"{name} failed: {one_line(content, 140)}",
                                      ok=False))
                elif name == "Bash":
                    steps.append(Step("result", "exit 0", one_line(content, 140), ok=True))
            return steps
        if kind == "result":
            if event.get("is_error") or event.get("subtype") != "success":
                return [Step("error", "ended with an error: "
                             + one_line(event.get("result") or event.get("subtype"), 160),
                             ok=False)]
            return [Step("result", f"finished after {event.get('num_turns', '?')} turns",
                         ok=True)]
        return []

    return parse


# Codex: exec --json -------------------------------------------------------------------------
def codex() -> Parser:
    def parse(event: dict) -> list[Step]:
        kind = event.get("type")
        item = event.get("item") if isinstance(event.get("item"), dict) else {}
        itype = item.get("type")
        if kind == "thread.started":
            return [Step("note", "started")]
        if kind == "turn.failed":
            return [Step("error", "failed: " + one_line((event.get("error") or {})
                                                        .get("message"), 160), ok=False)]
        if kind == "error":
            return [Step("error", one_line(event.get("message"), 160), ok=False)]
        if kind == "item.started" and itype == "command_execution":
            return [Step("command", f"$ {one_line(item.get('command'), 140)}", "running")]
        if kind == "item.started" and itype == "mcp_tool_call":
            return [tool_step(str(item.get("tool") or "mcp tool"), item.get("arguments") or {})]
        if kind != "item.completed":
            return []
        if itype == "agent_message":
            return _said(item.get("text"))
        if itype == "command_execution":
            code = item.get("exit_code")
            return [Step("result", f"$ {one_line(item.get('command'), 100)} → exit {code}",
                         one_line(item.get("aggregated_output"), 160), ok=code == 0)]
        if itype == "file_change":
            return [Step("file", f"{c.get('kind', 'edit')} {c.get('path')}")
                    for c in item.get("changes") or [] if isinstance(c, dict)]
        if itype == "mcp_tool_call" and item.get("status") == "failed":
            return [Step("error", f"{item.get('tool')} failed: "
                         + one_line(item.get("error") or item.get("result"), 140), ok=False)]
        if itype == "error":
            return [Step("note", "warning: " + one_line(item.get("message"), 160))]
        if itype == "reasoning":
            return [Step("note", "thinking: " + one_line(item.get("text"), 160))]
        return []

    return parse


# Baton's native loop (anthropic, openai) ----------------------------------------------------
def native() -> Parser:
    def parse(event: dict) -> list[Step]:
        kind = event.get("type")
        if kind == "init":
            return [Step("note", f"started · {event.get('provider')} {event.get('model')}")]
        if kind == "text":
            return _said(event.get("text"))
        if kind == "tool":
            name, ok = str(event.get("name") or "tool"), bool(event.get("ok", True))
            step = tool_step(name, {"summary": event.get("summary") or ""}, ok=ok)
            output = one_line(event.get("output"), 140)
            return [Step(step.kind, step.text, output if not ok or step.kind == "command"
                         else "", ok)]
        if kind == "error":
            return [Step("error", f"API error {event.get('status') or ''}: "
                                  f"{one_line(event.get('message'), 140)}", ok=False)]
        if kind == "result":
            return [Step("result", f"finished ({event.get('stop') or 'end'})", ok=True)]
        return []

    return parse


def generic() -> Parser:
    """Any other JSON stream: its text and its tool calls by the usual key names."""
    def parse(event: dict) -> list[Step]:
        name = event.get("tool_name") or event.get("tool") or event.get("name")
        if name and isinstance(name, str):
            args = event.get("parameters") or event.get("input") or event.get("arguments") \
                or (event.get("part") or {}).get("state", {}).get("input") or {}
            return [tool_step(name, args)]
        for key in ("text", "message", "content", "result"):
            value = event.get(key)
            if isinstance(value, str) and value.strip():
                return _said(value)
        return []

    return parse


register("claude-code", claude)
register("amp", claude)
register("codex", codex)
register("anthropic", native)
register("openai", native)


class StepReader:
    """Reads one output stream of one player, line by line."""

    def __init__(self, player: str):
        self.player = player
        self.parse = (PARSERS.get(player) or generic)()

    def feed(self, line: str) -> list[Step]:
        event = event_of(line)
        if event is None:
            text = line.strip()
            return [Step("note", one_line(text, 200))] if text else []
        try:
            return self.parse(event)
        except (AttributeError, TypeError, ValueError):  # an unexpected shape: show it raw
            return [Step("note", one_line(line, 200))]


def reader(player: str) -> StepReader:
    """A fresh reader for `player`'s output (adapters registered by importing them)."""
    import baton_tui.players.builtin  # noqa: F401  (their `register` calls)

    return StepReader(player)

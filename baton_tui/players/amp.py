"""Amp (`amp`, npm @ampcode/cli): `amp -x PROMPT --stream-json`, written from Amp's documented
headless flags and its Claude-Code-like stream-json (the Linux build cannot run here).

Build: `--dangerously-allow-all` in the task's worktree. Research: a per-attempt settings file
(`--settings-file`, in the attempt's folder) disables Amp's edit, create and shell tools, so
only reading is left, and the report goes over MCP. Baton's report tools are wired for this run
only with `--mcp-config '{"baton": {...}}'`; the person's own settings are never edited.
Amp picks its model itself; a task's "model" names Amp's mode (`smart`, `rush`).

Events: `system/init` (session_id — Amp's thread id), `assistant` (text and tool_use blocks,
usage), `user` (tool_result), and the final `result` (`subtype`, `is_error`, `result`,
`duration_ms`, `num_turns`, `usage`). A thread continues with `amp threads continue <id>`.
Out of credits or rate limited, the result's error says so; a reset it names pauses the task.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from baton_tui.players.base import AttemptContext, Launch, Outcome
from baton_tui.players.cli_events import (
    ARGV_PROMPT_LIMIT, claude_reset, codex_reset, events, float_of, int_of, mcp_command, mcp_env,
    one_line,
)
from baton_tui.players.kinds import CliPlayer

RESEARCH_DISABLED = ["Bash", "edit_file", "create_file", "undo_edit", "format_file"]
_LIMIT_WORDS = ("usage limit", "out of credits", "Insufficient credit", "hit your limit")
_THROTTLE_WORDS = ("rate limit", "429", "Too Many Requests")


class AmpPlayer(CliPlayer):
    """Sourcegraph's Amp CLI."""

    name = "amp"
    binary = "amp"
    key_vars = ("AMP_API_KEY",)
    credential_files = (".local/share/amp/secrets.json", ".config/amp/secrets.json")
    install = "npm i -g @ampcode/cli, then `amp login` (or export AMP_API_KEY)"
    models = ("smart", "rush")     # Amp's modes (`--mode`): it chooses the model itself
    efforts = ()
    research_shell = False

    def _private(self, path: Path, value: object) -> Path:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(value, fh, indent=1)
        return path

    def _argv(self, ctx: AttemptContext, head: list[str], message: str) -> Launch:
        command = mcp_command()
        mcp = {"baton": {"command": command[0], "args": command[1:], "env": mcp_env(ctx.env)}}
        argv = [*head, "--stream-json", "--mcp-config", json.dumps(mcp)]
        if ctx.mode == "research":
            settings = self._private(ctx.attempt_dir / "amp-settings.json",
                                     {"amp.tools.disable": RESEARCH_DISABLED})
            argv += ["--settings-file", str(settings)]
        else:
            argv += ["--dangerously-allow-all"]
        if ctx.model:
            argv += ["--mode", ctx.model]
        if len(message.encode("utf-8")) > ARGV_PROMPT_LIMIT:
            return Launch([*argv, "-x"], stdin_prompt=True)   # `-x` reads stdin without text
        return Launch([*argv, "-x", message])

    def _exe(self, ctx: AttemptContext) -> str:
        return ctx.bin or self.bin or self.executable() or self.binary or "amp"

    def launch(self, ctx: AttemptContext) -> Launch:
        return self._argv(ctx, [self._exe(ctx)], ctx.prompt)

    def resume(self, ctx: AttemptContext) -> Launch | None:
        if not ctx.session_id:
            return None
        message = (ctx.resume_message or "Continue the task where you left off.").strip()
        return self._argv(ctx, [self._exe(ctx), "threads", "continue", ctx.session_id], message)

    def progress(self, line: str) -> str | None:
        event = next(iter(events(line)), None)
        if event is None:
            return None
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            return "amp started"
        if kind == "assistant":
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    args = block.get("input") or {}
                    what = args.get("cmd") or args.get("command") or args.get("path") or ""
                    return one_line(f"{block.get('name')} {what}", 160)
                if isinstance(block, dict) and block.get("type") == "text":
                    return one_line(block.get("text"))
        if kind == "result":
            return ("error: " + one_line(event.get("error") or event.get("result"), 140)
                    if event.get("is_error") else f"finished ({event.get('num_turns', '?')} turns)")
        return None

    def outcome(self, text: str) -> Outcome:
        out = Outcome()
        result = None
        for event in events(text):
            if event.get("session_id"):
                out.session_id = str(event["session_id"])
            if event.get("type") == "assistant":
                usage = (event.get("message") or {}).get("usage") or {}
                out.tokens += int_of(usage.get("input_tokens")) + int_of(usage.get("output_tokens"))
            elif event.get("type") == "result":
                result = event
        if result is None:
            return out
        out.final_text = result.get("result") if isinstance(result.get("result"), str) else None
        out.cost = float_of(result.get("total_cost_usd"))
        out.success_event = not result.get("is_error") and result.get("subtype") == "success"
        if out.success_event:
            return out
        message = str(result.get("error") or result.get("result") or result.get("subtype"))
        out.error = one_line(message, 300)
        if any(w.lower() in message.lower() for w in _LIMIT_WORDS):
            out.limit_until = claude_reset(message) or codex_reset(message)
        elif any(w.lower() in message.lower() for w in _THROTTLE_WORDS):
            out.rate_limited = True
        return out

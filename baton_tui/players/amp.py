"""Amp (`amp`, npm @ampcode/cli): `amp -x PROMPT --stream-json`, written from Amp's documented
headless flags and its Claude-Code-like stream-json (the Linux build cannot run here).

Every run gets a per-attempt settings file (`--settings-file`, 0600, in the attempt's folder):
the person's own settings (read, never edited) plus Baton's report tools as `amp.mcpServers`
.baton — in a file, not in `--mcp-config` on argv, because the server's environment holds the
attempt's nonce, which must not show in `ps` or in the store. Build: `--dangerously-allow-all`
in the task's worktree. Research: the file also lists Amp's edit, create and shell tools under
`amp.tools.disable`, so only reading is left, and the report goes over MCP.
Amp picks its model itself; a task's "model" names Amp's mode (`smart`, `rush`).

Events: `system/init` (session_id — Amp's thread id), `assistant` (text and tool_use blocks,
usage), `user` (tool_result), and the final `result` (`subtype`, `is_error`, `result`,
`duration_ms`, `num_turns`, `usage`). A thread continues with `amp threads continue <id>`.
Out of credits or rate limited, the result's error says so; a reset it names (limit_words.py)
pauses the task until then.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Launch, Outcome
from baton_tui.players.cli_events import (
    ARGV_PROMPT_LIMIT, events, float_of, int_of, mcp_command, mcp_env, one_line,
)
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limit_words import is_limit, is_throttle, reset_in

RESEARCH_DISABLED = ["Bash", "edit_file", "create_file", "undo_edit", "format_file"]


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

    def persons_settings(self) -> dict:
        """The person's Amp settings (AMP_SETTINGS_FILE or ~/.config/amp/settings.json)."""
        env = {**os.environ, **self.env}
        home = Path(env.get("HOME") or Path.home())
        path = Path(env.get("AMP_SETTINGS_FILE") or
                    Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "amp" / "settings.json")
        try:
            found = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return found if isinstance(found, dict) else {}

    def _settings(self, ctx: AttemptContext) -> Path:
        command = mcp_command()
        settings = self.persons_settings()
        servers = dict(settings.get("amp.mcpServers") or {})
        servers["baton"] = {"command": command[0], "args": command[1:], "env": mcp_env(ctx.env)}
        settings["amp.mcpServers"] = servers
        if ctx.mode == Mode.RESEARCH:
            settings["amp.tools.disable"] = sorted({*(settings.get("amp.tools.disable") or []),
                                                    *RESEARCH_DISABLED})
        return self._private(ctx.attempt_dir / "amp-settings.json", settings)

    def _argv(self, ctx: AttemptContext, head: list[str], message: str) -> Launch:
        argv = [*head, "--stream-json", "--settings-file", str(self._settings(ctx))]
        if ctx.mode != Mode.RESEARCH:
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
        if is_limit(message):
            out.limit_until = reset_in(message)
            out.limited = out.limit_until is None
        elif is_throttle(message):
            out.limit_until = reset_in(message)
            out.rate_limited = out.limit_until is None
        return out

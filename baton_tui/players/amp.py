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
Out of credits or rate limited, the result's error says so; a reset it names (limits.py)
pauses the task until then.

Written from the documentation of Amp 0.0.1790142911 (the npm build, whose Linux binary talks
only to Amp's own server): never run against a real Amp session here;
tests/agents/amp_replay.py replays that version's formats.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Launch
from baton_tui.players.claude_code import ClaudeDecoder
from baton_tui.players.cli_events import ARGV_PROMPT_LIMIT, int_of, mcp_command, mcp_env
from baton_tui.players.decoding import Decoder, Event, LimitHit
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limits import limit_in

RESEARCH_DISABLED = ["Bash", "edit_file", "create_file", "undo_edit", "format_file"]


class AmpPlayer(CliPlayer):
    """Sourcegraph's Amp CLI."""

    name = "amp"
    binary = "amp"
    key_vars = ("AMP_API_KEY",)
    credential_files = (".local/share/amp/secrets.json", ".config/amp/secrets.json")
    install = "npm i -g @ampcode/cli, then `amp login` (or export AMP_API_KEY)"
    models = ("smart", "rush")     # Amp's modes (`--mode`): it chooses the model itself
    replayed_version = "0.0.1790142911"
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

    def decoder(self) -> Decoder:
        return AmpDecoder()


class AmpDecoder(ClaudeDecoder):
    """Amp's stream-json follows Claude Code's; its limits are its provider's words, in the
    final result's error (limits.py reads any wording)."""

    agent = "amp"

    def limit_in_text(self, text: str) -> list[Event]:
        return []

    def limit_in_error(self, message: str, status_429: bool) -> list[Event]:
        hit = limit_in(message)
        return [LimitHit(hit[0], hit[1], message)] if hit else []

    @staticmethod
    def usage_tokens(usage: dict[str, Any]) -> int:
        return int_of(usage.get("input_tokens")) + int_of(usage.get("output_tokens"))

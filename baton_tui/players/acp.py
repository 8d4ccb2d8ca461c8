"""ACP players: any agent that speaks the Agent Client Protocol, Baton being its client.

`[players.custom.NAME] protocol = "acp"` with `command` (the agent's ACP argv) makes one; the
built-in profiles `gemini-acp` (Gemini CLI `--acp`) and `opencode-acp` (`opencode acp`) are the
same adapter with their CLI's command, sign-in and models. The attempt runs the bridge
(acp_bridge.py) in the worktree, which starts the agent and prints JSON lines; `AcpDecoder`
(decoding.py, where any log's reader finds it) reads them into the events every player's
output becomes: tool calls as readable steps, the agent's plan entries as progress, usage as
tokens and cost, refusals as the task's flag.
"""

from __future__ import annotations

import json
import os
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.paths import own_module
from baton_tui.players.base import AttemptContext, Detection, Launch, Player
from baton_tui.players.decoding import AcpDecoder
from baton_tui.players.gemini import GeminiPlayer, quota_limit
from baton_tui.players.gemini_home import build_home
from baton_tui.players.opencode import OpenCodePlayer

BRIDGE = "baton_tui.players.acp_bridge"


class AcpPlayer(Player):
    """An ACP agent started by `command` in the worktree, driven by the bridge."""

    efforts = ()
    checkpoints = True
    research = True
    mcp_in_session = True    # Baton's report tools handed to the session (`mcpServers`)

    def __init__(self, name: str, command: list[str], env: dict[str, str] | None = None,
                 max_parallel: int | None = None, models: list[str] | None = None,
                 start_timeout: float = 120.0):
        super().__init__(None, env)
        self.name = name
        self.command = list(command)
        self.models = tuple(models) if models else None
        self.max_parallel = max_parallel
        self.start_timeout = start_timeout

    def detect(self) -> Detection:
        return Detection(self.name, True, "", version="acp", path=self.command[0])

    def agent_argv(self, ctx: AttemptContext) -> list[str]:
        """The agent's own ACP command line (a profile adds its model flag)."""
        return list(self.command)

    def agent_env(self, ctx: AttemptContext) -> dict[str, str]:
        return {"BATON_MODEL": ctx.model or "", "BATON_EFFORT": ctx.effort or "",
                "BATON_MODE": ctx.mode, "BATON_PROMPT_FILE": str(ctx.prompt_path)}

    def launch(self, ctx: AttemptContext) -> Launch:
        return self._bridge(ctx, None, ctx.prompt_path)

    def resume(self, ctx: AttemptContext) -> Launch | None:
        message = ctx.attempt_dir / "resume-message.txt"
        message.write_text(ctx.resume_message or ctx.prompt, encoding="utf-8")
        return self._bridge(ctx, ctx.session_id, message)

    def _bridge(self, ctx: AttemptContext, session: str | None, prompt: Any) -> Launch:
        argv = own_module(BRIDGE, "--root", str(ctx.worktree), "--prompt-file", str(prompt),
                          "--start-timeout", f"{self.start_timeout:g}")
        if ctx.mode == Mode.RESEARCH:
            argv.append("--research")
        if session:
            argv += ["--session", session]
        if not self.mcp_in_session:
            argv.append("--no-mcp")
        return Launch([*argv, "--", *self.agent_argv(ctx)], {**self.env, **self.agent_env(ctx)})

    def decoder(self) -> AcpDecoder:
        return AcpDecoder()

    def concern(self, line: str) -> str | None:
        """The bridge's one `acp.contained` line: what the task is flagged for."""
        if '"acp.contained"' not in line:
            return None
        try:
            event = json.loads(line)
        except ValueError:
            return None
        return str(event.get("detail")) if isinstance(event, dict) else None


class CliAcp(AcpPlayer):
    """A built-in CLI as an ACP agent: its own adapter's detection (installed, signed in) and
    model catalog, its ACP command line, and the `[players.NAME]` settings of this profile."""

    cli_class: type[Player]
    acp_args: tuple[str, ...] = ()

    def __init__(self, bin_path: str | None = None, env: dict[str, str] | None = None,
                 extra_models: list[str] | None = None):
        self.cli = self.cli_class(bin_path, env, extra_models)
        super().__init__(self.name, [bin_path or self.cli.binary or "", *self.acp_args], env)
        self.bin = bin_path
        self.binary = self.cli.binary
        self.models = self.cli.models
        self.default_model = self.cli.default_model
        self.extra_models = list(extra_models or [])

    def detect(self) -> Detection:
        found = self.cli.detect()
        found.name = self.name
        return found

    def catalog(self) -> tuple[str, ...] | None:
        return self.cli.catalog()

    def model_problem(self, model: str | None) -> str | None:
        problem = self.cli.model_problem(model)
        return problem.replace(repr(self.cli.name), repr(self.name)) if problem else None

    def model_unchecked(self, model: str | None) -> str | None:
        return self.cli.model_unchecked(model)

    def agent_argv(self, ctx: AttemptContext) -> list[str]:
        return [self.cli.executable() or self.command[0], *self.acp_args]


class GeminiAcp(CliAcp):
    """Gemini CLI as an ACP agent (`gemini --acp --skip-trust`), with its own sign-in and
    models. Its `baton` MCP server comes from the per-attempt settings its headless profile
    uses (trusted, so its tools are offered without `--yolo`), not from the session: Gemini
    offers an untrusted server's tools to no one."""

    name = "gemini-acp"
    cli_class = GeminiPlayer
    acp_args = ("--acp", "--skip-trust")
    mcp_in_session = False

    def agent_argv(self, ctx: AttemptContext) -> list[str]:
        return [*super().agent_argv(ctx), *(["--model", ctx.model] if ctx.model else [])]

    def decoder(self) -> AcpDecoder:
        return AcpDecoder(quota_limit)     # a daily quota waits for midnight Pacific

    def agent_env(self, ctx: AttemptContext) -> dict[str, str]:
        assert isinstance(self.cli, GeminiPlayer)
        home = build_home(ctx.attempt_dir, {**os.environ, **self.env}, self.cli._settings(ctx))
        return {**super().agent_env(ctx), "GEMINI_CLI_HOME": str(home),
                "PWD": str(ctx.worktree)}


class OpenCodeAcp(CliAcp):
    """OpenCode as an ACP agent (`opencode acp`); it follows $PWD, so that is the worktree."""

    name = "opencode-acp"
    cli_class = OpenCodePlayer
    acp_args = ("acp",)

    def agent_env(self, ctx: AttemptContext) -> dict[str, str]:
        return {**super().agent_env(ctx), "PWD": str(ctx.worktree)}

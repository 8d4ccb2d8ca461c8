"""Profiles of OpenCode and Gemini CLI for the parametrised real-player suite.

Kept beside `real_players` (which lists them in PLAYERS) so that module stays small. Both are
npm builds `.ci/run` pins. "The person" has each CLI configured the way its own docs say:
OpenCode with a custom OpenAI-compatible provider in ~/.config/opencode/opencode.json whose
base URL is the scripted server; Gemini CLI with `gemini-api-key` auth in ~/.gemini/settings.json
and GEMINI_API_KEY plus GOOGLE_GEMINI_BASE_URL in the environment. Nothing reaches another host:
OpenCode's models.dev fetch is off (OPENCODE_DISABLE_MODELS_FETCH), its default plugins are
off and its plugin install finds npm offline (npm_config_offline), the same knobs a person
behind a proxy would use; its snapshots (undo history) are off, as many people have them.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from baton_tui.demo.server import ScriptedServer
from helpers.real_cli_kit import GEMINI, NPM_BIN, OPENCODE
from helpers.real_players import RealPlayer, json_lines


def attempt_outputs() -> list[str]:
    """Each attempt's output, in attempt order (the suite's BATON_HOME)."""
    home = Path(os.environ["BATON_HOME"])
    logs = sorted(home.glob("runs/**/output.log"), key=lambda p: int(p.parent.name.rsplit("-", 1)[-1]))
    return [p.read_text(errors="replace") for p in logs]


class OpenCode(RealPlayer):
    """OpenCode: OpenAI Chat Completions. Research runs as Baton's own agent, whose denied
    permissions take write, edit and bash away. On a 429 OpenCode would retry by itself,
    silently; Baton stops it at the first logged `stream error` (the turns carry a long
    Retry-After, so OpenCode's own retry never comes first). Its usage limit is a provider's
    "Please try again in 3s", read relative to the logged error's time: hence the slack."""

    name = "opencode"
    cli = OPENCODE
    protocol = "chat"
    build_tools = frozenset({"write", "bash", "baton_baton_report"})
    research_tools = frozenset({"read", "bash", "baton_baton_report"})
    research_withheld = frozenset({"write", "edit", "task"})
    refusals = ("unavailable tool",)
    refused_turns = (2,)          # research: its write is refused; its shell runs
    reset_slack = 30
    HOLD = {"retry-after": "60"}   # OpenCode's own retry waits a minute: Baton stops it first

    def env(self, server: ScriptedServer, **extra: str) -> dict[str, str]:
        config = Path(os.environ["XDG_CONFIG_HOME"]) / "opencode"
        config.mkdir(parents=True, exist_ok=True)
        (config / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json",
            "provider": {"scripted": {
                "npm": "@ai-sdk/openai-compatible", "name": "Scripted",
                "options": {"baseURL": f"{server.url}/v1", "apiKey": "scripted"},
                "models": {"scripted-model": {"name": "Scripted", "tool_call": True,
                                              "reasoning": True}}}},
            "model": "scripted/scripted-model", "autoupdate": False, "share": "disabled",
            "snapshot": False}))
        return {
            "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "npm_config_offline": "true",
            # an offline person's quick start: no default plugins fetched, no file watcher
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_EXPERIMENTAL_DISABLE_FILEWATCHER": "1",
            **extra,
        }

    def write(self, path: Path, content: str) -> dict:
        return {"tool": "write", "input": {"filePath": str(path), "content": content}}

    def shell(self, command: str) -> dict:
        return {"tool": "bash", "input": {"command": command, "description": "Run a command"}}

    def read(self, path: Path) -> dict:
        return {"tool": "read", "input": {"filePath": str(path)}}

    def report(self, status: str, summary: str) -> dict:
        return {"tool": "baton_baton_report", "input": {"status": status, "summary": summary}}

    def effort(self, request: dict) -> str | None:
        return request.get("reasoning_effort")

    def throttled(self, attempts: int) -> list[dict]:
        return [{"error": 429, "headers": self.HOLD}] * attempts

    def arrange_usage_limit(self, server, env, tmp, resets_at):
        server.add_turns([
            self.shell("echo started"),
            {"error": 429, "headers": self.HOLD, "body": {"error": {
                "message": "Usage limit reached. Please try again in 3s.",
                "type": "usage_limit_reached", "code": "usage_limit_reached"}}},
            self.shell("printf 'after the reset\\n' > limit.txt"),
            self.shell('baton report done --summary "finished after the reset"'),
            {"text": "Done."},
        ])

    def sessions(self, logs: str) -> list[str]:
        found = []
        for output in attempt_outputs():
            ids = [e["sessionID"] for e in json_lines(output) if e.get("sessionID")]
            found += ids[:1]
        return found


class Gemini(RealPlayer):
    """Gemini CLI: Gemini `streamGenerateContent`. Research runs in the default approval mode,
    where a headless run is offered no write or shell tool, under a deny policy. Its usage
    limit is Google's quota error with a RetryInfo delay; Gemini CLI would wait by itself and
    says so on stderr, where Baton stops it and reads the delay (relative to when it stopped
    it: hence the slack)."""

    name = "gemini"
    cli = GEMINI
    protocol = "gemini"
    build_tools = frozenset({"write_file", "run_shell_command", "mcp_baton_baton_report"})
    research_tools = frozenset({"read_file", "run_shell_command", "mcp_baton_baton_report"})
    research_withheld = frozenset({"write_file", "replace"})
    refusals = ("not found",)
    refused_turns = (2,)          # research: its write is refused; its shell runs
    reset_slack = 30

    def env(self, server: ScriptedServer, **extra: str) -> dict[str, str]:
        gemini = Path(os.environ["HOME"]) / ".gemini"
        gemini.mkdir(exist_ok=True)
        (gemini / "settings.json").write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": False}, "telemetry": {"enabled": False}}))
        return {
            "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "GEMINI_API_KEY": "scripted",
            "GOOGLE_GEMINI_BASE_URL": server.url,
            **extra,
        }

    def write(self, path: Path, content: str) -> dict:
        return {"tool": "write_file", "input": {"file_path": str(path), "content": content}}

    def shell(self, command: str) -> dict:
        return {"tool": "run_shell_command",
                "input": {"command": command, "description": "Run a command"}}

    def read(self, path: Path) -> dict:
        return {"tool": "read_file", "input": {"file_path": str(path)}}

    def report(self, status: str, summary: str) -> dict:
        return {"tool": "mcp_baton_baton_report", "input": {"status": status, "summary": summary}}

    def read_seen(self, turns: dict[int, dict], logs: str, needle: str) -> bool:
        """Gemini's stream shows no file content: it is in the function response sent back."""
        return needle in json.dumps(turns[1]["json"]["contents"][-1:])

    def effort(self, request: dict) -> str | None:
        thinking = (request.get("generationConfig") or {}).get("thinkingConfig") or {}
        if thinking.get("thinkingLevel"):
            return str(thinking["thinkingLevel"]).lower()
        return {1024: "low", 8192: "medium", 24576: "high"}.get(thinking.get("thinkingBudget"))

    def arrange_usage_limit(self, server, env, tmp, resets_at):
        delay = max(1, resets_at - int(time.time()))
        quota = {"error": {
            "code": 429, "status": "RESOURCE_EXHAUSTED",
            "message": f"You have exhausted your capacity on this model. Your quota will reset "
                       f"after {delay}s.",
            "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                         "reason": "QUOTA_EXHAUSTED", "domain": "cloudcode-pa.googleapis.com"},
                        {"@type": "type.googleapis.com/google.rpc.RetryInfo",
                         "retryDelay": f"{delay}s"}]}}
        server.add_turns([
            self.shell("echo started"),
            {"error": 429, "body": quota},
            self.shell("printf 'after the reset\\n' > limit.txt"),
            self.shell('baton report done --summary "finished after the reset"'),
            {"text": "Done."},
        ])

    def sessions(self, logs: str) -> list[str]:
        return [e["session_id"] for e in json_lines(logs) if e.get("type") == "init"]


OPENCODE_PLAYER = OpenCode()
GEMINI_PLAYER = Gemini()

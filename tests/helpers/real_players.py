"""One profile per real agent CLI, for the parametrised suite in tests/test_real_players.py.

A profile says how "the person" points the CLI at Baton's scripted model server (environment
and the CLI's own config file in the throwaway HOME), how the scripted model asks that CLI for
its tools (write a file, run a shell command, read a file, report to Baton over MCP), which tool
names the CLI offers the model in a build task and in a read-only research task, and how its
usage limit is produced and recognised. Adding a player (opencode, gemini, aider …) is one more
subclass here and one more entry in PLAYERS: every shared scenario then runs for it too.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

from baton_tui.demo.server import ScriptedServer
from helpers.real_cli_kit import CLAUDE, CODEX, NPM_BIN, RealCLI, require_cli

AGENTS = Path(__file__).resolve().parents[1] / "agents"


def tool_names(request: dict) -> set[str]:
    """The tool names a model request offers, namespaced tools' members included."""
    names: set[str] = set()
    for tool in request.get("tools") or []:
        if tool.get("name"):
            names.add(tool["name"])
        names |= tool_names(tool)
    return names


def json_lines(text: str) -> list[dict]:
    """The JSON objects among an output's lines (CLIs' event streams)."""
    found = []
    for line in text.splitlines():
        if line.startswith("{"):
            try:
                found.append(json.loads(line))
            except ValueError:
                pass
    return found


def last_input(record: dict) -> str:
    """The newest message of a recorded request (where a tool's result comes back), as text."""
    body = record.get("json") or {}
    items = body.get("messages") or body.get("input") or []
    return json.dumps(items[-1:] if isinstance(items, list) else items)


class RealPlayer:
    """The shape of a profile; subclasses fill it in for one CLI."""

    name: str                    # Baton's player name, as a plan says it
    cli: RealCLI                 # the pinned npm build .ci/run installs
    protocol: str                # how it talks to the scripted server (its requests' "protocol")
    build_tools: frozenset[str]  # offered to the model in a build task (at least these)
    research_tools: frozenset[str]      # offered in a research task (at least these)
    research_withheld: frozenset[str]   # never offered in a research task
    refusals: tuple[str, ...]    # one of these is in the tool result of a refused write
    reset_slack: float           # how far past the real reset Baton may wait (the CLI's precision)

    def __repr__(self) -> str:
        return self.name

    def require(self) -> Path:
        return require_cli(self.cli)

    # ----------------------------------------------------------------- the person's setup
    def env(self, server: ScriptedServer, **extra: str) -> dict[str, str]:
        """The person's environment (and CLI config) aimed at `server`; Baton only adds to it."""
        raise NotImplementedError

    # ----------------------------------------------------------------- scripted model turns
    def write(self, path: Path, content: str) -> dict:
        """A turn: write `content` to the absolute `path` with the CLI's own tool."""
        raise NotImplementedError

    def shell(self, command: str) -> dict:
        """A turn: run a shell command with the CLI's own tool."""
        raise NotImplementedError

    def read(self, path: Path) -> dict:
        """A turn: read the file at the absolute `path`."""
        raise NotImplementedError

    def report(self, status: str, summary: str) -> dict:
        """A turn: call Baton's report tool over MCP."""
        raise NotImplementedError

    # ----------------------------------------------------------------- what the server saw
    def effort(self, request: dict) -> str | None:
        """The reasoning effort a model request carries (None: the CLI sends none)."""
        return None

    # ----------------------------------------------------------------- usage limit
    def arrange_usage_limit(self, server: ScriptedServer, env: dict[str, str], tmp: Path,
                            resets_at: int) -> None:
        """Make the first attempt hit a usage limit that resets at `resets_at`; the resumed
        attempt then writes limit.txt and reports done with `baton report`."""
        raise NotImplementedError

    def sessions(self, logs: str) -> list[str]:
        """The session ids the attempts' output shows started (or resumed), in order."""
        raise NotImplementedError

    def check_usage_limit(self, server: ScriptedServer, tmp: Path, sessions: list[str]) -> None:
        """Anything more this CLI shows about the resume (its command lines, say)."""


class ClaudeCode(RealPlayer):
    """Claude Code: Anthropic Messages. Research offers Read/Grep/Glob and the MCP report only.

    The subscriber usage limit ("You've hit your session limit · resets …") cannot be produced
    with an API key, so that scenario runs tests/agents/claude_usage_limit.py as `claude`: it
    replays Claude Code's documented stream-json messages.
    """

    name = "claude-code"
    cli = CLAUDE
    protocol = "anthropic"
    build_tools = frozenset({"Write", "Bash", "mcp__baton__baton_report"})
    research_tools = frozenset({"Read", "mcp__baton__baton_report"})
    research_withheld = frozenset({"Write", "Bash", "Edit"})
    refusals = ("No such tool available",)
    reset_slack = 0          # the limit event carries the exact reset time

    def env(self, server: ScriptedServer, **extra: str) -> dict[str, str]:
        return {
            "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-ant-scripted",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            **extra,
        }

    def write(self, path: Path, content: str) -> dict:
        return {"tool": "Write", "input": {"file_path": str(path), "content": content}}

    def shell(self, command: str) -> dict:
        return {"tool": "Bash", "input": {"command": command, "description": "Run a command"}}

    def read(self, path: Path) -> dict:
        return {"tool": "Read", "input": {"file_path": str(path)}}

    def report(self, status: str, summary: str) -> dict:
        return {"tool": "mcp__baton__baton_report",
                "input": {"status": status, "summary": summary}}

    def effort(self, request: dict) -> str | None:
        return (request.get("output_config") or {}).get("effort")

    def arrange_usage_limit(self, server, env, tmp, resets_at):
        fake_dir = tmp / "fake-bin"
        fake_dir.mkdir()
        fake = fake_dir / "claude"
        fake.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{AGENTS / "claude_usage_limit.py"}" '
                        '"$@"\n')
        fake.chmod(0o755)
        env["PATH"] = f"{fake_dir}{os.pathsep}{env['PATH']}"
        env["FAKE_CLAUDE_LOG"] = str(tmp / "claude-calls.jsonl")
        env["FAKE_CLAUDE_RESETS_AT"] = str(resets_at)

    def sessions(self, logs: str) -> list[str]:
        return [e["session_id"] for e in json_lines(logs)
                if e.get("type") == "system" and e.get("subtype") == "init"]

    def check_usage_limit(self, server: ScriptedServer, tmp: Path, sessions: list[str]) -> None:
        """The first run started a new session, the second resumed it (Baton's command line)."""
        argvs = [json.loads(line) for line in (tmp / "claude-calls.jsonl").read_text().splitlines()]
        runs = [a for a in argvs if a != ["--version"]]
        assert len(runs) == 2
        first_sid = runs[0][runs[0].index("--session-id") + 1]
        assert runs[1][runs[1].index("--resume") + 1] == first_sid == sessions[0]


class Codex(RealPlayer):
    """Codex: OpenAI Responses. Research runs in an OS read-only sandbox: the shell still reads,
    every write fails. "The person's" config is `$HOME/codex/config.toml` (named by CODEX_HOME)
    with a provider whose base URL is the scripted server; Baton only reads that file. Its usage
    limit is the server's real `usage_limit_reached` error; Codex shows the reset to the minute.
    """

    name = "codex"
    cli = CODEX
    protocol = "responses"
    build_tools = frozenset({"exec_command", "baton_report"})
    research_tools = frozenset({"exec_command", "baton_report"})
    research_withheld = frozenset()
    refusals = ("Read-only file system", "denied", "Denied")
    reset_slack = 61         # "try again at 1:06 AM": Baton waits until that minute has passed

    def env(self, server: ScriptedServer, **extra: str) -> dict[str, str]:
        codex_home = Path(os.environ["HOME"]) / "codex"
        codex_home.mkdir(exist_ok=True)
        (codex_home / "config.toml").write_text(f'''model = "gpt-5.1-codex"
model_provider = "scripted"

[model_providers.scripted]
name = "Scripted"
base_url = "{server.url}/v1"
env_key = "SCRIPTED_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
''')
        return {
            "PATH": f"{NPM_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "CODEX_HOME": str(codex_home),
            "SCRIPTED_API_KEY": "scripted",
            **extra,
        }

    def write(self, path: Path, content: str) -> dict:
        return self.shell(f"printf %s {shlex.quote(content)} > {shlex.quote(str(path))}")

    def shell(self, command: str) -> dict:
        return {"tool": "exec_command", "input": {"cmd": command}}

    def read(self, path: Path) -> dict:
        return self.shell(f"cat {shlex.quote(str(path))}")

    def report(self, status: str, summary: str) -> dict:
        # Codex's MCP tools sit in one namespace tool, `mcp__baton`.
        return {"tool": "baton_report", "namespace": "mcp__baton",
                "input": {"status": status, "summary": summary}}

    def effort(self, request: dict) -> str | None:
        return (request.get("reasoning") or {}).get("effort")

    def arrange_usage_limit(self, server, env, tmp, resets_at):
        server.add_turns([
            {"error": 429, "body": {"error": {
                "type": "usage_limit_reached", "message": "The usage limit has been reached",
                "plan_type": "plus", "resets_at": resets_at,
                "resets_in_seconds": max(0, resets_at - int(time.time()))}}},
            self.shell("printf 'after the reset\\n' > limit.txt"),
            self.shell('baton report done --summary "finished after the reset"'),
            {"text": "Done."},
        ])

    def sessions(self, logs: str) -> list[str]:
        return [e["thread_id"] for e in json_lines(logs) if e.get("type") == "thread.started"]

    def check_usage_limit(self, server: ScriptedServer, tmp: Path, sessions: list[str]) -> None:
        """At most two conversations reached the server (Codex sends its thread as session-id)."""
        threads = {r["headers"].get("session-id") for r in server.requests
                   if r.get("protocol") == "responses" and r.get("headers", {}).get("session-id")}
        assert len(threads) <= 2


CLAUDE_CODE = ClaudeCode()
CODEX_PLAYER = Codex()
PLAYERS = [CLAUDE_CODE, CODEX_PLAYER]

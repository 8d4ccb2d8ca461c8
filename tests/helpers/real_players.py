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
from helpers.real_cli_kit import AIDER, CLAUDE, CODEX, NPM_BIN, PYPI_BIN, RealCLI, require_cli

AGENTS = Path(__file__).resolve().parents[1] / "agents"


def tool_names(request: dict) -> set[str]:
    """The tool names a model request offers, namespaced tools' members included (Chat
    Completions nests each under `function`, Gemini groups them in `functionDeclarations`)."""
    names: set[str] = set()
    for tool in request.get("tools") or []:
        for entry in (tool, tool.get("function") or {}, *(tool.get("functionDeclarations") or [])):
            if entry.get("name"):
                names.add(entry["name"])
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
    items = body.get("messages") or body.get("input") or body.get("contents") or []
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

    relative_files: tuple[str, ...] = ("rel.txt", "where.txt")   # what its write of a relative
    # path and its shell's `pwd > where.txt` leave (a CLI without one of them leaves less)
    stop_lead: int = 1           # model turns before the one it is stopped in (a shell echo)
    refused_turns: tuple[int, ...] = (2, 3)   # research: the model turns whose input shows
    # the refused writes (none for a CLI without tools; only the write tool's where research
    # has a shell: what that writes in the throwaway worktree is discarded)

    def __repr__(self) -> str:
        return self.name

    def conversation(self, *steps: dict) -> list[dict]:
        """One task's scripted turns, as this CLI's requests take them: one turn a request.
        A tool-calling CLI sends a request per tool result; Aider sends one per reply."""
        return list(steps)

    def research_commands(self, commands: list[str], *after: dict) -> list[dict]:
        """A research task's turns: run `commands` with the CLI's own shell, then `after`."""
        return self.conversation(*(self.shell(c) for c in commands), *after)

    def throttled(self, attempts: int) -> list[dict]:
        """Turns that answer `attempts` attempts with a plain 429 (no reset time)."""
        return [{"error": 429}] * attempts

    def read_seen(self, turns: dict[int, dict], logs: str, needle: str) -> bool:
        """A research read happened: the agent's output shows the file, and the tool's result
        went back to the model in the next request."""
        return needle in logs and needle in last_input(turns[1])

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

    def real_reset(self, server: ScriptedServer, resets_at: int) -> float:
        """When the limit arranged for `resets_at` really resets, as the CLI was told it."""
        return resets_at

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
    research_tools = frozenset({"Read", "Bash", "mcp__baton__baton_report"})
    research_withheld = frozenset({"Write", "Edit"})
    refusals = ("No such tool available",)
    refused_turns = (2,)          # research: its write is refused; its shell runs
    relative_files = ("where.txt",)   # its Write tool takes absolute paths only
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


class Aider(RealPlayer):
    """Aider: OpenAI Chat Completions, no tools at all. The model's reply is the edit (the
    `whole` format: a file name, then its full content in a fence) and its `BATON: done …` line
    the report, so a task is one reply — `conversation` merges a task's steps into it. It reads
    a file the reply names (Aider adds it, read-only in ask mode, and asks again). "The person"
    has OPENAI_API_BASE and AIDER_MODEL set, and a ~/.aider.model.settings.yml for the model.
    Its usage limit is the provider's 429 "Please try again in 3s", which Baton reads relative
    to when it stopped Aider: hence the slack.
    """

    name = "aider"
    cli = AIDER
    protocol = "chat"
    build_tools = frozenset()
    research_tools = frozenset()
    research_withheld = frozenset()
    refusals = ()
    refused_turns = ()
    relative_files = ("rel.txt",)     # no shell: its reply is the edit
    stop_lead = 0                     # one reply a run: it is stopped waiting for the first
    reset_slack = 20
    model = "openai/mock-model"
    SDK_TRIES = 3    # the OpenAI SDK inside litellm tries each call three times on a 429

    def env(self, server: ScriptedServer, **extra: str) -> dict[str, str]:
        home = Path(os.environ["HOME"])
        caches = home / ".aider" / "caches"
        caches.mkdir(parents=True, exist_ok=True)
        # A non-empty price map: Aider then skips downloading litellm's (no network here).
        (caches / "model_prices_and_context_window.json").write_text(json.dumps(
            {self.model: {"max_input_tokens": 128000, "max_output_tokens": 8192,
                          "input_cost_per_token": 1e-06, "output_cost_per_token": 2e-06,
                          "litellm_provider": "openai", "mode": "chat"}}))
        (home / ".aider.model.settings.yml").write_text(
            f"- name: {self.model}\n  edit_format: whole\n"
            "  accepts_settings: [reasoning_effort]\n")
        return {
            "PATH": f"{PYPI_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "OPENAI_API_KEY": "sk-scripted",
            "OPENAI_API_BASE": f"{server.url}/v1",
            "AIDER_MODEL": self.model,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            **extra,
        }

    def conversation(self, *steps: dict) -> list[dict]:
        """A task is one reply, its `BATON:` line last. (A file the prompt names is in the
        chat from the first request on: Aider adds every file a message mentions.)"""
        turns: list[dict] = []
        body: list[str] = []
        report: list[str] = []
        for step in steps:
            if step.get("_report"):
                report.append(step["text"])
            elif step.get("_edit") or step.get("_shell"):
                body.append(step["text"])
        if body or report:
            turns.append({"text": "\n\n".join([*body, *report])})
        return turns

    def research_commands(self, commands: list[str], *after: dict) -> list[dict]:
        """Aider proposes the commands in a reply of their own; Aider `/run`s them, and its
        next reply (with their output in the chat) goes on."""
        proposal = {"text": "Let me run them.\n```bash\n" + "\n".join(commands) + "\n```"}
        return [proposal, *self.conversation(*after)]

    def throttled(self, attempts: int) -> list[dict]:
        """Each attempt's one call, tried three times by the SDK; a retry continues the
        conversation, so its turns wait for "Continue the task" (Aider's own retries of the
        first call, until Baton stops it, get the side text)."""
        first = [{"error": 429}] * self.SDK_TRIES
        later = [{"error": 429, "match": "Continue the task"}] * (self.SDK_TRIES * (attempts - 1))
        return first + later

    def write(self, path: Path, content: str) -> dict:
        return {"_edit": True, "text": f"{path.name}\n```\n{content}```"}

    def shell(self, command: str) -> dict:
        words = shlex.split(command)
        if words[:2] == ["baton", "report"] and len(words) >= 3:
            return self.report(words[2], words[-1])
        # Aider has no shell: a command in a reply is only text (shell suggestions are off).
        return {"_shell": True, "text": f"Run this:\n```bash\n{command}\n```"}

    def read(self, path: Path) -> dict:
        return {"_edit": True, "text": f"I have read {path.name}."}

    def read_seen(self, turns: dict[int, dict], logs: str, needle: str) -> bool:
        """Aider shows no tool output: the file's content was in the request it answered."""
        return needle in json.dumps(turns[0]["json"]["messages"])

    def report(self, status: str, summary: str) -> dict:
        return {"_report": True, "text": f"BATON: {status} {summary}"}

    def effort(self, request: dict) -> str | None:
        return request.get("reasoning_effort")

    def arrange_usage_limit(self, server, env, tmp, resets_at):
        limit = {"error": 429, "body": {"error": {
            "message": "Rate limit reached for requests per min. Please try again in 3s.",
            "type": "requests", "code": "rate_limit_exceeded"}}}
        # Aider retries by itself until Baton stops it: requests that are not the resumed
        # conversation's ("Continue the task") get the side text and take no turn.
        server.add_turns([*[limit] * self.SDK_TRIES, {
            "match": "Continue the task",
            "text": "limit.txt\n```\nafter the reset\n```\n\nBATON: done finished after the reset"}])

    def real_reset(self, server, resets_at):
        """"Please try again in 3s" counts from the provider's last answer, not from when the
        test arranged it: on a busy machine Aider starts, and asks, many seconds later."""
        served = [r["time"] for r in server.requests if r.get("status") == 429]
        return max(resets_at, max(served) + 3) if served else resets_at

    def sessions(self, logs: str) -> list[str]:
        """Aider has no session ids: its chat history file is the session; one per task."""
        return ["chat-history" for line in logs.splitlines() if line.startswith("Aider v")]

    def check_usage_limit(self, server: ScriptedServer, tmp: Path, sessions: list[str]) -> None:
        """The resumed request carries the first attempt's prompt: the same conversation."""
        resumed = next(r for r in server.requests if r.get("turn") == self.SDK_TRIES)
        users = [m for m in resumed["json"]["messages"] if m.get("role") == "user"]
        assert any("Create limit.txt." in json.dumps(m) for m in users[:-1]), users


CLAUDE_CODE = ClaudeCode()
CODEX_PLAYER = Codex()
AIDER_PLAYER = Aider()
# OpenCode and Gemini CLI have a module of their own (they subclass RealPlayer, defined above).
from helpers.real_players_js import GEMINI_PLAYER, OPENCODE_PLAYER  # noqa: E402

PLAYERS = [CLAUDE_CODE, CODEX_PLAYER, AIDER_PLAYER, OPENCODE_PLAYER, GEMINI_PLAYER]

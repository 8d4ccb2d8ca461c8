"""Profiles of the players tested against replays of their documented formats (Amp, Cursor
Agent, Goose: not installable here), for tests/test_scripted_players.py.

A profile puts the replay (tests/agents/<name>_replay.py) on PATH under the CLI's own command
name, signs "the person" in the way that CLI checks, and speaks the replay's turn language:
write a file, run a shell command, report to Baton (over MCP, the shell, or a `BATON:` line —
whichever route that player's build and research profiles use), hit a usage limit, wait on
the model. `calls()` gives each run's argv, in order.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

AGENTS = Path(__file__).resolve().parents[1] / "agents"


class Scripted:
    """The shape of a profile; one subclass per replayed CLI."""

    name: str          # Baton's player name
    command: str       # the CLI's command name on PATH
    prefix: str        # of the replay's FAKE_* variables
    signed_in: dict[str, str]
    model: str         # a name its catalog takes, and the flag that passes it
    model_flag: str

    def __init__(self, tmp: Path):
        self.folder = tmp / f"{self.name}-bin"
        self.folder.mkdir()
        stub = self.folder / self.command
        stub.write_text(f'#!/bin/sh\nexec "{sys.executable}" '
                        f'"{AGENTS / (self.prefix.lower() + "_replay.py")}" "$@"\n')
        stub.chmod(0o755)
        self.log, self.turns = tmp / f"{self.name}-calls.jsonl", tmp / f"{self.name}-turns.json"
        self.tmp = tmp

    def __repr__(self) -> str:
        return self.name

    def env(self) -> dict[str, str]:
        return {"PATH": f"{self.folder}{os.pathsep}{os.environ['PATH']}", **self.signed_in,
                f"FAKE_{self.prefix}_LOG": str(self.log),
                f"FAKE_{self.prefix}_TURNS": str(self.turns), **self.extra_env()}

    def extra_env(self) -> dict[str, str]:
        return {}

    def script(self, *runs: list[dict]) -> dict[str, str]:
        """One list of turns per run of the CLI (the last one repeats); returns the env."""
        self.turns.write_text(json.dumps(list(runs)))
        return self.env()

    def calls(self) -> list[list[str]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    # ---------------------------------------------------------------- turns
    def write(self, path: Path, content: str) -> dict:
        raise NotImplementedError

    def shell(self, command: str) -> dict:
        raise NotImplementedError

    def report(self, mode: str, status: str, summary: str) -> list[dict]:
        """The turns that report, by the route this player's `mode` profile has."""
        raise NotImplementedError

    def limit(self, message: str) -> dict:
        return {"limit": message}

    def sleep(self, seconds: float) -> dict:
        return {"sleep": seconds}

    def same_session(self, first: list[str], second: list[str], logs: str) -> bool:
        """The second run resumed the session the first one started."""
        raise NotImplementedError


class Amp(Scripted):
    name, command, prefix = "amp", "amp", "AMP"
    signed_in = {"AMP_API_KEY": "scripted"}
    model, model_flag = "rush", "--mode"     # Amp's modes stand for its models

    def write(self, path, content):
        return {"tool": "create_file", "input": {"path": str(path), "content": content}}

    def shell(self, command):
        return {"tool": "Bash", "input": {"cmd": command}}

    def report(self, mode, status, summary):
        return [{"tool": "mcp__baton__baton_report",
                 "input": {"status": status, "summary": summary}}]

    def same_session(self, first, second, logs):
        thread = second[second.index("continue") + 1]
        return "continue" not in first and f'"session_id": "{thread}"' in logs


class CursorAgent(Scripted):
    name, command, prefix = "cursor-agent", "cursor-agent", "CURSOR"
    signed_in = {"CURSOR_API_KEY": "scripted"}
    model, model_flag = "sonnet-4.5", "--model"

    def write(self, path, content):
        return {"write": {"path": str(path), "content": content}}

    def shell(self, command):
        return {"shell": command}

    def report(self, mode, status, summary):
        if mode == "research":   # no shell, no MCP: a line of its final reply
            return [{"text": f"Findings below.\n\nBATON: {status} {summary}"}]
        return [self.shell(f'baton report {status} --summary "{summary}"'), {"text": "Reported."}]

    def same_session(self, first, second, logs):
        session = second[second.index("--resume") + 1]
        return "--resume" not in first and f'"session_id": "{session}"' in logs


class Goose(Scripted):
    name, command, prefix = "goose", "goose", "GOOSE"
    signed_in = {"GOOSE_PROVIDER": "openai"}
    model, model_flag = "gpt-4o", "--model"

    def extra_env(self):
        return {"FAKE_GOOSE_SESSIONS": str(self.tmp / "goose-sessions.json")}

    def write(self, path, content):
        return {"tool": "write", "args": {"path": str(path), "content": content}}

    def shell(self, command):
        return {"tool": "shell", "args": {"command": command}}

    def report(self, mode, status, summary):
        return [{"tool": "baton__baton_report", "args": {"status": status, "summary": summary}},
                {"text": "Reported."}]

    def limit(self, message):
        return {"error": message}

    def same_session(self, first, second, logs):
        name = first[first.index("--name") + 1]
        return ("--resume" not in first and "--resume" in second
                and second[second.index("--name") + 1] == name)


PROFILES = (Amp, CursorAgent, Goose)

"""Cursor Agent (`cursor-agent`): `-p … --output-format stream-json`, written from Cursor's
documented headless flags and stream format (the CLI is not on the registries used here).

Build: `--force` (print mode writes files and runs commands only with it) and `--trust` (a
headless run cannot answer the workspace-trust prompt), in the task's worktree, which is also
its `--workspace`. The agent has a shell, so it reports with `baton report` like any other.
Research: `--mode ask` — Cursor's read-only mode — and no `--force`, so even a write or a
command the model attempts is refused. Cursor has no per-run MCP flag (only `.cursor/mcp.json`
files, which Baton will not write into the person's repository or config), so research reports
the way Aider does: a `BATON: done …` line ending its final reply, read from the final `result`
event only (never from tool output), and only when the run exits 0.

Events (NDJSON): `system/init` (session_id, model), `user`, `assistant` (one line per message),
`tool_call` `started`/`completed` with `tool_call: {"<kind>ToolCall": {"args", "result"}}`, and
the final `result` (`subtype`, `is_error`, `result`, `duration_ms`, `session_id`, sometimes
`usage`). On failure the stream may end without a result and the error goes to stderr (the log
holds both). A session resumes with `--resume <session_id>`. The catalog is what
`cursor-agent models` lists for the signed-in account (cached); it has no effort levels.

Written from the documentation of Cursor Agent 2026.06.30-1a2b3c4; never run against the real
CLI (not installable here): tests/agents/cursor_replay.py replays that version's formats.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.players.aider import REPORT
from baton_tui.players.base import AttemptContext, Launch
from baton_tui.players.cli_events import ARGV_PROMPT_LIMIT, int_of
from baton_tui.players.decoding import (
    AgentStarted,
    Decoder,
    Event,
    Failed,
    Finished,
    JsonDecoder,
    LimitHit,
    Reported,
    SessionNamed,
    ToolCall,
    Usage,
    said,
    text_of,
)
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limits import limit_in
from baton_tui.players.model_lists import listed_models

# `cursor-agent models`: "auto - Auto  (current)", "sonnet-4.5 - Claude 4.5 Sonnet", …
_MODEL_LINE = re.compile(r"^\s*([A-Za-z0-9][\w.:/\-]*)\s+-\s+\S")


def parse_models(text: str) -> tuple[str, ...]:
    """Model ids from `cursor-agent models` (an id, a dash, its display name, a line each)."""
    return tuple(dict.fromkeys(m.group(1) for m in map(_MODEL_LINE.match, text.splitlines())
                               if m))


class CursorAgentPlayer(CliPlayer):
    """Cursor's agent CLI."""

    name = "cursor-agent"
    binary = "cursor-agent"
    key_vars = ("CURSOR_API_KEY",)
    install = "curl https://cursor.com/install -fsS | bash, then `cursor-agent login`"
    models = ()                # asked of Cursor itself: see `catalog`
    replayed_version = "2026.06.30-1a2b3c4"
    efforts = ()               # model variants carry it (`…-thinking`), not a flag
    interactive_resume = ("--resume",)
    research_shell = False
    research_reports_in_output = True

    def _env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def auth_files(self) -> list[Path]:
        env = self._env()
        home = Path(env.get("HOME") or Path.home())
        config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
        files = [config / "cursor" / "auth.json", home / ".cursor" / "auth.json"]
        if env.get("CURSOR_CONFIG_DIR"):
            files.insert(0, Path(env["CURSOR_CONFIG_DIR"]) / "auth.json")
        return files

    def signed_in(self) -> str | None:
        """CURSOR_API_KEY, or the login `cursor-agent login` keeps in ~/.config/cursor."""
        if self._env().get("CURSOR_API_KEY") or any(p.exists() for p in self.auth_files()):
            return None
        return "not signed in (no CURSOR_API_KEY and no ~/.config/cursor/auth.json)"

    def detect(self):
        found = super().detect()
        if not found.ready and found.path and "not signed in" in found.reason:
            found.fix = "run `cursor-agent login`, or export CURSOR_API_KEY"
        return found

    def catalog(self) -> tuple[str, ...] | None:
        """`cursor-agent models` for this account (cached); None when it cannot answer."""
        exe = self.executable()
        if exe is None:
            return None
        listed = listed_models(self.name, [exe, "models"], Path.cwd(), self._env(),
                               self.auth_files(), ["CURSOR_API_KEY"], parse=parse_models)
        return None if listed is None else tuple(dict.fromkeys([*listed, *self.extra_models]))

    def model_problem(self, model: str | None) -> str | None:
        catalog = self.catalog() if model else None
        if model is None or catalog is None or model in catalog:
            return None
        return (f"player 'cursor-agent' cannot start model {model!r} (not in `cursor-agent "
                f"models`: {', '.join(catalog[:8])}{', …' if len(catalog) > 8 else ''})")

    def model_unchecked(self, model: str | None) -> str | None:
        if model is None or model in self.extra_models or self.catalog() is not None:
            return None
        return (f"`cursor-agent models` did not answer here, so model {model!r} is not checked "
                "(Cursor refuses a name it lacks when the task starts)")

    # ----------------------------------------------------------------- command lines
    def _argv(self, ctx: AttemptContext, message: str) -> Launch:
        exe = ctx.bin or self.bin or self.executable() or self.binary
        argv = [exe, "-p", "--output-format", "stream-json", "--trust",
                "--workspace", str(ctx.worktree)]
        argv += ["--mode", "ask"] if ctx.mode == Mode.RESEARCH else ["--force"]
        if ctx.model:
            argv += ["--model", ctx.model]
        if ctx.session_id:
            argv += ["--resume", ctx.session_id]
        if len(message.encode("utf-8")) > ARGV_PROMPT_LIMIT:
            return Launch(argv, stdin_prompt=True)     # print mode reads a piped prompt
        return Launch([*argv, "--", message])

    def launch(self, ctx: AttemptContext) -> Launch:
        return self._argv(ctx, ctx.prompt)

    def resume(self, ctx: AttemptContext) -> Launch | None:
        if not ctx.session_id:
            return None
        message = (ctx.resume_message or "Continue the task where you left off.").strip()
        if ctx.mode == Mode.RESEARCH:
            message += ("\n\nWhen you are done, end your final reply with one line `BATON: done "
                        "<your findings>` (or `BATON: failed <why>`), as Baton's rules said.")
        else:
            message += ("\n\nWhen the task is finished, run `baton report done --summary \"…\"` "
                        "as Baton's rules said.")
        return self._argv(ctx, message)

    # ----------------------------------------------------------------- output
    def decoder(self) -> Decoder:
        return CursorDecoder()


class CursorDecoder(JsonDecoder):
    """Cursor Agent's stream-json. On failure the stream may end without a result and the
    error goes to stderr: then its last plain lines explain the run (told at the end)."""

    def __init__(self) -> None:
        self.session: str | None = None
        self.plain_lines: list[str] = []
        self.result_seen = False

    def plain(self, line: str) -> list[Event]:
        if line.strip():
            self.plain_lines = [*self.plain_lines[-4:], line.strip()]
        return super().plain(line)

    def close(self) -> list[Event]:
        if self.result_seen:
            return []
        message = "\n".join(self.plain_lines) or "no result"
        return [Failed(self.plain_lines[-1] if self.plain_lines else message), *_limit(message)]

    def decode(self, event: dict[str, Any]) -> list[Event]:
        found: list[Event] = []
        if event.get("session_id") and str(event["session_id"]) != self.session:
            self.session = str(event["session_id"])
            found.append(SessionNamed(self.session))
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            found.append(AgentStarted("cursor-agent", text_of(event.get("model")) or None))
        elif kind == "tool_call" and event.get("subtype") == "started":
            found += _tool_call(event.get("tool_call") or {})
        elif kind == "assistant":
            found += said("\n".join(text_of(b.get("text")) for b in
                                    (event.get("message") or {}).get("content") or []
                                    if isinstance(b, dict) and b.get("type") == "text"))
        elif kind == "result":
            found += self._result(event)
        return found

    def _result(self, result: dict[str, Any]) -> list[Event]:
        self.result_seen = True
        usage = result.get("usage") or {}
        tokens = sum(int_of(usage.get(k)) for k in (
            "inputTokens", "outputTokens", "input_tokens", "output_tokens"))
        final = text_of(result.get("result")) if isinstance(result.get("result"), str) else ""
        ok = not result.get("is_error") and result.get("subtype") == "success"
        found: list[Event] = [Usage(tokens, total=True)]
        if ok:
            found.append(Finished(True, final,
                                  summary=f"in {int_of(result.get('duration_ms')) / 1000:.0f}s"))
            reports = [m for m in map(REPORT.match, final.splitlines()) if m]
            if reports:   # research: its report is the final reply's `BATON:` line
                found.append(Reported(reports[-1].group(1).lower(),
                                      reports[-1].group(2).strip()))
            return found
        message = str(result.get("result") or "\n".join(self.plain_lines) or "no result")
        return [*found, Finished(False, final, message), *_limit(message)]


def _limit(message: str) -> list[Event]:
    hit = limit_in(message)
    return [LimitHit(hit[0], hit[1], message)] if hit else []


def _tool_call(call: dict[str, Any]) -> list[Event]:
    """`{"shellToolCall": {"args": {"command": …}}}` as a call named `shell`."""
    for kind, body in call.items():
        args = (body.get("args") or {}) if isinstance(body, dict) else {}
        name = kind.removesuffix("ToolCall") or kind
        if name != "shell" and isinstance(args, dict):
            what = args.get("path") or args.get("pattern") or args.get("globPattern") \
                or args.get("name")
            args = {"path": what} if what else {}
        return [ToolCall(name, args if isinstance(args, dict) else {})]
    return []

"""Claude Code (`claude`): headless `-p … --output-format stream-json`, MCP report, resume.

Build: `--dangerously-skip-permissions` in the task's worktree (Claude Code refuses that flag
as root unless `IS_SANDBOX=1`, which Baton sets for root only). Research offers no editing tool:
`--tools Read,Grep,Glob,Bash --permission-mode dontAsk` with Bash allowed, so it can run the
tests or a linter in its throwaway worktree (whatever that writes is discarded) and report
with `baton report`; the planner, which reads the person's own checkout, gets no Bash either.
`--allowedTools mcp__baton__baton_report` lets the report through `baton mcp`. The MCP server
is registered per attempt with `--mcp-config <attempt dir>/claude-mcp.json --strict-mcp-config`;
the person's own settings are never edited.

Events (stream-json, one object a line): `system/init` (session_id, model), `assistant`
(text and tool_use blocks, usage), `user` (tool_result), `system/api_retry`,
`rate_limit_event` (subscribers: `rate_limit_info.status == "rejected"` with `resetsAt`), and
the final `result` (`subtype`, `is_error`, `api_error_status`, `result`, `total_cost_usd`,
`usage`). A subscriber's limit reads "You've hit your session limit · resets 3pm (Zone)".
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Launch
from baton_tui.players.cli_events import (
    ARGV_PROMPT_LIMIT,
    float_of,
    int_of,
    mcp_command,
    mcp_env,
)
from baton_tui.players.decoding import (
    AgentStarted,
    Decoder,
    Event,
    Finished,
    JsonDecoder,
    LimitHit,
    Note,
    SessionNamed,
    ToolCall,
    ToolResult,
    Usage,
    said,
    text_of,
)
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limits import (
    CLAUDE_LIMIT_WORDS,
    CLAUDE_THROTTLE_WORDS,
    claude_reset,
    contains_any,
)

REPORT_TOOL = "mcp__baton__baton_report"
CHECKPOINT_TOOL = "mcp__baton__baton_checkpoint"
INBOX_TOOL = "mcp__baton__baton_inbox"  # the person's messages (`baton tell`)
PLANNER_TOOLS = "Read,Grep,Glob"
RESEARCH_TOOLS = "Read,Grep,Glob,Bash"



class ClaudeCodePlayer(CliPlayer):
    """Anthropic's Claude Code CLI."""

    name = "claude-code"
    binary = "claude"
    interactive_resume = ("--resume",)
    key_vars = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
                "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")
    credential_files = (".claude/.credentials.json",)
    install = "npm i -g @anthropic-ai/claude-code"
    # Aliases (always the latest of a family) and the full names Claude Code 2.1.197-2.1.332
    # knows; `[players.claude-code] models = […]` adds others (a gateway's own names, say).
    models = ("sonnet", "opus", "haiku", "fable", "best", "opusplan", "sonnet[1m]", "opus[1m]",
              "fable[1m]",
              "claude-opus-5-5", "claude-opus-5", "claude-sonnet-5-5", "claude-sonnet-5",
              "claude-haiku-5-5", "claude-fable-5-2", "claude-fable-5-1", "claude-fable-5",
              "claude-opus-4-8", "claude-opus-4-7", "claude-opus-4-6", "claude-opus-4-5",
              "claude-opus-4-1", "claude-sonnet-4-6", "claude-sonnet-4-5", "claude-haiku-4-5")
    default_model = None      # Claude Code's own default
    efforts = ("low", "medium", "high")   # `--effort` (it also has xhigh and max)

    def signed_in(self) -> str | None:
        env = {**os.environ, **self.env}
        if any(env.get(var) for var in self.key_vars):
            return None
        home = Path(env.get("HOME") or Path.home())
        config_dir = Path(env["CLAUDE_CONFIG_DIR"]) if env.get("CLAUDE_CONFIG_DIR") else \
            home / ".claude"
        if (config_dir / ".credentials.json").exists():
            return None
        return ("not signed in (no ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN or "
                "CLAUDE_CODE_OAUTH_TOKEN, and no ~/.claude/.credentials.json)")

    # ----------------------------------------------------------------- command lines
    def _mcp_config(self, ctx: AttemptContext) -> Path:
        """The per-attempt MCP config: `baton mcp` bound to this attempt (0600, attempt dir)."""
        command = mcp_command()
        # alwaysLoad: connected before the first turn even when the person's environment makes
        # MCP start-up non-blocking, and its tools are offered directly (never deferred).
        config = {"mcpServers": {"baton": {"type": "stdio", "command": command[0],
                                           "args": command[1:], "env": mcp_env(ctx.env),
                                           "alwaysLoad": True}}}
        path = ctx.attempt_dir / "claude-mcp.json"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(config, fh, indent=1)
        return path

    def _system_note(self, ctx: AttemptContext) -> str:
        if ctx.mode == Mode.RESEARCH and ctx.planning:
            return ("You are running headless under Baton, in a READ-ONLY research task: you have "
                    "no shell and no write tools, and must not change any file. When you are done "
                    f"call the {REPORT_TOOL} tool (status \"done\" with your findings as the "
                    "summary, or \"failed\" with the reason); that is how this task reports.")
        if ctx.mode == Mode.RESEARCH:
            return ("You are running headless under Baton, in a READ-ONLY research task, in a "
                    "throwaway worktree: you have no write tools; you may run commands (tests, "
                    "linters) with Bash, and anything they write there is discarded. When you "
                    "are done run `baton report done --summary \"…\"` with Bash, or call the "
                    f"{REPORT_TOOL} tool (status \"done\" with your findings as the summary, or "
                    "\"failed\" with the reason); that is how this task reports.")
        return ("You are running headless under Baton. Work only in the current directory (your "
                "own git worktree). Report exactly as the task's rules say: run `baton report "
                "done --summary \"…\"` with your Bash tool, or call the "
                f"{REPORT_TOOL} tool; `baton checkpoint` is also the {CHECKPOINT_TOOL} tool.")

    def _argv(self, ctx: AttemptContext, message: str) -> Launch:
        exe = ctx.bin or self.bin or self.executable() or self.binary or "claude"
        argv = [exe, "-p", "--output-format", "stream-json", "--verbose"]
        env: dict[str, str] = {}
        if ctx.mode == Mode.RESEARCH and ctx.planning:
            argv += ["--tools", PLANNER_TOOLS, "--permission-mode", "dontAsk",
                     "--allowedTools", REPORT_TOOL]
        elif ctx.mode == Mode.RESEARCH:
            argv += ["--tools", RESEARCH_TOOLS, "--permission-mode", "dontAsk",
                     "--allowedTools", f"{REPORT_TOOL},{INBOX_TOOL},Bash"]
        else:
            argv += ["--dangerously-skip-permissions",
                     "--allowedTools", f"{REPORT_TOOL},{CHECKPOINT_TOOL},{INBOX_TOOL}"]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                env["IS_SANDBOX"] = "1"   # else Claude Code refuses skip-permissions as root
        argv += ["--mcp-config", str(self._mcp_config(ctx)), "--strict-mcp-config",
                 "--append-system-prompt", self._system_note(ctx)]
        if ctx.model:
            argv += ["--model", ctx.model]
        if ctx.effort:
            argv += ["--effort", ctx.effort]
        if ctx.session_id:
            argv += ["--resume", ctx.session_id]
        else:
            argv += ["--session-id", str(uuid.uuid4())]
        if len(message.encode("utf-8")) > ARGV_PROMPT_LIMIT:
            return Launch(argv, env, stdin_prompt=True)   # `-p` reads the prompt from stdin
        # `--` ends the options (several of them take a variable number of values).
        return Launch([*argv, "--", message], env)

    def launch(self, ctx: AttemptContext) -> Launch:
        return self._argv(ctx, ctx.prompt)

    def resume(self, ctx: AttemptContext) -> Launch | None:
        if not ctx.session_id:
            return None
        message = (ctx.resume_message or "Continue the task where you left off.").strip()
        message += ("\n\nWhen the task is finished, report it as Baton's rules say "
                    + (f"(the {REPORT_TOOL} tool)." if ctx.planning else
                       "(`baton report done --summary \"…\"`, or the baton_report tool)."))
        return self._argv(ctx, message)

    # ----------------------------------------------------------------- output
    def decoder(self) -> Decoder:
        return ClaudeDecoder()


class ClaudeDecoder(JsonDecoder):
    """Claude Code's stream-json (and Amp's, which follows it): one object a line.

    Stateful: a tool result names the call it answers by id; usage is per message (a message
    streams over several lines with the same usage); an exact reset from a rejected
    `rate_limit_event` wins over one read from the words of a later message.
    """

    agent = "claude"

    def __init__(self) -> None:
        self.session: str | None = None
        self.calls: dict[str, str] = {}
        self.usage_by_message: dict[str, int] = {}
        self.exact_reset: float | None = None

    def decode(self, event: dict[str, Any]) -> list[Event]:
        found: list[Event] = []
        if event.get("session_id") and str(event["session_id"]) != self.session:
            self.session = str(event["session_id"])
            found.append(SessionNamed(self.session))
        kind = event.get("type")
        if kind == "system" and event.get("subtype") == "init":
            found.append(AgentStarted(self.agent, text_of(event.get("model")) or None))
        elif kind == "system" and event.get("subtype") == "api_retry":
            found.append(Note(f"API retry {event.get('attempt')}/{event.get('max_retries')} "
                              f"({event.get('error_status') or event.get('error') or 'error'})",
                              kind="error", shown=True))
        elif kind == "assistant":
            found += self._assistant(event.get("message") or {})
        elif kind == "user":
            for block in _content(event.get("message") or {}):
                if block.get("type") == "tool_result":
                    name = self.calls.get(str(block.get("tool_use_id")), "tool")
                    found.append(ToolResult(name, not block.get("is_error"),
                                            _text_of(block.get("content"))))
        elif kind == "rate_limit_event":
            info = event.get("rate_limit_info") or {}
            if info.get("status") == "rejected":
                reset = float_of(info.get("resetsAt") or info.get("overageResetsAt")) or None
                self.exact_reset = reset or self.exact_reset
                found += [Note(f"usage limit reached ({info.get('rateLimitType') or 'limit'})",
                               shown=True),
                          LimitHit(self.exact_reset, True, "usage limit")]
        elif kind == "result":
            found += self._result(event)
        return found

    def _assistant(self, message: dict[str, Any]) -> list[Event]:
        found: list[Event] = []
        for block in _content(message):
            if block.get("type") == "text":
                found += said(block.get("text"))
                found += self.limit_in_text(text_of(block.get("text")))
            elif block.get("type") == "tool_use":
                name = str(block.get("name") or "tool")
                self.calls[str(block.get("id"))] = name
                args = block.get("input")
                found.append(ToolCall(name, args if isinstance(args, dict) else {}))
        if isinstance(message.get("usage"), dict):
            key = str(message.get("id") or len(self.usage_by_message))
            self.usage_by_message[key] = self.usage_tokens(message["usage"])
            found.append(Usage(sum(self.usage_by_message.values()), total=True))
        return found

    def _result(self, result: dict[str, Any]) -> list[Event]:
        tokens = self.usage_tokens(result.get("usage") or {}) or \
            sum(self.usage_by_message.values())
        found: list[Event] = [Usage(tokens, float_of(result.get("total_cost_usd")), total=True)]
        text = result.get("result") if isinstance(result.get("result"), str) else None
        failed = bool(result.get("is_error")) or result.get("subtype") != "success"
        if not failed:
            return [*found, Finished(True, text, summary=f"{result.get('num_turns', '?')} turns")]
        message = str(result.get("error") or result.get("result") or result.get("subtype")
                      or "error")
        errors = result.get("errors")
        if isinstance(errors, list) and errors and not result.get("result"):
            message = "; ".join(str(e) for e in errors[:3])
        found.append(Finished(False, text, message))
        return found + self.limit_in_error(message, result.get("api_error_status") == 429)

    def limit_in_text(self, text: str) -> list[Event]:
        """A subscriber's limit in the words of a message (the reset in minutes, its zone)."""
        if not contains_any(text, CLAUDE_LIMIT_WORDS):
            return []
        return [LimitHit(self.exact_reset or claude_reset(text), True, text)]

    def limit_in_error(self, message: str, status_429: bool) -> list[Event]:
        limit = self.limit_in_text(message)
        if limit or not (status_429 or contains_any(message, CLAUDE_THROTTLE_WORDS)):
            return limit
        return [LimitHit(None, False, message)]

    @staticmethod
    def usage_tokens(usage: dict[str, Any]) -> int:
        return sum(int_of(usage.get(k)) for k in ("input_tokens", "output_tokens",
                                                  "cache_creation_input_tokens",
                                                  "cache_read_input_tokens"))


def _content(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(c.get("text", "")) if isinstance(c, dict) else str(c)
                         for c in content)
    return str(content or "")

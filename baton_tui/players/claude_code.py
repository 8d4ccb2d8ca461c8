"""Claude Code (`claude`): headless `-p … --output-format stream-json`, MCP report, resume.

Build: `--dangerously-skip-permissions` in the task's worktree (Claude Code refuses that flag
as root unless `IS_SANDBOX=1`, which Baton sets for root only). Research is really read-only:
`--tools Read,Grep,Glob --permission-mode dontAsk` offers no write or shell tool at all, and
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
from baton_tui.players.base import AttemptContext, Launch, Outcome
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.cli_events import (
    ARGV_PROMPT_LIMIT,
    claude_reset,
    event_of,
    events,
    float_of,
    int_of,
    mcp_command,
    mcp_env,
    one_line,
)

REPORT_TOOL = "mcp__baton__baton_report"
CHECKPOINT_TOOL = "mcp__baton__baton_checkpoint"
RESEARCH_TOOLS = "Read,Grep,Glob"

_LIMIT_WORDS = ("You've hit your", "You’ve hit your", "usage limit reached",
                "You're out of usage", "You’re out of usage", "out of extra usage")
_THROTTLE_WORDS = ("Server is temporarily limiting requests", "rate_limit_error",
                   "Request rejected (429)", "429")


class ClaudeCodePlayer(CliPlayer):
    """Anthropic's Claude Code CLI."""

    research_shell = False  # read-only profile: the report goes over MCP
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
        if ctx.mode == Mode.RESEARCH:
            return ("You are running headless under Baton, in a READ-ONLY research task: you have "
                    "no shell and no write tools, and must not change any file. When you are done "
                    f"call the {REPORT_TOOL} tool (status \"done\" with your findings as the "
                    "summary, or \"failed\" with the reason); that is how this task reports.")
        return ("You are running headless under Baton. Work only in the current directory (your "
                "own git worktree). Report exactly as the task's rules say: run `baton report "
                "done --summary \"…\"` with your Bash tool, or call the "
                f"{REPORT_TOOL} tool; `baton checkpoint` is also the {CHECKPOINT_TOOL} tool.")

    def _argv(self, ctx: AttemptContext, message: str) -> Launch:
        exe = ctx.bin or self.bin or self.executable() or self.binary or "claude"
        argv = [exe, "-p", "--output-format", "stream-json", "--verbose"]
        env: dict[str, str] = {}
        if ctx.mode == Mode.RESEARCH:
            argv += ["--tools", RESEARCH_TOOLS, "--permission-mode", "dontAsk",
                     "--allowedTools", REPORT_TOOL]
        else:
            argv += ["--dangerously-skip-permissions",
                     "--allowedTools", f"{REPORT_TOOL},{CHECKPOINT_TOOL}"]
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
                    + (f"(the {REPORT_TOOL} tool)." if ctx.mode == Mode.RESEARCH else
                       "(`baton report done --summary \"…\"`, or the baton_report tool)."))
        return self._argv(ctx, message)

    # ----------------------------------------------------------------- events
    def progress(self, line: str) -> str | None:
        event = event_of(line)
        if event is None:
            return None
        kind = event.get("type")
        if kind == "system":
            sub = event.get("subtype")
            if sub == "init":
                return f"claude started (model {event.get('model') or '?'})"
            if sub == "api_retry":
                return (f"API retry {event.get('attempt')}/{event.get('max_retries')} "
                        f"({event.get('error_status') or event.get('error') or 'error'})")
            return None
        if kind == "assistant":
            return _assistant_line(event.get("message") or {})
        if kind == "user":
            for block in _content(event.get("message") or {}):
                if block.get("type") == "tool_result" and block.get("is_error"):
                    return "tool error: " + one_line(_text_of(block.get("content")), 120)
            return None
        if kind == "rate_limit_event":
            info = event.get("rate_limit_info") or {}
            if info.get("status") == "rejected":
                return f"usage limit reached ({info.get('rateLimitType') or 'limit'})"
            return None
        if kind == "result":
            if event.get("is_error") or event.get("subtype") != "success":
                return "error: " + one_line(event.get("result") or event.get("subtype"), 140)
            return f"finished ({event.get('num_turns', '?')} turns)"
        return None

    def outcome(self, text: str) -> Outcome:
        out = Outcome()
        result: dict[str, Any] | None = None
        last_text = None
        rejected_reset: float | None = None
        usage_by_message: dict[str, int] = {}
        limit_texts: list[str] = []
        for event in events(text):
            if event.get("session_id"):
                out.session_id = str(event["session_id"])
            kind = event.get("type")
            if kind == "assistant":
                message = event.get("message") or {}
                texts = [b.get("text", "") for b in _content(message) if b.get("type") == "text"]
                if any(t.strip() for t in texts):
                    last_text = "\n".join(t for t in texts if t.strip())
                    if any(w in last_text for w in _LIMIT_WORDS):
                        limit_texts.append(last_text)
                key = str(message.get("id") or len(usage_by_message))
                usage_by_message[key] = _usage_tokens(message.get("usage") or {})
            elif kind == "rate_limit_event":
                info = event.get("rate_limit_info") or {}
                if info.get("status") == "rejected":
                    reset = info.get("resetsAt") or info.get("overageResetsAt")
                    rejected_reset = float_of(reset) or rejected_reset or 0.0
            elif kind == "result":
                result = event
        if result is not None:
            out.cost = float_of(result.get("total_cost_usd"))
            out.tokens = _usage_tokens(result.get("usage") or {}) or sum(usage_by_message.values())
            out.final_text = result.get("result") if isinstance(result.get("result"), str) \
                else last_text
            failed = bool(result.get("is_error")) or result.get("subtype") != "success"
            out.success_event = not failed
            if failed:
                message = str(result.get("result") or result.get("subtype") or "error")
                errors = result.get("errors")
                if isinstance(errors, list) and errors and not result.get("result"):
                    message = "; ".join(str(e) for e in errors[:3])
                out.error = one_line(message, 300)
                if any(w in message for w in _LIMIT_WORDS):
                    limit_texts.append(message)
        else:
            out.tokens = sum(usage_by_message.values())
            out.final_text = last_text
        if out.success_event:
            return out   # a run that ended well is not stopped by a limit warning
        reset = rejected_reset or None          # exact (epoch seconds) when Claude sent it
        for message in limit_texts if reset is None else ():
            reset = claude_reset(message) or reset   # else the wording (minutes, local zone)
        if reset is not None:
            out.limit_until = reset
        elif limit_texts or rejected_reset is not None:
            out.error = out.error or one_line(limit_texts[-1] if limit_texts else "usage limit")
        elif result is not None and (result.get("api_error_status") == 429
                                     or any(w in (out.error or "") for w in _THROTTLE_WORDS)):
            out.rate_limited = True
        return out


def _content(message: dict) -> list[dict]:
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


def _usage_tokens(usage: dict) -> int:
    return sum(int_of(usage.get(k)) for k in ("input_tokens", "output_tokens",
                                              "cache_creation_input_tokens",
                                              "cache_read_input_tokens"))


def _assistant_line(message: dict) -> str | None:
    for block in reversed(_content(message)):
        if block.get("type") == "tool_use":
            return _tool_line(str(block.get("name") or "tool"), block.get("input") or {})
    for block in _content(message):
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            return one_line(block["text"])
    return None


def _tool_line(name: str, args: dict) -> str:
    if name.startswith("mcp__baton__"):
        tool = name.removeprefix("mcp__baton__")
        what = one_line(args.get("summary") or args.get("what"), 100)
        return f"{tool}: {args.get('status', '')} {what}".strip()
    if name == "Bash":
        return "$ " + one_line(args.get("command"), 140)
    for key in ("file_path", "path", "pattern", "url"):
        if args.get(key):
            return f"{name} {one_line(args[key], 140)}"
    return name

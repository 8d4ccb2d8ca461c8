"""Gemini CLI (`gemini -p … -o stream-json`): JSONL events, MCP report, quotas, resume by id.

Baton's settings reach one run through a per-attempt view of the person's `~/.gemini`
(`gemini_home`): the `baton` MCP server (trusted, its BATON_* variables passed in its `env`,
since Gemini strips variables whose names look like secrets), and the effort as thinking
overrides — `thinkingLevel` for the Gemini 3 family, `thinkingBudget` for 2.5 (medium is
Gemini CLI's own default). New sessions get their id up front (`--session-id`); resume is
`--resume <id>`. Build: `--approval-mode yolo`. Research: `--approval-mode default`, where a
headless run is offered no write or shell tool at all, plus an admin-tier policy that denies
the editing tools anyway (the person's own policies cannot allow them back) and allows its
shell, so it can run the tests or a linter in its throwaway worktree (what that writes is
discarded) and report with `baton report`; only Baton's MCP server. The planner, in the
person's own checkout, has the shell denied too.

Events: `init` (session_id, model), `message` (assistant text in deltas), `tool_use`,
`tool_result` (status, error), `result` (status, error, stats). On a 429 Gemini CLI retries by
itself and says so on stderr ("Attempt 1 failed: … Retrying after 4022ms…", or "… failed with
status 429. Retrying with backoff…"): `halt` stops it there and Baton waits instead, visibly.
A daily quota ends the run at once ("You have exhausted your daily quota on this model."):
Google resets per-day quotas at midnight Pacific time. A signal makes it exit 0; only a final
`result` with status success is a finished run.
"""

from __future__ import annotations

import os
import re
import uuid
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Launch
from baton_tui.players.cli_events import ARGV_PROMPT_LIMIT, int_of, mcp_command, mcp_env, \
    one_line
from baton_tui.players.decoding import (
    AgentStarted,
    Decoder,
    Event,
    Failed,
    Finished,
    JsonDecoder,
    LimitHit,
    Note,
    Retrying,
    SessionNamed,
    ToolCall,
    ToolResult,
    Usage,
    obj,
    said,
    text_of,
)
from baton_tui.players.gemini_home import build_home, person_gemini_dir
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limits import (
    GEMINI_DAILY,
    GEMINI_LIMIT,
    GEMINI_RATE,
    pacific_midnight,
    printed_at,
    wait_seconds,
)

# Gemini CLI 0.61 (packages/core/src/config/models.ts): its aliases and VALID_GEMINI_MODELS.
MODELS = ("auto", "pro", "flash", "flash-lite", "auto-gemini-3", "auto-gemini-2.5",
          "gemini-3-pro-preview", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview-customtools",
          "gemini-3-flash-preview", "gemini-2.5-pro", "gemini-3.5-flash", "gemini-3.8-flash",
          "gemini-3-flash", "gemini-3.1-flash-lite", "gemini-3.5-flash-lite", "gemma-4-31b-it",
          "gemma-4-26b-a4b-it")
REPORT_TOOL = "mcp_baton_baton_report"
RESEARCH_DENIED = ("write_file", "replace")
SHELL_TOOL = "run_shell_command"
THINKING = {"low": ("LOW", 1024), "high": ("HIGH", 24576)}   # medium: Gemini CLI's default
RETRY = re.compile(r"^Attempt \d+ failed(?::| with)(?P<rest>.*?)\. Retrying (?:after (?P<ms>\d+)"
                   r"ms|with backoff)")


class GeminiPlayer(CliPlayer):
    """Google's Gemini CLI (npm @google/gemini-cli)."""

    name = "gemini"
    binary = "gemini"
    install = "npm i -g @google/gemini-cli"
    models = MODELS
    default_model = None        # Gemini CLI's own (`auto`: it routes each request)
    efforts = ("low", "medium", "high")
    interactive_resume = ("--resume",)
    retries_limits_itself = True   # a 429: "Attempt 1 failed … Retrying", for minutes
    key_vars = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI",
                "GOOGLE_GENAI_USE_GCA", "GOOGLE_CLOUD_ACCESS_TOKEN")

    def signed_in(self) -> str | None:
        """An API key (Gemini API or Vertex AI) in the environment, or a Google sign-in that
        Gemini CLI saved (`oauth_creds.json`)."""
        env = {**os.environ, **self.env}
        if any(env.get(var) for var in self.key_vars):
            return None
        if (person_gemini_dir(env) / "oauth_creds.json").exists():
            return None
        return ("not signed in (no GEMINI_API_KEY and no Google sign-in): run `gemini` once "
                "and choose Sign in with Google, or export GEMINI_API_KEY")

    # ----------------------------------------------------------------- command lines
    def _settings(self, ctx: AttemptContext) -> dict:
        command = mcp_command()
        settings: dict = {"mcpServers": {"baton": {
            "command": command[0], "args": command[1:], "env": mcp_env(ctx.env),
            "trust": True}},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True}}
        level = THINKING.get(ctx.effort or "")
        if level:
            settings["modelConfigs"] = {"customOverrides": [
                {"match": {"model": "chat-base-3"}, "modelConfig": {"generateContentConfig": {
                    "thinkingConfig": {"thinkingLevel": level[0]}}}},
                {"match": {"model": "chat-base-2.5"}, "modelConfig": {"generateContentConfig": {
                    "thinkingConfig": {"thinkingBudget": level[1]}}}}]}
        return settings

    def _argv(self, ctx: AttemptContext, message: str, session: list[str]) -> Launch:
        exe = ctx.bin or self.bin or self.executable() or self.binary or "gemini"
        env = {**os.environ, **self.env}
        home = build_home(ctx.attempt_dir, env, self._settings(ctx))
        argv = [exe, "-o", "stream-json", "--skip-trust", *session]
        if ctx.mode == Mode.RESEARCH:
            policy = ctx.attempt_dir / "gemini-research-policy.toml"
            rules = {**{tool: "deny" for tool in RESEARCH_DENIED},
                     SHELL_TOOL: "deny" if ctx.planning else "allow"}
            policy.write_text("".join(
                f'[[rule]]\ntoolName = "{tool}"\ndecision = "{decision}"\npriority = 900\n\n'
                for tool, decision in rules.items()), encoding="utf-8")
            argv += ["--approval-mode", "default", "--admin-policy", str(policy),
                     "--allowed-mcp-server-names", "baton"]
        else:
            argv += ["--approval-mode", "yolo"]
        if ctx.model:
            argv += ["--model", ctx.model]
        launch_env = {"GEMINI_CLI_HOME": str(home), "PWD": str(ctx.worktree)}
        if len(message.encode("utf-8")) > ARGV_PROMPT_LIMIT:
            # -p text is appended to stdin's: the whole prompt on stdin, a space on argv.
            return Launch([*argv, "--prompt", " "], launch_env, stdin_prompt=True)
        return Launch([*argv, "--prompt", message], launch_env)

    def launch(self, ctx: AttemptContext) -> Launch:
        return self._argv(ctx, ctx.prompt, ["--session-id", str(uuid.uuid4())])

    def resume(self, ctx: AttemptContext) -> Launch | None:
        if not ctx.session_id:
            return None
        message = (ctx.resume_message or "Continue the task where you left off.").strip()
        message += ("\n\nWhen the task is finished, report it as Baton's rules say "
                    + (f"(the {REPORT_TOOL} tool: this task has no shell)."
                       if ctx.planning else
                       "(`baton report done --summary \"…\"`, or the baton_report tool)."))
        return self._argv(ctx, message[:ARGV_PROMPT_LIMIT], ["--resume", ctx.session_id])

    # ----------------------------------------------------------------- output
    def decoder(self) -> Decoder:
        return GeminiDecoder()


class GeminiDecoder(JsonDecoder):
    """Gemini CLI's stream-json, and its own retry lines on stderr.

    Its text arrives in pieces (`message` deltas), gathered until the next event. A retry
    line is a limit only when the run has no failed result of its own to explain it, so
    that limit is told at the end of the stream.
    """

    def __init__(self) -> None:
        self.calls: dict[str, str] = {}
        self.text: list[str] = []
        self.result_failed = False
        self.retry_limit: LimitHit | None = None

    def flush(self) -> list[Event]:
        text = "".join(self.text)
        self.text.clear()
        return said(text)

    def close(self) -> list[Event]:
        found = self.flush()
        if self.retry_limit is not None and not self.result_failed:
            found.append(self.retry_limit)
        return found

    def plain(self, line: str) -> list[Event]:
        match = RETRY.match(line.strip())
        if not match:
            return super().plain(line)
        wait = wait_seconds(match["rest"])
        wait = wait if wait is not None else int(match["ms"]) / 1000 if match["ms"] else None
        self.retry_limit = LimitHit(None if wait is None else printed_at() + wait, False,
                                    line.strip())
        found: list[Event] = [Failed(line.strip(), label="model error")]
        if match["ms"] or GEMINI_RATE.search(match["rest"]) or GEMINI_LIMIT.search(match["rest"]):
            found.append(Retrying("Gemini CLI would retry on its own"))
        return found

    def decode(self, event: dict[str, Any]) -> list[Event]:
        kind = event.get("type")
        if kind == "message":
            if event.get("role") == "assistant":
                self.text.append(text_of(event.get("content")))
            return []
        found = self.flush()
        if kind == "init":
            if event.get("session_id"):
                found.append(SessionNamed(str(event["session_id"])))
            found.append(AgentStarted("gemini", text_of(event.get("model")) or None))
        elif kind == "tool_use":
            name = str(event.get("tool_name") or "tool")
            self.calls[str(event.get("tool_id"))] = name
            args = event.get("parameters")
            found.append(ToolCall(name, args if isinstance(args, dict) else {}))
        elif kind == "tool_result":
            name = self.calls.get(str(event.get("tool_id")), "tool")
            error = obj(event.get("error"))
            failed = event.get("status") == "error"
            found.append(ToolResult(name, not failed, text_of(
                (error.get("message") if failed else None) or event.get("output"))))
        elif kind == "result":
            tokens = int_of((event.get("stats") or {}).get("total_tokens"))
            found.append(Usage(tokens, total=True))
            if event.get("status") == "success":
                found.append(Finished(True, summary=f"{tokens} tokens"))
            else:
                self.result_failed = True
                message = text_of((event.get("error") or {}).get("message")) or "error"
                found += [Finished(False, error=message), *quota_limit(message)]
        elif kind == "error":
            found.append(Note(one_line(event.get("message"), 160),
                              kind="error" if event.get("severity") == "error" else "note",
                              shown=True))
        return found


def quota_limit(message: str) -> list[Event]:
    """A failed result's limit: a daily quota resets at midnight Pacific; a wait it names."""
    wait = wait_seconds(message)
    if GEMINI_DAILY in message:
        return [LimitHit(pacific_midnight(), True, message)]
    if wait is not None and (GEMINI_LIMIT.search(message) or GEMINI_RATE.search(message)):
        return [LimitHit(printed_at() + wait, False, message)]
    if GEMINI_RATE.search(message):
        return [LimitHit(None, False, message)]
    if GEMINI_LIMIT.search(message):
        return [LimitHit(None, True, message)]
    return []

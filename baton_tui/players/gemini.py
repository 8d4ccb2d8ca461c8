"""Gemini CLI (`gemini -p … -o stream-json`): JSONL events, MCP report, quotas, resume by id.

Baton's settings reach one run through a per-attempt view of the person's `~/.gemini`
(`gemini_home`): the `baton` MCP server (trusted, its BATON_* variables passed in its `env`,
since Gemini strips variables whose names look like secrets), and the effort as thinking
overrides — `thinkingLevel` for the Gemini 3 family, `thinkingBudget` for 2.5 (medium is
Gemini CLI's own default). New sessions get their id up front (`--session-id`); resume is
`--resume <id>`. Build: `--approval-mode yolo`. Research: `--approval-mode default`, where a
headless run is offered no write or shell tool at all, plus an admin-tier policy that denies
them anyway (the person's own policies cannot allow them back) and only Baton's MCP server.

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

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Launch, Outcome, printed_at
from baton_tui.players.cli_events import ARGV_PROMPT_LIMIT, event_of, events, int_of, \
    mcp_command, mcp_env, one_line
from baton_tui.players.gemini_home import build_home, person_gemini_dir
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.steps import Parser, Step, register, tool_step
from baton_tui.players.waits import pacific_midnight, wait_seconds

# Gemini CLI 0.61 (packages/core/src/config/models.ts): its aliases and VALID_GEMINI_MODELS.
MODELS = ("auto", "pro", "flash", "flash-lite", "auto-gemini-3", "auto-gemini-2.5",
          "gemini-3-pro-preview", "gemini-3.1-pro-preview", "gemini-3.1-pro-preview-customtools",
          "gemini-3-flash-preview", "gemini-2.5-pro", "gemini-3.5-flash", "gemini-3.8-flash",
          "gemini-3-flash", "gemini-3.1-flash-lite", "gemini-3.5-flash-lite", "gemma-4-31b-it",
          "gemma-4-26b-a4b-it")
REPORT_TOOL = "mcp_baton_baton_report"
RESEARCH_DENIED = ("write_file", "replace", "run_shell_command")
THINKING = {"low": ("LOW", 1024), "high": ("HIGH", 24576)}   # medium: Gemini CLI's default
RETRY = re.compile(r"^Attempt \d+ failed(?::| with)(?P<rest>.*?)\. Retrying (?:after (?P<ms>\d+)"
                   r"ms|with backoff)")
LIMIT_WORDS = re.compile(r"quota|exhausted|RESOURCE_EXHAUSTED|capacity", re.IGNORECASE)
RATE_WORDS = re.compile(r"\b429\b|rate.?limit|too many requests", re.IGNORECASE)


class GeminiPlayer(CliPlayer):
    """Google's Gemini CLI (npm @google/gemini-cli)."""

    name = "gemini"
    binary = "gemini"
    install = "npm i -g @google/gemini-cli"
    research_shell = False      # research has no shell: the report goes over MCP
    models = MODELS
    default_model = None        # Gemini CLI's own (`auto`: it routes each request)
    efforts = ("low", "medium", "high")
    interactive_resume = ("--resume",)
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
            policy.write_text("".join(
                f'[[rule]]\ntoolName = "{tool}"\ndecision = "deny"\npriority = 900\n\n'
                for tool in RESEARCH_DENIED), encoding="utf-8")
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
                       if ctx.mode == Mode.RESEARCH else
                       "(`baton report done --summary \"…\"`, or the baton_report tool)."))
        return self._argv(ctx, message[:ARGV_PROMPT_LIMIT], ["--resume", ctx.session_id])

    # ----------------------------------------------------------------- output
    def halt(self, line: str) -> str | None:
        match = RETRY.match(line.strip())
        if match and (match["ms"] or RATE_WORDS.search(match["rest"])
                      or LIMIT_WORDS.search(match["rest"])):
            return "rate limited: Gemini CLI would retry on its own"
        return None

    def progress(self, line: str) -> str | None:
        if RETRY.match(line.strip()):
            return "model error: " + one_line(line, 150)
        event = event_of(line)
        if event is None:
            return None
        kind = event.get("type")
        if kind == "init":
            return f"gemini started (model {event.get('model') or '?'})"
        if kind == "tool_use":
            return _tool_line(str(event.get("tool_name") or "tool"), event.get("parameters") or {})
        if kind == "tool_result" and event.get("status") == "error":
            error = event.get("error") if isinstance(event.get("error"), dict) else {}
            return "tool error: " + one_line(error.get("message") or event.get("output"), 120)
        if kind == "result":
            if event.get("status") != "success":
                return "error: " + one_line((event.get("error") or {}).get("message"), 150)
            return f"finished ({int_of((event.get('stats') or {}).get('total_tokens'))} tokens)"
        if kind == "error":
            return one_line(event.get("message"), 160)
        return None

    def outcome(self, text: str) -> Outcome:
        out = Outcome()
        said: list[str] = []
        for event in events(text):
            kind = event.get("type")
            if kind == "init" and event.get("session_id"):
                out.session_id = str(event["session_id"])
            elif kind == "message" and event.get("role") == "assistant":
                said.append(str(event.get("content") or ""))
            elif kind == "tool_use":
                said = []
            elif kind == "result":
                out.tokens = int_of((event.get("stats") or {}).get("total_tokens"))
                out.success_event = event.get("status") == "success"
                if not out.success_event:
                    out.error = one_line((event.get("error") or {}).get("message") or "error", 300)
        out.final_text = "".join(said).strip() or None
        if out.success_event:
            return out
        retries = [m for m in map(RETRY.match, map(str.strip, text.splitlines())) if m]
        if out.error is None and retries:   # stopped while Gemini CLI waited to retry
            last = retries[-1]
            out.error = one_line(last.string, 300)
            wait = wait_seconds(last["rest"])
            wait = wait if wait is not None else int(last["ms"]) / 1000 if last["ms"] else None
            if wait is not None:
                out.limit_until = printed_at() + wait
            else:
                out.rate_limited = True
            return out
        message = out.error or ""
        wait = wait_seconds(message)
        if "daily quota" in message:
            out.limit_until = pacific_midnight()
        elif wait is not None and (LIMIT_WORDS.search(message) or RATE_WORDS.search(message)):
            out.limit_until = printed_at() + wait
        elif RATE_WORDS.search(message):
            out.rate_limited = True
        elif LIMIT_WORDS.search(message):
            out.limited = True
        return out

def _tool_line(name: str, args: dict) -> str:
    if name.startswith("mcp_baton_"):
        tool = name.removeprefix("mcp_baton_")
        what = one_line(args.get("summary") or args.get("what"), 100)
        return f"{tool}: {args.get('status', '')} {what}".strip()
    if name == "run_shell_command":
        return "$ " + one_line(args.get("command"), 140)
    for key in ("file_path", "dir_path", "path", "pattern", "url"):
        if args.get(key):
            return f"{name} {one_line(args[key], 140)}"
    return name


def steps_parser() -> Parser:
    """Gemini CLI's events as readable steps (`players.steps`); its text arrives in pieces,
    gathered until the next event."""
    calls: dict[str, str] = {}
    text: list[str] = []

    def flush() -> list[Step]:
        said = "".join(text).strip()
        text.clear()
        return [Step("said", one_line(said, 200))] if said else []

    def parse(event: dict) -> list[Step]:
        kind = event.get("type")
        if kind == "message":
            if event.get("role") == "assistant":
                text.append(str(event.get("content") or ""))
            return []
        steps = flush()
        if kind == "init":
            steps.append(Step("note", f"started · model {event.get('model') or '?'}"))
        elif kind == "tool_use":
            name = str(event.get("tool_name") or "tool")
            calls[str(event.get("tool_id"))] = name
            steps.append(tool_step(name, event.get("parameters") or {}))
        elif kind == "tool_result":
            name = calls.get(str(event.get("tool_id")), "tool")
            if event.get("status") == "error":
                error = event.get("error") if isinstance(event.get("error"), dict) else {}
                steps.append(Step("error", f"{name} failed: "
                                  + one_line(error.get("message") or event.get("output"), 140),
                                  ok=False))
            elif name == "run_shell_command":
                steps.append(Step("result", "exit 0", one_line(event.get("output"), 140), True))
        elif kind == "result":
            error = (event.get("error") or {}).get("message")
            steps.append(Step("result", "finished", ok=True) if event.get("status") == "success"
                         else Step("error", "ended with an error: " + one_line(error, 160),
                                   ok=False))
        elif kind == "error":
            steps.append(Step("error" if event.get("severity") == "error" else "note",
                              one_line(event.get("message"), 160)))
        return steps

    return parse


register("gemini", steps_parser)

"""OpenCode (`opencode run --format json`): JSONL events, MCP report, variants, resume by id.

The prompt always goes on stdin: `opencode run` joins its message arguments and wraps any
argument holding a space in quotes, so an argv prompt would not arrive verbatim. `--title`
skips the title request a new session otherwise spends a model call on. Baton's settings
travel in `OPENCODE_CONFIG_CONTENT`, which OpenCode merges last over the person's own config
(theirs, if they set the variable, is kept and ours merged into it): the `baton` MCP server
with the attempt's BATON_* variables, and for research an agent of Baton's own whose
permissions deny every tool but reading, searching and Baton's own — OpenCode then does not
offer the others at all, nor a repository's custom tools (its `plan` agent alone is not
read-only: its bash writes).
`PWD` is set to the worktree: OpenCode resolves relative paths and runs bash in `$PWD`,
not in its working directory, so an inherited PWD would send the agent's work elsewhere.

OpenCode retries a 429 on its own (five times, honouring Retry-After however long) and prints
nothing while it waits, so Baton runs it with `--print-logs --log-level WARN`: each failed
request logs a `stream error` line naming the session and the provider's message, `halt`
stops the agent at the first one that is a rate or usage limit, and the message's "try again
in …" (or the final error event's Retry-After) gives the reset. A signal makes OpenCode exit
0; only a final `step_finish` with reason `stop` is a finished run.
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Launch, Outcome
from baton_tui.players.cli_events import event_of, events, float_of, int_of, mcp_command, \
    mcp_env, one_line
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.steps import Parser, Step, register, tool_step
from baton_tui.players.waits import iso_epoch, retry_after, wait_seconds

RESEARCH_AGENT = "baton-research"
# OpenCode evaluates the last matching rule: deny everything, then allow the readers back.
RESEARCH_PERMISSION = {"*": "deny", "read": "allow", "grep": "allow", "glob": "allow",
                       "list": "allow", "baton_*": "allow"}
# Provider keys OpenCode picks up from the environment (its models.dev providers' `env`).
KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY",
            "OPENROUTER_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY",
            "MISTRAL_API_KEY", "GITHUB_TOKEN", "AZURE_API_KEY", "AWS_ACCESS_KEY_ID",
            "AWS_BEARER_TOKEN_BEDROCK", "OPENCODE_API_KEY", "OPENCODE_AUTH_CONTENT")
STREAM_ERROR = re.compile(r'message="stream error".*?error\.error="(?P<msg>.*)"\s*$')
LOG_TIME = re.compile(r"^timestamp=(\S+)")
LOG_SESSION = re.compile(r"session\.id=(ses_\w+)")
LIMIT_WORDS = re.compile(r"usage limit|quota|UsageLimitError|insufficient_quota|exhausted",
                         re.IGNORECASE)
RATE_WORDS = re.compile(r"\b429\b|rate.?limit|too many requests|overloaded", re.IGNORECASE)


def merged(base: dict, extra: dict) -> dict:
    """`extra` deep-merged over `base` (objects merge, anything else is replaced)."""
    out = dict(base)
    for key, value in extra.items():
        out[key] = merged(out[key], value) if isinstance(value, dict) and \
            isinstance(out.get(key), dict) else value
    return out


class OpenCodePlayer(CliPlayer):
    """SST's OpenCode CLI (npm opencode-ai)."""

    name = "opencode"
    binary = "opencode"
    install = "npm i -g opencode-ai"
    research_shell = False      # research has no bash: the report goes over MCP
    models = ()                 # asked of OpenCode itself: see `catalog`
    default_model = None        # the person's configured default
    efforts = ("low", "medium", "high")   # `--variant`: the provider's reasoning effort
    interactive_resume = ("--session",)

    def _env(self) -> dict[str, str]:
        return {**os.environ, **self.env}

    def data_dir(self) -> Path:
        env = self._env()
        return Path(env.get("XDG_DATA_HOME") or Path(env.get("HOME") or Path.home())
                    / ".local" / "share") / "opencode"

    def config_files(self) -> list[Path]:
        env = self._env()
        config = Path(env.get("XDG_CONFIG_HOME") or Path(env.get("HOME") or Path.home())
                      / ".config") / "opencode"
        files = [config / n for n in ("config.json", "opencode.json", "opencode.jsonc")]
        if env.get("OPENCODE_CONFIG"):
            files.append(Path(env["OPENCODE_CONFIG"]))
        return files

    def signed_in(self) -> str | None:
        """A provider OpenCode can use beyond its keyless free models: a login (`opencode
        auth login` writes auth.json), a provider key in the environment, or a provider in
        the person's opencode config."""
        env = self._env()
        if any(env.get(var) for var in KEY_VARS):
            return None
        try:
            if json.loads((self.data_dir() / "auth.json").read_text(encoding="utf-8")):
                return None
        except (OSError, ValueError):
            pass
        texts = [env.get("OPENCODE_CONFIG_CONTENT", "")]
        for path in self.config_files():
            try:
                texts.append(path.read_text(encoding="utf-8"))
            except OSError:
                continue
        if any(re.search(r'"provider"\s*:\s*\{\s*"', text) for text in texts):
            return None
        return ("not signed in to any provider (only OpenCode's free models): run "
                "`opencode auth login`, or export a provider key such as ANTHROPIC_API_KEY")

    def catalog(self) -> tuple[str, ...] | None:
        """`opencode models`: every provider/model this person's OpenCode can start (cached)."""
        exe = self.executable()
        if exe is None:
            return None
        from baton_tui.players.model_lists import listed_models

        env = {**self._env(), "OPENCODE_DISABLE_AUTOUPDATE": "1"}
        listed = listed_models(self.name, [exe, "models"], Path.cwd(), env,
                               [*self.config_files(), self.data_dir() / "auth.json",
                                Path.cwd() / "opencode.json", Path.cwd() / "opencode.jsonc"],
                               [*KEY_VARS, "OPENCODE_CONFIG_CONTENT"])
        if listed is None:
            return None
        return tuple(dict.fromkeys([*listed, *self.extra_models]))

    def model_problem(self, model: str | None) -> str | None:
        catalog = self.catalog() if model else None
        if model is None or catalog is None or model in catalog:
            return None
        shown = ", ".join(catalog[:8]) + (", …" if len(catalog) > 8 else "")
        return (f"player 'opencode' cannot start model {model!r} (not in `opencode models`: "
                f"{shown}; names are provider/model)")

    # ----------------------------------------------------------------- command lines
    def _config(self, ctx: AttemptContext) -> str:
        command = mcp_command()
        ours: dict[str, Any] = {"mcp": {"baton": {
            "type": "local", "command": command, "enabled": True,
            "environment": mcp_env(ctx.env)}}}
        if ctx.mode == Mode.RESEARCH:
            ours["agent"] = {RESEARCH_AGENT: {
                "mode": "primary", "description": "Baton's read-only research task",
                "permission": dict(RESEARCH_PERMISSION)}}
        try:
            theirs = json.loads(self._env().get("OPENCODE_CONFIG_CONTENT") or "{}")
        except ValueError:
            theirs = {}
        return json.dumps(merged(theirs if isinstance(theirs, dict) else {}, ours))

    def _launch(self, ctx: AttemptContext, stdin_file: Path | None) -> Launch:
        exe = ctx.bin or self.bin or self.executable() or self.binary or "opencode"
        argv = [exe, "run", "--format", "json", "--print-logs", "--log-level", "WARN",
                "--title", f"Baton task {ctx.task_id}"]
        if ctx.mode == Mode.RESEARCH:
            argv += ["--agent", RESEARCH_AGENT]
        if ctx.model:
            argv += ["--model", ctx.model]
        if ctx.effort:
            argv += ["--variant", ctx.effort]
        if ctx.session_id:
            argv += ["--session", ctx.session_id]
        env = {"OPENCODE_CONFIG_CONTENT": self._config(ctx), "OPENCODE_DISABLE_AUTOUPDATE": "1",
               "PWD": str(ctx.worktree)}
        return Launch(argv, env, stdin_prompt=True, stdin_file=stdin_file)

    def launch(self, ctx: AttemptContext) -> Launch:
        return self._launch(ctx, None)

    def resume(self, ctx: AttemptContext) -> Launch | None:
        if not ctx.session_id:
            return None
        message = (ctx.resume_message or "Continue the task where you left off.").strip()
        message += ("\n\nWhen the task is finished, report it as Baton's rules say "
                    + ("(the baton_report tool: this task has no shell)." if ctx.mode == Mode.RESEARCH
                       else "(`baton report done --summary \"…\"`, or the baton_report tool)."))
        path = ctx.attempt_dir / "resume-message.md"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(message)
        return self._launch(ctx, path)

    # ----------------------------------------------------------------- output
    def halt(self, line: str) -> str | None:
        match = STREAM_ERROR.search(line)
        if match and (LIMIT_WORDS.search(match["msg"]) or RATE_WORDS.search(match["msg"])):
            return "rate limited: OpenCode would retry on its own, silently"
        return None

    def progress(self, line: str) -> str | None:
        match = STREAM_ERROR.search(line)
        if match:
            return "model error: " + one_line(match["msg"], 150)
        event = event_of(line)
        if event is None:
            return None
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        kind = event.get("type")
        if kind == "text":
            return one_line(part.get("text")) or None
        if kind == "tool_use":
            state = part.get("state") if isinstance(part.get("state"), dict) else {}
            line_ = _tool_line(str(part.get("tool") or "tool"), state.get("input") or {})
            return line_ if state.get("status") != "error" else \
                f"{line_} failed: {one_line(state.get('error'), 100)}"
        if kind == "step_finish" and part.get("reason") == "stop":
            return f"finished ({int_of((part.get('tokens') or {}).get('total'))} tokens)"
        if kind == "error":
            return "error: " + one_line(_error_message(event), 150)
        return None

    def outcome(self, text: str) -> Outcome:
        out = Outcome()
        last_error: dict | None = None
        for event in events(text):
            if event.get("sessionID"):
                out.session_id = str(event["sessionID"])
            part = event.get("part") if isinstance(event.get("part"), dict) else {}
            kind = event.get("type")
            if kind == "text" and str(part.get("text", "")).strip():
                out.final_text = str(part["text"])
            elif kind == "step_finish":
                tokens = part.get("tokens") or {}
                out.tokens += int_of(tokens.get("total")) or (
                    int_of(tokens.get("input")) + int_of(tokens.get("output")))
                out.cost += float_of(part.get("cost"))
                out.success_event = True if part.get("reason") == "stop" else None
            elif kind == "error":
                last_error, out.success_event = event, False
        streamed = [(m, line) for line in text.splitlines() if (m := STREAM_ERROR.search(line))]
        if out.session_id is None:
            for _m, line in streamed:
                found = LOG_SESSION.search(line)
                out.session_id = found.group(1) if found else out.session_id
        if out.success_event:
            return out
        if last_error is not None:
            data = (last_error.get("error") or {}).get("data") or {}
            message = _error_message(last_error)
            at = float_of(last_error.get("timestamp")) / 1000 or time.time()
            headers = {str(k).lower(): v for k, v in (data.get("responseHeaders") or {}).items()}
            reset = retry_after(headers.get("retry-after"), at)
            blob = f"{message} {data.get('responseBody') or ''}"
            limit = data.get("statusCode") == 429 or bool(RATE_WORDS.search(blob))
        elif streamed:
            match, line = streamed[-1]
            message = blob = match["msg"]
            stamp = LOG_TIME.search(line)
            at = (iso_epoch(stamp.group(1)) if stamp else None) or time.time()
            reset, limit = None, bool(RATE_WORDS.search(blob) or LIMIT_WORDS.search(blob))
        else:
            return out
        out.error = one_line(message, 300)
        if not (limit or LIMIT_WORDS.search(blob)):
            return out
        wait = wait_seconds(blob)
        reset = reset if reset and reset > at + 1 else (at + wait if wait else None)
        if reset is not None:
            out.limit_until = reset
        elif LIMIT_WORDS.search(blob):
            out.limited = True
        else:
            out.rate_limited = True
        return out


def _error_message(event: dict) -> str:
    error = event.get("error") if isinstance(event.get("error"), dict) else {}
    data = error.get("data") if isinstance(error.get("data"), dict) else {}
    return str(data.get("message") or error.get("message") or error.get("name") or "error")


def _tool_line(name: str, args: dict) -> str:
    if name.startswith("baton_baton_"):
        tool = name.removeprefix("baton_")
        what = one_line(args.get("summary") or args.get("what"), 100)
        return f"{tool}: {args.get('status', '')} {what}".strip()
    if name == "bash":
        return "$ " + one_line(args.get("command"), 140)
    for key in ("filePath", "path", "pattern", "url"):
        if args.get(key):
            return f"{name} {one_line(args[key], 140)}"
    return name


def steps_parser() -> Parser:
    """OpenCode's events as readable steps (`players.steps`)."""
    def parse(event: dict) -> list[Step]:
        part = event.get("part") if isinstance(event.get("part"), dict) else {}
        kind = event.get("type")
        if kind == "text" and str(part.get("text") or "").strip():
            return [Step("said", one_line(part.get("text"), 200))]
        if kind == "reasoning" and str(part.get("text") or "").strip():
            return [Step("note", "thinking: " + one_line(part.get("text"), 160))]
        if kind == "tool_use":
            state = part.get("state") if isinstance(part.get("state"), dict) else {}
            name = str(part.get("tool") or "tool").removeprefix("baton_")
            if state.get("status") == "error":
                return [Step("error", f"{name} failed: {one_line(state.get('error'), 140)}",
                             ok=False)]
            step = tool_step(name, state.get("input") or {}, ok=True)
            detail = one_line(state.get("output"), 160) if step.kind == "command" else ""
            return [Step(step.kind, step.text, detail, step.ok)]
        if kind == "step_finish" and part.get("reason") == "stop":
            return [Step("result", "finished", ok=True)]
        if kind == "error":
            return [Step("error", "error: " + one_line(_error_message(event), 160), ok=False)]
        return []

    return parse


register("opencode", steps_parser)

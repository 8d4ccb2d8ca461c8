"""OpenCode (`opencode run --format json`): JSONL events, MCP report, variants, resume by id.

The prompt always goes on stdin: `opencode run` joins its message arguments and wraps any
argument holding a space in quotes, so an argv prompt would not arrive verbatim. `--title`
skips the title request a new session otherwise spends a model call on. Baton's settings
travel in `OPENCODE_CONFIG_CONTENT`, which OpenCode merges last over the person's own config
(theirs, if they set the variable, is kept and ours merged into it): the `baton` MCP server
with the attempt's BATON_* variables, and for research an agent of Baton's own whose
permissions deny every tool but reading, searching, its shell and Baton's own — OpenCode then
does not offer the others at all (no edit or write tool), nor a repository's custom tools.
The shell lets research run the tests or a linter in its throwaway worktree (what that writes
is discarded) and report with `baton report`; the planner, in the person's own checkout, has
no shell (its `plan` agent alone is not read-only: its bash writes).
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
from baton_tui.players.base import AttemptContext, Launch
from baton_tui.players.cli_events import float_of, int_of, mcp_command, mcp_env, one_line
from baton_tui.players.decoding import (
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
    Usage,
    obj,
    said,
    text_of,
)
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limits import (
    OPENCODE_LIMIT,
    OPENCODE_RATE,
    iso_epoch,
    retry_after,
    wait_seconds,
)
from baton_tui.players.model_lists import listed_models

RESEARCH_AGENT = "baton-research"
# OpenCode evaluates the last matching rule: deny everything, then allow the readers back.
PLANNER_PERMISSION = {"*": "deny", "read": "allow", "grep": "allow", "glob": "allow",
                      "list": "allow", "baton_*": "allow"}
RESEARCH_PERMISSION = {**PLANNER_PERMISSION, "bash": "allow"}
# Provider keys OpenCode picks up from the environment (its models.dev providers' `env`).
KEY_VARS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY",
            "OPENROUTER_API_KEY", "GROQ_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY",
            "MISTRAL_API_KEY", "GITHUB_TOKEN", "AZURE_API_KEY", "AWS_ACCESS_KEY_ID",
            "AWS_BEARER_TOKEN_BEDROCK", "OPENCODE_API_KEY", "OPENCODE_AUTH_CONTENT")
STREAM_ERROR = re.compile(r'message="stream error".*?error\.error="(?P<msg>.*)"\s*$')
LOG_TIME = re.compile(r"^timestamp=(\S+)")
LOG_SESSION = re.compile(r"session\.id=(ses_\w+)")


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
    models = ()                 # asked of OpenCode itself: see `catalog`
    default_model = None        # the person's configured default
    efforts = ("low", "medium", "high")   # `--variant`: the provider's reasoning effort
    interactive_resume = ("--session",)
    retries_limits_itself = True   # a 429: five silent retries, however long Retry-After is

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

    def model_unchecked(self, model: str | None) -> str | None:
        if model is None or model in self.extra_models or self.catalog() is not None:
            return None
        return (f"`opencode models` did not answer here, so model {model!r} is not checked "
                "(OpenCode refuses a name it lacks when the task starts)")

    # ----------------------------------------------------------------- command lines
    def _config(self, ctx: AttemptContext) -> str:
        command = mcp_command()
        ours: dict[str, Any] = {"mcp": {"baton": {
            "type": "local", "command": command, "enabled": True,
            "environment": mcp_env(ctx.env)}}}
        if ctx.mode == Mode.RESEARCH:
            ours["agent"] = {RESEARCH_AGENT: {
                "mode": "primary", "description": "Baton's read-only research task",
                "permission": dict(PLANNER_PERMISSION if ctx.planning else RESEARCH_PERMISSION)}}
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
                    + ("(the baton_report tool: this task has no shell)." if ctx.planning
                       else "(`baton report done --summary \"…\"`, or the baton_report tool)."))
        path = ctx.attempt_dir / "resume-message.md"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(message)
        return self._launch(ctx, path)

    # ----------------------------------------------------------------- output
    def decoder(self) -> Decoder:
        return OpenCodeDecoder()


class OpenCodeDecoder(JsonDecoder):
    """`opencode run --format json` events, and the `stream error` lines of its WARN log
    (each failed model request, which it would retry silently)."""

    def __init__(self) -> None:
        self.session_in_events = False

    def plain(self, line: str) -> list[Event]:
        match = STREAM_ERROR.search(line)
        if not match:
            return super().plain(line)
        message = match["msg"]
        found: list[Event] = [Failed(message, label="model error")]
        session = LOG_SESSION.search(line)
        if session and not self.session_in_events:
            found.insert(0, SessionNamed(session.group(1)))
        if OPENCODE_LIMIT.search(message) or OPENCODE_RATE.search(message):
            stamp = LOG_TIME.search(line)
            at = (iso_epoch(stamp.group(1)) if stamp else None) or time.time()
            wait = wait_seconds(message)
            found += [LimitHit(at + wait if wait else None, bool(OPENCODE_LIMIT.search(message)),
                               message),
                      Retrying("OpenCode would retry on its own, silently")]
        return found

    def decode(self, event: dict[str, Any]) -> list[Event]:
        found: list[Event] = []
        if event.get("sessionID"):
            self.session_in_events = True
            found.append(SessionNamed(str(event["sessionID"])))
        part = obj(event.get("part"))
        kind = event.get("type")
        if kind == "text":
            found += said(part.get("text"))
        elif kind == "reasoning" and text_of(part.get("text")).strip():
            found.append(Note("thinking: " + one_line(part.get("text"), 160)))
        elif kind == "tool_use":
            state = obj(part.get("state"))
            args = state.get("input")
            failed = state.get("status") == "error"
            found.append(ToolCall(str(part.get("tool") or "tool"),
                                  args if isinstance(args, dict) else {}, ok=not failed,
                                  output=text_of(state.get("error" if failed else "output"))))
        elif kind == "step_finish":
            tokens = part.get("tokens") or {}
            total = int_of(tokens.get("total"))
            found.append(Usage(total or int_of(tokens.get("input")) + int_of(tokens.get("output")),
                               float_of(part.get("cost"))))
            if part.get("reason") == "stop":
                found.append(Finished(True, summary=f"{total} tokens"))
        elif kind == "error":
            found += self._error(event)
        return found

    @staticmethod
    def _error(event: dict[str, Any]) -> list[Event]:
        """A final error event; a 429's Retry-After (else the words' "try again in") is the
        reset."""
        error = obj(event.get("error"))
        data = obj(error.get("data"))
        message = _error_message(event)
        found: list[Event] = [Finished(False, error=message)]
        blob = f"{message} {data.get('responseBody') or ''}"
        usage = bool(OPENCODE_LIMIT.search(blob))
        if not (usage or data.get("statusCode") == 429 or OPENCODE_RATE.search(blob)):
            return found
        at = float_of(event.get("timestamp")) / 1000 or time.time()
        headers = {str(k).lower(): v for k, v in (data.get("responseHeaders") or {}).items()}
        reset = retry_after(headers.get("retry-after"), at)
        wait = wait_seconds(blob)
        reset = reset if reset and reset > at + 1 else (at + wait if wait else None)
        return [*found, LimitHit(reset, usage, message)]


def _error_message(event: dict[str, Any]) -> str:
    error = obj(event.get("error"))
    data = obj(error.get("data"))
    return str(data.get("message") or error.get("message") or error.get("name") or "error")

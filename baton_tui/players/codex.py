"""Codex CLI (`codex exec --json`): JSONL events, MCP report, usage limits, resume by thread id.

Build: `--dangerously-bypass-approvals-and-sandbox` in the task's worktree. Research:
`--sandbox read-only` — an OS sandbox, so the shell still reads but every write fails — while
`baton mcp` (which Codex starts outside its sandbox) records the report. The MCP server is wired
with `-c mcp_servers.baton.*` flags for this run only: Codex passes its MCP servers no
environment by default, so the attempt's BATON_* variables are forwarded by name, and
`default_tools_approval_mode="approve"` lets the tools run without an approval prompt that a
headless run could never answer. The person's `$CODEX_HOME/config.toml` is read (to tell
whether they are signed in), never written.

Events: `thread.started` (thread_id = the session id), `turn.started`, `item.started` /
`item.completed` (agent_message, command_execution, mcp_tool_call, error — a non-fatal
warning), `turn.completed` (usage), `turn.failed` and `error`. A usage limit reads
"You’ve hit your usage limit. … try again at 1:06 AM." (local time).
"""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Launch
from baton_tui.players.cli_events import (
    ARGV_PROMPT_LIMIT,
    int_of,
    mcp_command,
    mcp_env,
    one_line,
    toml_value,
)
from baton_tui.players.decoding import (
    AgentStarted,
    CommandRun,
    Decoder,
    Event,
    Failed,
    FileChange,
    Finished,
    JsonDecoder,
    LimitHit,
    Note,
    SessionNamed,
    ToolCall,
    ToolResult,
    Usage,
    obj,
    said,
    text_of,
)
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limits import (
    CODEX_LIMIT_WORDS,
    CODEX_THROTTLE_WORDS,
    codex_reset,
    contains_any,
)
from baton_tui.players.model_lists import listed_models
from baton_tui.players.native import OPENAI_FAMILY


class CodexPlayer(CliPlayer):
    """OpenAI's Codex CLI."""

    research_shell = False  # read-only profile: the report goes over MCP
    name = "codex"
    binary = "codex"
    interactive_resume = ("resume",)
    key_vars = ("CODEX_API_KEY", "OPENAI_API_KEY")
    credential_files = (".codex/auth.json",)
    install = "npm i -g @openai/codex"
    # The catalog Codex 0.171 ships (`codex debug models --bundled`): used where `codex debug
    # models` cannot answer. See `catalog` and `model_problem` for what is accepted.
    models = ("gpt-6.2-sol", "gpt-6.2-astra", "gpt-6.1-sol", "gpt-6.1-terra", "gpt-6-sol",
              "gpt-6-astra", "gpt-6-luna", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-5.6-luna",
              "gpt-5.5")
    default_model = None
    efforts = ("low", "medium", "high")   # -c model_reasoning_effort=…

    def catalog(self) -> tuple[str, ...] | None:
        """`codex debug models` (refreshed from OpenAI when signed in; cached), else the
        bundled list above; plus the `model` of the person's config.toml and
        `[players.codex] models`."""
        listed = None
        exe = self.executable()
        if exe is not None:
            home = self.codex_home()
            listed = listed_models(self.name, [exe, "debug", "models"], Path.cwd(),
                                   {**os.environ, **self.env},
                                   [home / "config.toml", home / "auth.json"],
                                   ["CODEX_HOME", *self.key_vars], parse=_slugs)
        configured = self._config(self.codex_home()).get("model")
        return tuple(dict.fromkeys([*(listed or self.models),
                                    *([configured] if isinstance(configured, str) else []),
                                    *self.extra_models]))

    def model_problem(self, model: str | None) -> str | None:
        """Codex's catalog, and any name of OpenAI's model families (its API starts newer and
        older models on fallback metadata). With a provider of the person's own
        (`model_provider` naming a `[model_providers.X]`), that provider's names are its own:
        Baton cannot judge them."""
        if model is None or self._configured_provider(self.codex_home()) is not None:
            return None
        catalog = self.catalog() or ()
        if model in catalog or OPENAI_FAMILY.match(model):
            return None
        return (f"player 'codex' cannot start model {model!r} (Codex's models: "
                f"{', '.join(catalog[:6])}, …; another name your provider serves goes in "
                "[players.codex] models)")

    def model_unchecked(self, model: str | None) -> str | None:
        if model is None or model in self.extra_models:
            return None
        home = self.codex_home()
        if self._configured_provider(home) is None:
            return None
        name = self._config(home).get("model_provider")
        return (f"your Codex config's model_provider {name!r} is your own, so model {model!r} "
                "is not checked (its names are that provider's)")

    def codex_home(self) -> Path:
        env = {**os.environ, **self.env}
        if env.get("CODEX_HOME"):
            return Path(env["CODEX_HOME"])
        return Path(env.get("HOME") or Path.home()) / ".codex"

    def signed_in(self) -> str | None:
        env = {**os.environ, **self.env}
        if any(env.get(var) for var in self.key_vars):
            return None
        home = self.codex_home()
        if (home / "auth.json").exists():
            return None
        provider = self._configured_provider(home)
        if provider is not None:
            key = provider.get("env_key")
            if not key or env.get(str(key)):
                return None
            return f"not signed in (your Codex provider's {key} is not set)"
        return ("not signed in (no OPENAI_API_KEY or CODEX_API_KEY, and no "
                f"{home}/auth.json: run `codex login`)")

    @staticmethod
    def _config(home: Path) -> dict[str, Any]:
        try:
            return tomllib.loads((home / "config.toml").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    @classmethod
    def _configured_provider(cls, home: Path) -> dict[str, Any] | None:
        """The `[model_providers.X]` that `model_provider` selects in config.toml, if any."""
        config = cls._config(home)
        name = config.get("model_provider")
        providers = config.get("model_providers") or {}
        if isinstance(name, str) and isinstance(providers.get(name), dict):
            return providers[name]
        return None

    # ----------------------------------------------------------------- command lines
    def _options(self, ctx: AttemptContext) -> list[str]:
        command = mcp_command()
        names = sorted(mcp_env(ctx.env))
        # Codex runs commands in a login shell by default (`bash -lc`), and a login profile
        # (Debian's /etc/profile, for one) resets PATH, losing the `baton` shim directory that
        # Baton puts first: a plain `bash -c` keeps the environment the attempt was given.
        opts = ["--json", "--skip-git-repo-check", "-c", "allow_login_shell=false"]
        if ctx.mode == Mode.RESEARCH:
            opts += ["-c", 'sandbox_mode="read-only"', "-c", 'approval_policy="never"']
        else:
            opts += ["--dangerously-bypass-approvals-and-sandbox"]
        if ctx.planning:  # the repository's AGENTS.md is data to the planner, not its orders
            opts += ["-c", "project_doc_max_bytes=0"]
        opts += ["-c", f"mcp_servers.baton.command={toml_value(command[0])}",
                 "-c", f"mcp_servers.baton.args={toml_value(command[1:])}",
                 "-c", f"mcp_servers.baton.env_vars={toml_value(names)}",
                 "-c", 'mcp_servers.baton.default_tools_approval_mode="approve"',
                 # required: Codex waits for the server before the first turn (an optional server
                 # still starting is left out of the turn's tools: "unsupported call").
                 "-c", "mcp_servers.baton.required=true"]
        if ctx.model:
            opts += ["-m", ctx.model]
        if ctx.effort:
            opts += ["-c", f"model_reasoning_effort={toml_value(ctx.effort)}"]
        return opts

    def _with_prompt(self, argv: list[str], message: str) -> Launch:
        if len(message.encode("utf-8")) > ARGV_PROMPT_LIMIT:
            return Launch([*argv, "-"], stdin_prompt=True)   # `-`: read it from stdin
        return Launch([*argv, message])

    def _exe(self, ctx: AttemptContext) -> str:
        return ctx.bin or self.bin or self.executable() or self.binary or "codex"

    def launch(self, ctx: AttemptContext) -> Launch:
        return self._with_prompt([self._exe(ctx), "exec", *self._options(ctx), "--"],
                                 ctx.prompt)

    def resume(self, ctx: AttemptContext) -> Launch | None:
        if not ctx.session_id:
            return None
        message = (ctx.resume_message or "Continue the task where you left off.").strip()
        message += ("\n\nWhen the task is finished, report it as Baton's rules say "
                    + ("(the baton_report tool: this task has no writable shell)."
                       if ctx.mode == Mode.RESEARCH else
                       "(`baton report done --summary \"…\"`, or the baton_report tool)."))
        return self._with_prompt([self._exe(ctx), "exec", *self._options(ctx), "resume", "--",
                                  ctx.session_id], message)

    # ----------------------------------------------------------------- output
    def decoder(self) -> Decoder:
        return CodexDecoder()


class CodexDecoder(JsonDecoder):
    """`codex exec --json` events. An `error` item is a non-fatal warning (the unknown-model
    notice); an `error` event is not final by itself, `turn.failed` is."""

    def decode(self, event: dict[str, Any]) -> list[Event]:
        kind = event.get("type")
        item = obj(event.get("item"))
        itype = item.get("type")
        if kind == "thread.started":
            found: list[Event] = [AgentStarted("codex")]
            if event.get("thread_id"):
                found.insert(0, SessionNamed(str(event["thread_id"])))
            return found
        if kind == "turn.completed":
            tokens = _usage_tokens(event.get("usage") or {})
            return [Usage(tokens, turn=True), Finished(True, summary=f"{tokens} tokens")]
        if kind == "turn.failed":
            message = str((event.get("error") or {}).get("message") or "turn failed")
            return [Finished(False, error=message), *_limit(message)]
        if kind == "error":
            message = text_of(event.get("message"))
            return [Failed(message), *_limit(message)]
        if kind == "item.started" and itype == "command_execution":
            return [CommandRun(text_of(item.get("command")))]
        if kind == "item.started" and itype == "mcp_tool_call":
            args = item.get("arguments")
            return [ToolCall(str(item.get("tool") or "mcp tool"),
                             args if isinstance(args, (dict, str)) else {})]
        if kind != "item.completed":
            return []
        if itype == "agent_message":
            return said(item.get("text"))
        if itype == "command_execution":
            code = item.get("exit_code")
            return [CommandRun(text_of(item.get("command")),
                               code if isinstance(code, int) else -1,
                               text_of(item.get("aggregated_output")))]
        if itype == "file_change":
            return [FileChange(tuple((str(c.get("kind", "edit")), str(c.get("path") or ""))
                                     for c in item.get("changes") or [] if isinstance(c, dict)))]
        if itype == "mcp_tool_call" and item.get("status") == "failed":
            return [ToolResult(str(item.get("tool") or "mcp tool"), False,
                               text_of(item.get("error") or item.get("result")))]
        if itype == "error":
            return [Note("warning: " + one_line(item.get("message"), 160))]
        if itype == "reasoning":
            return [Note("thinking: " + one_line(item.get("text"), 160))]
        return []


def _limit(message: str) -> list[Event]:
    """Codex's usage limit names its reset in local wall-clock time; a 429 names none."""
    if contains_any(message, CODEX_LIMIT_WORDS):
        return [LimitHit(codex_reset(message), True, message)]
    if contains_any(message, CODEX_THROTTLE_WORDS):
        return [LimitHit(None, False, message)]
    return []


def _usage_tokens(usage: dict) -> int:
    return int_of(usage.get("input_tokens")) + int_of(usage.get("output_tokens"))


def _slugs(text: str) -> tuple[str, ...]:
    """Model slugs from `codex debug models` (a JSON catalog: {"models": [{"slug": …}]})."""
    try:
        found = json.loads(text).get("models") or []
    except (ValueError, AttributeError):
        return ()
    return tuple(str(m["slug"]) for m in found if isinstance(m, dict) and m.get("slug"))

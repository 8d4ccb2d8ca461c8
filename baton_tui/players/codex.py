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

import os
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.players.base import AttemptContext, Launch, Outcome
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.cli_events import (
    ARGV_PROMPT_LIMIT,
    codex_reset,
    event_of,
    events,
    int_of,
    mcp_command,
    mcp_env,
    one_line,
    toml_value,
)

_LIMIT_WORDS = ("hit your usage limit", "usage_limit_reached", "usage limit reached")
_THROTTLE_WORDS = ("429", "Too Many Requests", "rate_limit", "rate limit")


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
            from baton_tui.players.model_lists import listed_models

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
        from baton_tui.players.native import OPENAI_FAMILY

        if model is None or self._configured_provider(self.codex_home()) is not None:
            return None
        catalog = self.catalog() or ()
        if model in catalog or OPENAI_FAMILY.match(model):
            return None
        return (f"player 'codex' cannot start model {model!r} (Codex's models: "
                f"{', '.join(catalog[:6])}, …; another name your provider serves goes in "
                "[players.codex] models)")

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
            import tomllib

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

    # ----------------------------------------------------------------- events
    def progress(self, line: str) -> str | None:
        event = event_of(line)
        if event is None:
            return None
        kind = event.get("type")
        if kind == "thread.started":
            return "codex started"
        if kind in ("item.started", "item.completed"):
            item = event.get("item") or {}
            itype = item.get("type")
            if itype == "command_execution" and kind == "item.started":
                return "$ " + one_line(item.get("command"), 140)
            if itype == "command_execution":
                code = item.get("exit_code")
                return f"command exited {code}" if code not in (0, None) else None
            if itype == "agent_message" and kind == "item.completed":
                return one_line(item.get("text"))
            if itype == "mcp_tool_call" and kind == "item.started":
                args = item.get("arguments") or {}
                status = args.get("status", "") if isinstance(args, dict) else ""
                return f"{item.get('tool') or 'mcp tool'} {status}".strip()
            if itype == "file_change" and kind == "item.completed":
                changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
                paths = [c.get("path", "") for c in changes]
                return "edited " + ", ".join(p for p in paths if p)[:140]
            return None
        if kind == "turn.completed":
            usage = event.get("usage") or {}
            return f"turn done ({_usage_tokens(usage)} tokens)"
        if kind == "turn.failed":
            return "failed: " + one_line((event.get("error") or {}).get("message"), 140)
        if kind == "error":
            return one_line(event.get("message"), 160)
        return None

    def outcome(self, text: str) -> Outcome:
        out = Outcome()
        final_error: str | None = None
        errors: list[str] = []
        for event in events(text):
            kind = event.get("type")
            if kind == "thread.started" and event.get("thread_id"):
                out.session_id = str(event["thread_id"])
            elif kind == "item.completed":
                item = event.get("item") or {}
                if item.get("type") == "agent_message" and str(item.get("text", "")).strip():
                    out.final_text = str(item["text"])
            elif kind == "turn.completed":
                out.tokens += _usage_tokens(event.get("usage") or {})
                out.success_event = True
                final_error = None
            elif kind == "turn.failed":
                out.success_event = False
                final_error = str((event.get("error") or {}).get("message") or "turn failed")
                errors.append(final_error)
            elif kind == "error":
                errors.append(str(event.get("message") or ""))
        if out.success_event:
            return out
        if final_error is None and errors and out.success_event is None:
            final_error = errors[-1]
        if final_error is None:
            return out
        out.error = one_line(final_error, 300)
        recent = [final_error, *errors[-3:]]
        limit = next((m for m in recent if any(w in m for w in _LIMIT_WORDS)), None)
        if limit is not None:
            out.limit_until = codex_reset(limit)
        elif any(w in m for m in recent for w in _THROTTLE_WORDS):
            out.rate_limited = True
        return out


def _usage_tokens(usage: dict) -> int:
    return int_of(usage.get("input_tokens")) + int_of(usage.get("output_tokens"))


def _slugs(text: str) -> tuple[str, ...]:
    """Model slugs from `codex debug models` (a JSON catalog: {"models": [{"slug": …}]})."""
    import json

    try:
        found = json.loads(text).get("models") or []
    except (ValueError, AttributeError):
        return ()
    return tuple(str(m["slug"]) for m in found if isinstance(m, dict) and m.get("slug"))

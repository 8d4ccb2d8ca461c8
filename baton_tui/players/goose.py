"""Goose (`goose`, Block's agent CLI): `goose run -i FILE --output-format stream-json`, written
from Goose's documented headless flags and its stream-json events (not installable here).

Baton names each run's session (`--name baton-<task>-<random>`, recorded before the agent
starts, since Goose's stream never prints an id) and resumes it with `--resume --name`. A build
runs with the person's own profile (their default extensions work unchanged) plus Goose's
`developer` extension (shell, write, edit, tree); research runs `--no-profile`, since an
extension of theirs could write: Goose cannot trim `developer` to its reading tools either, so
research gets none of it and Baton lends a read-only server of its own instead (read_tools.py:
read, list, search inside the worktree). Every run has GOOSE_MODE=auto (the approve modes
refuse to run headless) and Baton's report tools added for this run only with
`--with-extension "baton mcp"`: Goose starts its stdio extensions with its own environment, so
the attempt's BATON_* variables reach the server without entering argv.

Events (one object a line): `message` (a Goose message: `content` items `text`, `toolRequest`
{toolCall: {value: {name, arguments}}}, `toolResponse`), `notification`, `error` {error} on a
failed run (then exit 1, no `complete`), and `complete` {total_tokens, input_tokens,
output_tokens, cost_usd} on success. A provider's limit arrives as the `error` text; a reset
it names pauses the task until then. Goose's models are its provider's and it has no
headless listing: goose_models.py says which names Baton can judge, and why not for the others.

Written from Goose 1.21.1's documentation; never run against the real CLI (it cannot be
installed here): tests/agents/goose_replay.py replays that version's formats.
"""

from __future__ import annotations

import os
import shlex
import uuid
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.paths import own_module
from baton_tui.players.base import AttemptContext, Detection, Launch
from baton_tui.players.cli_events import float_of, int_of
from baton_tui.players.decoding import (
    Decoder,
    Event,
    Finished,
    JsonDecoder,
    LimitHit,
    ToolCall,
    ToolResult,
    Usage,
    said,
    text_of,
)
from baton_tui.players.goose_models import config_value, provider_names
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limits import limit_in


class GoosePlayer(CliPlayer):
    """Block's Goose CLI."""

    name = "goose"
    binary = "goose"
    install = "see block.github.io/goose (download_cli.sh), then `goose configure`"
    models = None              # its provider's names: see `catalog`
    efforts = ()
    research_shell = False
    replayed_version = "1.21.1"

    def config_file(self) -> Path:
        env = {**os.environ, **self.env}
        if env.get("GOOSE_PATH_ROOT"):
            return Path(env["GOOSE_PATH_ROOT"]) / "config" / "config.yaml"
        home = Path(env.get("HOME") or Path.home())
        return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "goose" / "config.yaml"

    def _setting(self, key: str) -> str | None:
        """GOOSE_PROVIDER or GOOSE_MODEL: the environment's, else `goose configure`'s."""
        value = {**os.environ, **self.env}.get(key)
        if value:
            return value.strip()
        try:
            return config_value(self.config_file().read_text(encoding="utf-8"), key)
        except OSError:
            return None

    def signed_in(self) -> str | None:
        """A provider chosen: GOOSE_PROVIDER, or the one `goose configure` saved."""
        if self._setting("GOOSE_PROVIDER"):
            return None
        return "not signed in (no provider: GOOSE_PROVIDER is unset and `goose configure` was " \
               "never run)"

    # ----------------------------------------------------------------- catalog
    def catalog(self) -> tuple[str, ...] | None:
        """The names of the person's provider where Baton knows them (goose_models.py), their
        configured GOOSE_MODEL and `[players.goose] models`; None when it cannot know."""
        names = provider_names(self._setting("GOOSE_PROVIDER"), {**os.environ, **self.env})
        if names is None:
            return None
        configured = self._setting("GOOSE_MODEL")
        return tuple(dict.fromkeys([*names.listed, *([configured] if configured else []),
                                    *self.extra_models]))

    def model_problem(self, model: str | None) -> str | None:
        provider = self._setting("GOOSE_PROVIDER")
        names = provider_names(provider, {**os.environ, **self.env})
        if model is None or names is None or names.takes(model) or \
                model in (self.catalog() or ()):
            return None
        return (f"player 'goose' cannot start model {model!r} (Goose's provider {provider!r} "
                f"takes {names.label}: {', '.join(names.listed[:5])}, …; a gateway's own name "
                "goes in [players.goose] models)")

    def model_unchecked(self, model: str | None) -> str | None:
        if model is None or self.catalog() is not None:
            return None
        provider = self._setting("GOOSE_PROVIDER")
        if provider is None:
            return (f"goose has no provider chosen yet, so model {model!r} cannot be checked "
                    "(run `goose configure`)")
        return (f"goose's provider {provider!r} has no model list Baton can read, so model "
                f"{model!r} is not checked (Goose refuses a name its provider lacks when the "
                "task starts)")

    def detect(self) -> Detection:
        found = super().detect()
        if not found.ready and found.path and "not signed in" in found.reason:
            found.fix = "run `goose configure` and choose a provider (or export GOOSE_PROVIDER)"
        return found

    def interactive(self, session_id: str | None) -> list[str] | None:
        exe = self.executable()
        return [exe, "session", "--resume", "--name", session_id] if exe and session_id \
            else None

    # ----------------------------------------------------------------- command lines
    def _read_server(self, ctx: AttemptContext) -> str:
        """A command named `baton-read` (Goose names an extension after its command)."""
        folder = ctx.attempt_dir / "bin"
        folder.mkdir(parents=True, exist_ok=True)
        script = folder / "baton-read"
        script.write_text(f'#!/bin/sh\nexec {shlex.join(own_module("baton_tui.channel.read_tools"))}'
                          ' "$@"\n')
        script.chmod(0o700)
        return shlex.join([str(script), str(ctx.worktree)])

    def _argv(self, ctx: AttemptContext, session: str, message_file: Path,
              resume: bool) -> Launch:
        exe = ctx.bin or self.bin or self.executable() or self.binary
        argv = [exe, "run", "--output-format", "stream-json", "--name", session,
                "-i", str(message_file)]
        if resume:
            argv.append("--resume")
        if ctx.mode == Mode.RESEARCH:   # none of the person's extensions: one could write
            argv += ["--no-profile", "--with-extension", self._read_server(ctx)]
        else:
            argv += ["--with-builtin", "developer"]
        argv += ["--with-extension", "baton mcp"]     # `baton` is the shim first on PATH
        if ctx.model:
            argv += ["--model", ctx.model]
        return Launch(argv, {"GOOSE_MODE": "auto"}, session_id=session)

    def launch(self, ctx: AttemptContext) -> Launch:
        session = f"baton-{ctx.task_id}-{uuid.uuid4().hex[:12]}"
        return self._argv(ctx, session, ctx.prompt_path, resume=False)

    def resume(self, ctx: AttemptContext) -> Launch | None:
        if not ctx.session_id:
            return None
        message = (ctx.resume_message or "Continue the task where you left off.").strip()
        message += ("\n\nWhen the task is finished, report it as Baton's rules said (the "
                    "baton_report tool" + (")." if ctx.mode == Mode.RESEARCH else
                                          ", or `baton report done --summary \"…\"`)."))
        path = ctx.attempt_dir / "resume-message.md"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(message)
        return self._argv(ctx, ctx.session_id, path, resume=True)

    # ----------------------------------------------------------------- output
    def decoder(self) -> Decoder:
        return GooseDecoder()


class GooseDecoder(JsonDecoder):
    """Goose's stream-json: `message` (text, tool requests and responses), `error` on a
    failed run (no `complete` then, or a failed one) and `complete` with the totals."""

    def __init__(self) -> None:
        self.failed = False
        self.calls: dict[str, str] = {}

    def decode(self, event: dict[str, Any]) -> list[Event]:
        kind = event.get("type")
        if kind == "message":
            return self._message(event.get("message") or {})
        if kind == "error":
            self.failed = True
            message = text_of(event.get("error")) or "error"
            hit = limit_in(message)
            return [Finished(False, error=message),
                    *([LimitHit(hit[0], hit[1], message)] if hit else [])]
        if kind == "complete":
            total = int_of(event.get("total_tokens"))
            tokens = total or int_of(event.get("input_tokens")) + int_of(event.get("output_tokens"))
            return [Usage(tokens, float_of(event.get("cost_usd")), total=True),
                    Finished(not self.failed, summary=f"{total} tokens")]
        return []

    def _message(self, message: dict[str, Any]) -> list[Event]:
        found: list[Event] = []
        if message.get("role") == "assistant":
            found += said("\n".join(text_of(i.get("text")) for i in message.get("content") or []
                                    if isinstance(i, dict) and i.get("type") == "text"))
        for item in message.get("content") or []:
            if not isinstance(item, dict):
                continue
            if item.get("type") == "toolRequest":
                call = ((item.get("toolCall") or {}).get("value")) or {}
                name, args = str(call.get("name") or "tool"), call.get("arguments")
                self.calls[str(item.get("id"))] = name
                found.append(ToolCall(name, args if isinstance(args, dict) else {}))
            elif item.get("type") == "toolResponse":
                result = item.get("toolResult") or {}
                if result.get("status") == "error":
                    found.append(ToolResult(self.calls.get(str(item.get("id")), "tool"), False,
                                            text_of(result.get("error"))))
        return found

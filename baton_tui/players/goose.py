"""Goose (`goose`, Block's agent CLI): `goose run -i FILE --output-format stream-json`, written
from Goose's documented headless flags and its stream-json events (not installable here).

Baton names each run's session (`--name baton-<task>-<random>`, recorded before the agent
starts, since Goose's stream never prints an id) and resumes it with `--resume --name`. Every
run is `--no-profile` — the person's default extensions stay out of an unattended run — with
GOOSE_MODE=auto (the approve modes refuse to run headless) and Baton's report tools added for
this run only with `--with-extension "baton mcp"`: Goose starts its stdio extensions with its
own environment, so the attempt's BATON_* variables reach the server without entering argv.
Build adds Goose's `developer` extension (shell, write, edit, tree). Research cannot trim that
extension to its reading tools, so it gets none of it: Baton lends a read-only server of its
own (read_tools.py: read, list, search inside the worktree) and the report goes over MCP.

Events (one object a line): `message` (a Goose message: `content` items `text`, `toolRequest`
{toolCall: {value: {name, arguments}}}, `toolResponse`), `notification`, `error` {error} on a
failed run (then exit 1, no `complete`), and `complete` {total_tokens, input_tokens,
output_tokens, cost_usd} on success. A provider's limit arrives as the `error` text; a reset
it names pauses the task until then. Goose's models are its provider's and it has no
headless listing, so any model name is accepted (Goose itself refuses one it cannot start).
"""

from __future__ import annotations

import os
import re
import shlex
import uuid
from pathlib import Path

from baton_tui.core.words import Mode
from baton_tui.paths import own_module
from baton_tui.players.base import AttemptContext, Launch, Outcome
from baton_tui.players.cli_events import event_of, events, float_of, int_of, one_line
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limit_words import is_limit, is_throttle, reset_in

_PROVIDER = re.compile(r"(?m)^\s*GOOSE_PROVIDER\s*:\s*\S")


class GoosePlayer(CliPlayer):
    """Block's Goose CLI."""

    name = "goose"
    binary = "goose"
    install = "see block.github.io/goose (download_cli.sh), then `goose configure`"
    models = None              # its provider's names: see the module docstring
    efforts = ()
    research_shell = False

    def config_file(self) -> Path:
        env = {**os.environ, **self.env}
        if env.get("GOOSE_PATH_ROOT"):
            return Path(env["GOOSE_PATH_ROOT"]) / "config" / "config.yaml"
        home = Path(env.get("HOME") or Path.home())
        return Path(env.get("XDG_CONFIG_HOME") or home / ".config") / "goose" / "config.yaml"

    def signed_in(self) -> str | None:
        """A provider chosen: GOOSE_PROVIDER, or the one `goose configure` saved."""
        if {**os.environ, **self.env}.get("GOOSE_PROVIDER"):
            return None
        try:
            if _PROVIDER.search(self.config_file().read_text(encoding="utf-8")):
                return None
        except OSError:
            pass
        return "not signed in (no provider: GOOSE_PROVIDER is unset and `goose configure` was " \
               "never run)"

    def detect(self):
        found = super().detect()
        if not found.ready and found.path and "not signed in" in found.reason:
            found.fix = "run `goose configure` and choose a provider (or export GOOSE_PROVIDER)"
        return found

    def interactive(self, session_id: str) -> list[str] | None:
        exe = self.executable()
        return [exe, "session", "--resume", "--name", session_id] if exe else None

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
                "-i", str(message_file), "--no-profile"]
        if resume:
            argv.append("--resume")
        if ctx.mode == Mode.RESEARCH:
            argv += ["--with-extension", self._read_server(ctx)]
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

    # ----------------------------------------------------------------- events
    def progress(self, line: str) -> str | None:
        event = event_of(line)
        kind = event.get("type") if event else None
        if kind == "message":
            message = event.get("message") or {}
            for item in reversed(message.get("content") or []):
                if isinstance(item, dict) and item.get("type") == "toolRequest":
                    return _tool_line(item)
                if isinstance(item, dict) and item.get("type") == "toolResponse" and \
                        (item.get("toolResult") or {}).get("status") == "error":
                    return "tool error: " + one_line((item["toolResult"]).get("error"), 120)
            if message.get("role") == "assistant":
                return one_line(_text(message)) or None
        if kind == "error":
            return "error: " + one_line(event.get("error"), 140)
        if kind == "complete":
            return f"finished ({int_of(event.get('total_tokens'))} tokens)"
        return None

    def outcome(self, text: str) -> Outcome:
        out = Outcome()
        failure = None
        for event in events(text):
            kind = event.get("type")
            if kind == "message" and (event.get("message") or {}).get("role") == "assistant":
                said = _text(event["message"])
                out.final_text = said.strip() or out.final_text
            elif kind == "error":
                failure = str(event.get("error") or "error")
            elif kind == "complete":
                out.tokens = int_of(event.get("total_tokens")) or (
                    int_of(event.get("input_tokens")) + int_of(event.get("output_tokens")))
                out.cost = float_of(event.get("cost_usd"))
                out.success_event = failure is None
        if failure is None:
            return out
        out.success_event, out.error = False, one_line(failure, 300)
        if is_limit(failure):
            out.limit_until = reset_in(failure)
            out.limited = out.limit_until is None
        elif is_throttle(failure):
            out.limit_until = reset_in(failure)
            out.rate_limited = out.limit_until is None
        return out


def _text(message: dict) -> str:
    return "\n".join(str(i.get("text", "")) for i in message.get("content") or []
                     if isinstance(i, dict) and i.get("type") == "text")


def _tool_line(item: dict) -> str:
    call = ((item.get("toolCall") or {}).get("value")) or {}
    name, args = str(call.get("name") or "tool"), call.get("arguments") or {}
    if name.endswith("baton_report"):
        return f"baton_report: {args.get('status', '')} {one_line(args.get('summary'), 100)}"
    if name.endswith("shell"):
        return "$ " + one_line(args.get("command"), 140)
    what = args.get("path") or args.get("pattern") or ""
    return one_line(f"{name} {what}".strip(), 160)

"""The native API players: Baton's own agent loop on the official SDKs (`anthropic`, `openai`).

The loop itself is `baton_tui.native_agent`, run as its own process under the attempt
shim like any agent CLI; this module (imported by the conductor, so it stays light: no SDK
import) builds its command line and reads back the JSON-lines events it prints:

    {"type": "init", "session_id": …, "provider": …, "model": …, "mode": …, "resumed": …}
    {"type": "text", "text": …}                      an assistant message's text
    {"type": "tool", "name": …, "summary": …, "ok": …}   one tool call and whether it worked
    {"type": "usage", "input_tokens": …, "output_tokens": …, "cost": …}   one model turn
    {"type": "result", "session_id": …, "stop": "end_turn"|"max_turns", "final_text": …, …}
    {"type": "error", "status": 429, "reset": <epoch or null>, "message": …}

The session id is the transcript's id: the loop saves its transcript (the provider-native
message list) to `<attempt dir>/transcript.json` after every turn, and a resumed attempt
(`--resume PATH`) continues from the transcript of the previous attempt with that id.

Catalogs: `anthropic` lists current Claude models and also accepts any name starting with
`claude-` (its catalog is not authoritative). `openai` with `OPENAI_BASE_URL` set takes the
names that endpoint lists at `GET /models` (endpoint_models.py; no judgement when it does not
answer); without it, OpenAI's own API: the listed models and any name of OpenAI's families
(`gpt-…`, `o1`/`o3`/`o4…`, `chatgpt-…`, `codex-…`). `[players.NAME] models` extends both.
Efforts low/medium/high set the answer budget (max_tokens) and, where the API has it, the
reasoning effort (OpenAI reasoning models; Anthropic's `effort` on Opus 4.5 and later).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from baton_tui.core.words import Mode
from baton_tui.paths import own_module
from baton_tui.players.base import AttemptContext, Detection, Launch
from baton_tui.players.cli_events import float_of, int_of
from baton_tui.players.decoding import (
    AgentStarted,
    Decoder,
    Event,
    Finished,
    JsonDecoder,
    LimitHit,
    SessionNamed,
    ToolCall,
    Usage,
    said,
    text_of,
)
from baton_tui.players.endpoint_models import served_models
from baton_tui.players.kinds import NativePlayer


def _version(package: str) -> str | None:
    from importlib.metadata import version  # lazy: only `doctor` and `players` ask, and it is 15 ms

    try:
        return version(package)
    except Exception:  # not installed, or broken metadata
        return None


class _NativeBase(NativePlayer):
    reports_by_shell = False  # its tools include baton_report / baton_checkpoint
    provider: str = ""
    sdk: str = ""
    efforts = ("low", "medium", "high")

    def detect(self) -> Detection:
        found = super().detect()
        if found.ready:
            sdk = _version(self.sdk)
            if sdk is None:
                return Detection(self.name, False, f"the {self.sdk} package is not installed",
                                 fix=f"pip install {self.sdk}")
            found.version = f"native ({self.sdk} {sdk})"
            found.path = sys.executable
        return found

    # running -----------------------------------------------------------------
    def _argv(self, ctx: AttemptContext) -> list[str]:
        argv = [*own_module("baton_tui.native_agent"),
                "--provider", self.provider, "--model", ctx.model or self.default_model or "",
                "--mode", Mode.RESEARCH if ctx.mode == Mode.RESEARCH else Mode.BUILD,
                "--prompt-file", str(ctx.prompt_path),
                "--transcript", str(Path(ctx.attempt_dir) / "transcript.json")]
        if ctx.effort:
            argv += ["--effort", ctx.effort]
        if ctx.planning:   # the person's own checkout: no shell
            argv.append("--no-shell")
        return argv

    def launch(self, ctx: AttemptContext) -> Launch:
        if ctx.mode not in (Mode.BUILD, Mode.RESEARCH):
            raise ValueError(f"the {self.name} player runs build and research tasks, "
                             f"not {ctx.mode!r}")
        return Launch(self._argv(ctx), {"PYTHONUNBUFFERED": "1"})

    def resume(self, ctx: AttemptContext) -> Launch | None:
        """Continue the saved transcript of `ctx.session_id` (None: start afresh)."""
        previous = find_transcript(Path(ctx.attempt_dir), ctx.session_id)
        if previous is None:
            return None
        launch = self.launch(ctx)
        launch.argv += ["--resume", str(previous)]
        if ctx.resume_message:
            launch.argv += ["--resume-message", ctx.resume_message]
        return launch

    def decoder(self) -> Decoder:
        return NativeDecoder()


class NativeDecoder(JsonDecoder):
    """The JSON lines Baton's own loop prints (see the module docstring)."""

    def decode(self, event: dict[str, Any]) -> list[Event]:
        kind = event.get("type")
        session = [SessionNamed(str(event["session_id"]))] if event.get("session_id") else []
        if kind == "init":
            provider = text_of(event.get("provider")) or "native"
            return [*session, AgentStarted(provider, text_of(event.get("model")) or None,
                                           provider=provider)]
        if kind == "text":
            return said(event.get("text"))
        if kind == "tool":
            ok = bool(event.get("ok", True))
            return [ToolCall(str(event.get("name") or "tool"),
                             {"summary": text_of(event.get("summary"))}, ok=ok,
                             output=text_of(event.get("output")))]
        if kind == "usage":
            return [Usage(sum(int_of(event.get(k)) for k in (
                "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens")),
                float_of(event.get("cost")))]
        if kind == "result":
            text = event.get("final_text")
            text = text if isinstance(text, str) else None
            if event.get("stop") == "max_turns":
                return [*session, Finished(False, text,
                                           f"turn limit ({event.get('turns')}) reached")]
            return [*session, Finished(True, text, summary=text_of(event.get("stop")) or "end")]
        if kind == "error":
            status = event.get("status")
            message = text_of(event.get("message")).strip()
            error = (f"API error {status}: " if status else "") + message
            if status != 429:
                return [Finished(False, error=error)]
            reset = event.get("reset")
            until = float(reset) if isinstance(reset, (int, float)) and reset > 0 else None
            return [Finished(False, error=error), LimitHit(until, False, error)]
        return []


def find_transcript(attempt_dir: Path, session_id: str | None) -> Path | None:
    """The newest saved transcript of `session_id` among this task's attempts."""
    if not session_id:
        return None
    found: list[tuple[int, Path]] = []
    for path in attempt_dir.parent.glob("attempt-*/transcript.json"):
        if path.parent == attempt_dir:
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("id") == session_id:
            number = path.parent.name.removeprefix("attempt-")
            found.append((int(number) if number.isdigit() else 0, path))
    return max(found)[1] if found else None


# Names of OpenAI's model families: its API starts new ones before any list here knows them.
OPENAI_FAMILY = re.compile(r"^(?:gpt-\d|gpt-oss|o\d(?:$|-)|chatgpt-|codex-|ft:gpt-)")


class AnthropicPlayer(_NativeBase):
    """Claude over the Anthropic Messages API (`ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`)."""

    name = "anthropic"
    provider = "anthropic"
    sdk = "anthropic"
    key_vars = ("ANTHROPIC_API_KEY",)
    models = ("claude-opus-4-8", "claude-sonnet-4-6", "claude-haiku-4-5", "claude-opus-4-5",
              "claude-sonnet-4-5")
    default_model = "claude-sonnet-4-6"

    def model_problem(self, model: str | None) -> str | None:
        if model is not None and model.startswith("claude-"):
            return None  # the catalog is not authoritative: newer Claude models start too
        return super().model_problem(model)


class OpenAIPlayer(_NativeBase):
    """Any OpenAI-compatible endpoint on the Chat Completions wire.

    Key `OPENAI_API_KEY`; base URL `OPENAI_BASE_URL` when set.
    """

    name = "openai"
    provider = "openai"
    sdk = "openai"
    key_vars = ("OPENAI_API_KEY",)
    models = ("gpt-5.5", "gpt-5.4", "gpt-5.4-mini", "gpt-5.1", "gpt-5", "gpt-5-mini", "gpt-4.1")
    default_model = "gpt-5.4"

    def _endpoint(self) -> tuple[str | None, str | None]:
        env = {**os.environ, **self.env}
        return env.get("OPENAI_BASE_URL") or None, env.get("OPENAI_API_KEY")

    def served(self) -> tuple[str, ...] | None:
        """What the configured endpoint lists (None: no base URL, or no answer)."""
        base, key = self._endpoint()
        if base is None:
            return None
        return served_models(base, key)

    def catalog(self) -> tuple[str, ...] | None:
        served = self.served()
        if served is None:
            return super().catalog()
        return tuple(dict.fromkeys([*served, *self.extra_models]))

    def model_unchecked(self, model: str | None) -> str | None:
        base, _key = self._endpoint()
        if model is None or model in self.extra_models or base is None or \
                self.served() is not None:
            return None
        return (f"the endpoint at {base} did not list its models, so model {model!r} is not "
                "checked")

    def model_problem(self, model: str | None) -> str | None:
        if model is None or model in self.extra_models:
            return None
        base, _key = self._endpoint()
        if base is not None:
            served = self.served()
            if served is None or model in served:
                return None   # an endpoint that does not answer cannot be judged
            return (f"player 'openai' cannot start model {model!r} (the endpoint at {base} "
                    f"serves: {', '.join(served[:8])}{', …' if len(served) > 8 else ''})")
        if model in self.models or OPENAI_FAMILY.match(model):
            return None
        return (f"player 'openai' cannot start model {model!r} (OpenAI's models are named like "
                f"{', '.join(self.models[:3])}; for another endpoint set OPENAI_BASE_URL, or add "
                "the name to [players.openai] models)")

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

from baton_tui.core.words import Mode
from baton_tui.paths import own_module
from baton_tui.players.base import AttemptContext, Detection, Launch, Outcome
from baton_tui.players.kinds import NativePlayer

def _version(package: str) -> str | None:
    try:
        from importlib.metadata import version

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

    def progress(self, line: str) -> str | None:
        event = _event(line)
        if event is None:
            return None
        kind = event.get("type")
        if kind == "text":
            text = " ".join(str(event.get("text") or "").split())
            return text[:200] or None
        if kind == "tool":
            name = event.get("name")
            if name == "baton_report":
                return None  # the report is its own event
            summary = event.get("summary") or ""
            return f"{name} {summary}".strip()[:200] + ("" if event.get("ok", True) else
                                                        " (refused)")
        if kind == "error":
            return f"API error {event.get('status') or ''}: {event.get('message', '')}"[:200]
        return None

    def outcome(self, text: str) -> Outcome:
        out = Outcome()
        for line in text.splitlines():
            event = _event(line)
            if event is None:
                continue
            kind = event.get("type")
            if kind == "init":
                out.session_id = event.get("session_id") or out.session_id
            elif kind == "usage":
                out.tokens += int(event.get("input_tokens") or 0) + int(event.get("output_tokens")
                                                                       or 0)
                out.tokens += int(event.get("cache_read_tokens") or 0)
                out.tokens += int(event.get("cache_write_tokens") or 0)
                out.cost += float(event.get("cost") or 0.0)
            elif kind == "text":
                out.final_text = event.get("text") or out.final_text
            elif kind == "result":
                out.session_id = event.get("session_id") or out.session_id
                if event.get("final_text") is not None:
                    out.final_text = event.get("final_text")
                if event.get("stop") == "max_turns":
                    out.success_event = False
                    out.error = f"turn limit ({event.get('turns')}) reached"
                else:
                    out.success_event = True
                    out.error = None
            elif kind == "error":
                out.success_event = False
                status = event.get("status")
                message = str(event.get("message") or "").strip()
                out.error = (f"API error {status}: " if status else "") + message[:300]
                if status == 429:
                    reset = event.get("reset")
                    if isinstance(reset, (int, float)) and reset > 0:
                        out.limit_until = float(reset)
                        out.rate_limited = False
                    else:
                        out.rate_limited = True
                        out.limit_until = None
        out.cost = round(out.cost, 6)
        return out


def _event(line: str) -> dict | None:
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        event = json.loads(line)
    except ValueError:
        return None
    return event if isinstance(event, dict) and isinstance(event.get("type"), str) else None


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
        from baton_tui.players.endpoint_models import served_models

        return served_models(base, key)

    def catalog(self) -> tuple[str, ...] | None:
        served = self.served()
        if served is None:
            return super().catalog()
        return tuple(dict.fromkeys([*served, *self.extra_models]))

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

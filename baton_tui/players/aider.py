"""Aider (`aider`, PyPI aider-chat): one headless `--message-file` run per attempt.

Aider has no shell tool and no MCP client, so its report is a line of its own final reply:
`BATON: done <summary>` or `BATON: failed <reason>` (the prompt says so; `outcome` reads the
last such line). Checkpoint tasks are never given to it (it cannot stop and ask).

Build: `--yes-always` in the task's worktree, with Aider's own commits off (Baton commits and
lands after the report), no lint/test/shell-command loops of its own, no update check, no
analytics (`--no-analytics`: `--analytics-disable` would write the person's ~/.aider).
Research: `--chat-mode ask --dry-run` — ask mode proposes no edits and a dry run writes none;
files the model names are still added read-only (`--yes-always`), which is how Aider reads.
Commands its reply proposes (the tests, a linter) run through Aider's own `/run` in rounds
(aider_research.py), in the throwaway worktree; the planner gets no such rounds.
Its chat history lives in the task's run folder (one per task, outside the worktree), so a
resumed attempt continues the same conversation with `--restore-chat-history`; only its tag
cache (`.aider.tags.cache.v4`) lands in the worktree, and Baton never commits `.aider*`.

Output is plain text: "Tokens: 2.1k sent, 18 received. Cost: $0.01 message, …" per model
call, "Applied edit to X", and litellm's errors. On a 429 Aider retries for about 80 s and
then exits 0, so `halt` tells the conductor to stop it at the first `RateLimitError`; a reset
the provider names ("Please try again in 20s") pauses the task until then.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from baton_tui.core.words import Mode
from baton_tui.paths import own_module, write_private
from baton_tui.players.aider_research import HOW
from baton_tui.players.base import AttemptContext, Launch
from baton_tui.players.decoding import (
    Decoder,
    Event,
    Failed,
    FileChange,
    LimitHit,
    Note,
    Reported,
    Retrying,
    Usage,
)
from baton_tui.players.kinds import CliPlayer
from baton_tui.players.limits import AIDER_RATE_LIMITED, contains_any, printed_at, wait_seconds
from baton_tui.players.litellm_names import can_judge_bare_names, known_model

# MODEL_ALIASES of aider 0.86.2 (aider/models.py): the short names `--model` accepts.
ALIASES = ("sonnet", "haiku", "opus", "4", "4o", "4-turbo", "35turbo", "35-turbo", "3",
           "deepseek", "flash", "flash-lite", "quasar", "r1", "gemini-2.5-pro",
           "gemini-3-pro-preview", "gemini", "gemini-exp", "grok3", "optimus")
# The provider keys Aider (through litellm) signs in with; any one of them will do.
KEY_VARS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "DEEPSEEK_API_KEY",
            "OPENROUTER_API_KEY", "GROQ_API_KEY", "XAI_API_KEY", "MISTRAL_API_KEY",
            "COHERE_API_KEY", "AZURE_API_KEY", "FIREWORKS_AI_API_KEY", "TOGETHERAI_API_KEY",
            "AWS_ACCESS_KEY_ID", "VERTEXAI_PROJECT", "OLLAMA_API_BASE")
REPORT = re.compile(r"^\s*BATON:\s*(done|failed)\b[\s:—–-]*(.*)$", re.IGNORECASE)
TOKENS = re.compile(r"Tokens:\s*([\d.]+)([kKmM]?) sent,\s*([\d.]+)([kKmM]?) received")
COST = re.compile(r"Cost:\s*\$([\d.]+) message")
HISTORY = "aider.chat.history.md"


def _count(number: str, suffix: str) -> int:
    scale = {"k": 1_000, "m": 1_000_000}.get(suffix.lower(), 1)
    return int(float(number) * scale)


class AiderPlayer(CliPlayer):
    """Aider, driven by `--message-file`; reports with a `BATON:` line of its final reply."""

    name = "aider"
    binary = "aider"
    key_vars = KEY_VARS
    credential_files = (".aider/oauth-keys.env",)
    install = "pip install aider-chat (or pipx install aider-chat)"
    models = ALIASES           # for pickers; `model_problem` also takes litellm names
    default_model = None       # Aider picks one from the keys it finds
    efforts = ("low", "medium", "high")   # `--reasoning-effort` (where the model accepts it)
    checkpoints = False
    reports_by_shell = False
    reports_in_output = True
    research_shell = False
    retries_limits_itself = True   # a 429: litellm retries for about 80 s, then exit 0

    def signed_in(self) -> str | None:
        """A provider key in the environment, Aider's OpenRouter login, or a key in the
        person's ~/.aider.conf.yml or ~/.env (Aider reads both)."""
        if super().signed_in() is None:
            return None
        home = Path({**os.environ, **self.env}.get("HOME") or Path.home())
        for name in (".aider.conf.yml", ".env"):
            try:
                text = (home / name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if re.search(r"(?im)^\s*(?:export\s+)?[\w-]*api[_-]key\s*[:=]\s*\S", text):
                return None
        return ("not signed in (no provider key such as OPENAI_API_KEY or ANTHROPIC_API_KEY, "
                "and none in ~/.aider.conf.yml or ~/.env)")

    def model_problem(self, model: str | None) -> str | None:
        if model is None or model in (self.catalog() or ()) or known_model(model):
            return None
        return (f"player 'aider' cannot start model {model!r} (an Aider alias — "
                f"{', '.join(ALIASES[:6])}, … — or a litellm name such as openai/gpt-4o or "
                "anthropic/claude-sonnet-4-5)")

    def model_unchecked(self, model: str | None) -> str | None:
        if model is None or "/" in model or model in (self.catalog() or ()) or \
                can_judge_bare_names():
            return None
        return (f"Aider's model map cannot be read here (Aider is not installed), so model "
                f"{model!r} is not checked")

    # ----------------------------------------------------------------- command lines
    def _argv(self, ctx: AttemptContext, message_file: Path, restore: bool) -> Launch:
        exe = ctx.bin or self.bin or self.executable() or self.binary or "aider"
        task_dir = ctx.attempt_dir.parent
        argv = [exe, "--message-file", str(message_file), "--yes-always",
                "--no-pretty", "--no-fancy-input", "--no-stream", "--no-check-update",
                "--no-show-release-notes", "--no-analytics", "--no-gitignore",
                "--no-auto-commits", "--no-dirty-commits", "--no-auto-lint", "--no-auto-test",
                "--no-suggest-shell-commands", "--no-detect-urls", "--no-show-model-warnings",
                "--chat-history-file", str(task_dir / HISTORY),
                "--input-history-file", str(ctx.attempt_dir / "aider.input.history"),
                "--encoding", "utf-8"]
        if restore:
            argv.append("--restore-chat-history")
        if ctx.mode == Mode.RESEARCH:
            argv += ["--chat-mode", "ask", "--dry-run"]
        if ctx.model:
            argv += ["--model", ctx.model]
        if ctx.effort:
            argv += ["--reasoning-effort", ctx.effort]
        if ctx.mode == Mode.RESEARCH and not ctx.planning:   # commands run in rounds
            argv = own_module("baton_tui.players.aider_research", str(ctx.attempt_dir), "--",
                              *argv)
        # Wide lines: rich wraps at 80 columns off a terminal, splitting the report line.
        return Launch(argv, {"COLUMNS": "4000", "AIDER_CHECK_UPDATE": "false"})

    def launch(self, ctx: AttemptContext) -> Launch:
        if ctx.mode == Mode.RESEARCH and not ctx.planning:   # it is told how to run commands
            message = write_private(ctx.attempt_dir / "aider-research.md", ctx.prompt + HOW)
            return self._argv(ctx, message, restore=False)
        return self._argv(ctx, ctx.prompt_path, restore=False)

    def resume(self, ctx: AttemptContext) -> Launch | None:
        """The same conversation: the task's chat history, restored, and a short message."""
        if not (ctx.attempt_dir.parent / HISTORY).exists():
            return None
        message = (ctx.resume_message or "Continue the task where you left off.").strip()
        message += ("\n\nWhen the task is finished, end your reply with one line `BATON: done "
                    "<summary>` (or `BATON: failed <reason>`), as Baton's rules said.")
        path = ctx.attempt_dir / "resume-message.md"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(message)
        return self._argv(ctx, path, restore=True)

    # ----------------------------------------------------------------- output
    def decoder(self) -> Decoder:
        return AiderDecoder()


class AiderDecoder(Decoder):
    """Aider's plain-text output. A rate limit's reset is the last "try again in …" the
    provider named anywhere before or after the `RateLimitError` line (Aider's own
    "Retrying in 0.2 seconds" is its backoff, not the reset)."""

    def __init__(self) -> None:
        self.rate_limited = False
        self.wait: float | None = None

    def feed(self, line: str) -> list[Event]:
        text = line.strip()
        found: list[Event] = []
        wait = wait_seconds(text, retrying=False)
        self.wait = wait if wait is not None else self.wait
        rate = contains_any(text, AIDER_RATE_LIMITED)
        self.rate_limited = self.rate_limited or rate
        if rate:
            found.append(Retrying("Aider would retry on its own for minutes"))
        if self.rate_limited and (rate or wait is not None):
            found.append(LimitHit(None if self.wait is None else printed_at() + self.wait,
                                  False, text))
        report = REPORT.match(text)
        tokens, cost = TOKENS.search(text), COST.search(text)
        if text.startswith("Aider v"):
            found.append(Note("aider started (" + text + ")", shown=True))
        elif text.startswith("Applied edit to "):
            found.append(FileChange((("edit", text.removeprefix("Applied edit to ")),)))
        elif report:
            found.append(Reported(report.group(1).lower(), report.group(2).strip()))
        elif tokens or cost:
            found.append(Usage(_count(*tokens.group(1, 2)) + _count(*tokens.group(3, 4))
                               if tokens else 0, float(cost.group(1)) if cost else 0.0,
                               turn=bool(tokens)))
        elif text.startswith("litellm."):
            found.append(Failed(text))
        elif text:
            found.append(Note(text))
        return found

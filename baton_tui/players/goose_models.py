"""What model names Goose can start: its provider's, where Baton knows that provider's names.

Goose has no headless model listing (`goose configure` asks the provider interactively), and
any name goes to whichever provider the person chose (`GOOSE_PROVIDER`, or `goose configure`'s
config.yaml). For the providers whose names Baton already knows — Anthropic's and the Claude
Code pass-through (Claude names), OpenAI's (its families), Google's and the Gemini CLI
pass-through (Gemini names) — a name outside them is refused. For any other provider (Ollama,
OpenRouter, LiteLLM, Databricks, a custom provider …) Baton cannot know, and says so instead
of judging. The person's configured `GOOSE_MODEL` is always accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from baton_tui.players.claude_code import ClaudeCodePlayer
from baton_tui.players.gemini import MODELS as GEMINI_MODELS
from baton_tui.players.native import OPENAI_FAMILY, AnthropicPlayer, OpenAIPlayer


@dataclass(frozen=True)
class ProviderNames:
    """One provider's names: those listed, and the family pattern newer ones follow."""

    label: str
    listed: tuple[str, ...]
    family: re.Pattern[str] | None = None

    def takes(self, model: str) -> bool:
        return model in self.listed or bool(self.family and self.family.match(model))


_CLAUDE = ProviderNames("Claude names", tuple(dict.fromkeys(
    [*AnthropicPlayer.models, *(m for m in ClaudeCodePlayer.models if m.startswith("claude-"))])),
    re.compile(r"^claude-"))
_GEMINI = ProviderNames("Gemini names", GEMINI_MODELS, re.compile(r"^gemini-"))
KNOWN: dict[str, ProviderNames] = {
    "anthropic": _CLAUDE,
    "claude-code": ProviderNames("Claude Code's names", ClaudeCodePlayer.models),
    "openai": ProviderNames("OpenAI's names", OpenAIPlayer.models, OPENAI_FAMILY),
    "google": _GEMINI,
    "gemini-cli": ProviderNames("Gemini CLI's names", GEMINI_MODELS),
}
# An OpenAI provider aimed at another host serves that host's names, not OpenAI's.
OTHER_HOST = {"openai": ("OPENAI_HOST", "OPENAI_BASE_PATH")}


def provider_names(provider: str | None, env: dict[str, str]) -> ProviderNames | None:
    """The names `provider` takes, or None when Baton cannot know them."""
    if provider is None or any(env.get(v) for v in OTHER_HOST.get(provider, ())):
        return None
    return KNOWN.get(provider)


def config_value(text: str, key: str) -> str | None:
    """A top-level `KEY: value` of Goose's config.yaml (quotes removed)."""
    found = re.search(rf"(?m)^\s*{key}\s*:\s*(\S.*?)\s*$", text)
    return found.group(1).strip("'\"") if found else None

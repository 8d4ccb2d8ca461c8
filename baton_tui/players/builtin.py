"""The built-in agent CLIs and native API routes: detection facts and catalogs.

Adapters that can start an agent override `launch`; the others are detected and
listed (so `baton players` and `baton doctor` tell the truth about a machine) but
refuse to start with a clear reason.
"""

from __future__ import annotations

from baton_tui.players.aider import AiderPlayer
from baton_tui.players.amp import AmpPlayer
from baton_tui.players.base import Player
from baton_tui.players.claude_code import ClaudeCodePlayer
from baton_tui.players.codex import CodexPlayer
from baton_tui.players.gemini import GeminiPlayer
from baton_tui.players.kinds import CliPlayer, NativePlayer
from baton_tui.players.native import AnthropicPlayer, OpenAIPlayer
from baton_tui.players.opencode import OpenCodePlayer

__all__ = ["BUILTIN_CLASSES", "CliPlayer", "NativePlayer"]


def _cli(name: str, binary: str, keys: tuple[str, ...], creds: tuple[str, ...], install: str,
         **attrs: object) -> type[CliPlayer]:
    return type(f"{name.title().replace('-', '')}Player", (CliPlayer,), {
        "name": name, "binary": binary, "key_vars": keys, "credential_files": creds,
        "install": install, **attrs})


BUILTIN_CLASSES: dict[str, type[Player]] = {
    "claude-code": ClaudeCodePlayer,
    "codex": CodexPlayer,
    "opencode": OpenCodePlayer,
    "gemini": GeminiPlayer,
    "aider": AiderPlayer,
    "cursor-agent": _cli("cursor-agent", "cursor-agent", ("CURSOR_API_KEY",), (".cursor/cli-config.json",),
                         "see cursor.com/cli"),
    "goose": _cli("goose", "goose", (), (), "see block.github.io/goose"),
    "amp": AmpPlayer,
    "anthropic": AnthropicPlayer,
    "openai": OpenAIPlayer,
}

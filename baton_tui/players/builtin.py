"""The built-in players: the eight agent CLIs and the two native API routes.

Each has an adapter module of its own (detection, catalog, command lines, event parsing);
this table is the one list of them, in the order `baton players` shows.
"""

from __future__ import annotations

from baton_tui.players.acp import GeminiAcp, OpenCodeAcp
from baton_tui.players.aider import AiderPlayer
from baton_tui.players.amp import AmpPlayer
from baton_tui.players.base import Player
from baton_tui.players.claude_code import ClaudeCodePlayer
from baton_tui.players.codex import CodexPlayer
from baton_tui.players.cursor_agent import CursorAgentPlayer
from baton_tui.players.gemini import GeminiPlayer
from baton_tui.players.goose import GoosePlayer
from baton_tui.players.kinds import CliPlayer, NativePlayer
from baton_tui.players.native import AnthropicPlayer, OpenAIPlayer
from baton_tui.players.opencode import OpenCodePlayer

__all__ = ["BUILTIN_CLASSES", "CliPlayer", "NativePlayer", "player_named"]

BUILTIN_CLASSES: dict[str, type[Player]] = {
    "claude-code": ClaudeCodePlayer,
    "codex": CodexPlayer,
    "opencode": OpenCodePlayer,
    "gemini": GeminiPlayer,
    "aider": AiderPlayer,
    "cursor-agent": CursorAgentPlayer,
    "goose": GoosePlayer,
    "amp": AmpPlayer,
    "anthropic": AnthropicPlayer,
    "openai": OpenAIPlayer,
    "gemini-acp": GeminiAcp,
    "opencode-acp": OpenCodeAcp,
}


def player_named(name: str) -> Player:
    """The built-in adapter called `name` with its defaults, for reading its output; any
    other name (a custom player, `script`) gets the base player, whose decoder reads any
    output generically."""
    cls = BUILTIN_CLASSES.get(name)
    return cls() if cls is not None else Player()

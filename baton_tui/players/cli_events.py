"""Shared helpers for agent-CLI adapters: JSON lines, short text, MCP wiring, numbers.

The attempt shim writes an agent's stdout and stderr into one log, so `event_of` answers
None for a line that is not a JSON object (warnings, banners, stack traces) instead of
failing. Limit wording and reset times live in `limits.py`.
"""

from __future__ import annotations

import json
from typing import Any

from baton_tui.paths import own_module

# A prompt longer than this goes on stdin instead of argv (Linux caps one argv string at 128 KiB).
ARGV_PROMPT_LIMIT = 100_000


def event_of(line: str) -> dict[str, Any] | None:
    """One line as a JSON object, or None."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def one_line(text: Any, limit: int = 160) -> str:
    """The first non-empty line of `text`, cut to `limit` characters."""
    for line in str(text or "").splitlines():
        line = line.strip()
        if line:
            return line if len(line) <= limit else line[: limit - 1] + "…"
    return ""


def mcp_command() -> list[str]:
    """How an agent CLI starts `baton mcp`: this interpreter, so the server runs Baton's code."""
    return own_module("baton_tui", "mcp")


def mcp_env(env: dict[str, str]) -> dict[str, str]:
    """The BATON_* variables of an attempt that its MCP server needs."""
    return {k: v for k, v in env.items() if k.startswith("BATON_")}


def toml_value(value: Any) -> str:
    """A `-c key=value` value as one-line inline TOML.

    JSON strings and arrays of strings are valid TOML. Not tomli-w: it writes whole documents
    and breaks arrays over several lines, which an argv override should not carry.
    """
    return json.dumps(value, ensure_ascii=False)


def int_of(value: Any) -> int:
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        return 0


def float_of(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0

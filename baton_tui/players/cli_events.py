"""Shared helpers for agent-CLI adapters: JSONL event streams, reset times, MCP wiring.

The attempt shim writes an agent's stdout and stderr into one log, so every parser here
skips lines that are not JSON objects (warnings, banners, stack traces) instead of failing.
Reset-time parsing follows the wording each CLI prints; the exact formats are pinned by
`tests/test_player_parsing.py` on recorded lines.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

from baton_tui.paths import own_module

# A prompt longer than this goes on stdin instead of argv (Linux caps one argv string at 128 KiB).
ARGV_PROMPT_LIMIT = 100_000

# How far in the past a wall-clock reset time may lie and still mean "now" rather than the
# next day: the CLIs print minutes, and Baton reads the log a moment after the agent exits.
_PAST_SLACK = 300.0

_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}


def events(text: str) -> Iterator[dict[str, Any]]:
    """Every line of `text` that is a JSON object, in order; anything else is skipped."""
    for line in text.splitlines():
        event = event_of(line)
        if event is not None:
            yield event


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


# --------------------------------------------------------------------------- reset times

def _zone(name: str | None):
    if not name:
        return None
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except Exception:  # unknown zone name, missing tzdata: fall back to local time
        return None


def _hour24(hour: int, ampm: str | None) -> int:
    if not ampm:
        return hour
    ampm = ampm.lower()
    if ampm.startswith("p") and hour != 12:
        return hour + 12
    if ampm.startswith("a") and hour == 12:
        return 0
    return hour


def _next_wall_time(hour: int, minute: int, tz, now: float,
                    month: int | None = None, day: int | None = None,
                    year: int | None = None) -> float:
    """The epoch of a wall-clock time in `tz` (local when None): the first one not (much) past."""
    here = datetime.fromtimestamp(now, tz) if tz else datetime.fromtimestamp(now)
    if month and day:
        base_year = year or here.year
        candidates = [(base_year, month, day)]
        if year is None:
            candidates.append((base_year + 1, month, day))
    else:
        candidates = []
        for delta in (-1, 0, 1):
            d = (here + timedelta(days=delta)).date()
            candidates.append((d.year, d.month, d.day))
    stamps = []
    for y, mo, d in candidates:
        try:
            moment = datetime(y, mo, d, hour, minute, tzinfo=tz) if tz else \
                datetime(y, mo, d, hour, minute)
        except ValueError:
            continue
        stamps.append(moment.timestamp())
    future = [s for s in stamps if s >= now - _PAST_SLACK]
    return min(future) if future else max(stamps, default=now)


# Claude Code (subscription): "You've hit your session limit · resets 3pm (Europe/Berlin)",
# "… · resets 3:30pm", "… · resets Oct 9, 5pm (UTC)",
# "… · resets Oct 9, 2027, 5:30pm (UTC)".
_CLAUDE_RESET = re.compile(
    r"resets\s+(?:(?P<mon>[A-Za-z]{3})[a-z]*\.?\s+(?P<day>\d{1,2}),\s*(?:(?P<year>\d{4}),\s*)?)?"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?\s*(?P<ampm>[ap]\.?m\.?)"
    r"(?:\s*\((?P<tz>[A-Za-z0-9_+\-/]+)\))?", re.IGNORECASE)
# Claude Code (older builds): "Claude AI usage limit reached|1751234567".
_CLAUDE_EPOCH = re.compile(r"usage limit reached\|(\d{9,11})", re.IGNORECASE)


def claude_reset(text: str, now: float | None = None) -> float | None:
    """The reset time in a Claude Code limit message, as an epoch, or None.

    Claude prints minutes only (and no minutes on the hour), so the reset lies within the
    minute shown: Baton waits until that minute has passed.
    """
    now = time.time() if now is None else now
    epoch = _CLAUDE_EPOCH.search(text)
    if epoch:
        return float(epoch.group(1))
    match = _CLAUDE_RESET.search(text)
    if not match:
        return None
    hour = _hour24(int(match.group("hour")), match.group("ampm"))
    minute = int(match.group("minute") or 0)
    if hour > 23 or minute > 59:
        return None
    month = _MONTHS.get((match.group("mon") or "").lower()[:3])
    day = int(match.group("day")) if match.group("day") else None
    year = int(match.group("year")) if match.group("year") else None
    at = _next_wall_time(hour, minute, _zone(match.group("tz")), now, month, day, year)
    return at + 60.0


# Codex: "… or try again at 1:06 AM." / "… try again at Nov 30th, 2026 12:56 AM." (local time).
_CODEX_RESET = re.compile(
    r"try again at\s+(?:(?P<mon>[A-Za-z]{3})[a-z]*\.?\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?,?\s+"
    r"(?:(?P<year>\d{4}),?\s+)?)?(?P<hour>\d{1,2}):(?P<minute>\d{2})(?::\d{2})?\s*"
    r"(?P<ampm>[AP]\.?M\.?)?", re.IGNORECASE)


def codex_reset(text: str, now: float | None = None) -> float | None:
    """The reset time in a Codex usage-limit message (local wall clock, minutes), or None."""
    now = time.time() if now is None else now
    match = _CODEX_RESET.search(text)
    if not match:
        return None
    hour = _hour24(int(match.group("hour")), match.group("ampm"))
    minute = int(match.group("minute"))
    if hour > 23 or minute > 59:
        return None
    month = _MONTHS.get((match.group("mon") or "").lower()[:3])
    day = int(match.group("day")) if match.group("day") else None
    year = int(match.group("year")) if match.group("year") else None
    return _next_wall_time(hour, minute, None, now, month, day, year) + 60.0

"""Usage limits and rate limits in the words agent CLIs print, and the reset time they name.

One place for every wording: the adapters' decoders ask here whether a message is a usage
(plan, quota, credit) limit or a passing throttle, and when it resets. The shapes that reach
Baton, most exact first:

* an epoch (`"resets_at": 1767225600`, Claude Code's `usage limit reached|1751234567`);
* an ISO-8601 instant ("resets at 2026-07-01T12:00:00Z");
* a delay in words ("Please try again in 1m30s", "Retrying after 4022ms", "reset after 3s");
* an HTTP `Retry-After` value (seconds, or a date) passed on in an error event;
* the wall-clock wordings of Claude Code ("resets 3pm (Europe/Berlin)") and Codex ("try again
  at Nov 30th, 2026 12:56 AM", local time);
* Google's daily quota, which resets at midnight Pacific time (Gemini CLI names no time).

A delay counts from when the agent printed it (`reading_output`), not from when Baton read
the log. The exact formats are pinned by tests/test_player_parsing*.py on recorded lines.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime, timedelta, timezone, tzinfo
from email.utils import parsedate_to_datetime
from typing import Iterator
from zoneinfo import ZoneInfo

# ------------------------------------------------------------------------- when it was printed

_PRINTED_AT: ContextVar[float | None] = ContextVar("printed_at", default=None)


def printed_at() -> float:
    """When the output being read was printed (see `reading_output`), else now: a wait an
    agent printed ("try again in 20s") counts from then, not from when Baton read it — an
    agent that took its grace period to stop would otherwise be waited for twice."""
    at = _PRINTED_AT.get()
    return time.time() if at is None else at


@contextmanager
def reading_output(at: float | None) -> Iterator[None]:
    """Read a finished attempt's output as printed at `at` (its log's last write)."""
    token = _PRINTED_AT.set(None if at is None else min(at, time.time()))
    try:
        yield
    finally:
        _PRINTED_AT.reset(token)


# ------------------------------------------------------------------------- limit or throttle

LIMIT_WORDS = ("usage limit", "hit your limit", "hit your usage", "out of usage",
               "out of credits", "insufficient credit", "credits exhausted", "quota exceeded",
               "exceeded your current quota", "insufficient_quota", "usage_limit_reached")
THROTTLE_WORDS = ("rate limit", "rate_limit", "429", "too many requests", "resource_exhausted",
                  "overloaded")


def is_limit(text: str) -> bool:
    """A usage (plan, quota, credit) limit, as opposed to a passing throttle."""
    low = text.lower()
    return any(word in low for word in LIMIT_WORDS)


def is_throttle(text: str) -> bool:
    """A throttle (429, overloaded): retried with backoff unless it names a reset."""
    low = text.lower()
    return any(word in low for word in THROTTLE_WORDS)


# ------------------------------------------------------------------------- delays in words

_DURATION = re.compile(
    r"(try again|retrying|retry|resets?)\s+(?:in|after)\s+"
    r"((?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?)"
    r"(?![a-z])[\s,]*)+)", re.IGNORECASE)
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")
_UNIT = {"ms": 0.001, "millisecond": 0.001, "h": 3600.0, "hr": 3600.0, "hour": 3600.0,
         "m": 60.0, "min": 60.0, "minute": 60.0, "s": 1.0, "sec": 1.0, "second": 1.0}


def wait_seconds(text: str, *, retrying: bool = True) -> float | None:
    """Seconds in the last "try again in …" / "retrying after …" / "reset after …" of `text`.

    `retrying=False` skips a CLI's own backoff ("Retrying in 0.2 seconds…", Aider's), which
    says when it will ask again, not when the provider lets it.
    """
    found = [amount for word, amount in _DURATION.findall(" ".join(str(text or "").split()))
             if retrying or word.lower() != "retrying"]
    if not found:
        return None
    total = 0.0
    for amount, unit in _PART.findall(found[-1].lower()):
        unit = unit if unit in _UNIT else unit.rstrip("s")
        total += float(amount) * _UNIT.get(unit, 1.0)
    return total


def retry_after(value: object, now: float) -> float | None:
    """The epoch an HTTP `Retry-After` value names: delay-seconds from `now`, or a date."""
    text = str(value or "").strip()
    if not text:
        return None
    try:
        return now + max(0.0, float(text))
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


def iso_epoch(text: str) -> float | None:
    """An ISO 8601 time ("2026-11-30T14:32:40.564Z") as an epoch (UTC when unzoned), or None."""
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


# ------------------------------------------------------------------------- wall-clock resets

# How far in the past a wall-clock reset time may lie and still mean "now" rather than the
# next day: the CLIs print minutes, and Baton reads the log a moment after the agent exits.
_PAST_SLACK = 300.0
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}


def _zone(name: str | None) -> tzinfo | None:
    if not name:
        return None
    try:
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


def _next_wall_time(hour: int, minute: int, tz: tzinfo | None, now: float,
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
            near = (here + timedelta(days=delta)).date()
            candidates.append((near.year, near.month, near.day))
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


def _wall_reset(match: re.Match[str], tz: tzinfo | None, now: float) -> float | None:
    """A matched wall-clock reset (hour, minute, optional date) as an epoch, or None."""
    hour = _hour24(int(match.group("hour")), match.group("ampm"))
    minute = int(match.group("minute") or 0)
    if hour > 23 or minute > 59:
        return None
    month = _MONTHS.get((match.group("mon") or "").lower()[:3])
    day = int(match.group("day")) if match.group("day") else None
    year = int(match.group("year")) if match.group("year") else None
    return _next_wall_time(hour, minute, tz, now, month, day, year)


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
    at = _wall_reset(match, _zone(match.group("tz")), now)
    return None if at is None else at + 60.0


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
    at = _wall_reset(match, None, now)
    return None if at is None else at + 60.0


def pacific_midnight(now: float | None = None) -> float:
    """The next midnight in America/Los_Angeles (fixed UTC-8 when tzdata is missing)."""
    now = time.time() if now is None else now
    zone: tzinfo
    try:
        zone = ZoneInfo("America/Los_Angeles")
    except Exception:  # no tzdata on this machine
        zone = timezone(timedelta(hours=-8))
    here = datetime.fromtimestamp(now, zone)
    tomorrow = (here + timedelta(days=1)).date()
    return datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=zone).timestamp()


# ------------------------------------------------------------------------- any wording

_EPOCH = re.compile(r'"?(?:resets?_?at|resetsAt|reset_time)"?\s*[:=]\s*"?(\d{10})(?:\.\d+)?\b',
                    re.IGNORECASE)
_ISO = re.compile(r"(?:resets?|reset at|until|after|again at|available at)\s*(?:at|on)?\s*:?\s*"
                  r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                  r"(?:Z|[+-]\d{2}:?\d{2})?)", re.IGNORECASE)


def reset_in(text: str, now: float | None = None) -> float | None:
    """The epoch at which the limit in `text` resets, or None when it names none.

    For CLIs that pass on their provider's message without one wording of their own (Amp,
    Cursor Agent, Goose): every form above is tried, the most exact first.
    """
    now = printed_at() if now is None else now
    epoch = _EPOCH.search(text)
    if epoch:
        return float(epoch.group(1))
    iso = _ISO.search(text)
    if iso:
        try:
            moment = datetime.fromisoformat(iso.group(1).replace(" ", "T"))
        except ValueError:
            moment = None
        if moment is not None:
            return moment.timestamp() if moment.tzinfo else moment.astimezone().timestamp()
    wait = wait_seconds(text, retrying=False)
    if wait is not None:
        return now + wait
    return claude_reset(text, now) or codex_reset(text, now)


def limit_in(message: str) -> tuple[float | None, bool] | None:
    """A limit in a provider's message, for the CLIs without words of their own: (its reset
    or None, whether it is a usage limit rather than a throttle), or None when none."""
    if is_limit(message):
        return reset_in(message), True
    if is_throttle(message):
        return reset_in(message), False
    return None


# ------------------------------------------------------------------------- each CLI's own words

# Claude Code: a subscriber's "You've hit your session limit · resets 3pm (Europe/Berlin)";
# under an API key only "API Error: Request rejected (429) · …".
CLAUDE_LIMIT_WORDS = ("You've hit your", "You’ve hit your", "usage limit reached",
                      "You're out of usage", "You’re out of usage", "out of extra usage")
CLAUDE_THROTTLE_WORDS = ("Server is temporarily limiting requests", "rate_limit_error",
                         "Request rejected (429)", "429")
# Codex: "You’ve hit your usage limit. … try again at 1:06 AM."
CODEX_LIMIT_WORDS = ("hit your usage limit", "usage_limit_reached", "usage limit reached")
CODEX_THROTTLE_WORDS = ("429", "Too Many Requests", "rate_limit", "rate limit")
# OpenCode: the provider's message in its `stream error` log line or its error event.
OPENCODE_LIMIT = re.compile(r"usage limit|quota|UsageLimitError|insufficient_quota|exhausted",
                            re.IGNORECASE)
OPENCODE_RATE = re.compile(r"\b429\b|rate.?limit|too many requests|overloaded", re.IGNORECASE)
# Gemini CLI: "Attempt 1 failed with status 429. Retrying with backoff…", "You have exhausted
# your daily quota on this model." (Google resets daily quotas at midnight Pacific).
GEMINI_LIMIT = re.compile(r"quota|exhausted|RESOURCE_EXHAUSTED|capacity", re.IGNORECASE)
GEMINI_RATE = re.compile(r"\b429\b|rate.?limit|too many requests", re.IGNORECASE)
GEMINI_DAILY = "daily quota"
# Aider (litellm): it retries a 429 for about 80 s, then exits 0.
AIDER_RATE_LIMITED = ("litellm.RateLimitError", "The API provider has rate limited you")


def contains_any(text: str, words: tuple[str, ...]) -> bool:
    return any(word in text for word in words)

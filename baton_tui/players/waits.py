"""Reset times in what agent CLIs print when a provider says "wait".

Three shapes reach Baton: a duration in words ("Please try again in 1m30s", "Retrying after
4022ms", "Your quota will reset after 3s"), an HTTP `Retry-After` value (seconds, or a date)
that a CLI passes on in its error event, and Google's daily quota, which resets at midnight
Pacific time (Google's documented reset for per-day quotas; Gemini CLI names no time). Each
helper returns an epoch or a number of seconds, or None when the text says nothing usable.
"""

from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from email.utils import parsedate_to_datetime

_DURATION = re.compile(
    r"(?:try again|retry|retrying|resets?)\s+(?:in|after)\s+"
    r"((?:\d+(?:\.\d+)?\s*(?:ms|milliseconds?|h|hrs?|hours?|m|mins?|minutes?|s|secs?|seconds?)"
    r"(?![a-z])[\s,]*)+)", re.IGNORECASE)
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")
_UNIT = {"ms": 0.001, "millisecond": 0.001, "h": 3600.0, "hr": 3600.0, "hour": 3600.0,
         "m": 60.0, "min": 60.0, "minute": 60.0, "s": 1.0, "sec": 1.0, "second": 1.0}


def wait_seconds(text: str) -> float | None:
    """Seconds in the last "try again in …" / "retrying after …" / "reset after …" of `text`."""
    found = _DURATION.findall(" ".join(str(text or "").split()))
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
    """An ISO 8601 time ("2026-11-30T14:32:40.564Z") as an epoch, or None."""
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.timestamp()


def pacific_midnight(now: float | None = None) -> float:
    """The next midnight in America/Los_Angeles (fixed UTC-8 when tzdata is missing)."""
    now = time.time() if now is None else now
    try:
        from zoneinfo import ZoneInfo

        zone = ZoneInfo("America/Los_Angeles")
    except Exception:  # no tzdata on this machine
        zone = timezone(timedelta(hours=-8))
    here = datetime.fromtimestamp(now, zone)
    tomorrow = (here + timedelta(days=1)).date()
    return datetime(tomorrow.year, tomorrow.month, tomorrow.day, tzinfo=zone).timestamp()

"""Usage limits and rate limits in the words an agent CLI prints, and the reset they name.

The CLIs that Baton drives from documented formats (Amp, Cursor Agent, Goose) do not pin
one wording: they pass on their provider's message. So one reader serves them all, trying
the most exact form first — an epoch (`"resets_at": 1767225600`), an ISO-8601 instant
("resets at 2026-07-01T12:00:00Z"), a delay ("Please try again in 20s"), then the wall-clock
wordings of Claude Code and Codex. A limit without any of these pauses with an unknown reset
(Baton probes it later); a throttle (429) without one is retried with backoff.
"""

from __future__ import annotations

import re
from datetime import datetime

from baton_tui.players.aider import retry_after
from baton_tui.players.base import printed_at
from baton_tui.players.cli_events import claude_reset, codex_reset

LIMIT_WORDS = ("usage limit", "hit your limit", "hit your usage", "out of usage",
               "out of credits", "insufficient credit", "credits exhausted", "quota exceeded",
               "exceeded your current quota", "insufficient_quota", "usage_limit_reached")
THROTTLE_WORDS = ("rate limit", "rate_limit", "429", "too many requests", "resource_exhausted",
                  "overloaded")

_EPOCH = re.compile(r'"?(?:resets?_?at|resetsAt|reset_time)"?\s*[:=]\s*"?(\d{10})(?:\.\d+)?\b',
                    re.IGNORECASE)
_ISO = re.compile(r"(?:resets?|reset at|until|after|again at|available at)\s*(?:at|on)?\s*:?\s*"
                  r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?"
                  r"(?:Z|[+-]\d{2}:?\d{2})?)", re.IGNORECASE)


def is_limit(text: str) -> bool:
    """A usage (plan, quota, credit) limit, as opposed to a passing throttle."""
    low = text.lower()
    return any(word in low for word in LIMIT_WORDS)


def is_throttle(text: str) -> bool:
    low = text.lower()
    return any(word in low for word in THROTTLE_WORDS)


def reset_in(text: str, now: float | None = None) -> float | None:
    """The epoch at which the limit in `text` resets, or None when it names none."""
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
    wait = retry_after(text)
    if wait is not None:
        return now + wait
    return claude_reset(text, now) or codex_reset(text, now)

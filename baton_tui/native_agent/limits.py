"""Rate limits and transient failures: when to retry a model call and when to stop the loop.

A 429 is never retried here: the loop stops with an `error` event carrying the reset time read
from the response headers (`anthropic-ratelimit-unified-reset`, `retry-after`,
`x-ratelimit-reset-*`) or body (`resets_at`, `resets_in_seconds`), or null when it has none,
and exits `RATE_LIMITED_EXIT`; Baton pauses the task until the reset or retries it with backoff.
Transient failures (connection errors, 5xx, 529) are retried a few times with a short backoff.
"""

from __future__ import annotations

import email.utils
import re
import time
from datetime import datetime
from typing import Any

from baton_tui.native_agent.wire import ApiFailure, Reply, emit

TRANSIENT_RETRIES = 3
RATE_LIMITED_EXIT = 75


def _when(value: str, now: float) -> float | None:
    """A reset time from one header value: epoch seconds, seconds to wait, a Go-style
    duration (`6m0s`, `20ms`), an RFC 3339 timestamp or an HTTP date."""
    value = value.strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is not None:
        if number <= 0:
            return None
        return number if number > 1e9 else now + number
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", value)
    if parts and "".join(n + u for n, u in parts) == value:
        scale = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
        return now + sum(float(n) * scale[u] for n, u in parts)
    try:
        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if stamp.tzinfo is not None:
            return stamp.timestamp()
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
        return parsed.timestamp() if parsed else None
    except (TypeError, ValueError):
        return None


def reset_time(headers: dict[str, str], body: Any, now: float | None = None) -> float | None:
    """When a 429 says the limit resets (epoch seconds), or None when it does not say."""
    now = time.time() if now is None else now
    found: list[float] = []
    for name in ("anthropic-ratelimit-unified-reset", "retry-after", "retry-after-ms"):
        if headers.get(name):
            value = headers[name]
            if name == "retry-after-ms":
                try:
                    found.append(now + float(value) / 1000)
                except ValueError:
                    pass
                continue
            when = _when(value, now)
            if when:
                found.append(when)
    if not found:
        for name, value in headers.items():
            if name.startswith("x-ratelimit-reset") or (name.startswith("anthropic-ratelimit-")
                                                         and name.endswith("-reset")):
                when = _when(value, now)
                if when:
                    found.append(when)
    error = body.get("error") if isinstance(body, dict) else None
    if not found and isinstance(error, dict):
        if isinstance(error.get("resets_at"), (int, float)):
            found.append(float(error["resets_at"]))
        elif isinstance(error.get("resets_in_seconds"), (int, float)):
            found.append(now + float(error["resets_in_seconds"]))
    return max(found) if found else None


def call_with_retries(provider: Any, system: str, messages: list[dict], tools: list[dict],
                      session: str) -> Reply | int:
    """One model turn, transient failures retried; an exit status when the loop must stop
    (after emitting the `error` event that says why)."""
    for attempt in range(TRANSIENT_RETRIES + 1):
        try:
            return provider.call(system, messages, tools)
        except ApiFailure as failure:
            if failure.status == 429:
                reset = reset_time(failure.headers, failure.body)
                emit("error", status=429, reset=reset, message=failure.message[:500],
                     session_id=session)
                return RATE_LIMITED_EXIT
            if failure.transient and attempt < TRANSIENT_RETRIES:
                emit("retry", status=failure.status, attempt=attempt + 1,
                     message=failure.message[:200])
                time.sleep(min(2 ** attempt, 8))
                continue
            emit("error", status=failure.status, reset=None, message=failure.message[:500],
                 session_id=session)
            return 1
    raise AssertionError("unreachable: the last attempt returns")

"""What every protocol encoder shares: the response value, JSON and SSE bodies, ids, chunking.

The four wire-protocol modules build vendor-shaped bodies; this is the little they have in
common, so each of them reads as "the shape of one API" and nothing else.
"""

from __future__ import annotations

import json
import os
from typing import Any, Callable

from baton_tui.demo.script import Answer

DEFAULT_MODEL = "scripted-model"

# One server-sent event: (event name or None, JSON-able data or an already-encoded string).
Event = tuple[str | None, Any]


class Response:
    def __init__(self, status: int, body: bytes, content_type: str, headers: dict | None = None):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers or {}


def new_id(prefix: str, n: int = 12) -> str:
    return prefix + os.urandom(n).hex()


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def chunks(text: str, size: int = 24) -> list[str]:
    """Split text into a few pieces so clients exercise their delta accumulation."""
    if not text:
        return []
    return [text[i : i + size] for i in range(0, len(text), size)]


def has_text_part(ans: Answer) -> bool:
    """Whether an answer carries a text part: any text, or no tool call (then an empty one)."""
    return bool(ans.text or not ans.calls)


def json_response(obj: Any, status: int = 200, headers: dict | None = None) -> Response:
    return Response(status, dumps(obj).encode(), "application/json", headers)


def sse(events: list[Event]) -> Response:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return Response(
        200, "".join(out).encode(), "text/event-stream", {"Cache-Control": "no-cache"}
    )


def error_response(ans: Answer, default_body: Callable[[int, str], Any]) -> Response:
    """A scripted HTTP error: the turn's status, body and headers, or `default_body(status,
    message)` in the vendor's shape when the turn gives no body."""
    status = ans.error or 500
    body = ans.body
    if body is None:
        body = default_body(status, f"scripted error {status}")
    headers = {str(k): str(v) for k, v in (ans.headers or {}).items()}
    return json_response(body, status, headers)

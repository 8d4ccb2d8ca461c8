"""Anthropic Messages (``POST /v1/messages``): one ``message`` object, or its SSE stream.

What Claude Code and the ``anthropic`` SDK read: content blocks (text, then ``tool_use``),
``stop_reason`` ``end_turn``/``tool_use``, and with ``"stream": true`` the
``message_start`` … ``content_block_*`` … ``message_delta``/``message_stop`` events, text and
tool input split into deltas. Scripted errors get Anthropic's error body and
``x-should-retry: false`` so clients fail at once instead of retrying.
"""

from __future__ import annotations

from typing import Any

from baton_tui.demo.script import Answer
from baton_tui.demo.server.wire import (
    DEFAULT_MODEL,
    Event,
    Response,
    chunks,
    dumps,
    error_response,
    has_text_part,
    json_response,
    new_id,
    sse,
)

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def _error_body(status: int, message: str) -> dict:
    return {"type": "error", "error": {"type": ERROR_TYPES.get(status, "api_error"),
                                       "message": message}}


def error(ans: Answer) -> Response:
    resp = error_response(ans, _error_body)
    present = {k.lower() for k in resp.headers}
    if "x-should-retry" not in present:
        resp.headers["x-should-retry"] = "false"
    if "request-id" not in present:
        resp.headers["request-id"] = new_id("req_")
    return resp


def encode(req: dict, ans: Answer, in_tokens: int) -> Response:
    model = req.get("model") or DEFAULT_MODEL
    blocks: list[dict] = []
    if has_text_part(ans):
        blocks.append({"type": "text", "text": ans.text})
    for call in ans.calls:
        blocks.append({"type": "tool_use", "id": new_id("toolu_01", 11), "name": call["tool"],
                       "input": call["input"]})
    stop = "tool_use" if ans.calls else "end_turn"
    usage = {
        "input_tokens": in_tokens,
        "output_tokens": ans.output_tokens(),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    message = {
        "id": new_id("msg_01", 11),
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not req.get("stream"):
        return json_response(message)
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    events: list[Event] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        events += _block_events(index, block)
    delta = {"stop_reason": stop, "stop_sequence": None}
    events.append(("message_delta", {"type": "message_delta", "delta": delta, "usage": usage}))
    events.append(("message_stop", {"type": "message_stop"}))
    return sse(events)


def _block_events(index: int, block: dict) -> list[Event]:
    """One content block streamed: its start, its deltas, its stop."""
    if block["type"] == "text":
        start: dict[str, Any] = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": piece} for piece in chunks(block["text"])]
    else:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": piece}
                  for piece in ["", *chunks(dumps(block["input"]))]]
    events: list[Event] = [("content_block_start", {"type": "content_block_start",
                                                    "index": index, "content_block": start})]
    events += [("content_block_delta", {"type": "content_block_delta", "index": index,
                                        "delta": delta}) for delta in deltas]
    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events

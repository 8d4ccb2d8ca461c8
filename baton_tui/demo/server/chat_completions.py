"""OpenAI Chat Completions (``POST /v1/chat/completions``): what OpenCode and most SDKs speak.

One ``chat.completion`` object, or with ``"stream": true`` ``chat.completion.chunk`` events
(text pieces, then each tool call's head and argument pieces, then the finish reason; a usage
chunk when ``stream_options.include_usage``) ending with ``data: [DONE]``. The OpenAI error
body here is shared with the Responses API.
"""

from __future__ import annotations

import time
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


def _error_body(status: int, message: str) -> dict:
    kind = "rate_limit_exceeded" if status == 429 else "scripted_error"
    return {"error": {"message": message, "type": kind, "code": kind, "param": None}}


def error(ans: Answer) -> Response:
    """A scripted error in OpenAI's shape (Chat Completions and Responses alike)."""
    return error_response(ans, _error_body)


def encode(req: dict, ans: Answer, in_tokens: int) -> Response:
    head = {
        "id": new_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": req.get("model") or DEFAULT_MODEL,
    }
    calls: list[dict[str, Any]] = [
        {
            "id": new_id("call_"),
            "type": "function",
            "function": {"name": c["tool"], "arguments": dumps(c["input"])},
        }
        for c in ans.calls
    ]
    finish = "tool_calls" if calls else "stop"
    out_tokens = ans.output_tokens()
    usage = {
        "prompt_tokens": in_tokens,
        "completion_tokens": out_tokens,
        "total_tokens": in_tokens + out_tokens,
    }
    if not req.get("stream"):
        message: dict[str, Any] = {
            "role": "assistant",
            "content": ans.text if has_text_part(ans) else None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        return json_response({**head, "choices": [choice], "usage": usage})
    include_usage = bool((req.get("stream_options") or {}).get("include_usage"))
    head["object"] = "chat.completion.chunk"

    def chunk(delta: dict, finish_reason: str | None = None) -> dict:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        obj: dict[str, Any] = {**head, "choices": [choice]}
        if include_usage:
            obj["usage"] = None
        return obj

    events: list[Event] = [(None, chunk({"role": "assistant", "content": "", "refusal": None}))]
    for piece in chunks(ans.text):
        events.append((None, chunk({"content": piece})))
    for index, call in enumerate(calls):
        function = {"name": call["function"]["name"], "arguments": ""}
        tool_head = {"index": index, "id": call["id"], "type": "function", "function": function}
        events.append((None, chunk({"tool_calls": [tool_head]})))
        for piece in chunks(call["function"]["arguments"]):
            events.append(
                (None, chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
            )
    events.append((None, chunk({}, finish)))
    if include_usage:
        events.append((None, {**head, "choices": [], "usage": usage}))
    events.append((None, "[DONE]"))
    return sse(events)

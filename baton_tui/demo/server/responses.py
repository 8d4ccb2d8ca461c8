"""OpenAI Responses (``POST /v1/responses``): what Codex speaks.

One ``response`` object (a ``message`` output item for the text, a ``function_call`` item per
tool call, with the scripted ``namespace`` for Codex's MCP tools), or with ``"stream": true``
the numbered ``response.*`` events from ``response.created`` to ``response.completed``.
Errors have the Chat Completions shape.
"""

from __future__ import annotations

import time
from typing import Any

from baton_tui.demo.script import Answer
from baton_tui.demo.server.chat_completions import error
from baton_tui.demo.server.wire import (
    DEFAULT_MODEL,
    Event,
    Response,
    chunks,
    dumps,
    has_text_part,
    json_response,
    new_id,
    sse,
)

__all__ = ["encode", "error"]


def _base(req: dict) -> dict[str, Any]:
    """The response object as first announced: in progress, no output yet."""
    return {
        "id": new_id("resp_", 16),
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": req.get("instructions"),
        "max_output_tokens": req.get("max_output_tokens"),
        "model": req.get("model") or DEFAULT_MODEL,
        "output": [],
        "parallel_tool_calls": bool(req.get("parallel_tool_calls", True)),
        "previous_response_id": req.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None},
        "store": bool(req.get("store", False)),
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": req.get("tool_choice") or "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": {},
    }


def _items(ans: Answer) -> list[dict]:
    items: list[dict] = []
    if has_text_part(ans):
        text_part = {"type": "output_text", "text": ans.text, "annotations": [], "logprobs": []}
        items.append({"id": new_id("msg_", 16), "type": "message", "status": "completed",
                      "role": "assistant", "content": [text_part]})
    for call in ans.calls:
        item = {
            "id": new_id("fc_", 16),
            "type": "function_call",
            "status": "completed",
            "call_id": new_id("call_"),
            "name": call["tool"],
            "arguments": dumps(call["input"]),
        }
        if call.get("namespace"):
            item["namespace"] = call["namespace"]
        items.append(item)
    return items


def encode(req: dict, ans: Answer, in_tokens: int) -> Response:
    base = _base(req)
    items = _items(ans)
    out_tokens = ans.output_tokens()
    usage = {
        "input_tokens": in_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": in_tokens + out_tokens,
    }
    done = {**base, "status": "completed", "output": items, "usage": usage}
    if not req.get("stream"):
        return json_response(done)

    events: list[Event] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    emit("response.created", response=base)
    emit("response.in_progress", response=base)
    for out_index, item in enumerate(items):
        at = {"item_id": item["id"], "output_index": out_index}
        if item["type"] == "message":
            text = item["content"][0]["text"]
            emit("response.output_item.added", output_index=out_index,
                 item={**item, "status": "in_progress", "content": []})
            emit("response.content_part.added", **at, content_index=0,
                 part={"type": "output_text", "text": "", "annotations": [], "logprobs": []})
            for piece in chunks(text):
                emit("response.output_text.delta", **at, content_index=0, delta=piece,
                     logprobs=[])
            emit("response.output_text.done", **at, content_index=0, text=text, logprobs=[])
            emit("response.content_part.done", **at, content_index=0, part=item["content"][0])
        else:
            emit("response.output_item.added", output_index=out_index,
                 item={**item, "status": "in_progress", "arguments": ""})
            for piece in chunks(item["arguments"]):
                emit("response.function_call_arguments.delta", **at, delta=piece)
            emit("response.function_call_arguments.done", **at, name=item["name"],
                 arguments=item["arguments"])
        emit("response.output_item.done", output_index=out_index, item=item)
    emit("response.completed", response=done)
    return sse(events)

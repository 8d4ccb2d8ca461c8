"""Gemini (``POST /v1beta/models/{model}:generateContent`` and ``:streamGenerateContent``).

What Gemini CLI speaks. The model and method are in the path, so this module routes its own
requests: ``:countTokens`` is a side request, JSON-mode calls get an object filling the
requested schema without consuming a turn, and a stream is SSE with ``?alt=sse`` or else a
JSON array of chunks. ``/v1/`` and ``/v1alpha/`` prefixes work the same as ``/v1beta/``.
"""

from __future__ import annotations

import re
from typing import Any, Callable
from urllib.parse import parse_qs

from baton_tui.demo.script import Answer, fill_schema, gemini_json_schema
from baton_tui.demo.server.wire import (
    Response,
    chunks,
    dumps,
    error_response,
    has_text_part,
    json_response,
    new_id,
    sse,
)

PATH = re.compile(r"^/(?:v1|v1beta|v1alpha)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")

GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def _error_body(status: int, message: str) -> dict:
    return {"error": {"code": status, "message": message,
                      "status": GOOGLE_STATUS.get(status, "UNKNOWN")}}


def error(ans: Answer) -> Response:
    return error_response(ans, _error_body)


def serve(match: re.Match, query: str, req: dict, in_tokens: int, record: dict,
          take_turn: Callable[[str, dict, dict], Answer]) -> Response:
    """Answer a request whose path matched `PATH`, filling in its `record`."""
    record["protocol"] = "gemini"
    model, method = match.group("model"), match.group("method")
    record["stream"] = method == "streamGenerateContent"
    if method == "countTokens":
        record["side"] = "count_tokens"
        return json_response({"totalTokens": in_tokens})
    if method not in ("generateContent", "streamGenerateContent"):
        record["side"] = "unsupported"
        body = {"code": 404, "message": f"unsupported: {method}", "status": "NOT_FOUND"}
        return json_response({"error": body}, 404)
    schema = gemini_json_schema(req)
    if schema is not None:
        record["side"] = "json-mode"
        ans = Answer(text=dumps(fill_schema(schema)))
    else:
        ans = take_turn("gemini", req, record)
        if ans.error:
            return error(ans)
    as_sse = record["stream"] and "sse" in parse_qs(query).get("alt", [])
    return encode(ans, in_tokens, model, method, as_sse)


def encode(ans: Answer, in_tokens: int, model: str, method: str, as_sse: bool) -> Response:
    out_tokens = ans.output_tokens()
    usage = {
        "promptTokenCount": in_tokens,
        "candidatesTokenCount": out_tokens,
        "totalTokenCount": in_tokens + out_tokens,
    }
    rid = new_id("", 8)

    def chunk(parts: list[dict], final: bool) -> dict:
        cand: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        if final:
            cand["finishReason"] = "STOP"
        obj: dict[str, Any] = {"candidates": [cand], "modelVersion": model, "responseId": rid}
        if final:
            obj["usageMetadata"] = usage
        return obj

    call_parts = [{"functionCall": {"name": c["tool"], "args": c["input"]}} for c in ans.calls]
    if method != "streamGenerateContent":
        parts = ([{"text": ans.text}] if has_text_part(ans) else []) + call_parts
        return json_response(chunk(parts, True))
    pieces = chunks(ans.text) or ([""] if not call_parts else [])
    out = [chunk([{"text": p}], False) for p in pieces]
    if call_parts:
        out.append(chunk(call_parts, True))
    else:
        last = out.pop()
        out.append(chunk(last["candidates"][0]["content"]["parts"], True))
    if as_sse:
        return sse([(None, c) for c in out])
    return json_response(out)

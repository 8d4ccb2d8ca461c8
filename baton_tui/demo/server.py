"""Baton's scripted model server: replays a script of turns over real model wire protocols.

This is **not a model**. It is a small stdlib-only HTTP server, bound to 127.0.0.1 only, that
answers model requests from a fixed script so that ``baton demo`` and the real-agent-CLI tests
can drive real coding agents offline. It never contacts any other host, and every answer it gives
is whatever the script says (or ``"script exhausted"`` once the script runs out).

Protocols (detected by request path; JSON and streaming forms):

* Anthropic Messages — ``POST /v1/messages`` (``?beta=true`` too); SSE when ``"stream": true``.
  ``POST /v1/messages/count_tokens`` is answered as a side request.
* OpenAI Chat Completions — ``POST /v1/chat/completions`` or ``/chat/completions``; SSE
  ``chat.completion.chunk`` when ``"stream": true`` (a usage chunk when
  ``stream_options.include_usage``), ending with ``data: [DONE]``.
* OpenAI Responses — ``POST /v1/responses`` or ``/responses``; SSE ``response.*`` events when
  ``"stream": true``, else one ``response`` object.
* Gemini — ``POST /v1beta/models/{model}:generateContent`` and
  ``:streamGenerateContent`` (``?alt=sse`` for SSE, otherwise a JSON array of chunks);
  ``:countTokens`` is a side request. ``/v1/`` and ``/v1alpha/`` prefixes work the same.

Script turns (a JSON list; consumed in order, one per model request, across all protocols; full
rules and the side requests that never consume a turn are in :mod:`baton_tui.demo.script`)::

    {"text": "..."}                                          plain answer, end of turn
    {"text": "...", "tool": "Write", "input": {...}}         text then one tool call
    {"tool": "baton_report", "namespace": "mcp__baton", "input": {...}}   Responses namespace
    {"tools": [{"tool": "Read", "input": {...}}, ...]}       several tool calls
    {"error": 429, "body": {...}, "headers": {"retry-after": "60"}}      an HTTP error
    {"match": "substring", ...}    only for a request whose last user/tool content contains it

After the last turn every request is answered "script exhausted" with a normal end of turn.

Every request is recorded in ``ScriptedServer.requests`` (and appended as JSON lines to
``log_path``): time, method, path, a subset of headers (secrets redacted), the JSON body, the
protocol detected, whether it streamed, the turn index served (``None`` for side requests), the
side-request kind and the HTTP status.

CLI::

    python -m baton_tui.demo.server --script FILE.json [--log FILE] [--port-file FILE] [--port N]

prints the port on its first stdout line (and writes it to ``--port-file``) and serves until
SIGTERM or SIGINT.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

from baton_tui.demo.script import (
    Answer,
    Script,
    fill_schema,
    gemini_json_schema,
    is_title_request,
    load_script,
)

if TYPE_CHECKING:
    import argparse

__all__ = ["ScriptedServer", "build_parser", "load_script", "main"]

HOST = "127.0.0.1"
DEFAULT_MODEL = "scripted-model"

_LOGGED_HEADERS = (
    "user-agent",
    "content-type",
    "accept",
    "anthropic-version",
    "anthropic-beta",
    "originator",
    "session-id",
    "openai-beta",
    "x-goog-api-client",
    "x-stainless-lang",
    "x-stainless-package-version",
    "x-stainless-retry-count",
    # secrets: only their presence is logged
    "authorization",
    "x-api-key",
    "x-goog-api-key",
)
_SECRET_HEADERS = {"authorization", "x-api-key", "x-goog-api-key"}

_GEMINI_PATH = re.compile(
    r"^/(?:v1|v1beta|v1alpha)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$"
)

_ANTHROPIC_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_GOOGLE_STATUS = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


# --------------------------------------------------------------------------- helpers


def _id(prefix: str, n: int = 12) -> str:
    return prefix + os.urandom(n).hex()


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


def _chunks(text: str, size: int = 24) -> list[str]:
    """Split text into a few pieces so clients exercise their delta accumulation."""
    if not text:
        return []
    return [text[i : i + size] for i in range(0, len(text), size)]


# --------------------------------------------------------------------------- protocols


class _Response:
    def __init__(self, status: int, body: bytes, content_type: str, headers: dict | None = None):
        self.status = status
        self.body = body
        self.content_type = content_type
        self.headers = headers or {}


def _json_response(obj: Any, status: int = 200, headers: dict | None = None) -> _Response:
    return _Response(status, _dumps(obj).encode(), "application/json", headers)


def _sse(events: list[tuple[str | None, Any]]) -> _Response:
    out = []
    for name, data in events:
        payload = data if isinstance(data, str) else _dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return _Response(
        200, "".join(out).encode(), "text/event-stream", {"Cache-Control": "no-cache"}
    )


def _error_response(protocol: str, ans: Answer) -> _Response:
    status = ans.error or 500
    body = ans.body
    if body is None:
        message = f"scripted error {status}"
        if protocol == "anthropic":
            body = {
                "type": "error",
                "error": {
                    "type": _ANTHROPIC_ERROR_TYPES.get(status, "api_error"),
                    "message": message,
                },
            }
        elif protocol == "gemini":
            body = {
                "error": {
                    "code": status,
                    "message": message,
                    "status": _GOOGLE_STATUS.get(status, "UNKNOWN"),
                }
            }
        else:
            kind = "rate_limit_exceeded" if status == 429 else "scripted_error"
            body = {"error": {"message": message, "type": kind, "code": kind, "param": None}}
    headers = {str(k): str(v) for k, v in (ans.headers or {}).items()}
    if protocol == "anthropic":
        present = {k.lower() for k in headers}
        if "x-should-retry" not in present:
            headers["x-should-retry"] = "false"
        if "request-id" not in present:
            headers["request-id"] = _id("req_")
    return _json_response(body, status, headers)


def _anthropic(req: dict, ans: Answer, in_tokens: int) -> _Response:
    model = req.get("model") or DEFAULT_MODEL
    blocks: list[dict] = []
    if ans.text or not ans.calls:
        blocks.append({"type": "text", "text": ans.text})
    for call in ans.calls:
        blocks.append(
            {
                "type": "tool_use",
                "id": _id("toolu_01", 11),
                "name": call["tool"],
                "input": call["input"],
            }
        )
    stop = "tool_use" if ans.calls else "end_turn"
    usage = {
        "input_tokens": in_tokens,
        "output_tokens": ans.output_tokens(),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    msg_id = _id("msg_01", 11)
    if not req.get("stream"):
        return _json_response(
            {
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": None,
                "usage": usage,
            }
        )
    events: list[tuple[str | None, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**usage, "output_tokens": 1},
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": piece} for piece in _chunks(block["text"])]
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": ""}]
            deltas += [
                {"type": "input_json_delta", "partial_json": piece}
                for piece in _chunks(_dumps(block["input"]))
            ]
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": usage,
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return _sse(events)


def _chat(req: dict, ans: Answer, in_tokens: int) -> _Response:
    model = req.get("model") or DEFAULT_MODEL
    cid = _id("chatcmpl-")
    created = int(time.time())
    calls = [
        {
            "id": _id("call_"),
            "type": "function",
            "function": {"name": c["tool"], "arguments": _dumps(c["input"])},
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
            "content": ans.text if (ans.text or not calls) else None,
            "refusal": None,
        }
        if calls:
            message["tool_calls"] = calls
        return _json_response(
            {
                "id": cid,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [
                    {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
                ],
                "usage": usage,
            }
        )
    include_usage = bool((req.get("stream_options") or {}).get("include_usage"))

    def chunk(delta: dict, finish_reason: str | None = None) -> dict:
        obj: dict[str, Any] = {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [
                {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            ],
        }
        if include_usage:
            obj["usage"] = None
        return obj

    events: list[tuple[str | None, Any]] = [
        (None, chunk({"role": "assistant", "content": "", "refusal": None}))
    ]
    for piece in _chunks(ans.text):
        events.append((None, chunk({"content": piece})))
    for index, call in enumerate(calls):
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        events.append((None, chunk({"tool_calls": [head]})))
        for piece in _chunks(call["function"]["arguments"]):
            events.append(
                (None, chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}))
            )
    events.append((None, chunk({}, finish)))
    if include_usage:
        events.append(
            (
                None,
                {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [],
                    "usage": usage,
                },
            )
        )
    events.append((None, "[DONE]"))
    return _sse(events)


def _responses(req: dict, ans: Answer, in_tokens: int) -> _Response:
    model = req.get("model") or DEFAULT_MODEL
    rid = _id("resp_", 16)
    out_tokens = ans.output_tokens()
    base: dict[str, Any] = {
        "id": rid,
        "object": "response",
        "created_at": int(time.time()),
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": req.get("instructions"),
        "max_output_tokens": req.get("max_output_tokens"),
        "model": model,
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
    items: list[dict] = []
    if ans.text or not ans.calls:
        items.append(
            {
                "id": _id("msg_", 16),
                "type": "message",
                "status": "completed",
                "role": "assistant",
                "content": [
                    {"type": "output_text", "text": ans.text, "annotations": [], "logprobs": []}
                ],
            }
        )
    for call in ans.calls:
        item = {
            "id": _id("fc_", 16),
            "type": "function_call",
            "status": "completed",
            "call_id": _id("call_"),
            "name": call["tool"],
            "arguments": _dumps(call["input"]),
        }
        if call.get("namespace"):
            item["namespace"] = call["namespace"]
        items.append(item)
    usage = {
        "input_tokens": in_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": out_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": in_tokens + out_tokens,
    }
    done = {**base, "status": "completed", "output": items, "usage": usage}
    if not req.get("stream"):
        return _json_response(done)

    events: list[tuple[str | None, Any]] = []

    def emit(kind: str, **fields: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": len(events), **fields}))

    emit("response.created", response=base)
    emit("response.in_progress", response=base)
    for out_index, item in enumerate(items):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            emit(
                "response.output_item.added",
                output_index=out_index,
                item={**item, "status": "in_progress", "content": []},
            )
            emit(
                "response.content_part.added",
                item_id=item["id"],
                output_index=out_index,
                content_index=0,
                part={"type": "output_text", "text": "", "annotations": [], "logprobs": []},
            )
            for piece in _chunks(text):
                emit(
                    "response.output_text.delta",
                    item_id=item["id"],
                    output_index=out_index,
                    content_index=0,
                    delta=piece,
                    logprobs=[],
                )
            emit(
                "response.output_text.done",
                item_id=item["id"],
                output_index=out_index,
                content_index=0,
                text=text,
                logprobs=[],
            )
            emit(
                "response.content_part.done",
                item_id=item["id"],
                output_index=out_index,
                content_index=0,
                part=item["content"][0],
            )
        else:
            emit(
                "response.output_item.added",
                output_index=out_index,
                item={**item, "status": "in_progress", "arguments": ""},
            )
            for piece in _chunks(item["arguments"]):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=out_index,
                    delta=piece,
                )
            emit(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=out_index,
                name=item["name"],
                arguments=item["arguments"],
            )
        emit("response.output_item.done", output_index=out_index, item=item)
    emit("response.completed", response=done)
    return _sse(events)


def _gemini(ans: Answer, in_tokens: int, model: str, method: str, sse: bool) -> _Response:
    out_tokens = ans.output_tokens()
    usage = {
        "promptTokenCount": in_tokens,
        "candidatesTokenCount": out_tokens,
        "totalTokenCount": in_tokens + out_tokens,
    }
    rid = _id("", 8)

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
        parts = ([{"text": ans.text}] if ans.text or not call_parts else []) + call_parts
        return _json_response(chunk(parts, True))
    pieces = _chunks(ans.text) or ([""] if not call_parts else [])
    chunks = [chunk([{"text": p}], False) for p in pieces]
    if call_parts:
        chunks.append(chunk(call_parts, True))
    else:
        last = chunks.pop()
        chunks.append(chunk(last["candidates"][0]["content"]["parts"], True))
    if sse:
        return _sse([(None, c) for c in chunks])
    return _json_response(chunks)


# --------------------------------------------------------------------------- request analysis


# --------------------------------------------------------------------------- server


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "BatonScriptedServer/1"
    sys_version = ""
    timeout = 120
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet by design
        pass

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data += self.rfile.read(size)
                self.rfile.readline()
        else:
            data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if (self.headers.get("Content-Encoding") or "").lower() == "gzip":
            import gzip

            data = gzip.decompress(data)
        return data

    def _send(self, resp: _Response, head_only: bool = False) -> None:
        self.send_response(resp.status)
        self.send_header("Content-Type", resp.content_type)
        self.send_header("Content-Length", str(len(resp.body)))
        for key, value in resp.headers.items():
            self.send_header(key, value)
        self.end_headers()
        if not head_only:
            self.wfile.write(resp.body)
            self.wfile.flush()

    def _handle(self) -> None:
        owner = self.server.owner
        raw = b""
        if self.command in ("POST", "PUT", "PATCH"):
            raw = self._read_body()
        record: dict[str, Any] = {
            "time": time.time(),
            "method": self.command,
            "path": self.path,
            "headers": {
                k: ("<redacted>" if k in _SECRET_HEADERS else self.headers[k])
                for k in _LOGGED_HEADERS
                if self.headers.get(k) is not None
            },
            "json": None,
            "protocol": None,
            "stream": False,
            "turn": None,
            "side": None,
            "status": None,
        }
        try:
            resp = owner._dispatch(self.command, self.path, raw, record)
        except Exception as exc:  # a broken script or request must not kill the server
            resp = _json_response({"error": {"message": f"scripted server error: {exc}"}}, 500)
        record["status"] = resp.status
        owner._record(record)
        self._send(resp, head_only=self.command == "HEAD")

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = _handle


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: ScriptedServer

    def __init__(self, *args: Any, **kwargs: Any):
        self._conns: set = set()
        self._conns_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._conns_lock:
            self._conns.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._conns_lock:
            self._conns.discard(request)
        super().shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # a client went away or a kept-alive connection idled out
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Drop kept-alive client connections so nothing is served after stop()."""
        import socket

        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class ScriptedServer:
    """Replays ``turns`` to whichever client asks; see the module docstring for the format."""

    def __init__(
        self,
        turns: list[dict],
        *,
        log_path: Path | None = None,
        side_text: str = "Baton task",
        port: int = 0,
    ):
        self.script = Script(turns, side_text)
        self.log_path = Path(log_path) if log_path is not None else None
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._want_port = port
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> ScriptedServer:
        if self._httpd is not None:
            return self
        httpd = _HTTPServer((HOST, self._want_port), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True,
            name=f"baton-scripted-server-{self.port}",
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.shutdown()
        httpd.server_close()
        httpd.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- state

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not started")
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    @property
    def side_text(self) -> str:
        return self.script.side_text

    @property
    def remaining(self) -> list[dict]:
        """The turns not served yet (a copy)."""
        return self.script.remaining

    @property
    def served(self) -> int:
        """How many turns have been served."""
        return self.script.served

    def add_turns(self, turns: list[dict]) -> None:
        """Append turns to the end of the script (e.g. between a run and its resume)."""
        self.script.add(turns)

    def model_requests(self) -> list[dict]:
        """The logged requests that consumed a turn or hit the exhausted script."""
        with self._lock:
            return [r for r in self.requests if r["protocol"] and r["side"] in (None, "exhausted")]

    # -- internals

    def _record(self, record: dict) -> None:
        with self._lock:
            self.requests.append(record)
            if self.log_path is not None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(_dumps(record) + "\n")

    def _take_turn(self, protocol: str, req: dict, record: dict) -> Answer:
        answer, record["turn"], record["side"] = self.script.take(protocol, req)
        return answer

    def _dispatch(self, method: str, target: str, raw: bytes, record: dict) -> _Response:
        parts = urlsplit(target)
        path = parts.path.rstrip("/") or "/"
        if method in ("GET", "HEAD"):
            record["side"] = "probe"
            return _get(path)
        if method != "POST":
            record["side"] = "unsupported"
            return _json_response({"error": {"message": f"method {method} not supported"}}, 405)
        try:
            req = json.loads(raw.decode("utf-8") or "{}")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            record["side"] = "bad-json"
            return _json_response({"error": {"message": f"request body is not JSON: {exc}"}}, 400)
        record["json"] = req
        if not isinstance(req, dict):
            record["side"] = "bad-json"
            return _json_response({"error": {"message": "request body is not a JSON object"}}, 400)
        record["stream"] = bool(req.get("stream"))
        in_tokens = len(raw) // 4

        if path == "/v1/messages/count_tokens":
            record["protocol"], record["side"] = "anthropic", "count_tokens"
            return _json_response({"input_tokens": in_tokens})
        protocol = _PATHS.get(path)
        if protocol is not None:
            record["protocol"] = protocol
            if protocol == "chat" and is_title_request(req):
                record["side"] = "title"
                return _chat(req, Answer(text=self.side_text), in_tokens)
            ans = self._take_turn(protocol, req, record)
            if ans.error:
                return _error_response(protocol, ans)
            return _ENCODERS[protocol](req, ans, in_tokens)

        m = _GEMINI_PATH.match(path)
        if m is None:
            record["side"] = "unknown-path"
            return _json_response({"error": {"message": f"not found: {path}"}}, 404)
        record["protocol"] = "gemini"
        model, gmethod = m.group("model"), m.group("method")
        record["stream"] = gmethod == "streamGenerateContent"
        if gmethod == "countTokens":
            record["side"] = "count_tokens"
            return _json_response({"totalTokens": in_tokens})
        if gmethod not in ("generateContent", "streamGenerateContent"):
            record["side"] = "unsupported"
            error = {"code": 404, "message": f"unsupported: {gmethod}", "status": "NOT_FOUND"}
            return _json_response({"error": error}, 404)
        schema = gemini_json_schema(req)
        if schema is not None:
            record["side"] = "json-mode"
            ans = Answer(text=_dumps(fill_schema(schema)))
        else:
            ans = self._take_turn("gemini", req, record)
            if ans.error:
                return _error_response("gemini", ans)
        sse = record["stream"] and "sse" in parse_qs(parts.query).get("alt", [])
        return _gemini(ans, in_tokens, model, gmethod, sse)


_PATHS = {
    "/v1/messages": "anthropic",
    "/v1/chat/completions": "chat",
    "/chat/completions": "chat",
    "/v1/responses": "responses",
    "/responses": "responses",
}
_ENCODERS = {"anthropic": _anthropic, "chat": _chat, "responses": _responses}


def _get(path: str) -> _Response:
    """GET/HEAD: the liveness probe and model lists; never a turn."""
    name = "Scripted model (not a model)"
    if path in ("/v1/models", "/models"):
        model = {
            "id": DEFAULT_MODEL,
            "object": "model",
            "type": "model",
            "created": 0,
            "created_at": "1970-01-01T00:00:00Z",
            "display_name": name,
            "owned_by": "baton-script",
        }
        return _json_response(
            {
                "object": "list",
                "data": [model],
                "has_more": False,
                "first_id": DEFAULT_MODEL,
                "last_id": DEFAULT_MODEL,
            }
        )
    if re.fullmatch(r"/(?:v1|v1beta|v1alpha)/models", path):
        model = {
            "name": f"models/{DEFAULT_MODEL}",
            "displayName": name,
            "supportedGenerationMethods": ["generateContent", "streamGenerateContent"],
        }
        return _json_response({"models": [model]})
    if path == "/":
        text = b"Baton scripted model server: replays a script, not a model.\n"
        return _Response(200, text, "text/plain; charset=utf-8")
    return _json_response({"error": {"message": f"not found: {path}"}}, 404)


# --------------------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    import argparse  # only the CLI needs it; importing the server stays light

    parser = argparse.ArgumentParser(
        prog="python -m baton_tui.demo.server",
        description="Baton's scripted model server (replays a script; not a model).",
    )
    parser.add_argument("--script", required=True, type=Path, help="JSON script of turns")
    parser.add_argument("--log", type=Path, help="append every request as JSON lines here")
    parser.add_argument("--port-file", type=Path, help="write the port number here")
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    parser.add_argument("--side-text", default=None, help="text for side requests")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Serve a script file until SIGTERM/SIGINT; the port is the first line on stdout."""
    import signal
    import sys

    args = build_parser().parse_args(argv)
    turns, side_text = load_script(args.script)
    server = ScriptedServer(
        turns,
        log_path=args.log,
        side_text=args.side_text or side_text or "Baton task",
        port=args.port,
    )
    stop = threading.Event()

    def _on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    server.start()
    try:
        if args.port_file is not None:
            tmp = args.port_file.with_name(args.port_file.name + ".tmp")
            tmp.write_text(f"{server.port}\n", encoding="utf-8")
            os.replace(tmp, args.port_file)
        sys.stdout.write(f"{server.port}\n")
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

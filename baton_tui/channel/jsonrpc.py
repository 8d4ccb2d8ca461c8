"""A small JSON-RPC 2.0 server over newline-delimited JSON (the MCP stdio transport).

One message per line, UTF-8, no embedded newlines. Requests are handled one at a time, in
order; notifications (messages without an `id`) never get a reply, and unknown ones are
ignored. Standard library only, so a server built on it starts in milliseconds.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, BinaryIO

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

Handler = Callable[[dict], Any]


class RpcError(Exception):
    """Raised by a handler to answer its request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


def _error(id_: Any, code: int, message: str, data: Any = None) -> dict:
    error: dict = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id_, "error": error}


class Server:
    """Dispatches requests to `methods` and notifications to `notifications` by method name."""

    def __init__(self, methods: dict[str, Handler],
                 notifications: dict[str, Handler] | None = None):
        self.methods = methods
        self.notifications = notifications or {}

    def handle(self, message: Any) -> dict | None:
        """The reply to one decoded message, or None when it gets none."""
        if not isinstance(message, dict):
            return _error(None, INVALID_REQUEST, "Invalid Request: expected a JSON object")
        method = message.get("method")
        if "id" not in message:
            if isinstance(method, str) and method in self.notifications:
                params = message.get("params")
                try:
                    self.notifications[method](params if isinstance(params, dict) else {})
                except Exception:  # a notification has nobody to tell
                    pass
            return None  # unknown notifications, and responses to requests we never sent
        id_ = message["id"]
        if not isinstance(method, str):
            if "result" in message or "error" in message:
                return None  # a response: this server sends no requests, so nothing to match
            return _error(id_, INVALID_REQUEST, "Invalid Request: no method")
        handler = self.methods.get(method)
        if handler is None:
            return _error(id_, METHOD_NOT_FOUND, f"Method not found: {method}")
        params = message.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _error(id_, INVALID_PARAMS, "Invalid params: expected an object")
        try:
            result = handler(params)
        except RpcError as exc:
            return _error(id_, exc.code, exc.message, exc.data)
        except Exception as exc:
            return _error(id_, INTERNAL_ERROR, f"Internal error: {type(exc).__name__}: {exc}")
        return {"jsonrpc": "2.0", "id": id_, "result": result}

    def handle_line(self, line: bytes | str) -> dict | list | None:
        """The reply to one line of the transport (a batch gets a list), or None."""
        if isinstance(line, bytes):
            try:
                line = line.decode("utf-8")
            except UnicodeDecodeError:
                return _error(None, PARSE_ERROR, "Parse error: not UTF-8")
        line = line.strip()
        if not line:
            return None
        try:
            message = json.loads(line)
        except ValueError as exc:
            return _error(None, PARSE_ERROR, f"Parse error: {exc}")
        if isinstance(message, list):  # a batch (allowed by the 2025-03-26 revision)
            if not message:
                return _error(None, INVALID_REQUEST, "Invalid Request: empty batch")
            replies = [r for r in map(self.handle, message) if r is not None]
            return replies or None
        return self.handle(message)

    def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> None:
        """Answer lines from `stdin` until it ends."""
        for line in iter(stdin.readline, b""):
            reply = self.handle_line(line)
            if reply is None:
                continue
            data = json.dumps(reply, separators=(",", ":"))
            stdout.write(data.encode("utf-8") + b"\n")
            stdout.flush()

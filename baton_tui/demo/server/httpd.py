"""The HTTP layer: a threaded stdlib server whose handler reads a request, logs it, answers it.

Kept apart from the protocols because this is where the socket details live: chunked and
gzipped request bodies, keep-alive connections that must be dropped on stop, clients that go
away mid-answer, and the redaction of secret headers in the request log.
"""

from __future__ import annotations

import gzip
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

from baton_tui.demo.server.wire import Response, json_response


class Owner(Protocol):
    """What the server answers for (`scripted.ScriptedServer`, which builds on this module):
    it decides each request's response and keeps its log record."""

    def _dispatch(self, method: str, target: str, raw: bytes, record: dict[str, Any]) -> Response: ...

    def _record(self, record: dict[str, Any]) -> None: ...


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


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "BatonScriptedServer/1"
    sys_version = ""
    timeout = 120
    server: HTTPServer

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
            data = gzip.decompress(data)
        return data

    def _send(self, resp: Response, head_only: bool = False) -> None:
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
            resp = json_response({"error": {"message": f"scripted server error: {exc}"}}, 500)
        record["status"] = resp.status
        owner._record(record)
        self._send(resp, head_only=self.command == "HEAD")

    do_GET = do_POST = do_HEAD = do_PUT = do_DELETE = do_PATCH = _handle


class HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: Owner

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
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # a client went away or a kept-alive connection idled out
        super().handle_error(request, client_address)

    def close_connections(self) -> None:
        """Drop kept-alive client connections so nothing is served after stop()."""
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

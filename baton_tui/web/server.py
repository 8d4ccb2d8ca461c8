"""The page and the relay of `baton web`: an HTTP server on 127.0.0.1 that gives the web
client only with the token of the URL it printed, and relays each WebSocket on `/rpc` (same
token, the page's own origin only) to a `baton serve --stdio` of its own — the same process
the VS Code extension talks to, so both hosts speak exactly one protocol."""

from __future__ import annotations

import hmac
import secrets
import socket
import subprocess
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from pathlib import Path
from typing import IO, Callable
from urllib.parse import parse_qs, urlsplit

from baton_tui.web import websocket as ws

STATIC = {"/browser.js": ("browser.js", "text/javascript; charset=utf-8"),
          "/view.css": ("view.css", "text/css; charset=utf-8")}
SECURITY = {"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; "
                                       "connect-src 'self'; img-src 'self' data:",
            "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store"}


def serve_argv() -> list[str]:
    """`baton serve --stdio` on this very Baton: the single-file binary is itself `baton`;
    from source, this interpreter runs the package (`-P`: never a `baton_tui` of the folder)."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "serve", "--stdio"]
    return [sys.executable, "-P", "-m", "baton_tui", "serve", "--stdio"]


def static_file(name: str) -> bytes:
    return resources.files("baton_tui.web").joinpath("static", name).read_bytes()


class WebServer(ThreadingHTTPServer):
    """One `baton web`: its token, its folder, and the `baton serve` processes it relays to."""

    daemon_threads = True

    def __init__(self, port: int, cwd: Path, token: str | None = None,
                 argv: Callable[[], list[str]] = serve_argv):
        self.token = token or secrets.token_urlsafe(24)
        self.cwd = cwd
        self.argv = argv
        self.children: set[subprocess.Popen[bytes]] = set()
        self.lock = threading.Lock()
        super().__init__(("127.0.0.1", port), Handler)

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def origins(self) -> set[str]:
        return {f"http://127.0.0.1:{self.port}", f"http://localhost:{self.port}"}

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def stop_children(self) -> None:
        with self.lock:
            children = list(self.children)
        for child in children:
            _end(child)


def _end(child: "subprocess.Popen[bytes]") -> None:
    if child.poll() is None:
        try:
            if child.stdin:
                child.stdin.close()
        except OSError:
            pass
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.terminate()
            try:
                child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                child.kill()


class Handler(BaseHTTPRequestHandler):
    server: WebServer
    protocol_version = "HTTP/1.1"
    server_version = "baton-web"

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 — the base's name
        """Quiet: the first line of standard output is the URL, and the rest is not a log."""

    def _refuse(self, status: HTTPStatus, text: str) -> None:
        body = (text + "\n").encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _send(self, body: bytes, kind: str) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in SECURITY.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _token(self) -> str | None:
        query = parse_qs(urlsplit(self.path).query)
        if "token" in query:
            return query["token"][0]
        auth = self.headers.get("Authorization", "")
        return auth[7:] if auth.startswith("Bearer ") else None

    def do_GET(self) -> None:  # noqa: N802 — the base's name
        path = urlsplit(self.path).path
        if path in STATIC:
            name, kind = STATIC[path]
            return self._send(static_file(name), kind)
        if not self.server.token_ok(self._token()):
            return self._refuse(HTTPStatus.FORBIDDEN, "baton web: open the URL `baton web` "
                                "printed (it carries the token)")
        if path == "/":
            return self._send(static_file("index.html"), "text/html; charset=utf-8")
        if path == "/rpc":
            return self._relay()
        return self._refuse(HTTPStatus.NOT_FOUND, "baton web: no such page")

    def _relay(self) -> None:
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self.server.origins():
            return self._refuse(HTTPStatus.FORBIDDEN, f"baton web: origin {origin} refused")
        key = self.headers.get("Sec-WebSocket-Key")
        if self.headers.get("Upgrade", "").lower() != "websocket" or not key:
            return self._refuse(HTTPStatus.BAD_REQUEST, "baton web: /rpc is a WebSocket")
        try:
            child = subprocess.Popen(self.server.argv(), cwd=self.server.cwd, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        except OSError as err:
            return self._refuse(HTTPStatus.INTERNAL_SERVER_ERROR, f"baton web: {err}")
        self.send_response(HTTPStatus.SWITCHING_PROTOCOLS)
        self.send_header("Upgrade", "websocket")
        self.send_header("Connection", "Upgrade")
        self.send_header("Sec-WebSocket-Accept", ws.accept_key(key))
        self.end_headers()
        self.wfile.flush()
        self.close_connection = True
        with self.server.lock:
            self.server.children.add(child)
        writing = threading.Lock()

        def send(opcode: int, payload: bytes) -> None:
            with writing:
                self.wfile.write(ws.frame(opcode, payload))
                self.wfile.flush()

        pump = threading.Thread(target=_pump, args=(child.stdout, send), daemon=True)
        pump.start()
        try:
            assert child.stdin is not None
            while True:
                message = ws.read_message(self.rfile, send)
                child.stdin.write(message.replace("\n", " ").encode() + b"\n")
                child.stdin.flush()
        except (ws.Closed, OSError, ValueError):
            pass
        finally:
            try:
                send(ws.CLOSE, b"")
            except OSError:
                pass
            _end(child)
            with self.server.lock:
                self.server.children.discard(child)
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def _pump(stdout: "IO[bytes] | None", send: Callable[[int, bytes], None]) -> None:
    """`baton serve`'s lines, each one text frame, until it ends."""
    if stdout is None:
        return
    try:
        for line in stdout:
            if line.strip():
                send(ws.TEXT, line.rstrip(b"\r\n"))
        send(ws.CLOSE, b"")
    except OSError:
        pass


def run(port: int, cwd: Path, out: IO[str]) -> int:
    """Serve until interrupted; the URL is the first line of `out`."""
    server = WebServer(port, cwd)
    print(server.url, file=out, flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        return 130
    finally:
        server.server_close()
        server.stop_children()
    return 0


__all__ = ["WebServer", "run", "serve_argv"]

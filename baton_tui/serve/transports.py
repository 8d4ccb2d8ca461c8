"""The ways in: stdio (one client, the process that started us), a Unix socket (0600), and a
WebSocket on loopback (a token on every connection, the `Origin` checked).

Each turns bytes into lines (or messages) for a `Client` and its answers back into bytes;
everything else is the hub's. A line longer than the limit is answered with one error and
skipped to its end, never buffered whole.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import secrets
import stat
import sys
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import parse_qs, urlsplit

from baton_tui.serve import wire
from baton_tui.serve.hub import MAX_LINE, Client, Hub

if TYPE_CHECKING:
    from websockets.asyncio.server import Server, ServerConnection
    from websockets.http11 import Request, Response

CHUNK = 1 << 16


async def pump_lines(reader: asyncio.StreamReader, client: Client) -> None:
    """Feed `client` one line at a time from `reader` until it ends."""
    buf = bytearray()
    skipping = False
    while True:
        try:
            chunk = await reader.read(CHUNK)
        except (ConnectionError, OSError):
            break
        if not chunk:
            break
        buf += chunk
        while True:
            end = buf.find(b"\n")
            if end < 0:
                break
            line = bytes(buf[:end])
            del buf[:end + 1]
            if skipping:
                skipping = False  # the end of the over-long line: answered when it began
                continue
            await client.receive(line)
        if len(buf) > MAX_LINE and not skipping:
            skipping = True
            client.answer(None, error=wire.ProtocolError(
                wire.INVALID_REQUEST, f"request too large (over {MAX_LINE} bytes): skipped to its end"))
        if skipping:
            buf.clear()
    if buf.strip() and not skipping:
        await client.receive(bytes(buf))


# stdio -------------------------------------------------------------------------------------------
async def serve_stdio(hub: Hub) -> None:
    """The client is whoever started us: requests on stdin, answers on stdout. Anything else
    that prints (a library's warning) goes to stderr, never into the protocol."""
    loop = asyncio.get_running_loop()
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    reader = asyncio.StreamReader(limit=MAX_LINE * 2)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    writer = _Writer(out)

    async def send(line: str) -> None:
        await writer.write(line.encode("utf-8", "replace") + b"\n")

    client = Client(hub, send, "stdio")
    await pump_lines(reader, client)
    await client.settle()
    await client.finish()


class _Writer:
    """Bytes to stdout: through the event loop for a pipe, on a thread for a file or a tty."""

    def __init__(self, out: Any):
        self.out = out
        self.pipe: asyncio.StreamWriter | None = None
        mode = os.fstat(out.fileno()).st_mode
        self.is_pipe = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)

    async def write(self, data: bytes) -> None:
        loop = asyncio.get_running_loop()
        if self.is_pipe and self.pipe is None:
            transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, self.out)
            self.pipe = asyncio.StreamWriter(transport, protocol, None, loop)
        if self.pipe is not None:
            self.pipe.write(data)
            await self.pipe.drain()
        else:
            await loop.run_in_executor(None, self.out.write, data)


# Unix socket -------------------------------------------------------------------------------------
async def serve_socket(hub: Hub, path: Path, ready: Callable[[str], None]) -> None:
    """Clients connect to `path`, a socket only its owner may open (0600)."""
    if path.is_socket():
        if await _answers(path):
            raise wire.ProtocolError(wire.CONFLICT, f"{path}: another server listens there")
        path.unlink()  # a stale socket a killed server left
    elif path.exists():
        raise wire.ProtocolError(wire.CONFLICT, f"{path} exists and is not a socket: not replaced")

    async def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        async def send(line: str) -> None:
            writer.write(line.encode("utf-8", "replace") + b"\n")
            await writer.drain()

        client = Client(hub, send, "socket")
        try:
            await pump_lines(reader, client)
        finally:
            client.close()
            writer.close()

    old = os.umask(0o177)
    try:
        server = await asyncio.start_unix_server(connected, path=str(path), limit=MAX_LINE * 2)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    ready(f"baton serve: listening on {path}")
    try:
        async with server:
            await server.serve_forever()
    finally:
        try:
            path.unlink()
        except OSError:
            pass


async def _answers(path: Path) -> bool:
    try:
        _, writer = await asyncio.open_unix_connection(str(path))
    except OSError:
        return False
    writer.close()
    return True


# WebSocket ---------------------------------------------------------------------------------------
HttpHandler = Callable[["ServerConnection", "Request"], "Response | None"]


def parse_listen(url: str, allow_remote: bool) -> tuple[str, int]:
    """`ws://HOST:PORT` as (host, port); a host beyond loopback only with `allow_remote`."""
    parts = urlsplit(url)
    if parts.scheme != "ws" or not parts.hostname or parts.port is None:
        raise wire.ProtocolError(wire.BAD_PARAMS, f"--listen {url!r}: expected ws://127.0.0.1:PORT")
    host = parts.hostname
    if not allow_remote and not is_loopback(host):
        raise wire.ProtocolError(wire.BAD_PARAMS, (
            f"--listen {url}: {host} is reachable beyond this machine; Baton listens on loopback "
            "only (ws://127.0.0.1:PORT) — use an SSH port forward, or --allow-remote if you "
            "really mean it"))
    return host, parts.port


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def new_token(state_dir: Path) -> str:
    """A fresh token for this server, also written 0600 under Baton's state directory (for a
    client started later on this machine)."""
    token = secrets.token_urlsafe(24)
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / "serve-token"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(token + "\n")
    os.chmod(path, 0o600)
    return token


def origin_allowed(origin: str | None, port: int) -> bool:
    """No Origin (a program, not a page), this server's own page, or an editor's webview."""
    if origin is None:
        return True
    if origin.startswith(("vscode-webview://", "vscode-file://")):
        return True
    return origin in (f"http://127.0.0.1:{port}", f"http://localhost:{port}", f"http://[::1]:{port}")


async def serve_websocket(hub: Hub, host: str, port: int, token: str,
                          ready: Callable[[str, int], None],
                          http: HttpHandler | None = None) -> None:
    """Clients connect with `?token=…` (or `Authorization: Bearer …`); `http` answers plain
    HTTP requests on the same port (`baton web` serves its page so)."""
    from websockets.asyncio.server import serve
    from websockets.exceptions import ConnectionClosed

    bound: dict[str, int] = {}

    def check(connection: "ServerConnection", request: "Request") -> "Response | None":
        upgrade = request.headers.get("Upgrade", "").lower() == "websocket"
        if not upgrade:
            if http is not None:
                return http(connection, request)
            return connection.respond(HTTPStatus.UPGRADE_REQUIRED, "a WebSocket endpoint\n")
        if not origin_allowed(request.headers.get("Origin"), bound.get("port", port)):
            return connection.respond(HTTPStatus.FORBIDDEN, "origin not allowed\n")
        given = parse_qs(urlsplit(request.path).query).get("token", [""])[0]
        auth = request.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            given = auth.removeprefix("Bearer ").strip()
        if not secrets.compare_digest(given.encode(), token.encode()):
            return connection.respond(HTTPStatus.UNAUTHORIZED, "a valid token is required "
                                      "(?token=… as printed by baton serve)\n")
        return None

    async def connected(websocket: "ServerConnection") -> None:
        async def send(line: str) -> None:
            await websocket.send(line)

        client = Client(hub, send, "websocket")
        try:
            async for message in websocket:
                await client.receive(message)
        except ConnectionClosed:
            pass
        finally:
            client.close()

    server: Server
    async with serve(connected, host, port, process_request=check, max_size=16 * MAX_LINE,
                     max_queue=64, compression=None) as server:
        bound["port"] = next(iter(server.sockets)).getsockname()[1]
        ready(host, bound["port"])
        await server.serve_forever()

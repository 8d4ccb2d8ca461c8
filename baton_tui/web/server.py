"""The page and the protocol of `baton web`, on one port of 127.0.0.1: the protocol's own
WebSocket transport (`serve.transports.serve_websocket`: a token on every connection, the
page's origin only) with a hub of its own, and on the same port the page — given only with
the token of the URL printed — and its script and style."""

from __future__ import annotations

import asyncio
import secrets
import signal
from http import HTTPStatus
from importlib import resources
from typing import IO, TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit

from baton_tui import api

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection
    from websockets.http11 import Request, Response

PAGES = {"/": ("index.html", "text/html; charset=utf-8"),
         "/browser.js": ("browser.js", "text/javascript; charset=utf-8"),
         "/view.css": ("view.css", "text/css; charset=utf-8")}
SECURITY = (("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; "
                                        "connect-src 'self'; img-src 'self' data:"),
            ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-store"))


def static_file(name: str) -> bytes:
    return resources.files("baton_tui.web").joinpath("static", name).read_bytes()


def page_handler(token: str):  # type: ignore[no-untyped-def]  # websockets' HttpHandler
    """Plain HTTP on the protocol's port: the page with the token, its script and style."""
    from websockets.datastructures import Headers
    from websockets.http11 import Response

    def respond(status: HTTPStatus, kind: str, body: bytes) -> "Response":
        headers = Headers([("Content-Type", kind), ("Content-Length", str(len(body))), *SECURITY])
        return Response(status.value, status.phrase, headers, body)

    def handle(connection: "ServerConnection", request: "Request") -> "Response":
        parts = urlsplit(request.path)
        page = PAGES.get(parts.path)
        if page is None:
            return respond(HTTPStatus.NOT_FOUND, "text/plain; charset=utf-8", b"no such page\n")
        if parts.path == "/":
            given = parse_qs(parts.query).get("token", [""])[0]
            if not secrets.compare_digest(given.encode(), token.encode()):
                return respond(HTTPStatus.FORBIDDEN, "text/plain; charset=utf-8",
                               b"baton web: open the URL `baton web` printed (it carries the "
                               b"token)\n")
        name, kind = page
        return respond(HTTPStatus.OK, kind, static_file(name))

    return handle


def run(port: int, out: IO[str]) -> int:
    """Serve the repository of the working directory until interrupted; the URL to open is
    the first line of `out`."""
    from baton_tui.serve.hub import Hub
    from baton_tui.serve.transports import serve_websocket

    token = secrets.token_urlsafe(24)
    session = api.Session()
    hub = Hub(session, ["websocket"])

    def ready(host: str, bound: int) -> None:
        print(f"http://127.0.0.1:{bound}/?token={token}", file=out, flush=True)

    async def main() -> None:
        await hub.start()
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(signum, stop.set)
        job = asyncio.create_task(serve_websocket(hub, "127.0.0.1", port, token, ready,
                                                  http=page_handler(token)))
        waiting = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({job, waiting}, return_when=asyncio.FIRST_COMPLETED)
        job.cancel()
        waiting.cancel()
        await asyncio.wait({job}, timeout=3)  # pages told the server is going
        await hub.stop()
        if job in done and job.exception() is not None:
            raise job.exception()  # type: ignore[misc]

    # Not `asyncio.run`: it would wait on every task it cancels, and a page that never answers
    # the WebSocket's closing handshake would keep an interrupted `baton web` running.
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(main())
    finally:
        session.close()
    return 0

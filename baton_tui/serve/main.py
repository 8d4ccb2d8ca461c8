"""`baton serve`: start the hub on one transport and serve until the client leaves (stdio) or
the process is interrupted (socket, WebSocket)."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

from baton_tui import api
from baton_tui.serve import wire
from baton_tui.serve.hub import Hub


def serve(*, socket: str | None = None, listen: str | None = None, allow_remote: bool = False) -> int:
    """Serve the repository of the working directory; the exit status."""
    from baton_tui.serve import transports

    try:
        host_port = transports.parse_listen(listen, allow_remote) if listen else None
    except wire.ProtocolError as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
        return 2
    session = api.Session()
    kind = "websocket" if listen else "socket" if socket else "stdio"
    hub = Hub(session, [kind])

    def said(line: str) -> None:
        print(line, flush=True)

    async def main() -> None:
        await hub.start()
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            loop.add_signal_handler(signum, stop.set)
        if host_port is not None:
            host, port = host_port
            token = transports.new_token(api.state_dir())

            def ready(bound_host: str, bound_port: int) -> None:
                said(f"ws://{bound_host}:{bound_port}/?token={token}")

            job = asyncio.create_task(transports.serve_websocket(hub, host, port, token, ready))
        elif socket:
            job = asyncio.create_task(transports.serve_socket(hub, Path(socket), said))
        else:
            job = asyncio.create_task(transports.serve_stdio(hub))
        waiting = asyncio.create_task(stop.wait())
        done, _ = await asyncio.wait({job, waiting}, return_when=asyncio.FIRST_COMPLETED)
        job.cancel()
        waiting.cancel()
        await asyncio.gather(job, waiting, return_exceptions=True)
        await hub.stop()
        if job in done and not job.cancelled() and job.exception() is not None:
            raise job.exception()  # type: ignore[misc]

    try:
        asyncio.run(main())
    except wire.ProtocolError as exc:
        print(f"baton: {exc.message}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"baton: cannot serve: {exc.strerror or exc}", file=sys.stderr)
        return 2
    finally:
        session.close()
    return 0

"""`ScriptedServer`, the public face: start it, point an agent at `url`, read `requests`.

It owns the script (`baton_tui.demo.script.Script`), the request log (in memory and,
optionally, as JSON lines in `log_path`) and the HTTP server's lifecycle; `routes` decides
what each request gets.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Self

from baton_tui.demo.script import Answer, Script
from baton_tui.demo.server import routes
from baton_tui.demo.server.httpd import Handler, HTTPServer
from baton_tui.demo.server.wire import Response, dumps

HOST = "127.0.0.1"


class ScriptedServer:
    """Replays ``turns`` to whichever client asks; see :mod:`baton_tui.demo.script` for the
    format and :mod:`baton_tui.demo.server` for the protocols."""

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
        self._httpd: HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        httpd = HTTPServer((HOST, self._want_port), Handler)
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

    # -- internals (called from the handler threads)

    def _record(self, record: dict) -> None:
        with self._lock:
            self.requests.append(record)
            if self.log_path is not None:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                with self.log_path.open("a", encoding="utf-8") as fh:
                    fh.write(dumps(record) + "\n")

    def _take_turn(self, protocol: str, req: dict, record: dict) -> Answer:
        answer, record["turn"], record["side"] = self.script.take(protocol, req)
        if answer.delay:  # this handler thread only: other requests are answered meanwhile
            time.sleep(answer.delay)
        return answer

    def _dispatch(self, method: str, target: str, raw: bytes, record: dict) -> Response:
        return routes.dispatch(self, method, target, raw, record)

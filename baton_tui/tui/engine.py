"""One thread that owns the engine's workspace: every engine command runs there.

SQLite connections belong to the thread that opened them, and engine commands must
never stall the event loop (a writer may hold the lock for a moment). So the App
submits `fn(ws, *args)` — a function of the façade — to this single thread and awaits
the result; commands are serialised, as they would be from one terminal.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from baton_tui import api

T = TypeVar("T")


class EngineThread:
    """Runs façade functions (`fn(ws, …)`) on a dedicated thread with its own workspace."""

    def __init__(self, ws: api.Workspace):
        self.ws = ws
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="baton-engine",
                                        initializer=self._open)

    def warm(self) -> None:
        """Open the thread's workspace now, not on the first command the person gives."""
        self._pool.submit(lambda: None)

    def _open(self) -> None:
        self._local.ws = api.sibling(self.ws)

    def _run(self, fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
        ws = self._local.ws
        ws.refresh_config()  # the person may have edited baton.toml since the last command
        return fn(ws, *args, **kwargs)

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Run `fn(ws, *args, **kwargs)` on the engine thread and await its result."""
        future = self._pool.submit(self._run, fn, args, kwargs)
        return await asyncio.wrap_future(future)

    def close(self) -> None:
        def _close() -> None:
            ws = getattr(self._local, "ws", None)
            if ws is not None:
                ws.close()

        self._pool.submit(_close)
        self._pool.shutdown(wait=False)

"""One thread that owns the engine's workspace: every engine command runs there.

SQLite connections belong to the thread that opened them, and engine commands must
never stall the event loop (a writer may hold the lock for a moment). So the App
submits `fn(ws, *args)` to this single thread and awaits the result; commands are
serialised, as they would be from one terminal.
"""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

from baton_tui.paths import RepoPaths
from baton_tui.workspace import Workspace

T = TypeVar("T")


class EngineThread:
    """Runs engine functions (`fn(ws, …)`) on a dedicated thread with its own Workspace."""

    def __init__(self, paths: RepoPaths):
        self.paths = paths
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="baton-engine",
                                        initializer=self._open)

    def _open(self) -> None:
        self._local.ws = Workspace(paths=self.paths)

    def _run(self, fn: Callable[..., T], args: tuple, kwargs: dict) -> T:
        return fn(self._local.ws, *args, **kwargs)

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

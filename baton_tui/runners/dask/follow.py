"""What the Dask runner knows of one attempt it follows, and what its job says on its topic.

A running job speaks as Dask worker events on a topic named after it (`node._tell`, typed as
`job.Heard`): the node that claimed it, its output, its progress reports, and every few
seconds its agent's changed files and CPU time. `Followed.hear` takes them on Dask's thread
(under the attempt's own lock); the conductor's loop takes them from there at its ticks.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from distributed import Future


# The agent's changed files on its worker, each with its size and modification time (what
# the supervisor compares to tell work from going round in circles).
Files = tuple[tuple[str, int, int], ...]


def _files(found: object) -> Files | None:
    """The changed files a node said: each `(path, size, mtime)` (Dask's events come back
    with tuples, or lists, depending on the way they came)."""
    if not isinstance(found, (list, tuple)):
        return None
    files = []
    for item in found:
        if isinstance(item, (list, tuple)) and len(item) == 3 and isinstance(item[0], str) \
                and all(isinstance(n, int) for n in item[1:]):
            files.append((item[0], int(item[1]), int(item[2])))
    return tuple(sorted(files))


@dataclass(eq=False)
class Followed:
    """One attempt on the cluster, as its runner follows it."""

    job: str
    future: Future[Any] | None
    log_path: str | None
    node: str | None = None
    exit: asyncio.Future[object] | None = None  # done when the job ends: wakes the loop
    gone_since: float | None = None   # its worker left the scheduler (monotonic)
    told: bool = False                # its node is recorded
    finished: bool = False            # its record is on the exchange
    streamed: set[int] = field(default_factory=set)  # node events recorded live
    last_stop: tuple[int, float] | None = None       # the last stop sent, and when
    # Written on Dask's thread (`hear`), read on the loop's: under `lock`.
    pending: bytearray = field(default_factory=bytearray)  # output not read by the follower
    progress: list[tuple[int, str]] = field(default_factory=list)  # reports to record
    files: Files | None = None        # its agent's changed files, last heard
    cpu: float | None = None          # its agent's CPU seconds, last heard
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hear(self, event: object) -> None:
        """One event on the job's topic (Dask hands `(time, message)`)."""
        message = event[1] if isinstance(event, tuple) and len(event) == 2 else event
        if not isinstance(message, dict):
            return
        node, text = message.get("node"), message.get("text")
        files, cpu = _files(message.get("files")), message.get("cpu")
        with self.lock:
            if isinstance(node, str) and node and self.node is None:
                self.node = node  # (recorded by the next `look`)
            progress = message.get("progress")
            if isinstance(progress, str):
                number = message.get("event")
                self.progress.append((number if isinstance(number, int) else 0, progress))
            if files is not None:
                self.files = files
            if isinstance(cpu, (int, float)):
                self.cpu = float(cpu)
            if isinstance(text, str) and text:
                data = text.encode("utf-8", "replace")
                self.pending += data
                if self.log_path:
                    with open(self.log_path, "ab") as log:
                        log.write(data)

    def take_output(self) -> bytes:
        if not self.pending:
            return b""
        with self.lock:
            chunk, self.pending = bytes(self.pending), bytearray()
        return chunk

    def take_progress(self) -> list[tuple[int, str]]:
        with self.lock:
            reports, self.progress = self.progress, []
        return reports

    def ended(self) -> bool:
        return self.finished or (self.future is not None and self.future.done())

    def wake(self) -> None:
        """Complete `exit` from any thread (on its loop's)."""
        future = self.exit
        if future is None:
            return

        def done() -> None:
            if not future.done():
                future.set_result(None)

        try:
            future.get_loop().call_soon_threadsafe(done)
        except RuntimeError:  # its loop is closed: nobody waits
            pass

"""The Dask runner's one connection to its scheduler: made on first use, made again after it
broke, not asked again too soon after it failed; and the few background calls a conductor
must not wait for on its loop.

`distributed`'s `Client` is synchronous here: its calls block (it runs its own event loop on
a thread of its own). The conductor's loop never calls it directly — starts and collects run
on worker threads (`asyncio.to_thread`), and what a tick asks for (a stop, the look for
finished records) runs on a thread of its own (`background`: named, a daemon — a conductor
ending never waits on a scheduler that stopped answering), so a slow scheduler or exchange
holds up that call, never the loop. (An asynchronous `Client` on the conductor's
loop would not remove a thread: the exchange's git transfers and the store block all the
same, and a `Client(asynchronous=True)` cannot be shared with the starts' worker threads.)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from baton_tui.core.errors import BatonError
from baton_tui.runners.dask import cluster
from baton_tui.runners.dask import node as dask_node

if TYPE_CHECKING:
    from distributed import Client

    from baton_tui.runners_config import RunnerSettings

RECONNECT_AFTER = 5.0  # a scheduler that could not be reached is not asked again sooner
WORKERS_EVERY = 2.0    # the scheduler's list of workers is asked at most this often
T = TypeVar("T")


class Connection:
    """The scheduler's client for one runner (thread-safe: starts connect from worker
    threads, the loop only reads what is known)."""

    def __init__(self, settings: RunnerSettings, trusted: Callable[[], None]):
        self.settings = settings
        self._trusted = trusted            # raises BatonError: the runner is not trusted
        self._client: Client | None = None
        self._lock = threading.Lock()      # one connection attempt at a time
        self._failed: tuple[float, BatonError] | None = None  # the last failed attempt
        self._workers: tuple[float, set[str]] | None = None

    @staticmethod
    def background(why: str, call: Callable[[], None]) -> threading.Thread:
        """Run a blocking call a tick asked for (a stop, a look at the exchange) on a daemon
        thread named `baton-dask-<why>`: the loop never waits on the cluster."""
        thread = threading.Thread(target=call, name=f"baton-dask-{why}", daemon=True)
        thread.start()
        return thread

    @property
    def made(self) -> Client | None:
        """The client when one was made (no connection is attempted)."""
        return self._client

    def client(self) -> Client:
        """The scheduler's client, connected on first use (blocking: a worker thread's). A
        failed connection is not tried again for `RECONNECT_AFTER` seconds: the starts
        waiting on it hear the same answer, not one timeout each."""
        with self._lock:
            if self._client is not None and self._client.status in ("running", "connecting"):
                return self._client
            if self._failed is not None and time.monotonic() - self._failed[0] < RECONNECT_AFTER:
                raise self._failed[1]
            self._trusted()
            try:
                self._client = cluster.connect(self.settings)
            except BatonError as exc:
                self._failed = (time.monotonic(), exc)
                raise
            self._failed = None
            client = self._client
            self.background("warm", lambda: self._warm(client))
            return self._client

    @staticmethod
    def _warm(client: Client) -> None:
        """A cold worker loads the node's code now, not in the first job's path (`Client.run`
        takes no `wait=False` for a plain function: the workers refuse it, and the scheduler
        logs an error for each — so it runs on a background thread)."""
        try:
            client.run(dask_node.warm, on_error="ignore")
        except (OSError, TimeoutError, RuntimeError):  # (a cold worker stays cold: no harm)
            pass

    def connect_soon(self) -> None:
        """Connect in the background (importing `distributed` and the handshake take a second
        or more): the conductor's start-up and the starts' worktrees go on meanwhile."""
        if self._client is None and not self._lock.locked():
            self.background("connect", self._connect_quietly)

    def known_unreachable(self) -> BatonError | None:
        """Why the scheduler could not be reached, when the last attempt failed less than
        `RECONNECT_AFTER` ago (`client` would raise it at once); None otherwise, and while a
        connection is being made (never waits)."""
        failed = self._failed
        if failed is not None and time.monotonic() - failed[0] < RECONNECT_AFTER:
            return failed[1]
        return None

    def _connect_quietly(self) -> None:
        try:
            self.client()
        except BatonError:  # the start that needs it says why
            pass

    def workers(self, fresh: bool = False) -> set[str] | None:
        """The scheduler's workers, asked at most every `WORKERS_EVERY` seconds (`fresh`:
        now); None when it cannot be asked."""
        client = self._client
        if client is None:
            return None
        now = time.monotonic()
        if not fresh and self._workers is not None and now - self._workers[0] < WORKERS_EVERY:
            return self._workers[1]
        try:
            found = set(client.scheduler_info(n_workers=-1).get("workers", {}))
        # A scheduler going away raises what its comm layer has (CommClosedError is an
        # OSError; a closed client a RuntimeError; a slow one a TimeoutError): unknown now.
        except (OSError, TimeoutError, RuntimeError):
            return None
        self._workers = (now, found)
        return found

    def on_workers(self, function: Callable[..., T], *args: Any,
                   workers: list[str] | None = None) -> dict[str, T]:
        """`function(*args)` on the workers (all of them, or `workers`): each one's answer;
        a worker that failed or is gone answers nothing (blocking)."""
        found = self.client().run(function, *args, workers=workers, on_error="ignore")
        return dict(found or {})

    def subscribe(self, topic: str, heard: Callable[[Any], None]) -> bool:
        """Hear a job's topic (on Dask's thread); False when the scheduler cannot be told."""
        try:
            self.client().subscribe_topic(topic, heard)
        except (BatonError, OSError, TimeoutError, RuntimeError):
            return False  # no live view then: the whole output comes with the record
        return True

    def unsubscribe(self, topic: str) -> None:
        client = self._client
        if client is None:
            return
        try:
            client.unsubscribe_topic(topic)
        except (KeyError, OSError, TimeoutError, RuntimeError):  # not subscribed, or gone
            pass

    def close(self) -> None:
        """The run is over: the client goes (its calls on their way end on their own)."""
        client, self._client = self._client, None
        if client is None:
            return
        try:
            client.close(timeout=5)
        except (OSError, TimeoutError, RuntimeError):  # a scheduler already gone: nothing held
            pass


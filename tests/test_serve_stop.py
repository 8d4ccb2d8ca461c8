"""A server told to stop stops, whatever instant the signal lands in.

The hub's event pump sleeps until a request of its own wrote (or a poll passes). A stop that
came in the same instant as such a wake-up was once swallowed by the sleep (`asyncio.wait_for`
on Python 3.11 returns the finished wait and drops the cancel): `baton serve` then never
exited on SIGTERM. Here the two are made to coincide on purpose, in this process, against a
real store.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from baton_tui import api
from baton_tui.serve.hub import Hub


async def _until(condition, what: str) -> None:
    for _ in range(30_000):  # a condition, not a timing: ample even on a loaded machine
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"never happened: {what}")


def test_a_stop_that_meets_a_wake_up_still_stops_the_hub(repo: Path) -> None:
    session = api.Session(repo)

    async def one_round() -> bool:
        hub = Hub(session, ["socket"])
        await hub.start()
        await _until(lambda: hub._wake._waiters, "the pump sleeping until a write")
        hub._wake.set()                                # a request wrote ...
        stopping = asyncio.ensure_future(hub.stop())  # ... as the server is told to stop
        done, _ = await asyncio.wait({stopping}, timeout=60)
        return bool(done)

    async def scenario() -> list[bool]:
        rounds: list[bool] = []
        while len(rounds) < 5 and all(rounds):
            rounds.append(await one_round())
        return rounds

    try:
        assert asyncio.run(scenario()) == [True] * 5
    finally:
        session.close()

"""Landings that wait for the landing lock go together: whoever takes it lands them all.

Tasks that finish together (32 slots, a level of a wide DAG) would each wait for the lock,
then each read the integration branch, check it and move it. Instead each asks here: its
ask joins the queue of its plan, and the first to hold the lock takes every ask queued by
then and lands them in one pass (`landing.land_all`: one check of the integration branch,
one ref transaction). An ask that was landed by another's pass finds its answer when it gets
the lock; one left unanswered (that pass failed first) is landed by its own caller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from baton_tui.core.events import State
from baton_tui.run import refguard

T = TypeVar("T")


@dataclass
class Ask(Generic[T]):
    """One landing asked for, and its outcome once a pass landed it."""

    what: T
    state: State | None = None


@dataclass
class _Queue:
    mutex: threading.Lock = field(default_factory=threading.Lock)
    waiting: list[Ask[Any]] = field(default_factory=list)


_queues: dict[tuple[str, int], _Queue] = {}
_queues_mutex = threading.Lock()


def together(key: tuple[str, int], what: T,
             land_pass: Callable[[list[Ask[T]]], None]) -> State:
    """Land `what` (with everything queued for the same plan `key` meanwhile) under the
    landing lock; `land_pass` lands a list of asks in one pass and sets each one's state."""
    with _queues_mutex:
        queue = _queues.setdefault(key, _Queue())
    ask = Ask(what)
    with queue.mutex:
        queue.waiting.append(ask)
    with refguard.LOCK:
        if ask.state is None:
            with queue.mutex:
                batch, queue.waiting = queue.waiting, []
            if ask not in batch:  # taken by a pass that failed before answering it
                batch.insert(0, ask)
            land_pass(batch)
    assert ask.state is not None, "a landing pass left an ask unanswered"
    return ask.state

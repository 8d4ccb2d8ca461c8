"""Which players can start a task here — detected fresh, and recorded for the status snapshot.

Detection runs `--version` and reads credential files, so it is too slow for `baton status`
(stdlib only, instant). Every command that detects players (`baton players`, `doctor`, loading
a plan, approving, moving a task to a player) records what it found in the store's meta table
under `players.readiness`; the snapshot reads that record to mark tasks on unready players.
A custom player (or a built-in's `bin`) whose command comes from an untrusted repository
baton.toml is not ready: it cannot run until `baton trust`.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from baton_tui.core.errors import BatonError
from baton_tui.core.rules import unready_sentence
from baton_tui.players.base import Detection
from baton_tui.workspace import Workspace

META_KEY = "players.readiness"


def untrusted(ws: Workspace) -> set[str]:
    """Players whose command comes from this repository's baton.toml while it is not trusted."""
    commands = ws.loaded.project_commands()
    players = [c.split(".") for c in commands if c.startswith("players.")]
    if not players or ws.store.trusted_hash(str(ws.paths.project_config)) == \
            ws.loaded.project_hash():
        return set()
    return {parts[2] if parts[1] == "custom" else parts[1] for parts in players}


def detect(ws: Workspace, names: Iterable[str] | None = None) -> dict[str, Detection]:
    """Detect `names` (default: every player), record the result, and return it. The
    players are asked at once: each may run its CLI's `--version`, seconds for a Node CLI on
    a busy machine, and one after another they would add up."""
    players = ws.catalog.players
    blocked = untrusted(ws)
    wanted = [n for n in dict.fromkeys(names if names is not None else players) if n in players]

    def one(name: str) -> Detection:
        if name in blocked:
            return Detection(name, False, "its command comes from this repository's "
                             "baton.toml, which is not trusted", version="custom",
                             fix="review baton.toml, then run `baton trust`")
        return players[name].detect()

    with ThreadPoolExecutor(max_workers=max(1, min(8, len(wanted)))) as pool:
        found = dict(zip(wanted, pool.map(one, wanted)))
    record(ws, found)
    return found


def record(ws: Workspace, found: dict[str, Detection]) -> None:
    """Merge detections into the store's record (never creating a store just for it)."""
    store = ws.store
    if not store.path.exists() or not found:
        return
    known = store.get_meta(META_KEY) or {}
    now = time.time()
    for name, det in found.items():
        known[name] = {"ready": det.ready, "reason": det.reason, "fix": det.fix, "at": now}
    store.set_meta(META_KEY, known)


def problem(det: Detection) -> str:
    """The rule book's sentence refusing a task on an unready player (CLI, TUI, approval)."""
    return unready_sentence(det.name, det.reason + (f" — {det.fix}" if det.fix else ""))


def refuse_unready(ws: Workspace, name: str) -> None:
    """Raise (exit 2) when `name` cannot start a task here."""
    det = detect(ws, [name]).get(name)
    if det is not None and not det.ready:
        raise BatonError(problem(det))

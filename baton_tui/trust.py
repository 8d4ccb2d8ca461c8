"""Trust: commands from a repository's baton.toml run only once the person trusts the file.

`baton trust` records the file's hash in the store; a changed file must be trusted
again. The hash compared is always that of the bytes the configuration was parsed from (read
once), never of the file read again: a writer flipping the file between two reads cannot
pass an untrusted command under a trusted hash. A file changed since it was parsed (under an
app that has run a while) is refused too, never run as the old one. The personal config is
trusted as it is.
"""

from __future__ import annotations

from typing import Iterable

from baton_tui.config_files import current_hash
from baton_tui.core.errors import BatonError
from baton_tui.core.events import EventKind
from baton_tui.workspace import Workspace


def untrusted_commands(ws: Workspace, players: Iterable[str],
                       keys: Iterable[str] = ("worktree.setup", "checks.run")) -> list[str]:
    """The repo-file commands these players (and these keys) would run, unless trusted as is."""
    loaded = ws.loaded
    commands = loaded.project_commands()
    if not commands:
        return []
    players = set(players)
    wanted = set(keys)
    needed = [c for c in commands if c in wanted
              or any(c.startswith(f"players.custom.{p}.") or c == f"players.{p}.bin"
                     for p in players)]
    parsed = loaded.project_hash()
    if not needed or (ws.store.trusted_hash(str(loaded.project_path)) == parsed
                      and current_hash(loaded.project_path) == parsed):
        return []  # trusted as parsed, and still the file there (a long-lived app's may not be)
    return needed


def ensure_trusted(ws: Workspace, players: Iterable[str],
                   keys: Iterable[str] = ("worktree.setup", "checks.run")) -> None:
    """Refuse, saying how to trust the file, when it would run untrusted commands."""
    needed = untrusted_commands(ws, players, keys)
    if needed:
        was = ws.store.trusted_hash(str(ws.loaded.project_path))
        state = "changed since you trusted it" if was else "not trusted"
        raise BatonError(f"baton.toml is {state}; its commands ({', '.join(needed)}) are refused "
                         f"— review the file, then run `baton trust`")


def trust_file(ws: Workspace) -> tuple:
    """Record the hash of this repository's baton.toml: (its path, the hash, its commands)."""
    path = ws.paths.project_config
    ws.refresh_config()  # the file as it is now
    loaded = ws.loaded  # a broken file is refused before it is trusted
    digest = loaded.project_hash()  # of the bytes just parsed: the commands listed below
    if digest is None:
        raise BatonError(f"{path}: no baton.toml to trust here")
    ws.store.set_trust(str(path), digest)
    ws.store.append(None, None, EventKind.TRUST_RECORDED, {"sha256": digest})
    return path, digest, loaded.project_commands()

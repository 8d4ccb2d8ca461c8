"""`baton doctor`: what this machine and repository lack, each with how to fix it."""

from __future__ import annotations

import os

from baton_tui import paths, readiness
from baton_tui.core.errors import BatonError
from baton_tui.doctor.repository import repository_lines
from baton_tui.gitops import git
from baton_tui.workspace import Workspace


def diagnose(ws: Workspace) -> tuple[list[str], int]:
    """The doctor's lines (✓ fine, ✗ broken, · not ready) and its exit code."""
    lines: list[str] = []
    version = git.git_version()
    if version is None:
        lines.append("✗ git not found — tasks run in the folder one at a time; install git ≥ 2.38")
    elif not git.supports_worktrees():
        lines.append(f"✗ git {'.'.join(map(str, version))} is older than 2.38 — folder mode; "
                     "upgrade git")
    else:
        lines.append(f"✓ git {'.'.join(map(str, version))}")
    if version is not None:
        lines += repository_lines(ws.root)
    try:
        ws.loaded
    except BatonError as exc:
        lines.append(f"✗ {exc.message}")
        return lines, 2
    lines.append("✓ configuration reads cleanly")
    try:  # where worktrees and logs go: a path that is not UTF-8 stops every run
        paths.baton_home()
    except BatonError as exc:
        lines.append(f"✗ {exc.message}")
        return lines, 2
    commands = ws.loaded.project_commands()
    trusted = ws.store.trusted_hash(str(ws.paths.project_config))
    if commands and trusted != ws.loaded.project_hash():
        lines.append(f"✗ baton.toml has commands ({', '.join(commands)}) and is not trusted — "
                     f"review it, then run `baton trust`")
    detected = readiness.detect(ws)
    for found in detected.values():
        if found.ready:
            lines.append(f"✓ {found.name}{' ' + found.version if found.version else ''}")
        else:
            lines.append(f"· {found.name}: {found.reason}" + (f" — {found.fix}" if found.fix else ""))
        untried = replay_only(ws, found.name)
        if untried:
            lines.append(f"  {untried}")
    planner = ws.config.planner
    source = planner_source(ws)
    chosen = detected.get(planner)
    if chosen is not None and chosen.ready:
        lines.append(f"✓ planner: {planner} (from {source})")
        return lines, 0
    why = chosen.reason + (f" — {chosen.fix}" if chosen.fix else "") if chosen else \
        f"no player is named {planner!r}"
    lines.append(f"✗ planner: {planner} (from {source}) is not ready ({why}); `baton plan --goal` "
                 "cannot run — "
                 "set `planner` in config or BATON_PLANNER to a ready player")
    return lines, 1


def replay_only(ws: Workspace, name: str) -> str | None:
    """A plain warning when a player's adapter has never been run against its real CLI."""
    player = ws.catalog.players.get(name)
    version = player.replayed_version if player else None
    if not version:
        return None
    return (f"! {name}: Baton's adapter has never been run against the real {name} CLI, only "
            f"against replays of the formats {name} {version} documents; a newer {name} may "
            "not work with it")


def planner_source(ws: Workspace) -> str:
    """Where the planner in effect was named: BATON_PLANNER wins over AI_PROVIDER, which wins
    over the personal config, then the repository's baton.toml, then the default."""
    for name in ("BATON_PLANNER", "AI_PROVIDER"):
        if os.environ.get(name):
            return name
    loaded = ws.loaded
    if "planner" in loaded.personal_raw:
        return "your personal config"
    if "planner" in loaded.project_raw:
        return "baton.toml"
    return "the default"

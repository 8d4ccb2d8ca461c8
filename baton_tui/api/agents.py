"""Players, trust and skills, and the commands agents and Baton's own processes run."""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` and `pathlib` stay unimported on the report path
if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from baton_tui.workspace import Workspace


def detect_players(ws: "Workspace") -> dict[str, Any]:
    """Detection for every player, fresh and recorded for `status` (may run `--version`
    subprocesses: call it off the UI loop). An untrusted repo's custom players are not ready."""
    from baton_tui import readiness  # lazy: `baton report` loads this module and never needs it

    return readiness.detect(ws)


def player_catalog(ws: "Workspace", name: str) -> tuple[tuple[str, ...] | None, str | None]:
    """(models — None for any name, () for none — and the default model) of a player."""
    player = ws.catalog.players.get(name)
    return (player.catalog(), player.default_model) if player else (None, None)


def player_efforts(ws: "Workspace", name: str) -> tuple[str, ...]:
    player = ws.catalog.players.get(name)
    return tuple(player.efforts) if player else ("low", "medium", "high")


def default_player(ws: "Workspace") -> str | None:
    return ws.config.players.default


def skills(ws: "Workspace") -> dict[str, str]:
    """Skill name -> one-line description."""
    return {name: skill.description for name, skill in sorted(ws.skills.items())}


def trust(ws: "Workspace") -> tuple[Path, str, list[str]]:
    """Trust this repository's baton.toml: (its path, its hash, the commands it may now run)."""
    from baton_tui.trust import trust_file  # lazy: `baton report` loads this module and never needs it

    return trust_file(ws)


def doctor(ws: "Workspace") -> tuple[list[str], int]:
    """`baton doctor`'s lines and exit code."""
    # lazy: `baton report` loads this module and never needs them
    from baton_tui.api.runners import runner_lines, runners
    from baton_tui.doctor.diagnose import diagnose

    lines, code = diagnose(ws)
    if code != 2 and ws.config.runners.named:  # (2: the configuration does not read)
        lines += runner_lines(runners(ws))  # `baton runners`: a cluster that cannot run
    return lines, code


# agents' side -------------------------------------------------------------------------------
def report(status: str, message: str | None, *, until: float | None = None,
           tokens: int | None = None, cost: float | None = None) -> str:
    """`baton report` from inside an attempt (its environment names it)."""
    # lazy: the conductor loads this module and never needs it
    from baton_tui.channel.agent_side import report_from_env

    return report_from_env(status, message, until=until, tokens=tokens, cost=cost)


def checkpoint(what: str, evidence: str | None, wait: float | None = None) -> tuple[int, str]:
    """`baton checkpoint` from inside an attempt; `wait`: seconds to wait for the person
    (None: the plan's checkpoint_wait)."""
    # lazy: the conductor loads this module and never needs it
    from baton_tui.channel.agent_side import checkpoint_from_env

    return checkpoint_from_env(what, evidence, wait=wait)


def inbox() -> str:
    """`baton inbox` from inside an attempt: the person's unread messages (`baton tell`)."""
    from baton_tui.channel.agent_side import inbox_from_env  # lazy: only agents read their inbox

    return inbox_from_env()


def run_attempt(attempt_id: int, state: str) -> int:
    # lazy: neither `baton report` nor the conductor needs it
    from baton_tui.runners.shim import run_attempt as shim

    return shim(attempt_id, state)


def conduct(root: str, on_cue: bool = False) -> int:
    # lazy: `baton report` loads this module and never needs it
    from baton_tui.run.conductor import conduct as conductor

    return conductor(root, on_cue)


def serve_mcp() -> None:
    # lazy: `baton report` loads this module and never needs it
    from baton_tui.channel.mcp_server import serve

    serve()


def serve_mcp_tools(name: str, tools: "list[dict[str, Any]]",
                    call: "Callable[[str, dict[str, Any]], tuple[str, bool]]") -> None:
    """Serve `tools` as a stdio MCP server named `name` until stdin ends (a front end's own
    tools: `baton mcp --front`). `call(tool, checked arguments)` gives (text, is an error)."""
    # lazy: `baton report` loads this module and never needs it
    from baton_tui.channel import mcp_stdio

    mcp_stdio.serve(mcp_stdio.checked_server(name, tools, call))

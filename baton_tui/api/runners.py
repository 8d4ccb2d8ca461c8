"""Runners: where tasks run (`local`, or a `[runners.NAME]` cluster), and `baton runners`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from baton_tui.runners.dask import cluster
from baton_tui.core.words import LOCAL_RUNNER, counted
from baton_tui.trust import untrusted_commands

if TYPE_CHECKING:
    from baton_tui.workspace import Workspace


def runner_names(ws: "Workspace") -> list[str]:
    """Every runner a task may name here, `local` first."""
    return ws.config.runners.names()


def default_runner(ws: "Workspace") -> str:
    """The runner new tasks get (`[runners] default`)."""
    return ws.config.runners.default


def runners(ws: "Workspace", timeout: float | None = None) -> list[dict[str, Any]]:
    """Each runner as `baton runners --json` shows it: reachable or not (why), its workers,
    what each offers, and whether their Baton and Python versions match this machine's. A
    runner from an untrusted baton.toml is not contacted."""
    ours = cluster.versions()
    found: list[dict[str, Any]] = [{
        "name": LOCAL_RUNNER, "kind": LOCAL_RUNNER, "address": None, "exchange": None, "trusted": True,
        "reachable": True, "reason": None, "versions_match": True, "baton": ours["baton"],
        "python": ours["python"],
        "workers": [{"address": "local", "name": "this machine", "resources": {},
                     "baton": ours["baton"], "python": ours["python"], "versions_match": True,
                     "problem": None}]}]
    config = ws.config.runners
    for name in sorted(config.named):
        settings = config.named[name]
        if untrusted_commands(ws, (), keys=(f"runners.{name}",)):
            found.append({
                "name": name, "kind": settings.kind, "address": settings.address,
                "exchange": settings.exchange, "trusted": False, "reachable": False,
                "reason": "baton.toml is not trusted: review it, then run `baton trust` (its "
                          "scheduler is not contacted before)",
                "workers": [], "versions_match": None, "baton": ours["baton"],
                "python": ours["python"]})
            continue
        found.append(cluster.probe(name, settings, timeout or cluster.CONNECT_TIMEOUT))
    return found


def runner_lines(found: list[dict[str, Any]]) -> list[str]:
    """`baton runners` (and its part of `baton doctor`) as a person reads it."""
    lines: list[str] = []
    for runner in found:
        if runner["name"] == LOCAL_RUNNER:
            lines.append(f"✓ runner local: this machine (Baton {runner['baton']}, Python "
                         f"{runner['python']})")
            continue
        where = f"{runner['kind']} at {runner['address']}"
        if not runner["reachable"]:
            lines.append(f"✗ runner {runner['name']} ({where}): {runner['reason']}")
            continue
        mark = "✓" if runner["versions_match"] else "✗" if runner["versions_match"] is False \
            else "·"
        tail = f": {runner['reason']}" if runner["reason"] else \
            f", {counted(len(runner['workers']), 'worker')}"
        lines.append(f"{mark} runner {runner['name']} ({where}){tail}")
        exposed = runner.get("exposed") or []
        if exposed:
            shown = ", ".join(exposed[:4]) + (f" and {len(exposed) - 4} more"
                                              if len(exposed) > 4 else "")
            lines.append(f"  ! runner {runner['name']} listens beyond loopback without TLS "
                         f"({shown}): anyone who reaches it can run code as its workers — "
                         "bind it to 127.0.0.1 (`dask scheduler --host 127.0.0.1 "
                         "--dashboard-address 127.0.0.1:0`, `dask worker … --host 127.0.0.1 "
                         "--dashboard-address 127.0.0.1:0`) and reach it over an SSH tunnel, "
                         "or use tls://")
        for worker in runner["workers"]:
            offers = ", ".join(f"{k}={v:g}" for k, v in sorted(worker["resources"].items())) \
                or "no resources"
            note = f" — ✗ {worker['problem']}" if worker["problem"] else ""
            lines.append(f"    {worker['name'] or worker['address']} ({worker['address']}): "
                         f"{offers}{note}")
    return lines

"""Helpers for the run-engine tests (tests/test_run_*.py): scripted players, plans, events.

Everything goes through the real `baton` CLI in subprocesses and real git; nothing is mocked.
A test names its agents' behaviour as demo-agent scripts (see `baton_tui.demo.agent`) or as
one of the small programs in tests/agents/, wires them as custom players in the repo's
`baton.toml`, trusts it, loads a plan and runs it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from helpers.core import write_plan

AGENTS = Path(__file__).resolve().parents[1] / "agents"
DEMO_AGENT = [sys.executable, "-m", "baton_tui.demo.agent"]


def toml_value(value: object) -> str:
    return json.dumps(value)


def write_config(repo: Path, players: dict[str, list[str]], *, research: dict[str, list[str]]
                 | None = None, limits: dict[str, object] | None = None,
                 checks: str | None = None, extra: str = "") -> Path:
    """Write baton.toml (left untracked: untracked files do not make the tree dirty)."""
    lines: list[str] = []
    for name, argv in players.items():
        lines.append(f"[players.custom.{name}]")
        lines.append(f"command = {toml_value(argv)}")
        if research and name in research:
            lines.append(f"research_command = {toml_value(research[name])}")
        lines.append("")
    limits = {"stall": "30s", "checkpoint_wait": "1s", **(limits or {})}
    lines.append("[limits]")
    for key, value in limits.items():
        lines.append(f"{key} = {toml_value(value)}")
    lines.append("")
    if checks:
        lines += ["[checks]", f"run = {toml_value(checks)}", ""]
    path = repo / "baton.toml"
    path.write_text("\n".join(lines) + extra)
    return path


def script_agent(tmp: Path, name: str, script: dict) -> list[str]:
    """The demo agent driven by `script` (task id -> steps); returns its argv."""
    path = tmp / f"{name}-script.json"
    path.write_text(json.dumps(script))
    return [*DEMO_AGENT, str(path)]


def program(name: str, *args: str) -> list[str]:
    """One of the extra agent programs in tests/agents/."""
    return [sys.executable, str(AGENTS / name), *args]


def task(id: int, title: str | None = None, *, player: str = "agent", deps: list[int] = (),
         mode: str = "build", **extra) -> dict:
    return {"id": id, "title": title or f"Task {id}", "prompt": f"Do task {id}.",
            "player": player, "mode": mode, "depends_on": list(deps), **extra}


def load_plan(baton, tasks: list[dict], *, trust: bool = True, approve: bool = False,
              **extra) -> None:
    path = write_plan(baton.cwd.parent / "plan.json", tasks, **extra)
    result = baton("plan", "--from", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    if trust:
        result = baton("trust")
        assert result.returncode == 0, result.stdout + result.stderr
    if approve:
        result = baton("approve")
        assert result.returncode == 0, result.stdout + result.stderr


def events(baton) -> list[dict]:
    result = baton("log", "--json")
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def kinds(evs: list[dict], task_id: int | None = None) -> list[str]:
    return [e["kind"] for e in evs if task_id is None or e.get("task") == task_id]


def first(evs: list[dict], kind: str, task_id: int | None) -> dict:
    for e in evs:
        if e["kind"] == kind and e.get("task") == task_id:
            return e
    raise AssertionError(f"no {kind} for task {task_id}: {kinds(evs, task_id)}")


def status(baton) -> dict:
    result = baton("status", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def states(baton) -> dict[int, str]:
    return {t["id"]: t["state"] for t in status(baton)["tasks"]}


def task_status(baton, task_id: int) -> dict:
    return next(t for t in status(baton)["tasks"] if t["id"] == task_id)


def wait_for(predicate, timeout: float = 30.0, every: float = 0.2, what: str = "condition"):
    """Poll `predicate` until it returns something truthy; return that."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def wait_state(baton, task_id: int, wanted: str | tuple[str, ...], timeout: float = 30.0) -> dict:
    """Wait for a task to reach one of `wanted`; on a timeout, say where every task is."""
    wanted = (wanted,) if isinstance(wanted, str) else wanted
    try:
        return wait_for(lambda: (lambda t: t if t["state"] in wanted else None)(
            task_status(baton, task_id)), timeout, what=f"task {task_id} in {wanted}")
    except AssertionError as exc:
        st = status(baton)
        where = [(t["id"], t["state"], t.get("reason")) for t in st["tasks"]]
        raise AssertionError(f"{exc}; conductor {st['conductor']}, tasks {where}") from None


def wait_idle(baton, timeout: float = 60.0) -> dict:
    """Wait until no conductor runs; return the final status."""
    return wait_for(lambda: (lambda s: s if s["conductor"] is None else None)(status(baton)),
                    timeout, what="the conductor to exit")


def popen_baton(cwd: Path, *args: str, env: dict | None = None) -> subprocess.Popen:
    """A foreground `baton …` as a person starts it in a terminal (its own process group)."""
    return subprocess.Popen([sys.executable, "-m", "baton_tui", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})}, start_new_session=True)


def git(cwd: Path, *args: str, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True,
                          text=True).stdout.strip()


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "-a", "--format=%(refname:short)").splitlines()


def tree_files(repo: Path, ref: str) -> dict[str, str]:
    """path -> content of every file at `ref`."""
    names = git(repo, "ls-tree", "-r", "--name-only", ref).splitlines()
    return {n: git(repo, "show", f"{ref}:{n}") for n in names}


def integration(repo: Path, baton) -> str:
    return status(baton)["plan"]["integration_branch"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie still answers kill(0): look at /proc.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass

"""Helpers shared by the real agent-CLI tests (Claude Code, Codex): where a task's worktree
is, what the run log says about it, and proof that an agent's file stayed in its worktree."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from conftest import ROOT, BatonCLI, git

NPM_BIN = ROOT / ".ci" / "npm" / "node_modules" / ".bin"


def npm_bin(name: str, label: str, pin: str) -> Path:
    """A pinned CLI installed by `.ci/run`; its absence FAILS the test (nothing skips)."""
    path = NPM_BIN / name
    if not path.exists():
        pytest.fail(f"{label} is not installed at {path}: run `npm install --prefix .ci/npm "
                    f"--save-exact {pin}` (the CI script .ci/run does this)", pytrace=False)
    return path


def worktree(repo: Path, baton: BatonCLI, task_id: int, suffix: str = "") -> Path:
    """Where Baton will put a task's worktree (the scripted Write needs an absolute path)."""
    from baton_tui.paths import find_repo
    from baton_tui.run import layout

    status = baton.json("status", "--json")
    task = next(t for t in status["tasks"] if t["id"] == task_id)
    return layout.worktree_path(find_repo(repo), status["plan"]["slug"], task_id, task["title"],
                                suffix)


def task_of(baton: BatonCLI, task_id: int) -> dict:
    return next(t for t in baton.json("status", "--json")["tasks"] if t["id"] == task_id)


def events_of(baton: BatonCLI, task_id: int) -> list[dict]:
    out = baton("log", "--json")
    assert out.returncode == 0, out.stderr
    found = []
    for line in out.stdout.splitlines():
        if line.strip():
            event = json.loads(line)
            if event.get("task") == task_id or event.get("task_id") == task_id:
                found.append(event)
    return found


def kinds(events: list[dict]) -> list[str]:
    return [e.get("kind") or e.get("type") for e in events]


def data_of(event: dict) -> dict:
    return event.get("data") or event


def assert_contained(repo: Path, branch: str, name: str) -> None:
    """The agent's file was written in its task's worktree: it came in by that task's own commit
    on its branch, and never reached the person's checkout or their branch."""
    assert git(repo, "status", "--porcelain") == "", "the person's working tree was touched"
    assert not (repo / name).exists()
    assert subprocess.run(["git", "cat-file", "-e", f"main:{name}"], cwd=repo,
                          capture_output=True).returncode != 0
    assert subprocess.run(["git", "cat-file", "-e", f"{branch}:{name}"], cwd=repo,
                          capture_output=True).returncode == 0
    adders = git(repo, "log", "--all", "--diff-filter=A", "--format=%H", "--", name).split()
    assert len(adders) == 1, adders
    task_id = branch.rsplit("/", 1)[1].split("-", 1)[0]
    assert git(repo, "log", "-1", "--format=%s", adders[0]).startswith(f"Task {task_id}:")
    assert subprocess.run(["git", "merge-base", "--is-ancestor", adders[0], branch],
                          cwd=repo).returncode == 0


def run(baton: BatonCLI, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    started = time.monotonic()
    result = baton("run", "--approve", env=env, timeout=timeout)
    print(f"baton run: exit {result.returncode} in {time.monotonic() - started:.1f}s\n"
          f"{result.stdout}\n{result.stderr}")
    return result


def attempt_logs(repo: Path) -> str:
    home = Path(os.environ["BATON_HOME"])
    return "\n".join(p.read_text(errors="replace") for p in sorted(home.glob("runs/**/output.log")))

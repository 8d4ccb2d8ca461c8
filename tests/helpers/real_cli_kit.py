"""Helpers shared by the real agent-CLI tests: the pinned CLIs `.ci/run` installs, where a task's
worktree is, what the run log says about it, and proof that an agent's file stayed in its
worktree."""

from __future__ import annotations

import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from helpers.core import ROOT, BatonCLI, git

NPM_BIN = ROOT / ".ci" / "npm" / "node_modules" / ".bin"
# PyPI CLIs get a virtualenv each (their dependencies never meet Baton's), and a folder holding
# only a link to the CLI itself (never a whole virtualenv's bin on PATH).
PYPI_BIN = ROOT / ".ci" / "pypi-bin"
REQUIRE_ENV = "BATON_REQUIRE_REAL_CLIS"
MISSING_CLI = "REAL AGENT CLI MISSING"   # starts every skip reason (conftest lists them at the end)


@dataclass(frozen=True)
class RealCLI:
    """A real agent CLI as `.ci/run` installs it: pinned, from npm, into .ci/npm."""

    binary: str     # the command in node_modules/.bin (or .ci/pypi-bin)
    label: str      # its name for people
    package: str    # the exact npm spec (or PyPI `name==version`) .ci/run installs
    bin_dir: Path = NPM_BIN

    @property
    def version(self) -> str:
        return self.package.rsplit("==" if "==" in self.package else "@", 1)[1]

    @property
    def install(self) -> str:
        if self.bin_dir == NPM_BIN:
            return f"npm install --prefix .ci/npm --save-exact {self.package}"
        venv = f".ci/{self.binary}-venv"
        return (f"python3 -m venv {venv} && {venv}/bin/pip install {self.package} && "
                f"mkdir -p .ci/pypi-bin && ln -sf ../{self.binary}-venv/bin/{self.binary} "
                f".ci/pypi-bin/{self.binary}")


CLAUDE = RealCLI("claude", "Claude Code", "@anthropic-ai/claude-code@2.1.332")
CODEX = RealCLI("codex", "Codex", "@openai/codex@0.171.0")
AIDER = RealCLI("aider", "Aider", "aider-chat==0.86.2", PYPI_BIN)
OPENCODE = RealCLI("opencode", "OpenCode", "opencode-ai@1.18.33")
GEMINI = RealCLI("gemini", "Gemini CLI", "@google/gemini-cli@0.61.0")


def require_cli(cli: RealCLI) -> Path:
    """The installed CLI's path. Missing: the test is skipped with a loud reason, or fails when
    BATON_REQUIRE_REAL_CLIS=1 (`.ci/run` sets it, so nothing skips in CI)."""
    path = cli.bin_dir / cli.binary
    if path.exists():
        return path
    reason = (f"{MISSING_CLI}: {cli.label} (`{cli.binary}`) is not installed at {path}. "
              f"Install it with `bash .ci/run` (installs every pinned CLI, then runs all tests) or "
              f"`{cli.install}`.")
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{reason} ({REQUIRE_ENV}=1: a missing CLI fails instead of skipping)",
                    pytrace=False)
    pytest.skip(reason)


def worktree(repo: Path, baton: BatonCLI, task_id: int, suffix: str = "") -> Path:
    """Where Baton will put a task's worktree (the scripted Write needs an absolute path)."""
    from baton_tui.paths import find_repo
    from baton_tui import layout

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

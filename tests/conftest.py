"""Shared fixtures: real git repositories in tmp dirs, an isolated HOME, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch):
    """Every test gets its own HOME, BATON_HOME and git config; no real config is read."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("BATON_HOME", str(home / "baton-home"))
    gitconfig = home / ".gitconfig"
    gitconfig.write_text("[user]\n\tname = Test Person\n\temail = test@example.com\n"
                         "[init]\n\tdefaultBranch = main\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(gitconfig))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("BATON_PLANNER", "BATON_AUTONOMY", "BATON_MAX_PARALLEL", "BATON_CONFIG",
                 "BATON_TASK", "BATON_ATTEMPT", "BATON_NONCE", "BATON_STATE"):
        monkeypatch.delenv(name, raising=False)
    return home


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A git repository with one commit on `main`, as the current directory."""
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("# sample\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    monkeypatch.chdir(path)
    return path


class BatonCLI:
    """The real `baton` command in a subprocess, as a person (or a pipeline) runs it."""

    def __init__(self, cwd: Path):
        self.cwd = cwd

    def __call__(self, *args: str, input: str | None = None, timeout: float = 120,
                 env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "baton_tui", *args], cwd=self.cwd,
                              input=input, capture_output=True, text=True, timeout=timeout,
                              env={**os.environ, **(env or {})})

    def json(self, *args: str) -> object:
        result = self(*args)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)


@pytest.fixture
def baton(repo) -> BatonCLI:
    return BatonCLI(repo)


def write_plan(path: Path, tasks: list[dict], goal: str = "Sample goal", **extra) -> Path:
    """Write a v1 plan document and return its path."""
    path.write_text(json.dumps({"version": 1, "goal": goal, "tasks": tasks, **extra}))
    return path


@pytest.fixture
def server():
    """Baton's scripted model server on 127.0.0.1; each test adds its turns."""
    from baton_tui.demo.server import ScriptedServer

    srv = ScriptedServer([]).start()
    yield srv
    srv.stop()

"""Shared fixtures: real git repositories in tmp dirs, an isolated HOME, the real CLI."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers.core import ROOT, BatonCLI, git, write_plan  # noqa: F401 (tests import these from here)


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
    signed_in_person(home, monkeypatch)
    return home


def signed_in_person(home: Path, monkeypatch) -> None:
    """The person has Claude Code and Codex installed and signed in, and API keys set, so a plan
    on them can be approved (a task is never given to a player that cannot start). The CLIs are
    stubs that only answer `--version`: tests that run a real CLI put the pinned one first on
    PATH; tests of an unready player set their own PATH."""
    stubs = home / "stub-bin"
    stubs.mkdir()
    for name, version in (("claude", "2.1.332 (Claude Code)"), ("codex", "codex-cli 0.171.0")):
        stub = stubs / name
        stub.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "{version}" && exit 0\n'
                        f'echo "stub {name}: not a real agent" >&2\nexit 1\n')
        stub.chmod(0o755)
    (home / ".claude").mkdir()
    (home / ".claude" / ".credentials.json").write_text("{}")
    (home / ".codex").mkdir()
    (home / ".codex" / "auth.json").write_text("{}")
    monkeypatch.setenv("PATH", f"{stubs}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "stub-key")
    monkeypatch.setenv("OPENAI_API_KEY", "stub-key")


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


@pytest.fixture
def baton(repo) -> BatonCLI:
    return BatonCLI(repo)


@pytest.fixture
def server():
    """Baton's scripted model server on 127.0.0.1; each test adds its turns."""
    from baton_tui.demo.server import ScriptedServer

    srv = ScriptedServer([]).start()
    yield srv
    srv.stop()


@pytest.fixture
def model_server(monkeypatch):
    """Start a scripted model server with `model_server(turns)`; both SDKs' base-URL and key
    variables point at it for this test only (the native players and planner inherit them)."""
    from baton_tui.demo.server import ScriptedServer

    servers: list[ScriptedServer] = []

    def start(turns: list[dict]) -> ScriptedServer:
        server = ScriptedServer(turns).start()
        servers.append(server)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        return server

    yield start
    for server in servers:
        server.stop()


def pytest_terminal_summary(terminalreporter):
    """Say loudly, at the end, which real agent CLIs were missing (their tests were skipped)."""
    from helpers.real_cli_kit import MISSING_CLI

    reasons = sorted({str(r.longrepr[2]) if isinstance(r.longrepr, tuple) else str(r.longrepr)
                      for r in terminalreporter.stats.get("skipped", [])
                      if MISSING_CLI in str(r.longrepr)})
    if reasons:
        terminalreporter.write_sep("!", "real agent CLIs missing: their tests were SKIPPED",
                                   red=True, bold=True)
        for reason in reasons:
            terminalreporter.write_line(reason.removeprefix("Skipped: "))

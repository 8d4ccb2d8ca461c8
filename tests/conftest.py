"""Shared fixtures: real git repositories in tmp dirs, an isolated HOME, the real CLI."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from helpers.core import ROOT, BatonCLI, git, write_plan  # noqa: F401 (tests import these from here)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory, monkeypatch, request):
    """Every test gets its own HOME, BATON_HOME and git config; no real config is read.
    The pinned real CLIs' `--version` lines are the one thing carried from test to test
    (see `real_cli_versions`)."""
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
    kept = tmp_path_factory.getbasetemp() / "real-cli-versions"
    cache = home / "baton-home" / "cache"
    if kept.is_dir() and drives_real_clis(request.module):
        shutil.copytree(kept, cache)
    yield home
    real_cli_versions(cache, kept)


REAL_CLI_KITS = ("helpers.real_cli_kit", "helpers.real_players", "helpers.real_players_js")


def drives_real_clis(module) -> bool:
    """Whether a test module uses the real CLI kits (only their tests get the kept versions)."""
    return any(getattr(value, "__module__", None) in REAL_CLI_KITS
               or getattr(value, "__name__", None) in REAL_CLI_KITS
               for value in vars(module).values())


def real_cli_versions(cache: Path, kept: Path) -> None:
    """Keep the `--version` lines Baton cached for the pinned real CLIs (.ci/npm, .ci/pypi-bin)
    so the next test's Baton finds them, as a person's Baton does between commands: a Node CLI's
    `--version` costs seconds of CPU (Gemini CLI's about three), and every test starts with an
    empty BATON_HOME, so each real-CLI test asked every installed CLI again. Each CLI is still
    asked for real, by the first test of a worker that needs it; a cache entry names its binary
    with its size and change time, so a changed binary is asked again. Only entries for the
    pinned CLIs are carried: a test's own stand-in is always asked afresh."""
    if not cache.is_dir():
        return
    real = {str(p.resolve()) for folder in (ROOT / ".ci" / "npm" / "node_modules" / ".bin",
                                            ROOT / ".ci" / "pypi-bin")
            if folder.is_dir() for p in folder.iterdir()}
    for entry in cache.glob("version-*.json"):
        try:
            stamp = json.loads(entry.read_text(encoding="utf-8")).get("stamp")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(stamp, list) and stamp and stamp[0] in real:
            kept.mkdir(exist_ok=True)
            shutil.copyfile(entry, kept / f"{entry.name}.tmp")
            os.replace(kept / f"{entry.name}.tmp", kept / entry.name)


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


# The files whose tests take minutes each, longest first: they start the run, one worker each,
# so the run never ends waiting on one of them started last while the other workers are idle.
LONGEST_FIRST = ("test_scale_e2e.py", "test_editor.py", "test_install_binary.py",
                 "test_install_wheel.py", "test_real_plan_five_clis.py")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(items):
    """Longest first (pytest-xdist hands tests out in this order): the files above, then every
    file holding a test marked `slow`, the real-CLI and the cluster files, then the rest; each
    file's tests kept together and in their order (so a module's fixtures are made once)."""
    def rank(path: str) -> int:
        name = path.rsplit("/", 1)[-1]
        return LONGEST_FIRST.index(name) if name in LONGEST_FIRST else len(LONGEST_FIRST)

    slow = {item.nodeid.split("::", 1)[0] for item in items if item.get_closest_marker("slow")
            or item.nodeid.startswith(("tests/test_real_", "tests/test_dask_"))}
    order = {}
    for item in items:
        path = item.nodeid.split("::", 1)[0]
        order.setdefault(path, (rank(path), path not in slow, len(order)))
    items.sort(key=lambda item: order[item.nodeid.split("::", 1)[0]])

"""The editor tests' world: the tool chain (scripts/editor-toolchain: Node 24, code-server,
Debian's Chromium, Playwright), the demo's sample repository with its scripted planner and
players on 127.0.0.1, `baton web`, code-server, and the Playwright drivers (tests/editor/),
which run on the tool chain's own Python and write what they saw as JSON."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from helpers.core import ROOT, git

EXTENSION = ROOT / "editors" / "vscode"
DRIVERS = ROOT / "tests" / "editor"
SCREENSHOTS = ROOT / "screenshots"


def toolchain() -> Path:
    """The installed tool chain's folder; without it, a skip that says how — or, in CI
    (BATON_REQUIRE_EDITOR_TOOLS), a failure."""
    folder = Path(subprocess.run([str(ROOT / "scripts" / "editor-toolchain"), "--print"],
                                 capture_output=True, text=True, check=True).stdout.strip())
    if (folder / ".complete").is_file() and shutil.which("chromium"):
        return folder
    why = f"the editor tool chain is not installed ({folder}): run scripts/editor-toolchain"
    if os.environ.get("BATON_REQUIRE_EDITOR_TOOLS"):
        pytest.fail(why)
    pytest.skip(why)


def node_env(tools: Path) -> dict[str, str]:
    """PATH with Node 24 first (code-server refuses older), and the extension's own tools."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(tools / "node24" / "bin"),
                                   str(EXTENSION / "node_modules" / ".bin"), env["PATH"]])
    env["npm_config_nodedir"] = str(tools / "node24" / "package")
    return env


@contextmanager
def build_lock() -> Iterator[None]:
    """Held while the bundle is written or compared: the test workers (pytest-xdist) each build
    it when their first editor test starts, often at the same moment, into the same folders."""
    import fcntl

    (ROOT / "build").mkdir(exist_ok=True)
    with open(ROOT / "build" / "editor-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build_extension(tools: Path) -> None:
    """`npm ci` (once) and the bundle, as scripts/build-vsix does."""
    env = node_env(tools)
    with build_lock():
        if not (EXTENSION / "node_modules" / ".bin" / "esbuild").exists():
            subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                           cwd=EXTENSION, env=env, check=True, timeout=900)
        subprocess.run(["node", "esbuild.mjs"], cwd=EXTENSION, env=env, check=True, timeout=300)


@contextmanager
def demo_world(base: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """The demo's sample repository (trusted, committed on `main`) and the environment that
    points Baton's planner and the native `anthropic` player at the scripted model server —
    offline, no key. Yields (repo, env for the processes that run Baton)."""
    from baton_tui.demo.sample import write_sample
    from baton_tui.demo.session import DEMO_KEY
    from baton_tui.demo.tui_demo import start_server

    repo = base / "textstats"
    write_sample(repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "textstats: reading text")
    server = start_server()
    env = dict(os.environ)
    env.update({"BATON_HOME": str(base / "baton-home"), "BATON_PLANNER": "anthropic",
                "ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": DEMO_KEY,
                "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"})
    subprocess.run([sys.executable, "-m", "baton_tui", "trust"], cwd=repo, env=env, check=True,
                   capture_output=True, timeout=120)
    try:
        yield repo, env
    finally:
        server.stop()


ACTIONS_PLAN = {"version": 1, "goal": "tidy the exports", "autonomy": "guarded", "tasks": [
    {"id": 1, "title": "Delete legacy exports", "prompt": "a", "player": "a", "checkpoint": True},
    {"id": 2, "title": "Drop the users table", "prompt": "b", "player": "a", "checkpoint": True},
    {"id": 3, "title": "Wait for the go", "prompt": "c", "player": "a"},
    {"id": 4, "title": "Half done", "prompt": "d", "player": "t"},
    {"id": 5, "title": "Write notes", "prompt": "e", "player": "a"}]}


@contextmanager
def actions_world(base: Path) -> Iterator[tuple[Path, dict[str, str], dict[str, str]]]:
    """A repository with a guarded plan (not approved) of five tasks on scripted agents
    (`baton_tui.demo.agent`, which call `baton checkpoint` and `baton report`): 1 and 2 ask at a
    checkpoint, 3 waits for a file (`go`) the test writes, 4 hangs until taken over (its
    player's interactive command is tests/editor/take_session.py), 5 writes notes.txt. Codex
    is installed (a stand-in, its `bin` in baton.toml) but not signed in until the test writes
    `codex_home`/auth.json. Yields (repo, env, {go, codex_home})."""
    repo, home, bin_dir = base / "repo", base / "codex-home", base / "bin"
    for folder in (repo, home, bin_dir):
        folder.mkdir()
    codex = bin_dir / "codex"
    codex.write_text("#!/bin/sh\necho 'codex-cli 0.130.0'\n")
    codex.chmod(0o755)
    go = base / "go"
    scripts = {
        "a": {"1": [{"checkpoint": "delete the legacy exports", "evidence": "rm exports/2019.csv"},
                    {"write": "yes.txt", "content": "deleted\n"},
                    {"report": "done", "summary": "deleted the exports"}],
              "2": [{"checkpoint": "drop the users table", "evidence": "DROP TABLE users;"},
                    {"write": "no.txt", "content": "dropped\n"},
                    {"report": "done", "summary": "dropped"}],
              "3": [{"print": "waiting for the go"}, {"await": str(go)},
                    {"write": "retry.txt", "content": "went\n"},
                    {"report": "done", "summary": "went"}],
              "5": [{"write": "notes.txt", "content": "from task 5\n"},
                    {"report": "done", "summary": "notes written"}]},
        "t": {"4": [{"write": "half.txt", "content": "started\n"}, {"hang": True}]},
    }
    agent = [sys.executable, "-m", "baton_tui.demo.agent"]
    lines = []
    for name, script in scripts.items():
        path = base / f"{name}.json"
        path.write_text(json.dumps(script))
        lines += [f"[players.custom.{name}]", f"command = {json.dumps([*agent, str(path)])}"]
        if name == "t":
            by_hand = [sys.executable, str(DRIVERS / "take_session.py")]
            lines.append(f"interactive_command = {json.dumps(by_hand)}")
        lines.append("")
    # Codex by its binary's path: code-server's extension host takes PATH from a login shell
    lines += ["[players.codex]", f"bin = {json.dumps(str(codex))}", ""]
    limits = '[limits]\nstall = "600s"\ncheckpoint_wait = "900s"\n'  # the agents wait for the person
    (repo / "baton.toml").write_text("\n".join(lines) + limits)
    (repo / "README.md").write_text("exports\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "exports")
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "CODEX_API_KEY", "BATON_AUTONOMY")}
    env.update({"BATON_HOME": str(base / "baton-home"), "CODEX_HOME": str(home),
                "PATH": os.pathsep.join([str(bin_dir), str(Path(sys.executable).parent),
                                         env["PATH"]])})
    (base / "plan.json").write_text(json.dumps(ACTIONS_PLAN))
    for args in (["trust"], ["plan", "--from", str(base / "plan.json")]):
        done = subprocess.run([sys.executable, "-m", "baton_tui", *args], cwd=repo, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr
    yield repo, env, {"go": str(go), "codex_home": str(home)}


@contextmanager
def baton_web(repo: Path, env: dict[str, str]) -> Iterator[str]:
    """`baton web --port 0` in `repo`: the URL it prints first."""
    proc = subprocess.Popen([sys.executable, "-m", "baton_tui", "web", "--port", "0"], cwd=repo,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        url = proc.stdout.readline().strip() if proc.stdout else ""
        assert re.match(r"^http://127\.0\.0\.1:\d+/\?token=\S+$", url), \
            (url, proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        yield url
    finally:
        _end_group(proc)


def _end_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


SETTINGS = {"workbench.startupEditor": "none", "chat.disableAIFeatures": True,
            "update.mode": "none", "extensions.autoUpdate": False,
            "telemetry.telemetryLevel": "off", "git.enabled": False,
            "workbench.colorTheme": "Default Light Modern", "security.workspace.trust.enabled": False,
            "terminal.integrated.gpuAcceleration": "off"}  # a terminal's text in the DOM


@contextmanager
def code_server(tools: Path, base: Path, folder: Path, env: dict[str, str],
                vsix: Path | None = None, extra: tuple[str, ...] = (),
                settings: dict | None = None) -> Iterator[tuple[int, dict[str, str]]]:
    """A real VS Code (code-server) on 127.0.0.1 with its own profile, caches and temporary
    folder; `vsix` installed first; `settings` over SETTINGS. Yields (port, its environment)."""
    home = base / "cs"
    user = home / "user"
    (user / "User").mkdir(parents=True, exist_ok=True)
    (user / "User" / "settings.json").write_text(json.dumps({**SETTINGS, **(settings or {})}))
    cs_env = dict(env)  # the world's environment alone (what it removed stays removed)
    cs_env["PATH"] = os.pathsep.join([str(tools / "node24" / "bin"), env["PATH"]])
    cs_env["npm_config_nodedir"] = str(tools / "node24" / "package")
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "TMPDIR"):
        path = home / name.lower()
        path.mkdir(exist_ok=True)
        cs_env[name] = str(path)
    binary = tools / "cs" / "node_modules" / ".bin" / "code-server"
    common = ["--user-data-dir", str(user), "--extensions-dir", str(home / "extensions")]
    if vsix is not None:
        subprocess.run([str(binary), "--bind-addr", "127.0.0.1:0", *common,  # (serves nothing)
                        "--install-extension", str(vsix), "--force"],
                       env=cs_env, check=True, capture_output=True, timeout=300)
    port = free_port()
    log = (home / "code-server.log").open("w")
    proc = subprocess.Popen(
        [str(binary), "--bind-addr", f"127.0.0.1:{port}", "--auth", "none", "--disable-telemetry",
         "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
         "--reconnection-grace-time", "5", *common, "--config", "/dev/null", *extra, str(folder)],
        env=cs_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("code-server did not start:\n"
                                         + (home / "code-server.log").read_text()[-3000:])
                time.sleep(0.5)
        yield port, cs_env
    finally:
        _end_group(proc)
        log.close()


def development_url(port: int, folder: Path) -> str:
    """code-server's page with the extension loaded from editors/vscode unpackaged (its
    `out/` as the bundle built it), as a person would see it installed."""
    import urllib.parse

    payload = [["extensionDevelopmentPath", f"vscode-remote://127.0.0.1:{port}{EXTENSION}"]]
    return (f"http://127.0.0.1:{port}/?folder={urllib.parse.quote(str(folder))}"
            f"&payload={urllib.parse.quote(json.dumps(payload))}")


def drive(tools: Path, script: str, args: dict, timeout: int = 900) -> dict:
    """Run a Playwright driver (tests/editor/SCRIPT) on the tool chain's Python; its JSON."""
    out = Path(args["out"])
    proc = subprocess.run([str(tools / "pw" / "bin" / "python"), str(DRIVERS / script),
                           json.dumps(args)], capture_output=True, text=True, timeout=timeout)
    result = json.loads(out.read_text()) if out.is_file() else {}
    assert proc.returncode == 0, (proc.stdout[-4000:], proc.stderr[-4000:], result)
    return result

"""The engine never imports textual; `baton status` and `baton --help` import nothing heavy;
`baton report` imports only what recording a report needs."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import baton_tui

from conftest import write_plan

HEAVY = ("pydantic", "textual", "anthropic", "openai", "git", "mcp", "rich")


def engine_modules() -> list[str]:
    """Every module under baton_tui on disk except the TUI and `__main__` (which runs the CLI)."""
    names = []
    for info in pkgutil.walk_packages(baton_tui.__path__, "baton_tui."):
        if info.name.startswith("baton_tui.tui") or info.name.endswith("__main__"):
            continue
        names.append(info.name)
    return sorted(names)


def python(script: str, *, cwd: Path | None = None, env: dict[str, str] | None = None,
           timeout: float = 120) -> str:
    """What `script` prints, run in a fresh interpreter (which must exit 0)."""
    result = subprocess.run([sys.executable, "-c", script], cwd=cwd, capture_output=True,
                            text=True, timeout=timeout, env={**os.environ, **(env or {})})
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_there_are_engine_modules_to_check():
    names = engine_modules()
    for expected in ("baton_tui.cli", "baton_tui.config", "baton_tui.plan.current",
                     "baton_tui.store.db", "baton_tui.players.registry"):
        assert expected in names


def test_the_core_loads_only_the_standard_library():
    """`baton_tui.core` (events, fold, rules, policy, budget, snapshot records, the enums)
    is the floor everything stands on: nothing in it may load a package from outside the
    standard library, nor a module of Baton's above it."""
    core = [name for name in engine_modules() if name.startswith("baton_tui.core.")]
    assert {"baton_tui.core.events", "baton_tui.core.rules", "baton_tui.core.snapshot"} <= set(core)
    script = (
        "import importlib, json, sys\n"
        "before = set(sys.modules)\n"
        f"for name in {core!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = set(sys.modules) - before\n"
        "top = {m.split('.')[0] for m in loaded}\n"
        "print(json.dumps({'outside': sorted(t for t in top - {'baton_tui'}\n"
        "                                    if t not in sys.stdlib_module_names),\n"
        "                  'baton': sorted(m for m in loaded if m.startswith('baton_tui.')\n"
        "                                  and not m.startswith('baton_tui.core'))}))\n")
    assert json.loads(python(script)) == {"outside": [], "baton": []}


def test_engine_never_imports_textual():
    script = (
        "import importlib, json, sys\n"
        f"names = {engine_modules()!r}\n"
        "failed = {}\n"
        "for name in names:\n"
        "    try:\n"
        "        importlib.import_module(name)\n"
        "    except Exception as exc:\n"
        "        failed[name] = f'{type(exc).__name__}: {exc}'\n"
        "print(json.dumps({'failed': failed,\n"
        "    'textual': sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.')),\n"
        "    'tui': sorted(m for m in sys.modules if m.startswith('baton_tui.tui'))}))\n")
    report = json.loads(python(script, timeout=300))
    assert report["failed"] == {}
    assert report["textual"] == [], "an engine module imported textual"
    assert report["tui"] == [], "an engine module imported baton_tui.tui"


LOADED = (
    "import sys, json\n"
    "from baton_tui.cli import main\n"
    "code = main({argv!r})\n"
    "sys.stdout.flush()\n"
    "heavy = sorted(m for m in sys.modules if m in {heavy!r} or m.split('.')[0] in {heavy!r})\n"
    "print('\\n@@' + json.dumps({{'code': code, 'heavy': heavy}}))\n")


def loaded_by(argv: list[str], cwd: Path, heavy: tuple[str, ...] = HEAVY,
              env: dict[str, str] | None = None) -> dict:
    """The command's exit code and which of `heavy` (packages or modules) it imported."""
    out = python(LOADED.format(argv=argv, heavy=heavy), cwd=cwd, env=env)
    return json.loads(out.rsplit("@@", 1)[1])


@pytest.mark.parametrize("argv", [["status"], ["status", "--json"], ["--help"], ["log", "--json"],
                                  ["log"]])
def test_fast_commands_import_nothing_heavy(repo, baton, argv):
    write_plan(repo / "p.json", [{"id": 1, "title": "a", "player": "codex"},
                                 {"id": 2, "title": "b", "player": "codex", "depends_on": [1]}])
    assert baton("plan", "--from", "p.json").returncode == 0
    report = loaded_by(argv, repo)
    assert report["code"] == 0
    assert report["heavy"] == []


# What `baton report` (run by every agent at the end of every task) has no use for: the rules
# and the snapshot the rest of the façade loads, `dataclasses` (it imports `inspect`, `ast`
# and `dis`), `typing`, argparse (its forms are parsed by cli._quick), OpenSSL through
# `hashlib`/`hmac` (one nonce is hashed), `pathlib` (the store is opened by its name), and
# everything `baton status` may not load either.
NOT_FOR_REPORT = (*HEAVY, "baton_tui.core.rules", "baton_tui.store.snapshot",
                  "baton_tui.store.foldcache", "dataclasses", "inspect", "typing", "argparse",
                  "hashlib", "hmac", "_hashlib", "pathlib")


def test_report_imports_only_the_report_channel(repo, baton):
    write_plan(repo / "p.json", [{"id": 1, "title": "a", "player": "codex"}])
    assert baton("plan", "--from", "p.json").returncode == 0
    from baton_tui.workspace import Workspace

    ws = Workspace(repo)
    attempt = ws.store.new_attempt(ws.store.current_plan_id(), 1, "bnc_hygiene", "codex", {}, "")
    env = {"BATON_STATE": str(ws.paths.store_path), "BATON_TASK": "1",
           "BATON_ATTEMPT": str(attempt), "BATON_NONCE": "bnc_hygiene"}
    for argv in (["report", "progress", "halfway"], ["report", "done", "--summary", "x"],
                 ["report", "progress", "counting", "--tokens", "1200", "--cost", "0.25"]):
        report = loaded_by(argv, repo, NOT_FOR_REPORT, env)
        assert report == {"code": 0, "heavy": []}
    assert ws.store.attempt(attempt).report["summary"] == "x"  # the import check saw real reports
    assert loaded_by(["report", "done", "--summary", "x"], repo, NOT_FOR_REPORT) == {
        "code": 2, "heavy": []}  # outside a task: refused, after the same imports


def test_version_is_answered_without_the_parser(repo):
    """`baton --version` (the binary's start, timed against `python -c pass`) builds no
    parser: argparse is never imported."""
    report = loaded_by(["--version"], repo, ("argparse", *HEAVY))
    assert report == {"code": 0, "heavy": []}


def test_the_facade_provides_every_name_it_lists():
    script = ("import baton_tui.api as api\n"
              "names = {}\n"
              "exec('from baton_tui.api import *', names)\n"
              "assert sorted(set(names) - {'__builtins__'}) == api.__all__\n"
              "assert set(api.__all__) <= set(dir(api))\n"
              "print(api.report.__module__, api.Snapshot.__module__)\n")
    assert python(script).split() == ["baton_tui.api.agents", "baton_tui.core.snapshot"]


def test_importtime_of_status_lists_no_heavy_module(repo, baton):
    write_plan(repo / "p.json", [{"id": 1, "title": "a", "player": "codex"}])
    assert baton("plan", "--from", "p.json").returncode == 0
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "baton_tui", "status"],
                            cwd=repo, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0
    modules = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
               if line.startswith("import time:") and "|" in line}
    assert "baton_tui.store.snapshot" in modules  # the measurement saw the real work
    assert not {m for m in modules if m.split(".")[0] in HEAVY}


def test_help_text_is_complete(repo):
    result = subprocess.run([sys.executable, "-m", "baton_tui", "--help"], cwd=repo,
                            capture_output=True, text=True)
    assert result.returncode == 0
    for word in ("plan", "task-player", "approve", "status", "handoff", "exit codes"):
        assert word in result.stdout


def test_the_early_conductor_starts_before_the_runs_own_imports():
    # `baton run` starts its conductor first thing: nothing of the plan, the store or
    # pydantic may be needed to do so, or the conductor would start that much later.
    script = ("import sys\n"
              "from baton_tui import api\n"
              "early = api.conductor_ahead()\n"
              "early.drop()\n"
              "heavy = [m for m in ('pydantic', 'sqlite3', 'baton_tui.run.control',\n"
              "                     'baton_tui.plan.model') if m in sys.modules]\n"
              "print(heavy)\n")
    assert python(script) == "[]\n"


def test_baton_run_starts_its_conductor_before_parsing_and_drops_it_unused(tmp_path):
    # `baton run` starts its conductor before argparse is even imported; a command that ends
    # without using it (here a usage error) leaves no conductor behind, cued or not.
    script = ("import sys\n"
              "from baton_tui import cli\n"
              "from baton_tui.run import early\n"
              "made = []\n"
              "start = early.Early.__init__\n"
              "def spy(self):\n"
              "    start(self)\n"
              "    made.append((self, 'argparse' in sys.modules))\n"
              "early.Early.__init__ = spy\n"
              "code = cli.main(['run', '--no-such-option'])\n"
              "(ahead, parsed), = made\n"
              "print(code, parsed, ahead.proc, early._first)\n")
    assert python(script, cwd=tmp_path) == "2 False None None\n"


def test_the_conductor_started_first_is_used_only_in_the_environment_it_was_started_in():
    # A kept demo's sample sets the demo's home and model in the environment before its run
    # starts: a conductor started before that would run on the person's own home instead.
    script = ("import os\n"
              "from baton_tui.run import early\n"
              "early.start_first()\n"
              "first = early._first\n"
              "same = early.taken()\n"
              "early.start_first()\n"
              "second = early._first\n"
              "os.environ['BATON_HOME'] = '/somewhere/else'\n"
              "fresh = early.taken()\n"
              "print(same is first, fresh is second, second.proc, fresh.proc is not None)\n"
              "same.drop()\n"
              "fresh.drop()\n")
    assert python(script) == "True False None True\n"

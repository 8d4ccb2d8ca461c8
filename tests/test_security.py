"""Security (issue 16): each attack, done for real, and the outcome Baton pins for it.

An agent inside one task and a careless plan author are the attackers. Real git
repositories, real `baton` subprocesses, real agent programs (the demo agent and the
small programs in tests/agents/), the real SQLite store — nothing mocked.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import sys
from pathlib import Path

import pytest

from helpers.core import BatonCLI
from helpers.run_kit import (
    events, git, kinds, load_plan, program, script_agent, states, status, task, task_status,
    wait_state, write_config,
)

ESC = "\x1b"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def state_dir(repo: Path) -> Path:
    return repo / ".git" / "baton"


def files_under(*roots: Path) -> list[Path]:
    return [p for root in roots if root.exists() for p in root.rglob("*") if p.is_file()]


# -- reports that cannot be forged ----------------------------------------------------------
def test_one_task_cannot_report_for_another(repo, baton, tmp_path):
    """Task 1 reads the store and tries to report done for task 2; task 2 then exits 1
    without reporting. Every forged report is refused and logged; task 2 fails."""
    marker = tmp_path / "impersonator-done"
    victim = [sys.executable, "-c", "import pathlib, sys, time\nsys.stdin.read()\n"
              "p = pathlib.Path(sys.argv[1])\nfor _ in range(900):\n"
              "    if p.exists(): break\n    time.sleep(0.1)\nprint('victim quits')\nsys.exit(1)",
              str(marker)]
    write_config(repo, {"impostor": program("impersonator.py", "2", str(marker)),
                        "victim": victim})
    load_plan(baton, [task(1, "Impostor", player="impostor"), task(2, "Victim", player="victim")])
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert states(baton) == {1: "landed", 2: "failed"}
    assert "without reporting" in task_status(baton, 2)["reason"]
    evs = events(baton)
    assert "task.reported" not in kinds(evs, 2)
    refused = [e for e in evs if e["kind"] == "task.report_refused"]
    assert len(refused) >= 3, refused  # own nonce, claimed task, the store's hashes
    failed = [e for e in evs if e["kind"] == "task.done" and e.get("task") == 1]
    assert failed and failed[-1]["data"]["summary"] == "my own work"
    out = (Path(_attempt_dir(repo, 1)) / "output.log").read_text()
    assert "victim attempt, own nonce) exit status: 2" in out
    assert "own attempt, victim task) exit status: 2" in out
    assert "store token 0) exit status: 2" in out  # it found hashes, and they are useless


def test_a_checkout_holding_a_baton_package_cannot_answer_for_the_report(repo, baton, tmp_path):
    """An agent's `baton report` runs Baton's own code, never a `baton_tui` package in the
    worktree it runs in (a repository of Baton itself, or one planted to forge reports):
    the planted package here would turn the report into a silent exit 0."""
    planted = "import sys\nprint('the planted package answered')\nsys.exit(0)\n"
    agent = script_agent(tmp_path, "planter", {"1": [
        {"write": "baton_tui/__init__.py", "content": planted},
        {"write": "baton_tui/__main__.py", "content": planted},
        {"report": "done", "summary": "reported through Baton"},
        {"checkpoint": "a step that needs a yes"}]})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "Plants a package")])
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert states(baton) == {1: "landed"}
    evs = events(baton)
    reported = [e for e in evs if e["kind"] == "task.reported"]
    assert reported and reported[0]["data"]["summary"] == "reported through Baton"
    assert "task.checkpoint" in kinds(evs, 1)  # `baton checkpoint` was Baton's too
    out = (Path(_attempt_dir(repo, 1)) / "output.log").read_text()
    assert "the planted package answered" not in out


def test_a_repository_holding_a_baton_package_runs_none_of_it(repo, baton, tmp_path):
    """Baton's own processes — the conductor, the attempt shims, the MCP server — run Baton's
    code, never a `baton_tui` package the repository (so every worktree) holds: `python -m
    baton_tui conductor` in the checkout ran that package, before the repository was trusted.
    (The command itself is the installed `baton`, as a person types it.)"""
    import shutil
    import subprocess

    agent = script_agent(tmp_path, "plain", {"*": [{"write": "done.txt", "content": "ok\n"},
                                                   {"report": "done", "summary": "done"}]})
    agent.insert(1, "-P")  # the agent program is Baton's demo agent: it must not be taken either
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "One"), task(2, "Two", deps=[1])])
    marker = tmp_path / "the-repository-package-ran"
    planted = f"import pathlib\npathlib.Path({str(marker)!r}).touch()\nraise SystemExit(3)\n"
    (repo / "baton_tui" / "run").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py", "run/__init__.py"):
        (repo / "baton_tui" / name).write_text(planted)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a package named like Baton's")
    script = shutil.which("baton", path=str(Path(sys.executable).parent))
    assert script, "the baton console script is not installed beside this Python"
    result = subprocess.run([script, "run", "--approve"], cwd=repo, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not marker.exists()
    shown = subprocess.run([script, "status", "--json"], cwd=repo, capture_output=True,
                           text=True, timeout=60)
    assert {t["id"]: t["state"] for t in json.loads(shown.stdout)["tasks"]} == \
        {1: "landed", 2: "landed"}


def _attempt_dir(repo: Path, task_id: int) -> str:
    with sqlite3.connect(state_dir(repo) / "baton.db") as conn:
        row = conn.execute("SELECT log_path FROM attempts WHERE task_id = ? ORDER BY id DESC",
                           (task_id,)).fetchone()
    return str(Path(row[0]).parent)


def test_an_old_store_is_migrated_on_open(repo, baton):
    """A store written before hashing: its nonces become hashes, its spec.env names only,
    its files private — the first time any command opens it."""
    from baton_tui.store import db

    folder = state_dir(repo)
    folder.mkdir(mode=0o755)
    path = folder / "baton.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(db.SCHEMA.replace("nonce_hash TEXT NOT NULL", "nonce TEXT NOT NULL"))
        conn.execute("INSERT INTO attempts (plan_id, task_id, nonce, player, spec) VALUES "
                     "(1, 1, 'bnc_0123456789abcdef0123456789abcdef', 'a', ?)",
                     (json.dumps({"env": {"GITHUB_TOKEN": "ghp_" + "S3cr3t" * 6}}),))
    os.chmod(path, 0o644)
    assert baton("status").returncode == 0
    raw = path.read_bytes() + b"".join(p.read_bytes() for p in folder.glob("baton.db-*"))
    assert b"S3cr3t" not in raw and b"0123456789abcdef0123456789abcdef" not in raw
    with sqlite3.connect(path) as conn:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(attempts)")}
        spec = json.loads(conn.execute("SELECT spec FROM attempts").fetchone()[0])
        digest = conn.execute("SELECT nonce_hash FROM attempts").fetchone()[0]
    assert "nonce" not in cols and spec == {"env_names": ["GITHUB_TOKEN"]}
    assert db.nonce_matches("bnc_0123456789abcdef0123456789abcdef", digest)
    assert (mode(folder), mode(path)) == (0o700, 0o600)


# -- secrets that stay secret ---------------------------------------------------------------
SECRETS = {
    "GITHUB_TOKEN": "ghp_" + "Ab1" * 12,
    "OPENAI_API_KEY": "sk-proj-" + "Zx9Yw8" * 5,
    "MY_SERVICE_SECRET": "plain-words-no-shape-42",
}
CONFIGURED = "deploy-hook-value-9f8e7d"   # a configured [players.*] env value, any name


def test_no_secret_reaches_the_store_home_or_json(repo, baton, tmp_path):
    """A full run whose agents print, report and fail with secrets: nothing Baton keeps
    (state dir, BATON_HOME but the 0600 raw logs) or prints (--json, text) holds one."""
    leaks = " ".join([*SECRETS.values(), CONFIGURED, "Bearer abcdefghijklmnop0123"])
    agent = script_agent(tmp_path, "talker", {
        "1": [{"print": f"env says {leaks}"}, {"progress": f"halfway {leaks}"},
              {"write": "out.txt", "content": "work\n"},
              {"report": "done", "summary": f"did it; saw {leaks}"}],
        "2": [{"print": f"crashing with {leaks}"}, {"report": "failed", "reason": f"no: {leaks}"}],
        "3": [{"print": f"{leaks}"}, {"exit": 1}],
    })
    write_config(repo, {"talker": agent}, extra=(
        f'\n[players.custom.talker.env]\nDEPLOY_HOOK = "{CONFIGURED}"\n'))
    load_plan(baton, [task(1, "Works", player="talker",
                           check="echo check $GITHUB_TOKEN $MY_SERVICE_SECRET"),
                      task(2, "Fails", player="talker"), task(3, "Crashes", player="talker")])
    env = dict(SECRETS)
    result = baton("run", "--approve", timeout=120, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    assert states(baton) == {1: "landed", 2: "failed", 3: "failed"}
    home = Path(os.environ["BATON_HOME"])
    raw_logs = [p for p in files_under(home) if p.name == "output.log"]
    assert raw_logs and all(mode(p) == 0o600 for p in raw_logs)
    assert any(CONFIGURED in p.read_text() for p in raw_logs)  # the agent really leaked it
    kept = [p for p in files_under(state_dir(repo), home) if p.name != "output.log"]
    shown = [baton(*argv, env=env).stdout for argv in (
        ["status", "--json"], ["log", "--json"], ["status"], ["log"], ["logs", "1"],
        ["logs", "2"], ["handoff", "review", "--json"], ["plan", "--json"])]
    shown.append(git(repo, "log", "--format=%B", "--all"))
    for secret in [*SECRETS.values(), CONFIGURED, "abcdefghijklmnop0123"]:
        for path in kept:
            assert secret.encode() not in path.read_bytes(), (secret, path)
        for text in shown:
            assert secret not in text, (secret, text[:2000])
    assert "[redacted]" in baton("log", "--json").stdout
    assert (mode(state_dir(repo)), mode(state_dir(repo) / "baton.db")) == (0o700, 0o600)
    with sqlite3.connect(state_dir(repo) / "baton.db") as conn:
        specs = [json.loads(r[0]) for r in conn.execute("SELECT spec FROM attempts")]
    assert all("env" not in s and "DEPLOY_HOOK" in s["env_names"] for s in specs)
    assert all("BATON_NONCE" in s["env_names"] for s in specs)


def test_a_secret_from_the_runs_environment_stays_redacted_in_a_terminal_without_it(
        repo, baton, tmp_path):
    """The run was started from a shell holding the secrets; `baton logs`, `log` and `status`
    are read from another one that has none of them: the values the agent echoed (of no
    known shape) are redacted all the same — by the fingerprints its attempt recorded."""
    env = {"MY_SERVICE_SECRET": "plain-words-no-shape-42", "API_KEY_PROD": "Shapeless99x",
           "KEYCLOAK_URL": "kc-host-not-secret-1"}
    agent = script_agent(tmp_path, "talker", {"*": [
        {"print": "env says plain-words-no-shape-42, API_KEY_PROD=Shapeless99x."},
        {"print": "url https://me:plain-words-no-shape-42@example.test/ and kc-host-not-secret-1"},
        {"report": "failed", "reason": "no: Shapeless99x"}]})
    write_config(repo, {"talker": agent})
    load_plan(baton, [task(1, "Talks", player="talker")])
    assert baton("run", "--approve", timeout=120, env=env).returncode == 1
    raw = [p for p in files_under(Path(os.environ["BATON_HOME"])) if p.name == "output.log"]
    assert any("plain-words-no-shape-42" in p.read_text() for p in raw)  # it really leaked
    assert "MY_SERVICE_SECRET" not in os.environ and "API_KEY_PROD" not in os.environ
    logs = baton("logs", "1")
    assert logs.returncode == 0, logs.stderr
    assert "env says [redacted], API_KEY_PROD=[redacted]." in logs.stdout
    assert "https://me:[redacted]@example.test/" in logs.stdout
    assert "kc-host-not-secret-1" in logs.stdout  # KEYCLOAK_URL's name is not a secret's
    for argv in (["logs", "1"], ["log"], ["log", "--json"], ["status"], ["status", "--json"]):
        out = baton(*argv).stdout
        assert "plain-words-no-shape-42" not in out and "Shapeless99x" not in out, (argv, out)
    with sqlite3.connect(state_dir(repo) / "baton.db") as conn:
        specs = [r[0] for r in conn.execute("SELECT spec FROM attempts")]
    assert specs and not any("plain-words" in s or "Shapeless" in s for s in specs)


# -- trust with no side doors -----------------------------------------------------------------
def test_every_path_that_starts_a_conductor_checks_trust(repo, baton, tmp_path):
    """An agent rewrote baton.toml mid-run. Every way to start the conductor or run one of its
    commands — CLI, the façade the TUI calls, `baton players` — refuses, runs nothing and
    changes nothing."""
    agent = script_agent(tmp_path, "agent", {
        "1": [{"checkpoint": "drop the old table"}, {"report": "done", "summary": "dropped"}],
        "2": [{"report": "failed", "reason": "cannot"}],
    })
    config = write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "Asks first", checkpoint=True), task(2, "Fails"),
                      task(3, "By hand", mode="manual")], approve=True)
    result = baton("run", timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert states(baton) == {1: "checkpoint", 2: "failed", 3: "queued"}

    marker = tmp_path / "pwned"
    evil_bin = tmp_path / "evil-bin"
    evil_bin.write_text(f"#!/bin/sh\ntouch {marker}-bin\n")
    evil_bin.chmod(0o755)
    config.write_text(config.read_text().replace(
        json.dumps(agent), json.dumps(["sh", "-c", f"touch {marker}-agent"]))
        + f'\n[worktree]\nsetup = "touch {marker}-setup"\n[checks]\nrun = "touch {marker}-check"\n'
        + f'[players.claude-code]\nbin = "{evil_bin}"\n')
    before = len(events(baton))

    for argv in (["run"], ["run", "--approve"], ["resume"], ["retry", "2"], ["done", "3"],
                 ["done", "2"], ["checkpoint-answer", "1", "yes"], ["checkpoint-answer", "1", "no"],
                 ["run", "--detach"], ["resume", "--detach"]):
        result = baton(*argv)
        assert result.returncode == 2, (argv, result.stdout, result.stderr)
        assert "baton trust" in result.stderr and "Traceback" not in result.stderr, argv

    from baton_tui import api  # what the TUI's keys call

    ws = api.open_workspace(repo)
    for call in (lambda: api.start_run(ws), lambda: api.resume_run(ws),
                 lambda: api.retry_task(ws, 2), lambda: api.mark_done(ws, 3),
                 lambda: api.answer_checkpoint(ws, 1, True)):
        with pytest.raises(api.BatonError, match="baton trust"):
            call()
    ws.close()

    players = baton("players", "--json")
    assert players.returncode == 0, players.stderr
    ready = {p["name"]: p for p in json.loads(players.stdout)}
    assert not ready["agent"]["ready"] and "not trusted" in ready["agent"]["reason"]
    assert not ready["claude-code"]["ready"]

    assert not list(tmp_path.glob("pwned*")), list(tmp_path.glob("pwned*"))
    assert len(events(baton)) == before
    assert states(baton) == {1: "checkpoint", 2: "failed", 3: "queued"}
    assert status(baton)["conductor"] is None


def test_the_mcp_tools_start_nothing(repo, baton):
    """`baton mcp`'s tools only report for the attempt that started them: outside one they are
    refused and start no conductor."""
    from baton_tui.channel import mcp_server

    for name in ("BATON_STATE", "BATON_ATTEMPT", "BATON_NONCE"):
        assert name not in os.environ
    assert mcp_server._report("done", "x").startswith("refused")
    assert mcp_server._checkpoint("drop it").startswith("refused")
    assert not state_dir(repo).exists()


# -- writes outside the worktree --------------------------------------------------------------
def _outside_agent(tmp_path: Path, repo: Path) -> list[str]:
    return script_agent(tmp_path, "outsider", {
        "1": [{"write": str(repo / "evil.txt"), "content": "pwned\n"},
              {"append": str(repo / "README.md"), "content": "appended by an agent\n"},
              {"write": "mine.txt", "content": "in my worktree\n"},
              {"report": "done", "summary": "done, and then some"}],
        "2": [{"write": "next.txt", "content": "after\n"},
              {"report": "done", "summary": "clean"}],
    })


DETECT_ONLY = "\n[worktree]\nprotect_checkout = false\n"  # let the writes happen: detection


def test_writes_outside_the_worktree_hold_a_guarded_task(repo, baton, tmp_path):
    write_config(repo, {"agent": _outside_agent(tmp_path, repo)}, extra=DETECT_ONLY)
    load_plan(baton, [task(1, "Writes outside"), task(2, "Stays inside", deps=[1])],
              approve=True)
    result = baton("run", timeout=120)
    assert result.returncode == 3, result.stdout + result.stderr  # waits for the person
    t1 = task_status(baton, 1)
    assert t1["state"] == "checkpoint"
    assert "evil.txt" in t1["checkpoint"]["what"] and "README.md" in t1["checkpoint"]["what"]
    outside = [f for f in t1["flags"] if f["kind"] == "outside"]
    assert outside and "evil.txt" in outside[0]["detail"] and "README.md" in outside[0]["detail"]
    text = baton("status").stdout
    assert "⚑ outside" in text and "evil.txt" in text

    assert baton("checkpoint-answer", "1", "yes").returncode == 0
    wait_state(baton, 1, "landed", timeout=60)
    wait_state(baton, 2, "landed", timeout=60)
    t2 = task_status(baton, 2)
    assert not [f for f in t2["flags"] if f["kind"] == "outside"]  # no false alarm
    review = baton("handoff", "review", "--stat")
    assert review.returncode == 0 and "⚑ outside" in review.stdout and "evil.txt" in review.stdout
    # Detected, not undone: the person's tree still holds what the agent wrote.
    assert (repo / "evil.txt").exists()


def test_writes_outside_the_worktree_are_flagged_in_watch_mode(repo, baton, tmp_path):
    write_config(repo, {"agent": _outside_agent(tmp_path, repo)}, extra=DETECT_ONLY)
    load_plan(baton, [task(1, "Writes outside")], autonomy="watch")
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    t1 = task_status(baton, 1)
    assert t1["state"] == "landed"
    assert any(f["kind"] == "outside" and "evil.txt" in f["detail"] for f in t1["flags"])


TRESPASSER = """
import pathlib, subprocess, sys
sys.stdin.read()
repo = pathlib.Path(sys.argv[1])
def attempt(what, write):
    try:
        write()
        print(f"{what}: written", flush=True)
    except OSError as exc:
        print(f"{what}: refused ({exc.strerror})", flush=True)
attempt("evil", lambda: (repo / "evil.txt").write_text("pwned"))
attempt("readme", lambda: open(repo / "README.md", "a").write("appended"))
attempt("hook", lambda: (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh"))
attempt("config", lambda: open(repo / ".git" / "config", "a").write("[core]"))
pathlib.Path("mine.txt").write_text("mine")
git = subprocess.run(["git", "add", "mine.txt"], capture_output=True, text=True)
git = git.returncode or subprocess.run(["git", "commit", "-qm", "agent commit"],
                                       capture_output=True, text=True).returncode
print(f"git in the worktree: exit {git}", flush=True)
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "tried"]).returncode)
"""


def test_the_checkout_is_read_only_to_agents_where_the_os_allows(repo, baton, tmp_path):
    from baton_tui.runners import readonly

    why = readonly.available()
    if why:
        pytest.skip(f"the checkout cannot be made read-only here ({why}): detection only")
    readme, config = (repo / "README.md").read_text(), (repo / ".git" / "config").read_text()
    write_config(repo, {"agent": [sys.executable, "-c", TRESPASSER, str(repo)]})
    load_plan(baton, [task(1, "Trespasser")])
    result = baton("run", "--approve", timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    out = baton("logs", "1").stdout
    for what in ("evil", "readme", "hook", "config"):
        assert f"{what}: refused (Read-only file system)" in out, out
    assert "git in the worktree: exit 0" in out  # the agent's own worktree and branch work
    assert not (repo / "evil.txt").exists() and not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert (repo / "README.md").read_text() == readme
    assert (repo / ".git" / "config").read_text() == config
    t1 = task_status(baton, 1)
    assert t1["state"] == "landed" and not t1["flags"], t1


# -- git pinned to the task's repository ------------------------------------------------------
def test_a_worktree_without_its_git_never_commits_into_an_enclosing_repo(repo, tmp_path):
    """BATON_HOME inside a dotfiles repository; the agent deletes its worktree's `.git`.
    Baton refuses to commit (git would have found the dotfiles repo) and the task fails."""
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    git(dotfiles, "init", "-q", "-b", "main")
    (dotfiles / ".bashrc").write_text("alias ll='ls -l'\n")
    git(dotfiles, "add", "-A")
    git(dotfiles, "commit", "-q", "-m", "dotfiles")
    (dotfiles / ".netrc").write_text("machine example.com password hunter2\n")
    env = {"BATON_HOME": str(dotfiles / ".local" / "share" / "baton")}
    baton = BatonCLI(repo)
    agent = script_agent(tmp_path, "vandal", {"*": [
        {"delete": ".git"}, {"write": "work.txt", "content": "work\n"},
        {"report": "done", "summary": "done"}]})
    write_config(repo, {"agent": agent})
    path = repo.parent / "plan.json"
    path.write_text(json.dumps({"version": 1, "goal": "g", "tasks": [task(1, "Vandal")]}))
    for argv in (["plan", "--from", str(path)], ["trust"]):
        assert baton(*argv, env=env).returncode == 0
    result = baton("run", "--approve", timeout=120, env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    t1 = task_status(baton, 1)
    assert t1["state"] == "failed" and ".git" in t1["reason"]
    assert git(dotfiles, "rev-list", "--all", "--count") == "1"
    assert git(dotfiles, "branch", "--format=%(refname:short)") == "main"
    assert "?? .netrc" in git(dotfiles, "status", "--porcelain")


# -- terminal injection -----------------------------------------------------------------------
def test_agent_text_reaches_the_terminal_escaped(repo, baton, tmp_path):
    nasty = f"{ESC}]0;pwned\a{ESC}[2J{ESC}[31mred{ESC}[0m\u202eevil"
    agent = script_agent(tmp_path, "painter", {"*": [
        {"print": nasty}, {"progress": nasty}, {"write": "x.txt", "content": "x\n"},
        {"report": "done", "summary": nasty}]})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "Paints")])
    assert baton("run", "--approve", timeout=120).returncode == 0
    for argv in (["logs", "1"], ["status"], ["log"], ["status", "--json"], ["log", "--json"]):
        out = baton(*argv).stdout
        assert ESC not in out and "\u202e" not in out and "\a" not in out, argv
    assert "\\x1b[31mred" in baton("logs", "1").stdout
    assert ESC not in git(repo, "log", "--format=%B", "--all")


# -- input that breaks the parser: one line, exit 2, nothing changed --------------------------
def _plan(tmp_path: Path, tasks: list, **extra) -> str:
    for spec in tasks:  # a player every machine has: the document is what is under test
        spec.update(player="script", check="true")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"version": 1, "goal": "g", "tasks": tasks, **extra}))
    return str(path)


def _nested(tmp_path: Path) -> str:
    path = tmp_path / "nested.json"
    path.write_text('{"version": 1, "goal": "g", "tasks": ' + "[" * 100_000 + "]" * 100_000 + "}")
    return str(path)


@pytest.mark.parametrize("make,needle", [
    (_nested, "nested too deeply"),
    (lambda t: _plan(t, [task(10**20, "Huge")]), "less than or equal to 999999"),
    (lambda t: _plan(t, [task(1, "A", deps=[10**20])]), "less than or equal to 999999"),
    (lambda t: _plan(t, [task(1, f"Title {ESC}[2J")]), "control character"),
    (lambda t: _plan(t, [task(1, "Nul", prompt="a\0b")]), "control character"),
    (lambda t: _plan(t, [task(1, "Bidi", scope=["src/\u202eevil"])]), "control character"),
    (lambda t: _plan(t, [task(1, "A")], goal=f"g{ESC}]0;x\a"), "control character"),
    (lambda t: "/dev/zero", "larger than"),
    # invisible code points: a person cannot approve what they cannot see
    (lambda t: _plan(t, [task(1, "A", prompt="fix the bug\U000e0049\U000e0067\U000e006e")]),
     "tasks[0] (task 1).prompt: contains U+E0049 at character 12"),
    (lambda t: _plan(t, [task(1, "Zero\u200bwidth")]), "title: contains U+200B"),
    (lambda t: _plan(t, [task(1, "A", prompt="a\u200db")]), "contains U+200D"),
    (lambda t: _plan(t, [task(1, "A")], goal="\ufeffgoal"), "goal: contains U+FEFF"),
    (lambda t: _plan(t, [task(1, "A", prompt="x\u061cy")]), "contains U+061C"),
    (lambda t: _plan(t, [task(1, "A")], questions=[{"question": "which\ufff9?"}]),
     "question: contains U+FFF9"),
    (lambda t: _plan(t, [task(1, "A", prompt="soft\u00adhyphen")]), "contains U+00AD"),
    (lambda t: _plan(t, [task(1, "A", scope=["src/\u2060x"])]), "contains U+2060"),
    (lambda t: _plan(t, [task(1, "A", prompt="e" + "\u0301" * 5)]),
     "contains U+0301 at character 6 (more than 4 combining marks"),
])
def test_bad_plan_input_is_one_line(repo, baton, tmp_path, make, needle):
    before = baton("plan", "--from", _plan(tmp_path, [task(1, "Good")]))
    assert before.returncode == 0
    doc = baton("plan", "--json").stdout
    result = baton("plan", "--from", make(tmp_path), timeout=30)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert needle in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert len(lines) == 1 and ESC not in result.stderr and "\0" not in result.stderr
    assert baton("plan", "--json").stdout == doc


@pytest.mark.parametrize("toml,needle", [
    ("[limits]\nstall = nan\n", "finite"),
    ("[limits]\nstall = 0\n", "more than 0"),
    ("[limits]\nstall = \"0m\"\n", "more than 0"),
    ("[worktree]\ncopy = [\"../../.ssh/id_ed25519\"]\n", "inside the repository"),
    ("[worktree]\ncopy = [\"/etc/shadow\"]\n", "inside the repository"),
    ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
])
def test_bad_config_is_one_line_before_anything_starts(repo, baton, tmp_path, toml, needle):
    (repo / "baton.toml").write_text(toml)
    for argv in (["plan", "--from", _plan(tmp_path, [task(1, "A")])], ["players"]):
        result = baton(*argv)
        assert result.returncode == 2, (argv, result.stdout, result.stderr)
        assert needle in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not state_dir(repo).exists()


def test_visible_text_in_any_script_and_emoji_sequences_are_kept(repo, baton, tmp_path):
    prompt = ("修复登录错误 · إصلاح الخطأ · می\u200cخواهم · Việt · क्षत्रिय · "
              "👩\u200d💻 🏳\ufe0f\u200d🌈 👍🏽 ❤\ufe0f")
    result = baton("plan", "--from", _plan(tmp_path, [task(1, "Ünïcödé 漢字", prompt=prompt)]))
    assert result.returncode == 0, result.stderr
    assert json.loads(baton("plan", "--json").stdout)["tasks"][0]["prompt"] == prompt
    assert "<U+" not in baton("plan").stdout
    edit = baton("task-prompt", "1", "--text", "hidden\u200b")
    assert edit.returncode == 2 and "prompt: contains U+200B" in edit.stderr, edit.stderr
    assert json.loads(baton("plan", "--json").stdout)["tasks"][0]["prompt"] == prompt


def test_a_stored_plan_with_invisible_text_is_shown_escaped_and_reaches_the_agent_escaped(
        repo, baton, tmp_path):
    """A plan stored before invisible code points were refused still loads; everything that
    prints it, and the prompt file the agent reads, has them written out as <U+XXXX>."""
    agent = script_agent(tmp_path, "agent", {"*": [{"report": "done", "summary": "ok"}]})
    write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "Visible")], approve=True)
    hidden = "Do task 1.\U000e0049\U000e0047\U000e004e\u200b"
    with sqlite3.connect(state_dir(repo) / "baton.db") as conn:
        (doc,), = conn.execute("SELECT doc FROM plans")
        stored = json.loads(doc)
        stored["tasks"][0].update(title="Visi\u200bble", prompt=hidden)
        conn.execute("UPDATE plans SET doc = ?", (json.dumps(stored),))
    shown_prompt = "Do task 1.<U+E0049><U+E0047><U+E004E><U+200B>"
    assert "Visi<U+200B>ble" in baton("plan").stdout
    assert task_status(baton, 1)["title"] == "Visi<U+200B>ble"
    assert baton("run", timeout=120).returncode == 0
    prompts = list(Path(os.environ["BATON_HOME"]).glob("**/prompt.md"))
    assert len(prompts) == 1
    text = prompts[0].read_text()
    assert shown_prompt in text and "Visi<U+200B>ble" in text
    assert "\u200b" not in text and "\U000e0049" not in text


def test_huge_task_ids_and_missing_folders_on_the_command_line(repo, baton):
    for argv in (["logs", str(10**20)], ["task-title", str(10**20), "x"], ["done", "-1"],
                 ["-C", "/nonexistent/folder", "status"]):
        result = baton(*argv)
        assert result.returncode == 2 and "Traceback" not in result.stderr, (argv, result.stderr)
    assert "nonexistent" in baton("-C", "/nonexistent/folder", "status").stderr


def test_read_only_commands_outside_a_repository_create_nothing(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    cli = BatonCLI(folder)
    for argv in (["status"], ["status", "--json"], ["log"], ["log", "--json"], ["logs", "1"],
                 ["plan"], ["plan", "--json"], ["handoff", "review"], ["autonomy"],
                 ["gc", "--dry-run"], ["players", "--json"], ["doctor"]):
        result = cli(*argv)
        assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr, argv
        assert list(folder.iterdir()) == [], (argv, list(folder.iterdir()))


def test_a_retry_checks_trust_once_so_a_file_changed_after_it_strands_nothing(repo, baton,
                                                                              tmp_path):
    """baton.toml changes in the window between `retry`'s trust check and the conductor's
    start (a profile hook rewrites it as `spawn_conductor` is entered). The retry was allowed,
    so it goes through: the task does not sit queued with no conductor; the changed command
    is refused where it would run, and the task fails saying so."""
    agent = script_agent(tmp_path, "agent", {"*": [{"report": "failed", "reason": "cannot"}]})
    config = write_config(repo, {"agent": agent})
    load_plan(baton, [task(1, "Fails")], approve=True)
    assert baton("run", timeout=120).returncode == 1
    assert states(baton) == {1: "failed"}

    marker = tmp_path / "pwned"
    changed = config.read_text().replace(json.dumps(agent),
                                         json.dumps(["sh", "-c", f"touch {marker}"]))
    from baton_tui import api
    from baton_tui.run import control

    def rewrite_on_spawn(frame, event, _arg):
        if event == "call" and frame.f_code is control.spawn_conductor.__code__:
            config.write_text(changed)

    ws = api.open_workspace(repo)
    sys.setprofile(rewrite_on_spawn)
    try:
        pid = api.retry_task(ws, 1)
    finally:
        sys.setprofile(None)
        ws.close()
    assert pid and config.read_text() == changed
    failed = wait_state(baton, 1, "failed", timeout=60)
    assert "baton trust" in failed["reason"], failed
    assert not marker.exists()

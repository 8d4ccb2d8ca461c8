"""Worktree set-up: `[worktree] copy` and `[worktree] setup` — through the real CLI, and on the
real conductor with scripted agents (`helpers.scripted_kit`: the worktree is made as the local
runner makes it).

`copy` brings ignored files (`.env`) into each new task worktree; `setup` is a shell string from
the repository's baton.toml, so it runs only once that file is trusted, once per new worktree,
and a failing set-up fails the task with its output attached.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from conftest import git, write_plan

from baton_tui.core.errors import BatonError
from baton_tui.run import control
from helpers.scripted_kit import Scripted



def configure(repo: Path, baton, script: dict, worktree_toml: str, *, trust: bool = True) -> Path:
    """baton.toml with the scripted agent `bot` and a `[worktree]` table; returns the script."""
    script_path = repo.parent / "agent-script.json"
    script_path.write_text(json.dumps(script))
    argv = [sys.executable, "-m", "baton_tui.demo.agent", str(script_path)]
    (repo / "baton.toml").write_text(
        f"[players.custom.bot]\ncommand = {json.dumps(argv)}\n\n[worktree]\n{worktree_toml}\n")
    (repo / ".gitignore").write_text(".env\n.prepared\n")
    git(repo, "add", "baton.toml", ".gitignore")
    git(repo, "commit", "-q", "-m", "baton.toml")
    if trust:
        assert baton("trust").returncode == 0
    return script_path


def task(id: int, title: str, **extra) -> dict:
    return {"id": id, "title": title, "prompt": f"do {title}", "player": "bot", **extra}


def load(repo: Path, baton, tasks: list[dict]) -> None:
    plan = write_plan(repo.parent / "plan.json", tasks, goal="Setup goal")
    assert baton("plan", "--from", str(plan)).returncode == 0


def status_tasks(baton) -> dict[int, dict]:
    return {t["id"]: t for t in baton.json("status", "--json")["tasks"]}


def events(baton, kind: str) -> list[dict]:
    out = baton("log", "--json")
    assert out.returncode == 0
    return [e for e in map(json.loads, out.stdout.splitlines()) if e["kind"] == kind]


def worktree_of(baton, task_id: int) -> Path:
    return next(Path(e["data"]["workdir"]) for e in events(baton, "task.started")
                if e["task"] == task_id)


DONE = [{"write": "app.txt", "content": "app\n"}, {"report": "done", "summary": "ok"}]


@pytest.mark.slow
def test_failing_setup_fails_the_task_with_its_output(repo, baton):
    configure(repo, baton, {"*": DONE},
              "setup = \"echo installing deps; echo 'npm ERR! boom' >&2; exit 7\"")
    load(repo, baton, [task(1, "Needs deps")])
    result = baton("run", "--approve")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED" in result.stdout and "exited 7" in result.stdout
    state = status_tasks(baton)[1]
    assert state["state"] == "failed"
    assert "setup" in state["reason"] and "exited 7" in state["reason"]
    assert state["attempts"] == 0  # the agent never started
    failed = events(baton, "task.failed")
    assert len(failed) == 1 and failed[0]["task"] == 1
    output = failed[0]["data"]["output"]
    assert "installing deps" in output and "npm ERR! boom" in output
    assert events(baton, "task.started") == []


@pytest.mark.slow
def test_setups_run_side_by_side_while_starts_take_turns(repo, baton, tmp_path):
    """Starts take turns on the cores (`placing.Turns`, as wide as the machine), but a start
    steps out of its turn while its set-up runs: here every set-up waits until all of them
    have begun, which only happens when more of them run at once than there are turns."""
    import os

    n = max(4, (os.cpu_count() or 2) + 2)
    barrier = tmp_path / "begun"
    barrier.mkdir()
    wait_for_all = (f'touch {barrier}/$(basename $PWD); i=0; '
                    f'while [ $(ls {barrier} | wc -l) -lt {n} ] && [ $i -lt 600 ]; '
                    f'do sleep 0.1; i=$((i+1)); done; [ $(ls {barrier} | wc -l) -ge {n} ]')
    configure(repo, baton, {"*": DONE}, f"setup = {json.dumps(wait_for_all)}")
    with (repo / "baton.toml").open("a") as toml:
        toml.write(f"\n[limits]\nmax_parallel = {n}\n")
    git(repo, "commit", "-q", "-am", "max_parallel")
    assert baton("trust").returncode == 0
    load(repo, baton, [task(i, f"Task {i}") for i in range(1, n + 1)])
    result = baton("run", "--approve", timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    assert {t["state"] for t in status_tasks(baton).values()} == {"landed"}
    assert len(list(barrier.iterdir())) == n


# On the real conductor with scripted agents -------------------------------------------------
def scripted(repo: Path, worktree_toml: str, *, trust: bool = True, tasks: list[dict]
             ) -> Scripted:
    run = Scripted(repo)
    run.config(players=("bot",), extra=f"[worktree]\n{worktree_toml}\n")
    (repo / ".gitignore").write_text(".env\n.prepared\n")
    git(repo, "add", "baton.toml", ".gitignore")
    git(repo, "commit", "-q", "-m", "baton.toml")
    run.plan(tasks, trust=trust, goal="Setup goal")
    return run


def started_in(run: Scripted, task_id: int) -> Path:
    return next(Path(e["data"]["workdir"]) for e in run.events()
                if e["kind"] == "task.started" and e["task"] == task_id)


@pytest.mark.parametrize("copy", [True, False], ids=["copy", "no-copy"])
def test_copy_brings_an_ignored_file_into_the_worktree(repo, copy):
    (repo / ".env").write_text("TOKEN=s3cret\n")
    # the check runs in the task's worktree: it sees .env only when it was copied in
    run = scripted(repo, 'copy = [".env"]' if copy else "",
                   tasks=[task(1, "Uses the env", check="grep -qx TOKEN=s3cret .env")])
    code = run.run({"*": DONE})
    state, tree = run.task(1), started_in(run, 1)
    if not copy:
        assert code == 1 and state["state"] == "failed"
        assert not (tree / ".env").exists()
        return
    assert code == 0 and state["state"] == "landed"
    assert (tree / ".env").read_text() == "TOKEN=s3cret\n"
    # an ignored file copied in is never committed onto the task's branch
    files = git(repo, "ls-tree", "-r", "--name-only", state["branch"]).splitlines()
    assert "app.txt" in files and ".env" not in files


def test_setup_runs_once_per_new_worktree_before_the_agent(repo, tmp_path):
    log = tmp_path / "setup.log"
    # the check proves set-up ran in the worktree before the agent's work was judged
    run = scripted(repo, f'setup = "pwd >> {log} && echo prepared > .prepared"',
                   tasks=[task(1, "First", check="test -f .prepared"),
                          task(2, "Second", check="test -f .prepared")])
    assert run.run({"1": DONE, "2": [{"report": "failed", "reason": "not yet"}]}) == 1
    assert (run.task(1)["state"], run.task(2)["state"]) == ("landed", "failed")
    trees = {i: started_in(run, i) for i in (1, 2)}
    ran = log.read_text().splitlines()
    assert sorted(ran) == sorted(str(p.resolve()) for p in trees.values())
    assert not (repo / ".prepared").exists()

    # a retry reuses the task's worktree: set-up does not run again
    assert run.conduct({"*": DONE}, lambda ws: control.retry_task(ws, 2)) == 0
    assert run.task(2)["state"] == "landed"
    assert log.read_text().splitlines() == ran


def test_failing_setup_makes_the_run_exit_1(repo):
    run = scripted(repo, 'setup = "exit 7"', tasks=[task(1, "Needs deps")])
    assert run.run({"*": DONE}) == 1
    assert run.task(1)["state"] == "failed"


def test_setup_runs_only_from_a_trusted_file(repo, tmp_path):
    log = tmp_path / "setup.log"
    run = scripted(repo, f'setup = "echo ran >> {log}"', trust=False,
                   tasks=[task(1, "Anything")])
    with pytest.raises(BatonError) as untrusted:
        run.run({"*": DONE})
    assert untrusted.value.code == 2
    said = untrusted.value.message
    assert "not trusted" in said and "worktree.setup" in said and "baton trust" in said
    assert not log.exists()
    assert run.task(1)["state"] in ("draft", "queued")

    trust(run)
    # an edit after trusting is refused again
    toml = repo / "baton.toml"
    toml.write_text(toml.read_text().replace("echo ran", "echo changed"))
    with pytest.raises(BatonError) as changed:
        run.run({"*": DONE})
    assert changed.value.code == 2 and "changed since you trusted it" in changed.value.message
    assert not log.exists()

    trust(run)
    assert run.run({"*": DONE}) == 0
    assert log.read_text() == "changed\n"


def trust(run: Scripted) -> None:
    from baton_tui.api import agents
    from baton_tui.workspace import Workspace

    run.ws = Workspace(run.repo)
    agents.trust(run.ws)

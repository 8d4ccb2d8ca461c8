"""Agents contained where the read-only view cannot be made (issue 49): no unprivileged user
namespaces, as in many containers. There Landlock holds an agent's writes to its own places.

A machine without user namespaces is made for real: Baton runs inside a user namespace whose
`user.max_user_namespaces` is used up by the one nested namespace it runs in, so the view's
`unshare(CLONE_NEWUSER)` fails (ENOSPC) exactly as in such a container — no switch in Baton's
code is flipped. Hostile scripted agents (tests/agents/) then write Baton's store and a
running sibling's worktree, its prompt and through `..`, with the real `baton` in real git
repositories.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import write_plan
from helpers.containment_kit import integration_ref
from helpers.real_cli_kit import attempt_logs, worktree
from helpers.real_players import CLAUDE_CODE, CODEX_PLAYER
from helpers.run_kit import events, git, load_plan, program, task, task_status, write_config

UNSHARE = shutil.which("unshare")


def _without_namespaces(argv: list[str]) -> list[str]:
    """`argv` run where no further user namespace can be made: an outer namespace (mapped to
    root, so it may set its own limit) allows one more, and the inner one (mapped back to
    this user) uses it up."""
    if UNSHARE is None:
        return []
    inner = ["unshare", "--user", f"--map-user={os.getuid()}", f"--map-group={os.getgid()}"]
    script = 'echo 1 > /proc/sys/user/max_user_namespaces && exec "$@"'
    return [UNSHARE, "--user", "--map-root-user", "sh", "-c", script, "sh", *inner, *argv]


def _baton_without_namespaces(cwd: Path, *args: str, timeout: float,
                              env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    from baton_tui.runners import readonly

    argv = [sys.executable, "-m", "baton_tui", *args]
    if readonly.available() is None:  # this machine has them: take them away
        argv = _without_namespaces(argv)
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})


@pytest.fixture
def held(repo):
    """Skips unless Landlock is here and namespaces can be taken away (or are absent)."""
    from baton_tui.runners import landlock, readonly

    if why := landlock.available():
        pytest.skip(why)
    if readonly.available() is None:
        probe = _without_namespaces([sys.executable, "-c",
                                     "from baton_tui.runners import readonly;"
                                     "print(readonly.available())"])
        done = subprocess.run(probe, capture_output=True, text=True, timeout=60) if probe else None
        if done is None or done.returncode != 0 or "not allowed" not in done.stdout:
            pytest.skip(f"cannot take user namespaces away here: {done and done.stderr}")


def test_without_namespaces_landlock_keeps_agents_off_the_store_and_a_running_siblings_worktree(
        repo, baton, tmp_path, held):
    """Task 2's agent, while task 1's agent runs, appends to every other worktree (by its
    path and through `..`) and to the other task's prompt; task 3's agent writes Baton's
    SQLite file. Every such write is refused; their own work and reports (over the
    channel) land, and the shim's log says Landlock held them."""
    signals = tmp_path / "signals"  # beside the repository: `tmp_path` itself leads to it, so
    signals.mkdir()                 # no new entry can be made directly in it
    running, done = signals / "running", signals / "done"
    write_config(repo, {
        "victim": program("sibling_writer.py", f"signal:{running}", f"wait:{done}"),
        "writer": program("sibling_writer.py", f"wait:{running}", "worktree", "dotdot",
                          "prompt", f"signal:{done}"),
        "store": program("store_writer.py")})
    load_plan(baton, [task(1, "Victim", player="victim"), task(2, "Writer", player="writer"),
                      task(3, "Store", player="store", deps=[1])])
    result = _baton_without_namespaces(repo, "run", "--approve", timeout=240)
    assert result.returncode == 0, result.stdout + result.stderr
    writer = baton("logs", "2").stdout
    for what in ("worktree", "dotdot", "prompt"):
        assert f"{what} " in writer and f"{what} injected.txt: written" not in writer, writer
    assert "refused (Permission denied)" in writer and "written" not in writer, writer
    store = baton("logs", "3").stdout
    assert "store event: refused" in store and "store report: refused" in store, store
    assert [task_status(baton, n)["state"] for n in (1, 2, 3)] == ["landed"] * 3
    files = git(repo, "ls-tree", "-r", "--name-only", integration_ref(repo)).splitlines()
    assert "injected.txt" not in files and "own-work.txt" in files
    landed = [e for e in events(baton) if e["kind"] == "task.landed"]
    assert sorted(e["task"] for e in landed) == [1, 2, 3], landed  # no forged one
    shim_logs = list(Path(os.environ["BATON_HOME"]).glob("runs/*/*/task-*/attempt-*/shim.log"))
    said = "".join(p.read_text() for p in shim_logs)
    assert said.count("Landlock (ABI") == 3, said


@pytest.fixture(params=[CLAUDE_CODE, CODEX_PLAYER], ids=lambda p: p.name)
def real_player(request):
    """Claude Code and Codex as `.ci/run` installs them (skipped loudly, or failing in CI,
    where they are not)."""
    request.param.require()
    return request.param


def test_a_real_cli_works_under_landlock_and_cannot_write_the_store(
        real_player, server, baton, repo, tmp_path, held):
    """The real CLI, against the scripted model server, in a run without namespaces: it
    writes its file with its own tool, tries Baton's store from its shell (refused: the
    answer lands in its worktree), and reports done with `baton report` over the channel.
    Its config and cache folders under `$HOME` stay writable to it."""
    plan = write_plan(tmp_path / "plan.json", [
        {"id": 1, "title": "Write hello", "prompt": "Create hello.txt.",
         "player": real_player.name, "mode": "build"}])
    assert baton("plan", "--from", str(plan)).returncode == 0
    home = Path(os.environ["HOME"])
    (home / ".claude.json").write_text("{}")  # the person's, as after any use of Claude Code
    wt = worktree(repo, baton, 1)
    probe = ('(printf x >> "$BATON_STATE" && echo written || echo refused) > store.txt 2>&1; '
             'baton report done --summary "wrote hello.txt under landlock"')
    server.add_turns(real_player.conversation(
        {"text": "Writing the file.", **real_player.write(wt / "hello.txt", "hello\n")},
        real_player.shell(probe), {"text": "Reported."}))
    result = _baton_without_namespaces(repo, "run", "--approve", timeout=240,
                                       env=real_player.env(server))
    assert result.returncode == 0, result.stdout + attempt_logs(repo)[-4000:]
    assert task_status(baton, 1)["state"] == "landed"
    denied = [line for line in attempt_logs(repo).replace("\\n", "\n").splitlines()
              if "Permission denied" in line and "baton.db" not in line]
    assert not denied, denied  # the store alone: its temp files went to a folder of its own
    assert "wrote hello.txt under landlock" in str(task_status(baton, 1)["last_report"])
    landed = integration_ref(repo)
    assert git(repo, "show", f"{landed}:hello.txt") == "hello"
    assert "refused" in git(repo, "show", f"{landed}:store.txt")
    said = "".join(p.read_text() for p in Path(os.environ["BATON_HOME"]).glob(
        "runs/*/*/task-*/attempt-*/shim.log"))
    assert "Landlock (ABI" in said, said
    if real_player is CLAUDE_CODE:  # no rename over it in `$HOME`: written in place
        assert "firstStartTime" in (home / ".claude.json").read_text()


def _writes_after_restrict(grants: list[tuple[str, bool]], attempts: list[Path]) -> list[str]:
    """In a child that restricted itself to `grants`: what each append to `attempts` did."""
    from baton_tui.runners import landlock

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child only reports through the pipe
        try:
            landlock.restrict(grants)
            said = []
            for path in attempts:
                try:
                    with open(path, "a") as fh:
                        fh.write("x")
                    said.append("written")
                except OSError as exc:
                    said.append(exc.strerror or "refused")
            os.write(write_end, "\n".join(said).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as fh:
        out = fh.read().splitlines()
    os.waitpid(pid, 0)
    return out


def test_the_allow_list_is_the_views_plan_the_deepest_path_deciding(tmp_path):
    """Read-only paths with writable holes in them: beside them everything stays writable,
    but a folder on the way to one takes no new entry (its files are written in place); a
    link into a read-only path, or another process's `/proc/PID/root`, grants nothing."""
    from baton_tui.runners import landlock

    if why := landlock.available():
        pytest.skip(why)
    home = tmp_path / "home"
    repo, store = home / "repo", home / "repo" / ".git" / "baton"
    objects, mine = home / "repo" / ".git" / "objects", home / "baton-home" / "wt" / "mine"
    sibling = home / "baton-home" / "wt" / "sibling"
    for folder in (store, objects, mine, sibling, home / ".cache"):
        folder.mkdir(parents=True)
    (home / ".claude.json").write_text("{}")
    (home / "into-repo").symlink_to(repo)
    plan = {"ro": [str(repo), str(home / "baton-home")],
            "rw": [str(objects), str(mine)]}
    grants = landlock.writable(plan)
    assert (str(home / ".claude.json"), False) in grants and (str(home), True) not in grants
    said = _writes_after_restrict(grants, [
        store / "baton.db", sibling / "f", repo / "f", objects / "f", mine / "f",
        home / ".cache" / "f", home / ".claude.json", home / "new-file", home / "into-repo" / "g",
        tmp_path / "beside", Path(f"/proc/{os.getpid()}/root") / store.relative_to("/") / "f"])
    assert said == ["Permission denied", "Permission denied", "Permission denied", "written",
                    "written", "written", "written", "Permission denied",
                    "Permission denied", "Permission denied", "Permission denied"], said

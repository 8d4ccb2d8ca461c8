"""A store or `$BATON_HOME` that cannot be written: one line, exit 2, and the store untouched.

Read-only is made for real: a read-only bind mount when the tests run as root (root writes
through any file mode), file modes otherwise. A full disk is a small tmpfs filled up. Where
the machine allows neither, the test is skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from pathlib import Path

import pytest

from helpers.run_kit import events, load_plan, script_agent, status, task, write_config

pytestmark = pytest.mark.slow


@contextlib.contextmanager
def read_only(path: Path):
    """`path` (a folder) read-only for this process and its children."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [path, *path.rglob("*")]}
        for p in modes:
            p.chmod(modes[p] & 0o555)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    if subprocess.run(["mount", "--bind", str(path), str(path)], capture_output=True).returncode:
        pytest.skip("cannot make a read-only folder here (root, but no bind mounts)")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True,
                       capture_output=True)
        yield
    finally:
        subprocess.run(["umount", str(path)], check=True)


def approved_plan(repo: Path, baton, tmp_path: Path, *, failed: bool = False) -> None:
    """An approved one-task plan; with `failed`, run once, its task failed."""
    steps = [{"report": "failed", "reason": "not yet"}] if failed else [
        {"write": "x.txt", "content": "x\n"}, {"report": "done", "summary": "x"}]
    write_config(repo, {"agent": script_agent(tmp_path, "a", {"*": steps})})
    load_plan(baton, [task(1)], approve=True)
    if failed:
        assert baton("run", timeout=90).returncode == 1


def store_dir(repo: Path) -> Path:
    return repo / ".git" / "baton"


def snapshot_of(folder: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("command", [["run"], ["run", "--detach"], ["resume"], ["retry", "1"]])
def test_a_read_only_baton_home_refuses_with_one_line_and_changes_nothing(
        repo, baton, tmp_path, command):
    approved_plan(repo, baton, tmp_path, failed=command[0] in ("resume", "retry"))
    home = Path(os.environ["BATON_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    before = snapshot_of(store_dir(repo))
    with read_only(home):
        result = baton(*command)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "cannot write Baton's home" in result.stderr, result.stderr
    assert snapshot_of(store_dir(repo)) == before  # not one byte of the store changed


def test_a_read_only_store_is_read_and_refuses_changes_with_one_line(repo, baton, tmp_path):
    approved_plan(repo, baton, tmp_path)
    before = snapshot_of(store_dir(repo))
    with read_only(store_dir(repo)):
        st = baton("status", "--json")
        assert st.returncode == 0, st.stderr  # reading still works
        for command in (["run"], ["autonomy", "watch"], ["task-title", "1", "New"]):
            result = baton(*command)
            assert result.returncode == 2, (command, result.stdout + result.stderr)
            assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
            assert "read-only" in result.stderr, result.stderr
    assert snapshot_of(store_dir(repo)) == before


def test_each_command_leaves_the_store_whole_in_its_one_file(repo, baton, tmp_path):
    """A command exits without the interpreter's teardown, but closes its store first: the
    last connection folds the write-ahead log back, so the database file alone — copied,
    backed up, opened by a tool that ignores side files — holds every change made."""
    import shutil
    import sqlite3

    approved_plan(repo, baton, tmp_path)
    assert baton("task-title", "1", "Renamed").returncode == 0  # voids the approval
    assert baton("approve").returncode == 0
    assert not (store_dir(repo) / "baton.db-wal").exists()
    alone = tmp_path / "copy" / "baton.db"
    alone.parent.mkdir()
    shutil.copyfile(store_dir(repo) / "baton.db", alone)
    with sqlite3.connect(f"{alone.as_uri()}?immutable=1", uri=True) as db:
        approved, doc = db.execute("SELECT approved, doc FROM plans ORDER BY id DESC").fetchone()
    assert approved and '"Renamed"' in doc


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MiB file system (tmpfs), filled on demand; skipped where it cannot be mounted."""
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)],
                          capture_output=True)
    if made.returncode:
        pytest.skip("cannot mount a small file system here (needs root)")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path) -> Path:
    filler = folder / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    return filler


def test_a_full_disk_is_one_line_for_an_agents_report_and_recorded_by_the_conductor(
        small_disk, tmp_path, monkeypatch):
    from helpers.core import BatonCLI, git

    repo = small_disk / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# small\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "initial")
    baton = BatonCLI(repo)
    said = tmp_path / "report.said"
    # The agent fills the disk, then reports (a report's text is bigger than any page the
    # store could reuse), and notes what `baton report` said.
    agent = script_agent(tmp_path, "full", {"*": [{"write": "x.txt", "content": "x\n"}]})
    program = tmp_path / "filler_agent.sh"
    program.write_text(
        "#!/bin/sh\ncat >/dev/null\n"
        f"{' '.join(agent)} </dev/null\n"
        f"dd if=/dev/zero of={small_disk}/filler bs=64k 2>/dev/null\n"
        f"baton report done --summary \"$(head -c 3000 /dev/zero | tr '\\0' y)\" "
        f"2> {said}; echo \"exit $?\" >> {said}\n")
    program.chmod(0o755)
    write_config(repo, {"agent": [str(program)]})
    load_plan(baton, [task(1)], approve=True)
    run = baton("run", timeout=120)
    assert run.returncode != 0 and "Traceback" not in run.stderr, run.stdout + run.stderr
    lines = said.read_text().splitlines()
    assert lines[-1] == "exit 2", lines
    assert lines[:-1] == [lines[0]] and "disk is full" in lines[0], lines
    (small_disk / "filler").unlink()
    # The conductor stopped visibly, saying why (its reserve made room for that line) ...
    evs = events(baton)
    crashed = [e for e in evs if e["kind"] == "conductor.crashed"]
    assert crashed and "disk is full" in crashed[-1]["data"]["error"], [e["kind"] for e in evs]
    assert status(baton)["conductor"] is None
    # ... which `status` says in one line beside "not running", not only conductor.log ...
    shown = [line for line in baton("status").stdout.splitlines() if "conductor:" in line]
    assert len(shown) == 1 and "not running — it stopped unexpectedly" in shown[0], shown
    assert "disk is full" in shown[0] and "baton resume" in shown[0], shown
    assert "disk is full" in status(baton)["plan"]["conductor_died"]
    # ... and with room again, `baton resume` finishes the run: the report never counted,
    # and the task says its report was refused for the full disk (not that it vanished).
    resumed = baton("resume", timeout=120)
    assert resumed.returncode == 1, resumed.stdout + resumed.stderr
    one = status(baton)["tasks"][0]
    assert one["state"] == "failed", one
    assert one["reason"].startswith("its report (done) was refused: ") and \
        "the disk is full" in one["reason"] and "baton retry 1" in one["reason"], one
    assert status(baton)["plan"]["conductor_died"] is None  # a conductor ran since

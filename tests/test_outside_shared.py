"""The checkout's fingerprint is shared by the tasks that ask at once (run/outside.py): one
`git status` begun after they asked serves them all — never one begun before a caller asked,
so a write just before a start or an end is always seen."""

from __future__ import annotations

import threading
import time

from helpers.gitops_fixtures import isolated_git, make_repo, write

from baton_tui.run import outside
from baton_tui.workspace import Workspace

__all__ = ["isolated_git"]


def _slow_and_counted(monkeypatch, delay: float) -> list[float]:
    """Each real look at the checkout records when it began, and ends `delay` after it."""
    began: list[float] = []
    real = outside._checkout

    def look(ws):
        began.append(time.monotonic())
        found = real(ws)
        time.sleep(delay)
        return found

    monkeypatch.setattr(outside, "_checkout", look)
    return began


def test_tasks_asking_at_once_share_one_look_at_the_checkout(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    began = _slow_and_counted(monkeypatch, 0.3)
    results: dict[int, dict] = {}
    gate = threading.Barrier(8)

    def ask(n: int) -> None:
        ws = Workspace(repo)
        gate.wait()
        results[n] = outside.fingerprint(ws)["checkout"]

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8
    assert len(began) <= 2  # eight starts, one look (two if one was already under way)


def test_a_write_before_asking_is_seen_even_while_an_older_look_runs(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    _slow_and_counted(monkeypatch, 0.4)
    first: dict = {}
    early = threading.Thread(target=lambda: first.update(
        outside.fingerprint(Workspace(repo))["checkout"]))
    early.start()
    time.sleep(0.1)  # its look is under way, and began before this write
    write(repo, "evil.txt", "written by an agent\n")
    second = outside.fingerprint(Workspace(repo))["checkout"]
    early.join()
    assert "evil.txt" in second
    assert "evil.txt" not in first


def test_a_failed_look_fails_every_caller_that_shared_it(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")

    def broken(ws):
        time.sleep(0.2)
        raise OSError("no git here")

    monkeypatch.setattr(outside, "_checkout", broken)
    errors: list[str] = []
    gate = threading.Barrier(3)

    def ask() -> None:
        gate.wait()
        try:
            outside.fingerprint(Workspace(repo))
        except OSError as exc:
            errors.append(str(exc))

    threads = [threading.Thread(target=ask) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == ["no git here"] * 3
    monkeypatch.undo()
    assert outside.fingerprint(Workspace(repo))["checkout"] == {}  # the next look is fresh


def test_a_look_begun_once_no_agent_ran_serves_the_next_start_but_only_then(tmp_path,
                                                                           monkeypatch):
    repo = make_repo(tmp_path / "repo")
    ws = Workspace(repo)
    quiet = time.monotonic()  # the last agent ended here
    outside.fingerprint(ws)  # the look after it (taken by its finish)
    write(repo, "by-the-person.txt", "typed between two tasks\n")
    # The next task starts: no agent ran since that look began, so it stands for the checkout.
    assert "by-the-person.txt" not in outside.fingerprint(ws, quiet)["checkout"]
    # An agent ran after that look began (a later quiet time): the checkout is looked at again.
    assert "by-the-person.txt" in outside.fingerprint(ws, time.monotonic())["checkout"]


def test_an_old_look_or_a_baton_branch_checked_out_is_never_reused(tmp_path, monkeypatch):
    repo = make_repo(tmp_path / "repo")
    ws = Workspace(repo)
    quiet = time.monotonic()
    outside.fingerprint(ws)
    write(repo, "held.txt", "written while a task waited for the person\n")
    monkeypatch.setattr(outside, "REUSED_FOR", 0.0)  # that look is older than allowed now
    assert "held.txt" in outside.fingerprint(ws, quiet)["checkout"]
    monkeypatch.undo()
    quiet = time.monotonic()
    outside.fingerprint(ws)
    write(repo, "after.txt", "x\n")
    git_dir = repo / ".git"
    (git_dir / "HEAD").write_text("ref: refs/heads/baton/goal/integration\n")  # landings move it
    assert "after.txt" in outside.fingerprint(ws, quiet)["checkout"]


def test_the_first_starts_of_a_run_share_the_look_under_way(tmp_path, monkeypatch):
    # No agent has run yet: nothing but the person can have written the checkout since the
    # look under way began, so the run's first starts need no second `git status`.
    repo = make_repo(tmp_path / "repo")
    began = _slow_and_counted(monkeypatch, 0.4)
    results: dict[int, dict] = {}
    leader = threading.Thread(target=lambda: results.update(
        {0: outside.fingerprint(Workspace(repo))["checkout"]}))
    leader.start()
    deadline = time.monotonic() + 30
    while not began and time.monotonic() < deadline:  # its look is under way
        time.sleep(0.01)

    def ask(n: int) -> None:
        results[n] = outside.fingerprint(Workspace(repo), join=True)["checkout"]

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(1, 4)]
    for t in threads:
        t.start()
    for t in [leader, *threads]:
        t.join()
    assert len(results) == 4
    assert len(began) == 1

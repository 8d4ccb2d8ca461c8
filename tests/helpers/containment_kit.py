"""Helpers for the containment tests (tests/test_containment*.py): hostile agents moving refs
and writing into siblings' places, and what Baton records about them — read through the
real `baton` CLI and real git."""

from __future__ import annotations

import threading
from pathlib import Path

from helpers.run_kit import events, git, task_status, wait_for

DETECT_ONLY = "\n[worktree]\nprotect_checkout = false\n"  # no read-only view: detection


def flags(baton, task_id: int, kind: str) -> list[dict]:
    """Task `task_id`'s flags of `kind` (`ref`, `sibling`, `outside` …), as `status` gives them."""
    return [f for f in task_status(baton, task_id)["flags"] if f["kind"] == kind]


def branch_ref(baton, task_id: int) -> str:
    """Task `task_id`'s branch, as a full ref."""
    return f"refs/heads/{task_status(baton, task_id)['branch']}"


def integration_ref(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname)", "refs/heads/baton/*/integration")


def assert_put_back(repo: Path, baton, branch: str, tip: str, how: str,
                    victim: int = 1, mover: int = 2) -> None:
    """`branch` (task `victim`'s) is back at `tip`; the `mover` task is flagged `ref` saying
    the branch `how` (e.g. "was deleted") and put back, the victim is not; one repair recorded."""
    assert git(repo, "rev-parse", branch) == tip
    short = branch.removeprefix("refs/heads/")
    flagged = flags(baton, mover, "ref")
    assert flagged and flagged[0]["detail"].startswith(f"{short} {how}"), flagged
    assert f"put back at {tip[:12]}" in flagged[0]["detail"], flagged
    assert not flags(baton, victim, "ref")
    repaired = [e["data"] for e in events(baton) if e["kind"] == "run.repaired"]
    assert [(r["ref"], r["commit"]) for r in repaired] == [(branch, tip)], repaired


def run_past_a_failure(baton, go: Path) -> dict:
    """`run --approve` in the foreground until task 1 has failed; then `go` is written (the
    file a waiting agent polls for) and the run let finish. Its result is under "result"."""
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.update(
        result=baton("run", "--approve", timeout=180)))
    runner.start()
    try:
        wait_for(lambda: task_status(baton, 1)["state"] == "failed", 120,
                 what="task 1 to fail")
    finally:
        go.write_text("go\n")
        runner.join(200)
    return outcome

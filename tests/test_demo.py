"""`baton demo` end to end: a sample repository, a six-task plan on the scripted agent, the
summary, the handoff diff stat and the merge — offline, no key, under a minute."""

from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest

from conftest import git

pytestmark = pytest.mark.slow


def test_demo_runs_end_to_end(tmp_path):
    base = tmp_path / "demo"
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "baton_tui", "demo", "--dir", str(base)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120,
                            stdin=subprocess.DEVNULL)
    elapsed = time.monotonic() - started
    out = result.stdout
    assert result.returncode == 0, out + result.stderr
    assert elapsed < 60, f"the demo took {elapsed:.1f}s"

    # the plan: six tasks, one research task, dependencies
    assert "Survey the package" in out and "research" in out
    # the run and its summary
    span = r"(?:\d+h)?(?:\d+m)?\d+[sm]"
    assert re.search(rf"run: wall {span} · task time {span} · speedup [\d.]+×", out)
    # the handoff diff stat, then the merge in plan order
    assert "5 landed tasks" in out
    for n, title in ((2, "Count words"), (3, "Count lines"), (4, "Command line"),
                     (5, "Tests"), (6, "Document usage")):
        assert f"── task {n}: {title}" in out
        assert f"merged task {n} onto main" in out or f"task {n} was already merged" in out
    assert "merged task 2 onto main" in out
    assert "all landed work is on main" in out
    assert "tests on main after the merge: pass" in out
    assert out.index("landed tasks") < out.index("merged task 2") \
        < out.index("tests on main after the merge")

    repo = base / "textstats"
    assert git(repo, "branch", "--show-current") == "main"
    assert git(repo, "status", "--porcelain") == ""
    log = git(repo, "log", "--format=%s", "main")
    for n, title in ((2, "Count words"), (3, "Count lines"), (4, "Command line"), (5, "Tests")):
        assert f"Merge task {n}: {title}" in log.splitlines()
    # every build task's branch is on main, and so is its work
    branches = git(repo, "for-each-ref", "--format=%(refname:short)", "refs/heads/baton/")
    task_branches = [b for b in branches.split() if not b.endswith("/integration")]
    assert len(task_branches) == 5
    for branch in task_branches:
        assert subprocess.run(["git", "merge-base", "--is-ancestor", branch, "main"],
                              cwd=repo).returncode == 0, branch
    for path in ("textstats/words.py", "textstats/lines.py", "textstats/cli.py",
                 "tests/test_textstats.py"):
        assert (repo / path).is_file(), path
    assert "## Usage" in (repo / "README.md").read_text()
    tests = subprocess.run([sys.executable, "-m", "unittest", "-q"], cwd=repo,
                           capture_output=True, text=True)
    assert tests.returncode == 0, tests.stderr
    # the demo's worktrees live beside it, not in the person's Baton home
    assert (base / "baton-home" / "worktrees").is_dir()
    # every event of the whole run carries only the keys its kind's typed payload declares
    from baton_tui.store.db import Store
    from test_events import payload_problems

    with Store(repo / ".git" / "baton" / "baton.db", create=False) as store:
        events = store.events()
    assert len(events) > 30 and payload_problems(events) == []


def test_demo_refuses_a_dir_it_already_used(tmp_path):
    base = tmp_path / "demo"
    (base / "textstats").mkdir(parents=True)
    result = subprocess.run([sys.executable, "-m", "baton_tui", "demo", "--dir", str(base)],
                            cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "already exists" in result.stderr

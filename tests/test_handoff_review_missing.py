"""`baton handoff review` when there is no integration branch to read — approved but never
run, or the branch deleted since — is one clear line and exit 2, never git's traceback."""

from __future__ import annotations

from helpers.handoff_kit import FILES, TASKS, git, landed_plan

from conftest import write_plan


def one_line(result, needle: str) -> None:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert result.stderr.startswith("baton: ") and needle in result.stderr, result.stderr


def test_approved_but_never_run(repo, baton):
    write_plan(repo / "p.json", [{"id": 1, "title": "Smoke", "player": "script", "check": "true"}])
    assert baton("plan", "--from", "p.json").returncode == 0
    assert baton("approve").returncode == 0
    for argv in (["handoff", "review"], ["handoff", "review", "--stat"],
                 ["handoff", "review", "--json"]):
        one_line(baton(*argv), "no task has landed yet: there is nothing to review")


def test_integration_branch_deleted_after_landing(repo, baton):
    ws = landed_plan(repo, TASKS[:2], {1: FILES[1], 2: FILES[2]})
    slug = ws.store.current_plan().slug
    ws.close()
    assert baton("handoff", "review", "--stat").returncode == 0  # (before: it reads)
    git(repo, "branch", "-D", f"baton/{slug}/integration")
    one_line(baton("handoff", "review"), f"the integration branch baton/{slug}/integration is gone")


def test_task_branch_deleted_after_landing(repo, baton):
    ws = landed_plan(repo, TASKS[:2], {1: FILES[1], 2: FILES[2]})
    slug = ws.store.current_plan().slug
    ws.close()
    git(repo, "branch", "-D", f"baton/{slug}/2-count-lines")
    one_line(baton("handoff", "review", "--task", "2"),
             f"task branch baton/{slug}/2-count-lines is gone")

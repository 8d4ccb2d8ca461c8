"""What a task's detail shows beyond its card: report, check output, diff.

The TUI reads it in a thread worker (store rows, git), never on its event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from baton_tui.gitops import git, landing
from baton_tui.store.db import Store
from baton_tui.core.views import Folder, TaskView


@dataclass(frozen=True)
class DetailData:
    report: str
    check: str
    diff: str
    log_path: str | None


def _report(store: Store, plan_id: int, task_id: int) -> tuple[str, str | None]:
    tried = store.attempts(plan_id, task_id)
    if not tried:
        return "no attempt yet", None
    attempt = tried[-1]  # numbered per task (the store's ids run across the plan)
    report = attempt.report or {}
    lines = [f"attempt {len(tried)} · {attempt.player}"
             + (f" · exit {attempt.exit_status}" if attempt.exit_status is not None else "")]
    for key in ("status", "summary", "reason"):
        if report.get(key):
            lines.append(f"{key}: {report[key]}")
    return "\n".join(lines), attempt.log_path


def _check(view: TaskView) -> str:
    if view.check is None:
        return "no check output yet"
    return (f"exit {view.check['exit']}\n" + str(view.check.get("output", ""))).strip()


def _diff(root: Path, base: str | None, branch: str | None) -> str:
    if not branch:
        return "this task has no branch (research and manual tasks change nothing)"
    if not base:
        return "no diff yet: the plan has not been approved and run"
    if git.rev_parse(root, f"refs/heads/{branch}") is None:
        return f"no diff yet: {branch} does not exist"
    text = landing.diff_text(root, base, f"refs/heads/{branch}")
    return text or "no changes on the branch yet"


def load_detail(store_path: Path, root: Path, plan_id: int, task_id: int,
                base: str | None, branch: str | None) -> DetailData:
    with Store(store_path) as store:
        report, log_path = _report(store, plan_id, task_id)
        view = Folder().feed(store.events(plan_id, task_id=task_id)).view(task_id)
    check = _check(view)
    base = view.base or base  # only the task's own changes
    try:
        diff = _diff(root, base, branch)
    except Exception as exc:  # a git failure is shown, not raised into the UI
        diff = f"the diff could not be read: {exc}"
    return DetailData(report, check, diff, log_path)

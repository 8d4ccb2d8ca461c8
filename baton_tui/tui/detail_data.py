"""What the task-detail screen shows beyond the card: report, check output, diff.

Read in a thread worker (store rows, git through the engine's gitops), never on the
event loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from baton_tui.store.db import Store


@dataclass(frozen=True)
class DetailData:
    report: str
    check: str
    diff: str
    log_path: str | None


def _report(store: Store, plan_id: int, task_id: int) -> tuple[str, str | None]:
    attempt = store.latest_attempt(plan_id, task_id)
    if attempt is None:
        return "no attempt yet", None
    report = attempt.report or {}
    lines = [f"attempt {attempt.id} · {attempt.player}"
             + (f" · exit {attempt.exit_status}" if attempt.exit_status is not None else "")]
    for key in ("status", "summary", "reason"):
        if report.get(key):
            lines.append(f"{key}: {report[key]}")
    return "\n".join(lines), attempt.log_path


def _check(store: Store, plan_id: int, task_id: int) -> str:
    found = [e for e in store.events(plan_id, task_id=task_id) if e.kind == "task.check"]
    if not found:
        return "no check output yet"
    data = found[-1].data
    head = " · ".join(f"{k} {data[k]}" for k in ("command", "exit", "status", "passed")
                      if k in data)
    return (head + "\n" + str(data.get("output", ""))).strip()


def _diff(root: Path, base: str | None, branch: str | None) -> str:
    if not branch:
        return "this task has no branch (research and manual tasks change nothing)"
    if not base:
        return "no diff yet: the plan has not been approved and run"
    try:
        from baton_tui.gitops import git, landing
    except ImportError:  # pragma: no cover - gitops ships with the engine
        return "diffs are not available"
    if git.rev_parse(root, branch) is None:
        return f"no diff yet: {branch} does not exist"
    text = landing.diff_text(root, base, branch)
    return text or "no changes on the branch yet"


def load_detail(store_path: Path, root: Path, plan_id: int, task_id: int,
                base: str | None, branch: str | None) -> DetailData:
    with Store(store_path) as store:
        report, log_path = _report(store, plan_id, task_id)
        check = _check(store, plan_id, task_id)
        base = store.task_base(plan_id, task_id) or base  # only the task's own changes
    try:
        diff = _diff(root, base, branch)
    except Exception as exc:  # a git failure is shown, not raised into the UI
        diff = f"the diff could not be read: {exc}"
    return DetailData(report, check, diff, log_path)

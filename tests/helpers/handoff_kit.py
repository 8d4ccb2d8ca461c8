"""A plan whose build tasks have really landed: real branches, real merges on the real
integration branch (`gitops.landing.land`), and the events the conductor would write.

Faster than a run of agents, and the git side is the engine's own code, so the handoff
screen's merges, conflicts and discards meet exactly what a run leaves behind.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from baton_tui.gitops.landing import land
from baton_tui.plan.current import approve, current, store_new_plan
from baton_tui.plan.model import parse_document
from baton_tui.core.slug import integration_branch, task_branch
from baton_tui.core.events import EventKind as K
from baton_tui.workspace import Workspace
from helpers.tui_support import trust

BATON_TOML = '[players.custom.demo]\ncommand = ["python3", "agent.py"]\n'


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def commit_on(repo: Path, branch: str, start: str, files: dict[str, str], message: str) -> None:
    """Commit `files` on a new `branch` cut from `start`, without touching the checkout."""
    tmp = repo.parent / f"wt-{branch.replace('/', '-')}"
    git(repo, "worktree", "add", "-q", "-b", branch, str(tmp), start)
    for rel, text in files.items():
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    git(tmp, "add", "-A")
    git(tmp, "commit", "-q", "-m", message)
    git(repo, "worktree", "remove", "--force", str(tmp))


def landed_plan(repo: Path, tasks: list[dict], files: dict[int, dict[str, str]],
                land_ids: list[int] | None = None) -> Workspace:
    """Store and approve `tasks`, then land each id in `land_ids` (default: all with files)."""
    (repo / "baton.toml").write_text(BATON_TOML)
    git(repo, "add", "baton.toml")
    git(repo, "commit", "-q", "-m", "baton.toml")
    ws = Workspace(repo)
    trust(ws)
    store_new_plan(ws, parse_document({"version": 1, "goal": "Handoff goal", "tasks": tasks}))
    approve(ws)
    cur = current(ws)
    slug, plan_id = cur.row.slug, cur.row.id
    integ = integration_branch(slug)
    git(repo, "branch", integ, cur.row.base_commit)
    for task_id in land_ids if land_ids is not None else list(files):
        spec = cur.doc.task(task_id)
        branch = task_branch(slug, task_id, spec.title)
        # Independent tasks are cut together, from the approved base; dependents after
        # their dependencies landed (as the conductor does).
        cut = git(repo, "rev-parse", f"refs/heads/{integ}") if spec.depends_on \
            else cur.row.base_commit
        commit_on(repo, branch, cut, files[task_id], f"task {task_id}")
        ws.store.append(plan_id, task_id, K.TASK_STARTED, {"attempt": task_id, "base": cut,
                                                            "branch": branch})
        ws.store.append(plan_id, task_id, K.TASK_REPORTED,
                        {"status": "done", "summary": f"{spec.title} is in"})
        ws.store.append(plan_id, task_id, K.TASK_DONE, {"summary": f"{spec.title} is in"})
        ws.store.append(plan_id, task_id, K.TASK_CHECK, {"exit": 0, "output": "3 passed"})
        result = land(repo, branch, integ, f"Land task {task_id}")
        assert result.ok, result
        ws.store.append(plan_id, task_id, K.TASK_LANDED, {"commit": result.commit})
    return ws


TASKS = [
    {"id": 1, "title": "Count words", "prompt": "p", "player": "demo", "scope": ["words.py"]},
    {"id": 2, "title": "Count lines", "prompt": "p", "player": "demo", "scope": ["lines.py"]},
    {"id": 3, "title": "Command line", "prompt": "p", "player": "demo", "depends_on": [1, 2],
     "scope": ["cli.py"]},
]
FILES = {
    1: {"words.py": "def count_words(text):\n    return len(text.split())\n"},
    2: {"lines.py": "def count_lines(text):\n    return text.count('\\n')\n"},
    3: {"cli.py": "from words import count_words\nprint(count_words('a b'))\n",
        "README.md": "# sample\n\nRun cli.py.\n"},
}

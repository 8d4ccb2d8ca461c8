"""Planning overhead outside the model, on a 5,000-file repository ÷ `git ls-files` there.

Overhead = what Baton does around the planner's turns: the repository snapshot for the
first message, parsing and checking a 30-task draft, and the repair bookkeeping (a
rejected draft turned into the repair message, then the valid one stored). Both sides
run in this process, median of several rounds. The issue sets no target; lower is better.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROUNDS = 7


def make_repo(root: Path, files: int = 5000) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@x"}
    for i in range(files):
        path = root / f"pkg{i % 50}" / f"mod{i // 50}" / f"file_{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {i}\n")
    (root / "README.md").write_text("# bench\n" * 50)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "files"], cwd=root, check=True, env=env)


def draft(tasks: int, cyclic: bool) -> dict:
    items = []
    for i in range(1, tasks + 1):
        deps = [i - 1] if i > 1 else ([tasks] if cyclic else [])
        items.append({"id": i, "title": f"task {i}", "prompt": "do it", "player": "mine",
                      "depends_on": deps, "scope": [f"pkg{i}/"], "skills": ["tdd"]})
    return {"version": 1, "goal": "bench", "tasks": items}


def main() -> int:
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        make_repo(root)
        os.environ["BATON_HOME"] = str(Path(tmp) / "home")
        os.environ["XDG_CONFIG_HOME"] = str(Path(tmp) / "config")
        (root / "baton.toml").write_text('[players.custom.mine]\ncommand = ["true"]\n'
                                         'research_command = ["true"]\n')
        from baton_tui.planner import drafting as planner
        from baton_tui.planner import prompt as planner_prompt
        from baton_tui.workspace import Workspace

        def overhead() -> None:
            ws = Workspace(root)
            files = planner_prompt.repo_files(root)
            planner_prompt.instructions("bench", planner_prompt.snapshot(root, files), ["mine"],
                                        None, None, {n: s.when for n, s in ws.skills.items()})
            ready = {"mine"}
            _, problems = planner.check_draft(ws, draft(30, cyclic=True), ready)
            planner_prompt.repair_message(problems)
            doc, problems = planner.check_draft(ws, draft(30, cyclic=False), ready)
            assert doc is not None and not problems, problems
            ws.close()

        def ls_files() -> None:
            subprocess.run(["git", "ls-files"], cwd=root, check=True, capture_output=True)

        overhead()  # warm imports and caches on both sides
        ls_files()
        ours, base = [], []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            overhead()
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            ls_files()
            base.append(time.perf_counter() - start)
        a, b = statistics.median(ours), statistics.median(base)
        print(f"planning overhead {a * 1000:.1f} ms · git ls-files {b * 1000:.1f} ms")
        print(f"ratio: {a / b:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: ``handoff.merge`` versus a bash loop running the same git commands.

Builds a repository with 30 task branches, each touching its own file, then merges them onto
``main`` on identical fresh copies of that repository: once with ``baton_tui.gitops.handoff.merge``
and once with a plain bash loop (``merge-base --is-ancestor``, ``merge-tree --write-tree``,
``merge --no-ff``). Prints the times and ``ratio: X.XX`` (Python / bash; target <= 1.3).
The per-run overhead Baton adds on top of git is its pre-checks (branch, dirty tree) and
Python's process spawning. Run: ``python benchmarks/bench_handoff_merge.py [--tasks N]
[--rounds R]``. Not a test; nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from baton_tui.gitops.handoff import TaskBranch, merge  # noqa: E402

BASH_LOOP = r"""
set -e
for b in "$@"; do
  if git merge-base --is-ancestor "$b" HEAD; then continue; fi
  if ! git merge-tree --write-tree HEAD "$b" >/dev/null; then echo "conflict: $b"; exit 1; fi
  git merge --no-ff --no-edit -m "Merge $b" "$b" >/dev/null
done
"""


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def build(root: Path, n: int) -> tuple[Path, list[TaskBranch]]:
    repo = root / "template"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    for i in range(20):
        (repo / f"base{i}.txt").write_text(f"base {i}\n" * 50)
    sh(repo, "add", "-A")
    sh(repo, "commit", "-q", "-m", "base")
    base = sh(repo, "rev-parse", "HEAD")
    tasks = []
    index = os.environ.copy()
    for i in range(1, n + 1):
        branch = f"baton/bench/{i}-task"
        # Build each branch with plumbing (no checkout): a blob, a tree, a commit, a ref.
        env = {**index, "GIT_INDEX_FILE": str(root / f"idx{i}")}
        subprocess.run(["git", "read-tree", base], cwd=repo, env=env, check=True)
        blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, env=env,
                              input=f"task {i}\n" * 20, capture_output=True, text=True,
                              check=True).stdout.strip()
        subprocess.run(["git", "update-index", "--add", "--cacheinfo",
                        f"100644,{blob},tasks/task{i}.txt"], cwd=repo, env=env, check=True)
        tree = subprocess.run(["git", "write-tree"], cwd=repo, env=env, capture_output=True,
                              text=True, check=True).stdout.strip()
        commit = sh(repo, "commit-tree", tree, "-p", base, "-m", f"task {i}")
        sh(repo, "update-ref", f"refs/heads/{branch}", commit)
        tasks.append(TaskBranch(i, f"task {i}", branch))
    return repo, tasks


def fresh_copy(template: Path, dest: Path) -> Path:
    shutil.copytree(template, dest, symlinks=True)
    return dest


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", type=int, default=30)
    ap.add_argument("--rounds", type=int, default=5)
    opts = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="baton-bench-") as tmp:
        root = Path(tmp)
        cfg = root / "gitconfig"
        cfg.write_text("")
        os.environ.update({
            "GIT_CONFIG_GLOBAL": str(cfg), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root),
            "GIT_AUTHOR_NAME": "Bench", "GIT_AUTHOR_EMAIL": "bench@localhost",
            "GIT_COMMITTER_NAME": "Bench", "GIT_COMMITTER_EMAIL": "bench@localhost",
            "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C",
        })
        template, tasks = build(root, opts.tasks)
        branches = [t.branch for t in tasks]
        py_times, sh_times = [], []
        for r in range(opts.rounds):
            a = fresh_copy(template, root / f"py{r}")
            b = fresh_copy(template, root / f"sh{r}")
            # Alternate the order so neither side always gets the warmer cache.
            order = ("py", "sh") if r % 2 == 0 else ("sh", "py")
            for side in order:
                if side == "py":
                    t0 = time.perf_counter()
                    out = merge(a, "main", tasks)
                    py_times.append(time.perf_counter() - t0)
                    assert out.merged == [t.id for t in tasks], out
                else:
                    t0 = time.perf_counter()
                    subprocess.run(["bash", "-c", BASH_LOOP, "bench", *branches], cwd=b,
                                   check=True)
                    sh_times.append(time.perf_counter() - t0)
            assert sh(a, "rev-parse", "HEAD^{tree}") == sh(b, "rev-parse", "HEAD^{tree}")
        py, bash = statistics.median(py_times), statistics.median(sh_times)
        print(f"tasks: {opts.tasks}  rounds: {opts.rounds}")
        print(f"handoff.merge: {py * 1000:.0f} ms (median)  "
              f"[{', '.join(f'{t * 1000:.0f}' for t in py_times)}]")
        print(f"bash loop:     {bash * 1000:.0f} ms (median)  "
              f"[{', '.join(f'{t * 1000:.0f}' for t in sh_times)}]")
        print(f"ratio: {py / bash:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

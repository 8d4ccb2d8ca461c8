"""A custom agent that writes its work and leaves a git `index.lock` behind in its worktree (as
a git command killed half way does), then reports done.

Baton cannot commit (it never removes a lock it did not make): the task fails after the
report; once the lock is gone, `baton retry` commits and lands without running the agent.
usage: lock_leaver.py RUNS   (appends a line to RUNS each time it runs)
"""

import subprocess
import sys
from pathlib import Path

sys.stdin.read()
with open(sys.argv[1], "a") as fh:
    fh.write("ran\n")
Path("locked-work.txt").write_text("work behind a lock\n")
git_dir = subprocess.run(["git", "rev-parse", "--git-dir"], capture_output=True, text=True,
                         check=True).stdout.strip()
(Path(git_dir) / "index.lock").write_text("")
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "left a lock"]).returncode)

"""A custom agent that writes its work, then deletes its worktree's `.git` and reports done.

The task fails (Baton will not run git in a folder that is no longer a worktree); a retry
repairs the worktree and keeps every file. On a second run (FLAG exists) it behaves.
usage: git_deleter.py FLAG
"""

import os
import subprocess
import sys
from pathlib import Path

sys.stdin.read()
flag = Path(sys.argv[1])
if flag.exists():
    Path("second.txt").write_text("written by the retry\n")
else:
    flag.write_text("ran once\n")
    Path("first.txt").write_text("written before .git was deleted\n")
    os.remove(".git")
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "wrote"]).returncode)

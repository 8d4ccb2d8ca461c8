"""A custom agent that leaves its task's branch: `git checkout -b other` (or `--detach`), commits
part of its work there, leaves the rest uncommitted, then reports done.

Baton must put the work on the task's branch anyway (never "landed" with nothing landed).
usage: branch_hopper.py new-branch|detach
"""

import subprocess
import sys

sys.stdin.read()
how = sys.argv[1]
git = ["git", "-c", "user.name=Agent", "-c", "user.email=agent@example.com"]
subprocess.run(git + (["checkout", "-q", "-b", "other"] if how == "new-branch"
                      else ["checkout", "-q", "--detach"]), check=True)
with open("committed.txt", "w") as fh:
    fh.write("committed on the agent's own branch\n")
subprocess.run(git + ["add", "committed.txt"], check=True)
subprocess.run(git + ["commit", "-q", "-m", "agent's own commit"], check=True)
with open("loose.txt", "w") as fh:
    fh.write("left uncommitted\n")
sys.exit(subprocess.run(["baton", "report", "done", "--summary", "hopped"]).returncode)

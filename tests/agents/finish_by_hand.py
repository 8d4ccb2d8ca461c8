"""Stands in for an agent's interactive session in `baton take`: the person finishes the work
(appends a line to half.txt in the worktree it was opened in) and leaves."""

from pathlib import Path

with Path("half.txt").open("a") as fh:
    fh.write("finished by hand\n")
print("interactive session: done, leaving", flush=True)

"""Stands in for a player's interactive session in the editor tests' take-over: it says where
it runs (the task's worktree) and stays open, as a real agent's session does, until the
person types a line; then it finishes the work by hand (half.txt) and leaves."""

import os
import sys

print(f"interactive session in {os.getcwd()}", flush=True)
print("type a line to finish the task by hand", flush=True)
sys.stdin.readline()
with open("half.txt", "a", encoding="utf-8") as fh:
    fh.write("finished by hand\n")
print("finished by hand, leaving", flush=True)

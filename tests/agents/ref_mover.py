"""A custom agent that moves refs it must not touch, with git, from its own worktree, then
writes its work and reports done.

usage: ref_mover.py PERSON_BRANCH STEP...
steps:
  rewind-integration   the run's integration branch back to its first parent (drops a landing)
  person-new-tree      the person's branch to a commit of its own (another tree)
  person-same-tree     the person's branch to a new commit holding the same tree
  delete-person        the person's branch deleted
  rewind-task:N        task N's branch back to its first parent (drops its work)
  advance-task:N       task N's branch to a commit of its own on top of it
  delete-task:N        task N's branch deleted
  commit:FILE          FILE written and committed on its own branch, by its own git
  tag-branch:NAME      a tag named like the run's branch baton/<slug>/NAME (`2-two`, or
                       `integration`), on a commit planting planted.txt: git's name lookup
                       takes a tag before a branch of the same name
  fail-first:FILE      report failed the first time (FILE written then), go on the next
  signal:FILE          FILE written (the test learns the agent runs)
  wait:FILE            until FILE exists (the test did its part)
  require:FILE         fail unless FILE is in its worktree (a dependency's work)
"""

import subprocess
import sys
import time
from pathlib import Path

sys.stdin.read()


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def move(step: str, *args: str) -> None:
    """`git update-ref ARGS`, saying whether git was refused (a read-only ref file)."""
    done = subprocess.run(["git", "update-ref", *args], capture_output=True, text=True)
    did = "deleted" if args[0] == "-d" else "moved"
    print(f"{step}: {'refused' if done.returncode else did}", flush=True)


def report(*args: str) -> None:
    sys.exit(subprocess.run(["baton", "report", *args]).returncode)


person = f"refs/heads/{sys.argv[1]}"
for step in sys.argv[2:]:
    what, _, arg = step.partition(":")
    if what == "rewind-integration":
        ref = git("for-each-ref", "--format=%(refname)", "refs/heads/baton/*/integration")
        move(step, ref, git("rev-parse", f"{ref}^1"))
    elif what == "person-new-tree":
        Path("planted.txt").write_text("planted on the person's branch\n")
        git("add", "planted.txt")
        tree = git("write-tree")
        git("reset", "-q")
        Path("planted.txt").unlink()
        move(step, person, git("commit-tree", tree, "-p", person, "-m", "planted"))
    elif what == "person-same-tree":
        tree = git("rev-parse", f"{person}^{{tree}}")
        move(step, person, git("commit-tree", tree, "-p", person, "-m", "same tree"))
    elif what == "delete-person":
        done = subprocess.run(["git", "update-ref", "-d", person], capture_output=True)
        print(f"delete-person: {'refused' if done.returncode else 'deleted'}", flush=True)
    elif what in ("rewind-task", "advance-task", "delete-task"):
        ref = git("for-each-ref", "--format=%(refname)", f"refs/heads/baton/*/{arg}-*")
        if what == "rewind-task":
            move(step, ref, git("rev-parse", f"{ref}^1"))
        elif what == "advance-task":
            tree = git("rev-parse", f"{ref}^{{tree}}")
            move(step, ref, git("commit-tree", tree, "-p", ref, "-m", "on top"))
        else:
            move(step, "-d", ref)
    elif what == "tag-branch":
        integration = git("for-each-ref", "--format=%(refname:short)",
                          "refs/heads/baton/*/integration")
        Path("planted.txt").write_text("planted under a tag\n")
        git("add", "planted.txt")
        tree = git("write-tree")
        git("reset", "-q")
        Path("planted.txt").unlink()
        planted = git("commit-tree", tree, "-p", "HEAD", "-m", "planted")
        git("tag", f"{integration.rsplit('/', 1)[0]}/{arg}", planted)
        print(f"{step}: tagged", flush=True)
    elif what == "commit":
        Path(arg).write_text("committed by the agent\n")
        git("add", arg)
        git("commit", "-q", "--allow-empty", "-m", f"agent: {arg}")
        print(f"{step}: committed", flush=True)
    elif what == "fail-first" and not Path(arg).exists():
        Path(arg).write_text("failed once\n")
        report("failed", "--reason", "the first attempt fails")
    elif what == "signal":
        Path(arg).write_text("running\n")
    elif what == "wait":
        deadline = time.monotonic() + 120
        while not Path(arg).exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    elif what == "require" and not Path(arg).exists():
        report("failed", "--reason", f"{arg} is missing: a dependency's work is not here")
Path(f"work-{int(time.time() * 1e6)}.txt").write_text("work\n")
report("done", "--summary", "done")

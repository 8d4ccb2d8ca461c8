"""The exchange remote: how a task's repository goes out to a cluster's worker and comes back.

Every ref Baton writes there lives under `refs/baton/jobs/<job>/…`, where `<job>` is built
here from the plan's slug, the task and attempt ids and a random token — never from model
output or plan text as such — and checked with `git check-ref-format`:

- `base`   the exact commit the attempt starts from (pushed by this machine);
- `claim`  a commit only the one worker that runs the attempt could create (`git push
           --force-with-lease=<ref>:` succeeds only while the ref does not exist): a job Dask
           runs a second time (a rescheduled one, a resubmitted one) finds it and runs nothing;
- `result` the worker's tree as the agent left it (a commit on top of the agent's own);
- `record` a commit holding `record.json` (exit status, report, events, session) and
           `output.log` (the agent's output).

Every git call here is an argv list; the exchange is never an option (`--`) and never a
remote helper that runs commands (config validation refuses `::`; `protocol.ext.allow` is
`never` here besides).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from baton_tui.gitops.git import (
    BATON_IDENTITY, NO_HOOKS, GitError, git, identity_env, run_git,
)

# No remote helper that runs a command, whatever the person's git config allows.
SAFE = ("-c", "protocol.ext.allow=never", *NO_HOOKS)
RECORD = "record.json"
OUTPUT = "output.log"
_SAFE_PART = re.compile(r"[^a-z0-9-]+")


def job_name(slug: str, task_id: int, attempt_id: int) -> str:
    """The job's name: its Dask key and its folder of refs (letters, digits and dashes)."""
    clean = _SAFE_PART.sub("-", slug.lower()).strip("-")[:60] or "plan"
    return f"baton-{clean}-{int(task_id)}-{int(attempt_id)}-{secrets.token_hex(4)}"


def refs_of(job: str) -> dict[str, str]:
    """The job's four refs on the exchange (see the module docstring)."""
    if not re.fullmatch(r"[a-z0-9-]{1,120}", job):
        raise ValueError(f"not a job name: {job!r}")
    return {part: f"refs/baton/jobs/{job}/{part}" for part in ("base", "claim", "result",
                                                               "record")}


def check_ref(cwd: str | os.PathLike, ref: str) -> str:
    if run_git(cwd, "check-ref-format", ref).returncode != 0:
        raise ValueError(f"not a ref name: {ref!r}")
    return ref


def push(cwd: str | os.PathLike, exchange: str, *refspecs: str, lease_absent: str | None = None
         ) -> None:
    """Push `refspecs` to the exchange (GitError when it refuses). `lease_absent`: a ref
    that must not exist there yet (the claim)."""
    lease = (f"--force-with-lease={lease_absent}:",) if lease_absent else ()
    git(cwd, *SAFE, "push", "--quiet", "--no-verify", *lease, "--", exchange, *refspecs)


def fetch(cwd: str | os.PathLike, exchange: str, *refspecs: str, depth: int | None = None
          ) -> None:
    shallow = (f"--depth={depth}",) if depth else ()
    git(cwd, *SAFE, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", *shallow, "--",
        exchange, *refspecs)


def remote_ref(cwd: str | os.PathLike, exchange: str, ref: str) -> str | None:
    """The commit `ref` names on the exchange, None when it is not there."""
    out = git(cwd, *SAFE, "ls-remote", "--", exchange, ref)
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        if name == ref:
            return sha
    return None


def snapshot(worktree: str | os.PathLike, message: str) -> str:
    """A commit of the worktree as it is — tracked changes and untracked files (not ignored
    ones) — on top of its HEAD, made with a private index: the branch, the index and the
    files are left as they were. HEAD itself when nothing changed."""
    head = git(worktree, "rev-parse", "HEAD")
    if not git(worktree, "status", "--porcelain", "--untracked-files=all"):
        return head
    with tempfile.TemporaryDirectory(prefix="baton-index-") as tmp:
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
        git(worktree, "read-tree", "HEAD", env=env)
        git(worktree, "add", "-A", "--", ".", env=env)
        tree = git(worktree, "write-tree", env=env)
    if tree == git(worktree, "rev-parse", "HEAD^{tree}"):
        return head
    return git(worktree, *NO_HOOKS, "commit-tree", tree, "-p", head, "-m", message,
               env=identity(worktree))


def identity(cwd: str | os.PathLike) -> dict[str, str]:
    """Baton's identity where the repository has none (as its own commits use)."""
    try:
        return identity_env(cwd)
    except Exception:
        return dict(BATON_IDENTITY)


def record_commit(cwd: str | os.PathLike, record: dict[str, Any], output: bytes,
                  parent: str | None) -> str:
    """A commit holding the record and the agent's output (the `record` ref)."""
    def blob(data: bytes) -> str:
        return subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=os.fspath(cwd),
                              input=data, capture_output=True, check=True
                              ).stdout.decode().strip()

    text = json.dumps(record, sort_keys=True).encode()
    entries = f"100644 blob {blob(text)}\t{RECORD}\n100644 blob {blob(output)}\t{OUTPUT}\n"
    tree = git(cwd, "mktree", input=entries)
    extra = ("-p", parent) if parent else ()
    return git(cwd, *NO_HOOKS, "commit-tree", tree, *extra, "-m", "baton: attempt record",
               env=dict(BATON_IDENTITY))


def read_record(cwd: str | os.PathLike, commit: str) -> tuple[dict[str, Any], bytes]:
    """The record and the output a `record` commit holds."""
    text = git(cwd, "show", f"{commit}:{RECORD}")
    output = subprocess.run(["git", "show", f"{commit}:{OUTPUT}"], cwd=os.fspath(cwd),
                            capture_output=True).stdout
    return json.loads(text), output


def bring_home(worktree: str | os.PathLike, base: str, head: str, result: str) -> None:
    """Put a remote attempt's work into the task's local worktree as a local agent would have
    left it: the agent's own commits on its branch (fast-forward from `base`), the rest as
    uncommitted changes — which Baton then commits and lands exactly as a local task's."""
    current = git(worktree, "rev-parse", "HEAD")
    if head != base and head != current:
        if run_git(worktree, "merge-base", "--is-ancestor", current, head).returncode != 0:
            raise GitError(["merge", "--ff-only", head], "the agent's commits do not follow "
                           "the task's branch", 1)
        git(worktree, *NO_HOOKS, "merge", "--ff-only", "--quiet", head)
    if result != git(worktree, "rev-parse", "HEAD"):
        git(worktree, "read-tree", "--reset", "-u", result)
        git(worktree, "reset", "--quiet")  # the index back at HEAD: the rest is uncommitted

"""The exchange remote: how a task's repository goes out to a cluster's worker and comes back.

Every ref Baton writes there lives under `refs/baton/jobs/<job>/…`, where `<job>` is built
here from the plan's slug, the task and attempt ids and a random token — never from model
output or plan text as such — and checked with `git check-ref-format`:

- `base`   the exact commit the attempt starts from (pushed by this machine);
- `claim`  a commit only the one worker that runs the attempt could create (`git push
           --force-with-lease=<ref>:` succeeds only while the ref does not exist; `claim`):
           a job Dask runs a second time (a rescheduled one, a resubmitted one) finds it and
           runs nothing;
- `result` the worker's tree as the agent left it (a commit on top of the agent's own);
- `record` a commit holding `record.json` (exit status, report, events, session, the
           result and head commits) and `output.log` (the agent's output), sealed with an
           HMAC under a secret of the attempt's own that only the conductor and the job's node
           hold (`seal`): anyone who reaches the exchange can push refs there, so a record
           without its seal is refused and flagged, and its result never lands.

Every git call here is an argv list; the exchange is never an option (`--`) and never a
remote helper that runs commands (config validation refuses `::`; `protocol.ext.allow` is
`never` here besides).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
import subprocess
import tempfile
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any, Generic, NamedTuple, TypeVar

from baton_tui.gitops import worktrees
from baton_tui.gitops.git import (
    BATON_IDENTITY, NO_HOOKS, GitError, git, identity_env, run_git,
)
from baton_tui.gitops.refs import read_ref, remember_tree, tree_of, valid_ref_name
from baton_tui.runners.homecoming import bring_home as bring_home  # (what was pushed, home)

# No remote helper that runs a command, whatever the person's git config allows.
SAFE = ("-c", "protocol.ext.allow=never", *NO_HOOKS)
RECORD = "record.json"
OUTPUT = "output.log"
_SAFE_PART = re.compile(r"[^a-z0-9-]+")
T = TypeVar("T")


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


def check_ref(ref: str) -> str:
    """`ref`, refused (ValueError) unless `git check-ref-format` would take it — checked here
    (`refs.valid_ref_name`, its rules), not by a git process: a start checks four refs, and
    a plan's tasks start together (64 processes for 16 tasks, while the conductor connects)."""
    if not valid_ref_name(ref):
        raise ValueError(f"not a ref name: {ref!r}")
    return ref


def push(cwd: str | os.PathLike[str], exchange: str, *refspecs: str, borrow: Collection[str] = ()
         ) -> None:
    """Push `refspecs` to the exchange (GitError when it refuses). `borrow`: object folders
    of other repositories holding what is pushed (git does not pass them on to a local
    exchange's side)."""
    git(cwd, *SAFE, "push", "--quiet", "--no-verify", "--", exchange, *refspecs,
        env=_borrowing(borrow))


def claim(cwd: str | os.PathLike[str], exchange: str, claims: Collection[tuple[str, str]],
          borrow: Collection[str] = ()) -> set[str]:
    """Push each claim — (commit, ref) — where only the first push may create its ref
    (`--force-with-lease=<ref>:` holds only while the ref does not exist there), all in one
    push; the refs this push created (none when the exchange could not be reached)."""
    leases = [f"--force-with-lease={ref}:" for _commit, ref in claims]
    out = run_git(cwd, *SAFE, "push", "--porcelain", "--no-verify", *leases, "--", exchange,
                  *(f"{commit}:{ref}" for commit, ref in claims), env=_borrowing(borrow)).stdout
    created = set()
    for line in out.splitlines():  # "<flag>\t<from>:<to>\t<summary>"; `*`: a new ref
        flag, _, rest = line.partition("\t")
        if flag == "*":
            created.add(rest.partition("\t")[0].partition(":")[2])
    return created


def _borrowing(borrow: Collection[str]) -> dict[str, str] | None:
    return {"GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(borrow)} if borrow else None


def fetch(cwd: str | os.PathLike[str], exchange: str, *refspecs: str, depth: int | None = None
          ) -> None:
    shallow = (f"--depth={depth}",) if depth else ()
    git(cwd, *SAFE, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", *shallow, "--",
        exchange, *refspecs)


def remote_ref(cwd: str | os.PathLike[str], exchange: str, ref: str) -> str | None:
    """The commit `ref` names on the exchange, None when it is not there."""
    out = git(cwd, *SAFE, "ls-remote", "--", exchange, ref)
    for line in out.splitlines():
        sha, _, name = line.partition("\t")
        if name == ref:
            return sha
    return None


class Snapshot(NamedTuple):
    """What `snapshot` made, and what it was made on."""

    head: str    # the worktree's HEAD
    commit: str  # HEAD itself, or a commit of the worktree's changes on top of it


def snapshot(worktree: str | os.PathLike[str], message: str, env: dict[str, str] | None = None
             ) -> Snapshot:
    """A commit of the worktree as it is — tracked changes and untracked files (not ignored
    ones) — on top of its HEAD, made with a private copy of its index (only changed files are
    hashed): the branch, the index and the files are left as they were. HEAD itself when
    nothing changed. `env`: the committer (the repository's identity by default)."""
    head = read_ref(worktree, "HEAD")
    if head is None:
        raise GitError(["rev-parse", "HEAD"], f"{worktree} has no commit", 128)
    _real, index = worktrees._temp_index(worktree, "exchange")
    private = {"GIT_INDEX_FILE": str(index)}
    try:
        git(worktree, "add", "-A", "--", ":/", env=private)
        tree = git(worktree, "write-tree", env=private)
    finally:
        index.unlink(missing_ok=True)
    if tree == tree_of(worktree, head):
        return Snapshot(head, head)
    commit = git(worktree, *NO_HOOKS, "commit-tree", tree, "-p", head, "-m", message,
                 env=env if env is not None else identity(worktree))
    remember_tree(commit, tree, [head])
    return Snapshot(head, commit)


def identity(cwd: str | os.PathLike[str]) -> dict[str, str]:
    """Baton's identity where the repository has none (as its own commits use)."""
    try:
        return identity_env(cwd)
    except (GitError, OSError):  # no identity to read there: Baton's own
        return dict(BATON_IDENTITY)


def record_commit(cwd: str | os.PathLike[str], record: dict[str, Any], output: bytes,
                  parent: str | None) -> str:
    """A commit holding the record and the agent's output (the `record` ref): three git
    processes (both blobs hashed by one)."""
    with tempfile.TemporaryDirectory(prefix="baton-record-") as tmp:
        files = (Path(tmp) / RECORD, Path(tmp) / OUTPUT)
        files[0].write_bytes(json.dumps(record, sort_keys=True).encode())
        files[1].write_bytes(output)
        blobs = git(cwd, "hash-object", "-w", "--no-filters", "--", *map(str, files)).split()
    entries = "".join(f"100644 blob {blob}\t{file.name}\n" for blob, file in zip(blobs, files))
    tree = git(cwd, "mktree", input=entries)
    extra = ("-p", parent) if parent else ()
    return git(cwd, *NO_HOOKS, "commit-tree", tree, *extra, "-m", "baton: attempt record",
               env=dict(BATON_IDENTITY))


def seal(secret: str, job: str, record: dict[str, Any], output: bytes) -> str:
    """The record's seal: an HMAC (SHA-256) under the attempt's secret — which the conductor
    sends its node with the job, and no agent is given — over the job's name, the record
    (its result and head commits included) and the output. The exchange is a git remote
    anyone who reaches it may push to: a record without its job's seal is not its node's."""
    body = json.dumps({k: v for k, v in record.items() if k != "seal"}, sort_keys=True)
    message = b"\0".join((job.encode(), hashlib.sha256(body.encode()).digest(),
                          hashlib.sha256(output).digest()))
    return hmac.new(secret.encode(), message, "sha256").hexdigest()


def sealed(secret: str, job: str, record: dict[str, Any], output: bytes) -> bool:
    """Whether `record` carries the seal its job's node would have put on it."""
    found = record.get("seal")
    return isinstance(found, str) and hmac.compare_digest(found, seal(secret, job, record,
                                                                      output))


def read_record(cwd: str | os.PathLike[str], commit: str) -> tuple[dict[str, Any], bytes]:
    """The record and the output a `record` commit holds (read by one git process)."""
    asked = f"{commit}:{RECORD}\n{commit}:{OUTPUT}\n".encode()
    out = subprocess.run(["git", "cat-file", "--batch"], cwd=os.fspath(cwd), input=asked,
                         capture_output=True, check=True).stdout
    blobs = []
    for _ in range(2):
        header, _, out = out.partition(b"\n")
        parts = header.split()
        if len(parts) != 3 or parts[1] != b"blob":
            raise GitError(["cat-file", "--batch"], header.decode(errors="replace"), 128,
                           f"the record {commit} holds no {RECORD} and {OUTPUT}")
        size = int(parts[2])
        blobs.append(out[:size])
        out = out[size + 1:]
    return json.loads(blobs[0]), blobs[1]


class _Ask(Generic[T]):
    """One caller's part of a `Batched` transfer."""

    def __init__(self, items: list[T]):
        self.items = items
        self.woken = threading.Event()  # its transfer is done, or it sends the next one
        self.lead = False               # it sends the next transfer
        self.done = False
        self.error: Exception | None = None


class Batched(Generic[T]):
    """One git transfer (a push, a fetch) for the refspecs several threads ask for at about
    the same time: tasks start and end together, and each transfer is a few processes on
    both sides. A caller's refspecs join the next transfer (one is sent while the next
    gathers); it returns when that transfer is done, raising its error if it failed. The
    caller that sends a transfer hands the next one to a caller waiting for it, and returns
    at once: the first task to end is not held up by those ending after it."""

    def __init__(self, send: Callable[[list[T]], None]):
        self._send = send
        self._lock = threading.Lock()
        self._waiting: list[_Ask[T]] = []
        self._sending = False

    def __call__(self, *refspecs: T) -> None:
        mine = _Ask(list(refspecs))
        with self._lock:
            self._waiting.append(mine)
            mine.lead, self._sending = not self._sending, True
        while not mine.lead:
            mine.woken.wait()
            mine.woken.clear()
            if mine.done:
                if mine.error is not None:
                    raise mine.error
                return
        with self._lock:  # its own refspecs are among these
            batch, self._waiting = self._waiting, []
        try:
            self._send([spec for ask in batch for spec in ask.items])
            failed: Exception | None = None
        # Broad on purpose: whatever the transfer raised is handed to every caller of it
        # (each re-raises it as its own), never swallowed.
        except Exception as exc:
            failed = exc
        for ask in batch:
            ask.error, ask.done = failed, True
            if ask is not mine:
                ask.woken.set()
        with self._lock:  # the next transfer: sent by one of its callers
            if self._waiting:
                self._waiting[0].lead = True
                self._waiting[0].woken.set()
            else:
                self._sending = False
        if failed is not None:
            raise failed

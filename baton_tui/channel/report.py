"""The report channel, agent side: `baton report` and `baton checkpoint` (stdlib only).

An agent proves who it is with the attempt id and nonce Baton put in its
environment; the store keeps only the nonce's hash, so reading the store gives no
agent another's nonce. A report from a stale or foreign attempt, or one claiming
another task, is refused and logged. The same functions back the MCP tools of
`baton mcp`.
"""

from __future__ import annotations

import os
import sqlite3
import time

from baton_tui.core.errors import BatonError
from baton_tui.core import policy
from baton_tui.store.db import AttemptRow, Store, Unwritable, nonce_matches
from baton_tui.core.events import EventKind
from baton_tui.core.views import Folder
from baton_tui.core.words import FINAL_REPORTS, ReportStatus

TYPE_CHECKING = False  # `typing` stays unimported on the report path
if TYPE_CHECKING:
    from typing import TypeGuard

K = EventKind

# Exit codes of `baton checkpoint`, as the prompt tells the agent.
GO, STOP, UNDECIDED = 0, 1, 3
EVIDENCE_LIMIT = 20000  # characters of a dry run kept with the checkpoint
REFUSED = "report-refused.json"  # beside the attempt's log: a report the store could not take


def _small_id(text: str | None) -> TypeGuard[str]:
    """A row id SQLite can hold (an agent may put anything in its environment)."""
    return text is not None and text.isascii() and text.isdigit() and len(text) <= 12


class Caller:
    """The attempt an agent's environment names, verified against the store.

    A plain class, not a dataclass: `dataclasses` imports `inspect`, most of what
    `baton report` would spend importing this module (see `paths.RepoPaths`).
    """

    __slots__ = ("store", "attempt")

    def __init__(self, store: Store, attempt: AttemptRow):
        self.store = store
        self.attempt = attempt

    def __repr__(self) -> str:
        return f"Caller(store={self.store!r}, attempt={self.attempt!r})"


def caller_from_env(env: dict[str, str] | None = None, store: Store | None = None) -> Caller:
    """Open the store named by BATON_STATE (or use `store`, already open on it) and check
    BATON_ATTEMPT / BATON_NONCE."""
    env = dict(os.environ if env is None else env)
    state, attempt_id, nonce = env.get("BATON_STATE"), env.get("BATON_ATTEMPT"), env.get("BATON_NONCE")
    if not (state and attempt_id and nonce):
        raise BatonError("`baton report` and `baton checkpoint` work only inside a task that "
                         "Baton started (BATON_STATE, BATON_ATTEMPT and BATON_NONCE are not set)")
    if store is None:
        try:
            store = Store(state, create=False)
        except (FileNotFoundError, OSError, sqlite3.DatabaseError):
            raise BatonError(f"BATON_STATE points at {state}, which is not a Baton store") from None
    attempt = store.attempt(int(attempt_id)) if _small_id(attempt_id) else None
    task = env.get("BATON_TASK")
    if attempt is None or not nonce_matches(nonce, attempt.nonce_hash):
        store.append(attempt.plan_id if attempt else None, int(task) if _small_id(task)
                     else None, K.TASK_REPORT_REFUSED, {"attempt": attempt_id[:20],
                                                        "why": "foreign nonce"})
        raise BatonError("report refused: this attempt's id and nonce do not match Baton's "
                         "records (a stale or foreign report)")
    if task is not None and task != str(attempt.task_id):
        # An attempt speaks for its own task only, whatever BATON_TASK claims.
        store.append(attempt.plan_id, attempt.task_id, K.TASK_REPORT_REFUSED,
                     {"attempt": attempt.id, "why": f"claimed task {task[:20]}"})
        raise BatonError(f"report refused: attempt {attempt.id} belongs to task "
                         f"{attempt.task_id}, not task {task[:20]}")
    latest = store.latest_attempt(attempt.plan_id, attempt.task_id)
    if attempt.ended is not None or (latest and latest.id != attempt.id):
        store.append(attempt.plan_id, attempt.task_id, K.TASK_REPORT_REFUSED,
                     {"attempt": attempt.id, "why": "stale attempt"})
        raise BatonError("report refused: this attempt is over (a stale nonce); Baton ignores it")
    return Caller(store, attempt)


def queued_payload(status: str, message: str | None, until: float | None) -> dict:
    """A finished report as the store keeps it (refused, with one line, when malformed)."""
    if status not in FINAL_REPORTS:
        raise BatonError(f"report status must be done, failed, progress or limited, not {status!r}")
    text = (message or "").strip()
    if status == ReportStatus.LIMITED:
        text = text or "usage limit"
    if not text:
        raise BatonError("say what happened: --summary \"…\" for done, --reason \"…\" for failed")
    return {"status": status, ("summary" if status == ReportStatus.DONE else "reason"): text[:4000],
            "ts": time.time(), **({"until": until} if status == ReportStatus.LIMITED else {})}


def report(caller: Caller, status: str, message: str | None, *, until: float | None = None,
           tokens: int | None = None, cost: float | None = None) -> str:
    """Record done / failed / progress / limited for the caller's task (with the usage the
    agent counted itself, if any); returns what to tell the agent."""
    a = caller.attempt
    if tokens is not None or cost is not None:
        usage = {"attempt": a.id, "tokens": int(tokens or 0),
                 **({"cost": float(cost)} if cost is not None else {})}
        caller.store.append(a.plan_id, a.task_id, K.TASK_USAGE, usage)
    if status == ReportStatus.PROGRESS:
        caller.store.append(a.plan_id, a.task_id, K.TASK_PROGRESS,
                            {"message": (message or "").strip()[:500], "attempt": a.id})
        return f"progress noted ({(message or '').strip()[:60]}); carry on"
    payload = queued_payload(status, message, until)
    try:
        with caller.store.tx():
            caller.store.update_attempt(a.id, report=payload)
            caller.store.append(a.plan_id, a.task_id, K.TASK_REPORTED,
                                {"attempt": a.id, **payload})
    except Unwritable as exc:
        _note_refused(a, status, exc.message)
        raise
    if status == ReportStatus.LIMITED:
        return (f"Baton paused task {a.task_id} at its usage limit. End your turn now; you will "
                "be resumed in this session when the limit resets.")
    return (f"Baton recorded task {a.task_id} as {status}. End your turn now; "
            f"Baton runs the checks and lands the work.")


def inbox(caller: Caller) -> str:
    """The messages the person sent this task (`baton tell`) that its agent has not read
    yet, marked read; what to tell the agent."""
    a = caller.attempt
    view = Folder().feed(caller.store.events(a.plan_id, task_id=a.task_id)).view(a.task_id)
    unread = [m for m in view.messages if not m.get("read")]
    if not unread:
        return "no new messages from the person; carry on"
    caller.store.append(a.plan_id, a.task_id, K.TASK_TOLD_READ,
                        {"ids": [m.get("id") for m in unread], "attempt": a.id, "via": "inbox"})
    return told_text(unread)


def told_text(messages: list) -> str:
    """Messages from the person, as the agent reads them (in its inbox or its next prompt)."""
    lines = ["Messages from the person (sent while you worked; take them into account):"]
    lines += [f"- {m.get('text', '')}" for m in messages]
    return "\n".join(lines)


def _note_refused(a: AttemptRow, status: str, why: str) -> None:
    """Leave word beside the attempt's log (Baton's home, often another disk than the store)
    that its report was made and refused, so the task's failure can say why; best effort."""
    import json  # lazy: only a refused report needs it

    if not a.log_path:
        return
    path = os.path.join(os.path.dirname(a.log_path), REFUSED)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump({"status": status, "why": why}, fh)
    except OSError:
        pass  # that disk is full too: the agent's output holds the refusal


def refused_report(a: AttemptRow) -> dict | None:
    """The report an attempt made that the store refused (`_note_refused`), if any."""
    import json  # lazy: only a task that ended without a report asks

    if not a.log_path:
        return None
    try:
        with open(os.path.join(os.path.dirname(a.log_path), REFUSED)) as fh:
            found = json.load(fh)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def checkpoint(caller: Caller, what: str, evidence: str | None = None,
               wait: float | None = None) -> tuple[int, str]:
    """Ask before an irreversible step, with the dry run the agent gathered as `evidence`
    (text). Returns (exit code, message for the agent)."""
    a = caller.attempt
    store = caller.store
    plan = store.plan(a.plan_id)
    assert plan is not None
    options = plan.options
    data = {"what": what[:2000], "attempt": a.id,
            "evidence": evidence[:EVIDENCE_LIMIT] if evidence else None}
    decided_by = policy.checkpoint_decider(policy.level(plan.doc.get("autonomy")),
                                           bool(options.get("auto_checkpoints")))
    if decided_by:
        with store.tx():
            ev = store.append(a.plan_id, a.task_id, K.TASK_CHECKPOINT, data)
            store.append(a.plan_id, a.task_id, K.TASK_CHECKPOINT_ANSWERED,
                         {"checkpoint": ev, "answer": "yes", "by": decided_by})
            store.append(a.plan_id, a.task_id, K.TASK_CONTINUED, {"checkpoint": ev})
        return GO, f"approved ({decided_by}): go ahead"
    ev = store.append(a.plan_id, a.task_id, K.TASK_CHECKPOINT, data)
    deadline = time.monotonic() + (options.get("checkpoint_wait", 20.0) if wait is None else wait)
    while True:
        answer = checkpoint_answer(store, a.plan_id, a.task_id, ev)
        if answer is not None:
            store.append(a.plan_id, a.task_id, K.TASK_CONTINUED, {"checkpoint": ev})
            if answer == "yes":
                return GO, "the person said yes: go ahead"
            return STOP, ("the person said no: do not take this step; finish without it "
                          "or report failed")
        if time.monotonic() >= deadline:
            return UNDECIDED, ("not decided yet: end your turn now without taking the step; "
                               "Baton resumes you with the answer")
        time.sleep(0.25)


def checkpoint_answer(store: Store, plan_id: int, task_id: int, checkpoint_event: int) -> str | None:
    """The answer given to one checkpoint, if any (read from the task's folded view)."""
    view = Folder().feed(store.events(plan_id, task_id=task_id)).view(task_id)
    return view.checkpoint_answer if view.pending_checkpoint == checkpoint_event else None

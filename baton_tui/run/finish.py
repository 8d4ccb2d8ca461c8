"""What happens after an agent exits: report, check, read-only proof, commit, landing.

"Done" is decided only here, by the agent's report (or, for the `script` player
and a task's `check`, by an exit status) — never because output looks finished.
"""

from __future__ import annotations

import subprocess
import time
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from baton_tui import killpoints
from baton_tui import layout
from baton_tui.core import policy
from baton_tui.core.errors import BatonError
from baton_tui.core.slug import integration_branch, task_branch
from baton_tui.core.words import Mode, ReportStatus, counted
from baton_tui.gitops import git, landing, markers, onbranch, worktrees
from baton_tui.gitops.refs import read_ref
from baton_tui.plan import current as plans
from baton_tui.plan.model import PlanDocument, Task
from baton_tui.players.base import Outcome, reading_output
from baton_tui.channel import relay
from baton_tui.channel.report import refused_report
from baton_tui.run import outside
from baton_tui.run import integration, landings, refguard, siblings
from baton_tui.runners import logcap
from baton_tui.store.db import AttemptRow, PlanRow
from baton_tui.store.render import fmt_secs
from baton_tui.core.events import EventKind, State
from baton_tui.core.views import Folder, TaskView
from baton_tui.workspace import Workspace

K = EventKind

CHECK_TIMEOUT = 1800
WAITS = frozenset({K.TASK_FAILED, K.TASK_PARKED, K.TASK_PAUSED, K.TASK_CHECKPOINT, K.TASK_DONE})
TAIL_LINES = 30


@dataclass
class Intent:
    """What the person asked for while the attempt ran."""

    stop: bool = False
    pause: bool = False
    take: bool = False   # the person takes the task over: stop it, its session saved

    @property
    def halts(self) -> bool:
        """Whether its agent is to be stopped: the attempt ended, or the task taken over."""
        return self.stop or self.take


def tail(path: str | None, lines: int = TAIL_LINES) -> str:
    """The last lines of a log file (what a failed task shows)."""
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - 16384))
            data = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(data.splitlines()[-lines:])


def run_check(command: str, cwd: Path) -> tuple[int, str]:
    """A task's `check` (or the run-level check): the one shell string, approved by the person."""
    try:
        done = subprocess.run(["sh", "-c", command], cwd=cwd, capture_output=True, text=True,
                              timeout=CHECK_TIMEOUT, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        printed = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(
            "utf-8", "replace")  # text (text=True), but typed either way
        return 124, f"check timed out after {CHECK_TIMEOUT}s\n{printed}"
    return done.returncode, (done.stdout + done.stderr)[-8000:]


class Finisher:
    """Turns one ended attempt into the task's next events."""

    def __init__(self, ws: Workspace, plan: PlanRow, doc: PlanDocument):
        self.ws, self.plan, self.doc = ws, plan, doc
        self.store = ws.store
        self._outside: Future[outside.Fingerprint] | None = None  # the look after the attempt, until flagged

    def emit(self, task: Task, kind: EventKind, **data: object) -> None:
        """Record `kind` for `task`. A build task that now waits — failed, paused, held at a
        checkpoint, done before landing — records its branch's commit (`tip`): its branch
        is held there until it starts again (`refguard`). Taken over, it is the person's."""
        if kind in WAITS and task.mode == Mode.BUILD \
                and not (kind == K.TASK_PAUSED and data.get("by") == "person") \
                and (kind != K.TASK_CHECKPOINT or data.get("held")):
            view = self.view(task)
            data = {**data, **refguard.waiting_tip(self.ws, view.branch, view.workdir)}
        self.store.append(self.plan.id, task.id, kind, data)

    def view(self, task: Task) -> TaskView:
        """The task's view, freshly folded (an agent may have just reported)."""
        return Folder().feed(self.store.events(self.plan.id, task_id=task.id)).view(task.id)

    def finish(self, task: Task, attempt: AttemptRow, intent: Intent) -> State:
        """Decide and record the task's next state; returns it. The look at the places it
        must not write begins first and runs meanwhile (a `git status` of the checkout,
        beside the commit); what it found is flagged before the task is held or done. The
        refs it must not move are checked (and put back) first."""
        if moved := refguard.after(self.ws, self.plan, attempt):
            self.emit(task, K.TASK_FLAGGED, flag="ref", attempt=attempt.id,
                      refs=sorted({m.ref for m in moved}), message=refguard.said(moved))
        siblings.flag(self.ws, self.plan, attempt, time.time())  # other tasks' places
        self._outside = outside.ahead(self.ws) if attempt.log_path else None
        try:
            return self._decide(task, attempt, intent)
        finally:
            self.flag_outside(task, attempt)

    def flag_outside(self, task: Task, attempt: AttemptRow) -> None:
        """Flag the attempt's writes outside its worktree, once its look is in (once)."""
        taken, self._outside = self._outside, None
        files = outside.changed(self.ws, attempt, taken) if taken is not None else []
        if files:
            self.emit(task, K.TASK_FLAGGED, flag="outside", files=files, attempt=attempt.id,
                      message=f"wrote outside its worktree: {outside.named(files)}")

    def _decide(self, task: Task, attempt: AttemptRow, intent: Intent) -> State:
        player = self.ws.catalog.players.get(task.player)
        log_text, printed = "", None
        if attempt.log_path and player is not None and player.runs_agent:
            log_text = logcap.head_and_tail(attempt.log_path)
            printed = logcap.last_write(attempt.log_path)
        with reading_output(printed):
            outcome = player.outcome(log_text) if player is not None else Outcome()
        if outcome.session_id and outcome.session_id != attempt.session_id:
            self.store.update_attempt(attempt.id, session_id=outcome.session_id)
        if outcome.tokens or outcome.cost:  # no cost reported: "cost unknown", never 0
            self.emit(task, K.TASK_USAGE, tokens=outcome.tokens, attempt=attempt.id,
                      **({"cost": outcome.cost} if outcome.cost else {}))
        spec = attempt.spec
        workdir = Path(spec.get("cwd", self.ws.root))
        if spec.get("leftover"):
            left = "; ".join(f"{p['pid']} {p['command']}" for p in spec["leftover"][:5])
            self.emit(task, K.TASK_FLAGGED, flag="leftover", attempt=attempt.id,
                      message=f"processes it started could not be ended: {left}")
        # git pinned to this repository's worktree
        if (refused := self._refuse(task, attempt, workdir)) is not None:
            return refused
        if intent.take:
            self.emit(task, K.TASK_PAUSED, reason="taken over by you", attempt=attempt.id,
                      by="person")
            return State.PAUSED
        if intent.pause:
            self.emit(task, K.TASK_PAUSED, reason="interrupted", attempt=attempt.id)
            return State.PAUSED
        if intent.stop:
            self.emit(task, K.TASK_FAILED, reason="stopped by you", attempt=attempt.id,
                      output=tail(attempt.log_path))
            return State.FAILED
        # A report in the agent's own output (Aider's `BATON:` line) counts only with exit 0:
        # an agent that wrote the line and then crashed has not finished.
        said = outcome.report if attempt.exit_status == 0 else None
        if outcome.report and said is None:
            outcome.error = outcome.error or "its `BATON:` line counts only with exit status 0"
        report = attempt.report or self._queued(task, attempt) or said
        view = self.view(task)
        if report is None and view.pending_checkpoint and view.checkpoint_attempt == attempt.id:
            return State.CHECKPOINT  # it ended its turn to wait for the answer
        if self.ws.catalog.check_is_task(task.player):
            status = attempt.exit_status
            report = ({"status": ReportStatus.DONE, "summary": f"`{task.check}` passed"} if status == 0 else
                      {"status": ReportStatus.FAILED, "reason": f"`{task.check}` exited {status}"})
        if report is None:
            return self._no_report(task, attempt, outcome, view)
        if report.get("status") == ReportStatus.LIMITED:
            return self._limited(task, attempt, view, report.get("until"), "declared",
                                 report.get("reason"))
        if report.get("status") == ReportStatus.FAILED:
            self.emit(task, K.TASK_FAILED, reason=report.get("reason", "the agent reported "
                      "failure"), attempt=attempt.id, output=tail(attempt.log_path))
            return State.FAILED
        if task.mode == Mode.RESEARCH:
            return self._finish_research(task, attempt, workdir, report)
        return self._finish_build(task, attempt, workdir, report)

    def _queued(self, task: Task, attempt: AttemptRow) -> dict[str, Any] | None:
        """A report its agent queued in the attempt's folder while its channel was gone
        (`relay.queue`, its nonce checked), recorded now as if it had come through."""
        found = relay.queued_report(attempt)
        if found is None:
            return None
        with self.store.tx():
            self.store.update_attempt(attempt.id, report=found)
            self.store.append(self.plan.id, task.id, K.TASK_REPORTED,
                              {"attempt": attempt.id, **found})
        return found

    def _no_report(self, task: Task, attempt: AttemptRow, outcome: Outcome,
                   view: TaskView) -> State:
        if outcome.limit_until or outcome.limited:
            return self._limited(task, attempt, view, outcome.limit_until,
                                 "known" if outcome.limit_until else "unknown", None)
        if outcome.rate_limited:
            tries = view.rate_limit_retries
            allowed = self.ws.config.limits.retries
            if tries < allowed:
                delay = min(300.0, 5.0 * 2 ** tries)
                self.emit(task, K.TASK_QUEUED, rate_limited=True, not_before=time.time() + delay,
                          reason=f"rate limited (429): retry {tries + 1} of {allowed} in "
                                 f"{int(delay)}s")
                return State.QUEUED
            self.emit(task, K.TASK_FAILED, reason=f"rate limited (429) after {allowed} retries",
                      attempt=attempt.id, output=tail(attempt.log_path))
            return State.FAILED
        if attempt.spec.get("silenced"):
            reason = f"silent for {int(attempt.spec['silenced'])}s: stopped (its branch is kept)"
        elif attempt.spec.get("lost"):  # a cluster runner's attempt whose worker went away
            reason = str(attempt.spec["lost"])
        elif (refused := refused_report(attempt)) is not None:
            reason = (f"its report ({str(refused.get('status'))[:10]}) was refused: "
                      f"{str(refused.get('why'))[:300]} — make room, then `baton retry {task.id}`")
        elif attempt.exit_status is None:
            reason = "the agent's process vanished without reporting"
        else:
            reason = f"exited (status {attempt.exit_status}) without reporting"
        if outcome.error:
            reason += f": {outcome.error}"
        self.emit(task, K.TASK_FAILED, reason=reason, attempt=attempt.id,
                  output=tail(attempt.log_path))
        return State.FAILED

    def _limited(self, task: Task, attempt: AttemptRow, view: TaskView, until: float | None,
                 how: str, reason: str | None) -> State:
        """A usage limit: pause in the saved session until the reset — or, with no known reset,
        until the next probe (`[limits] probe`) — never failing for it, unless
        `pause_on_usage_limit = false` asks for that."""
        limits = self.ws.config.limits
        said = reason or "usage limit"
        if not limits.pause_on_usage_limit:
            self.emit(task, K.TASK_FAILED, reason=f"{said} (pause_on_usage_limit is off)",
                      attempt=attempt.id, output=tail(attempt.log_path))
            return State.FAILED
        probe = 0
        if until is None:
            probe = view.limit_probes + 1
            waits = limits.probe
            until = time.time() + (waits[probe - 1] if probe <= len(waits) else 3600.0)
            how, said = "unknown", f"{said}, reset unknown"
        self.emit(task, K.TASK_PAUSED, reason=said, until=until, attempt=attempt.id,
                  player=task.player, limit=how, **({"probe": probe} if probe else {}))
        if task.fallback and not probe and until - time.time() > limits.fallback_after:
            self._fall_back(task, until)
        return State.PAUSED

    def _fall_back(self, task: Task, until: float) -> None:
        """A reset further away than `[limits] fallback_after`: the task moves to its next
        fallback player, and its card says why (a flag)."""
        at = time.strftime("%H:%M", time.localtime(until))
        why = (f"{task.player}'s usage limit resets at {at}, more than "
               f"{fmt_secs(self.ws.config.limits.fallback_after)} away")
        folder = Folder().feed(self.store.events(self.plan.id))
        try:
            entry = plans.fall_back(self.ws, task.id, folder.plan.player_limits, time.time(), why)
        except BatonError as exc:  # the plan changed meanwhile: it waits for its reset
            entry, why = None, f"{why}; no fallback could take it: {exc.message}"
        if entry is None:
            self.emit(task, K.TASK_FLAGGED, flag="fallback",
                      message=f"{why}: no fallback player can start now, so it waits")
            return
        self.emit(task, K.TASK_FLAGGED, flag="fallback",
                  message=f"moved from {task.player} to {entry}: {why}")

    def _finish_research(self, task: Task, attempt: AttemptRow, workdir: Path,
                         report: dict[str, Any]) -> State:
        """Research may run commands (tests, linters) in its throwaway worktree: what they
        wrote there (caches, reports, a stray edit) is discarded, never a failure — kept under
        a ref of Baton's own for inspection, landing nowhere."""
        kept: dict[str, str] = {}
        if self.ws.paths.is_git and workdir != self.ws.root:
            changed = worktrees.changed_paths(workdir)
            if changed:
                ref = f"refs/baton/{self.plan.slug}/research-{task.id}-{attempt.id}"
                worktrees.snapshot(workdir, ref, f"What research task {task.id} left behind")
                kept = {"kept": ref, "discarded": f"{counted(len(changed), 'file')} it wrote "
                        f"({', '.join(changed[:5])}): nothing landed; kept under {ref}"}
            worktrees.remove_worktree(self.ws.root, workdir)
        self.emit(task, K.TASK_DONE, summary=report.get("summary", ""), attempt=attempt.id,
                  **kept)
        return State.DONE

    def _finish_build(self, task: Task, attempt: AttemptRow, workdir: Path,
                      report: dict[str, Any]) -> State:
        # A `script` task's check already ran as the task itself: never run it twice.
        if task.check and not self.ws.catalog.check_is_task(task.player):
            code, output = run_check(task.check, workdir)
            self.emit(task, K.TASK_CHECK, exit=code, output=output, attempt=attempt.id)
            if code != 0:
                self.emit(task, K.TASK_FAILED, reason=f"check `{task.check}` exited {code}",
                          attempt=attempt.id, output=output[-3000:])
                return State.FAILED
        git_mode = self.ws.paths.is_git and workdir != self.ws.root
        if git_mode:
            branch = attempt.spec.get("branch")
            if not self._commit(task, workdir, branch, f"Task {task.id}: {task.title}\n\n"
                                f"{report.get('summary', '')}".strip(), attempt.id):
                return State.FAILED
            base = self.view(task).base if task.scope else None  # no scope: nothing is off it
            if base and branch:
                changed = landing.changed_files(self.ws.root, base, f"refs/heads/{branch}")
                outside = landing.files_outside(changed, task.scope)
                if outside:
                    self.emit(task, K.TASK_FLAGGED, flag="scope", message="edits outside scope: "
                              + ", ".join(outside[:10]), files=outside)
            if self._unresolved(task, branch, attempt.id, workdir):
                return State.FAILED
        if task.checkpoint and not self.view(task).asked_checkpoint:
            self.emit(task, K.TASK_FLAGGED, flag="checkpoint", message="checkpoint task never "
                      "called `baton checkpoint`")
            if self._guarded():  # held before landing: the person reviews its diff first
                self.emit(task, K.TASK_CHECKPOINT, attempt=attempt.id, held=True,
                          what="finished without asking first: review its diff",
                          evidence=self._diff_stat(task, attempt) or None)
                return State.CHECKPOINT
        if self._hold(task, attempt):  # guarded: wrote outside its worktree, the person decides
            return State.CHECKPOINT
        self.emit(task, K.TASK_DONE, summary=report.get("summary", ""), attempt=attempt.id)
        if not git_mode:
            return State.DONE
        return self.land(task, attempt.spec.get("branch"), looked=True)

    def _guarded(self) -> bool:
        level = policy.level(self.doc.autonomy)
        return policy.checkpoint_decider(level, bool(self.plan.options.get("auto_checkpoints"))) \
            is None

    def _diff_stat(self, task: Task, attempt: AttemptRow) -> str:
        """What the held task changed, file by file (the checkpoint's evidence)."""
        base, branch = self.view(task).base, attempt.spec.get("branch")
        if not (base and branch and self.ws.paths.is_git):
            return ""
        rows = landing.diff_stat(self.ws.root, base, f"refs/heads/{branch}")
        return "\n".join(f"{path}  +{added} -{deleted}" for path, added, deleted in rows)

    def commit_and_land(self, task: Task) -> State:
        """Land a task marked done outside an attempt's end: a taken-over task, or one whose
        conductor died while landing. Whatever is in its worktree is committed first."""
        path = layout.worktree_path(self.ws.paths, self.plan.slug, task.id, task.title)
        if (path / ".git").exists() and not self._commit(
                task, path, task_branch(self.plan.slug, task.id, task.title),
                f"Task {task.id}: {task.title}", None):
            return State.FAILED
        return self.land(task, None)

    def _commit(self, task: Task, workdir: Path, branch: str | None, message: str,
                attempt: int | None) -> bool:
        """Commit the worktree onto the task's branch (wherever the agent left HEAD). A
        failure is the task's, after its report: a retry commits without the agent."""
        try:
            if branch is None:
                worktrees.commit_all(workdir, message)
                return True
            _commit, moved = onbranch.commit_on_branch(workdir, branch, message)
        except git.GitError as exc:
            self.emit(task, K.TASK_FAILED, stage="commit", **({"attempt": attempt} if attempt
                      else {}), reason=f"Baton could not commit the work: {exc}"[:500]
                      + " (`baton retry` commits and lands it without running the agent again)")
            return False
        if moved:
            self.emit(task, K.TASK_FLAGGED, flag="branch", message=f"the agent had checked out "
                      f"{moved}: its work was put on the task's branch {branch}")
        return True

    def land(self, task: Task, branch: str | None, looked: bool = False) -> State:
        """Land the task branch on the integration branch without checking anything out —
        together with the other tasks waiting for the landing lock (`landings`). Never with
        conflict markers among its added lines (`looked`: checked since its commit)."""
        branch = branch or task_branch(self.plan.slug, task.id, task.title)
        if not looked and self._unresolved(task, branch, None):
            return State.FAILED
        killpoints.reached("land")
        key = (str(self.ws.paths.store_path), self.plan.id)
        return landings.together(key, (task, branch), self._land_pass)

    def _land_pass(self, asks: list[landings.Ask[tuple[Task, str]]]) -> None:
        """Land every ask in one pass under the landing lock: the integration branch checked
        once, each branch merged on the one before, the branch moved once. A pass that cannot
        move it (a branch moved meanwhile, a git failure) lands each ask alone instead, so
        the failure is the task's whose it is."""
        try:
            integration.tip(self.ws, self.plan)  # rebuilt first if it was deleted
            refguard.hold_branches(self.ws, self.plan)  # landed and waiting siblings held
            # Full refs: a tag named like a task's branch is never landed in its place.
            results = landing.land_all(
                self.ws.root, [(f"refs/heads/{branch}", f"Land task {task.id}: {task.title}")
                               for task, branch in (ask.what for ask in asks)],
                integration_branch(self.plan.slug))
        except (git.GitError, BatonError) as exc:
            if len(asks) > 1:
                for ask in asks:
                    self._land_pass([ask])
                return
            task = asks[0].what[0]
            why = exc.message if isinstance(exc, BatonError) else (exc.stderr or str(exc))
            self.emit(task, K.TASK_FAILED, stage="land", reason=f"landing failed: {why}"[:500]
                      + " (`baton retry` lands it without running the agent again)")
            asks[0].state = State.FAILED
            return
        for ask, result in zip(asks, results):
            if not result.ok:
                self.emit(ask.what[0], K.TASK_FAILED, conflicts=result.conflicts,
                          reason="conflict landing on the integration branch: "
                                 + ", ".join(result.conflicts[:8])
                                 + " (branch kept; nothing merged)")
                ask.state = State.FAILED
        landed = [(ask, result) for ask, result in zip(asks, results) if result.ok]
        if not landed:
            return
        # Recorded before the lock is let go: the refs' check never finds a landing of
        # Baton's own that the store does not hold yet.
        if landed[-1][1].commit:
            refguard.landed(self.ws, self.plan, landed[-1][1].commit)
        killpoints.reached("landed")
        for ask, result in landed:
            self.emit(ask.what[0], K.TASK_LANDED, commit=result.commit, tip=result.tip,
                      at=time.time())
            ask.state = State.LANDED

    def _unresolved(self, task: Task, branch: str | None, attempt: int | None,
                    workdir: Path | None = None) -> bool:
        """Fail the task (True) when the lines its branch adds hold conflict markers: the
        reason names the files and lines (autopilot's retry hands it to the agent).
        `workdir`: its worktree, just committed — its changed files are read first, and git
        asked only when one of them has a marker line."""
        if not branch or not self.ws.paths.is_git:
            return False
        tip, cut_at = f"refs/heads/{branch}", self.view(task).base
        try:
            if workdir is not None and cut_at and not markers.maybe(
                    workdir, landing.changed_files(self.ws.root, cut_at, tip)):
                return False
            base = read_ref(self.ws.root, f"refs/heads/{integration_branch(self.plan.slug)}")
            base = base or cut_at
            found = markers.added(self.ws.root, base, tip) if base else []
        except git.GitError:
            return False  # no branch to land either: the landing says why
        if not found:
            return False
        self.emit(task, K.TASK_FAILED, **({"attempt": attempt} if attempt else {}),
                  markers=[[m.path, m.line] for m in found[:100]],
                  reason="unresolved conflict markers in the lines it added: "
                         f"{markers.said(found)} — resolve them (keep both sides' intent); "
                         "nothing landed, its branch is kept")
        return True

    def _refuse(self, task: Task, attempt: AttemptRow, workdir: Path) -> State | None:
        """After an attempt: refuse a worktree that no longer belongs to this repository
        (returns FAILED then, else None)."""
        why = outside.pinned(self.ws, workdir)
        if why is None:
            return None
        self.emit(task, K.TASK_FAILED, attempt=attempt.id,
                  reason=f"{why}: Baton committed nothing (git would have used another "
                         "repository); its branch is kept")
        return State.FAILED

    def _hold(self, task: Task, attempt: AttemptRow) -> bool:
        """Guarded mode: hold a finished task that wrote outside its worktree at a checkpoint
        naming the files, before it lands (`baton checkpoint-answer N yes|no` decides)."""
        self.flag_outside(task, attempt)  # its look must be in before the view is read
        view = self.view(task)
        if view.outside_attempt != attempt.id or not view.outside_files:
            return False
        if not self._guarded():
            return False  # watch, autopilot, `run --approve`: flagged, and it lands
        files = view.outside_files
        self.emit(task, K.TASK_CHECKPOINT, attempt=attempt.id, held=True,
                  what="it wrote outside its worktree: " + ", ".join(files[:outside.SHOWN])
                  + " — land it anyway?", evidence="\n".join(files))
        return True

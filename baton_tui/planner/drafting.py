"""The planner: a player run read-only in the repository turns a goal into a plan.

Protocol (DESIGN.md): the planner's final message holds exactly one JSON object —
`{"questions": [...]}` or a v1 plan document. Model output is untrusted: it is
parsed with the plan schema and checked (players ready here, skills, cycles,
scopes inside the repository and not overlapping between independent tasks);
problems are fed back for a bounded number of repairs. Planning never creates
branches or worktrees. The conversation (questions, answers, every planner
message) is kept in the store and, once a plan exists, stored with it.
"""

from __future__ import annotations

import fnmatch
import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from baton_tui import layout
from baton_tui.core.errors import BatonError
from baton_tui.core.rules import Action
from baton_tui.paths import own_module, write_private
from baton_tui.plan.current import current, store_new_plan
from baton_tui.planner import prompt as prompts
from baton_tui.core.dag import children, dependents
from baton_tui.plan.model import PlanDocument, parse_document
from baton_tui.plan.validate import plan_problems
from baton_tui.players import steps
from baton_tui.players.base import AttemptContext
from baton_tui.core.events import EventKind
from baton_tui.core.words import Mode, counted
from baton_tui.gitops import worktrees
from baton_tui.trust import ensure_trusted
from baton_tui.workspace import Workspace

MAX_REPAIRS = 3
SESSION_KEY = "planning"


@dataclass
class PlannerEvent:
    """Something the planner did: a research `step` (its `players.steps.Step` as data), its
    `thinking` where the player shows it, `questions`, a `repair`, the `plan`, `failed`."""

    kind: str
    text: str
    data: Any = None


@dataclass
class PlanningResult:
    status: str                       # "questions" | "plan" | "failed"
    questions: list[dict] = field(default_factory=list)
    slug: str | None = None
    message: str = ""


Listener = Callable[[PlannerEvent], None]


def _recorded(ws: Workspace, emit: Listener) -> Listener:
    """Every planner event also goes to the store (`baton log` from another terminal)."""
    def record(event: PlannerEvent) -> None:
        if event.kind != "thinking":  # a live stream for views; the log keeps what was done
            ws.store.append(None, None, EventKind(f"planner.{event.kind}"), {"text": event.text[:500]})
        emit(event)
    return record


# session ---------------------------------------------------------------------
def load_session(ws: Workspace) -> dict | None:
    return ws.store.get_meta(SESSION_KEY)


def save_session(ws: Workspace, session: dict | None) -> None:
    ws.store.set_meta(SESSION_KEY, session)


# checks ----------------------------------------------------------------------
def extract_json(text: str) -> dict | None:
    """The last JSON object in the text that looks like a planner answer."""
    decoder = json.JSONDecoder()
    starts = [i for i, ch in enumerate(text) if ch == "{"]
    for start in reversed(starts):
        try:
            obj, _end = decoder.raw_decode(text[start:])
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and ("tasks" in obj or "questions" in obj or "spec" in obj):
            return obj
    return None


def _scope_root(pattern: str) -> str:
    root = pattern.strip().rstrip("/")
    for suffix in ("/**", "/*"):
        while root.endswith(suffix):
            root = root[: -len(suffix)]
    return root


def scopes_overlap(a: str, b: str) -> bool:
    """Whether two scope entries can name the same file (conservative)."""
    ra, rb = _scope_root(a), _scope_root(b)
    if not ra or not rb or ra in ("**", "*") or rb in ("**", "*"):
        return True
    if ra == rb or ra.startswith(rb + "/") or rb.startswith(ra + "/"):
        return True
    return fnmatch.fnmatch(ra, b) or fnmatch.fnmatch(rb, a)


def overlap_problems(doc: PlanDocument) -> list[str]:
    deps = doc.deps()
    below = children(deps)
    reach: dict[int, set[int]] = {}  # a task's dependents, found once and only when needed

    def related(a: int, b: int) -> bool:
        for x in (a, b):
            if x not in reach:
                reach[x] = dependents(deps, x, below)
        return b in reach[a] or a in reach[b]

    problems = []
    tasks = [t for t in doc.tasks if t.mode == Mode.BUILD and t.scope]
    for i, a in enumerate(tasks):
        for b in tasks[i + 1:]:
            shared = [f"{x} / {y}" for x in a.scope for y in b.scope if scopes_overlap(x, y)]
            if shared and not related(a.id, b.id):
                problems.append(f"tasks {a.id} and {b.id} do not depend on each other but their "
                                f"scopes overlap ({shared[0]}): make one depend on the other or "
                                "split the files")
    return problems


def check_draft(ws: Workspace, raw: dict, ready: set[str]) -> tuple[PlanDocument | None, list[str]]:
    """Parse and check a drafted plan; returns the document or the problems to feed back."""
    try:
        doc = parse_document(raw, "draft")
    except BatonError as exc:
        return None, exc.lines
    problems = plan_problems(doc, ws.catalog, set(ws.skills))
    for task in doc.tasks:
        if task.mode != Mode.MANUAL and task.player not in ready and ws.catalog.runs_agent(task.player):
            problems.append(f"task {task.id}: player {task.player!r} is not ready on this machine "
                            f"(ready: {', '.join(sorted(ready))})")
    problems += overlap_problems(doc)
    return (None, problems) if problems else (doc, [])


# running the planner -----------------------------------------------------------
def ready_players(ws: Workspace) -> set[str]:
    return {name for name, p in ws.catalog.players.items() if p.runs_agent and p.detect().ready}


def _tree_state(root: Path) -> set[str]:
    """The checkout's `git status` entries (untracked files one by one)."""
    try:
        out = subprocess.run(["git", "status", "--porcelain=v1", "-uall", "-z"], cwd=root,
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return set()
    return {entry for entry in out.split("\0") if entry}


def _planner_changes(root: Path, before: set[str]) -> list[str]:
    """What the planner changed in the checkout. A player's own droppings (Aider's tag cache
    and chat history, say) are not the planner changing the repository: the files of them
    this run created are removed again (and their folders, once empty); the rest is returned."""
    new = sorted(_tree_state(root) - before)
    for entry in new:
        path = Path(entry[3:])
        if entry.startswith("??") and worktrees.is_dropping(str(path)):
            (root / path).unlink(missing_ok=True)
            for folder in path.parents:
                if folder == Path(".") or not worktrees.is_dropping(str(folder)):
                    break
                try:
                    (root / folder).rmdir()
                except OSError:
                    break
    return [entry for entry in new if not worktrees.is_dropping(entry[3:])]


class _Watchdog:
    """Stops the planner's process group when it stays silent for `seconds`."""

    def __init__(self, pgid: int, seconds: float):
        self.pgid, self.seconds, self.fired = pgid, seconds, False
        self.timer: threading.Timer | None = None
        self.reset()

    def _fire(self) -> None:
        self.fired = True
        try:
            os.killpg(self.pgid, signal.SIGTERM)
        except ProcessLookupError:
            pass

    def reset(self) -> None:
        self.cancel()
        self.timer = threading.Timer(self.seconds, self._fire)
        self.timer.daemon = True
        self.timer.start()

    def cancel(self) -> None:
        if self.timer is not None:
            self.timer.cancel()


def _run_player(ws: Workspace, session: dict, message: str, resume: bool,
                emit: Listener) -> str:
    """Run the planner player once, read-only, streaming its steps; returns its final text."""
    player = ws.catalog.players[session["player"]]
    turn = session["turns"] = session.get("turns", 0) + 1
    folder = layout.attempt_dir(ws.paths, "planner", 0, int(session["id"]) * 100 + turn)
    prompt_path = write_private(folder / "prompt.md", message)
    env = {"BATON_STATE": str(ws.paths.store_path), "BATON_TASK": "0",
           "PATH": f"{layout.shim_dir()}{os.pathsep}{os.environ.get('PATH', '')}"}
    ctx = AttemptContext(task_id=0, mode=Mode.RESEARCH, prompt_path=prompt_path, prompt=message,
                         worktree=ws.root, attempt_dir=folder, env=env,
                         session_id=session.get("session_id") if resume else None,
                         resume_message=message if resume else None, bin=player.bin,
                         planning=True)
    launch = (player.resume(ctx) if resume and session.get("session_id") else None) \
        or player.launch(ctx)
    argv = _masked(ws.root, session.get("guides") or [], folder, launch.argv)
    before = _tree_state(ws.root)
    log_path = folder / "output.log"
    stdin = open(prompt_path, "rb") if launch.stdin_prompt else subprocess.DEVNULL
    stall = ws.config.limits.stall
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, cwd=ws.root, stdin=stdin, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT,
                                env={**os.environ, **player.env, **launch.env, **env},
                                process_group=0)
        assert proc.stdout is not None
        watchdog = _Watchdog(proc.pid, stall)
        reader = player.step_reader()
        try:
            for raw in proc.stdout:
                watchdog.reset()
                log.write(raw)
                for step in reader.feed(raw.decode("utf-8", "replace").rstrip("\n")):
                    text = chat_line(step)
                    if text:
                        emit(PlannerEvent("step", text, step))
                    elif step.kind == "note" and step.text.startswith("thinking: "):
                        emit(PlannerEvent("thinking", step.text.removeprefix("thinking: ")))
            proc.wait()
        finally:
            watchdog.cancel()
        if watchdog.fired:
            raise BatonError(f"the planner was silent for {int(stall)}s and was stopped", code=1)
    if hasattr(stdin, "close"):
        stdin.close()
    changed = _planner_changes(ws.root, before)
    if changed:
        raise BatonError("the planner changed the repository although it runs read-only; "
                         "planning stopped (nothing of it was kept as a plan). Changes:\n"
                         + "\n".join(changed)[:2000], code=1)
    text = log_path.read_text(encoding="utf-8", errors="replace")
    outcome = player.outcome(text)
    if outcome.session_id:
        session["session_id"] = outcome.session_id
    if outcome.limit_until or outcome.rate_limited:
        raise BatonError(f"the planner ({session['player']}) hit a usage or rate limit; try again "
                         "later or set another planner (BATON_PLANNER)", code=3)
    final = outcome.final_text or text
    if proc.returncode not in (0, None) and extract_json(final) is None:
        detail = outcome.error or (text.strip().splitlines() or ["no output"])[-1]
        raise BatonError(f"the planner ({session['player']}) exited {proc.returncode}: {detail}",
                         code=1)
    return final


MASKED_MAX = 200  # instruction files shown empty to a planning CLI at most


def _masked(root: Path, guides: list[str], folder: Path, argv: list[str]) -> list[str]:
    """`argv`, run so that the repository's instruction files read as empty to the planning
    CLI (`runners/masked.py`): the planner gets them as quoted data in its prompt, never as the
    CLI's own orders. Only regular files inside the checkout (a link could name any file)."""
    paths = []
    for name in guides[:MASKED_MAX]:
        path = root / name
        try:
            regular = path.resolve().is_relative_to(root.resolve()) and not path.is_symlink() \
                and path.is_file()
        except OSError:
            regular = False
        if regular:
            paths.append(str(path))
    if not paths:
        return argv
    empty = write_private(folder / "empty", "")
    return own_module("baton_tui.runners.masked", str(empty), *paths, "--", *argv)


def chat_line(step: "steps.Step") -> str | None:
    """One research step as the chat shows it: the planner's final JSON answer is not echoed
    (its questions and plan are shown as such), its other words and calls are."""
    if step.kind == "note" and not step.text.startswith("started"):
        return None  # stderr chatter and banners stay in the log
    if step.kind in ("said", "result") and "{" in step.text + step.detail:
        if step.kind == "result":
            return None
        words = f"{step.text} {step.detail}".split("{", 1)[0].strip()
        return words[:300] if words else "wrote its answer"
    text = step.text + (f" — {step.detail}" if step.detail and step.kind == "said" else "")
    return text[:300]


def _converse(ws: Workspace, session: dict, message: str, resume: bool,
              emit: Listener) -> PlanningResult:
    ready = ready_players(ws)
    for attempt in range(MAX_REPAIRS + 1):
        session["transcript"].append({"role": "baton", "text": message})
        final = _run_player(ws, session, message, resume or attempt > 0, emit)
        session["transcript"].append({"role": "planner", "text": final})
        save_session(ws, session)
        raw = extract_json(final)
        if raw is not None and "tasks" not in raw and isinstance(raw.get("spec"), str) \
                and raw["spec"].strip() and not session.get("spec"):
            session["spec"] = raw["spec"].strip()
            session["transcript"].append({"role": "spec", "text": session["spec"]})
            save_session(ws, session)
            emit(PlannerEvent("spec", session["spec"], session["spec"]))
            message, resume = prompts.spec_follow_up(session["spec"]), True
            continue
        if raw is None:
            problems = ["your final message held no JSON object"]
        elif "tasks" not in raw:
            questions = [q for q in raw.get("questions", []) if isinstance(q, dict)
                         and isinstance(q.get("question"), str) and q["question"].strip()]
            if questions:
                session["questions"] = [{"question": q["question"].strip(),
                                         "recommendation": str(q.get("recommendation") or ""),
                                         "answer": None} for q in questions]
                save_session(ws, session)
                emit(PlannerEvent("questions", counted(len(questions), "question"),
                                  session["questions"]))
                return PlanningResult("questions", session["questions"])
            problems = ["questions must be a non-empty list of {question, recommendation}"]
        else:
            raw.setdefault("version", 1)
            raw.setdefault("goal", session["goal"])
            if session.get("questions") and not raw.get("questions"):
                raw["questions"] = session["questions"]
            doc, problems = check_draft(ws, raw, ready)
            if doc is not None:
                row = store_new_plan(ws, doc, new=session.get("new", False),
                                     transcript=session["transcript"], source="planner")
                save_session(ws, None)
                emit(PlannerEvent("plan", f"plan {row.slug}: {counted(len(doc.tasks), 'task')}",
                                  row.slug))
                return PlanningResult("plan", slug=row.slug)
        emit(PlannerEvent("repair", "; ".join(problems)[:500], problems))
        message = prompts.repair_message(problems)
    session["failed"] = problems
    save_session(ws, session)
    text = (f"the planner's draft was still invalid after {MAX_REPAIRS} repairs: "
            + "; ".join(problems[:5]) + " — the transcript is kept (`baton plan --goal` again)")
    emit(PlannerEvent("failed", text, problems))
    return PlanningResult("failed", message=text)


def start(ws: Workspace, goal: str, new: bool = False,
          emit: Listener = lambda event: None, skill: str | None = None) -> PlanningResult:
    """Plan a goal from scratch with the configured planner; `skill` (grilling, to-spec)
    changes how it works: interrogate the goal first, or write a spec the plan is built on."""
    if skill is not None and skill not in prompts.SKILLS:
        raise BatonError(f"unknown planner skill {skill!r} (known: {', '.join(prompts.SKILLS)})")
    emit = _recorded(ws, emit)
    cur = current(ws, required=False)
    if cur is not None:
        cur.refuse(ws, Action.ARCHIVE_PLAN if new else Action.NEW_PLAN)
    name = ws.config.planner
    player = ws.catalog.players.get(name)
    if player is None:
        raise BatonError(f"planner {name!r} is not a player (set `planner` in baton.toml or "
                         f"BATON_PLANNER to one of: {', '.join(ws.catalog.names())})")
    found = player.detect()
    if not found.ready:
        raise BatonError(f"planner {name!r} is not ready: {found.reason}"
                         + (f" — {found.fix}" if found.fix else "")
                         + "; or set BATON_PLANNER to a ready player")
    if not player.research:
        raise BatonError(f"planner {name!r} has no read-only profile, so it cannot plan")
    ensure_trusted(ws, {name}, keys=())
    files = prompts.repo_files(ws.root)
    skills = {n: s.when or s.description for n, s in ws.skills.items()}
    ready = sorted(ready_players(ws))
    message = prompts.instructions(goal, prompts.snapshot(ws.root, files), ready,
                                   ws.config.players.default, ws.config.players.research, skills)
    message += prompts.skill_rules(skill)
    guides = prompts.instruction_files(ws.root, files)
    session = {"id": int(time.time() * 1000) % 10_000_000, "goal": goal, "player": name,
               "new": new, "questions": [], "transcript": [], "skill": skill, "guides": guides}
    if guides:  # the person sees what the repository would tell agents, and how it is read
        emit(PlannerEvent("step", "the repository's instruction files (read as data, not "
                                  "obeyed, while planning): " + ", ".join(guides[:12])
                                  + (f" (+{len(guides) - 12} more)" if len(guides) > 12 else "")))
    emit(PlannerEvent("step", f"{name} is reading the repository ({len(files)} files)"))
    return _converse(ws, session, message, False, emit)


def answer(ws: Workspace, answers: dict[int, str], take_recommendations: bool = False,
           emit: Listener = lambda event: None) -> PlanningResult:
    """Record answers (1-based), then continue planning once every question has one."""
    emit = _recorded(ws, emit)
    session = load_session(ws)
    if not session or not session.get("questions"):
        raise BatonError("no planner questions are waiting (start with `baton plan --goal \"…\"`)")
    ensure_trusted(ws, {session["player"]}, keys=())
    questions = session["questions"]
    for number, text in answers.items():
        if not 1 <= number <= len(questions):
            raise BatonError(f"there is no question {number} (questions 1–{len(questions)})")
        if not text.strip():
            raise BatonError(f"the answer to question {number} is empty")
        questions[number - 1]["answer"] = text.strip()
    if take_recommendations:
        for q in questions:
            if q.get("answer") is None:
                q["answer"] = q.get("recommendation") or "as you recommend"
    save_session(ws, session)
    if any(q.get("answer") is None for q in questions):
        return PlanningResult("questions", [q for q in questions if q.get("answer") is None])
    return _converse(ws, session, prompts.answers_message(questions), True, emit)

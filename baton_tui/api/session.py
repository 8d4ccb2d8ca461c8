"""The session handle: one object a front end holds for one repository — its workspace, the
current plan and the event cursor — instead of engine objects.

`baton serve` (and through it the editor, the browser and ACP) drives everything through a
`Session`. Its methods return plain JSON-ready values. It may be called from several threads at
once: each thread gets a workspace of its own (SQLite connections belong to the thread that
opened them); edits still meet in the store's locks and the rule book, as two terminals do.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from baton_tui.core.errors import BatonError
from baton_tui.core.snapshot import NO_PLAN

if TYPE_CHECKING:
    from baton_tui.core.events import Event
    from baton_tui.planner.drafting import PlannerEvent
    from baton_tui.workspace import Workspace


class Session:
    """One repository, as every front end sees it."""

    def __init__(self, start: Path | str | None = None):
        from baton_tui.workspace import Workspace  # lazy: `baton --help` never builds one

        first = Workspace(start)
        self.root: Path = first.root
        self.store_path: Path = first.paths.store_path
        self._local = threading.local()
        self._local.ws = first
        self._opened = [first]
        self._lock = threading.Lock()
        self._players: dict[str, Any] | None = None
        # Told after a plan edit is stored, before its answer is made: a server sends the
        # edit's event at once instead of after the answer (an edit's round trip).
        self.wrote: Callable[[], None] = lambda: None

    # the workspace of the calling thread ----------------------------------------------------
    @property
    def ws(self) -> "Workspace":
        ws = getattr(self._local, "ws", None)
        if ws is None:
            ws = self._local.ws = self._opened[0].sibling()
            with self._lock:
                self._opened.append(ws)
        ws.refresh_config()  # a long-lived server follows edits to baton.toml
        return ws

    def close(self) -> None:
        with self._lock:
            for ws in self._opened:
                try:
                    ws.close()
                except Exception:  # a thread's connection may already be gone: closing is best effort
                    pass
            self._opened.clear()

    # reading ----------------------------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """`baton status --json`'s object, and the cursor it was read at."""
        from baton_tui.api.reading import snapshot

        store = self.ws.store
        cursor = store.last_event_id()
        data = snapshot(store).as_json()
        data["cursor"] = cursor
        return data

    def plan(self) -> dict[str, Any]:
        from baton_tui.plan.current import current

        cur = current(self.ws, required=False)
        if cur is None:
            return {"plan": None, "approved": False, "slug": None}
        return {"plan": cur.doc.dump(), "approved": cur.row.approved, "slug": cur.row.slug}

    def events_after(self, cursor: int, limit: int = 500) -> "list[Event]":
        return self.ws.store.events(after=cursor, limit=limit)

    def last_cursor(self) -> int:
        return self.ws.store.last_event_id()

    # planning ---------------------------------------------------------------------------------
    def draft(self, goal: str, *, skill: str | None = None, new: bool = False,
              emit: "Callable[[PlannerEvent], None]" = lambda event: None) -> dict[str, Any]:
        from baton_tui.api.plans import plan_goal

        return self._planned(plan_goal(self.ws, goal, new=new, emit=emit, skill=skill))

    def answer(self, text: str | None, *, number: int | None = None, recommended: bool = False,
               emit: "Callable[[PlannerEvent], None]" = lambda event: None) -> dict[str, Any]:
        """Answer the first open question (or question `number`); `recommended` takes the
        recommendation for every one still open."""
        from baton_tui.api.plans import plan_answer, planner_session

        questions = planner_session(self.ws).get("questions") or []
        answers: dict[int, str] = {}
        if text is not None and text.strip():
            if number is None:
                number = next((n for n, q in enumerate(questions, 1) if q.get("answer") is None),
                              None)
                if number is None:
                    raise BatonError("no planner question is open (draft a plan with a goal)")
            answers[number] = text
        elif not recommended:
            raise BatonError("the answer is empty: say what you want, or take the "
                             "recommendations")
        return self._planned(plan_answer(self.ws, answers, recommended, emit=emit))

    def _planned(self, result: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"status": result.status, "questions": list(result.questions),
                               "slug": result.slug, "message": result.message, "plan": None}
        if result.status == "questions":
            from baton_tui.api.plans import planner_session

            asked = planner_session(self.ws).get("questions") or result.questions
            out["questions"] = [q for q in asked if q.get("answer") is None]
        elif result.status == "plan":
            out["plan"] = self.plan()["plan"]
        return out

    def new_plan(self) -> bool:
        """Archive the current plan (its branches and worktrees are kept); False: none."""
        from baton_tui.plan.current import archive_current

        return archive_current(self.ws)

    # editing ----------------------------------------------------------------------------------
    def edit(self, task_id: int, field: str, value: Any) -> dict[str, Any]:
        from baton_tui.api.plans import edit_task

        if field == "branch":
            raise BatonError("a task's branch is derived from the plan and the task's title "
                             "(baton/<plan>/<id>-<title>), never set by hand: change the title "
                             "to change it")
        edit_task(self.ws, task_id, field, value)
        self.wrote()
        return self.plan()

    def add(self, title: str, player: str, mode: str, depends_on: list[int], prompt: str,
            check: str | None) -> dict[str, Any]:
        from baton_tui.api.plans import add_task

        new_id = add_task(self.ws, title, player, mode, depends_on, prompt, check)
        self.wrote()
        return {"id": new_id, **self.plan()}

    def remove(self, task_id: int) -> dict[str, Any]:
        from baton_tui.api.plans import remove_task

        remove_task(self.ws, task_id)
        self.wrote()
        return self.plan()

    def approve(self) -> dict[str, Any]:
        from baton_tui.api.plans import approve

        row, warnings = approve(self.ws)
        return {"approved": True, "base_branch": row.base_branch, "base_commit": row.base_commit,
                "warnings": list(warnings)}

    # running ----------------------------------------------------------------------------------
    def start(self, until_failures: int | None = None, deadline: str | None = None) -> dict[str, Any]:
        """Start the run (its conductor detached) and return at once."""
        from baton_tui.api.running import start_run

        pid = start_run(self.ws, until_failures=until_failures, deadline=deadline)
        return {"started": True, "conductor": pid}

    def stop(self) -> dict[str, Any]:
        from baton_tui.api.running import pause_run

        before = self.status().get("conductor")
        pause_run(self.ws)
        return {"paused": before is not None}

    def stop_task(self, task_id: int) -> None:
        from baton_tui.api.running import stop_task

        stop_task(self.ws, task_id)

    def retry(self, task_id: int, feedback: str | None) -> dict[str, Any]:
        from baton_tui.api.running import retry_task

        return {"queued": True, "conductor": retry_task(self.ws, task_id, feedback)}

    def done(self, task_id: int) -> None:
        from baton_tui.api.running import mark_done

        mark_done(self.ws, task_id)

    def discard(self, task_id: int, with_dependents: bool) -> dict[str, Any]:
        from baton_tui.api.handoff import discard

        gone = discard(self.ws, task_id, with_dependents)
        return {"discarded": [victim for victim, _ in gone],
                "kept_under": {str(victim): ref for victim, ref in gone}}

    def take(self, task_id: int) -> dict[str, Any]:
        """Stop the task's agent (session saved); the command that resumes its session in its
        worktree — or the person's shell where the player has none."""
        import os

        from baton_tui.api.running import interactive_argv, take_task

        player = self._task_player(task_id)
        interactive_argv(self.ws, player, None)  # an untrusted command: refused before anything
        info = take_task(self.ws, task_id)
        argv = interactive_argv(self.ws, info["player"], info["session"])
        return {"argv": argv or [os.environ.get("SHELL") or "/bin/sh"], "cwd": info["worktree"],
                "player": info["player"], "session": info["session"],
                "interactive": argv is not None}

    def _task_player(self, task_id: int) -> str:
        from baton_tui.api.plans import current_plan

        cur = current_plan(self.ws)
        assert cur is not None
        return str(cur.doc.task(task_id).player)

    def answer_checkpoint(self, task_id: int, yes: bool) -> None:
        from baton_tui.api.running import answer_checkpoint

        answer_checkpoint(self.ws, task_id, yes)

    # players and runners ----------------------------------------------------------------------
    def players(self, refresh: bool = False) -> list[dict[str, Any]]:
        from baton_tui.api.agents import detect_players, player_catalog, player_efforts

        if refresh or self._players is None:
            self.ws.__dict__.pop("catalog", None)  # a newly installed or signed-in agent
            self._players = detect_players(self.ws)
        out = []
        for name, found in self._players.items():
            models, default = player_catalog(self.ws, name)
            out.append({**found.as_json(), "name": name,
                        "models": None if models is None else list(models),
                        "default_model": default, "efforts": list(player_efforts(self.ws, name))})
        return out

    def runners(self) -> list[dict[str, Any]]:
        from baton_tui.api.runners import runners

        return runners(self.ws)

    # handoff ----------------------------------------------------------------------------------
    def review(self, task_id: int | None = None) -> dict[str, Any]:
        """The combined diff of landed work (or one task's), its files with their counts and
        the tasks that touched each, the base and the integration tip."""
        from baton_tui.api.handoff import review
        from baton_tui.gitops import git
        from baton_tui.handoff.view import split_diff
        from baton_tui.plan.current import current

        data = review(self.ws, task_id)
        cur = current(self.ws)
        assert cur is not None
        touched: dict[str, list[int]] = {}
        for section in data["tasks"]:
            for path in section["files"]:
                touched.setdefault(path, []).append(section["id"])
        files = [{"path": f.path, "added": f.added, "deleted": f.deleted,
                  "tasks": touched.get(f.path, [])} for f in split_diff(data["diff"])]
        head = git.rev_parse(self.ws.root, f"refs/heads/{cur.row.integration_branch}")
        tasks = [{k: v for k, v in section.items() if k != "diff"} for section in data["tasks"]]
        return {"diff": data["diff"], "files": files, "tasks": tasks, "onto": data.get("onto"),
                "base": cur.row.base_commit, "head": head}

    def file_sides(self, path: str) -> dict[str, Any]:
        """One file as it is on the person's branch and with the landed work (for a diff view)."""
        from baton_tui.gitops import git
        from baton_tui.plan.current import current

        cur = current(self.ws)
        assert cur is not None
        if path.startswith(("/", "-")) or ".." in Path(path).parts or "\x00" in path:
            raise BatonError(f"{path!r} is not a path inside the repository")
        if not cur.row.base_branch:
            raise BatonError("the plan has not run yet: there is nothing to compare")

        def at(ref: str) -> tuple[str | None, bool]:
            shown = git.run_git(self.ws.root, "cat-file", "blob", f"{ref}:{path}")
            if shown.returncode != 0:
                return None, False
            return shown.stdout, "\x00" in shown.stdout[:8000]

        left, left_binary = at(f"refs/heads/{cur.row.base_branch}")
        right, right_binary = at(f"refs/heads/{cur.row.integration_branch}")
        if left is None and right is None:
            raise BatonError(f"{path}: not on {cur.row.base_branch} nor in the landed work")
        binary = left_binary or right_binary
        return {"path": path, "left": None if binary else left, "right": None if binary else right,
                "binary": binary}

    def merge(self, up_to: int | None = None) -> dict[str, Any]:
        from baton_tui.api.handoff import git_handoff, merge

        if not git_handoff(self.ws):
            raise BatonError("folder mode: the tasks worked in this folder directly — there is "
                             "nothing to merge")
        outcome = merge(self.ws, up_to)
        notes = [f"task {task_id}: {shift['said']}" for task_id, shift in outcome.moved.items()]
        conflict = outcome.conflict
        return {"merged": list(outcome.merged), "already": list(outcome.skipped),
                "onto": outcome.onto, "not_landed": list(outcome.not_landed), "notes": notes,
                "conflict": None if conflict is None else {
                    "id": conflict["id"], "branch": conflict["branch"],
                    "files": list(conflict["files"]), "command": conflict["command"]}}

    # logs -------------------------------------------------------------------------------------
    def read_log(self, task_id: int, cursor: int, limit: int = 256 * 1024) -> dict[str, Any]:
        """A task's newest attempt's output from a byte cursor, as redacted lines (a line cut
        at the end waits for the next call)."""
        from baton_tui.api.reading import latest_output, output_text, read_log

        cur = self._current_id()
        path, player, prints = latest_output(self.store_path, cur, task_id)
        if path is None:
            return {"lines": [], "cursor": cursor, "cut": 0, "player": player}
        data, after, cut = read_log(path, cursor, limit)
        end = data.rfind(b"\n") + 1
        if end == 0 and len(data) < limit:
            return {"lines": [], "cursor": cursor, "cut": cut, "player": player}
        if end == 0:
            end = len(data)  # one line longer than the limit: shown in pieces
        text = data[:end].decode("utf-8", "replace")
        lines = [output_text(line, prints) for line in text.splitlines()]
        return {"lines": lines, "cursor": after - (len(data) - end), "cut": cut, "player": player}

    def log_end(self, task_id: int) -> int:
        """Where a task's newest log ends now (a follower that joins late starts there)."""
        from baton_tui.api.reading import latest_output, log_size

        path, _, _ = latest_output(self.store_path, self._current_id(), task_id)
        return log_size(path) if path else 0

    def _current_id(self) -> int:
        found = self.plan_id()
        if found is None:
            raise BatonError(NO_PLAN)
        return found

    def plan_id(self) -> int | None:
        from baton_tui.plan.current import current

        cur = current(self.ws, required=False)
        return None if cur is None else int(cur.row.id)

"""What each plan key does: open a typed modal, then hand its value to the engine.

`TaskActions` is the App's collaborator for the plan keys (`app.actions`), holding the App
as a `Host` (`host.py`: what it may use of it): bindings name
actions on the App ("app." namespace, so one `check_action` decides what applies now), and
each of the App's `action_*` methods hands its key to the method of the same name here.
A handler that waits on a modal runs as a worker of the App in the `action` group
(`BatonApp.busy` watches it), so it can await `push_screen_wait` and the engine thread
without blocking the loop; a refusal (BatonError) is shown, never swallowed.
"""

from __future__ import annotations

import asyncio
from functools import wraps
from typing import TYPE_CHECKING, Any, Callable, Coroutine

from textual.binding import Binding

from baton_tui import api
from baton_tui.api import LOCAL_RUNNER, TaskSnap
from baton_tui.core.words import Autonomy, Mode
from baton_tui.tui import bindings, screens
from baton_tui.tui.host import Host
from baton_tui.tui.messages import PlanApproved, PlanEdited, RunCommanded
from baton_tui.tui.screens.pickers import (
    Choice, ChoiceModal, ConfirmModal, EditMenu, PickManyModal, TextModal,
)
from baton_tui.tui.words import AUTONOMY_NOTES, MODE_NOTES

if TYPE_CHECKING:
    from textual.worker import Worker

    from baton_tui.tui.screens.add_task import NewTask

DEFAULT = "(default)"  # the picker value for "the player's default"
Handler = Callable[["TaskActions"], Coroutine[Any, Any, None]]

# What a run-control key's toast says it did: what was asked, not that the task is "done".
SAID = {"start_run": "run started", "start_task": "starting now",
        "stop_task": "stopping", "retry_task": "queued to try again",
        "answer_checkpoint": "answered", "mark_done": "marked done",
        "pause_run": "pausing the run: running tasks stop and can be resumed"}


def worker(description: str) -> Callable[[Handler], Callable[[TaskActions], Worker[None]]]:
    """Run a key's handler as a worker of the App (what `@work` does for a DOM node's own
    method): in the `action` group, its failure reported by the App, never raised."""
    def wrap(handler: Handler) -> Callable[[TaskActions], Worker[None]]:
        @wraps(handler)
        def start(self: TaskActions) -> Worker[None]:
            return self.app.run_worker(handler(self), group="action", exit_on_error=False,
                                       description=description)
        return start
    return wrap


async def ready_players(app: Host) -> tuple[list[str], list[str]]:
    """(offered, not offered with why) — only detected, ready players are offered."""
    found = app.detections
    if found is None:
        # On the engine thread: detection records what it found in the store.
        found = app.detections = await app.engine.call(api.detect_players)
    ready = [n for n, d in found.items() if d.ready]
    missing = [f"{n} ({d.reason})" for n, d in found.items() if not d.ready]
    return ready, missing


class TaskActions:
    """Key handlers of the plan pane, acting on the App that holds them."""

    def __init__(self, app: Host) -> None:
        self.app = app

    # helpers --------------------------------------------------------------------------
    async def edit(self, task: TaskSnap, field: str, value: Any) -> bool:
        app = self.app
        voided = app.board.approved
        ok, _ = await app.engine_call(f"#{task.id} {field}", api.edit_task, task.id, field,
                                      value)
        if ok:
            app.post_message(PlanEdited(task.id, field, voided and not task.started))
            note = f"#{task.id} {field.replace('depends_on', 'dependencies')} saved"
            if voided and not task.started:
                note += " — approval voided: press a to approve again"
            app.notify(note, severity="warning" if voided else "information")
        return ok

    async def control(self, name: str, task: TaskSnap | None, *args: Any) -> None:
        """Run one run-control function of the façade (`start_run`, `stop_task` …)."""
        fn = getattr(api, name)
        target = f"#{task.id} " if task else ""
        ok, result = await self.app.engine_call(f"{target}{name.replace('_', ' ')}", fn,
                                                *([task.id] if task else []), *args)
        if ok:
            self.app.post_message(RunCommanded(name, task.id if task else None, result))
            said = SAID.get(name, name.replace("_", " ") + ": asked")
            self.app.notify(f"{target}{said}"
                            + (f" (conductor pid {result})" if name == "start_run" and result
                               else ""))

    def focused_task(self) -> TaskSnap:
        task = self.app.plan_pane.selected_task
        assert task is not None  # check_action refuses task keys without a task
        return task

    # keys: the App's `action_NAME` calls NAME ------------------------------------------
    def handoff(self) -> None:
        # Reading the review (git) starts now, while the screen mounts.
        reading = asyncio.ensure_future(self.app.engine_call("handoff", api.handoff_review))
        self.app.push_screen(screens.HandoffScreen(reading))

    def dag(self) -> None:
        app = self.app
        selected = app.plan_pane.selected_task
        app.push_screen(screens.DagScreen(app.board, selected.id if selected else None),
                        lambda chosen: app.plan_pane.select(chosen) if chosen else None)

    def task_detail(self) -> None:
        app, task = self.app, self.focused_task()
        assert app.board.plan_id is not None  # a task is on the board, so is its plan
        app.push_screen(screens.TaskDetail(task, app.board.plan_id, app.board.base_commit,
                                           app.ws.store_path, app.ws.root,
                                           follow=app.follow_logs))

    def edit_menu(self) -> None:
        """`e`: the fields that may change now, each with its key (remapped ones as mapped);
        the chosen one's own key handler then runs, as if its key had been pressed."""
        app = self.app
        task = self.focused_task()
        by_id = {b.id: b for b in bindings.PLAN}
        choices, keys = [], {}
        for field in bindings.FIELDS:
            binding = by_id[field]
            action = binding.action.removeprefix("app.")
            if app.why_not(action) is not None:
                continue
            pressed = bindings.keys_of(binding, app.keymap)
            shown = app.get_key_display(Binding(pressed[0], binding.action))
            choices.append(Choice(action, f"{shown:<3} {binding.description}"))
            keys.update(dict.fromkeys(pressed, action))

        def chosen(action: str | None) -> None:
            if action:
                getattr(self, action)()  # the key handler of the same name

        app.push_screen(EditMenu(f"edit #{task.id} {task.title}", choices, keys), chosen)

    @worker("edit prompt")
    async def edit_prompt(self) -> None:
        task = self.focused_task()
        value = await self.app.push_screen_wait(screens.PromptEditor(
            task.id, task.title, task.prompt, blink=self.app.blink))
        if value is not None and value != task.prompt:
            await self.edit(task, "prompt", value)

    @worker("choose player")
    async def pick_player(self) -> None:
        task = self.focused_task()  # the task selected when R was pressed

        async def players() -> tuple[list[Choice[str]], str]:
            ready, missing = await ready_players(self.app)
            note = ("not offered (not ready): " + "; ".join(missing)) if missing else ""
            return ([Choice(n, n) for n in ready],
                    note + ("\n" if note else "") + "model and effort reset to its defaults")

        title = f"player of #{task.id}"
        if self.app.detections is not None:  # found already: no wait
            choices, note = await players()
            picker = ChoiceModal(title, choices, task.player, note=note)
        else:  # open at once: detecting the CLIs may take seconds, and keys typed
            # meanwhile belong to the picker, not to the plan's cursor under it
            picker = ChoiceModal(title, [], task.player, note="detecting players…",
                                 loading=players)
        value = await self.app.push_screen_wait(picker)
        if value is not None and value != task.player:
            await self.edit(task, "player", value)

    @worker("choose model")
    async def pick_model(self) -> None:
        task = self.focused_task()
        catalog, default = api.player_catalog(self.app.ws, task.player)
        if catalog is None:
            value = await self.app.push_screen_wait(TextModal(
                f"model of #{task.id}", task.model or "", "empty: the player's default",
                note=f"{task.player} takes any model name", blink=self.app.blink))
            if value is None:
                return
            model = value.strip() or None
        else:
            choices = [Choice(DEFAULT, f"(default{': ' + default if default else ''})")]
            value = await self.app.push_screen_wait(ChoiceModal(
                f"model of #{task.id}", choices + [Choice(m, m) for m in catalog],
                task.model or DEFAULT, note=f"{task.player}'s catalog"))
            if value is None:
                return
            model = None if value == DEFAULT else value
        if model != task.model:
            await self.edit(task, "model", model)

    @worker("choose effort")
    async def pick_effort(self) -> None:
        task = self.focused_task()
        efforts = api.player_efforts(self.app.ws, task.player)
        choices = [Choice(DEFAULT, "(player default)")] + [Choice(e, e) for e in efforts]
        value = await self.app.push_screen_wait(ChoiceModal(f"effort of #{task.id}", choices,
                                                            task.effort or DEFAULT))
        if value is not None:
            effort = None if value == DEFAULT else value
            if effort != task.effort:
                await self.edit(task, "effort", effort)

    @worker("choose mode")
    async def pick_mode(self) -> None:
        task = self.focused_task()
        value = await self.app.push_screen_wait(ChoiceModal(
            f"mode of #{task.id}", [Choice(str(m), f"{m} — {MODE_NOTES[m]}") for m in Mode],
            task.mode))
        if value is not None and value != task.mode:
            await self.edit(task, "mode", value)

    @worker("choose runner")
    async def pick_runner(self) -> None:
        task = self.focused_task()
        names = api.runner_names(self.app.ws)
        value = await self.app.push_screen_wait(ChoiceModal(
            f"runner of #{task.id}", [Choice(n, n + (" — this machine" if n == LOCAL_RUNNER else ""))
                                      for n in names], task.runner,
            note="where its agent runs: this machine, or a [runners.NAME] cluster"))
        if value is not None and value != task.runner:
            await self.edit(task, "runner", value)

    @worker("edit dependencies")
    async def edit_deps(self) -> None:
        task = self.focused_task()
        deps = {t.id: list(t.depends_on) for t in self.app.board.tasks}
        below = api.dependents(deps, task.id)
        choices = [Choice(t.id, f"#{t.id} {t.title}") for t in self.app.board.tasks
                   if t.id != task.id and t.id not in below]
        note = (f"not offered (they depend on #{task.id}): "
                + ", ".join(f"#{d}" for d in sorted(below))) if below else ""
        value = await self.app.push_screen_wait(PickManyModal(
            f"#{task.id} depends on", choices, list(task.depends_on), note=note))
        if value is not None and sorted(value) != sorted(task.depends_on):
            await self.edit(task, "depends_on", sorted(value))

    @worker("edit skills")
    async def edit_skills(self) -> None:
        task = self.focused_task()
        choices = [Choice(name, f"{name} — {description}")
                   for name, description in api.skills(self.app.ws).items()]
        value = await self.app.push_screen_wait(PickManyModal(
            f"skills of #{task.id}", choices, list(task.skills)))
        if value is not None and value != list(task.skills):
            await self.edit(task, "skills", value)

    async def _text_field(self, task: TaskSnap, field: str, label: str, current: str,
                          convert: Callable[[str], Any], note: str = "",
                          allow_empty: bool = True) -> None:
        value = await self.app.push_screen_wait(TextModal(
            f"{label} of #{task.id}", current, note=note, blink=self.app.blink,
            allow_empty=allow_empty))
        if value is None:
            return
        converted = convert(value)
        if converted != (list(getattr(task, field)) if field == "scope" else getattr(task, field)):
            await self.edit(task, field, converted)

    @worker("edit title")
    async def edit_title(self) -> None:
        task = self.focused_task()
        await self._text_field(task, "title", "title", task.title, str.strip, allow_empty=False)

    @worker("edit scope")
    async def edit_scope(self) -> None:
        task = self.focused_task()
        await self._text_field(task, "scope", "scope", ", ".join(task.scope),
                               api.parse_list,
                               note="paths or globs, comma-separated; empty for none")

    @worker("edit check")
    async def edit_check(self) -> None:
        task = self.focused_task()
        await self._text_field(task, "check", "check", task.check or "",
                               lambda v: v.strip() or None,
                               note="run with sh -c in the task's worktree after it reports")

    @worker("toggle checkpoint")
    async def toggle_checkpoint(self) -> None:
        task = self.focused_task()
        await self.edit(task, "checkpoint", not task.checkpoint)

    @worker("add task")
    async def add_task(self) -> None:
        app = self.app
        focused = app.plan_pane.selected_task
        default = api.default_player(app.ws) or (focused.player if focused else None)
        added: list[int] = []
        voided = app.board.approved

        async def submit(new: NewTask) -> str | None:
            """Add it on the engine thread; a refusal goes back to the form, not a toast."""
            try:
                added.append(await app.engine.call(api.add_task, new.title, new.player,
                                                   new.mode, new.deps, new.prompt, new.check))
            except api.BatonError as exc:
                return " ".join(exc.lines)
            app.poke()
            return None

        async def players() -> list[str]:
            return (await ready_players(app))[0]

        if app.detections is not None:  # found already: no wait
            form = screens.AddTaskModal(await players(), default, [], submit, blink=app.blink)
        else:  # open at once: detecting the CLIs may take seconds
            form = screens.AddTaskModal([], default, [], submit, blink=app.blink,
                                        finding=players)
        if await app.push_screen_wait(form) is None:
            return
        new_id = added[0]
        app.post_message(PlanEdited(new_id, "add", voided))
        app.notify(f"task #{new_id} added — press p to write its prompt"
                   + (" · approval voided" if voided else ""))
        app.select_after_refresh = new_id

    @worker("remove task")
    async def remove_task(self) -> None:
        task = self.focused_task()
        sure = await self.app.push_screen_wait(ConfirmModal(
            "remove task", f"Remove #{task.id} {task.title}?"))
        if sure:
            app = self.app
            voided = app.board.approved
            ok, _ = await app.engine_call(f"remove #{task.id}", api.remove_task, task.id)
            if ok:
                app.post_message(PlanEdited(task.id, "remove", voided))
                app.notify(f"task #{task.id} removed" + (" · approval voided" if voided else ""))

    def approve(self) -> None:
        """The dialog goes on screen now, in the key's own handler, so a key typed right
        after `a` lands in it; the players it names are read behind it."""
        app = self.app
        names = sorted({t.player for t in app.board.tasks})
        known_facts, known_found = app.player_facts, app.detections

        async def players() -> tuple[api.PlayerFacts, dict[str, Any] | None]:
            facts = known_facts
            if facts is None:
                facts = await app.engine.call(api.known_player_facts, names)
            found: dict[str, Any] | None = known_found
            if found is None:
                found = app.detections = await app.engine.call(api.detect_players)
            return facts, found

        ready = known_facts is not None and known_found is not None
        modal = screens.ApproveModal(app.board, known_facts, known_found,
                                     reading=None if ready else players)

        def approved(yes: bool | None) -> None:
            if yes:
                self._approved()

        app.push_screen(modal, approved)

    @worker("approve")
    async def _approved(self) -> None:
        app = self.app
        ok, result = await app.engine_call("approve", api.approve)
        if ok:
            _row, warnings = result
            app.post_message(PlanApproved(warnings))
            app.notify("plan approved — press E to run it"
                       + "".join(f"\n⚠ {w}" for w in warnings),
                       severity="warning" if warnings else "information")

    @worker("run plan")
    async def run_plan(self) -> None:
        await self.control("start_run", None)

    @worker("start task")
    async def start_task(self) -> None:
        await self.control("start_task", self.focused_task())

    @worker("stop task")
    async def stop_task(self) -> None:
        await self.control("stop_task", self.focused_task())

    @worker("retry task")
    async def retry_task(self) -> None:
        task = self.focused_task()
        feedback = await self.app.push_screen_wait(TextModal(
            f"retry #{task.id}", placeholder="optional: what to do differently",
            note=f"{task.words}", blink=self.app.blink))
        if feedback is not None:
            await self.control("retry_task", task, feedback.strip() or None)

    @worker("answer checkpoint")
    async def answer_checkpoint(self) -> None:
        task = self.focused_task()
        asked = task.question or {}
        answer = await self.app.push_screen_wait(screens.CheckpointModal(
            task.id, task.title, asked.get("what") or task.progress or "a risky step",
            asked.get("evidence")))
        if answer is not None:
            await self.control("answer_checkpoint", task, answer)

    @worker("mark done")
    async def mark_done(self) -> None:
        await self.control("mark_done", self.focused_task())

    @worker("pause run")
    async def pause_run(self) -> None:
        await self.control("pause_run", None)

    @worker("choose autonomy")
    async def pick_autonomy(self) -> None:
        app = self.app
        value = await app.push_screen_wait(ChoiceModal(
            "autonomy", [Choice(str(a), f"{a} — {AUTONOMY_NOTES[a]}") for a in Autonomy],
            app.board.autonomy))
        if value is not None and value != app.board.autonomy:
            ok, _ = await app.engine_call("autonomy", api.set_autonomy, value)
            if ok:
                app.post_message(PlanEdited(None, "autonomy", False))
                app.notify(f"autonomy {value} — applies from the next decision on")

"""What each plan key does: open a typed modal, then hand its value to the engine.

A mixin of the App (actions must live on a DOM node). Every handler runs as a worker,
so it can await a modal (`push_screen_wait`) and the engine thread without blocking
the loop; a refusal (BatonError) is shown, never swallowed.
"""

from __future__ import annotations

import asyncio
from typing import Any, Callable

from textual import work

from baton_tui import api
from baton_tui.api import AUTONOMIES, MODES, BatonError, TaskSnap
from baton_tui.tui import screens
from baton_tui.tui.messages import EngineRefused, PlanApproved, PlanEdited, RunCommanded
from baton_tui.tui.screens.pickers import (
    Choice, ChoiceModal, ConfirmModal, PickManyModal, TextModal,
)

ACTION = dict(group="action", exit_on_error=False)
DEFAULT = "(default)"  # the picker value for "the player's default"


class TaskActions:
    """Key handlers of the plan pane; `self` is the BatonApp."""

    # engine plumbing ------------------------------------------------------------------
    async def engine_call(self, what: str, fn: Callable, *args: Any, **kwargs: Any
                          ) -> tuple[bool, Any]:
        try:
            result = await self.engine.call(fn, *args, **kwargs)
        except BatonError as exc:
            self.refused(what, exc.lines)
            return False, None
        self.poke()
        return True, result

    def refused(self, what: str, lines: list[str]) -> None:
        self.notify("\n".join(lines), title=f"{what}: refused", severity="error", timeout=8)
        self.post_message(EngineRefused(what, lines))

    async def edit(self, task: TaskSnap, field: str, value: Any) -> bool:
        voided = self.board.approved
        ok, _ = await self.engine_call(f"#{task.id} {field}", api.edit_task, task.id, field,
                                       value)
        if ok:
            self.post_message(PlanEdited(task.id, field, voided and not task.started))
            note = f"#{task.id} {field.replace('depends_on', 'dependencies')} saved"
            if voided and not task.started:
                note += " — approval voided: press a to approve again"
            self.notify(note, severity="warning" if voided else "information")
        return ok

    async def control(self, name: str, task: TaskSnap | None, *args: Any) -> None:
        """Run one run-control function of the façade (`start_run`, `stop_task` …)."""
        fn = getattr(api, name)
        target = f"#{task.id} " if task else ""
        ok, result = await self.engine_call(f"{target}{name.replace('_', ' ')}", fn,
                                            *([task.id] if task else []), *args)
        if ok:
            self.post_message(RunCommanded(name, task.id if task else None, result))
            self.notify(f"{target}{name.replace('_', ' ')}: done"
                        + (f" (pid {result})" if name == "start_run" and result else ""))

    async def ready_players(self) -> tuple[list[str], list[str]]:
        """(offered, not offered with why) — only detected, ready players are offered."""
        if self.detections is None:
            # On the engine thread: detection records what it found in the store.
            self.detections = await self.engine.call(api.detect_players)
        ready = [n for n, d in self.detections.items() if d.ready]
        missing = [f"{n} ({d.reason})" for n, d in self.detections.items() if not d.ready]
        return ready, missing

    def focused_task(self) -> TaskSnap:
        task = self.plan_pane.selected_task
        assert task is not None  # check_action refuses task keys without a task
        return task

    # keys ----------------------------------------------------------------------------
    def action_handoff(self) -> None:
        # Reading the review (git) starts now, while the screen mounts.
        reading = asyncio.ensure_future(self.engine_call("handoff", api.handoff_review))
        self.push_screen(screens.HandoffScreen(reading))

    def action_dag(self) -> None:
        selected = self.plan_pane.selected_task
        self.push_screen(screens.DagScreen(self.board, selected.id if selected else None),
                         lambda chosen: self.plan_pane.select(chosen) if chosen else None)

    def action_task_detail(self) -> None:
        task = self.focused_task()
        self.push_screen(screens.TaskDetail(task, self.board.plan_id, self.board.base_commit,
                                    self.ws.paths.store_path, self.ws.root,
                                    follow=self.follow_logs))

    @work(**ACTION, description="edit prompt")
    async def action_edit_prompt(self) -> None:
        task = self.focused_task()
        value = await self.push_screen_wait(screens.PromptEditor(
            task.id, task.title, task.prompt, blink=self.blink))
        if value is not None and value != task.prompt:
            await self.edit(task, "prompt", value)

    @work(**ACTION, description="choose player")
    async def action_pick_player(self) -> None:
        task = self.focused_task()
        ready, missing = await self.ready_players()
        note = ("not offered (not ready): " + "; ".join(missing)) if missing else ""
        value = await self.push_screen_wait(ChoiceModal(
            f"player of #{task.id}", [Choice(n, n) for n in ready], task.player,
            note=note + ("\n" if note else "") + "model and effort reset to its defaults"))
        if value is not None and value != task.player:
            await self.edit(task, "player", value)

    @work(**ACTION, description="choose model")
    async def action_pick_model(self) -> None:
        task = self.focused_task()
        catalog, default = api.player_catalog(self.ws, task.player)
        if catalog is None:
            value = await self.push_screen_wait(TextModal(
                f"model of #{task.id}", task.model or "", "empty: the player's default",
                note=f"{task.player} takes any model name", blink=self.blink))
            if value is None:
                return
            model = value.strip() or None
        else:
            choices = [Choice(DEFAULT, f"(default{': ' + default if default else ''})")]
            value = await self.push_screen_wait(ChoiceModal(
                f"model of #{task.id}", choices + [Choice(m, m) for m in catalog],
                task.model or DEFAULT, note=f"{task.player}'s catalog"))
            if value is None:
                return
            model = None if value == DEFAULT else value
        if model != task.model:
            await self.edit(task, "model", model)

    @work(**ACTION, description="choose effort")
    async def action_pick_effort(self) -> None:
        task = self.focused_task()
        efforts = api.player_efforts(self.ws, task.player)
        choices = [Choice(DEFAULT, "(player default)")] + [Choice(e, e) for e in efforts]
        value = await self.push_screen_wait(ChoiceModal(f"effort of #{task.id}", choices,
                                                        task.effort or DEFAULT))
        if value is not None:
            effort = None if value == DEFAULT else value
            if effort != task.effort:
                await self.edit(task, "effort", effort)

    @work(**ACTION, description="choose mode")
    async def action_pick_mode(self) -> None:
        task = self.focused_task()
        notes = {"build": "edits files in its own worktree, after approval",
                 "research": "read-only; may run before approval",
                 "manual": "you do it, then mark it done"}
        value = await self.push_screen_wait(ChoiceModal(
            f"mode of #{task.id}", [Choice(m, f"{m} — {notes[m]}") for m in MODES], task.mode))
        if value is not None and value != task.mode:
            await self.edit(task, "mode", value)

    @work(**ACTION, description="edit dependencies")
    async def action_edit_deps(self) -> None:
        task = self.focused_task()
        deps = {t.id: list(t.depends_on) for t in self.board.tasks}
        below = api.dependents(deps, task.id)
        choices = [Choice(t.id, f"#{t.id} {t.title}") for t in self.board.tasks
                   if t.id != task.id and t.id not in below]
        note = (f"not offered (they depend on #{task.id}): "
                + ", ".join(f"#{d}" for d in sorted(below))) if below else ""
        value = await self.push_screen_wait(PickManyModal(
            f"#{task.id} depends on", choices, list(task.depends_on), note=note))
        if value is not None and sorted(value) != sorted(task.depends_on):
            await self.edit(task, "depends_on", sorted(value))

    @work(**ACTION, description="edit skills")
    async def action_edit_skills(self) -> None:
        task = self.focused_task()
        choices = [Choice(name, f"{name} — {description}")
                   for name, description in api.skills(self.ws).items()]
        value = await self.push_screen_wait(PickManyModal(
            f"skills of #{task.id}", choices, list(task.skills)))
        if value is not None and value != list(task.skills):
            await self.edit(task, "skills", value)

    async def _text_field(self, task: TaskSnap, field: str, label: str, current: str,
                          convert: Callable[[str], Any], note: str = "",
                          allow_empty: bool = True) -> None:
        value = await self.push_screen_wait(TextModal(
            f"{label} of #{task.id}", current, note=note, blink=self.blink,
            allow_empty=allow_empty))
        if value is None:
            return
        converted = convert(value)
        if converted != (list(getattr(task, field)) if field == "scope" else getattr(task, field)):
            await self.edit(task, field, converted)

    @work(**ACTION, description="edit title")
    async def action_edit_title(self) -> None:
        task = self.focused_task()
        await self._text_field(task, "title", "title", task.title, str.strip, allow_empty=False)

    @work(**ACTION, description="edit scope")
    async def action_edit_scope(self) -> None:
        task = self.focused_task()
        await self._text_field(task, "scope", "scope", ", ".join(task.scope),
                               api.parse_list,
                               note="paths or globs, comma-separated; empty for none")

    @work(**ACTION, description="edit check")
    async def action_edit_check(self) -> None:
        task = self.focused_task()
        await self._text_field(task, "check", "check", task.check or "",
                               lambda v: v.strip() or None,
                               note="run with sh -c in the task's worktree after it reports")

    @work(**ACTION, description="toggle checkpoint")
    async def action_toggle_checkpoint(self) -> None:
        task = self.focused_task()
        await self.edit(task, "checkpoint", not task.checkpoint)

    @work(**ACTION, description="add task")
    async def action_add_task(self) -> None:
        ready, _ = await self.ready_players()
        focused = self.plan_pane.selected_task
        default = api.default_player(self.ws) or (focused.player if focused else ready[0])
        new = await self.push_screen_wait(screens.AddTaskModal(ready, default, [],
                                                               blink=self.blink))
        if new is None:
            return
        voided = self.board.approved
        ok, new_id = await self.engine_call("add task", api.add_task, new.title, new.player,
                                            new.mode, new.deps, "")
        if ok:
            self.post_message(PlanEdited(new_id, "add", voided))
            self.notify(f"task #{new_id} added — press e to write its prompt"
                        + (" · approval voided" if voided else ""))
            self.select_after_refresh = new_id

    @work(**ACTION, description="remove task")
    async def action_remove_task(self) -> None:
        task = self.focused_task()
        sure = await self.push_screen_wait(ConfirmModal(
            "remove task", f"Remove #{task.id} {task.title}?"))
        if sure:
            voided = self.board.approved
            ok, _ = await self.engine_call(f"remove #{task.id}", api.remove_task, task.id)
            if ok:
                self.post_message(PlanEdited(task.id, "remove", voided))
                self.notify(f"task #{task.id} removed" + (" · approval voided" if voided else ""))

    @work(**ACTION, description="approve")
    async def action_approve(self) -> None:
        if not await self.push_screen_wait(screens.ApproveModal(self.board)):
            return
        ok, result = await self.engine_call("approve", api.approve)
        if ok:
            _row, warnings = result
            self.post_message(PlanApproved(warnings))
            self.notify("plan approved — press E to run it"
                        + "".join(f"\n⚠ {w}" for w in warnings),
                        severity="warning" if warnings else "information")

    @work(**ACTION, description="run plan")
    async def action_run_plan(self) -> None:
        await self.control("start_run", None)

    @work(**ACTION, description="start task")
    async def action_start_task(self) -> None:
        await self.control("start_task", self.focused_task())

    @work(**ACTION, description="stop task")
    async def action_stop_task(self) -> None:
        await self.control("stop_task", self.focused_task())

    @work(**ACTION, description="retry task")
    async def action_retry_task(self) -> None:
        task = self.focused_task()
        feedback = await self.push_screen_wait(TextModal(
            f"retry #{task.id}", placeholder="optional: what to do differently",
            note=f"{task.words}", blink=self.blink))
        if feedback is not None:
            await self.control("retry_task", task, feedback.strip() or None)

    @work(**ACTION, description="answer checkpoint")
    async def action_answer_checkpoint(self) -> None:
        task = self.focused_task()
        asked = task.question or {}
        answer = await self.push_screen_wait(screens.CheckpointModal(
            task.id, task.title, asked.get("what") or task.progress or "a risky step",
            asked.get("evidence")))
        if answer is not None:
            await self.control("answer_checkpoint", task, answer)

    @work(**ACTION, description="mark done")
    async def action_mark_done(self) -> None:
        await self.control("mark_done", self.focused_task())

    @work(**ACTION, description="pause run")
    async def action_pause_run(self) -> None:
        await self.control("pause_run", None)

    @work(**ACTION, description="choose autonomy")
    async def action_pick_autonomy(self) -> None:
        notes = {"guarded": "risky steps wait for you at their checkpoint",
                 "watch": "you watch; the policy decides what it can",
                 "autopilot": "no stops; a failed task is retried once, then parked"}
        value = await self.push_screen_wait(ChoiceModal(
            "autonomy", [Choice(a, f"{a} — {notes[a]}") for a in AUTONOMIES],
            self.board.autonomy))
        if value is not None and value != self.board.autonomy:
            ok, _ = await self.engine_call("autonomy", api.set_autonomy, value)
            if ok:
                self.post_message(PlanEdited(None, "autonomy", False))
                self.notify(f"autonomy {value} — applies from the next decision on")

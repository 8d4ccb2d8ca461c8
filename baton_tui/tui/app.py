"""The Baton App: wiring only — layout, the store poller, key availability, routing.

What keys do lives in `actions.py` (the App's `actions`, called by its `action_*` methods);
what they may do now in the rule book (`api.why_not`);
the chat's commands in `conversation.py`. The engine runs on its own thread
(`engine.py`), the store is read by a poller thread (`poller.py`); this module only
moves their results onto the screen.
"""

from __future__ import annotations

import gc
import threading
import time
from functools import partial
from typing import Any, Callable, Iterable, cast

from textual import events, on
from textual.app import App, ComposeResult, SystemCommand
from textual.screen import ModalScreen, Screen
from textual.binding import Binding
from textual.widgets import Input
from textual.worker import Worker, WorkerState, get_current_worker

from baton_tui import api
from baton_tui.api import BatonError, Snapshot
from baton_tui.tui import attention, bindings, run_record
from baton_tui.tui.actions import TaskActions
from baton_tui.tui.bindings import PLAN_ACTIONS, RULE_OF
from baton_tui.tui.conversation import converse, slash
from baton_tui.tui.engine import EngineThread
from baton_tui.tui.messages import (
    AttentionNeeded, BoardChanged, EngineRefused, KeyRefused, PlanStored, PlayersDetected,
)
from baton_tui.tui.paint import PromptScreen
from baton_tui.tui.planner_port import Planner, PlannerQuestion
from baton_tui.tui.poller import changed_tasks, first_board, keys_changed, poll_store
from baton_tui.tui.screens.handoff import HandoffScreen
from baton_tui.tui.screens.help import HelpScreen, KeyRow
from baton_tui.tui.widgets.chat_pane import ChatPane
from baton_tui.tui.widgets.header import BatonHeader
from baton_tui.tui.widgets.key_bar import Key, KeyBar
from baton_tui.tui.widgets.plan_pane import PlanPane
from baton_tui.tui.widgets.task_list import TaskList


class BatonApp(App[int]):
    """Chat on the left, the live plan on the right; `q` leaves any run going.

    Its state — what the key handlers (`actions.py`), the chat (`conversation.py`) and the
    screens read and set — is declared here and in `__init__`, nowhere else."""

    CSS_PATH = "baton.tcss"
    TITLE = "baton"
    BINDINGS = [*bindings.APP]  # a fresh list of Textual's declared type

    # Made in `compose` and kept by reference: `query_one` on the App searches the active
    # screen, which is a modal or the task detail at times.
    header: BatonHeader
    chat: ChatPane
    plan_pane: PlanPane
    key_bar: KeyBar

    def __init__(self, ws: api.Workspace, *, planner: Planner | None = None,
                 clock: Callable[[], float] = time.time, poll_interval: float = 0.25,
                 blink: bool = True, follow_logs: bool = True, detect_players: bool = True,
                 keymap: dict[str, str] | None = None,
                 shell: Callable[[Any, str], int] | None = None,
                 auto_handoff: bool = True, leaving: str | None = None) -> None:
        super().__init__()
        self.leaving = leaving  # what quitting does to running agents, when not the usual
        self.shell = shell  # tests hand in their own; None: suspend and open $SHELL
        self.auto_handoff = auto_handoff
        self.ws = ws
        self.planner = planner
        self.clock = clock
        self.poll_interval = poll_interval
        self.blink = blink
        self.follow_logs = follow_logs
        self.detect_on_start = detect_players
        self.keymap = dict(keymap or {})
        self.engine = EngineThread(ws)
        self.actions = TaskActions(self)  # what the plan keys do
        self.board: Snapshot = api.snapshot_empty()
        self.board_count = 0
        self.detections: dict | None = None  # the players found (None: not looked for yet)
        self.pending_question: PlannerQuestion | None = None
        self.select_after_refresh: int | None = None  # a task added: the cursor goes there
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._focus_plan_next = True
        self._key_shown: dict[str, tuple[str, str, str]] | None = None
        self._keys_due = False  # a cursor move's keys are asked after its frame
        self._plan_keys: dict[str, Any] | None = None
        self._reasons_for: tuple | None = None
        self._plan_reasons: dict[Any, str | None] = {}
        # The players' catalogs, worked out on the engine thread after the first frame (a
        # catalog may ask a CLI or an endpoint); until then no key waits on them.
        self.player_facts: api.PlayerFacts | None = None
        self.config_error: Exception | None = None  # the configuration, validated late
        self._facts_for: frozenset[str] | None = None

    # layout ----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        self.header = BatonHeader(self.ws.root.name)
        self.chat = ChatPane(blink=self.blink)
        self.plan_pane = PlanPane()
        self.key_bar = KeyBar()
        yield self.header
        yield self.chat  # side by side: the main screen's layout is horizontal (baton.tcss)
        yield self.plan_pane
        yield self.key_bar

    def get_default_screen(self) -> Screen:
        """The main screen, classed for its horizontal layout: the panes need no container of
        their own (each container is drawn again on every frame that changes a pane). A
        `PromptScreen`: a cursor key is painted when ready, not at the frame timer's tick."""
        return PromptScreen(id="_default", classes="main")

    def on_mount(self) -> None:
        # The chat's first line, after the first layout (the log wraps at its real width)
        # and after the first board below (a plan whose run is over points at its handoff).
        self.chat.call_after_refresh(lambda: self.chat.say("baton", run_record.opening(
            self.board, self.key_display()["handoff"][0])))
        notice = api.folder_notice(self.ws.root)  # before anything of Baton's is made here
        if notice:
            self.chat.call_after_refresh(self.chat.say, "baton", notice, "bold")
        if self.keymap:
            self.set_keymap(self.keymap)
        self.chat.query_one("#chat-input", Input).focus()
        self.refresh_keys()
        reader = api.snapshot_reader()
        try:
            first: tuple[Snapshot, int] | None = first_board(self.ws.store_path, reader,
                                                             self.clock())
        except Exception:  # noqa: BLE001 — the poller reads again and reports what failed
            first = None
        if first is not None:
            self.show_board(BoardChanged(first[0]))
        self.call_after_refresh(self._start_background, reader, first)

    def _start_background(self, reader: Any, first: tuple[Snapshot, int] | None) -> None:
        """After the first frame (threads share the interpreter: none of this delays it)."""
        if self.return_code is not None:
            return  # quit before the first frame was out
        # What start-up made (widgets, modules, a 10,000-task board) lives as long as the app:
        # out of the cycle collector's full passes, which otherwise grow with the plan.
        gc.freeze()
        self.engine.warm()
        self.run_worker(self._check_config(), group="config", exit_on_error=False,
                        description="validate the configuration")
        self.run_worker(partial(self._poll, reader, first), thread=True, group="poller",
                        exclusive=True, exit_on_error=False, description="read the store")
        if self.detect_on_start:
            self.run_worker(self._detect(), group="detect", exit_on_error=False,
                            description="detect players")

    def on_unmount(self) -> None:
        self._stopped.set()
        self._wake.set()  # the poller sees it now, not after its next wait
        self.engine.close()

    # background readers -----------------------------------------------------------------
    def _poll(self, reader: Any, first: tuple[Snapshot, int] | None) -> None:
        worker = get_current_worker()
        poll_store(self.ws.store_path, self.clock,
                   lambda *board: self.post_message(BoardChanged(*board)),
                   lambda: worker.is_cancelled or self._stopped.is_set(), self._wake,
                   self.poll_interval,
                   reader=reader if first else None, after=first)

    async def _check_config(self) -> None:
        """The whole configuration, validated on the engine thread: the first frame needed
        only its keys (`Workspace.keys`), and pydantic was a sixth of the app's start. A
        broken one ends the app with its message, as it would have stopped it opening."""
        try:
            await self.engine.call(api.check_config)
        except api.BatonError as exc:
            self.config_error = exc
            self.exit(return_code=exc.code)

    async def _detect(self) -> None:
        self.post_message(PlayersDetected(await self.engine.call(api.detect_players)))

    def refresh_player_facts(self) -> None:
        """Work out the plan's players' facts again, off the UI loop and after the next frame;
        the keys that depend on them (model, effort) are redrawn when they arrive."""
        self._facts_for = frozenset(t.player for t in self.board.tasks)
        self.call_after_refresh(self._start_loading_facts, sorted(self._facts_for))

    def _start_loading_facts(self, names: list[str]) -> None:
        if self.return_code is None:  # not quitting
            self.run_worker(self._load_facts(names), group="facts", exclusive=True,
                            exit_on_error=False, description="read the players")

    async def _load_facts(self, names: list[str]) -> None:
        self.player_facts = facts = await self.engine.call(api.known_player_facts, names)
        self.plan_pane.query_one("#cards", TaskList).set_agentless(facts.check_is_task)
        self.refresh_keys()

    def poke(self) -> None:
        """Ask the poller to read the store now (after an engine command)."""
        self._wake.set()

    async def engine_call(self, what: str, fn: Callable, *args: Any, **kwargs: Any
                          ) -> tuple[bool, Any]:
        """`fn(ws, …)` on the engine thread: (True, its result), or (False, None) once the
        refusal is shown."""
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

    @on(PlayersDetected)
    def _players_detected(self, event: PlayersDetected) -> None:
        self.detections = event.detections

    @on(BoardChanged)
    def show_board(self, event: BoardChanged) -> None:
        if not self.plan_pane.is_mounted:
            return  # shutting down
        old = self.board
        self.board = event.board
        self.board_count += 1
        self.header.show(event.board)
        pane = self.plan_pane
        # A replaced message (only the newest board is kept) broke the chain of differences:
        # then every card is compared again.
        changed = event.changed if event.since is old else changed_tasks(old, event.board)
        pane.show(event.board, self.clock(), changed, old)
        if self.select_after_refresh is not None and event.board.task(self.select_after_refresh):
            pane.select(self.select_after_refresh)
            self.select_after_refresh = None
        follow = getattr(self.screen, "refresh_task", None)  # a screen showing one task
        if follow is not None:
            follow(event)
        if self._focus_plan_next and not event.board.empty and not self.typing():
            self._focus_plan_next = False
            pane.focus()
        if keys_changed(old, event.board, changed):
            self.refresh_keys()
            if not {t.player for t in event.board.tasks} <= (self._facts_for or set()):
                self.refresh_player_facts()  # a task moved to a player not looked at yet
        for line in run_record.record(old, event.board, first=self.board_count == 1):
            if line.startswith(" "):  # the run's totals, under the line that ended it
                self.chat.lines(line)
            else:
                self.chat.say("baton", line)
        for call in attention.calls(old, event.board, first=self.board_count == 1,
                                    changed=changed):
            self.call_attention(call)

    def call_attention(self, call: attention.Call) -> None:
        """Ring the bell and say what waits; a finished run opens the handoff by itself
        when nothing else is on screen."""
        self.bell()
        text, showing, opens = call.text, False, False
        if call.what == "handoff":  # no "press H" with the handoff on screen
            showing = isinstance(self.screen, HandoffScreen)
            opens = not showing and self.auto_handoff and len(self.screen_stack) == 1
            if showing or opens:
                text = "the run ended — review its landed work here, then merge it (M)"
        self.notify(text, title="waiting for you", severity="warning", timeout=10)
        self.post_message(AttentionNeeded(call.what, call.task_id))
        if showing:
            cast(HandoffScreen, self.screen).load()  # what landed since it was read
        if opens:
            self.action_handoff()

    def run_shell(self, banner: str) -> int:
        """The person's shell in the repository, the app suspended meanwhile."""
        if self.shell is not None:
            return self.shell(self.ws.root, banner)
        with self.suspend():
            return api.open_shell(self.ws.root, banner)

    def typing(self) -> bool:
        """The person has words in the chat input: focus stays there (their keys must
        never land on the plan)."""
        box = self.chat.query_one("#chat-input", Input)
        return box.has_focus and bool(box.value)

    @on(PlanPane.CursorMoved)
    def _cursor_moved(self) -> None:
        """The keys for the task now under the cursor, worked out after the frame that shows
        the move (the bar is drawn in the frame after it anyway): a key's paint waits for
        the cards only. Moves faster than frames ask once."""
        if not self._keys_due:
            self._keys_due = True
            self.call_after_refresh(self._refresh_keys_due)

    def _refresh_keys_due(self) -> None:
        self._keys_due = False
        self.refresh_keys()

    @on(events.DescendantFocus)
    def refresh_keys(self) -> None:
        """Show the keys that apply now in the key bar (it redraws only when they change).
        No `refresh_bindings`: no Footer on this screen reads them, and a key's
        availability is asked when it is pressed."""
        if not self.key_bar.is_mounted:
            return
        chat = not self.plan_pane.has_focus
        shown = self.key_display()
        # The chat input keeps printable keys: from there, the palette and ctrl+q.
        fixed = [("^p", "palette"), ("^q", "quit")] if chat else [shown["help"][:2],
                                                                   shown["quit"][:2]]
        swap: Key = ("tab", "plan" if chat else "chat")
        if self.board.empty:
            self.key_bar.show([], [swap, *fixed], lead="type a goal, enter sends" if chat else "")
            return
        keys: list[Key] = [shown[k][:2] for k in bindings.NOW if k not in bindings.FIELDS
                           and self.why_not(shown[k][2]) is None
                           and not (k == "approve" and self.board.approved)]  # done already
        fields = self.field_keys(shown)
        if chat:  # plan keys after a tab: shown dim, behind the tab that reaches them
            self.key_bar.show(keys, fixed, lead="tab plan:", dim=True, fields=fields)
        else:
            self.key_bar.show([*keys[:4], swap, shown["graph"][:2], *keys[4:]], fixed,
                              fields=fields)

    def field_keys(self, shown: dict[str, tuple[str, str, str]]) -> tuple[str, list[Key], str]:
        """The key bar's upper line: the selected task's field keys that apply now (every
        one, in the help's order), or why none do."""
        task = self.plan_pane.selected_task if self.plan_pane.is_mounted else None
        if task is None:
            return "fields:", [], "select a task to edit its fields"
        keys = [shown[k][:2] for k in (bindings.EDIT, *bindings.FIELDS)
                if self.why_not(shown[k][2]) is None]
        why = self.why_not(shown["prompt"][2]) or ""
        return "fields:", keys, why  # no id: moving between alike tasks redraws nothing

    def key_display(self) -> dict[str, tuple[str, str, str]]:
        """Each key's id -> (its first key as shown, after remapping; label; action)."""
        if self._key_shown is None:
            self._key_shown = {}
            for binding in bindings.all_bindings():
                first = bindings.keys_of(binding, self.keymap)[0]
                self._key_shown[binding.id or ""] = (
                    self.get_key_display(Binding(first, binding.action)), binding.description,
                    binding.action.removeprefix("app."))
        return self._key_shown

    @on(PlanStored)
    def _plan_stored(self) -> None:
        self._focus_plan_next = True
        self.poke()

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self.notify(f"{event.worker.description}: {event.worker.error}",
                        title="something went wrong", severity="error", timeout=10)

    # chat ---------------------------------------------------------------------------------
    @on(ChatPane.Said)
    def _said(self, event: ChatPane.Said) -> None:
        if event.text.startswith("/"):
            self.run_worker(slash(self, event.text), group="chat", exit_on_error=False,
                            description=event.text)
        else:
            self.run_worker(converse(self, event.text), group="chat", exclusive=True,
                            exit_on_error=False, description="planner")

    # keys ---------------------------------------------------------------------------------
    def why_not(self, action: str) -> str | None:
        """Why the key's `action` does not apply now (None: it does) — the rule book's words."""
        if action == bindings.EDIT_MENU:  # applies when one of the task's fields does
            reasons = [self.why_not(key[2]) for key in
                       (self.key_display()[f] for f in bindings.FIELDS)]
            return None if None in reasons else reasons[0]
        if action not in RULE_OF:
            return None
        rule = RULE_OF[action]
        if rule not in api.TASK_ACTIONS:  # the plan's own rules: asked once per board
            asked = self._reasons_for  # by identity: comparing two boards reads every task
            if asked is None or asked[0] is not self.board or asked[1] is not self.player_facts:
                self._reasons_for, self._plan_reasons = (self.board, self.player_facts), {}
            if rule not in self._plan_reasons:
                self._plan_reasons[rule] = api.why_not(rule, self.board, None,
                                                       self.player_facts)
            return self._plan_reasons[rule]
        pane = getattr(self, "plan_pane", None)
        task = pane.selected_task if pane is not None and pane.is_mounted else None
        return api.why_not(rule, self.board, task, self.player_facts)

    @property
    def busy(self) -> bool:
        """A plan key's dialog is open or on its way: further plan keys wait (one modal at
        a time — fast typing must never stack dialogs)."""
        return isinstance(self.screen, ModalScreen) or any(
            w.group == "action" and not w.is_finished for w in self.workers)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in PLAN_ACTIONS:
            if self.busy:
                return False
            return None if self.why_not(action) else True
        return True

    def on_key(self, event: events.Key) -> None:
        """A dimmed key was pressed: say why (bindings already ran the enabled ones)."""
        if self.busy or self.focused is not self.plan_pane:
            return  # plan keys are the plan pane's
        binding = self.plan_keys().get(event.key)
        if binding is None:
            return
        action = binding.action.removeprefix("app.")
        if action not in PLAN_ACTIONS or self.check_action(action, ()) is not None:
            return  # not a plan action, or it ran
        reason = self.why_not(action) or "not available now"
        self.notify(reason, title=f"{binding.description}: not now",
                    severity="warning", timeout=5)
        self.post_message(KeyRefused(action, reason))

    def plan_keys(self) -> dict[str, Any]:
        """The plan pane's bindings by key, as remapped (one key's action is looked up, not
        every binding's availability: that costs a rule per key at 10,000 tasks)."""
        if self._plan_keys is None:
            self._plan_keys = {key: binding for binding in bindings.PLAN
                               for key in bindings.keys_of(binding, self.keymap)}
        return self._plan_keys

    # what each plan key does is the task actions' (PEP 8's "bunch of related one-liners")
    def action_handoff(self) -> None: self.actions.handoff()
    def action_dag(self) -> None: self.actions.dag()
    def action_task_detail(self) -> None: self.actions.task_detail()
    def action_edit_menu(self) -> None: self.actions.edit_menu()
    def action_edit_prompt(self) -> None: self.actions.edit_prompt()
    def action_pick_player(self) -> None: self.actions.pick_player()
    def action_pick_model(self) -> None: self.actions.pick_model()
    def action_pick_effort(self) -> None: self.actions.pick_effort()
    def action_pick_mode(self) -> None: self.actions.pick_mode()
    def action_pick_runner(self) -> None: self.actions.pick_runner()
    def action_edit_deps(self) -> None: self.actions.edit_deps()
    def action_edit_skills(self) -> None: self.actions.edit_skills()
    def action_edit_title(self) -> None: self.actions.edit_title()
    def action_edit_scope(self) -> None: self.actions.edit_scope()
    def action_edit_check(self) -> None: self.actions.edit_check()
    def action_toggle_checkpoint(self) -> None: self.actions.toggle_checkpoint()
    def action_add_task(self) -> None: self.actions.add_task()
    def action_remove_task(self) -> None: self.actions.remove_task()
    def action_approve(self) -> None: self.actions.approve()
    def action_run_plan(self) -> None: self.actions.run_plan()
    def action_start_task(self) -> None: self.actions.start_task()
    def action_stop_task(self) -> None: self.actions.stop_task()
    def action_retry_task(self) -> None: self.actions.retry_task()
    def action_answer_checkpoint(self) -> None: self.actions.answer_checkpoint()
    def action_mark_done(self) -> None: self.actions.mark_done()
    def action_pause_run(self) -> None: self.actions.pause_run()
    def action_pick_autonomy(self) -> None: self.actions.pick_autonomy()

    def action_swap_focus(self) -> None:
        if self.plan_pane.has_focus:
            self.chat.query_one("#chat-input", Input).focus()
        else:
            self.plan_pane.focus()

    def key_rows(self) -> list[KeyRow]:
        """Every key with its current binding (after remapping) and why it is dimmed."""
        rows = []
        for binding in bindings.all_bindings():
            shown = ", ".join(self.get_key_display(binding.__class__(k, binding.action))
                              for k in bindings.keys_of(binding, self.keymap))
            action = binding.action.removeprefix("app.")
            rows.append(KeyRow(shown, binding.description, binding.id or "", self.why_not(action),
                               (binding.id or "") in self.keymap))
        return rows

    async def action_quit(self) -> None:
        """Leave; while agents run, ask first (saying what becomes of them)."""
        from baton_tui.tui.screens.quit import QuitModal  # lazy: the first frame needs none

        running = sum(t.state == api.State.RUNNING for t in self.board.tasks)
        if not running or isinstance(self.screen, QuitModal):
            self.exit()
            return
        self.push_screen(QuitModal(running, self.leaving),
                         lambda yes: self.exit() if yes else None)

    def action_toggle_theme(self) -> None:
        """The palette's light and dark themes (NO_COLOR, when set, wins over both)."""
        self.theme = "textual-light" if self.theme == "textual-dark" else "textual-dark"

    def action_help(self) -> None:
        self.push_screen(HelpScreen(self.key_rows()))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        """Baton's commands only (not Textual's own: its help panel, screenshot, quit)."""
        yield SystemCommand("keys", "every key, grouped by what it changes, and why some "
                            "are dimmed", self.action_help)
        yield SystemCommand("light/dark", "switch the theme (key ctrl+t)",
                            self.action_toggle_theme)
        yield SystemCommand("quit", "leave Baton; a run goes on without it (key q)",
                            self.action_quit)
        for binding in bindings.PLAN:
            action = binding.action.removeprefix("app.")
            if action in PLAN_ACTIONS:
                yield SystemCommand(f"plan: {binding.description}",
                                    self.why_not(action) or f"key {binding.key}",
                                    partial(self.palette_action, action))

    async def palette_action(self, action: str) -> None:
        reason = self.why_not(action)
        if reason:
            self.notify(reason, title="not now", severity="warning")
        else:
            await self.run_action(action)

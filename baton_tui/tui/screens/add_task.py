"""The new-task form: title, prompt, player, mode, dependencies and check.

The form hands what was typed to `submit` (the App adds the task on the engine thread) and
closes only when it is accepted: a refusal is shown inside the form, with everything typed
still there to correct. Given `finding` (detecting the players may take seconds) it opens at
once, saying so, and offers the players when they are found; an add asked for meanwhile
waits for them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select

from baton_tui.api import BatonError, parse_ids
from baton_tui.core.words import Mode


@dataclass(frozen=True)
class NewTask:
    """What `add_task` needs; an empty prompt starts as the title (`e` edits it later)."""

    title: str
    player: str
    mode: str = Mode.BUILD
    deps: list[int] = field(default_factory=list)
    prompt: str = ""
    check: str | None = None


Submit = Callable[[NewTask], Awaitable[str | None]]  # None: added; else why it was refused
Finding = Callable[[], Awaitable[list[str]]]  # the players to offer, slow to find
DETECTING = "detecting players…"


class AddTaskModal(ModalScreen[NewTask | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel", id="cancel"),
                Binding("ctrl+s", "save", "add", id="save", priority=True)]

    def __init__(self, players: list[str], default_player: str | None, deps: list[int],
                 submit: Submit, blink: bool = True, finding: Finding | None = None) -> None:
        super().__init__()
        self.preferred = default_player
        self.players = players
        self.deps = deps
        self.submit = submit
        self.blink = blink
        self.saving = False
        self.finding = finding
        self.players_found = asyncio.Event()
        if finding is None:
            self.players_found.set()

    def _player_choice(self) -> str:
        return self.preferred if self.preferred in self.players else self.players[0]

    def _input(self, value: str, id: str, placeholder: str = "") -> Input:
        box = Input(value, placeholder=placeholder, id=id)
        box.cursor_blink = self.blink
        return box

    def compose(self) -> ComposeResult:
        box = Vertical(classes="dialog form")
        box.border_title = "new task"
        box.border_subtitle = "enter/ctrl+s add · esc cancel"
        with box:
            yield Label("title")
            yield self._input("", "title", "one line")
            yield Label("prompt")
            yield self._input("", "prompt", "empty: the title (e edits it in full later)")
            with Horizontal(classes="pair"):
                with Vertical():
                    yield Label(DETECTING if self.finding else "player", id="player-label")
                    if self.finding:  # a stand-in until the players are found
                        shown = self.preferred or DETECTING
                        yield Select([(shown, shown)], value=shown, allow_blank=False,
                                     id="player", disabled=True)
                    else:
                        yield Select([(p, p) for p in self.players],
                                     value=self._player_choice(), allow_blank=False,
                                     id="player")
                with Vertical():
                    yield Label("mode")
                    yield Select([(str(m), str(m)) for m in Mode], value=str(Mode.BUILD),
                                 allow_blank=False, id="mode")
            with Horizontal(classes="pair"):
                with Vertical():
                    yield Label("depends on (ids)")
                    yield self._input(",".join(map(str, self.deps)), "deps", "e.g. 1, 3")
                with Vertical():
                    yield Label("check (sh -c, in its worktree)")
                    yield self._input("", "check", "empty: none")
            yield Label("", id="refused")

    def on_mount(self) -> None:
        self.query_one("#title", Input).focus()
        if self.finding is not None:
            self.run_worker(self._find_players(self.finding), group="find",
                            exit_on_error=False, description="find the players")

    async def _find_players(self, finding: Finding) -> None:
        self.players = await finding()
        select: Select[str] = self.query_one("#player", Select)
        select.set_options([(p, p) for p in self.players])
        select.value = self._player_choice()
        select.disabled = False
        self.query_one("#player-label", Label).update("player")
        self.players_found.set()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def refuse(self, why: str) -> None:
        """Say why inside the form; what was typed stays."""
        self.query_one("#refused", Label).update(f"✗ {why}")

    def action_save(self) -> None:
        if not self.query("#title") or self.saving:
            return  # ctrl+s beat the form's mount, or an add is on its way
        title = self.query_one("#title", Input).value.strip()
        if not title:
            self.refuse("a task needs a title")
            return
        try:
            deps = parse_ids(self.query_one("#deps", Input).value)
        except BatonError as exc:
            self.refuse(exc.message)
            return
        self.saving = True
        self.run_worker(self._submit(title, deps), group="add", exit_on_error=False,
                        description="add task")

    async def _submit(self, title: str, deps: list[int]) -> None:
        try:
            await self.players_found.wait()  # added before they were found: the player is read now
            new = NewTask(title, str(self.query_one("#player", Select).value),
                          str(self.query_one("#mode", Select).value), deps,
                          self.query_one("#prompt", Input).value.strip(),
                          self.query_one("#check", Input).value.strip() or None)
            why = await self.submit(new)
        finally:
            self.saving = False
        if why is None:
            self.dismiss(new)
        else:
            self.refuse(why)

    def action_cancel(self) -> None:
        self.dismiss(None)

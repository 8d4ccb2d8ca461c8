"""The new-task form: title, player, mode, dependencies; returns a NewTask or None."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, Select

from baton_tui.api import parse_ids
from baton_tui.api import BatonError
from baton_tui.core.words import Mode


@dataclass(frozen=True)
class NewTask:
    """What `add_task` needs; the prompt starts as the title and is edited with `e`."""

    title: str
    player: str
    mode: str = Mode.BUILD
    deps: list[int] = field(default_factory=list)


class AddTaskModal(ModalScreen[NewTask | None]):
    BINDINGS = [Binding("escape", "cancel", "cancel", id="cancel"),
                Binding("ctrl+s", "save", "add", id="save", priority=True)]

    def __init__(self, players: list[str], default_player: str, deps: list[int],
                 blink: bool = True) -> None:
        super().__init__()
        self.players = players
        self.default_player = default_player if default_player in players else players[0]
        self.deps = deps
        self.blink = blink

    def compose(self) -> ComposeResult:
        box = Vertical(classes="dialog form")
        box.border_title = "new task"
        box.border_subtitle = "enter/ctrl+s add · esc cancel"
        with box:
            yield Label("title")
            title = Input(placeholder="one line", id="title")
            title.cursor_blink = self.blink
            yield title
            yield Label("player")
            yield Select([(p, p) for p in self.players], value=self.default_player,
                         allow_blank=False, id="player")
            yield Label("mode")
            yield Select([(str(m), str(m)) for m in Mode], value=str(Mode.BUILD),
                         allow_blank=False, id="mode")
            yield Label("depends on (ids, comma-separated)")
            deps = Input(",".join(map(str, self.deps)), id="deps")
            deps.cursor_blink = self.blink
            yield deps

    def on_mount(self) -> None:
        self.query_one("#title", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def action_save(self) -> None:
        if not self.query("#title"):
            return  # ctrl+s beat the form's mount
        title = self.query_one("#title", Input).value.strip()
        if not title:
            self.notify("a task needs a title", severity="warning")
            return
        try:
            deps = parse_ids(self.query_one("#deps", Input).value)
        except BatonError as exc:
            self.notify(exc.message, severity="error")
            return
        self.dismiss(NewTask(title, str(self.query_one("#player", Select).value),
                             str(self.query_one("#mode", Select).value), deps))

    def action_cancel(self) -> None:
        self.dismiss(None)

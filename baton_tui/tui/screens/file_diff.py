"""One file's diff, full-screen (from the handoff or a task's detail); escape goes back."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer, Static

from baton_tui.tui.widgets.diff_view import DiffView


class FileDiffScreen(Screen[None]):
    BINDINGS = [Binding("escape,q", "close", "back", id="file-diff-back")]

    def __init__(self, title: str, diff: str) -> None:
        super().__init__()
        self.title_text = title
        self.diff = diff

    def compose(self) -> ComposeResult:
        yield Static(self.title_text, id="file-diff-title")
        yield DiffView(self.diff, id="file-diff")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DiffView).focus()

    def action_close(self) -> None:
        self.dismiss(None)

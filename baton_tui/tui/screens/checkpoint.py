"""A checkpoint waits for the person: the agent's own words, its evidence, yes or no.

y (or the button) lets it go ahead, n stops it before the step; escape decides nothing.
"""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class CheckpointModal(ModalScreen[bool | None]):
    BINDINGS = [Binding("y", "answer(True)", "yes, go ahead", id="checkpoint-yes"),
                Binding("n", "answer(False)", "no, stop", id="checkpoint-no"),
                Binding("escape", "cancel", "later", id="checkpoint-later")]

    def __init__(self, task_id: int, title: str, what: str, evidence: str | None) -> None:
        super().__init__()
        self.task_id = task_id
        self.task_title = title
        self.what = what
        self.evidence = evidence

    def compose(self) -> ComposeResult:
        box = Vertical(classes="dialog checkpoint")
        box.border_title = f"checkpoint of #{self.task_id} {self.task_title}"
        box.border_subtitle = "y go ahead · n stop · esc later"
        with box:
            yield Static(Text.assemble(("The agent is about to: ", "bold"), self.what),
                         id="checkpoint-what")
            if self.evidence:
                yield Static("its evidence:", classes="note")
                yield VerticalScroll(Static(Text(self.evidence), id="checkpoint-evidence"),
                                     id="evidence-box")
            else:
                yield Static("it gave no evidence", classes="note")
            with Horizontal(id="checkpoint-buttons"):
                yield Button("yes — go ahead", id="yes", variant="primary")
                yield Button("no — stop before it", id="no", variant="error")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def action_cancel(self) -> None:
        self.dismiss(None)

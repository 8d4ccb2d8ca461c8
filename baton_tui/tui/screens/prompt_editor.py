"""The prompt editor: a text area over the plan; ctrl+s saves, escape cancels."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, TextArea


class PromptEditor(ModalScreen[str | None]):
    """Returns the edited prompt, or None; the App stores it through the engine."""

    BINDINGS = [Binding("ctrl+s", "save", "save", id="save", priority=True),
                Binding("escape", "cancel", "cancel", id="cancel", priority=True)]

    def __init__(self, task_id: int, title: str, prompt: str, blink: bool = True) -> None:
        super().__init__()
        self.task_id = task_id
        self.task_title = title
        self.prompt = prompt
        self.blink = blink
        self.area: TextArea | None = None

    def compose(self) -> ComposeResult:
        box = Vertical(classes="dialog editor")
        box.border_title = f"prompt of #{self.task_id} {self.task_title}"
        box.border_subtitle = "ctrl+s save · esc cancel"
        with box:
            area = self.area = TextArea(self.prompt, id="prompt", soft_wrap=True,
                                        tab_behavior="indent")
            area.cursor_blink = self.blink
            yield area
            yield Label("Editing a task that has not started voids the plan's approval.",
                        classes="note")

    def on_mount(self) -> None:
        if self.area is not None:
            self.area.focus()

    def text(self) -> str:
        """What the person wrote — the prompt as it was when keys beat the editor's mount
        (ctrl+s or escape can arrive before the TextArea exists: no query, no crash)."""
        return self.area.text if self.area is not None else self.prompt

    def action_save(self) -> None:
        self.dismiss(self.text())

    def action_cancel(self) -> None:
        self.dismiss(None)

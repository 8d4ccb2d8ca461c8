"""`?`: every key of the plan pane and the app — what it does, and why it is dimmed now."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


@dataclass(frozen=True)
class KeyRow:
    keys: str
    description: str
    id: str
    reason: str | None  # None: applies now


def keys_table(rows: list[KeyRow]) -> Table:
    table = Table(box=None, expand=True, show_header=True, padding=(0, 1))
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("does")
    table.add_column("id", style="dim", no_wrap=True)
    table.add_column("now")
    for row in rows:
        table.add_row(row.keys, row.description, row.id,
                      "ready" if row.reason is None else Text(row.reason, style="dim"))
    table.add_row("ctrl+p", "command palette", "", "ready")
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "close", id="close")]

    def __init__(self, rows: list[KeyRow]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        box = VerticalScroll(classes="dialog help")
        box.border_title = "keys"
        box.border_subtitle = "esc close · remap by id in \\[keys] of baton.toml"
        with box:
            yield Static(keys_table(self.rows))

    def action_close(self) -> None:
        self.dismiss(None)

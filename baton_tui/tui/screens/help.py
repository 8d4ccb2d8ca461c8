"""`?`: every key of the screen it is pressed on (the plan pane and the app, or the
handoff), grouped by what it changes — what it does, why its letter, and why it is dimmed
now."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from baton_tui.tui.bindings import GROUPS, MNEMONIC, SCHEME


@dataclass(frozen=True)
class KeyRow:
    keys: str
    description: str
    id: str
    reason: str | None  # None: applies now
    remapped: bool = False  # moved by [keys]: its default letter's mnemonic does not apply


Groups = tuple[tuple[str, tuple[str, ...]], ...]


def keys_table(rows: list[KeyRow], groups: Groups = GROUPS, palette: bool = True) -> Table:
    """The keys in groups by what they change; each default key says why its letter."""
    table = Table(box=None, expand=True, show_header=True, padding=(0, 1))
    table.add_column("key", style="bold", no_wrap=True)
    table.add_column("does")
    table.add_column("id", style="dim", no_wrap=True)
    table.add_column("now")
    by_id = {row.id: row for row in rows}
    listed: set[str] = set()
    for title, ids in (*groups, ("other", tuple(r.id for r in rows))):
        group = [by_id[i] for i in ids if i in by_id and i not in listed]
        if not group:
            continue
        table.add_row("", Text(title, style="bold underline"), "", "")
        for row in group:
            listed.add(row.id)
            why = MNEMONIC.get(row.id)
            does = row.description + (f" — {why}" if why and not row.remapped else "")
            table.add_row(row.keys, does, row.id,
                          "ready" if row.reason is None else Text(row.reason, style="dim"))
    if palette:
        table.add_row("ctrl+p", "command palette", "", "ready")
    return table


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,question_mark,q", "close", "close", id="close")]

    def __init__(self, rows: list[KeyRow], *, title: str = "keys", scheme: str = SCHEME,
                 groups: Groups = GROUPS, palette: bool = True) -> None:
        super().__init__()
        self.rows = rows
        self.title_text, self.scheme, self.groups, self.palette = title, scheme, groups, palette

    def compose(self) -> ComposeResult:
        box = VerticalScroll(classes="dialog help")
        box.border_title = self.title_text
        box.border_subtitle = "esc close · remap by id in \\[keys] of baton.toml"
        with box:
            yield Static(self.scheme, classes="note")
            yield Static(keys_table(self.rows, self.groups, self.palette))

    def action_close(self) -> None:
        self.dismiss(None)

"""The main screen's footer: the few keys that apply now, most useful first, and always how
to see the rest — at 80 columns too, whichever pane has focus.

Textual's Footer lists every shown binding in declaration order and cuts what does not fit;
this bar is handed the keys in the order they matter (the App decides which apply) and
drops from the end, never the fixed keys on its right.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

Key = tuple[str, str]  # (the key as shown, what it does)
GAP = "  "


def bar_text(keys: list[Key], fixed: list[Key], width: int, lead: str = "",
             dim: bool = False) -> Text:
    """`lead` and as many of `keys` as fit beside `fixed` (kept whole at the right)."""
    def size(entries: list[Key]) -> int:
        return sum(len(k) + 1 + len(d) + len(GAP) for k, d in entries)

    room = width - size(fixed) - (len(lead) + len(GAP) if lead else 0) - 1
    shown: list[Key] = []
    for entry in keys:
        if size([*shown, entry]) > room:
            break
        shown.append(entry)
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(" ")
    if lead:
        text.append(lead + GAP, style="italic")
    for entries, faint in ((shown, dim), (fixed, False)):
        for key, does in entries:
            text.append(key, style="bold reverse" if not faint else "reverse dim")
            text.append(f" {does}{GAP}", style="dim" if faint else "")
    return text


class KeyBar(Widget):
    """One line; redrawn only when the keys it shows change (a cursor move between two
    tasks that allow the same keys costs nothing)."""

    DEFAULT_CSS = "KeyBar { dock: bottom; height: 1; background: $panel; }"

    def __init__(self) -> None:
        super().__init__(id="key-bar")
        self.shown: tuple = ()

    def show(self, keys: list[Key], fixed: list[Key], lead: str = "",
             dim: bool = False) -> None:
        wanted = (tuple(keys), tuple(fixed), lead, dim)
        if wanted != self.shown:
            self.shown = wanted
            self.refresh()

    @property
    def plain(self) -> str:
        """The words on screen now (what a person, or a test, reads)."""
        return self.render().plain

    def render(self) -> Text:
        if not self.shown:
            return Text()
        keys, fixed, lead, dim = self.shown
        return bar_text(list(keys), list(fixed), self.size.width or 80, lead, dim)

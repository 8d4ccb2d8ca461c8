"""The main screen's footer: the few keys that apply now, most useful first, and always how
to see the rest — at 80 columns too, whichever pane has focus.

Textual's Footer lists every shown binding in declaration order and cuts what does not fit;
this bar is handed the keys in the order they matter (the App decides which apply) and
drops from the end, never the fixed keys on its right.
"""

from __future__ import annotations

from rich.text import Text
from textual.strip import Strip
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


def fields_text(keys: list[Key], width: int, lead: str, dim: bool = False) -> Text:
    """`lead` and as many field keys as fit, closer together than the bar's; `… ?` when
    some did not (the help lists every one)."""
    more = " … ? all"
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f" {lead}", style="italic")
    used = len(lead) + 1
    for at, (key, does) in enumerate(keys):
        entry = len(key) + len(does) + 2
        rest = len(more) if at < len(keys) - 1 else 0
        if used + entry + rest > width - 1:
            text.append(more, style="dim")
            break
        text.append(" ")
        text.append(key, style="bold reverse" if not dim else "reverse dim")
        text.append(f" {does}", style="dim" if dim else "")
        used += entry
    return text


Fields = tuple[str, list[Key], str]  # (lead, the field keys that apply now, why none do)


class KeyBar(Widget):
    """One line — two with `fields`: the selected task's field keys above the keys that
    apply now, so every edit key shows at 80 columns too. Redrawn only when the keys it
    shows change (a cursor move between two tasks that allow the same keys costs nothing).
    Each line drawn is kept by what it says: the field line names the selected task, so the
    cursor changes it, and going back to a task draws nothing."""

    DEFAULT_CSS = "KeyBar { dock: bottom; height: 1; background: $panel; }"

    def __init__(self) -> None:
        super().__init__(id="key-bar")
        self.shown: tuple = ()
        self._drawn: dict[tuple, Strip] = {}  # (line, what it says, size) -> its drawing
        self._due = False  # new keys are shown, their lines not yet drawn

    def show(self, keys: list[Key], fixed: list[Key], lead: str = "",
             dim: bool = False, fields: Fields | None = None) -> None:
        wanted = (tuple(keys), tuple(fixed), lead, dim,
                  None if fields is None else (fields[0], tuple(fields[1]), fields[2]))
        if wanted != self.shown:
            self.shown = wanted
            rows = 1 if fields is None else 2
            if self.styles.height is None or self.styles.height.value != rows:
                self.styles.height = rows
            # Drawn in the frame after the one being composed: a frame's update spans every
            # widget between its changes, and the bar is at the screen's foot — with a card's
            # lines (the cursor move that changed the keys) it redrew the whole screen.
            self._due = True
            self.call_after_refresh(self._redraw)

    def _redraw(self) -> None:
        self._due = False
        self.refresh()

    def _says(self, y: int) -> tuple:
        """What line `y` shows, as a key: the field line's parts or the keys line's."""
        if not self.shown:
            return ()
        keys, fixed, lead, dim, fields = self.shown
        if fields is not None and y == 0:
            return (fields, dim)
        return (keys, fixed, lead, dim)

    def render_line(self, y: int) -> Strip:
        if self._due:  # what Textual draws now is the old keys: keep nothing under the new
            return super().render_line(y)
        key = (y, self._says(y), self.size)
        strip = self._drawn.get(key)
        if strip is None:
            if len(self._drawn) >= 64:
                self._drawn.clear()
            strip = self._drawn[key] = super().render_line(y)
        return strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn.clear()  # new colours: nothing drawn holds

    @property
    def plain(self) -> str:
        """The words of its bottom line, the keys that apply now (what a person, or a test,
        reads)."""
        return self.render().plain.split("\n")[-1]

    @property
    def fields_plain(self) -> str:
        """The words of the field keys' line ("" without one)."""
        lines = self.render().plain.split("\n")
        return lines[0] if len(lines) > 1 else ""

    def render(self) -> Text:
        if not self.shown:
            return Text()
        keys, fixed, lead, dim, fields = self.shown
        width = self.size.width or 80
        bottom = bar_text(list(keys), list(fixed), width, lead, dim)
        if fields is None:
            return bottom
        field_lead, field_keys, why_none = fields
        if field_keys:
            top = fields_text(list(field_keys), width, field_lead, dim)
        else:  # cut here: one line, whatever the reason's length
            said = f" {field_lead}  {why_none}"
            top = Text(said if len(said) < width else said[:width - 2] + "…",
                       style="italic dim", no_wrap=True)
        return Text("\n", no_wrap=True).join([top, bottom])

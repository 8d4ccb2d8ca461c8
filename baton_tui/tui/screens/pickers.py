"""Small typed modals: each returns a value (or None on escape); the caller applies it.

None of them writes state: `ChoiceModal[str]` returns a choice, `TextModal` a line,
`PickManyModal` a list, `ConfirmModal` a bool. The App hands results to the engine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Awaitable, Callable, Generic, TypeVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, OptionList, SelectionList
from rich.segment import Segment
from textual.strip import Strip
from textual.widgets.option_list import Option
from textual.widgets.selection_list import Selection

T = TypeVar("T")


@dataclass(frozen=True)
class Choice(Generic[T]):
    """One option of a picker: the value returned, the label shown."""

    value: T
    label: str


class _Dialog(ModalScreen[T]):
    BINDINGS = [Binding("escape", "cancel", "cancel", id="cancel")]

    def __init__(self, title: str, hint: str = "") -> None:
        super().__init__()
        self.title_text = title
        self.hint = hint

    def frame(self) -> Vertical:
        box = Vertical(classes="dialog")
        box.border_title = self.title_text
        if self.hint:
            box.border_subtitle = self.hint
        return box

    def action_cancel(self) -> None:
        self.dismiss(None)


Loading = Callable[[], Awaitable[tuple[list[Choice[T]], str]]]


class ChoiceModal(_Dialog[T | None], Generic[T]):
    """Pick one of `choices`; the current value starts highlighted. With `loading` (slow to
    find, e.g. detecting players) it opens at once saying so, and takes the keys meanwhile —
    none reach the plan under it — then shows the choices and note `loading` returns."""

    def __init__(self, title: str, choices: list[Choice[T]], current: T | None = None,
                 note: str = "", loading: Loading[T] | None = None) -> None:
        super().__init__(title, "enter choose · esc cancel")
        self.choices = choices
        self.current = current
        self.note = note
        self.load_choices = loading

    def compose(self) -> ComposeResult:
        with self.frame():
            note = Label(self.note, classes="note", id="note")
            note.display = bool(self.note)
            yield note
            yield OptionList(*self._options(), id="choices")

    def _options(self) -> list[Option]:
        return [Option(("● " if c.value == self.current else "  ") + c.label, id=str(i))
                for i, c in enumerate(self.choices)]

    def on_mount(self) -> None:
        self._highlight()
        self.query_one(OptionList).focus()
        if self.load_choices is not None:
            self.run_worker(self._load(self.load_choices), exit_on_error=False,
                            description="find the choices")

    def _highlight(self) -> None:
        options = self.query_one(OptionList)
        for i, choice in enumerate(self.choices):
            if choice.value == self.current:
                options.highlighted = i

    async def _load(self, loading: Loading[T]) -> None:
        self.choices, self.note = await loading()
        label = self.query_one("#note", Label)
        label.update(self.note)
        label.display = bool(self.note)
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options())
        self._highlight()
        self.load_choices = None  # loaded: what is shown is the choices

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.choices[int(event.option.id or 0)].value)


class TextModal(_Dialog[str | None]):
    """One line of text (a title, a model name, feedback); enter accepts."""

    def __init__(self, title: str, value: str = "", placeholder: str = "",
                 note: str = "", blink: bool = True, allow_empty: bool = True) -> None:
        super().__init__(title, "enter save · esc cancel")
        self.value = value
        self.placeholder = placeholder
        self.note = note
        self.blink = blink
        self.allow_empty = allow_empty

    def compose(self) -> ComposeResult:
        with self.frame():
            if self.note:
                yield Label(self.note, classes="note")
            field = Input(self.value, placeholder=self.placeholder, id="text")
            field.cursor_blink = self.blink
            yield field

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip() and not self.allow_empty:
            self.notify("this cannot be empty", severity="warning")
            return
        self.dismiss(event.value)


class TickList(SelectionList[int]):
    """A SelectionList whose ticked rows carry a ✓ and unticked ones a blank: Textual's box
    holds an X in both, told apart only by shade — nothing at all under NO_COLOR."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        index = self.scroll_offset.y + y
        if len(segments) < 4 or index >= self.option_count:
            return strip
        ticked = self.get_option_at_index(index).value in self.selected
        segments[1] = Segment("✓" if ticked else " ", segments[1].style)
        return Strip(segments, strip.cell_length)


class PickManyModal(_Dialog[list[T] | None], Generic[T]):
    """Tick any of `choices` (space toggles); enter returns the ticked values in order."""

    BINDINGS = [Binding("escape", "cancel", "cancel", id="cancel"),
                Binding("enter", "accept", "save", id="accept", priority=True)]

    def __init__(self, title: str, choices: list[Choice[T]], chosen: list[T],
                 note: str = "") -> None:
        super().__init__(title, "space tick · enter save · esc cancel")
        self.choices = choices
        self.chosen = chosen
        self.note = note

    def compose(self) -> ComposeResult:
        with self.frame():
            if self.note:
                yield Label(self.note, classes="note")
            yield TickList(*[Selection(c.label, i, c.value in self.chosen)
                             for i, c in enumerate(self.choices)], id="many")

    def on_mount(self) -> None:
        self.query_one(SelectionList).focus()

    def action_accept(self) -> None:
        found = self.query(SelectionList)
        if not found:  # enter beat the list's mount: nothing ticked differently yet
            self.dismiss(list(self.chosen))
            return
        ticked = set(found.first().selected)
        self.dismiss([c.value for i, c in enumerate(self.choices) if i in ticked])


class ConfirmModal(_Dialog[bool | None]):
    """Yes or no; y/enter confirm, n/esc refuse."""

    BINDINGS = [Binding("escape,n", "cancel", "no", id="no"),
                Binding("y,enter", "yes", "yes", id="yes")]

    def __init__(self, title: str, question: str) -> None:
        super().__init__(title, "y yes · n no")
        self.question = question

    def compose(self) -> ComposeResult:
        with self.frame():
            yield Label(self.question)

    def action_yes(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class EditMenu(ChoiceModal[str]):
    """`e`: every field of the selected task that may change now, each with its own key;
    enter opens the highlighted one, a field's key opens it at once."""

    def __init__(self, title: str, choices: list[Choice[str]], keys: dict[str, str]) -> None:
        super().__init__(title, choices, note="or press a field's key")
        self.hint = "enter or a field's key · esc cancel"
        self.keys = keys  # a key as Textual names it -> the choice it opens

    def on_key(self, event: events.Key) -> None:
        chosen = self.keys.get(event.key)
        if chosen is not None:
            event.stop()
            self.dismiss(chosen)

"""One task as a card: its fields and, once it runs, its state in plain words."""

from __future__ import annotations

import time

from rich.text import Text
from textual.message import Message
from textual.widget import Widget

from baton_tui import api
from baton_tui.api import ACTIVE, State, TaskSnap

MARKS = {
    "draft": "○", "queued": "◌", "running": "●", "done": "✓", "landed": "✓", "merged": "✓",
    "paused": "‖", "checkpoint": "?", "failed": "✗", "parked": "✗", "discarded": "–",
}
WORD_STYLE = {
    "running": "bold", "failed": "bold", "parked": "bold", "checkpoint": "bold reverse",
    "paused": "italic",
}


def fmt_elapsed(seconds: float) -> str:
    """Whole seconds elapsed, written as `status` writes durations."""
    return api.fmt_duration(int(seconds))


def fmt_tokens(n: int) -> str:
    return f"{n / 1_000_000:.1f}M" if n >= 1_000_000 else f"{n / 1000:.1f}k" if n >= 1000 \
        else str(n)


def countdown(until: float, now: float) -> str:
    """`resets 14:05 (in 1h10m)` — the wall clock and how long from `now`."""
    at = time.strftime("%H:%M", time.localtime(until))
    left = until - now
    return f"resets {at}" + (f" (in {fmt_elapsed(left)})" if left > 0 else " (due)")


def flags_line(flags: tuple) -> str:
    """The latest flag in words, and how many more there are."""
    last = flags[-1]
    more = f" (+{len(flags) - 1} more)" if len(flags) > 1 else ""
    return f"⚑ {last.get('kind')}: {last.get('detail')}{more}"


def card_text(task: TaskSnap, selected: bool = False, now: float | None = None) -> Text:
    """The card's lines; plain words carry the meaning, colour (from CSS) only helps.
    `now` (the app's clock) adds a limit's countdown."""
    text = Text(no_wrap=True, overflow="ellipsis")
    gutter = "▶ " if selected else "  "
    text.append(gutter, style="bold")
    text.append(f"{MARKS.get(task.state, '·')} #{task.id} ", style="bold")
    text.append(task.title, style="bold" if selected else "")
    text.append(f"  [{task.mode}]", style="dim")
    if task.player == "script":
        who = "script (its check is the task)"
    else:
        who = " · ".join([task.player, task.model or "default model", *(
            [task.effort] if task.effort else [])])
    text.append(f"\n    {who}", style="")
    facts = []
    if task.depends_on:
        facts.append("after " + " ".join(f"#{d}" for d in task.depends_on))
    if task.skills:
        facts.append("skills " + ", ".join(task.skills))
    if task.scope:
        facts.append("scope " + ", ".join(task.scope))
    if facts:
        text.append("\n    " + " · ".join(facts), style="dim")
    extra = []
    if task.checkpoint:
        extra.append("⚑ checkpoint")
    if task.check:
        extra.append(f"check: {task.check}")
    if task.branch:
        extra.append(task.branch)
    if extra:
        text.append("\n    " + " · ".join(extra), style="dim")
    if task.state != State.DRAFT or task.blocked_by:
        text.append("\n    ")
        text.append(task.words, style=WORD_STYLE.get(task.state, ""))
        if round(task.wall):
            text.append(f" · {fmt_elapsed(round(task.wall))}")
        if task.tokens:
            text.append(f" · {fmt_tokens(task.tokens)} tokens", style="dim")
        if task.until and now is not None and task.state in (State.PAUSED, State.QUEUED):
            text.append(f" · {countdown(task.until, now)}", style="bold")
        if task.progress and (task.state in ACTIVE or task.state == State.PAUSED):
            text.append(f" — {task.progress}", style="italic")
    if task.flags:
        text.append("\n    " + flags_line(task.flags), style="bold")
    return text


class TaskCard(Widget):
    """A card in the plan pane; re-rendered only when its row or selection changes.

    A plain widget with `render()` rather than a Static: moving the cursor repaints two
    cards without a layout pass, unless a card gained or lost a line.
    """

    DEFAULT_CSS = "TaskCard { height: auto; }"

    class Clicked(Message):
        """The mouse picked this card (the plan pane moves its cursor here)."""

        def __init__(self, task_id: int) -> None:
            super().__init__()
            self.task_id = task_id

    def on_click(self) -> None:
        self.post_message(self.Clicked(self.row.id))

    def __init__(self, task: TaskSnap, selected: bool = False, now: float | None = None) -> None:
        super().__init__(classes=self.card_classes(task, selected))
        self.row = task
        self.selected = selected
        self.now = now
        self.text = card_text(task, selected, now)

    @staticmethod
    def card_classes(task: TaskSnap, selected: bool) -> str:
        state = "blocked" if task.blocked_by else task.state
        return f"card -{state}" + (" -selected" if selected else "")

    def render(self) -> Text:
        return self.text

    def show(self, task: TaskSnap, selected: bool, now: float | None = None) -> None:
        now = self.now if now is None else now
        ticking = bool(task.until) and now != self.now
        if task == self.row and selected == self.selected and not ticking:
            return
        self.now = now
        if (task.state, task.blocked_by, selected) != (self.row.state, self.row.blocked_by,
                                                        self.selected):
            self.set_classes(self.card_classes(task, selected))  # a style recompute
        text = card_text(task, selected, now)
        grew = text.plain.count("\n") != self.text.plain.count("\n")
        self.row, self.selected, self.text = task, selected, text
        self.refresh(layout=grew)

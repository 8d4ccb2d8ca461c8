"""One task as a card: its fields and, once it runs, its state in plain words.

The text only; `task_list.py` lays the cards out and draws those on screen."""

from __future__ import annotations

import time

from rich.text import Text

from baton_tui import api
from baton_tui.api import ACTIVE, LOCAL_RUNNER, State, TaskSnap
from baton_tui.tui.words import fmt_tokens

MARKS: dict[str, str] = {  # by `State` (a task's state is its word)
    State.DRAFT: "○", State.QUEUED: "◌", State.RUNNING: "●", State.DONE: "✓",
    State.LANDED: "✓", State.MERGED: "✓", State.PAUSED: "‖", State.CHECKPOINT: "?",
    State.FAILED: "✗", State.PARKED: "✗", State.DISCARDED: "–",
}
WORD_STYLE: dict[str, str] = {
    State.RUNNING: "bold", State.FAILED: "bold", State.PARKED: "bold",
    State.CHECKPOINT: "bold reverse", State.PAUSED: "italic",
}


def fmt_elapsed(seconds: float) -> str:
    """Whole seconds elapsed, written as `status` writes durations."""
    return api.fmt_duration(int(seconds))


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


def _facts(task: TaskSnap) -> list[str]:
    facts = []
    if task.depends_on:
        facts.append("after " + " ".join(f"#{d}" for d in task.depends_on))
    if task.skills:
        facts.append("skills " + ", ".join(task.skills))
    if task.scope:
        facts.append("scope " + ", ".join(task.scope))
    return facts


def _extras(task: TaskSnap, width: int | None = None) -> list[str]:
    """Checkpoint, check, branch. Given the card's `width`, a branch that would be cut keeps
    its own end — `…/2-add-a-token-bucket`, the part that tells tasks apart — and goes
    first, so a long check is what the line's end cuts (the detail names it whole)."""
    extra = []
    if task.checkpoint:
        extra.append("⚑ checkpoint")
    if task.check:
        extra.append(f"check: {task.check}")
    if task.fallback:
        extra.append("fallback " + " → ".join(task.fallback))
    if task.branch and width is not None and \
            4 + len(" · ".join([*extra, task.branch])) > width:
        extra.insert(0, "…/" + task.branch.rsplit("/", 1)[-1])
    elif task.branch:
        extra.append(task.branch)
    if task.worktree_reason:  # (a landed task: its branch shows, so the line is there)
        extra.append("worktree recycled")
    return extra


def _has_state_line(task: TaskSnap) -> bool:
    return task.state != State.DRAFT or bool(task.blocked_by)


def card_height(task: TaskSnap) -> int:
    """How many lines `card_text` gives `task`, without building them (the task list lays
    out every card from this and renders only those on screen)."""
    return (2 + bool(task.depends_on or task.skills or task.scope)
            + bool(task.checkpoint or task.check or task.branch)
            + _has_state_line(task) + bool(task.told) + bool(task.flags))


def card_state(task: TaskSnap) -> str:
    """The state the card's colour edge shows (a blocked task reads as blocked)."""
    return "blocked" if task.blocked_by else str(task.state)


def card_text(task: TaskSnap, selected: bool = False, now: float | None = None,
              agentless: bool = False, width: int | None = None) -> Text:
    """The card's lines; plain words carry the meaning, colour (from CSS) only helps.
    `now` (the app's clock) adds a limit's countdown; `agentless`: its player runs no agent
    (`PlayerFacts.check_is_task`), the check is the task."""
    text = Text(no_wrap=True, overflow="ellipsis")
    gutter = "▶ " if selected else "  "
    text.append(gutter, style="bold")
    text.append(f"{MARKS.get(task.state, '·')} #{task.id} ", style="bold")
    text.append(task.title, style="bold" if selected else "")
    text.append(f"  [{task.mode}]", style="dim")
    if agentless:
        who = f"{task.player} (its check is the task)"
    else:
        who = " · ".join([task.player, task.model or "default model", *(
            [task.effort] if task.effort else [])])
    if task.runner != LOCAL_RUNNER:  # where it runs, when not on this machine
        who += f" @ {task.runner}" + (f" ({task.node})" if task.node else "")
    text.append(f"\n    {who}", style="")
    facts = _facts(task)
    if facts:
        text.append("\n    " + " · ".join(facts), style="dim")
    extra = _extras(task, width)
    if extra:
        text.append("\n    " + " · ".join(extra), style="dim")
    if _has_state_line(task):
        text.append("\n    ")
        text.append(task.words, style=WORD_STYLE.get(task.state, ""))
        if round(task.wall):
            text.append(f" · {fmt_elapsed(round(task.wall))}")
        if task.tokens:
            text.append(f" · {fmt_tokens(task.tokens)} tokens", style="dim")
        if task.until and ticks(task) and now is not None:
            text.append(f" · {countdown(task.until, now)}", style="bold")
        if task.progress and (task.state in ACTIVE or task.state == State.PAUSED):
            text.append(f" — {task.progress}", style="italic")
    if task.told:  # `baton tell`: the person's last message, and whether it was read
        unread = " (not read yet)" if task.told.get("unread") else ""
        text.append(f"\n    ✉ told: {task.told.get('last', '')}{unread}", style="italic")
    if task.flags:
        text.append("\n    " + flags_line(task.flags), style="bold")
    return text


def ticks(task: TaskSnap) -> bool:
    """Whether the card shows a countdown (it changes with the clock, not with events)."""
    return bool(task.until) and task.state in (State.PAUSED, State.QUEUED)

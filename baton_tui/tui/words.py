"""What the TUI says about each autonomy level and each mode — one description each, shown
by the pickers (`A`, `M`) and the approve dialog alike — and how it writes a token count
(the cards and the chat's budget alike; durations are `api.fmt_duration`'s), and a count
of things in words (`1 check command`, `no checkpoints`)."""

from __future__ import annotations

from baton_tui.core.words import Autonomy, Mode, counted

__all__ = ["AUTONOMY_NOTES", "MODE_NOTES", "counted", "fmt_tokens"]

AUTONOMY_NOTES: dict[str, str] = {  # by `Autonomy` (the plan's is its word)
    Autonomy.GUARDED: "risky steps wait for you at their checkpoint",
    Autonomy.WATCH: "you watch; the policy decides what it can",
    Autonomy.AUTOPILOT: "no stops; a failed task is retried once, then parked",
}

MODE_NOTES: dict[Mode, str] = {
    Mode.BUILD: "edits files in its own worktree, after approval",
    Mode.RESEARCH: "read-only; may run before approval",
    Mode.MANUAL: "you do it, then mark it done",
}


def fmt_tokens(n: float) -> str:
    """`950`, `12.3k`, `200k`, `1.5M`."""
    for size, unit in ((1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.1f}".removesuffix(".0") + unit
    return f"{n:g}"

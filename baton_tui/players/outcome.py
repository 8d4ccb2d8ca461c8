"""What an agent's output says, folded from its decoded events: the attempt's `Outcome`
(session id, tokens, cost, final text, error, usage or rate limit) and the card's progress
line. The same rules for every player, so a limit reads the same whichever CLI hit it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from baton_tui.core.words import ReportStatus
from baton_tui.players.cli_events import one_line
from baton_tui.players.decoding import (
    AgentStarted,
    CommandRun,
    Event,
    Failed,
    FileChange,
    Finished,
    LimitHit,
    Note,
    Reported,
    Said,
    SessionNamed,
    ToolCall,
    ToolResult,
    Usage,
)
from baton_tui.players.steps import failure_text, finished_text, tool_line


@dataclass
class Outcome:
    """What an attempt's output says, beyond the report."""

    session_id: str | None = None
    tokens: int = 0
    cost: float = 0.0
    final_text: str | None = None
    success_event: bool | None = None     # a final "result" event said success / failure
    error: str | None = None
    limit_until: float | None = None      # a usage limit with a known reset time
    limited: bool = False                 # a usage limit, reset time unknown
    rate_limited: bool = False            # a 429 without a reset time
    report: dict[str, Any] | None = None  # for agents that report in their output (Aider)


def outcome_of(events: Iterable[Event]) -> Outcome:
    """Fold a whole log's events. A run that ended well (or reported in its output) is not
    stopped by an earlier error or limit; otherwise its final error explains it (else the
    last error it printed), and a limit pauses it: until the last reset named, else with
    the reset unknown (a usage limit: Baton probes it) or as a throttle (retried)."""
    out = Outcome()
    said: str | None = None
    final: str | None = None
    final_error: str | None = None
    errors: list[str] = []
    hits: list[LimitHit] = []
    for event in events:
        if isinstance(event, SessionNamed):
            out.session_id = event.session_id
        elif isinstance(event, Said):
            said = event.text
        elif isinstance(event, Usage):
            out.tokens = event.tokens if event.total else out.tokens + event.tokens
            out.cost = event.cost if event.total else out.cost + event.cost
        elif isinstance(event, Finished):
            out.success_event = event.ok
            final = event.text if event.text is not None else final
            final_error = None if event.ok else (event.error or final_error or "error")
        elif isinstance(event, Failed):
            errors.append(event.message)
        elif isinstance(event, LimitHit):
            hits.append(event)
        elif isinstance(event, Reported):
            done = event.status == ReportStatus.DONE
            out.report = ({"status": ReportStatus.DONE, "summary": event.text} if done
                          else {"status": ReportStatus.FAILED,
                                "reason": event.text or "the agent reported failure"})
            out.success_event = done if out.success_event is None else out.success_event
            final = event.text
    out.final_text = final if final is not None else said
    out.cost = round(out.cost, 6)
    if out.success_event or out.report is not None:
        return out
    error = final_error or (errors[-1] if errors else None)
    out.error = one_line(error, 300) if error else None
    if hits:
        known = [hit.until for hit in hits if hit.until is not None]
        if known:
            out.limit_until = known[-1]
        elif any(hit.usage for hit in hits):
            out.limited = True
        else:
            out.rate_limited = True
        out.error = out.error or one_line(hits[-1].message, 300) or None
    return out


def progress_text(event: Event) -> str | None:
    """One event as the card's progress line, or None when it is not worth one."""
    if isinstance(event, AgentStarted):
        return f"{event.agent} started" + (f" (model {event.model})" if event.model else "")
    if isinstance(event, Said):
        return one_line(event.text) or None
    if isinstance(event, ToolCall):
        line = tool_line(event.name, event.args)
        return line if event.ok is not False else \
            f"{line} failed" + (f": {one_line(event.output, 100)}" if event.output else "")
    if isinstance(event, ToolResult):
        return None if event.ok else "tool error: " + one_line(event.output, 120)
    if isinstance(event, CommandRun):
        if event.exit_code is None:
            return "$ " + one_line(event.command, 140)
        return f"command exited {event.exit_code}" if event.exit_code != 0 else None
    if isinstance(event, FileChange):
        return ("edited " + ", ".join(path for _kind, path in event.changes if path))[:147]
    if isinstance(event, Usage):
        return f"turn done ({event.tokens} tokens)" if event.turn else None
    if isinstance(event, Finished):
        return finished_text(event) if event.ok else failure_text(event.error, 150)
    if isinstance(event, Failed):
        return f"{event.label}: {one_line(event.message, 150)}"
    if isinstance(event, Reported):
        return f"report: {event.status} {one_line(event.text, 140)}".strip()
    if isinstance(event, Note):
        return event.text if event.shown else None
    return None


def progress_line(events: Iterable[Event]) -> str | None:
    """One output line's events as one progress line: its last tool call when it made any
    (what the agent is doing now), else the first thing worth saying."""
    lines = [(event, text) for event in events if (text := progress_text(event))]
    calls = [text for event, text in lines if isinstance(event, (ToolCall, CommandRun))]
    if calls:
        return calls[-1]
    return lines[0][1] if lines else None

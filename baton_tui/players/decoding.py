"""An agent's raw output, read once: typed events from each player's own output format.

Every adapter reads its CLI's output in exactly one place — its `Decoder` — and everything
Baton wants from that output is a fold of the events it yields: the card's progress line
(`outcome.progress_line`), the attempt's outcome (`outcome.outcome_of`: session id, tokens,
cost, final text, limits, errors) and the readable steps of the task detail and the planner
chat (`steps.StepReader`). A decoder is stateful and serves one output stream: `feed(line)`
returns the events of one line (some formats need what came before: Claude Code's results
name the call they answer, Gemini CLI's text arrives in pieces), `close()` those the end of
the stream completes.

The attempt shim writes stdout and stderr into one log, so a decoder meets banners, warnings
and stack traces between its events: a line it does not know becomes a `Note`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Union

from baton_tui.players.cli_events import event_of


@dataclass(frozen=True)
class AgentStarted:
    """The agent is up (its init event): who, on which model."""

    agent: str
    model: str | None = None
    provider: str | None = None


@dataclass(frozen=True)
class SessionNamed:
    """The session id a resumed attempt continues (the last one named wins)."""

    session_id: str


@dataclass(frozen=True)
class Said:
    """Text the agent wrote (an assistant message, or one of its text blocks)."""

    text: str


@dataclass(frozen=True)
class ToolCall:
    """The agent called a tool; `ok`/`output` when the call's result comes with it."""

    name: str
    args: Mapping[str, Any] | str
    ok: bool | None = None
    output: str = ""


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer to an earlier call, reported on its own."""

    name: str
    ok: bool
    output: str = ""


@dataclass(frozen=True)
class CommandRun:
    """A shell command the agent ran: `exit_code` None while it runs."""

    command: str
    exit_code: int | None = None
    output: str = ""


@dataclass(frozen=True)
class FileChange:
    """Files the agent changed: (kind, path) pairs, kind such as add, edit, delete."""

    changes: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Usage:
    """Tokens and cost. `total`: the run's totals so far (they replace the sum); else one
    more share to add. `turn`: one model turn ended here."""

    tokens: int = 0
    cost: float = 0.0
    total: bool = False
    turn: bool = False


@dataclass(frozen=True)
class Finished:
    """The agent's final result event: success or failure, its final text, the error it
    names, and a few words for the card ("2 turns", "8503 tokens")."""

    ok: bool
    text: str | None = None
    error: str | None = None
    summary: str = ""


@dataclass(frozen=True)
class Failed:
    """An error the agent printed that need not end the run (its last one explains a run
    without a final result). `label` heads the line shown for it."""

    message: str
    label: str = "error"


@dataclass(frozen=True)
class LimitHit:
    """A usage limit (`usage`) or a passing rate limit, and the reset it names (an epoch),
    or None when it names none. `message`: the words that said so."""

    until: float | None
    usage: bool
    message: str = ""


@dataclass(frozen=True)
class Retrying:
    """The agent is about to retry a limit on its own (for minutes, or silently): stop it
    and let Baton wait instead, visibly."""

    reason: str


@dataclass(frozen=True)
class Reported:
    """A report in the agent's own output (`BATON: done …`), for agents without a shell."""

    status: str   # done | failed
    text: str = ""


@dataclass(frozen=True)
class Note:
    """Anything else worth a line: a warning, a banner, a line the decoder does not know.
    `kind` is the step it shows as (note or error); `shown`: also a progress line."""

    text: str
    kind: str = "note"
    shown: bool = False


Event = Union[AgentStarted, SessionNamed, Said, ToolCall, ToolResult, CommandRun, FileChange,
              Usage, Finished, Failed, LimitHit, Retrying, Reported, Note]


class Decoder:
    """Reads one output stream of one player, line by line (subclass per output format)."""

    def feed(self, line: str) -> list[Event]:
        text = line.strip()
        return [Note(text)] if text else []

    def close(self) -> list[Event]:
        """Events the end of the stream completes (text still gathered, a missing result)."""
        return []

    def read(self, text: str) -> list[Event]:
        """Every event of a whole log, in order."""
        found: list[Event] = []
        for line in text.splitlines():
            found += self.feed(line)
        return found + self.close()


class JsonDecoder(Decoder):
    """A JSON-lines format: each line that is a JSON object goes to `decode`; any other
    line to `plain` (a Note unless the format has plain lines of its own)."""

    def feed(self, line: str) -> list[Event]:
        event = event_of(line)
        if event is None:
            return self.plain(line)
        return self.decode(event)

    def plain(self, line: str) -> list[Event]:
        return Decoder.feed(self, line)

    def decode(self, event: dict[str, Any]) -> list[Event]:
        return []


def obj(value: Any) -> dict[str, Any]:
    """A JSON object of a value that should be one (anything else: empty)."""
    return value if isinstance(value, dict) else {}


def text_of(value: Any) -> str:
    """A string of a value that should be one (None and odd shapes: empty)."""
    return value if isinstance(value, str) else "" if value is None else str(value)


def said(text: Any) -> list[Event]:
    """A `Said` for non-blank text, else nothing."""
    text = text_of(text)
    return [Said(text)] if text.strip() else []


class GenericDecoder(JsonDecoder):
    """Any other JSON stream (a custom player's, say): its tool calls and its text by the
    usual key names; a plain line is a note."""

    def decode(self, event: dict[str, Any]) -> list[Event]:
        if str(event.get("type", "")).startswith("acp."):   # an ACP player's bridge
            return AcpDecoder().decode(event)
        name = event.get("tool_name") or event.get("tool") or event.get("name")
        if name and isinstance(name, str):
            part = obj(event.get("part"))
            state = obj(part.get("state"))
            args = event.get("parameters") or event.get("input") or event.get("arguments") \
                or state.get("input") or {}
            return [ToolCall(name, args if isinstance(args, (dict, str)) else {})]
        for key in ("text", "message", "content", "result"):
            value = event.get(key)
            if isinstance(value, str) and value.strip():
                return [Said(value)]
        return []


# ACP players (players/acp.py): the bridge's own JSON lines. Here, not beside the adapter,
# so a log read without its player (a custom ACP player's, say) still reads as steps.
def plan_line(entries: list[dict[str, Any]]) -> str:
    """The agent's plan as one progress line: how far, and the entry it is on."""
    done = sum(1 for e in entries if e.get("status") == "completed")
    now = next((e for e in entries if e.get("status") == "in_progress"), None) \
        or next((e for e in entries if e.get("status") == "pending"), None)
    head = f"plan {done}/{len(entries)}"
    return f"{head}: {now['content']}" if now else head


class AcpDecoder(JsonDecoder):
    """The bridge's JSON lines (`acp.*`) as decoded events. A failed turn's message is read
    for a usage or rate limit: by `limit` (a CLI's own words), else in a provider's words."""

    def __init__(self, limit: "Callable[[str], list[Event]] | None" = None):
        self.limit = limit

    def limits(self, message: str) -> list[Event]:
        if self.limit is not None:
            return self.limit(message)
        from baton_tui.players.limits import limit_in  # lazy: only a failed turn needs it

        found = limit_in(message)
        return [] if found is None else [LimitHit(found[0], found[1], message)]

    def decode(self, event: dict[str, Any]) -> list[Event]:
        kind = str(event.get("type", ""))
        if not kind.startswith("acp."):
            return []
        kind = kind[4:]
        if kind == "init":
            return [AgentStarted(str(event.get("agent") or "acp agent"))]
        if kind == "session" and event.get("session_id"):
            return [SessionNamed(str(event["session_id"]))]
        if kind == "text":
            return said(event.get("text"))
        if kind == "tool":
            paths = event.get("paths") or []
            return [ToolCall(str(event.get("kind") or "other"),
                             {"title": event.get("title") or "", **({"path": paths[0]} if paths
                                                                      else {})})]
        if kind == "tool_done":
            return [ToolResult(str(event.get("title") or "tool"),
                               event.get("status") == "completed")]
        if kind == "plan":
            return [Note(plan_line(event.get("entries") or []), shown=True)]
        if kind == "usage" and event.get("tokens") is not None:
            return [Usage(tokens=int(event["tokens"]), total=True, turn=True)]
        if kind == "usage" and event.get("cost") is not None:
            return [Usage(cost=float(event["cost"]), total=True)]
        if kind in ("refused", "permission") and event.get("decision", "reject") == "reject":
            return [Note(f"refused: {event.get('what') or event.get('title')} "
                         f"({event.get('why')})", kind="error")]
        if kind == "result":
            ok = bool(event.get("ok"))
            error = None if ok else str(event.get("error") or event.get("stop_reason") or "error")
            return [Finished(ok, error=error, summary=str(event.get("stop_reason") or "")),
                    *(self.limits(error) if error else [])]
        if kind == "contained":
            return [Failed(str(event.get("detail")), label="contained")]
        return []

"""The script a ``ScriptedServer`` replays: turn format, validation, and what each request gets.

A script is a JSON list of turns (or an object ``{"turns": [...], "side_text": "..."}``). Turns
are consumed in order, one per model request, across all protocols:

``{"text": "Hello"}``
    a plain answer (stop reason ``end_turn`` / ``stop`` / ``STOP``).
``{"text": "Writing it", "tool": "Write", "input": {"file_path": "/abs/x", "content": "hi"}}``
    optional text, then one tool call with the agent's own tool name. ``"namespace":
    "mcp__baton"`` adds ``namespace`` to an OpenAI Responses function call (Codex's MCP tools);
    the other protocols ignore it.
``{"text": "...", "tools": [{"tool": "Read", "input": {...}}, ...]}``
    several tool calls in one answer (each may carry its own ``namespace``).
``{"error": 429, "body": {...}, "headers": {"retry-after": "30"}}``
    an HTTP error with that status, JSON body and headers. Without ``body`` a vendor-shaped
    default body is sent. Anthropic errors also carry ``x-should-retry: false`` (so Claude Code
    and the SDK fail at once) unless the turn's headers set ``x-should-retry`` themselves.
``{"delay": 30, ...}``
    (with any of the above) answer only after that many seconds (at most 600): a model that
    keeps an agent waiting, so a test can stop the agent mid-request.
``{"match": "substring", ...}``
    (with any of the above) served only when the request's last non-assistant message (the
    last user message, tool result or function output) contains the substring. Until then
    requests are answered with ``side_text`` and the turn stays at the head of the script.

``"comment"`` and keys starting with ``_`` are ignored; any other unknown key is an error when
the script is loaded. Once the script is exhausted every request gets the text
``"script exhausted"`` and a normal end of turn, so agents end cleanly. Usage numbers are
estimates: input tokens are ``len(request body) // 4``, output tokens
``len(text + tool arguments) // 4``.

Side requests never consume a turn: ``HEAD /`` and ``GET /``, ``GET /v1/models``, token
counting, OpenCode's title generation (a chat completion without tools whose system or first
message contains "title generator") answered with ``side_text``, and Gemini JSON-mode calls
(``generationConfig.responseMimeType == "application/json"``) answered with an object filling
the schema's properties (strings ``"simple"`` or the first enum value, numbers ``1``, booleans
``true``).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

__all__ = [
    "EXHAUSTED_TEXT",
    "Answer",
    "Script",
    "check_turn",
    "fill_schema",
    "gemini_json_schema",
    "is_title_request",
    "last_input_text",
    "load_script",
    "text_of",
]

EXHAUSTED_TEXT = "script exhausted"


def _dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


class Script:
    """The turn queue, shared by the server's handler threads.

    ``take`` decides, for one model request, which turn answers it; side requests never
    reach it.
    """

    def __init__(self, turns: list[dict], side_text: str = "Baton task"):
        self._turns = [check_turn(t, i) for i, t in enumerate(turns)]
        self._next = 0
        self.side_text = side_text
        self._lock = threading.Lock()

    @property
    def remaining(self) -> list[dict]:
        with self._lock:
            return [dict(t) for t in self._turns[self._next :]]

    @property
    def served(self) -> int:
        with self._lock:
            return self._next

    def add(self, turns: list[dict]) -> None:
        with self._lock:
            start = len(self._turns)
            checked = [check_turn(t, start + i) for i, t in enumerate(turns)]
            self._turns.extend(checked)

    def take(self, protocol: str, req: dict) -> tuple[Answer, int | None, str | None]:
        """(answer, turn index or None, side kind or None) for one model request."""
        with self._lock:
            if self._next >= len(self._turns):
                return Answer(text=EXHAUSTED_TEXT), None, "exhausted"
            turn = self._turns[self._next]
            match = turn.get("match")
            if match and str(match) not in last_input_text(protocol, req):
                return Answer(text=self.side_text), None, "unmatched"
            index = self._next
            self._next += 1
        return Answer.from_turn(turn), index, None


_TURN_KEYS = {"text", "tool", "input", "namespace", "tools", "error", "body", "headers", "match",
              "delay"}


def check_turn(turn: Any, index: int) -> dict:
    """Validate one script turn early, so a typo fails at load time, not mid-run."""
    where = f"script turn {index}"
    if not isinstance(turn, dict):
        raise ValueError(f"{where}: a turn is a JSON object, got {type(turn).__name__}")
    unknown = {k for k in turn if k not in _TURN_KEYS and k != "comment" and not k.startswith("_")}
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    if turn.get("error") is not None:
        if not isinstance(turn["error"], int) or not 400 <= turn["error"] <= 599:
            raise ValueError(f"{where}: 'error' is an HTTP status code 400-599")
        if turn.get("headers") is not None and not isinstance(turn["headers"], dict):
            raise ValueError(f"{where}: 'headers' is an object")
    if "tool" in turn and not isinstance(turn["tool"], str):
        raise ValueError(f"{where}: 'tool' is a tool name")
    if "input" in turn and not isinstance(turn["input"], dict):
        raise ValueError(f"{where}: 'input' is an object")
    delay = turn.get("delay")
    if delay is not None and (isinstance(delay, bool) or not isinstance(delay, (int, float))
                              or not 0 <= delay <= 600):
        raise ValueError(f"{where}: 'delay' is a number of seconds, 0-600")
    if "match" in turn and not isinstance(turn["match"], str):
        raise ValueError(f"{where}: 'match' is a substring")
    calls = turn.get("tools")
    if calls is not None:
        if not isinstance(calls, list) or not all(
            isinstance(c, dict) and isinstance(c.get("tool"), str)
            and isinstance(c.get("input", {}), dict)
            for c in calls
        ):
            raise ValueError(f"{where}: 'tools' is a list of {{'tool': name, 'input': {{...}}}}")
    return dict(turn)


def load_script(path: Path) -> tuple[list[dict], str | None]:
    """Read a script file: a JSON list of turns, or ``{"turns": [...], "side_text": ...}``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if isinstance(data, dict):
        return list(data.get("turns") or []), data.get("side_text")
    if not isinstance(data, list):
        raise ValueError("a script is a JSON list of turns or an object with 'turns'")
    return data, None


def _tool_calls(turn: dict) -> list[dict]:
    specs = ([turn] if turn.get("tool") else []) + list(turn.get("tools") or [])
    return [
        {"tool": c["tool"], "input": c.get("input") or {}, "namespace": c.get("namespace")}
        for c in specs
    ]


class Answer:
    """What to send back for one model request: text + tool calls, or an error."""

    def __init__(
        self,
        text: str = "",
        calls: list[dict] | None = None,
        error: int | None = None,
        body: Any = None,
        headers: dict | None = None,
        delay: float = 0.0,
    ):
        self.text = text
        self.calls = calls or []
        self.error = error
        self.body = body
        self.headers = headers
        self.delay = delay

    @classmethod
    def from_turn(cls, turn: dict) -> Answer:
        delay = float(turn.get("delay") or 0.0)
        if turn.get("error") is not None:
            return cls(error=int(turn["error"]), body=turn.get("body"), headers=turn.get("headers"),
                       delay=delay)
        return cls(text=str(turn.get("text") or ""), calls=_tool_calls(turn), delay=delay)

    def output_tokens(self) -> int:
        size = len(self.text) + sum(len(_dumps(c["input"])) for c in self.calls)
        return size // 4


def text_of(content: Any) -> str:
    """Flatten message content of any of the protocols into plain text."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(text_of(part) for part in content)
    if isinstance(content, dict):
        out = []
        for key in ("text", "content", "output", "input_text"):
            if key in content:
                out.append(text_of(content[key]))
        for key in ("functionResponse", "function_response"):
            if key in content:
                out.append(_dumps(content[key]))
        return "\n".join(out)
    return str(content)


def last_input_text(protocol: str, req: dict) -> str:
    """Text of the last non-assistant message of a model request."""
    if protocol == "anthropic":
        msgs = [m for m in req.get("messages") or [] if m.get("role") != "assistant"]
        return text_of(msgs[-1].get("content")) if msgs else ""
    if protocol == "chat":
        skip = ("assistant", "system", "developer")
        msgs = [m for m in req.get("messages") or [] if m.get("role") not in skip]
        return text_of(msgs[-1].get("content")) if msgs else ""
    if protocol == "responses":
        inp = req.get("input")
        if isinstance(inp, str):
            return inp
        items = [
            i
            for i in inp or []
            if isinstance(i, dict)
            and (
                i.get("role") == "user"
                or i.get("type") in ("function_call_output", "custom_tool_call_output")
            )
        ]
        return text_of(items[-1]) if items else ""
    if protocol == "gemini":
        contents = [c for c in req.get("contents") or [] if c.get("role", "user") == "user"]
        return text_of(contents[-1].get("parts")) if contents else ""
    return ""


def is_title_request(req: dict) -> bool:
    """OpenCode's title call: a chat completion without tools, prompted as a title generator."""
    if req.get("tools"):
        return False
    msgs = req.get("messages") or []
    candidates = [m for m in msgs if m.get("role") == "system"] + msgs[:1]
    return any("title generator" in text_of(m.get("content")).lower() for m in candidates)


def gemini_json_schema(req: dict) -> Any:
    """The response schema of a Gemini JSON-mode request, or None for an ordinary request."""
    cfg = req.get("generationConfig") or req.get("generation_config") or {}
    mime = cfg.get("responseMimeType") or cfg.get("response_mime_type")
    if mime != "application/json":
        return None
    for key in ("responseJsonSchema", "responseSchema", "response_json_schema", "response_schema"):
        if cfg.get(key):
            return cfg[key]
    return {"type": "object", "properties": {}}


def fill_schema(schema: Any) -> Any:
    """A plausible value for a JSON schema (or Gemini's OpenAPI-style schema).

    Gemini CLI's router and next-speaker checks are JSON-mode calls; filling them keeps the CLI
    quiet without spending a turn. The first enum value wins (``next_speaker`` -> ``"user"``).
    """
    if not isinstance(schema, dict):
        return "simple"
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            return fill_schema(schema[key][0])
    typ = schema.get("type")
    if isinstance(typ, list):
        typ = next((t for t in typ if str(t).lower() != "null"), "string")
    typ = str(typ or ("object" if "properties" in schema else "string")).lower()
    if typ == "object":
        return {k: fill_schema(v) for k, v in (schema.get("properties") or {}).items()}
    if typ == "array":
        return [fill_schema(schema.get("items") or {"type": "string"})]
    if typ in ("integer", "number"):
        return 1
    if typ == "boolean":
        return True
    if typ == "null":
        return None
    return "simple"

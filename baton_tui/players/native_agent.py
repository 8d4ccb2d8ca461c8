"""Baton's native agent loop: one task, one worktree, the official Anthropic or OpenAI SDK.

Run by the attempt shim like any agent CLI, in the task's worktree with the BATON_* environment:

    python -m baton_tui.players.native_agent --provider anthropic|openai --model M
        --mode build|research --prompt-file P --transcript T [--effort E]
        [--resume PREVIOUS_TRANSCRIPT [--resume-message TEXT]] [--max-turns N]

Tools: read_file, list_files, grep, baton_report, baton_checkpoint, and in build mode also
write_file, edit_file and run_command. Research mode does not offer the writing tools at all,
and refuses a call to one. Every path is resolved (symlinks included) and must stay inside the
worktree. `run_command` is the agent's shell: an argv list, or a string run with `sh -c`, in the
worktree, with a timeout. The report tools call `baton_tui.run.channel` in-process.

Output: JSON lines on stdout (see `baton_tui.players.native` for the events). The transcript
(the provider's own message list plus the session id) is saved after every turn, so `--resume`
continues it. A 429 stops the loop with an `error` event carrying the reset time read from the
response headers (`anthropic-ratelimit-unified-reset`, `retry-after`, `x-ratelimit-reset-*`) or
body (`resets_at`, `resets_in_seconds`), or null when it has none; Baton pauses the task until
the reset or retries it with backoff. Exit 0 after the final answer: the report decides done.
"""

from __future__ import annotations

import argparse
import email.utils
import fnmatch
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_TURNS = 60
TOOL_OUTPUT_LIMIT = 30_000
READ_LIMIT = 100_000
COMMAND_TIMEOUT = 120
COMMAND_TIMEOUT_MAX = 1800
TRANSIENT_RETRIES = 3
RATE_LIMITED_EXIT = 75

# Answer budget per effort level (max_tokens).
MAX_TOKENS = {"low": 4096, "medium": 16000, "high": 32000}

# USD per million tokens: (input, output). Unknown models cost 0. Cache reads are charged at
# a tenth of the input price, cache writes at 1.25 times (Anthropic's published multipliers).
PRICES: dict[str, tuple[float, float]] = {
    "claude-opus-4-8": (5.0, 25.0),
    "claude-opus-4-7": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "gpt-5": (1.25, 10.0),
    "gpt-5.1": (1.25, 10.0),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4o": (2.5, 10.0),
    "gpt-4o-mini": (0.15, 0.6),
}
_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")

# Anthropic models that take `output_config.effort`; OpenAI models that take `reasoning_effort`.
_ANTHROPIC_EFFORT = ("claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8")
_OPENAI_REASONING = ("gpt-5", "o1", "o3", "o4")


def price_of(model: str) -> tuple[float, float]:
    return PRICES.get(model) or PRICES.get(_DATED.sub("", model)) or (0.0, 0.0)


def cost_of(model: str, usage: "Usage") -> float:
    inp, out = price_of(model)
    return (usage.input_tokens * inp + usage.output_tokens * out
            + usage.cache_read_tokens * inp * 0.1
            + usage.cache_write_tokens * inp * 1.25) / 1_000_000


def emit(kind: str, **data: Any) -> None:
    sys.stdout.write(json.dumps({"type": kind, **data}, ensure_ascii=False) + "\n")
    sys.stdout.flush()


# ---------------------------------------------------------------------------- tools


class ToolError(Exception):
    """A tool call that cannot be carried out; its message goes back to the model."""


TOOL_SPECS: dict[str, dict[str, Any]] = {
    "read_file": {
        "description": "Read a text file in your worktree. Paths are relative to the worktree "
                       "root. Optional 1-based `offset` (first line) and `limit` (line count).",
        "schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "offset": {"type": "integer"},
            "limit": {"type": "integer"}}, "required": ["path"]},
    },
    "list_files": {
        "description": "List files under a directory of your worktree (recursively; .git is "
                       "skipped). Optional glob `pattern` on the relative path, e.g. '*.py'.",
        "schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "pattern": {"type": "string"}}},
    },
    "grep": {
        "description": "Search files of your worktree for a regular expression. Returns "
                       "path:line: text. Optional `path` (file or directory) and `glob`.",
        "schema": {"type": "object", "properties": {
            "pattern": {"type": "string"}, "path": {"type": "string"},
            "glob": {"type": "string"}}, "required": ["pattern"]},
    },
    "write_file": {
        "description": "Create or replace a file in your worktree with `content`.",
        "schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"]},
    },
    "edit_file": {
        "description": "Replace `old_string` with `new_string` in a file of your worktree. "
                       "`old_string` must occur exactly once unless `replace_all` is true.",
        "schema": {"type": "object", "properties": {
            "path": {"type": "string"}, "old_string": {"type": "string"},
            "new_string": {"type": "string"}, "replace_all": {"type": "boolean"}},
            "required": ["path", "old_string", "new_string"]},
    },
    "run_command": {
        "description": "Run a command in your worktree: `command` is an argv list, or a string "
                       "run with `sh -c`. Returns the exit status and output. `timeout` in "
                       f"seconds (default {COMMAND_TIMEOUT}).",
        "schema": {"type": "object", "properties": {
            "command": {"anyOf": [{"type": "string"},
                                  {"type": "array", "items": {"type": "string"}}]},
            "timeout": {"type": "integer"}}, "required": ["command"]},
    },
    "baton_report": {
        "description": "Report to Baton: status `done` (with a summary of what you did), "
                       "`failed` (with the reason) or `progress` (a short note). Reporting done "
                       "or failed is the ONLY way your task counts as finished.",
        "schema": {"type": "object", "properties": {
            "status": {"type": "string", "enum": ["done", "failed", "progress"]},
            "summary": {"type": "string"}}, "required": ["status", "summary"]},
    },
    "baton_checkpoint": {
        "description": "Ask before an irreversible step (migration, deletion, dependency "
                       "change). Say what is about to happen; optional `evidence` file path. "
                       "The answer says go ahead, stop, or not decided yet (end your turn).",
        "schema": {"type": "object", "properties": {
            "what": {"type": "string"}, "evidence": {"type": "string"}}, "required": ["what"]},
    },
}
READ_TOOLS = ("read_file", "list_files", "grep", "baton_report", "baton_checkpoint")
WRITE_TOOLS = ("write_file", "edit_file", "run_command")


def _clip(text: str, limit: int = TOOL_OUTPUT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + f"\n… [{len(text) - limit} characters cut] …\n" + text[-half:]


class Toolbox:
    """The tools of one attempt, confined to its worktree."""

    def __init__(self, root: Path, mode: str):
        self.root = root.resolve()
        self.mode = mode
        self.names = READ_TOOLS if mode == "research" else READ_TOOLS + WRITE_TOOLS
        self.child: subprocess.Popen | None = None

    # paths ------------------------------------------------------------------
    def path(self, raw: Any, *, write: bool = False) -> Path:
        if not isinstance(raw, str) or not raw.strip():
            raise ToolError("a `path` string is required")
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = candidate.resolve()  # symlinks included
        if resolved != self.root and self.root not in resolved.parents:
            raise ToolError(f"refused: {raw} is outside your worktree ({self.root}); every "
                            "path must stay inside it")
        if write:
            rel = resolved.relative_to(self.root)
            if rel.parts and rel.parts[0] == ".git":
                raise ToolError("refused: Baton's git metadata is not yours to write")
        return resolved

    def rel(self, path: Path) -> str:
        return str(path.relative_to(self.root)) if path != self.root else "."

    def _walk(self, start: Path):
        for dirpath, dirnames, filenames in os.walk(start):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            for name in sorted(filenames):
                yield Path(dirpath) / name

    # dispatch ---------------------------------------------------------------
    def call(self, name: str, args: Any) -> str:
        if name not in self.names:
            if self.mode == "research" and name in WRITE_TOOLS:
                raise ToolError(f"refused: {name} is not available in a read-only research task;"
                                " put your findings in your baton_report summary")
            raise ToolError(f"unknown tool {name!r} (tools: {', '.join(self.names)})")
        if not isinstance(args, dict):
            raise ToolError("tool arguments must be a JSON object")
        return getattr(self, f"t_{name}")(**{k: v for k, v in args.items()
                                             if isinstance(k, str)})

    def t_read_file(self, path: Any = None, offset: Any = None, limit: Any = None,
                    **_: Any) -> str:
        target = self.path(path)
        if not target.is_file():
            raise ToolError(f"{path}: no such file")
        text = target.read_text(encoding="utf-8", errors="replace")
        if offset or limit:
            lines = text.splitlines(keepends=True)
            start = max(int(offset or 1), 1) - 1
            end = start + int(limit) if limit else len(lines)
            text = "".join(lines[start:end])
        return _clip(text, READ_LIMIT) if text else "(empty file)"

    def t_list_files(self, path: Any = ".", pattern: Any = None, **_: Any) -> str:
        start = self.path(path or ".")
        if start.is_file():
            return self.rel(start)
        if not start.is_dir():
            raise ToolError(f"{path}: no such directory")
        out = []
        for item in self._walk(start):
            rel = str(item.relative_to(self.root))
            if pattern and not (fnmatch.fnmatch(rel, pattern) or fnmatch.fnmatch(item.name,
                                                                               str(pattern))):
                continue
            out.append(rel)
            if len(out) >= 1000:
                out.append("… (more files not listed)")
                break
        return "\n".join(out) or "(no files)"

    def t_grep(self, pattern: Any = None, path: Any = ".", glob: Any = None, **_: Any) -> str:
        if not isinstance(pattern, str) or not pattern:
            raise ToolError("a `pattern` (regular expression) is required")
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"bad regular expression: {exc}") from None
        start = self.path(path or ".")
        files = [start] if start.is_file() else list(self._walk(start))
        hits: list[str] = []
        for item in files:
            if glob and not (fnmatch.fnmatch(item.name, str(glob))
                             or fnmatch.fnmatch(str(item.relative_to(self.root)), str(glob))):
                continue
            try:
                real = item.resolve()
                if self.root not in real.parents or real.stat().st_size > 2_000_000:
                    continue
                text = real.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for number, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{item.relative_to(self.root)}:{number}: {line[:300]}")
                    if len(hits) >= 300:
                        return "\n".join(hits) + "\n… (more matches not shown)"
        return "\n".join(hits) or "(no matches)"

    def t_write_file(self, path: Any = None, content: Any = None, **_: Any) -> str:
        if not isinstance(content, str):
            raise ToolError("a `content` string is required")
        target = self.path(path, write=True)
        if target.is_dir():
            raise ToolError(f"{path} is a directory")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"wrote {self.rel(target)} ({len(content)} characters)"

    def t_edit_file(self, path: Any = None, old_string: Any = None, new_string: Any = None,
                    replace_all: Any = False, **_: Any) -> str:
        if not isinstance(old_string, str) or not isinstance(new_string, str) or not old_string:
            raise ToolError("`old_string` (not empty) and `new_string` strings are required")
        target = self.path(path, write=True)
        if not target.is_file():
            raise ToolError(f"{path}: no such file (use write_file to create one)")
        text = target.read_text(encoding="utf-8")
        count = text.count(old_string)
        if count == 0:
            raise ToolError(f"old_string not found in {path}")
        if count > 1 and not replace_all:
            raise ToolError(f"old_string occurs {count} times in {path}: give more context or "
                            "set replace_all")
        target.write_text(text.replace(old_string, new_string) if replace_all
                          else text.replace(old_string, new_string, 1), encoding="utf-8")
        return f"edited {self.rel(target)} ({count if replace_all else 1} replacement(s))"

    def t_run_command(self, command: Any = None, timeout: Any = None, **_: Any) -> str:
        if isinstance(command, str) and command.strip():
            argv = ["sh", "-c", command]
        elif isinstance(command, list) and command and all(isinstance(a, str) for a in command):
            argv = list(command)
        else:
            raise ToolError("`command` is an argv list of strings or a command string")
        try:
            limit = min(max(int(timeout or COMMAND_TIMEOUT), 1), COMMAND_TIMEOUT_MAX)
        except (TypeError, ValueError):
            limit = COMMAND_TIMEOUT
        try:
            self.child = subprocess.Popen(argv, cwd=self.root, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                          process_group=0)
        except OSError as exc:
            raise ToolError(f"cannot run {argv[0]}: {exc}") from None
        try:
            out, _err = self.child.communicate(timeout=limit)
            status = f"exit status {self.child.returncode}"
        except subprocess.TimeoutExpired:
            self.kill_child()
            out, _err = self.child.communicate()
            status = f"timed out after {limit}s (killed)"
        finally:
            child, self.child = self.child, None
        del child
        text = (out or b"").decode("utf-8", "replace")
        return f"{status}\n{_clip(text)}".rstrip()

    def kill_child(self) -> None:
        child = self.child
        if child is not None and child.poll() is None:
            try:
                os.killpg(child.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    # the report channel -------------------------------------------------------
    def caller(self) -> Any:
        from baton_tui.run import channel

        # Read afresh on every call: a stale attempt must be refused like any other.
        return channel.caller_from_env()

    def t_baton_report(self, status: Any = None, summary: Any = None, **extra: Any) -> str:
        from baton_tui.errors import BatonError
        from baton_tui.run import channel

        text = summary if summary is not None else extra.get("reason") or extra.get("message")
        try:
            return channel.report(self.caller(), str(status or ""), None if text is None
                                  else str(text))
        except BatonError as exc:
            raise ToolError(exc.message if hasattr(exc, "message") else str(exc)) from None

    def t_baton_checkpoint(self, what: Any = None, evidence: Any = None, **_: Any) -> str:
        from baton_tui.errors import BatonError
        from baton_tui.run import channel

        if not isinstance(what, str) or not what.strip():
            raise ToolError("say `what` is about to happen")
        evidence_path = str(self.path(evidence)) if evidence else None
        try:
            code, message = channel.checkpoint(self.caller(), what, evidence_path)
        except BatonError as exc:
            raise ToolError(exc.message if hasattr(exc, "message") else str(exc)) from None
        verdict = {channel.GO: "GO", channel.STOP: "STOP", channel.UNDECIDED: "WAIT"}[code]
        return f"{verdict}: {message}"


def summarize(name: str, args: Any) -> str:
    """A short human description of one tool call, for the log."""
    if not isinstance(args, dict):
        return ""
    if name == "run_command":
        command = args.get("command")
        return " ".join(command) if isinstance(command, list) else str(command or "")[:160]
    if name == "baton_report":
        return f"{args.get('status')}: {str(args.get('summary') or '')[:120]}"
    if name == "baton_checkpoint":
        return str(args.get("what") or "")[:160]
    if name == "grep":
        return f"{args.get('pattern')!r} in {args.get('path') or '.'}"
    return str(args.get("path") or "")[:160]


# ---------------------------------------------------------------------------- providers


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass
class Call:
    id: str
    name: str
    args: Any
    bad_json: bool = False


@dataclass
class Reply:
    text: str
    calls: list[Call]
    usage: Usage
    message: dict[str, Any]
    stop: str | None = None


@dataclass
class ApiFailure(Exception):
    status: int | None
    message: str
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    transient: bool = False


def _failure(exc: Exception) -> ApiFailure:
    """Turn an SDK exception into what the loop needs: status, headers, body."""
    status = getattr(exc, "status_code", None)
    response = getattr(exc, "response", None)
    headers = {k.lower(): v for k, v in response.headers.items()} if response is not None else {}
    body = getattr(exc, "body", None)
    message = str(getattr(exc, "message", None) or exc)
    if status is None:  # a connection error or timeout
        return ApiFailure(None, message, headers, body, transient=True)
    transient = status in (408, 409, 500, 502, 503, 504, 529)
    return ApiFailure(int(status), message, headers, body, transient=transient)


class AnthropicProvider:
    def __init__(self, model: str, effort: str | None):
        import anthropic

        self.sdk = anthropic
        self.client = anthropic.Anthropic(api_key=os.environ.get("ANTHROPIC_API_KEY"),
                                          base_url=os.environ.get("ANTHROPIC_BASE_URL") or None,
                                          max_retries=0, timeout=600)
        self.model = model
        self.effort = effort

    def user_message(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "text", "text": text}]}

    def add_user_text(self, messages: list[dict], text: str) -> None:
        if messages and messages[-1].get("role") == "user":
            content = messages[-1]["content"]
            if isinstance(content, str):
                content = [{"type": "text", "text": content}]
            messages[-1]["content"] = [*content, {"type": "text", "text": text}]
        else:
            messages.append(self.user_message(text))

    def tools(self, names: tuple[str, ...]) -> list[dict]:
        return [{"name": n, "description": TOOL_SPECS[n]["description"],
                 "input_schema": TOOL_SPECS[n]["schema"]} for n in names]

    def call(self, system: str, messages: list[dict], tools: list[dict]) -> Reply:
        kwargs: dict[str, Any] = {"model": self.model, "system": system, "messages": messages,
                                  "tools": tools,
                                  "max_tokens": MAX_TOKENS.get(self.effort or "medium", 16000)}
        if self.effort and self.model.startswith(_ANTHROPIC_EFFORT):
            kwargs["output_config"] = {"effort": self.effort}
        try:
            with self.client.messages.stream(**kwargs) as stream:
                for _event in stream:
                    pass
                final = stream.get_final_message()
        except self.sdk.APIError as exc:
            raise _failure(exc) from None
        content: list[dict[str, Any]] = []
        texts: list[str] = []
        calls: list[Call] = []
        for block in final.content:
            kind = getattr(block, "type", None)
            if kind == "text":
                content.append({"type": "text", "text": block.text})
                texts.append(block.text)
            elif kind == "tool_use":
                content.append({"type": "tool_use", "id": block.id, "name": block.name,
                                "input": block.input})
                calls.append(Call(block.id, block.name, block.input))
            elif kind == "thinking":
                content.append({"type": "thinking", "thinking": block.thinking,
                                "signature": block.signature})
            elif kind == "redacted_thinking":
                content.append({"type": "redacted_thinking", "data": block.data})
        u = final.usage
        usage = Usage(u.input_tokens or 0, u.output_tokens or 0,
                      getattr(u, "cache_read_input_tokens", 0) or 0,
                      getattr(u, "cache_creation_input_tokens", 0) or 0)
        if not content:
            content = [{"type": "text", "text": "(no answer)"}]
        return Reply("\n".join(t for t in texts if t), calls, usage,
                     {"role": "assistant", "content": content}, final.stop_reason)

    def add_results(self, messages: list[dict], results: list[tuple[Call, str, bool]]) -> None:
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call.id, "content": output,
             **({"is_error": True} if error else {})} for call, output, error in results]})


class OpenAIProvider:
    def __init__(self, model: str, effort: str | None):
        import openai

        self.sdk = openai
        self.client = openai.OpenAI(api_key=os.environ.get("OPENAI_API_KEY"),
                                    base_url=os.environ.get("OPENAI_BASE_URL") or None,
                                    max_retries=0, timeout=600)
        self.model = model
        self.effort = effort

    def user_message(self, text: str) -> dict[str, Any]:
        return {"role": "user", "content": text}

    def add_user_text(self, messages: list[dict], text: str) -> None:
        messages.append(self.user_message(text))

    def tools(self, names: tuple[str, ...]) -> list[dict]:
        return [{"type": "function", "function": {
            "name": n, "description": TOOL_SPECS[n]["description"],
            "parameters": TOOL_SPECS[n]["schema"]}} for n in names]

    def call(self, system: str, messages: list[dict], tools: list[dict]) -> Reply:
        official = self.model.startswith(_OPENAI_REASONING)
        kwargs: dict[str, Any] = {"model": self.model, "tools": tools,
                                  "messages": [{"role": "system", "content": system}, *messages],
                                  "stream_options": {"include_usage": True}}
        if self.effort:
            budget = MAX_TOKENS[self.effort]
            if official:
                kwargs["reasoning_effort"] = self.effort
                kwargs["max_completion_tokens"] = budget
            else:
                kwargs["max_tokens"] = budget
        try:
            with self.client.chat.completions.stream(**kwargs) as stream:
                for _event in stream:
                    pass
                final = stream.get_final_completion()
        except self.sdk.APIError as exc:
            raise _failure(exc) from None
        if not final.choices:
            raise ApiFailure(None, "the endpoint returned no choices", transient=True)
        choice = final.choices[0]
        msg = choice.message
        calls: list[Call] = []
        raw_calls = []
        for tc in msg.tool_calls or []:
            fn = getattr(tc, "function", None)
            if fn is None:
                continue
            raw_calls.append({"id": tc.id, "type": "function",
                              "function": {"name": fn.name, "arguments": fn.arguments or ""}})
            try:
                args = json.loads(fn.arguments or "{}")
                calls.append(Call(tc.id, fn.name, args))
            except ValueError:
                calls.append(Call(tc.id, fn.name, fn.arguments, bad_json=True))
        message: dict[str, Any] = {"role": "assistant", "content": msg.content or None}
        if raw_calls:
            message["tool_calls"] = raw_calls
        elif message["content"] is None:
            message["content"] = ""
        u = final.usage
        cached = 0
        if u is not None and getattr(u, "prompt_tokens_details", None) is not None:
            cached = getattr(u.prompt_tokens_details, "cached_tokens", 0) or 0
        usage = Usage(((u.prompt_tokens or 0) - cached) if u else 0,
                      (u.completion_tokens or 0) if u else 0, cached, 0)
        return Reply(msg.content or "", calls, usage, message, choice.finish_reason)

    def add_results(self, messages: list[dict], results: list[tuple[Call, str, bool]]) -> None:
        for call, output, error in results:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": ("ERROR: " if error else "") + output})


# ---------------------------------------------------------------------------- rate limits


def _when(value: str, now: float) -> float | None:
    """A reset time from one header value: epoch seconds, seconds to wait, a Go-style
    duration (`6m0s`, `20ms`), an RFC 3339 timestamp or an HTTP date."""
    value = value.strip()
    if not value:
        return None
    try:
        number = float(value)
    except ValueError:
        number = None
    if number is not None:
        if number <= 0:
            return None
        return number if number > 1e9 else now + number
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", value)
    if parts and "".join(n + u for n, u in parts) == value:
        scale = {"h": 3600, "m": 60, "s": 1, "ms": 0.001}
        return now + sum(float(n) * scale[u] for n, u in parts)
    try:
        from datetime import datetime

        stamp = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if stamp.tzinfo is not None:
            return stamp.timestamp()
    except ValueError:
        pass
    try:
        parsed = email.utils.parsedate_to_datetime(value)
        return parsed.timestamp() if parsed else None
    except (TypeError, ValueError):
        return None


def reset_time(headers: dict[str, str], body: Any, now: float | None = None) -> float | None:
    """When a 429 says the limit resets (epoch seconds), or None when it does not say."""
    now = time.time() if now is None else now
    found: list[float] = []
    for name in ("anthropic-ratelimit-unified-reset", "retry-after", "retry-after-ms"):
        if headers.get(name):
            value = headers[name]
            if name == "retry-after-ms":
                try:
                    found.append(now + float(value) / 1000)
                except ValueError:
                    pass
                continue
            when = _when(value, now)
            if when:
                found.append(when)
    if not found:
        for name, value in headers.items():
            if name.startswith("x-ratelimit-reset") or (name.startswith("anthropic-ratelimit-")
                                                         and name.endswith("-reset")):
                when = _when(value, now)
                if when:
                    found.append(when)
    error = body.get("error") if isinstance(body, dict) else None
    if not found and isinstance(error, dict):
        if isinstance(error.get("resets_at"), (int, float)):
            found.append(float(error["resets_at"]))
        elif isinstance(error.get("resets_in_seconds"), (int, float)):
            found.append(now + float(error["resets_in_seconds"]))
    return max(found) if found else None


# ---------------------------------------------------------------------------- the loop


SYSTEM = """You are a coding agent that Baton (an approval-first conductor) started on one task.
Your working directory is your own git worktree: {root}. Every path you give a tool is relative
to it (or absolute inside it); anything outside it is refused.
Mode: {mode}.{mode_note}
Tools: {tools}.
Where the task's rules tell you to run `baton report …` or `baton checkpoint …`, call the
`baton_report` / `baton_checkpoint` tools instead: they are the same channel. Reporting done or
failed is the only way the task counts as finished. When you have reported, end your turn with a
short final message."""

BUILD_NOTE = (" Make the change with write_file / edit_file; run_command is your shell in the "
              "worktree (tests, linters). Do not commit, push or switch branches.")
RESEARCH_NOTE = (" READ-ONLY: read, list and search only; you have no tool that writes. Put your "
                 "findings in the baton_report summary.")


def _save(path: Path, data: dict) -> None:
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(data, fh, ensure_ascii=False)
    os.replace(tmp, path)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m baton_tui.players.native_agent",
                                description="Baton's native agent loop (one task, one worktree).")
    p.add_argument("--provider", choices=("anthropic", "openai"), required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--mode", choices=("build", "research"), default="build")
    p.add_argument("--prompt-file", required=True, type=Path)
    p.add_argument("--transcript", required=True, type=Path)
    p.add_argument("--effort", choices=tuple(MAX_TOKENS), default=None)
    p.add_argument("--resume", type=Path, default=None,
                   help="continue the session saved in this transcript")
    p.add_argument("--resume-message", default=None)
    p.add_argument("--max-turns", type=int, default=MAX_TURNS)
    p.add_argument("--cwd", type=Path, default=None, help="the worktree (default: the cwd)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    root = (args.cwd or Path.cwd()).resolve()
    toolbox = Toolbox(root, args.mode)

    def on_signal(signum: int, _frame: Any) -> None:
        toolbox.kill_child()
        emit("stopped", signal=signum)
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)

    try:
        provider: Any = (AnthropicProvider if args.provider == "anthropic"
                         else OpenAIProvider)(args.model, args.effort)
    except Exception as exc:  # missing SDK, bad key format
        emit("error", status=None, reset=None, message=f"cannot start the {args.provider} "
             f"client: {exc}")
        return 1

    resumed = False
    state: dict[str, Any] | None = None
    if args.resume is not None:
        try:
            state = json.loads(args.resume.read_text(encoding="utf-8"))
            resumed = True
        except (OSError, ValueError) as exc:
            emit("text", text=f"cannot resume from {args.resume} ({exc}); starting afresh")
            state = None
    if state is None or state.get("provider") != args.provider:
        prompt = args.prompt_file.read_text(encoding="utf-8")
        state = {"version": 1, "id": str(uuid.uuid4()), "provider": args.provider,
                 "messages": [provider.user_message(prompt)], "turns": 0}
        resumed = False
    else:
        provider.add_user_text(state["messages"], args.resume_message
                               or "Continue the task where you left off.")
    state.update(model=args.model, mode=args.mode)
    session = state["id"]
    messages: list[dict] = state["messages"]
    _save(args.transcript, state)
    emit("init", session_id=session, provider=args.provider, model=args.model, mode=args.mode,
         resumed=resumed, cwd=str(root), tools=list(toolbox.names))

    system = SYSTEM.format(root=root, mode=args.mode, tools=", ".join(toolbox.names),
                           mode_note=RESEARCH_NOTE if args.mode == "research" else BUILD_NOTE)
    tools = provider.tools(toolbox.names)
    total = Usage()
    cost = 0.0
    turns = 0
    final_text = ""
    while True:
        if turns >= args.max_turns:
            emit("result", session_id=session, stop="max_turns", turns=turns,
                 final_text=final_text, tokens=total.input_tokens + total.output_tokens,
                 cost=round(cost, 6))
            return 0
        reply = None
        for attempt in range(TRANSIENT_RETRIES + 1):
            try:
                reply = provider.call(system, messages, tools)
                break
            except ApiFailure as failure:
                if failure.status == 429:
                    reset = reset_time(failure.headers, failure.body)
                    emit("error", status=429, reset=reset, message=failure.message[:500],
                         session_id=session)
                    return RATE_LIMITED_EXIT
                if failure.transient and attempt < TRANSIENT_RETRIES:
                    emit("retry", status=failure.status, attempt=attempt + 1,
                         message=failure.message[:200])
                    time.sleep(min(2 ** attempt, 8))
                    continue
                emit("error", status=failure.status, reset=None, message=failure.message[:500],
                     session_id=session)
                return 1
        assert reply is not None
        turns += 1
        state["turns"] = state.get("turns", 0) + 1
        turn_cost = cost_of(args.model, reply.usage)
        cost += turn_cost
        for name in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens"):
            setattr(total, name, getattr(total, name) + getattr(reply.usage, name))
        emit("usage", input_tokens=reply.usage.input_tokens,
             output_tokens=reply.usage.output_tokens,
             cache_read_tokens=reply.usage.cache_read_tokens,
             cache_write_tokens=reply.usage.cache_write_tokens, cost=round(turn_cost, 8),
             model=args.model)
        if reply.text:
            final_text = reply.text
            emit("text", text=reply.text)
        messages.append(reply.message)
        if not reply.calls:
            _save(args.transcript, state)
            emit("result", session_id=session, stop="end_turn", turns=turns,
                 final_text=final_text, tokens=total.input_tokens + total.output_tokens,
                 cost=round(cost, 6))
            return 0
        results: list[tuple[Call, str, bool]] = []
        for call in reply.calls:
            if call.bad_json:
                output, error = f"the arguments of {call.name} are not valid JSON", True
            else:
                try:
                    output, error = toolbox.call(call.name, call.args), False
                except ToolError as exc:
                    output, error = str(exc), True
                except (OSError, ValueError, TypeError) as exc:
                    output, error = f"{call.name} failed: {exc}", True
            emit("tool", name=call.name, summary=summarize(call.name, call.args), ok=not error,
                 output=output[:300])
            results.append((call, output, error))
        provider.add_results(messages, results)
        _save(args.transcript, state)


if __name__ == "__main__":
    raise SystemExit(main())

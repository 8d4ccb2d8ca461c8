"""The two model clients: Anthropic Messages and OpenAI(-compatible) Chat Completions.

Each adapts its official SDK to the loop's provider-neutral shapes (`wire.Reply`, `wire.Call`,
`wire.ApiFailure`) and keeps the transcript in its own wire format, so `--resume` can send it
back verbatim. The SDKs are imported when a provider is built, never at module import, so
importing this package stays cheap.
"""

from __future__ import annotations

import json
import os
from typing import Any

from baton_tui.native_agent.specs import TOOL_SPECS
from baton_tui.native_agent.wire import ApiFailure, Call, Reply, Usage

# Answer budget per effort level (max_tokens).
MAX_TOKENS = {"low": 4096, "medium": 16000, "high": 32000}

# Anthropic models that take `output_config.effort`; OpenAI models that take `reasoning_effort`.
_ANTHROPIC_EFFORT = ("claude-opus-4-5", "claude-opus-4-6", "claude-opus-4-7", "claude-opus-4-8")
_OPENAI_REASONING = ("gpt-5", "o1", "o3", "o4")


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
        import anthropic  # lazy: seconds cold; only the provider in use loads its SDK

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
        blocks: list[Any] = list(final.content)  # read by each block's `type`, not its class
        for block in blocks:
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
        import openai  # lazy: seconds cold; only the provider in use loads its SDK

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


def make_provider(name: str, model: str, effort: str | None) -> AnthropicProvider | OpenAIProvider:
    """The client for `--provider NAME` (imports its SDK)."""
    return (AnthropicProvider if name == "anthropic" else OpenAIProvider)(model, effort)
